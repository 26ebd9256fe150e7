#include "api/executor.h"

#include "runtime/error_message.h"
#include "runtime/live_handles.h"

namespace ms_bcewl {
namespace {

LiveHandles<aclOpExecutor> &LiveExecutors() {
  static LiveHandles<aclOpExecutor> executors;
  return executors;
}

template <typename... Handlers>
struct Overloaded : Handlers... {
  using Handlers::operator()...;
};
template <typename... Handlers>
Overloaded(Handlers...) -> Overloaded<Handlers...>;

}  // namespace

uint64_t WorkspaceBytes(const Work &work) {
  const auto *reduction = std::get_if<ReductionWork>(&work);
  return reduction == nullptr ? 0 : kernel::ReductionWorkspaceBytes(reduction->reduction);
}

void Execute(const Work &work, void *workspace) {
  std::visit(Overloaded{
                 [](const NoWork &) {},
                 [](const FillWork &fill) { kernel::Fill(fill.rank, fill.shape, fill.out, fill.value); },
                 [](const ElementwiseWork &elementwise) {
                   kernel::ComputeElementwise(elementwise.problem, elementwise.quantity, elementwise.scale,
                                              elementwise.out);
                 },
                 [](const GradSelfAndTargetWork &pair) {
                   kernel::ComputeGradSelfAndTarget(pair.problem, pair.scale, pair.grad_self, pair.grad_target);
                 },
                 [workspace](const ReductionWork &reduction) {
                   kernel::ComputeReduction(reduction.reduction, reduction.quantity, reduction.scale,
                                            static_cast<double *>(workspace));
                 },
             },
             work);
}

aclOpExecutor *ReleaseToCaller(OpKind kind, Work work) {
  const uint64_t workspace_bytes = WorkspaceBytes(work);
  auto executor = std::make_unique<aclOpExecutor>(aclOpExecutor{kind, std::move(work), workspace_bytes});
  LiveExecutors().Add(executor.get());
  return executor.release();
}

std::unique_ptr<aclOpExecutor> ClaimFromCaller(aclOpExecutor *executor) {
  if (executor == nullptr || !LiveExecutors().Claim(executor)) {
    return nullptr;
  }
  return std::unique_ptr<aclOpExecutor>(executor);
}

}  // namespace ms_bcewl

extern "C" aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor) {
  if (executor == nullptr) {
    return ms_bcewl::Fail("aclDestroyAclOpExecutor", ACLNN_ERR_PARAM_NULLPTR, "the executor is null.");
  }
  if (ms_bcewl::ClaimFromCaller(executor) == nullptr) {
    return ms_bcewl::Fail("aclDestroyAclOpExecutor", ACLNN_ERR_PARAM_INVALID,
                          "the executor is unknown, already destroyed, or was consumed by phase 2.");
  }
  return ACLNN_SUCCESS;
}
