// The phase-1 checks, in CANN's order (docs/contract.md §10 Errors): CheckNotNull (161001), CheckDtypeValid,
// CheckReduction, CheckShape (161002). The first failure is recorded with a sentence naming the argument.
#ifndef MS_BCEWL_API_ARGUMENT_CHECKS_H_
#define MS_BCEWL_API_ARGUMENT_CHECKS_H_

#include <vector>

#include "api/operation.h"

namespace ms_bcewl {

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

aclnnStatus CheckArguments(const OpArguments &arguments);

}  // namespace ms_bcewl

#endif  // MS_BCEWL_API_ARGUMENT_CHECKS_H_
