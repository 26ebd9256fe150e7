#include "ops.h"

#include <algorithm>
#include <iterator>

#include "aclnnop/aclnn_binary_cross_entropy_with_logits.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_all_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_and_all_gradients.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_weight_backward.h"

namespace fuzz {
namespace {

aclnnStatus PlanForward(const aclTensor * /*grad_output*/, const aclTensor *self, const aclTensor *target,
                        const aclTensor *weight, const aclTensor *pos_weight, int64_t reduction, aclTensor *out,
                        aclTensor * /*grad_target*/, aclTensor * /*grad_weight*/, aclTensor * /*grad_pos_weight*/,
                        aclTensor * /*loss*/, uint64_t *workspace_size, aclOpExecutor **executor) {
  return aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(self, target, weight, pos_weight, reduction, out,
                                                           workspace_size, executor);
}

aclnnStatus PlanAll(const aclTensor *grad_output, const aclTensor *self, const aclTensor *target,
                    const aclTensor *weight, const aclTensor *pos_weight, int64_t reduction, aclTensor *out,
                    aclTensor *grad_target, aclTensor *grad_weight, aclTensor *grad_pos_weight, aclTensor * /*loss*/,
                    uint64_t *workspace_size, aclOpExecutor **executor) {
  return aclnnBinaryCrossEntropyWithLogitsAllBackwardGetWorkspaceSize(grad_output, self, target, weight, pos_weight,
                                                                      reduction, out, grad_target, grad_weight,
                                                                      grad_pos_weight, workspace_size, executor);
}

aclnnStatus PlanLossAndAll(const aclTensor * /*grad_output*/, const aclTensor *self, const aclTensor *target,
                           const aclTensor *weight, const aclTensor *pos_weight, int64_t reduction, aclTensor *out,
                           aclTensor *grad_target, aclTensor *grad_weight, aclTensor *grad_pos_weight, aclTensor *loss,
                           uint64_t *workspace_size, aclOpExecutor **executor) {
  return aclnnBinaryCrossEntropyWithLogitsAndAllGradientsGetWorkspaceSize(self, target, weight, pos_weight, reduction,
                                                                          loss, out, grad_target, grad_weight,
                                                                          grad_pos_weight, workspace_size, executor);
}

// A gradient with one output under the common signature (which ignores the other outputs).
#define MS_BCEWL_GRADIENT_PLAN(plan)                                                                               \
  [](const aclTensor *grad_output, const aclTensor *self, const aclTensor *target, const aclTensor *weight,        \
     const aclTensor *pos_weight, int64_t reduction, aclTensor *out, aclTensor * /*grad_target*/,                  \
     aclTensor * /*grad_weight*/, aclTensor * /*grad_pos_weight*/, aclTensor * /*loss*/, uint64_t *workspace_size, \
     aclOpExecutor **executor) {                                                                                   \
    return plan(grad_output, self, target, weight, pos_weight, reduction, out, workspace_size, executor);          \
  }

// Phase 1 under the common signature and the names of the outputs, in the order of the list of operations.
struct PhaseOne {
  PlanFunction plan;
  const char *output_names[kMaxOutputs];
};
const PhaseOne kPhaseOne[ms_bcewl::kOperationCount] = {
    {PlanForward, {"out"}},
    {MS_BCEWL_GRADIENT_PLAN(aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize), {"out"}},
    {MS_BCEWL_GRADIENT_PLAN(aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize), {"gradTarget"}},
    {MS_BCEWL_GRADIENT_PLAN(aclnnBinaryCrossEntropyWithLogitsWeightBackwardGetWorkspaceSize), {"gradWeight"}},
    {MS_BCEWL_GRADIENT_PLAN(aclnnBinaryCrossEntropyWithLogitsPosWeightBackwardGetWorkspaceSize), {"gradPosWeight"}},
    {PlanAll, {"gradSelf", "gradTarget", "gradWeightOptional", "gradPosWeightOptional"}},
    {PlanLossAndAll, {"out", "gradSelf", "gradTarget", "gradWeightOptional", "gradPosWeightOptional"}},
};

#undef MS_BCEWL_GRADIENT_PLAN

#define MS_BCEWL_RUN_FUNCTION(name, enumerator, function, ...) function,
const RunFunction kRun[] = {MS_BCEWL_FOR_EACH_OPERATION(MS_BCEWL_RUN_FUNCTION, )};
#undef MS_BCEWL_RUN_FUNCTION

}  // namespace

OpApi ApiOf(Operation op) {
  const ms_bcewl::OperationInfo &info = ms_bcewl::InfoOf(op);
  const PhaseOne &phase_one = kPhaseOne[static_cast<int>(op)];
  OpApi api{info.name, info.plan_api, info.run_api, phase_one.plan, kRun[static_cast<int>(op)], {}};
  std::copy(std::begin(phase_one.output_names), std::end(phase_one.output_names), api.output_names);
  return api;
}

}  // namespace fuzz
