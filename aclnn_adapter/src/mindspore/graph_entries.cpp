// The MindSpore GRAPH entries: ops.Custom(func_type="aot") symbols and their InferShape, one per row of
// aot_registry.h and reduction, compiled into the library; they share a call's checks and phases with the pyboost
// operators of mindspore_entries.cpp through ms_bcewl/mindspore_entry.h.

#include "ms_bcewl/mindspore_entry.h"

// One exported symbol per (row of the registry, reduction), each a function of its own: primitive attrs read through
// AotExtra would tie the library to one MindSpore build's C++ ABI (std::string by value, vtable layout), and a symbol
// costs nothing per call and keeps InferShape free of attrs. An entry takes input and target, then the weights its
// caller passed (aot_registry.h); a 0-d 1 in place of an absent one is read as a unit weight (no work per element).

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <utility>

#include "api/argument_checks.h"
#include "mindspore/aot_registry.h"
#include "ms_bcewl/reductions.h"
#include "runtime/host_runtime.h"

#define MS_BCEWL_AOT_EXPORT extern "C" __attribute__((visibility("default")))

// ---- How an entry reports a failure ----

// How an AOT entry (a kernel or its InferShape) reports a failure to MindSpore, in source and wheel builds alike.
// MindSpore catches a std::exception from either and raises its what() in Python as the RuntimeError text; it shows a
// kernel's non-zero return as a bare number, and an InferShape returns no status at all. So the message travels as a
// std::runtime_error of the C++ runtime MindSpore itself uses, libstdc++: a wheel's library carries its own C++
// runtime (libc++), whose exceptions libstdc++ code cannot catch, and the process would abort.

namespace ms_bcewl::aot {

// What an entry returns where it could not raise its failure: aclGetRecentErrMsg() holds the message.
inline constexpr int kEntryFailed = 1;

// Runs body and returns nullptr, or the message of what it threw (this thread's aclGetRecentErrMsg()). Never inlined:
// the frame that catches is compiled against the library's own C++ runtime, and the host's exception, raised after
// it returned, must find no such frame to unwind.
template <typename Body>
[[gnu::noinline]] const char *FailureOf(const Body &body) noexcept {
  try {
    body();
    return nullptr;
  } catch (const std::exception &error) {
    return KeepMessage(error.what());
  } catch (...) {
    return KeepMessage("ms_bcewl: an entry failed with an exception that is no std::exception");
  }
}

// 0 for no failure; else throws the message as a std::runtime_error through the libstdc++ the process has loaded
// (MindSpore's), or returns kEntryFailed where none is loaded. noexcept to the compiler, so that a caller keeps no
// cleanup for the exception to run: a frame with a personality routine must not lie on its way, since the wheels'
// one (libc++abi's) cannot read the unwind context of libstdc++'s unwinder (libgcc's).
int RaiseFailure(const char *failure) noexcept;

}  // namespace ms_bcewl::aot

namespace ms_bcewl::aot {
namespace {

// What `throw std::runtime_error(message)` compiles to against libstdc++, under the Itanium C++ ABI's names. Typed
// noexcept, although the throw is not: see RaiseFailure.
struct HostRuntime {
  void *(*allocate_exception)(size_t) noexcept;              // __cxa_allocate_exception
  void (*construct)(void *, const char *) noexcept;          // std::runtime_error::runtime_error(const char *)
  void (*destroy)(void *);                                   // std::runtime_error::~runtime_error()
  void *type_info;                                           // typeid(std::runtime_error)
  void (*raise)(void *, void *, void (*)(void *)) noexcept;  // __cxa_throw
};

// libstdc++'s std::runtime_error holds a vtable pointer and a string pointer; its exception is allocated generously.
constexpr size_t kRuntimeErrorBytes = 8 * sizeof(void *);

template <typename Pointer>
Pointer Symbol(void *library, const char *name) noexcept {
  return reinterpret_cast<Pointer>(dlsym(library, name));
}

// libstdc++'s parts, where the process has loaded it (RTLD_NOLOAD: never a copy of the library's own).
bool FindHostRuntime(HostRuntime *host) noexcept {
  void *library = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (library == nullptr) return false;
  *host = {Symbol<decltype(host->allocate_exception)>(library, "__cxa_allocate_exception"),
           Symbol<decltype(host->construct)>(library, "_ZNSt13runtime_errorC1EPKc"),
           Symbol<decltype(host->destroy)>(library, "_ZNSt13runtime_errorD1Ev"),
           Symbol<void *>(library, "_ZTISt13runtime_error"), Symbol<decltype(host->raise)>(library, "__cxa_throw")};
  dlclose(library);  // the reference of whoever loaded it keeps it loaded
  return host->allocate_exception != nullptr && host->construct != nullptr && host->destroy != nullptr &&
         host->type_info != nullptr && host->raise != nullptr;
}

// Never returns, and so declared (and not inlined): a sanitizer then forgets the frames the exception unwinds, as
// its own __cxa_throw would have it do.
[[noreturn]] [[gnu::noinline]] void Throw(const HostRuntime &host, const char *message) noexcept {
  void *error = host.allocate_exception(kRuntimeErrorBytes);
  host.construct(error, message);
  host.raise(error, host.type_info, host.destroy);
  __builtin_unreachable();
}

}  // namespace

int RaiseFailure(const char *failure) noexcept {
  HostRuntime host;
  if (failure == nullptr) return 0;
  if (!FindHostRuntime(&host)) return kEntryFailed;
  Throw(host, failure);
}

}  // namespace ms_bcewl::aot

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

// ---- What an entry computes: ms_bcewl_<entry>_<reduction>, of a row of the registry ----

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

// The variant of a row's calls with one weight, by the row's third input; kWp for none (they pass both).
constexpr Variant VariantWithThirdInput(const char *third_input) {
  if (SameText(third_input, "weight")) return Variant::kW;
  if (SameText(third_input, "pos_weight")) return Variant::kP;
  if (SameText(third_input, "none")) return Variant::kWp;
  throw "a row of the registry names weight, pos_weight or none as its third input";
}

// InferShape, which is not told the count of tensors, finds its arguments where the four-input call has them: a row
// that takes one weight alone must be one whose InferShape reads input or target alone, which come first in all.
constexpr bool InfersFromInputOrTarget(Operation operation, Variant one_weight) {
  return one_weight == Variant::kWp || operation == Operation::kForward || operation == Operation::kGradSelf ||
         operation == Operation::kGradTarget;
}

// ---- One call ----

struct AotCall {
  int nparam;
  void **params;
  int *ndims;
  int64_t **shapes;
  const char **dtypes;
};

// The signatures a row's entry takes, told apart by their count of tensors: no weight, the row's one weight (unless
// its third input is none) and both.
struct RowSignatures {
  Signature plain, one_weight, full;

  constexpr RowSignatures(Operation operation, Variant one_weight_variant)
      : plain{operation, Variant::kPlain}, one_weight{operation, one_weight_variant}, full{operation, Variant::kWp} {}

  // The signature with `nparam` tensors, or ThrowError naming the counts the entry takes.
  Signature Of(int nparam) const {
    for (const Signature &signature : {plain, one_weight, full}) {
      if (signature.tensor_count() == nparam) return signature;
    }
    const std::string one =
        one_weight.variant == Variant::kWp ? " " : ", " + std::to_string(one_weight.tensor_count()) + " ";
    ThrowError("expected " + std::to_string(plain.tensor_count()) + one + "or " + std::to_string(full.tensor_count()) +
               " arguments (inputs and outputs), got " + std::to_string(nparam));
  }
};

// MindSpore's argument table: one tensor per place of the signature, each with a rank and, unless 0-d, a shape.
void CheckCall(const AotCall &call) {
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
// gives at compile time: the library's rules over the inputs Python names and grad_output, with no exemption for an
// empty input. A 0-d unit in place of an absent input breaks none. Phase 1 then skips the rules (PlanShapesChecked).
void CheckShapesAsPython(const Signature &signature, const AotCall &call) {
  // The tensors the rules read, where the signature places them (-1: not in this call), as Python names them.
  const std::pair<int, const char *> placed[] = {{signature.self_index(), "input"},
                                                 {signature.self_index() + 1, "target"},
                                                 {signature.weight_index(), "weight"},
                                                 {signature.pos_weight_index(), "pos_weight"},
                                                 {signature.grad_output_index(), "grad_output"}};
  const char *names[std::size(placed)];
  ShapeOperand operands[std::size(placed)];
  size_t count = 0;
  for (const auto &[index, name] : placed) {
    if (index < 0) continue;
    const bool broadcasts = count >= 2;  // input and target match exactly; the rest broadcast to input
    operands[count] = {call.shapes[index], static_cast<size_t>(call.ndims[index]), broadcasts};
    names[count++] = name;
  }
  const auto broken = ms_bcewl::FirstBrokenShapeRule({operands, count, 0, 1, false});
  if (broken) {
    throw std::runtime_error("For 'binary_cross_entropy_with_logits', " + PythonSentence(*broken, operands, names));
  }
}

bool SameShape(const AotCall &call, int a, int b) {
  return call.ndims[a] == call.ndims[b] && std::equal(call.shapes[a], call.shapes[a] + call.ndims[a], call.shapes[b]);
}

// grad_all's primitive asks for no weight gradient where the weight is absent by declaring that output with another
// shape than its input's (a real gradient always has its input's): both then go to the aclnn layer as absent, which
// is exact, since the input is then the unit Python passes.
void DropUnaskedWeightGradients(const Signature &signature, const AotCall &call, ms_bcewl::OpArguments *arguments) {
  if (signature.variant == Variant::kPlain) return;               // no weight, no weight gradient
  const int first_weight_gradient = signature.input_count() + 2;  // after grad_self and grad_target
  if (!SameShape(call, signature.weight_index(), first_weight_gradient)) {
    arguments->weight = arguments->outputs.grad_weight = nullptr;
  }
  if (!SameShape(call, signature.pos_weight_index(), first_weight_gradient + 1)) {
    arguments->pos_weight = arguments->outputs.grad_pos_weight = nullptr;
  }
}

// Phase 1 once CheckShapesAsPython has checked the shape rules.
aclnnStatus PlanShapesChecked(const ms_bcewl::OpArguments *arguments, uint64_t *workspace_size,
                              aclOpExecutor **executor) {
  return ms_bcewl::PlanOperation(*arguments, workspace_size, executor, ms_bcewl::ShapeRules::kCheckedByCaller);
}

void Launch(const RowSignatures &row, int64_t reduction, const AotCall &call) {
  const Signature signature = row.Of(call.nparam);
  CheckCall(call);
  CheckShapesAsPython(signature, call);
  ms_bcewl::entry::Views views;
  for (int index = 0; index < call.nparam; ++index) {
    const aclDataType dtype = ms_bcewl::entry::AclDataTypeNamed(call.dtypes[index]);
    views[index] =
        ms_bcewl::entry::MakeContiguousView(call.shapes[index], call.ndims[index], dtype, call.params[index]);
  }
  ms_bcewl::OpArguments arguments = ms_bcewl::entry::ArgumentsOf(signature, reduction, views);
  if (signature.operation == Operation::kGradAll) DropUnaskedWeightGradients(signature, call, &arguments);
  ms_bcewl::entry::Run(arguments, PlanShapesChecked);
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
  const Signature signature{operation, Variant::kWp};  // InfersFromInputOrTarget
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

// A failure reaches MindSpore as RaiseFailure says; the entries keep no object to destroy when it is raised.
#define MS_BCEWL_AOT_ENTRY(reduction, constant, code, entry, operation, third_input)                              \
  MS_BCEWL_AOT_EXPORT int ms_bcewl_##entry##_##reduction(int nparam, void **params, int *ndims, int64_t **shapes, \
                                                         const char **dtypes, void *, void *) {                   \
    static constexpr RowSignatures kRow(OperationNamed(#operation), VariantWithThirdInput(#third_input));         \
    const AotCall call{nparam, params, ndims, shapes, dtypes};                                                    \
    return RaiseFailure(FailureOf([&] { Launch(kRow, ms_bcewl::constant, call); }));                              \
  }

// Where the failure cannot be raised (no libstdc++ in the process, so no MindSpore), the shape is empty.
#define MS_BCEWL_AOT_INFER_SHAPE(reduction, constant, code, entry, operation, third_input)                          \
  MS_BCEWL_AOT_EXPORT std::vector<int64_t> ms_bcewl_##entry##_##reduction##InferShape(int *ndims, int64_t **shapes, \
                                                                                      void *) {                     \
    static constexpr Operation kOperation = OperationNamed(#operation);                                             \
    static_assert(InfersFromInputOrTarget(kOperation, VariantWithThirdInput(#third_input)));                        \
    std::vector<int64_t> shape;                                                                                     \
    RaiseFailure(FailureOf([&] { shape = InferShape(kOperation, ms_bcewl::constant, ndims, shapes); }));            \
    return shape;                                                                                                   \
  }

#define MS_BCEWL_AOT_ENTRIES(...) MS_BCEWL_FOR_EACH_REDUCTION(MS_BCEWL_AOT_ENTRY, __VA_ARGS__)
#define MS_BCEWL_AOT_ENTRIES_WITH_INFER_SHAPE(...) \
  MS_BCEWL_AOT_ENTRIES(__VA_ARGS__) MS_BCEWL_FOR_EACH_REDUCTION(MS_BCEWL_AOT_INFER_SHAPE, __VA_ARGS__)
MS_BCEWL_AOT_OPERATIONS(MS_BCEWL_AOT_ENTRIES, MS_BCEWL_AOT_ENTRIES_WITH_INFER_SHAPE)

// A line of the table per entry: symbol, operation, reduction, its aclnn code, where the output shapes come from, and
// the third input of a call with one weight.
#define MS_BCEWL_AOT_LINE(reduction, constant, code, shapes, entry, operation, third_input) \
  "ms_bcewl_" #entry "_" #reduction " " #operation " " #reduction " " #code " " shapes " " #third_input "\n"
#define MS_BCEWL_AOT_LINES(...) MS_BCEWL_FOR_EACH_REDUCTION(MS_BCEWL_AOT_LINE, "python", __VA_ARGS__)
#define MS_BCEWL_AOT_LINES_WITH_INFER_SHAPE(...) MS_BCEWL_FOR_EACH_REDUCTION(MS_BCEWL_AOT_LINE, "library", __VA_ARGS__)

// Every entry as a line of text, for ms_bcewl/_library.py, from which Python builds its primitives.
MS_BCEWL_AOT_EXPORT const char *ms_bcewl_aot_registry() {
  return MS_BCEWL_AOT_OPERATIONS(MS_BCEWL_AOT_LINES, MS_BCEWL_AOT_LINES_WITH_INFER_SHAPE);
}
