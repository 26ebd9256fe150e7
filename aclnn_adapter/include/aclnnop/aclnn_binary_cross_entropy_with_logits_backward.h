// Gradient with respect to self (the logits): the CANN signature. out has self's shape and self's dtype
// (docs/contract.md §5 Dtypes: each gradient has its argument's); CANN requires target's, the same when they agree.
#ifndef MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_H_
#define MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsBackward(void *workspace, uint64_t workspaceSize,
                                                                aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_H_
