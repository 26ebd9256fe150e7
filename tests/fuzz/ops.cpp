#include "ops.h"

#include "aclnnop/aclnn_binary_cross_entropy_with_logits.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_weight_backward.h"

namespace fuzz {
namespace {

aclnnStatus PlanForward(const aclTensor * /*grad_output*/, const aclTensor *self, const aclTensor *target,
                        const aclTensor *weight, const aclTensor *pos_weight, int64_t reduction, aclTensor *out,
                        uint64_t *workspace_size, aclOpExecutor **executor) {
  return aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(self, target, weight, pos_weight, reduction, out,
                                                           workspace_size, executor);
}

#define MS_BCEWL_OP_API(short_name, plan, run) {short_name, #plan, #run, plan, run}

const OpApi kApis[kOpCount] = {
    {"forward", "aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize", "aclnnBinaryCrossEntropyWithLogits",
     PlanForward, aclnnBinaryCrossEntropyWithLogits},
    MS_BCEWL_OP_API("dx", aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize,
                    aclnnBinaryCrossEntropyWithLogitsBackward),
    MS_BCEWL_OP_API("dy", aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize,
                    aclnnBinaryCrossEntropyWithLogitsTargetBackward),
    MS_BCEWL_OP_API("dw", aclnnBinaryCrossEntropyWithLogitsWeightBackwardGetWorkspaceSize,
                    aclnnBinaryCrossEntropyWithLogitsWeightBackward),
    MS_BCEWL_OP_API("dp", aclnnBinaryCrossEntropyWithLogitsPosWeightBackwardGetWorkspaceSize,
                    aclnnBinaryCrossEntropyWithLogitsPosWeightBackward),
};

#undef MS_BCEWL_OP_API

}  // namespace

const OpApi &ApiOf(Op op) { return kApis[static_cast<int>(op)]; }

}  // namespace fuzz
