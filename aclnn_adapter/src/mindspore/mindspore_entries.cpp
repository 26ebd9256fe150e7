// The MindSpore entries of the loss, both modes in one file as mindspore-ai/ms_custom_ops writes an op, so that they
// share one call's checks. The library's CMake defines MS_BCEWL_GRAPH_ENTRIES, CustomOpBuilder MS_EXTENSION_NAME (the
// pyboost module); with neither, the file is its shared section, which the native tests include (hence inline).

// ==== Shared: a call's tensors as aclTensor views, its OpArguments and the two phases of the aclnn API ====

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "acl/acl_base.h"
#include "aclnn/aclnn_base.h"
#include "ms_bcewl/operations.h"

namespace ms_bcewl::entry {

// A failure is an exception, whose message MindSpore raises in Python as the RuntimeError text (it would show a
// non-zero return code as a bare number); the aclnn layer beneath returns status codes instead.
[[noreturn]] inline void ThrowError(const std::string &what) { throw std::runtime_error("ms_bcewl: " + what); }

struct TensorDeleter {
  void operator()(aclTensor *tensor) const { aclDestroyTensor(tensor); }
};
using TensorHandle = std::unique_ptr<aclTensor, TensorDeleter>;

// aclnn's dtype of a MindSpore dtype name; ACL_DT_UNDEFINED, which phase 1 refuses, for one not in the dtype list.
inline aclDataType AclDataTypeNamed(const char *name) {
#define MS_BCEWL_DTYPE_NAMED(ms_name, type_id, acl_dtype, ...) \
  if (std::strcmp(name, #ms_name) == 0) return acl_dtype;
  if (name != nullptr) {
    MS_BCEWL_FOR_EACH_DTYPE(MS_BCEWL_DTYPE_NAMED, )
  }
#undef MS_BCEWL_DTYPE_NAMED
  return ACL_DT_UNDEFINED;
}

// A contiguous view of `data` with these dims (row-major strides); ThrowError with the library's message if refused.
inline TensorHandle MakeContiguousView(const int64_t *dims, int64_t rank, aclDataType dtype, void *data) {
  std::vector<int64_t> strides(static_cast<size_t>(rank), 1);
  for (int64_t d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
  aclTensor *view = aclCreateTensor(dims, static_cast<uint64_t>(rank), dtype, strides.data(), 0, ACL_FORMAT_ND, dims,
                                    static_cast<uint64_t>(rank), data);
  if (view == nullptr) ThrowError(aclGetRecentErrMsg());
  return TensorHandle(view);
}

inline void ThrowOnError(aclnnStatus status, const char *phase) {
  if (status != ACLNN_SUCCESS) {
    ThrowError(std::string(aclGetRecentErrMsg()) + " [" + phase + " returned aclnn status " + std::to_string(status) +
               "]");
  }
}

// The tensors of one MindSpore call of an operation on a variant, in MindSpore's order: [grad_output,] self, target,
// [weight,] [pos_weight], then the outputs in the order of OutputOrderOf.
struct Signature {
  Operation operation;
  Variant variant;

  constexpr int grad_output_index() const { return TakesGradOutput(operation) ? 0 : -1; }
  constexpr int self_index() const { return TakesGradOutput(operation) ? 1 : 0; }
  constexpr int weight_index() const { return HasWeight(variant) ? self_index() + 2 : -1; }
  constexpr int pos_weight_index() const {
    return HasPosWeight(variant) ? self_index() + 2 + (HasWeight(variant) ? 1 : 0) : -1;
  }
  constexpr int tensor_count() const { return TensorCount(operation, variant); }
  constexpr int output_count() const { return OutputOrderOf(operation, variant).count; }
  constexpr int input_count() const { return tensor_count() - output_count(); }
};

// Views of the tensors of one call, in its signature's order; an absent tensor is a null handle.
using Views = std::array<TensorHandle, kMaxTensors>;

// The arguments of one call from the views of its tensors.
inline OpArguments ArgumentsOf(const Signature &signature, int64_t reduction, const Views &views) {
  const auto view = [&views](int index) { return index < 0 ? nullptr : views[index].get(); };
  OpArguments arguments{signature.operation,
                        view(signature.grad_output_index()),
                        view(signature.self_index()),
                        view(signature.self_index() + 1),
                        view(signature.weight_index()),
                        view(signature.pos_weight_index()),
                        reduction,
                        {}};
  const OutputOrder order = OutputOrderOf(signature.operation, signature.variant);
  for (int k = 0; k < order.count; ++k) arguments.outputs.*order.slots[k] = view(signature.input_count() + k);
  return arguments;
}

// Plans and runs one call on the calling thread, with a workspace reused across its calls (no allocation per call
// once it has grown); the executor is released whatever happens.
inline void Run(const OpArguments &arguments) {
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = nullptr;
  ThrowOnError(msBcewlPlanOperation(&arguments, &workspace_size, &executor), "GetWorkspaceSize");
  thread_local std::vector<unsigned char> workspace;
  try {
    if (workspace.size() < workspace_size) workspace.resize(workspace_size);
  } catch (const std::bad_alloc &) {
    aclDestroyAclOpExecutor(executor);
    ThrowError("could not allocate a workspace of " + std::to_string(workspace_size) + " bytes");
  }
  void *memory = workspace_size == 0 ? nullptr : workspace.data();
  ThrowOnError(msBcewlRunOperation(arguments.operation, memory, workspace_size, executor, nullptr), "launch");
}

}  // namespace ms_bcewl::entry

#ifdef MS_BCEWL_GRAPH_ENTRIES
// ==== GRAPH: the entries of ops.Custom(func_type="aot") and their InferShape, one per row of aot_registry.h ====

// One exported symbol per (operation, reduction), each a function of its own: primitive attrs read through AotExtra
// would tie the library to one MindSpore build's C++ ABI (std::string by value, vtable layout), and a symbol costs
// nothing per call and keeps InferShape free of attrs. Every entry takes all four inputs: Python passes a 0-d 1
// for an absent weight or pos_weight, which the kernels read as a unit weight (no work per element).

#include <algorithm>

#include "api/argument_checks.h"
#include "mindspore/aot_failure.h"
#include "mindspore/aot_registry.h"
#include "ms_bcewl/reductions.h"

#define MS_BCEWL_AOT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using ms_bcewl::BrokenShapeRule;
using ms_bcewl::Operation;
using ms_bcewl::ShapeOperand;
using ms_bcewl::ShapeRule;
using ms_bcewl::Variant;
using ms_bcewl::aot::FailureOf;
using ms_bcewl::aot::RaiseFailure;
using ms_bcewl::entry::Signature;
using ms_bcewl::entry::ThrowError;

// ---- What an entry computes: ms_bcewl_<operation>_<reduction>, of a row of the registry ----

constexpr bool SameText(const char *a, const char *b) {
  for (; *a != '\0' && *a == *b; ++a, ++b) {
  }
  return *a == *b;
}

// Evaluated at compile time for every row of the registry, so a row that names no operation fails the build.
constexpr Operation OperationNamed(const char *name) {
  for (const ms_bcewl::OperationInfo &info : ms_bcewl::kOperationInfo) {
    if (SameText(info.name, name)) return static_cast<Operation>(&info - ms_bcewl::kOperationInfo);
  }
  throw "a row of the registry names an operation of MS_BCEWL_FOR_EACH_OPERATION";
}

// ---- One call ----

struct AotCall {
  int nparam;
  void **params;
  int *ndims;
  int64_t **shapes;
  const char **dtypes;
};

// MindSpore's argument table: one tensor per place of the signature, each with a rank and, unless 0-d, a shape.
void CheckCall(const Signature &signature, const AotCall &call) {
  if (call.nparam != signature.tensor_count()) {
    ThrowError("expected " + std::to_string(signature.tensor_count()) + " arguments (inputs and outputs), got " +
               std::to_string(call.nparam));
  }
  if (call.params == nullptr || call.ndims == nullptr || call.shapes == nullptr || call.dtypes == nullptr) {
    ThrowError("MindSpore passed a null argument table");
  }
  for (int index = 0; index < call.nparam; ++index) {
    const int rank = call.ndims[index];
    if (rank < 0) ThrowError("argument " + std::to_string(index) + " has rank " + std::to_string(rank));
    if (rank > 0 && call.shapes[index] == nullptr) ThrowError("argument " + std::to_string(index) + " has no shape");
  }
}

// A shape as Python prints a tuple: (), (5,), (4, 5).
std::string PythonTuple(const ShapeOperand &shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.rank; ++i) {
    text += (i > 0 ? ", " : "") + std::to_string(shape.dims[i]);
  }
  return text + (shape.rank == 1 ? ",)" : ")");
}

// The sentence of ms_bcewl/bce_with_logits.py for a broken rule; operands[0] is input.
std::string PythonSentence(const BrokenShapeRule &broken, const ShapeOperand *operands, const char *const *names) {
  const ShapeOperand &operand = operands[broken.operand];
  const std::string name = names[broken.operand];
  switch (broken.rule) {
    case ShapeRule::kRank:
      return "'" + name + "' has rank " + std::to_string(operand.rank) + " (shape " + PythonTuple(operand) +
             "); at most " + std::to_string(ms_bcewl::kMaxRank) + " dimensions are supported.";
    case ShapeRule::kSameShape:
      return "'input' and 'target' must have the same shape, but got input " + PythonTuple(operands[0]) +
             " and target " + PythonTuple(operand) + ".";
    case ShapeRule::kBroadcast:
      break;
  }
  return "'" + name + "' of shape " + PythonTuple(operand) + " must broadcast to the shape of 'input' " +
         PythonTuple(operands[0]) + " without enlarging it.";
}

// Shapes that a graph with dynamic shapes only knows when it runs break the rules here with the sentence Python
// gives at compile time: the library's rules over the inputs Python names, with no exemption for an empty input.
// A 0-d unit in place of an absent input breaks none.
void CheckShapesAsPython(const Signature &signature, const AotCall &call) {
  const char *const names[] = {"input", "target", "weight", "pos_weight"};
  ShapeOperand operands[std::size(names)];
  for (size_t k = 0; k < std::size(names); ++k) {
    const int index = signature.self_index() + static_cast<int>(k);
    operands[k] = {call.shapes[index], static_cast<size_t>(call.ndims[index]), k >= 2};
  }
  const auto broken = ms_bcewl::FirstBrokenShapeRule({operands, std::size(names), 0, 1, false});
  if (broken) {
    throw std::runtime_error("For 'binary_cross_entropy_with_logits', " + PythonSentence(*broken, operands, names));
  }
}

// The tensors of an entry's call: [grad_output,] the four inputs, then every output of the operation.
constexpr Signature SignatureOf(Operation operation) { return {operation, Variant::kWp}; }

bool SameShape(const AotCall &call, int a, int b) {
  return call.ndims[a] == call.ndims[b] && std::equal(call.shapes[a], call.shapes[a] + call.ndims[a], call.shapes[b]);
}

// grad_all's primitive asks for no weight gradient where the weight is absent by declaring that output with another
// shape than its input's (a real gradient always has its input's): both then go to the aclnn layer as absent, which
// is exact, since the input is then the unit Python passes.
void DropUnaskedWeightGradients(const Signature &signature, const AotCall &call, ms_bcewl::OpArguments *arguments) {
  const int first_weight_gradient = signature.input_count() + 2;  // after grad_self and grad_target
  if (!SameShape(call, signature.weight_index(), first_weight_gradient)) {
    arguments->weight = arguments->outputs.grad_weight = nullptr;
  }
  if (!SameShape(call, signature.pos_weight_index(), first_weight_gradient + 1)) {
    arguments->pos_weight = arguments->outputs.grad_pos_weight = nullptr;
  }
}

void Launch(Operation operation, int64_t reduction, const AotCall &call) {
  const Signature signature = SignatureOf(operation);
  CheckCall(signature, call);
  CheckShapesAsPython(signature, call);
  ms_bcewl::entry::Views views;
  for (int index = 0; index < call.nparam; ++index) {
    const aclDataType dtype = ms_bcewl::entry::AclDataTypeNamed(call.dtypes[index]);
    views[index] =
        ms_bcewl::entry::MakeContiguousView(call.shapes[index], call.ndims[index], dtype, call.params[index]);
  }
  ms_bcewl::OpArguments arguments = ms_bcewl::entry::ArgumentsOf(signature, reduction, views);
  if (operation == Operation::kGradAll) DropUnaskedWeightGradients(signature, call, &arguments);
  ms_bcewl::entry::Run(arguments);
}

// The shape of argument `index`, Python's `name`; a rank above kMaxRank is refused in Python's words.
std::vector<int64_t> ShapeOf(int *ndims, int64_t **shapes, int index, const char *name) {
  if (ndims == nullptr || shapes == nullptr || ndims[index] < 0 || (ndims[index] > 0 && shapes[index] == nullptr)) {
    ThrowError("infer shape received an invalid shape table");
  }
  const ShapeOperand operand{shapes[index], static_cast<size_t>(ndims[index]), false};
  if (operand.rank > ms_bcewl::kMaxRank) {
    throw std::runtime_error("For 'binary_cross_entropy_with_logits', " +
                             PythonSentence({ShapeRule::kRank, 0}, &operand, &name));
  }
  return std::vector<int64_t>(operand.dims, operand.dims + operand.rank);
}

// Output shapes: the loss keeps self's shape for 'none' and is 0-d otherwise; each gradient has its argument's.
std::vector<int64_t> InferShape(Operation operation, int64_t reduction, int *ndims, int64_t **shapes) {
  const Signature signature = SignatureOf(operation);
  switch (operation) {
    case Operation::kForward:
      return reduction == ms_bcewl::kReductionNone ? ShapeOf(ndims, shapes, signature.self_index(), "input")
                                                   : std::vector<int64_t>{};
    case Operation::kGradSelf:
      return ShapeOf(ndims, shapes, signature.self_index(), "input");
    case Operation::kGradTarget:
      return ShapeOf(ndims, shapes, signature.self_index() + 1, "target");
    case Operation::kGradWeight:
      return ShapeOf(ndims, shapes, signature.weight_index(), "weight");
    case Operation::kGradPosWeight:
      return ShapeOf(ndims, shapes, signature.pos_weight_index(), "pos_weight");
    case Operation::kGradAll:
    case Operation::kLossAndAllGradients:
      break;
  }
  ThrowError("no InferShape for this operation");
}

}  // namespace

// ---- The entries: one per row of the registry and reduction ----

// A failure reaches MindSpore as aot_failure.h says; the entries keep no object to destroy when it is raised.
#define MS_BCEWL_AOT_ENTRY(reduction, constant, code, operation)                                                      \
  MS_BCEWL_AOT_EXPORT int ms_bcewl_##operation##_##reduction(int nparam, void **params, int *ndims, int64_t **shapes, \
                                                             const char **dtypes, void *, void *) {                   \
    static constexpr Operation kOperation = OperationNamed(#operation);                                               \
    const AotCall call{nparam, params, ndims, shapes, dtypes};                                                        \
    return RaiseFailure(FailureOf([&] { Launch(kOperation, ms_bcewl::constant, call); }));                            \
  }

// Where the failure cannot be raised (no libstdc++ in the process, so no MindSpore), the shape is empty.
#define MS_BCEWL_AOT_INFER_SHAPE(reduction, constant, code, operation)                                                \
  MS_BCEWL_AOT_EXPORT std::vector<int64_t> ms_bcewl_##operation##_##reduction##InferShape(int *ndims,                 \
                                                                                          int64_t **shapes, void *) { \
    static constexpr Operation kOperation = OperationNamed(#operation);                                               \
    std::vector<int64_t> shape;                                                                                       \
    RaiseFailure(FailureOf([&] { shape = InferShape(kOperation, ms_bcewl::constant, ndims, shapes); }));              \
    return shape;                                                                                                     \
  }

#define MS_BCEWL_AOT_ENTRIES(operation) MS_BCEWL_FOR_EACH_REDUCTION(MS_BCEWL_AOT_ENTRY, operation)
#define MS_BCEWL_AOT_ENTRIES_WITH_INFER_SHAPE(operation) \
  MS_BCEWL_AOT_ENTRIES(operation) MS_BCEWL_FOR_EACH_REDUCTION(MS_BCEWL_AOT_INFER_SHAPE, operation)
MS_BCEWL_AOT_OPERATIONS(MS_BCEWL_AOT_ENTRIES, MS_BCEWL_AOT_ENTRIES_WITH_INFER_SHAPE)

// A line of the table per entry: symbol, operation, reduction, its aclnn code, and where the output shapes come from.
#define MS_BCEWL_AOT_LINE(reduction, constant, code, operation, shapes) \
  "ms_bcewl_" #operation "_" #reduction " " #operation " " #reduction " " #code " " shapes "\n"
#define MS_BCEWL_AOT_LINES(operation) MS_BCEWL_FOR_EACH_REDUCTION(MS_BCEWL_AOT_LINE, operation, "python")
#define MS_BCEWL_AOT_LINES_WITH_INFER_SHAPE(operation) \
  MS_BCEWL_FOR_EACH_REDUCTION(MS_BCEWL_AOT_LINE, operation, "library")

// Every entry as a line of text, for ms_bcewl/_library.py, from which Python builds its primitives.
MS_BCEWL_AOT_EXPORT const char *ms_bcewl_aot_registry() {
  return MS_BCEWL_AOT_OPERATIONS(MS_BCEWL_AOT_LINES, MS_BCEWL_AOT_LINES_WITH_INFER_SHAPE);
}
#endif  // MS_BCEWL_GRAPH_ENTRIES

#ifdef MS_EXTENSION_NAME
// ==== PYBOOST: the loss and its gradients as pyboost operators, tied by a C++ autograd Function ====

// ms_bcewl/_pyboost.py compiles this section once per machine and MindSpore version. A call here skips what an
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
constexpr const char *kGradientsOfOne = "gradients for a gradOutput of 1";

// The autograd Function of one variant, whose optional tensors follow target in Forward's arguments.
template <Variant kVariant>
struct BceWithLogitsFunction : public Function<BceWithLogitsFunction<kVariant>> {
  // With a reduced loss whose self autograd tracks (a training step), the gradients for a gradOutput of 1 come
  // with the loss, from the same pass: a value_and_grad or grad of the loss (or of a sum of losses) asks for
  // exactly those, and Backward then hands them over without another pass. Blocking launches only, since Backward
  // reads the gradOutput's value on the host.
  template <typename... Weights>
  static TensorPtr Forward(AutogradContext *ctx, int64_t reduction, const TensorPtr &self, const TensorPtr &target,
                           const Weights &...weights) {
    const TensorPtrList inputs{self, target, weights...};
    ctx->SaveForBackward(inputs);
    ctx->saved_data[kReduction] = mindspore::MakeValue(reduction);
    if (reduction == ms_bcewl::kReductionNone || !ctx->NeedGrad(self) ||
        !mindspore::runtime::RuntimeConf::GetInstance()->launch_blocking()) {
      return RunLoss(kVariant, AsMsTensors(inputs), reduction).tensor();
    }
    const Tensors outputs = RunLossAndAllGradients(kVariant, AsMsTensors(inputs), reduction);
    mindspore::ValuePtrList gradients;
    for (size_t k = 1; k < outputs.size(); ++k) gradients.push_back(outputs[k].tensor());
    ctx->saved_data[kGradientsOfOne] = std::make_shared<mindspore::ValueTuple>(gradients);
    return outputs[0].tensor();
  }

  // Every input's gradient from one call: MindSpore 2.10's value_and_grad marks every input of the differentiated
  // function as needing one (AutogradContext::NeedsInputGrad is true for all of them, whatever grad_position
  // asks), and in the one-pass operation grad_target costs little beside grad_self and per-class weight gradients
  // join the pass. The gradients the forward computed for a gradOutput of 1 are handed over once (a second
  // backward, or another gradOutput, computes them).
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
    const TensorPtrList saved = ctx->GetSavedTensors();
    TensorPtrList inputs{grad_outputs[0]};
    inputs.insert(inputs.end(), saved.begin(), saved.end());
    for (const ms::Tensor &grad : RunAllGradients(kVariant, AsMsTensors(inputs), reduction)) {
      grads.push_back(grad.tensor());
    }
    return grads;
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
    Tensors inputs{self, target};
    inputs.reserve(4);
    if (weight_ptr != nullptr) inputs.push_back(*weight);
    if (pos_weight_ptr != nullptr) inputs.push_back(*pos_weight);
    return RunLoss(variant, inputs, reduction);
  }
  switch (variant) {
    case Variant::kWp:
      return ms::Tensor(
          BceWithLogitsFunction<Variant::kWp>::Apply(reduction, self_ptr, target_ptr, weight_ptr, pos_weight_ptr));
    case Variant::kW:
      return ms::Tensor(BceWithLogitsFunction<Variant::kW>::Apply(reduction, self_ptr, target_ptr, weight_ptr));
    case Variant::kP:
      return ms::Tensor(BceWithLogitsFunction<Variant::kP>::Apply(reduction, self_ptr, target_ptr, pos_weight_ptr));
    case Variant::kPlain:
      break;
  }
  return ms::Tensor(BceWithLogitsFunction<Variant::kPlain>::Apply(reduction, self_ptr, target_ptr));
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
#endif  // MS_EXTENSION_NAME
