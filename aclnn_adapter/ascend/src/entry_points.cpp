// The exported functions of libms_bcewl_ascend.so. Phase 1 runs the shared checks, then plans; phase 2 consumes
// a live plan and enqueues it. The executor handle is this library's Plan, registered while it is live, so that
// an unknown, used or destroyed handle is an error code and never a use after free.
#include "aclnnop/aclnn_ms_bcewl_binary_cross_entropy_with_logits.h"

#include <string>

#include "device_tensor.h"
#include "pipeline.h"
#include "runtime/error_message.h"
#include "runtime/live_handles.h"

namespace ms_bcewl::ascend {
namespace {

LiveHandles<Plan> &LivePlans() {
  static LiveHandles<Plan> plans;
  return plans;
}

aclOpExecutor *HandleOf(Plan *plan) { return reinterpret_cast<aclOpExecutor *>(plan); }
Plan *PlanOf(aclOpExecutor *handle) { return reinterpret_cast<Plan *>(handle); }

CallFacts FactsOfCall(const OpArguments &call) {
  CallFacts facts;
  facts.kind = call.kind;
  facts.grad_output = FactsOf(call.grad_output);
  facts.self = FactsOf(call.self);
  facts.target = FactsOf(call.target);
  facts.weight = FactsOf(call.weight);
  facts.pos_weight = FactsOf(call.pos_weight);
  facts.out = FactsOf(call.out);
  facts.reduction = call.reduction;
  facts.has_workspace_size = call.workspace_size != nullptr;
  facts.has_executor = call.executor != nullptr;
  return facts;
}

aclnnStatus PlanCall(const OpArguments &call) {
  const char *api = TraitsOf(call.kind).plan_api;
  return WithInternalErrorsCaught(api, ACLNN_ERR_INNER, ACLNN_ERR_INNER, [&] {
    if (call.workspace_size != nullptr) {
      *call.workspace_size = 0;
    }
    if (call.executor != nullptr) {
      *call.executor = nullptr;
    }
    const CallFacts facts = FactsOfCall(call);
    const aclnnStatus status = CheckCall(facts);
    if (status != ACLNN_SUCCESS) {
      return status;
    }
    std::unique_ptr<Plan> plan = MakePlan(call, facts);
    *call.workspace_size = plan->workspace_bytes;
    LivePlans().Add(plan.get());
    *call.executor = HandleOf(plan.release());
    return ACLNN_SUCCESS;
  });
}

// Takes a live plan back from the caller; null (with the failure recorded) for anything else.
std::unique_ptr<Plan> Claim(const char *api, aclOpExecutor *handle) {
  if (handle == nullptr || !LivePlans().Claim(PlanOf(handle))) {
    Fail(api, ACLNN_ERR_PARAM_INVALID,
         "executor is not live: null, unknown (CANN's executors are not this library's), destroyed, or already "
         "run (phase 2 consumes its executor).");
    return nullptr;
  }
  return std::unique_ptr<Plan>(PlanOf(handle));
}

aclnnStatus RunCall(OpKind kind, void *workspace, uint64_t workspace_size, aclOpExecutor *handle,
                    aclrtStream stream) {
  const char *api = TraitsOf(kind).run_api;
  return WithInternalErrorsCaught(api, ACLNN_ERR_INNER, ACLNN_ERR_INNER, [&] {
    const std::unique_ptr<Plan> plan = Claim(api, handle);
    if (plan == nullptr) {
      return ACLNN_ERR_PARAM_INVALID;
    }
    if (plan->kind != kind) {
      return Fail(api, ACLNN_ERR_PARAM_INVALID,
                  std::string("executor was planned by ") + TraitsOf(plan->kind).plan_api + "; it is released.");
    }
    const uint64_t needed = plan->workspace_bytes;
    if (needed > 0 && (workspace == nullptr || workspace_size < needed)) {
      return Fail(api, ACLNN_ERR_PARAM_INVALID,
                  "workspace of " + std::to_string(workspace_size) + " bytes at " +
                      (workspace == nullptr ? "null" : "a device address") + ", but phase 1 asked for " +
                      std::to_string(needed) + ".");
    }
    return RunPlan(*plan, api, workspace, stream);
  });
}

}  // namespace
}  // namespace ms_bcewl::ascend

using ms_bcewl::OpKind;

extern "C" aclnnStatus aclnnMsBcewlBinaryCrossEntropyWithLogitsGetWorkspaceSize(
    const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  return ms_bcewl::ascend::PlanCall({OpKind::kForward, nullptr, self, target, weightOptional, posWeightOptional,
                                     reduction, out, workspaceSize, executor});
}

extern "C" aclnnStatus aclnnMsBcewlBinaryCrossEntropyWithLogits(void *workspace, uint64_t workspaceSize,
                                                                aclOpExecutor *executor, aclrtStream stream) {
  return ms_bcewl::ascend::RunCall(OpKind::kForward, workspace, workspaceSize, executor, stream);
}

extern "C" aclnnStatus aclnnMsBcewlBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  return ms_bcewl::ascend::PlanCall({OpKind::kGradSelf, gradOutput, self, target, weightOptional,
                                     posWeightOptional, reduction, out, workspaceSize, executor});
}

extern "C" aclnnStatus aclnnMsBcewlBinaryCrossEntropyWithLogitsBackward(void *workspace, uint64_t workspaceSize,
                                                                        aclOpExecutor *executor,
                                                                        aclrtStream stream) {
  return ms_bcewl::ascend::RunCall(OpKind::kGradSelf, workspace, workspaceSize, executor, stream);
}

extern "C" aclnnStatus aclnnMsBcewlDestroyExecutor(aclOpExecutor *executor) {
  return ms_bcewl::ascend::Claim("aclnnMsBcewlDestroyExecutor", executor) == nullptr ? ACLNN_ERR_PARAM_INVALID
                                                                                      : ACLNN_SUCCESS;
}
