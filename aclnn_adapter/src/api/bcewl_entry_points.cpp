// The exported two-phase aclnn functions of include/aclnnop: each names its operation and forwards.
#include "aclnnop/aclnn_binary_cross_entropy_with_logits.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_all_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_and_all_gradients.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_self_target_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_weight_backward.h"
#include "api/operation.h"

using ms_bcewl::OpArguments;
using ms_bcewl::OpKind;
using ms_bcewl::PlanOperation;
using ms_bcewl::RunOperation;

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(
    const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  return PlanOperation({OpKind::kForward, nullptr, self, target, weightOptional, posWeightOptional, reduction, out,
                        workspaceSize, executor});
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
                        out, workspaceSize, executor});
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
                        gradTarget, workspaceSize, executor});
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
                        gradWeight, workspaceSize, executor});
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
                        gradPosWeight, workspaceSize, executor});
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsPosWeightBackward(void *workspace, uint64_t workspaceSize,
                                                                          aclOpExecutor *executor,
                                                                          aclrtStream stream) {
  return RunOperation(OpKind::kGradPosWeight, workspace, workspaceSize, executor, stream);
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsSelfTargetBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *gradSelf, aclTensor *gradTarget,
    uint64_t *workspaceSize, aclOpExecutor **executor) {
  return PlanOperation({OpKind::kGradSelfAndTarget, gradOutput, self, target, weightOptional, posWeightOptional,
                        reduction, gradSelf, workspaceSize, executor, gradTarget});
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsSelfTargetBackward(void *workspace, uint64_t workspaceSize,
                                                                          aclOpExecutor *executor,
                                                                          aclrtStream stream) {
  return RunOperation(OpKind::kGradSelfAndTarget, workspace, workspaceSize, executor, stream);
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsAllBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *gradSelf, aclTensor *gradTarget,
    aclTensor *gradWeightOptional, aclTensor *gradPosWeightOptional, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  return PlanOperation({OpKind::kGradAll, gradOutput, self, target, weightOptional, posWeightOptional, reduction,
                        gradSelf, workspaceSize, executor, gradTarget, gradWeightOptional, gradPosWeightOptional});
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsAllBackward(void *workspace, uint64_t workspaceSize,
                                                                    aclOpExecutor *executor, aclrtStream stream) {
  return RunOperation(OpKind::kGradAll, workspace, workspaceSize, executor, stream);
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsAndAllGradientsGetWorkspaceSize(
    const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional, const aclTensor *posWeightOptional,
    int64_t reduction, aclTensor *out, aclTensor *gradSelf, aclTensor *gradTarget, aclTensor *gradWeightOptional,
    aclTensor *gradPosWeightOptional, uint64_t *workspaceSize, aclOpExecutor **executor) {
  OpArguments arguments{OpKind::kLossAndAllGradients, nullptr, self, target, weightOptional, posWeightOptional,
                        reduction, gradSelf, workspaceSize, executor, gradTarget, gradWeightOptional,
                        gradPosWeightOptional};
  arguments.loss_out = out;
  return PlanOperation(arguments);
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsAndAllGradients(void *workspace, uint64_t workspaceSize,
                                                                        aclOpExecutor *executor, aclrtStream stream) {
  return RunOperation(OpKind::kLossAndAllGradients, workspace, workspaceSize, executor, stream);
}
