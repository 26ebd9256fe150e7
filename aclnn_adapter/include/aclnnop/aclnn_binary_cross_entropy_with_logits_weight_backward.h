// ms_bcewl extension (no CANN counterpart): gradients with respect to weight and pos_weight, summed down to
// their own (broadcast) shapes, so that a learnable class weight trains.
//   gradWeight    = sum over broadcast dims of ((1 - y) * x - (1 + (p - 1) * y) * logsig(x)) * g   [/ numel if mean]
//   gradPosWeight = sum over broadcast dims of (-w * y * logsig(x)) * g                           [/ numel if mean]
// gradWeight has weight's shape and dtype; gradPosWeight has posWeight's shape and dtype.
#ifndef MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT_BACKWARD_H_
#define MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT_BACKWARD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

// weight is required here (its shape is the output's); posWeightOptional may be null.
ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsWeightBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weight,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *gradWeight, uint64_t *workspaceSize,
    aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsWeightBackward(void *workspace, uint64_t workspaceSize,
                                                                      aclOpExecutor *executor, aclrtStream stream);

// posWeight is required here; weightOptional may be null.
ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsPosWeightBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeight, int64_t reduction, aclTensor *gradPosWeight, uint64_t *workspaceSize,
    aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnBinaryCrossEntropyWithLogitsPosWeightBackward(void *workspace, uint64_t workspaceSize,
                                                                         aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // MS_BCEWL_ACLNNOP_ACLNN_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT_BACKWARD_H_
