// The MindSpore GRAPH entries: ops.Custom(func_type="aot") symbols and their InferShape, one per row of
// aot_registry.h and reduction, compiled into the library; they share a call's checks and phases with the pyboost
// operators of mindspore_entries.cpp through ms_bcewl/mindspore_entry.h.

#include "ms_bcewl/mindspore_entry.h"

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
