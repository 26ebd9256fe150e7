// The MindSpore PYBOOST entries: the loss and its gradients as pyboost operators, tied by a C++ autograd Function.
// Shipped as ms_bcewl/lib/mindspore_entries.cpp and compiled by MindSpore's CustomOpBuilder; the GRAPH entries
// (graph_entries.cpp) share its checks and phases through ms_bcewl/mindspore_entry.h.

#include "ms_bcewl/mindspore_entry.h"

// ms_bcewl/_pyboost.py compiles this file once per machine and MindSpore version. A call here skips what an
// ops.Custom call pays in PyNative (Python infer functions, the primitive's generic run path), most of a small call's
// time under launch_blocking() (docs/performance.md).

#include <initializer_list>
#include <optional>
#include <utility>

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
using Tensors = std::vector<ms::Tensor>;
using ms_bcewl::Operation;
using ms_bcewl::Variant;
using ms_bcewl::entry::Signature;
using ms_bcewl::entry::TensorHandle;
using ms_bcewl::entry::ThrowError;

// aclnn's dtype of a MindSpore TypeId; ACL_DT_UNDEFINED, which phase 1 refuses, for one not in the dtype list.
aclDataType AclDataType(TypeId type) {
  switch (type) {
#define MS_BCEWL_ACL_DTYPE_CASE(ms_name, type_id, acl_dtype, ...) \
  case TypeId::type_id:                                           \
    return acl_dtype;
    MS_BCEWL_FOR_EACH_DTYPE(MS_BCEWL_ACL_DTYPE_CASE, )
#undef MS_BCEWL_ACL_DTYPE_CASE
    default:
      return ACL_DT_UNDEFINED;
  }
}

// A view of a contiguous MindSpore tensor; an absent one (not defined) is a null handle.
TensorHandle MakeView(const ms::Tensor &tensor) {
  if (!tensor.is_defined()) return TensorHandle();
  const std::vector<int64_t> &dims = tensor.shape();
  return ms_bcewl::entry::MakeContiguousView(dims.data(), static_cast<int64_t>(dims.size()),
                                             AclDataType(tensor.data_type()), tensor.GetDataPtr());
}

// The views below assume row-major layouts; a strided view (a transpose, a slice) is copied first.
ms::Tensor Contiguous(const ms::Tensor &tensor) {
  return !tensor.is_defined() || tensor.is_contiguous() ? tensor : tensor.contiguous();
}

// The name MindSpore shows for an operation: its aclnn function's, without the prefix, as for its own aclnn ops.
std::string RunnerName(Operation operation) {
  constexpr const char *kPrefix = "aclnn";
  return ms_bcewl::InfoOf(operation).run_api + std::char_traits<char>::length(kPrefix);
}

// One aclnn operation as a pyboost operator: MindSpore allocates the outputs, LaunchKernel runs both phases on views
// of the inputs (in the order of the signature, absent ones undefined) and of the outputs.
class AclnnRunner : public ms::pynative::PyboostRunner {
 public:
  AclnnRunner(Signature signature, int64_t reduction, Tensors inputs)
      : PyboostRunner(RunnerName(signature.operation)),
        signature_(signature),
        reduction_(reduction),
        inputs_(std::move(inputs)) {}

  void LaunchKernel() override {
    ms_bcewl::entry::Views views;
    size_t next = 0;
    for (const Tensors *tensors : std::initializer_list<const Tensors *>{&inputs_, &outputs()}) {
      for (const ms::Tensor &tensor : *tensors) views[next++] = MakeView(tensor);
    }
    ms_bcewl::entry::Run(ms_bcewl::entry::ArgumentsOf(signature_, reduction_, views));
  }

 private:
  Signature signature_;
  int64_t reduction_;
  Tensors inputs_;
};

// Runs one operation on `inputs`, in the order of its signature, into `outputs` (tensors of the right dtypes and
// shapes, not yet allocated) and returns them.
Tensors Launch(Signature signature, int64_t reduction, Tensors inputs, Tensors outputs) {
  if (static_cast<int>(inputs.size()) != signature.input_count() ||
      static_cast<int>(outputs.size()) != signature.output_count()) {
    ThrowError("a pyboost call whose tensors are not those of its operation");
  }
  Tensors tracked;  // what MindSpore's runner tracks: the inputs given
  for (ms::Tensor &input : inputs) {
    input = Contiguous(input);
    if (input.is_defined()) tracked.push_back(input);
  }
  std::make_shared<AclnnRunner>(signature, reduction, std::move(inputs))->Run(tracked, outputs);
  return outputs;
}

ms::Tensor Like(const ms::Tensor &tensor) { return ms::Tensor(tensor.data_type(), tensor.shape()); }

// The loss of inputs that start with self and target: target's dtype; self's shape for 'none', else 0-d.
ms::Tensor LossLike(const Tensors &inputs, int64_t reduction) {
  const bool per_element = reduction == ms_bcewl::kReductionNone;
  return ms::Tensor(inputs[1].data_type(), per_element ? inputs[0].shape() : mindspore::ShapeVector{});
}

// A gradient for each of the inputs from `first` on, in their order.
Tensors GradientsLike(const Tensors &inputs, size_t first) {
  Tensors gradients;
  gradients.reserve(inputs.size() - first);
  for (size_t k = first; k < inputs.size(); ++k) gradients.push_back(Like(inputs[k]));
  return gradients;
}

// inputs: self, target, then weight and pos_weight where the variant has them.
ms::Tensor RunLoss(Variant variant, Tensors inputs, int64_t reduction) {
  Tensors outputs{LossLike(inputs, reduction)};
  return Launch({Operation::kForward, variant}, reduction, std::move(inputs), std::move(outputs))[0];
}

// inputs: grad_output, then those of RunLoss.
Tensors RunAllGradients(Variant variant, Tensors inputs, int64_t reduction) {
  Tensors outputs = GradientsLike(inputs, 1);
  return Launch({Operation::kGradAll, variant}, reduction, std::move(inputs), std::move(outputs));
}

// The loss, then the gradients of RunAllGradients for a gradOutput of 1.
Tensors RunLossAndAllGradients(Variant variant, Tensors inputs, int64_t reduction) {
  Tensors outputs;
  outputs.reserve(inputs.size() + 1);
  outputs.push_back(LossLike(inputs, reduction));
  for (ms::Tensor &gradient : GradientsLike(inputs, 0)) outputs.push_back(std::move(gradient));
  return Launch({Operation::kLossAndAllGradients, variant}, reduction, std::move(inputs), std::move(outputs));
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

Tensors AsMsTensors(const TensorPtrList &tensors) {
  Tensors converted;
  converted.reserve(tensors.size());
  for (const TensorPtr &tensor : tensors) converted.push_back(AsMsTensor(tensor));
  return converted;
}

// Whether autograd records the operations run in this backward, as it does when a higher-order gradient will
// differentiate them: MindSpore requires gradients of the ops it runs exactly then (the engine's high-order flag).
bool BackwardIsRecorded() { return mindspore::kernel::pyboost::OpRunStatus::Get().RequireGrad(); }

constexpr const char *kNotDifferentiableTwice =
    "a higher-order gradient goes through a loss computed on the pyboost path, whose backward cannot be "
    "differentiated; compute the loss inside the function whose gradient is differentiated again, or set "
    "MS_BCEWL_PYNATIVE_PATH=aot";

constexpr const char *kReduction = "reduction";
constexpr const char *kVariant = "variant";
constexpr const char *kGradientsOfOne = "gradients for a gradOutput of 1";

// A 0-d 1 of `type`, which the Function takes for an absent weight or pos_weight: Function::Apply dereferences every
// tensor argument. One per dtype for the process (never freed: MindSpore may still hold it at exit); autograd takes
// it for a constant and leaves it as it is, and no kernel reads it (KernelInputs drops it).
TensorPtr UnitOf(TypeId type) {
  switch (type) {
#define MS_BCEWL_UNIT_CASE(ms_name, type_id, ...)                                                  \
  case TypeId::type_id: {                                                                          \
    static const TensorPtr *const unit = new TensorPtr(ms::tensor(1.0, TypeId::type_id).tensor()); \
    return *unit;                                                                                  \
  }
    MS_BCEWL_FOR_EACH_DTYPE(MS_BCEWL_UNIT_CASE, )
#undef MS_BCEWL_UNIT_CASE
    default:
      return ms::tensor(1.0, TypeId::kNumberTypeFloat32).tensor();  // the library refuses self's dtype anyway
  }
}

// The tensors the kernels take for a call of `variant` on self, target, weight and pos_weight: the variant's own.
template <typename T>
std::vector<T> KernelInputs(Variant variant, const T &self, const T &target, const T &weight, const T &pos_weight) {
  std::vector<T> inputs{self, target};
  inputs.reserve(4);
  if (ms_bcewl::HasWeight(variant)) inputs.push_back(weight);
  if (ms_bcewl::HasPosWeight(variant)) inputs.push_back(pos_weight);
  return inputs;
}

// One gradient per argument of Forward: none for the reduction and the variant, then self's and target's, and
// weight's and pos_weight's where the caller passed them (`gradients` holds the variant's, in that order).
TensorPtrList GradientsPerArgument(Variant variant, TensorPtrList gradients) {
  TensorPtrList grads{nullptr, nullptr, gradients[0], gradients[1], nullptr, nullptr};
  size_t next = 2;
  if (ms_bcewl::HasWeight(variant)) grads[4] = gradients[next++];
  if (ms_bcewl::HasPosWeight(variant)) grads[5] = gradients[next++];
  return grads;
}

// The autograd Function of the loss. Every call passes four tensors, a unit for an absent weight or pos_weight, and
// the variant says which the caller passed: only those reach the kernels and get a gradient, whatever their value.
struct BceWithLogitsFunction : public Function<BceWithLogitsFunction> {
  // With a reduced loss whose self autograd tracks (a training step), the gradients for a gradOutput of 1 come
  // with the loss, from the same pass: a value_and_grad or grad of the loss (or of a sum of losses) asks for
  // exactly those, and Backward then hands them over without another pass. Blocking launches only, since Backward
  // reads the gradOutput's value on the host.
  static TensorPtr Forward(AutogradContext *ctx, int64_t reduction, Variant variant, const TensorPtr &self,
                           const TensorPtr &target, const TensorPtr &weight, const TensorPtr &pos_weight) {
    const TensorPtrList inputs = KernelInputs(variant, self, target, weight, pos_weight);
    ctx->SaveForBackward(inputs);
    ctx->saved_data[kReduction] = mindspore::MakeValue(reduction);
    ctx->saved_data[kVariant] = mindspore::MakeValue(static_cast<int64_t>(variant));
    if (reduction == ms_bcewl::kReductionNone || !ctx->NeedGrad(self) ||
        !mindspore::runtime::RuntimeConf::GetInstance()->launch_blocking()) {
      return RunLoss(variant, AsMsTensors(inputs), reduction).tensor();
    }
    const Tensors outputs = RunLossAndAllGradients(variant, AsMsTensors(inputs), reduction);
    mindspore::ValuePtrList gradients;
    for (size_t k = 1; k < outputs.size(); ++k) gradients.push_back(outputs[k].tensor());
    ctx->saved_data[kGradientsOfOne] = std::make_shared<mindspore::ValueTuple>(gradients);
    return outputs[0].tensor();
  }

  // Every passed input's gradient from one call: MindSpore 2.10's value_and_grad marks every input of the
  // differentiated function as needing one (AutogradContext::NeedsInputGrad is true for all of them, whatever
  // grad_position asks), and in the one-pass operation grad_target costs little beside grad_self and per-class
  // weight gradients join the pass. The gradients the forward computed for a gradOutput of 1 are handed over once
  // (a second backward, or another gradOutput, computes them).
  static TensorPtrList Backward(AutogradContext *ctx, TensorPtrList grad_outputs) {
    if (BackwardIsRecorded()) ThrowError(kNotDifferentiableTwice);
    const auto variant = static_cast<Variant>(mindspore::GetValue<int64_t>(ctx->saved_data[kVariant]));
    const auto of_one = ctx->saved_data.find(kGradientsOfOne);
    if (of_one != ctx->saved_data.end()) {
      const mindspore::ValuePtr gradients = of_one->second;
      ctx->saved_data.erase(of_one);
      if (IsExactlyOne(grad_outputs[0])) {
        TensorPtrList handed;
        for (const mindspore::ValuePtr &gradient : gradients->cast<mindspore::ValueTuplePtr>()->value()) {
          handed.push_back(gradient->cast<TensorPtr>());
        }
        return GradientsPerArgument(variant, std::move(handed));
      }
    }
    const int64_t reduction = mindspore::GetValue<int64_t>(ctx->saved_data[kReduction]);
    const TensorPtrList saved = ctx->GetSavedTensors();
    TensorPtrList inputs{grad_outputs[0]};
    inputs.insert(inputs.end(), saved.begin(), saved.end());
    TensorPtrList computed;
    for (const ms::Tensor &grad : RunAllGradients(variant, AsMsTensors(inputs), reduction)) {
      computed.push_back(grad.tensor());
    }
    return GradientsPerArgument(variant, std::move(computed));
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

ms::Tensor BceWithLogits(const ms::Tensor &self, const ms::Tensor &target, const std::optional<ms::Tensor> &weight,
                         const std::optional<ms::Tensor> &pos_weight, int64_t reduction) {
  const TensorPtr self_ptr = self.tensor(), target_ptr = target.tensor();
  const TensorPtr weight_ptr = TensorOrNull(weight), pos_weight_ptr = TensorOrNull(pos_weight);
  const Variant variant = ms_bcewl::VariantWith(weight_ptr != nullptr, pos_weight_ptr != nullptr);
  if (!AnyNeedsGrad({self_ptr, target_ptr, weight_ptr, pos_weight_ptr})) {
    // nothing to differentiate: the loss alone, without a Function's bookkeeping
    return RunLoss(
        variant, KernelInputs(variant, self, target, weight.value_or(ms::Tensor()), pos_weight.value_or(ms::Tensor())),
        reduction);
  }
  const TensorPtr unit = variant == Variant::kWp ? nullptr : UnitOf(self.data_type());
  return ms::Tensor(BceWithLogitsFunction::Apply(reduction, variant, self_ptr, target_ptr,
                                                 weight_ptr != nullptr ? weight_ptr : unit,
                                                 pos_weight_ptr != nullptr ? pos_weight_ptr : unit));
}

// Whether this call is recorded for a gradient that a higher-order gradient differentiates again (the forward of a
// function passed to a grad inside another grad): MindSpore's engine then records that backward's operations, which
// only the ops.Custom primitives' bprops support. Read on the Python thread, which sets the recording cell.
bool InHigherOrderGradient() {
  return mindspore::pynative::GradState::Get().RequiresGrad() &&
         mindspore::pynative::PyNativeExecutor::grad_executor()->is_high_order_top_cell();
}

// The loss, or None where the call takes part in a higher-order gradient: the caller then runs the primitives.
py::object PyBceWithLogits(const ms::Tensor &self, const ms::Tensor &target, const std::optional<ms::Tensor> &weight,
                           const std::optional<ms::Tensor> &pos_weight, int64_t reduction) {
  if (InHigherOrderGradient()) return py::none();
  return ms::pynative::PyboostRunner::Call<1>(BceWithLogits, self, target, weight, pos_weight, reduction);
}

}  // namespace

PYBIND11_MODULE(MS_EXTENSION_NAME, m) {
  m.def("binary_cross_entropy_with_logits", &PyBceWithLogits,
        "The loss, differentiable in PyNative mode; None inside a higher-order gradient (use the primitives)",
        pybind11::arg("input"), pybind11::arg("target"), pybind11::arg("weight"), pybind11::arg("pos_weight"),
        pybind11::arg("reduction"));
}
