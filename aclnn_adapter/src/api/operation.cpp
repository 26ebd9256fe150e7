// PlanOperation / RunOperation: the two phases shared by every operation, the executor that phase 1 hands to the
// caller and phase 2 takes back, and their exported face for the MindSpore entries.
#include "api/operation.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "api/argument_checks.h"
#include "kernel/bcewl_kernel.h"
#include "ms_bcewl/operations.h"
#include "runtime/host_runtime.h"

namespace ms_bcewl {
namespace {

// The plans phase 1 makes and phase 2 runs: what to compute, over which views.
struct NoWork {};

// A value into every element of up to three outputs (the results for an empty self).
struct FillWork {
  struct Target {
    int rank;
    int64_t shape[kernel::kMaxRank];
    kernel::Destination out;
    float value;
  };
  Target targets[3];
  int count;
};

struct ElementwiseWork {
  kernel::Problem problem;
  kernel::Quantity quantity;
  float scale;
  kernel::Destination out;
};

// The gradients of self and target, and those of weight and pos_weight that are asked for, from one call.
struct GradientsWork {
  kernel::Problem problem;
  double scale;
  kernel::Destination grad_self;
  kernel::Destination grad_target;
  std::optional<kernel::Reduction> grad_weight;
  std::optional<kernel::Reduction> grad_pos_weight;
};

struct ReductionWork {
  kernel::Reduction reduction;
  kernel::Quantity quantity;
  double scale;
};

// The loss and the gradients of every input for a gradOutput of 1 (gradients.problem has no grad_output). A summed
// loss (mean, sum: its reduction) is computed in the pass of dx and dy; an elementwise one (none) before them.
struct LossAndGradientsWork {
  std::variant<kernel::Reduction, ElementwiseWork> loss;
  GradientsWork gradients;
};

using Work = std::variant<NoWork, FillWork, ElementwiseWork, GradientsWork, ReductionWork, LossAndGradientsWork>;

}  // namespace
}  // namespace ms_bcewl

// Defined here only: everywhere else the handle is opaque (aclnn/acl_meta.h).
struct aclOpExecutor {
  ms_bcewl::Operation operation;
  ms_bcewl::Work work;
  uint64_t workspace_bytes;
};

namespace ms_bcewl {
namespace {

// ---- Phase 1: the plan of a checked call ----

using kernel::Quantity;

// The kernels' dtype of a tensor that phase 1 accepted (include/ms_bcewl/operations.h).
kernel::DType KernelDType(aclDataType dtype) {
  switch (dtype) {
#define MS_BCEWL_KERNEL_DTYPE_CASE(ms_name, type_id, acl_dtype, kernel_dtype, ...) \
  case acl_dtype:                                                                  \
    return kernel::DType::kernel_dtype;
    MS_BCEWL_FOR_EACH_DTYPE(MS_BCEWL_KERNEL_DTYPE_CASE, )
#undef MS_BCEWL_KERNEL_DTYPE_CASE
    default:
      return kernel::DType::kFloat32;
  }
}

// Bytes per element of a dtype that phase 1 accepted: float32, or a 16-bit one.
size_t ElementBytes(aclDataType dtype) { return dtype == ACL_FLOAT ? 4 : 2; }

char *FirstElement(const aclTensor &tensor) {
  return static_cast<char *>(tensor.data) + tensor.offset * ElementBytes(tensor.dtype);
}

// A tensor's shape and strides aligned to `rank` problem dims by numpy rules: leading dims of 1, and stride 0
// on every dim of size 1 (which broadcasts).
struct AlignedLayout {
  int64_t shape[kernel::kMaxRank] = {};
  int64_t strides[kernel::kMaxRank] = {};
};

AlignedLayout AlignedTo(const aclTensor &tensor, int rank) {
  AlignedLayout layout;
  const int lead = rank - static_cast<int>(tensor.view_shape.size());
  for (int dim = 0; dim < rank; ++dim) {
    const bool present = dim >= lead;
    layout.shape[dim] = present ? tensor.view_shape[dim - lead] : 1;
    layout.strides[dim] = present && layout.shape[dim] != 1 ? tensor.strides[dim - lead] : 0;
  }
  return layout;
}

template <typename Strided>
void CopyStrides(const AlignedLayout &layout, Strided *strided) {
  std::copy(std::begin(layout.strides), std::end(layout.strides), strided->strides);
}

kernel::Operand OperandFor(const aclTensor *tensor, int rank) {
  kernel::Operand operand;
  if (tensor != nullptr) {
    operand.data = FirstElement(*tensor);
    operand.dtype = KernelDType(tensor->dtype);
    CopyStrides(AlignedTo(*tensor, rank), &operand);
  }
  return operand;
}

kernel::Destination DestinationFor(const aclTensor &out, int rank) {
  kernel::Destination destination;
  destination.data = FirstElement(out);
  destination.dtype = KernelDType(out.dtype);
  CopyStrides(AlignedTo(out, rank), &destination);
  return destination;
}

kernel::Problem ProblemFor(const OpArguments &arguments) {
  kernel::Problem problem;
  const aclTensor &self = *arguments.self;
  problem.rank = static_cast<int>(self.view_shape.size());
  std::copy(self.view_shape.begin(), self.view_shape.end(), problem.shape);
  problem.numel = self.numel;
  problem.self = OperandFor(arguments.self, problem.rank);
  problem.target = OperandFor(arguments.target, problem.rank);
  problem.weight = OperandFor(arguments.weight, problem.rank);
  problem.pos_weight = OperandFor(arguments.pos_weight, problem.rank);
  problem.grad_output = OperandFor(arguments.grad_output, problem.rank);
  return problem;
}

FillWork::Target FillTargetFor(const aclTensor &out, float value) {
  FillWork::Target target{};
  target.value = value;
  target.rank = static_cast<int>(out.view_shape.size());
  std::copy(out.view_shape.begin(), out.view_shape.end(), target.shape);
  target.out = DestinationFor(out, target.rank);
  return target;
}

bool ReducesToOutputShape(const OpArguments &arguments) {
  return arguments.operation == Operation::kGradWeight || arguments.operation == Operation::kGradPosWeight ||
         (arguments.operation == Operation::kForward && arguments.reduction != kReductionNone);
}

// The value of a reduced loss over no elements: NaN for mean, 0 for sum.
float EmptyLoss(int64_t reduction) {
  return reduction == kReductionMean ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
}

// The outputs that keep their own shape whatever self's (a reduced loss, the weight gradients), with their values
// for an empty self; null where the operation has no such output.
std::vector<std::pair<const aclTensor *, float>> OutputsOfFixedShape(const OpArguments &arguments) {
  const OpOutputs &outputs = arguments.outputs;
  const aclTensor *reduced_loss = arguments.reduction == kReductionNone ? nullptr : outputs.loss;
  return {{reduced_loss, EmptyLoss(arguments.reduction)}, {outputs.grad_weight, 0.0f}, {outputs.grad_pos_weight, 0.0f}};
}

// An empty self's results (docs/contract.md §8 Empty tensors): none -> nothing to write; mean -> NaN; sum -> 0;
// the gradients of weight and pos_weight -> zeros of their shape; the other gradients are empty like self.
Work EmptyInputWork(const OpArguments &arguments) {
  FillWork fill{};
  for (const auto &[out, value] : OutputsOfFixedShape(arguments)) {
    if (out != nullptr) {
      fill.targets[fill.count++] = FillTargetFor(*out, value);
    }
  }
  if (fill.count == 0) {
    return NoWork{};
  }
  return fill;
}

kernel::Reduction ReductionInto(const kernel::Problem &problem, const aclTensor &out) {
  const AlignedLayout out_layout = AlignedTo(out, problem.rank);
  return kernel::PlanReduction(problem, out_layout.shape, DestinationFor(out, problem.rank));
}

std::optional<kernel::Reduction> OptionalReductionInto(const kernel::Problem &problem, const aclTensor *out) {
  return out == nullptr ? std::nullopt : std::optional<kernel::Reduction>(ReductionInto(problem, *out));
}

// kGradAll, and kLossAndAllGradients with its loss beside the gradients.
Work PlanAllGradientsWork(const OpArguments &arguments, const kernel::Problem &problem, double scale) {
  const OpOutputs &outputs = arguments.outputs;
  GradientsWork gradients{problem,
                          scale,
                          DestinationFor(*outputs.grad_self, problem.rank),
                          DestinationFor(*outputs.grad_target, problem.rank),
                          OptionalReductionInto(problem, outputs.grad_weight),
                          OptionalReductionInto(problem, outputs.grad_pos_weight)};
  if (arguments.operation == Operation::kGradAll) {
    return gradients;
  }
  if (arguments.reduction == kReductionNone) {
    const ElementwiseWork loss{problem, Quantity::kLoss, 1.0f, DestinationFor(*outputs.loss, problem.rank)};
    return LossAndGradientsWork{loss, std::move(gradients)};
  }
  return LossAndGradientsWork{ReductionInto(problem, *outputs.loss), std::move(gradients)};
}

// What the one output of a single-output operation holds per element (the fused ones plan their own passes).
Quantity SingleOutputQuantity(Operation operation) {
  switch (operation) {
    case Operation::kForward:
      return Quantity::kLoss;
    case Operation::kGradTarget:
      return Quantity::kGradTarget;
    case Operation::kGradWeight:
      return Quantity::kGradWeight;
    case Operation::kGradPosWeight:
      return Quantity::kGradPosWeight;
    case Operation::kGradSelf:
    case Operation::kGradAll:
    case Operation::kLossAndAllGradients:
      break;
  }
  return Quantity::kGradSelf;
}

Work PlanWork(const OpArguments &arguments) {
  if (arguments.self->numel == 0) {
    return EmptyInputWork(arguments);
  }
  const kernel::Problem problem = ProblemFor(arguments);
  const double scale = arguments.reduction == kReductionMean ? 1.0 / static_cast<double>(problem.numel) : 1.0;
  if (GivesAllGradients(arguments.operation)) {
    return PlanAllGradientsWork(arguments, problem, scale);
  }
  const Quantity quantity = SingleOutputQuantity(arguments.operation);
  const aclTensor &out = *Outputs(arguments).front().tensor;
  if (ReducesToOutputShape(arguments)) {
    return ReductionWork{ReductionInto(problem, out), quantity, scale};
  }
  return ElementwiseWork{problem, quantity, static_cast<float>(scale), DestinationFor(out, problem.rank)};
}

// ---- The executor ----
// Live executors are registered, so that phase 2 or aclDestroyAclOpExecutor on an unknown, already used or
// destroyed executor is an error code and never a use after free.

LiveHandles<aclOpExecutor> &LiveExecutors() {
  static LiveHandles<aclOpExecutor> executors;
  return executors;
}

const kernel::Reduction *PointerTo(const std::optional<kernel::Reduction> &reduction) {
  return reduction.has_value() ? &*reduction : nullptr;
}

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

// Registers a new executor and hands out its handle.
aclOpExecutor *ReleaseToCaller(Operation operation, Work work) {
  const uint64_t workspace_bytes = WorkspaceBytes(work);
  auto executor = std::make_unique<aclOpExecutor>(aclOpExecutor{operation, std::move(work), workspace_bytes});
  LiveExecutors().Add(executor.get());
  return executor.release();
}

// Takes a live executor back from the caller (it is no longer live afterwards); null if it was not live.
std::unique_ptr<aclOpExecutor> ClaimFromCaller(aclOpExecutor *executor) {
  if (executor == nullptr || !LiveExecutors().Claim(executor)) {
    return nullptr;
  }
  return std::unique_ptr<aclOpExecutor>(executor);
}

// ---- Phase 2: run a live executor ----

// One overload per kind of work; the Work overload picks among them.
void Execute(const NoWork &, void *) {}

void Execute(const FillWork &fill, void *) {
  for (int target = 0; target < fill.count; ++target) {
    const FillWork::Target &to = fill.targets[target];
    kernel::Fill(to.rank, to.shape, to.out, to.value);
  }
}

void Execute(const ElementwiseWork &elementwise, void *) {
  kernel::ComputeElementwise(elementwise.problem, elementwise.quantity, elementwise.scale, elementwise.out);
}

void Execute(const GradientsWork &gradients, void *workspace) {
  kernel::ComputeGradients(gradients.problem, gradients.scale, gradients.grad_self, gradients.grad_target,
                           PointerTo(gradients.grad_weight), PointerTo(gradients.grad_pos_weight),
                           static_cast<double *>(workspace));
}

void Execute(const ReductionWork &reduction, void *workspace) {
  kernel::ComputeReduction(reduction.reduction, reduction.quantity, reduction.scale, static_cast<double *>(workspace));
}

void Execute(const LossAndGradientsWork &both, void *workspace) {
  const GradientsWork &gradients = both.gradients;
  if (const auto *loss = std::get_if<kernel::Reduction>(&both.loss)) {
    kernel::ComputeLossAndGradients(*loss, gradients.scale, gradients.grad_self, gradients.grad_target,
                                    PointerTo(gradients.grad_weight), PointerTo(gradients.grad_pos_weight),
                                    static_cast<double *>(workspace));
    return;
  }
  Execute(std::get<ElementwiseWork>(both.loss), workspace);
  Execute(gradients, workspace);
}

void Execute(const Work &work, void *workspace) {
  std::visit([workspace](const auto &planned) { Execute(planned, workspace); }, work);
}

aclnnStatus CheckWorkspace(const char *api, const aclOpExecutor &executor, const void *workspace,
                           uint64_t workspace_size) {
  const uint64_t needed = executor.workspace_bytes;
  if (needed == 0) {
    return ACLNN_SUCCESS;
  }
  if (workspace == nullptr) {
    return Fail(api, ACLNN_ERR_PARAM_INVALID,
                "workspace is null but the plan needs " + std::to_string(needed) + " bytes.");
  }
  if (workspace_size < needed) {
    return Fail(api, ACLNN_ERR_PARAM_INVALID,
                "workspaceSize " + std::to_string(workspace_size) + " is smaller than the " + std::to_string(needed) +
                    " bytes that phase 1 returned.");
  }
  if (reinterpret_cast<uintptr_t>(workspace) % alignof(double) != 0) {
    return Fail(api, ACLNN_ERR_PARAM_INVALID, "workspace must be 8-byte aligned (aclrtMalloc memory is).");
  }
  return ACLNN_SUCCESS;
}

aclnnStatus Run(Operation operation, void *workspace, uint64_t workspace_size, aclOpExecutor *handle,
                aclrtStream stream) {
  const char *api = InfoOf(operation).run_api;
  if (handle == nullptr) {
    return Fail(api, ACLNN_ERR_PARAM_INVALID,
                std::string("executor is null; get one from ") + InfoOf(operation).plan_api + ".");
  }
  const std::unique_ptr<aclOpExecutor> executor = ClaimFromCaller(handle);
  if (executor == nullptr) {
    return Fail(api, ACLNN_ERR_PARAM_INVALID,
                "executor is not live: unknown, destroyed, or already run (phase 2 consumes its executor and "
                "cannot be called twice).");
  }
  if (executor->operation != operation) {
    return Fail(api, ACLNN_ERR_PARAM_INVALID,
                std::string("executor was planned by ") + InfoOf(executor->operation).plan_api + ", not by " +
                    InfoOf(operation).plan_api + "; it has been released.");
  }
  if (!IsUsableStream(stream)) {
    return Fail(api, ACLNN_ERR_PARAM_INVALID, "stream is unknown or already destroyed.");
  }
  const aclnnStatus status = CheckWorkspace(api, *executor, workspace, workspace_size);
  if (status == ACLNN_SUCCESS) {
    Execute(executor->work, workspace);
  }
  return status;
}

}  // namespace

aclnnStatus PlanOperation(const OpArguments &arguments, uint64_t *workspace_size, aclOpExecutor **executor,
                          ShapeRules shape_rules) {
  const char *api = InfoOf(arguments.operation).plan_api;
  return WithInternalErrorsCaught(api, ACLNN_ERR_INNER, ACLNN_ERR_INNER, [&] {
    if (workspace_size != nullptr) {
      *workspace_size = 0;
    }
    if (executor != nullptr) {
      *executor = nullptr;
    }
    const aclnnStatus status = CheckArguments(arguments, workspace_size, executor, shape_rules);
    if (status != ACLNN_SUCCESS) {
      return status;
    }
    aclOpExecutor *planned = ReleaseToCaller(arguments.operation, PlanWork(arguments));
    *workspace_size = planned->workspace_bytes;
    *executor = planned;
    return ACLNN_SUCCESS;
  });
}

aclnnStatus RunOperation(Operation operation, void *workspace, uint64_t workspace_size, aclOpExecutor *executor,
                         aclrtStream stream) {
  return WithInternalErrorsCaught(InfoOf(operation).run_api, ACLNN_ERR_INNER, ACLNN_ERR_INNER,
                                  [&] { return Run(operation, workspace, workspace_size, executor, stream); });
}

}  // namespace ms_bcewl

// The two phases as the library exports them for its MindSpore entries (src/mindspore/).
extern "C" aclnnStatus msBcewlPlanOperation(const ms_bcewl::OpArguments *arguments, uint64_t *workspaceSize,
                                            aclOpExecutor **executor) {
  if (arguments == nullptr) {
    return ms_bcewl::Fail("msBcewlPlanOperation", ACLNN_ERR_PARAM_NULLPTR, "arguments is null.");
  }
  return ms_bcewl::PlanOperation(*arguments, workspaceSize, executor);
}

extern "C" aclnnStatus msBcewlRunOperation(ms_bcewl::Operation operation, void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream) {
  return ms_bcewl::RunOperation(operation, workspace, workspaceSize, executor, stream);
}

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
