// ms_bcewl extension (no CANN counterpart): the loss and the gradients of every input for a gradOutput of 1, from
// one call, for a forward that knows its backward will follow (ms_bcewl's PyNative autograd Function: the gradient
// of a mean or summed loss is usually asked for with a gradOutput of exactly 1). The results are bit for bit
//   out                   = aclnnBinaryCrossEntropyWithLogits's out        (target's dtype; [] or [1] for mean and
//                                                                           sum, self's shape for none)
//   gradSelf, gradTarget, gradWeightOptional, gradPosWeightOptional
//                         = aclnnBinaryCrossEntropyWithLogitsAllBackward's with a gradOutput of 1
// on the same arguments. For mean and sum, one pass over the inputs computes exp(-|x|) once per element for the
// loss, gradSelf, gradTarget and a per-class (at most 4096 classes, enough elements for the threads) or full-shape
// weight gradient; another weight gradient gets a pass of its own within the call; for none, the loss is a pass
// before the gradients'. Where a per-class weight has fewer blocks of 8192 rows than the call has threads, the
// workspace holds each element's loss (4 bytes an element). An empty self writes the forward's empty result (NaN
// for mean, 0 for sum) and zeros to the weight gradients.
#ifndef MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_AND_ALL_GRADIENTS_H_
#define MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_AND_ALL_GRADIENTS_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsAndAllGradientsGetWorkspaceSize(
    const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional, const aclTensor *posWeightOptional,
    int64_t reduction, aclTensor *out, aclTensor *gradSelf, aclTensor *gradTarget, aclTensor *gradWeightOptional,
    aclTensor *gradPosWeightOptional, uint64_t *workspaceSize, aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsAndAllGradients(void *workspace, uint64_t workspaceSize,
                                                                       aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_AND_ALL_GRADIENTS_H_
