// ms_bcewl extension (no CANN counterpart): the gradients with respect to self and target in one pass, which
// computes exp(-|x|) once per element for both. The results are bit for bit those of
// aclnnBinaryCrossEntropyWithLogitsBackward (gradSelf) and aclnnBinaryCrossEntropyWithLogitsTargetBackward
// (gradTarget) on the same arguments:
//   gradSelf   = w * ((p*y + 1 - y) * sigmoid(x) - p*y) * g      [/ numel if mean]
//   gradTarget = w * (logsig(-x) - p * logsig(x)) * g             [/ numel if mean]
// gradSelf has self's shape and dtype; gradTarget has target's.
#ifndef MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF_TARGET_BACKWARD_H_
#define MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF_TARGET_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsSelfTargetBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *gradSelf, aclTensor *gradTarget,
    uint64_t *workspaceSize, aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsSelfTargetBackward(void *workspace, uint64_t workspaceSize,
                                                                          aclOpExecutor *executor,
                                                                          aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF_TARGET_BACKWARD_H_
