// The exported two-phase aclnn functions of include/aclnnop: each names its operation and forwards; phase 2 of
// every operation comes from the list of operations.
#include "aclnnop/aclnn_binary_cross_entropy_with_logits.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_all_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_and_all_gradients.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_weight_backward.h"
#include "api/operation.h"

using ms_bcewl::Operation;
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
  return PlanOperation({Operation::kForward, nullptr, self, target, weightOptional, posWeightOptional, reduction,
                        Only(&OpOutputs::loss, out)},
                       workspaceSize, executor);
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  return PlanOperation({Operation::kGradSelf, gradOutput, self, target, weightOptional, posWeightOptional, reduction,
                        Only(&OpOutputs::grad_self, out)},
                       workspaceSize, executor);
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *gradTarget, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  return PlanOperation({Operation::kGradTarget, gradOutput, self, target, weightOptional, posWeightOptional, reduction,
                        Only(&OpOutputs::grad_target, gradTarget)},
                       workspaceSize, executor);
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsWeightBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weight,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *gradWeight, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  return PlanOperation({Operation::kGradWeight, gradOutput, self, target, weight, posWeightOptional, reduction,
                        Only(&OpOutputs::grad_weight, gradWeight)},
                       workspaceSize, executor);
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsPosWeightBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeight, int64_t reduction, aclTensor *gradPosWeight, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  return PlanOperation({Operation::kGradPosWeight, gradOutput, self, target, weightOptional, posWeight, reduction,
                        Only(&OpOutputs::grad_pos_weight, gradPosWeight)},
                       workspaceSize, executor);
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsAllBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *gradSelf, aclTensor *gradTarget,
    aclTensor *gradWeightOptional, aclTensor *gradPosWeightOptional, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  const OpOutputs outputs{nullptr, gradSelf, gradTarget, gradWeightOptional, gradPosWeightOptional};
  return PlanOperation(
      {Operation::kGradAll, gradOutput, self, target, weightOptional, posWeightOptional, reduction, outputs},
      workspaceSize, executor);
}

extern "C" aclnnStatus aclnnBinaryCrossEntropyWithLogitsAndAllGradientsGetWorkspaceSize(
    const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional, const aclTensor *posWeightOptional,
    int64_t reduction, aclTensor *out, aclTensor *gradSelf, aclTensor *gradTarget, aclTensor *gradWeightOptional,
    aclTensor *gradPosWeightOptional, uint64_t *workspaceSize, aclOpExecutor **executor) {
  const OpOutputs outputs{out, gradSelf, gradTarget, gradWeightOptional, gradPosWeightOptional};
  return PlanOperation(
      {Operation::kLossAndAllGradients, nullptr, self, target, weightOptional, posWeightOptional, reduction, outputs},
      workspaceSize, executor);
}

// Phase 2 of every operation: the same signature, and it names its operation.
#define MS_BCEWL_RUN_ENTRY_POINT(name, enumerator, function, ...)                                   \
  extern "C" aclnnStatus function(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, \
                                  aclrtStream stream) {                                             \
    return RunOperation(Operation::enumerator, workspace, workspaceSize, executor, stream);         \
  }
MS_BCEWL_FOR_EACH_OPERATION(MS_BCEWL_RUN_ENTRY_POINT, )
#undef MS_BCEWL_RUN_ENTRY_POINT
