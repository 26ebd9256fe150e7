// MindSpore AOT entry points (ops.Custom(func_type="aot")) for the host backend.
//
// Each entry lists MindSpore's raw arguments as the tensors of its signature, makes aclTensor views of them and runs
// the two-phase aclnn API through entry::Run (include/ms_bcewl/entry_support.h), as the pyboost operators do, so both
// paths and a C++ caller of aclnn exercise the same checks and kernels.
//
// How variants reach the kernel: one exported symbol per (operation, variant, reduction), each a row of the registry
// (aot_registry.h), which the library also exports as a table for Python (ms_bcewl_aot_registry). The alternative,
// primitive attrs read through AotExtra, would tie this library to the C++ ABI (std::string by value, vtable layout)
// of one MindSpore build; a name costs nothing at run time, keeps InferShape free of attrs, and lets one Python
// primitive per variant be built once and cached. Absent optional inputs are simply not passed.
//
// Failures are thrown as std::runtime_error: MindSpore reports a non-zero return code as a bare number, while an
// exception's message reaches the Python caller as the RuntimeError text.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "aot/aot_registry.h"
#include "api/argument_checks.h"
#include "ms_bcewl/entry_support.h"
#include "ms_bcewl/operations.h"
#include "ms_bcewl/reductions.h"

#define MS_BCEWL_AOT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using ms_bcewl::BrokenShapeRule;
using ms_bcewl::Operation;
using ms_bcewl::ShapeOperand;
using ms_bcewl::ShapeRule;
using ms_bcewl::Variant;
using ms_bcewl::entry::Signature;
using ms_bcewl::entry::ThrowError;

// ---- What an entry computes, read from its name: ms_bcewl_<operation>_<variant>_<reduction> ----

// The words of an entry name, as the lists of operations, variants and reductions spell them.
#define MS_BCEWL_NAME_OF(name, ...) #name,
constexpr const char *kOperationNames[] = {MS_BCEWL_FOR_EACH_OPERATION(MS_BCEWL_NAME_OF, )};
constexpr const char *kVariantNames[] = {MS_BCEWL_FOR_EACH_VARIANT(MS_BCEWL_NAME_OF, )};
constexpr const char *kReductionNames[] = {MS_BCEWL_FOR_EACH_REDUCTION(MS_BCEWL_NAME_OF, )};
#undef MS_BCEWL_NAME_OF
#define MS_BCEWL_REDUCTION_CODE(name, constant, code, ...) ms_bcewl::constant,
constexpr int64_t kReductionCodes[] = {MS_BCEWL_FOR_EACH_REDUCTION(MS_BCEWL_REDUCTION_CODE, )};
#undef MS_BCEWL_REDUCTION_CODE

struct EntryName {
  Signature signature;
  const char *reduction_name;
  int64_t reduction;
};

constexpr size_t Length(const char *text) {
  size_t length = 0;
  while (text[length] != '\0') ++length;
  return length;
}

constexpr bool StartsWith(const char *text, const char *prefix) {
  for (; *prefix != '\0'; ++text, ++prefix) {
    if (*text != *prefix) return false;
  }
  return true;
}

// The index of the name that `text` starts with, followed by `end`; text moves past `end`.
template <size_t kCount>
constexpr int ReadWord(const char *&text, const char *const (&names)[kCount], char end) {
  for (size_t k = 0; k < kCount; ++k) {
    const size_t length = Length(names[k]);
    if (StartsWith(text, names[k]) && text[length] == end) {
      text += length + 1;
      return static_cast<int>(k);
    }
  }
  throw "not an entry name: ms_bcewl_<operation>_<variant>_<reduction>, each as its list spells it";
}

// Evaluated at compile time for every row of the registry, so a misspelt row fails the build.
constexpr EntryName ParseEntryName(const char *symbol) {
  constexpr const char *kPrefix = "ms_bcewl_";
  if (!StartsWith(symbol, kPrefix)) throw "an entry name starts with ms_bcewl_";
  const char *rest = symbol + Length(kPrefix);
  const int operation = ReadWord(rest, kOperationNames, '_');
  const int variant = ReadWord(rest, kVariantNames, '_');
  const int reduction = ReadWord(rest, kReductionNames, '\0');
  return {{static_cast<Operation>(operation), static_cast<Variant>(variant)},
          kReductionNames[reduction],
          kReductionCodes[reduction]};
}

// MindSpore finds an entry's InferShape by this name.
constexpr bool IsInferShapeOf(const char *infer_shape, const char *symbol) {
  const char *suffix = infer_shape + Length(symbol);
  return StartsWith(infer_shape, symbol) && StartsWith(suffix, "InferShape") && Length(suffix) == Length("InferShape");
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

// The sentence of ms_bcewl/_checks.py for a broken rule; operands[0] is input.
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
void CheckShapesAsPython(const Signature &signature, const AotCall &call) {
  const int indices[] = {signature.self_index(), signature.self_index() + 1, signature.weight_index(),
                         signature.pos_weight_index()};
  const char *const python_names[] = {"input", "target", "weight", "pos_weight"};
  ShapeOperand operands[std::size(indices)];
  const char *names[std::size(indices)];
  size_t count = 0;
  for (size_t k = 0; k < std::size(indices); ++k) {
    if (indices[k] >= 0) {
      operands[count] = {call.shapes[indices[k]], static_cast<size_t>(call.ndims[indices[k]]), k >= 2};
      names[count++] = python_names[k];
    }
  }
  const auto broken = ms_bcewl::FirstBrokenShapeRule({operands, count, 0, 1, false});
  if (broken) {
    throw std::runtime_error("For 'binary_cross_entropy_with_logits', " + PythonSentence(*broken, operands, names));
  }
}

void Launch(const Signature &signature, int64_t reduction, const AotCall &call) {
  CheckCall(signature, call);
  CheckShapesAsPython(signature, call);
  ms_bcewl::entry::Views views;
  for (int index = 0; index < call.nparam; ++index) {
    const aclDataType dtype = ms_bcewl::entry::AclDataTypeNamed(call.dtypes[index]);
    views[index] =
        ms_bcewl::entry::MakeContiguousView(call.shapes[index], call.ndims[index], dtype, call.params[index]);
  }
  ms_bcewl::entry::Run(ms_bcewl::entry::ArgumentsOf(signature, reduction, views));
}

std::vector<int64_t> ShapeOf(int *ndims, int64_t **shapes, int index) {
  if (ndims == nullptr || shapes == nullptr || ndims[index] < 0 ||
      ndims[index] > static_cast<int>(ms_bcewl::kMaxRank)) {
    ThrowError("infer shape received an invalid shape table");
  }
  return std::vector<int64_t>(shapes[index], shapes[index] + ndims[index]);
}

// Output shapes: the loss keeps self's shape for 'none' and is 0-d otherwise; each gradient has its argument's.
std::vector<int64_t> InferShape(const Signature &signature, int64_t reduction, int *ndims, int64_t **shapes) {
  switch (signature.operation) {
    case Operation::kForward:
      return reduction == ms_bcewl::kReductionNone ? ShapeOf(ndims, shapes, signature.self_index())
                                                   : std::vector<int64_t>{};
    case Operation::kGradSelf:
      return ShapeOf(ndims, shapes, signature.self_index());
    case Operation::kGradTarget:
      return ShapeOf(ndims, shapes, signature.self_index() + 1);
    case Operation::kGradWeight:
      return ShapeOf(ndims, shapes, signature.weight_index());
    case Operation::kGradPosWeight:
      return ShapeOf(ndims, shapes, signature.pos_weight_index());
    case Operation::kGradAll:
    case Operation::kLossAndAllGradients:
      break;
  }
  ThrowError("no InferShape for this operation");
}

// A line of the table Python reads (ms_bcewl/_library.py): symbol, operation, has_weight, has_pos_weight,
// reduction, its aclnn code, and where the output shapes come from.
std::string TableLine(const char *symbol, bool library_infers_shapes) {
  const EntryName entry = ParseEntryName(symbol);
  const auto text = [](bool value) { return value ? " true" : " false"; };
  return std::string(symbol) + " " + ms_bcewl::OperationName(entry.signature.operation) +
         text(ms_bcewl::HasWeight(entry.signature.variant)) + text(ms_bcewl::HasPosWeight(entry.signature.variant)) +
         " " + entry.reduction_name + " " + std::to_string(entry.reduction) +
         (library_infers_shapes ? " library\n" : " python\n");
}

}  // namespace

// ---- The entries, one per row of the registry ----

#define MS_BCEWL_AOT_DEFINE_ENTRY(symbol)                                                                              \
  MS_BCEWL_AOT_EXPORT int symbol(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes, void *, \
                                 void *) {                                                                             \
    static constexpr EntryName kEntry = ParseEntryName(#symbol);                                                       \
    Launch(kEntry.signature, kEntry.reduction, AotCall{nparam, params, ndims, shapes, dtypes});                        \
    return 0;                                                                                                          \
  }

#define MS_BCEWL_AOT_DEFINE_ENTRY_WITH_INFER_SHAPE(symbol, infer_shape)                                \
  MS_BCEWL_AOT_DEFINE_ENTRY(symbol)                                                                    \
  static_assert(IsInferShapeOf(#infer_shape, #symbol), #infer_shape " must be " #symbol "InferShape"); \
  MS_BCEWL_AOT_EXPORT std::vector<int64_t> infer_shape(int *ndims, int64_t **shapes, void *) {         \
    static constexpr EntryName kEntry = ParseEntryName(#symbol);                                       \
    return InferShape(kEntry.signature, kEntry.reduction, ndims, shapes);                              \
  }

MS_BCEWL_AOT_ENTRIES(MS_BCEWL_AOT_DEFINE_ENTRY, MS_BCEWL_AOT_DEFINE_ENTRY_WITH_INFER_SHAPE)

#define MS_BCEWL_AOT_TABLE_LINE(symbol) +TableLine(#symbol, false)
#define MS_BCEWL_AOT_TABLE_LINE_WITH_INFER_SHAPE(symbol, infer_shape) +TableLine(#symbol, true)

// Every entry as a line of text, for ms_bcewl/_primitives.py, which builds its primitives from it.
MS_BCEWL_AOT_EXPORT const char *ms_bcewl_aot_registry() {
  static const std::string table =
      std::string() MS_BCEWL_AOT_ENTRIES(MS_BCEWL_AOT_TABLE_LINE, MS_BCEWL_AOT_TABLE_LINE_WITH_INFER_SHAPE);
  return table.c_str();
}
