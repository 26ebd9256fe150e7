// The eight two-phase operations (forward loss; the gradients with respect to self, target, weight and pos_weight;
// the gradients with respect to self and target together; those of every input together; the loss with those of
// every input for a gradOutput of 1) share one argument record, one check sequence and one executor plumbing; the
// exported entry points (bcewl_entry_points.cpp) only name their OpKind.
#ifndef MS_BCEWL_API_OPERATION_H_
#define MS_BCEWL_API_OPERATION_H_

#include <cstdint>

#include "aclnn/acl_meta.h"
#include "kernel/bcewl_kernel.h"

namespace ms_bcewl {

enum class OpKind {
  kForward,
  kGradSelf,
  kGradTarget,
  kGradWeight,
  kGradPosWeight,
  kGradSelfAndTarget,
  kGradAll,
  kLossAndAllGradients,
};

// The operations without a gradOutput argument: the forward, and kLossAndAllGradients (whose gradOutput is 1).
inline bool TakesGradOutput(OpKind kind) { return kind != OpKind::kForward && kind != OpKind::kLossAndAllGradients; }

// aclnn's reduction values (MindSpore's own enum differs and must be mapped before it gets here).
constexpr int64_t kReductionNone = 0;
constexpr int64_t kReductionMean = 1;
constexpr int64_t kReductionSum = 2;

// The phase-1 arguments of any operation; grad_output is null where !TakesGradOutput, second_out (gradTarget) is set
// for kGradSelfAndTarget, kGradAll and kLossAndAllGradients, the weight gradients' outputs (each optional) for the
// last two, and loss_out for kLossAndAllGradients only (whose out is gradSelf, as kGradAll's).
struct OpArguments {
  OpKind kind;
  const aclTensor *grad_output;
  const aclTensor *self;
  const aclTensor *target;
  const aclTensor *weight;
  const aclTensor *pos_weight;
  int64_t reduction;
  aclTensor *out;
  uint64_t *workspace_size;
  aclOpExecutor **executor;
  aclTensor *second_out = nullptr;
  aclTensor *grad_weight_out = nullptr;
  aclTensor *grad_pos_weight_out = nullptr;
  aclTensor *loss_out = nullptr;
};

// kGradAll and kLossAndAllGradients: their outputs include the weight gradients.
inline bool GivesAllGradients(OpKind kind) { return kind == OpKind::kGradAll || kind == OpKind::kLossAndAllGradients; }

struct OpTraits {
  const char *plan_api;  // phase 1 name
  const char *run_api;   // phase 2 name
  const char *out_name;         // the output parameter's name in the header
  const char *second_out_name;  // the second output's, or null
  kernel::Quantity quantity;    // of out (kGradSelfAndTarget and after: their quantities are fixed)
};

const OpTraits &TraitsOf(OpKind kind);

// Phase 1: checks every argument in CANN's order (docs/contract.md §10 Errors), then plans the work into an executor.
aclnnStatus PlanOperation(const OpArguments &arguments);

// Phase 2: consumes a live executor planned for kind, whatever the outcome, and runs it.
aclnnStatus RunOperation(OpKind kind, void *workspace, uint64_t workspace_size, aclOpExecutor *executor,
                         aclrtStream stream);

}  // namespace ms_bcewl

#endif  // MS_BCEWL_API_OPERATION_H_
