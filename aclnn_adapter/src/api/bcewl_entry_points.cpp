// The exported two-phase aclnn functions of include/aclnnop: each names its operation and forwards.
#include "aclnnop/aclnn_binary_cross_entropy_with_logits.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_all_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_and_all_gradients.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_weight_backward.h"
#include "api/operation.h"

using ms_bcewl::OpKind;
using ms_bcewl::OpOutputs;
using ms_bcewl::PlanOperation;
using ms_bcewl::RunOperation;

namespace {

// The outputs of a single-output operation: `tensor` in `slot`, the others null.
OpOutputs Only(aclTensor *OpOutputs::*slot, aclTensor *tensor) {
  OpOutputs outputs;
  outputs.*slot = tensor;
  return outputs;
}

}  // namespace

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(
    const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional, const aclTensor *posWeightOptional,
    int64_t reduction, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
  return PlanOperation({OpKind::kForward, nullptr, self, target, weightOptional, posWeightOptional, reduction,
                        Only(&OpOutputs::loss, out), workspaceSize, executor});
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogits(void *workspace, uint64_t workspaceSize,
                                                         aclOpExecutor *executor, const aclrtStream stream) {
  return RunOperation(OpKind::kForward, workspace, workspaceSize, executor, stream);
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  return PlanOperation({OpKind::kGradSelf, gradOutput, self, target, weightOptional, posWeightOptional, reduction,
                        Only(&OpOutputs::grad_self, out), workspaceSize, executor});
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsBackward(void *workspace, uint64_t workspaceSize,
                                                                 aclOpExecutor *executor, aclrtStream stream) {
  return RunOperation(OpKind::kGradSelf, workspace, workspaceSize, executor, stream);
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *gradTarget, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  return PlanOperation({OpKind::kGradTarget, gradOutput, self, target, weightOptional, posWeightOptional, reduction,
                        Only(&OpOutputs::grad_target, gradTarget), workspaceSize, executor});
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsTargetBackward(void *workspace, uint64_t workspaceSize,
                                                                       aclOpExecutor *executor, aclrtStream stream) {
  return RunOperation(OpKind::kGradTarget, workspace, workspaceSize, executor, stream);
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsWeightBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weight,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *gradWeight, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  return PlanOperation({OpKind::kGradWeight, gradOutput, self, target, weight, posWeightOptional, reduction,
                        Only(&OpOutputs::grad_weight, gradWeight), workspaceSize, executor});
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsWeightBackward(void *workspace, uint64_t workspaceSize,
                                                                       aclOpExecutor *executor, aclrtStream stream) {
  return RunOperation(OpKind::kGradWeight, workspace, workspaceSize, executor, stream);
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsPosWeightBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeight, int64_t reduction, aclTensor *gradPosWeight, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  return PlanOperation({OpKind::kGradPosWeight, gradOutput, self, target, weightOptional, posWeight, reduction,
                        Only(&OpOutputs::grad_pos_weight, gradPosWeight), workspaceSize, executor});
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsPosWeightBackward(void *workspace, uint64_t workspaceSize,
                                                                          aclOpExecutor *executor, aclrtStream stream) {
  return RunOperation(OpKind::kGradPosWeight, workspace, workspaceSize, executor, stream);
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsAllBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *gradSelf, aclTensor *gradTarget,
    aclTensor *gradWeightOptional, aclTensor *gradPosWeightOptional, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  const OpOutputs outputs{nullptr, gradSelf, gradTarget, gradWeightOptional, gradPosWeightOptional};
  return PlanOperation({OpKind::kGradAll, gradOutput, self, target, weightOptional, posWeightOptional, reduction,
                        outputs, workspaceSize, executor});
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsAllBackward(void *workspace, uint64_t workspaceSize,
                                                                    aclOpExecutor *executor, aclrtStream stream) {
  return RunOperation(OpKind::kGradAll, workspace, workspaceSize, executor, stream);
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsAndAllGradientsGetWorkspaceSize(
    const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional, const aclTensor *posWeightOptional,
    int64_t reduction, aclTensor *out, aclTensor *gradSelf, aclTensor *gradTarget, aclTensor *gradWeightOptional,
    aclTensor *gradPosWeightOptional, uint64_t *workspaceSize, aclOpExecutor **executor) {
  const OpOutputs outputs{out, gradSelf, gradTarget, gradWeightOptional, gradPosWeightOptional};
  return PlanOperation({OpKind::kLossAndAllGradients, nullptr, self, target, weightOptional, posWeightOptional,
                        reduction, outputs, workspaceSize, executor});
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsAndAllGradients(void *workspace, uint64_t workspaceSize,
                                                                        aclOpExecutor *executor, aclrtStream stream) {
  return RunOperation(OpKind::kLossAndAllGradients, workspace, workspaceSize, executor, stream);
}
