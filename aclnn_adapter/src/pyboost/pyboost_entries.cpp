// PyNative entry points built with MindSpore's CustomOpBuilder (ms_bcewl/_pyboost.py compiles this file once
// per machine and MindSpore version): the loss and its gradients as pyboost operators, and a C++ autograd Function that
// ties them together. A call here skips what an ops.Custom call pays in PyNative (Python infer functions, the
// primitive's generic run path), most of a small call's time under launch_blocking() (docs/performance.md).
//
// Like the AOT entries (aclnn_adapter/src/aot/aot_entries.cpp), each operator makes aclTensor views of MindSpore's
// buffers and runs the two-phase aclnn API of libms_bcewl.so, so both paths share every check and kernel.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <vector>

#include "aclnnop/aclnn_binary_cross_entropy_with_logits.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_all_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_and_all_gradients.h"
#include "ms_bcewl/entry_support.h"
#include "ms_bcewl/reductions.h"
#include "ms_extension/api.h"

// MindSpore's internal headers, found where the installed release keeps them (CustomOpBuilder puts both
// include/mindspore/ccsrc and its include/ folder on the path). Newest layout first: 2.8+, then 2.7.1-2.7.2, 2.7.0.
// The autograd Function interface; api.h includes it only for Ascend builds, though it is backend-neutral.
#if __has_include("include/pynative/backward/function.h")
#include "include/pynative/backward/function.h"
#elif __has_include("pynative/backward/function.h")
#include "pynative/backward/function.h"
#elif __has_include("pynative/grad/function.h")
#include "pynative/grad/function.h"
#else
#error "no autograd Function header (pynative .../function.h) in this MindSpore"
#endif
#if __has_include("include/pynative/utils/pynative_execute.h")
#include "include/pynative/utils/pynative_execute.h"
#elif __has_include("pynative/utils/pynative_execute.h")
#include "pynative/utils/pynative_execute.h"
#else
#include "pynative/pynative_execute.h"
#endif
// OpRunStatus: 2.10 has it in runtime/; 2.8-2.9 in include/pynative/utils/pyboost/; 2.7 in pyboost/.
#if __has_include("include/pynative/utils/runtime/auto_grad_guard.h")
#include "include/pynative/utils/runtime/auto_grad_guard.h"
#elif __has_include("include/pynative/utils/pyboost/functions/auto_grad_guard.h")
#include "include/pynative/utils/pyboost/functions/auto_grad_guard.h"
#else
#include "pyboost/functions/auto_grad_guard.h"
#endif
#if __has_include("include/runtime/utils/runtime_conf/runtime_conf.h")
#include "include/runtime/utils/runtime_conf/runtime_conf.h"
#else
#include "include/common/runtime_conf/runtime_conf.h"
#endif
#if __has_include("include/utils/pynative/grad_state.h")
#include "include/utils/pynative/grad_state.h"
#else
#include "include/common/pynative/grad_state.h"
#endif

// 2.7's ShapeVector is a global alias only; redeclaring the same alias in mindspore is allowed where it exists.
namespace mindspore {
using ShapeVector = std::vector<int64_t>;
}  // namespace mindspore

namespace {

using mindspore::TypeId;
using mindspore::pynative::autograd::AutogradContext;
using mindspore::pynative::autograd::Function;
using TensorPtr = mindspore::tensor::TensorPtr;
using TensorPtrList = std::vector<TensorPtr>;
using ms_bcewl::entry::PhaseTwo;
using ms_bcewl::entry::RunPhaseTwo;
using ms_bcewl::entry::TensorHandle;
using ms_bcewl::entry::ThrowError;
using ms_bcewl::entry::ThrowOnError;

aclDataType AclDataType(TypeId type) {
  switch (type) {
    case TypeId::kNumberTypeFloat32:
      return ACL_FLOAT;
    case TypeId::kNumberTypeFloat16:
      return ACL_FLOAT16;
    case TypeId::kNumberTypeBFloat16:
      return ACL_BF16;
    default:
      ThrowError("unsupported dtype (supported: float16, float32, bfloat16)");
  }
}

// A view of a contiguous MindSpore tensor; an absent one (not defined) is a null handle.
TensorHandle MakeView(const ms::Tensor &tensor) {
  if (!tensor.is_defined()) return TensorHandle();
  const std::vector<int64_t> &dims = tensor.shape();
  return ms_bcewl::entry::MakeContiguousView(dims.data(), static_cast<int64_t>(dims.size()),
                                             AclDataType(tensor.data_type()), tensor.GetDataPtr());
}

ms::Tensor Contiguous(const ms::Tensor &tensor) {
  return !tensor.is_defined() || tensor.is_contiguous() ? tensor : tensor.contiguous();
}

// The operands of one call: [dout,] input, target, weight (or undefined), pos_weight (or undefined).
struct Operands {
  ms::Tensor grad_output;
  ms::Tensor input;
  ms::Tensor target;
  ms::Tensor weight;
  ms::Tensor pos_weight;

  std::vector<ms::Tensor> Present() const {
    std::vector<ms::Tensor> present;
    for (const ms::Tensor *tensor : {&grad_output, &input, &target, &weight, &pos_weight}) {
      if (tensor->is_defined()) present.push_back(*tensor);
    }
    return present;
  }

  // The views below assume row-major layouts; a strided view (a transpose, a slice) is copied first.
  Operands Contiguous() const {
    return {::Contiguous(grad_output), ::Contiguous(input), ::Contiguous(target), ::Contiguous(weight),
            ::Contiguous(pos_weight)};
  }
};

// aclTensor views of one call: the operands, then the outputs in the order the operation was given them.
struct Views {
  TensorHandle grad_output, input, target, weight, pos_weight;
  std::vector<TensorHandle> outputs;

  aclTensor *Output(size_t index) const { return outputs[index].get(); }
};

using PhaseOne = aclnnStatus (*)(const Views &, int64_t reduction, uint64_t *workspace_size, aclOpExecutor **);

aclnnStatus PlanForward(const Views &v, int64_t reduction, uint64_t *workspace_size, aclOpExecutor **executor) {
  return aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(v.input.get(), v.target.get(), v.weight.get(),
                                                           v.pos_weight.get(), reduction, v.Output(0), workspace_size,
                                                           executor);
}

// The outputs dw and dp, where the call has weight and pos_weight, after the output `first` (which takes dx).
struct WeightGradients {
  aclTensor *dw;
  aclTensor *dp;
};

WeightGradients WeightGradientsAfter(const Views &v, size_t first) {
  return {v.weight ? v.Output(first + 2) : nullptr, v.pos_weight ? v.Output(first + (v.weight ? 3 : 2)) : nullptr};
}

// Outputs: dx, dy, then dw and dp where the call has weight and pos_weight.
aclnnStatus PlanAllBackward(const Views &v, int64_t reduction, uint64_t *workspace_size, aclOpExecutor **executor) {
  const WeightGradients weights = WeightGradientsAfter(v, 0);
  return aclnnBinaryCrossEntropyWithLogitsAllBackwardGetWorkspaceSize(
      v.grad_output.get(), v.input.get(), v.target.get(), v.weight.get(), v.pos_weight.get(), reduction, v.Output(0),
      v.Output(1), weights.dw, weights.dp, workspace_size, executor);
}

// Outputs: the loss, then those of PlanAllBackward (for a gradOutput of 1).
aclnnStatus PlanLossAndAllGradients(const Views &v, int64_t reduction, uint64_t *workspace_size,
                                    aclOpExecutor **executor) {
  const WeightGradients weights = WeightGradientsAfter(v, 1);
  return aclnnBinaryCrossEntropyWithLogitsAndAllGradientsGetWorkspaceSize(
      v.input.get(), v.target.get(), v.weight.get(), v.pos_weight.get(), reduction, v.Output(0), v.Output(1),
      v.Output(2), weights.dw, weights.dp, workspace_size, executor);
}

// One aclnn operation as a pyboost operator: MindSpore allocates the outputs, LaunchKernel runs both phases.
class AclnnRunner : public ms::pynative::PyboostRunner {
 public:
  AclnnRunner(const char *name, PhaseOne plan, PhaseTwo run, const Operands &operands, int64_t reduction)
      : PyboostRunner(name), plan_(plan), run_(run), operands_(operands), reduction_(reduction) {}

  void LaunchKernel() override {
    Views views{MakeView(operands_.grad_output), MakeView(operands_.input),      MakeView(operands_.target),
                MakeView(operands_.weight),      MakeView(operands_.pos_weight), {}};
    for (const ms::Tensor &output : outputs()) views.outputs.push_back(MakeView(output));
    uint64_t workspace_size = 0;
    aclOpExecutor *executor = nullptr;
    ThrowOnError(plan_(views, reduction_, &workspace_size, &executor), "GetWorkspaceSize");
    RunPhaseTwo(run_, workspace_size, executor);
  }

 private:
  PhaseOne plan_;
  PhaseTwo run_;
  Operands operands_;
  int64_t reduction_;
};

// Runs one operation on contiguous operands into `outputs` (tensors of the right dtypes and shapes, not yet
// allocated) and returns them.
std::vector<ms::Tensor> Launch(const char *name, PhaseOne plan, PhaseTwo run, const Operands &operands,
                               int64_t reduction, std::vector<ms::Tensor> outputs) {
  std::make_shared<AclnnRunner>(name, plan, run, operands, reduction)->Run(operands.Present(), outputs);
  return outputs;
}

ms::Tensor Like(const ms::Tensor &tensor) { return ms::Tensor(tensor.data_type(), tensor.shape()); }

ms::Tensor LossLike(const Operands &operands, int64_t reduction) {
  const bool per_element = reduction == ms_bcewl::kReductionNone;
  return ms::Tensor(operands.target.data_type(), per_element ? operands.input.shape() : mindspore::ShapeVector{});
}

// A gradient for each input present, in the order input, target, weight, pos_weight.
std::vector<ms::Tensor> GradientsLike(const Operands &operands) {
  std::vector<ms::Tensor> grads;
  for (const ms::Tensor *of : {&operands.input, &operands.target, &operands.weight, &operands.pos_weight}) {
    if (of->is_defined()) grads.push_back(Like(*of));
  }
  return grads;
}

ms::Tensor RunForward(const Operands &given, int64_t reduction) {
  const Operands operands = given.Contiguous();
  return Launch("BinaryCrossEntropyWithLogits", PlanForward, aclnnBinaryCrossEntropyWithLogits, operands, reduction,
                {LossLike(operands, reduction)})[0];
}

std::vector<ms::Tensor> RunAllBackward(const Operands &given, int64_t reduction) {
  const Operands operands = given.Contiguous();
  return Launch("BinaryCrossEntropyWithLogitsAllBackward", PlanAllBackward,
                aclnnBinaryCrossEntropyWithLogitsAllBackward, operands, reduction, GradientsLike(operands));
}

// The loss, then the gradients of RunAllBackward for a gradOutput of 1.
std::vector<ms::Tensor> RunLossAndAllGradients(const Operands &given, int64_t reduction) {
  const Operands operands = given.Contiguous();
  std::vector<ms::Tensor> outputs = GradientsLike(operands);
  outputs.insert(outputs.begin(), LossLike(operands, reduction));
  return Launch("BinaryCrossEntropyWithLogitsAndAllGradients", PlanLossAndAllGradients,
                aclnnBinaryCrossEntropyWithLogitsAndAllGradients, operands, reduction, outputs);
}

// Whether a tensor holds the single value 1 (a 0-d gradOutput as value_and_grad and grad give a reduced loss).
bool IsExactlyOne(const TensorPtr &tensor) {
  if (tensor == nullptr || tensor->DataSize() != 1) return false;
  const void *data = ms::Tensor(tensor).GetDataPtr();
  if (data == nullptr) return false;
  switch (tensor->data_type()) {
    case TypeId::kNumberTypeFloat32:
      return *static_cast<const float *>(data) == 1.0f;
    case TypeId::kNumberTypeFloat16:
      return *static_cast<const uint16_t *>(data) == 0x3c00;  // 1.0 in float16
    case TypeId::kNumberTypeBFloat16:
      return *static_cast<const uint16_t *>(data) == 0x3f80;  // 1.0 in bfloat16
    default:
      return false;
  }
}

ms::Tensor AsMsTensor(const TensorPtr &tensor) { return tensor == nullptr ? ms::Tensor() : ms::Tensor(tensor); }

// Whether autograd records the operations run in this backward, as it does when a higher-order gradient will
// differentiate them: MindSpore requires gradients of the ops it runs exactly then (the engine's high-order flag).
bool BackwardIsRecorded() { return mindspore::kernel::pyboost::OpRunStatus::Get().RequireGrad(); }

constexpr const char *kNotDifferentiableTwice =
    "a higher-order gradient goes through a loss computed on the pyboost path, whose backward cannot be "
    "differentiated; compute the loss inside the function whose gradient is differentiated again, or set "
    "MS_BCEWL_PYNATIVE_PATH=aot";

// The autograd Function of one variant: kHasWeight / kHasPosWeight say which optional tensors follow target.
constexpr const char *kReduction = "reduction";
constexpr const char *kGradientsOfOne = "gradients for a gradOutput of 1";

template <bool kHasWeight, bool kHasPosWeight>
struct BceWithLogitsFunction : public Function<BceWithLogitsFunction<kHasWeight, kHasPosWeight>> {
  // With a reduced loss whose input autograd tracks (a training step), the gradients for a gradOutput of 1 come
  // with the loss, from the same pass: a value_and_grad or grad of the loss (or of a sum of losses) asks for
  // exactly those, and Backward then hands them over without another pass. Blocking launches only, since Backward
  // reads the gradOutput's value on the host.
  template <typename... Weights>
  static TensorPtr Forward(AutogradContext *ctx, int64_t reduction, const TensorPtr &input, const TensorPtr &target,
                           const Weights &...weights) {
    const TensorPtrList inputs{input, target, weights...};
    ctx->SaveForBackward(inputs);
    ctx->saved_data[kReduction] = mindspore::MakeValue(reduction);
    const Operands operands = OperandsOf(nullptr, inputs);
    if (reduction == ms_bcewl::kReductionNone || !ctx->NeedGrad(input) ||
        !mindspore::runtime::RuntimeConf::GetInstance()->launch_blocking()) {
      return RunForward(operands, reduction).tensor();
    }
    const std::vector<ms::Tensor> outputs = RunLossAndAllGradients(operands, reduction);
    mindspore::ValuePtrList gradients;
    for (size_t k = 1; k < outputs.size(); ++k) gradients.push_back(outputs[k].tensor());
    ctx->saved_data[kGradientsOfOne] = std::make_shared<mindspore::ValueTuple>(gradients);
    return outputs[0].tensor();
  }

  // Every input's gradient from one call: MindSpore 2.10's value_and_grad marks every input of the differentiated
  // function as needing one (AutogradContext::NeedsInputGrad is true for all of them, whatever grad_position
  // asks), and in the one-pass operation dy costs little beside dx and per-class weight gradients join the pass.
  // The gradients the forward computed for a gradOutput of 1 are handed over once (a second backward, or another
  // gradOutput, computes them).
  static TensorPtrList Backward(AutogradContext *ctx, TensorPtrList grad_outputs) {
    if (BackwardIsRecorded()) ThrowError(kNotDifferentiableTwice);
    TensorPtrList grads{nullptr};  // one per argument of Forward: the reduction has none
    const auto of_one = ctx->saved_data.find(kGradientsOfOne);
    if (of_one != ctx->saved_data.end()) {
      const mindspore::ValuePtr gradients = of_one->second;
      ctx->saved_data.erase(of_one);
      if (IsExactlyOne(grad_outputs[0])) {
        for (const mindspore::ValuePtr &gradient : gradients->cast<mindspore::ValueTuplePtr>()->value()) {
          grads.push_back(gradient->cast<TensorPtr>());
        }
        return grads;
      }
    }
    const int64_t reduction = mindspore::GetValue<int64_t>(ctx->saved_data[kReduction]);
    for (const ms::Tensor &grad : RunAllBackward(OperandsOf(grad_outputs[0], ctx->GetSavedTensors()), reduction)) {
      grads.push_back(grad.tensor());
    }
    return grads;
  }

 private:
  // inputs: input, target, then weight and pos_weight where the variant has them.
  static Operands OperandsOf(const TensorPtr &grad_output, const TensorPtrList &inputs) {
    Operands operands{AsMsTensor(grad_output), AsMsTensor(inputs[0]), AsMsTensor(inputs[1]), ms::Tensor(),
                      ms::Tensor()};
    size_t next = 2;
    if (kHasWeight) operands.weight = AsMsTensor(inputs[next++]);
    if (kHasPosWeight) operands.pos_weight = AsMsTensor(inputs[next++]);
    return operands;
  }
};

TensorPtr TensorOrNull(const std::optional<ms::Tensor> &tensor) { return tensor ? tensor->tensor() : nullptr; }

// Whether autograd tracks any of the tensors (an input of a differentiated function, an output of an operation
// recorded for one, a Parameter that requires grad). AutogradContext::NeedGrad reads the tensor alone (it waits for
// the autograd queue first, so that what it reads is current); the context object only carries the call.
bool AnyNeedsGrad(std::initializer_list<TensorPtr> tensors) {
  AutogradContext context;
  for (const TensorPtr &tensor : tensors) {
    if (tensor != nullptr && context.NeedGrad(tensor)) return true;
  }
  return false;
}

ms::Tensor BceWithLogits(const ms::Tensor &input, const ms::Tensor &target, const std::optional<ms::Tensor> &weight,
                         const std::optional<ms::Tensor> &pos_weight, int64_t reduction) {
  const TensorPtr x = input.tensor(), y = target.tensor(), w = TensorOrNull(weight), p = TensorOrNull(pos_weight);
  if (!AnyNeedsGrad({x, y, w, p})) {  // nothing to differentiate: the loss alone, without a Function's bookkeeping
    return RunForward({ms::Tensor(), input, target, weight.value_or(ms::Tensor()), pos_weight.value_or(ms::Tensor())},
                      reduction);
  }
  if (w && p) return ms::Tensor(BceWithLogitsFunction<true, true>::Apply(reduction, x, y, w, p));
  if (w) return ms::Tensor(BceWithLogitsFunction<true, false>::Apply(reduction, x, y, w));
  if (p) return ms::Tensor(BceWithLogitsFunction<false, true>::Apply(reduction, x, y, p));
  return ms::Tensor(BceWithLogitsFunction<false, false>::Apply(reduction, x, y));
}

// Whether this call is recorded for a gradient that a higher-order gradient differentiates again (the forward of a
// function passed to a grad inside another grad): MindSpore's engine then records that backward's operations, which
// only the ops.Custom primitives' bprops support. Read on the Python thread, which sets the recording cell.
bool InHigherOrderGradient() {
  return mindspore::pynative::GradState::Get().RequiresGrad() &&
         mindspore::pynative::PyNativeExecutor::grad_executor()->is_high_order_top_cell();
}

// The loss, or None where the call takes part in a higher-order gradient: the caller then runs the primitives.
py::object PyBceWithLogits(const ms::Tensor &input, const ms::Tensor &target, const std::optional<ms::Tensor> &weight,
                           const std::optional<ms::Tensor> &pos_weight, int64_t reduction) {
  if (InHigherOrderGradient()) return py::none();
  return ms::pynative::PyboostRunner::Call<1>(BceWithLogits, input, target, weight, pos_weight, reduction);
}

}  // namespace

PYBIND11_MODULE(MS_EXTENSION_NAME, m) {
  m.def("binary_cross_entropy_with_logits", &PyBceWithLogits,
        "The loss, differentiable in PyNative mode; None inside a higher-order gradient (use the primitives)",
        pybind11::arg("input"), pybind11::arg("target"), pybind11::arg("weight"), pybind11::arg("pos_weight"),
        pybind11::arg("reduction"));
}
