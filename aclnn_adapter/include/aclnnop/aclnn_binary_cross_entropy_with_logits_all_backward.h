// ms_bcewl extension (no CANN counterpart): the gradients of every input in one call, for a backward that needs
// them all (MindSpore's PyNative bprop: it must return a gradient for each input). The results are bit for bit
// those of the single-gradient APIs on the same arguments:
//   gradSelf              = aclnnBinaryCrossEntropyWithLogitsBackward's out       (self's shape and dtype)
//   gradTarget            = aclnnBinaryCrossEntropyWithLogitsTargetBackward's     (target's)
//   gradWeightOptional    = aclnnBinaryCrossEntropyWithLogitsWeightBackward's     (weight's; given iff weight is)
//   gradPosWeightOptional = aclnnBinaryCrossEntropyWithLogitsPosWeightBackward's  (posWeight's; given iff it is)
// One pass over the inputs computes exp(-|x|) once per element for gradSelf, gradTarget and the gradient of a
// per-class weight or pos_weight (broadcast along the leading dims, at most 4096 classes); other broadcast patterns
// of a weight get their own pass within the call. An empty self writes zeros to the weight gradients.
#ifndef MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_ALL_BACKWARD_H_
#define MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_ALL_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsAllBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *gradSelf, aclTensor *gradTarget,
    aclTensor *gradWeightOptional, aclTensor *gradPosWeightOptional, uint64_t *workspaceSize, aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsAllBackward(void *workspace, uint64_t workspaceSize,
                                                                   aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_ALL_BACKWARD_H_
