#include "ops.h"

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
#define MS_BCEWL_GRADIENT_API(short_name, plan, run, out_name)                                                    \
  {                                                                                                               \
    short_name, #plan, #run,                                                                                      \
        [](const aclTensor *grad_output, const aclTensor *self, const aclTensor *target, const aclTensor *weight, \
           const aclTensor *pos_weight, int64_t reduction, aclTensor *out, aclTensor * /*grad_target*/,           \
           aclTensor * /*grad_weight*/, aclTensor * /*grad_pos_weight*/, aclTensor * /*loss*/,                    \
           uint64_t *workspace_size, aclOpExecutor **executor) {                                                  \
          return plan(grad_output, self, target, weight, pos_weight, reduction, out, workspace_size, executor);   \
        },                                                                                                        \
        run, {                                                                                                    \
      out_name                                                                                                    \
    }                                                                                                             \
  }

const OpApi kApis[kOpCount] = {
    {"forward",
     "aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize",
     "aclnnBinaryCrossEntropyWithLogits",
     PlanForward,
     aclnnBinaryCrossEntropyWithLogits,
     {"out"}},
    MS_BCEWL_GRADIENT_API("dx", aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize,
                          aclnnBinaryCrossEntropyWithLogitsBackward, "out"),
    MS_BCEWL_GRADIENT_API("dy", aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize,
                          aclnnBinaryCrossEntropyWithLogitsTargetBackward, "gradTarget"),
    MS_BCEWL_GRADIENT_API("dw", aclnnBinaryCrossEntropyWithLogitsWeightBackwardGetWorkspaceSize,
                          aclnnBinaryCrossEntropyWithLogitsWeightBackward, "gradWeight"),
    MS_BCEWL_GRADIENT_API("dp", aclnnBinaryCrossEntropyWithLogitsPosWeightBackwardGetWorkspaceSize,
                          aclnnBinaryCrossEntropyWithLogitsPosWeightBackward, "gradPosWeight"),
    {"dx+dy+dw+dp",
     "aclnnBinaryCrossEntropyWithLogitsAllBackwardGetWorkspaceSize",
     "aclnnBinaryCrossEntropyWithLogitsAllBackward",
     PlanAll,
     aclnnBinaryCrossEntropyWithLogitsAllBackward,
     {"gradSelf", "gradTarget", "gradWeightOptional", "gradPosWeightOptional"}},
    {"loss+dx+dy+dw+dp",
     "aclnnBinaryCrossEntropyWithLogitsAndAllGradientsGetWorkspaceSize",
     "aclnnBinaryCrossEntropyWithLogitsAndAllGradients",
     PlanLossAndAll,
     aclnnBinaryCrossEntropyWithLogitsAndAllGradients,
     {"out", "gradSelf", "gradTarget", "gradWeightOptional", "gradPosWeightOptional"}},
};

#undef MS_BCEWL_GRADIENT_API

}  // namespace

const OpApi &ApiOf(Op op) { return kApis[static_cast<int>(op)]; }

}  // namespace fuzz
