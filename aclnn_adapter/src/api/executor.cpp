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

const kernel::Reduction *PointerTo(const std::optional<kernel::Reduction> &reduction) {
  return reduction.has_value() ? &*reduction : nullptr;
}

void ExecuteElementwise(const ElementwiseWork &elementwise) {
  kernel::ComputeElementwise(elementwise.problem, elementwise.quantity, elementwise.scale, elementwise.out);
}

void ExecuteGradients(const GradientsWork &gradients, void *workspace) {
  kernel::ComputeGradients(gradients.problem, gradients.scale, gradients.grad_self, gradients.grad_target,
                           PointerTo(gradients.grad_weight), PointerTo(gradients.grad_pos_weight),
                           static_cast<double *>(workspace));
}

}  // namespace

uint64_t WorkspaceBytes(const Work &work) {
  if (const auto *reduction = std::get_if<ReductionWork>(&work)) {
    return kernel::ReductionWorkspaceBytes(reduction->reduction);
  }
  if (const auto *gradients = std::get_if<GradientsWork>(&work)) {
    return kernel::GradientsWorkspaceBytes(PointerTo(gradients->grad_weight), PointerTo(gradients->grad_pos_weight));
  }
  if (const auto *both = std::get_if<LossAndGradientsWork>(&work)) {
    const kernel::Reduction *grad_weight = PointerTo(both->gradients.grad_weight);
    const kernel::Reduction *grad_pos_weight = PointerTo(both->gradients.grad_pos_weight);
    if (const auto *loss = std::get_if<kernel::Reduction>(&both->loss)) {
      return kernel::LossAndGradientsWorkspaceBytes(*loss, grad_weight, grad_pos_weight);
    }
    return kernel::GradientsWorkspaceBytes(grad_weight, grad_pos_weight);
  }
  return 0;
}

void Execute(const Work &work, void *workspace) {
  std::visit(Overloaded{
                 [](const NoWork &) {},
                 [](const FillWork &fill) {
                   for (int target = 0; target < fill.count; ++target) {
                     const FillWork::Target &to = fill.targets[target];
                     kernel::Fill(to.rank, to.shape, to.out, to.value);
                   }
                 },
                 [](const ElementwiseWork &elementwise) { ExecuteElementwise(elementwise); },
                 [workspace](const GradientsWork &gradients) { ExecuteGradients(gradients, workspace); },
                 [workspace](const ReductionWork &reduction) {
                   kernel::ComputeReduction(reduction.reduction, reduction.quantity, reduction.scale,
                                            static_cast<double *>(workspace));
                 },
                 [workspace](const LossAndGradientsWork &both) {
                   const GradientsWork &gradients = both.gradients;
                   if (const auto *loss = std::get_if<kernel::Reduction>(&both.loss)) {
                     kernel::ComputeLossAndGradients(*loss, gradients.scale, gradients.grad_self, gradients.grad_target,
                                                     PointerTo(gradients.grad_weight),
                                                     PointerTo(gradients.grad_pos_weight),
                                                     static_cast<double *>(workspace));
                     return;
                   }
                   ExecuteElementwise(std::get<ElementwiseWork>(both.loss));
                   ExecuteGradients(gradients, workspace);
                 },
             },
             work);
}

aclOpExecutor *ReleaseToCaller(Operation operation, Work work) {
  const uint64_t workspace_bytes = WorkspaceBytes(work);
  auto executor = std::make_unique<aclOpExecutor>(aclOpExecutor{operation, std::move(work), workspace_bytes});
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
