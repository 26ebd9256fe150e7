// Gradient with respect to target: the CANN signature. gradTarget has target's shape and dtype.
#ifndef MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD_H_
#define MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *gradTarget, uint64_t *workspaceSize,
    aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsTargetBackward(void *workspace, uint64_t workspaceSize,
                                                                      aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD_H_
