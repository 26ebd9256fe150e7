// The phase-1 checks, in CANN's order (docs/contract.md §10 Errors): CheckNotNull (161001), CheckDtypeValid,
// CheckReduction, CheckShape (161002). The first failure is recorded with a sentence naming the argument.
#ifndef MS_BCEWL_API_ARGUMENT_CHECKS_H_
#define MS_BCEWL_API_ARGUMENT_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "api/operation.h"

namespace ms_bcewl {

inline constexpr size_t kMaxRank = kernel::kMaxRank;

// The shape rules of docs/contract.md §6, which phase 1 checks and the MindSpore entries check before it, to word a
// refusal as the Python API does.
enum class ShapeRule { kRank, kSameShape, kBroadcast };

// A tensor's shape as the rules read it; broadcasts: it must broadcast to self's shape without enlarging it.
struct ShapeOperand {
  const int64_t *dims;
  size_t rank;
  bool broadcasts;
};

// The rules over the shapes of one call: every rank at most kMaxRank, target's shape self's, then the broadcasts, in
// the order given. An empty self exempts the broadcasts where empty_self_skips_broadcasts (CANN's rule; the Python
// API's has no exemption).
struct ShapeCheck {
  const ShapeOperand *operands;
  size_t count;
  size_t self;
  size_t target;
  bool empty_self_skips_broadcasts;
};

// The first rule broken and the operand that broke it, if any.
struct BrokenShapeRule {
  ShapeRule rule;
  size_t operand;
};
std::optional<BrokenShapeRule> FirstBrokenShapeRule(const ShapeCheck &check);

// An output and the tensor whose dtype and shape it must have: target for the forward loss and its gradient, self
// for the gradient of self, weight / pos_weight for theirs.
struct OutputRef {
  const char *name;
  const aclTensor *tensor;
  const char *owner_name;
  const aclTensor *owner;
};
// The outputs of an operation with their names in its C signature, in that order (one; two to four for kGradAll,
// whose weight gradients are listed where their inputs are given; kLossAndAllGradients: the loss, then kGradAll's).
std::vector<OutputRef> Outputs(const OpArguments &arguments);

// Every check of phase 1 (the shape rules where shape_rules says so); workspace_size and executor receive its results.
aclnnStatus CheckArguments(const OpArguments &arguments, const uint64_t *workspace_size, aclOpExecutor *const *executor,
                           ShapeRules shape_rules);

}  // namespace ms_bcewl

#endif  // MS_BCEWL_API_ARGUMENT_CHECKS_H_
