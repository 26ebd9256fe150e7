// MindSpore AOT entry points (ops.Custom(func_type="aot")) for the host backend.
//
// Each entry translates MindSpore's raw arguments into aclTensor views and runs the two-phase aclnn API, so the
// MindSpore path and a C++ caller of aclnn exercise the same checks and kernels.
//
// How variants reach the kernel: one exported symbol per (operation, weight/pos_weight presence, reduction), all
// generated from the registry (aot_registry.h), which the library also exports as a table for Python
// (ms_bcewl_aot_registry). The alternative, primitive attrs read through AotExtra, would tie this library to the
// C++ ABI (std::string by value, vtable layout) of one MindSpore build; a name costs nothing at run time, keeps
// InferShape free of attrs, and lets one Python primitive per variant be built once and cached. Absent optional
// inputs are simply not passed.
//
// The gradients of every input also come as one entry with one output per input
// (ms_bcewl_grad_all_<variant>_<reduction>: dx, dy, then dw and dp where the variant has them;
// aclnnBinaryCrossEntropyWithLogitsAllBackward), for a bprop that must return them all. It has no InferShape: its
// primitive infers its shapes in Python (ms_bcewl/_primitives.py).
//
// Failures are thrown as std::runtime_error: MindSpore reports a non-zero return code as a bare number, while an
// exception's message reaches the Python caller as the RuntimeError text.
//
// Shapes a graph with dynamic shapes only knows when it runs are checked here first, with the sentences of
// ms_bcewl/_checks.py, so that a mismatch reads the same whether Python or the library found it.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "aclnnop/aclnn_binary_cross_entropy_with_logits.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_all_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_weight_backward.h"
#include "aot/aot_registry.h"
#include "ms_bcewl/entry_support.h"
#include "ms_bcewl/operations.h"
#include "ms_bcewl/reductions.h"

#define MS_BCEWL_AOT_EXPORT __attribute__((visibility("default")))

namespace {

using ms_bcewl::Operation;
using ms_bcewl::entry::PhaseTwo;
using ms_bcewl::entry::TensorHandle;
using ms_bcewl::entry::ThrowError;
using ms_bcewl::entry::ThrowOnError;

constexpr int kMaxRank = 8;

struct AotCall {
  int nparam;
  void **params;
  int *ndims;
  int64_t **shapes;
  const char **dtypes;
};

struct Layout {
  Operation operation;
  bool has_weight;
  bool has_pos_weight;

  // Inputs in MindSpore order: [grad_output,] input, target, [weight,] [pos_weight]; then the outputs.
  int first_input() const { return ms_bcewl::TakesGradOutput(operation) ? 1 : 0; }
  int weight_index() const { return has_weight ? first_input() + 2 : -1; }
  int pos_weight_index() const { return has_pos_weight ? first_input() + 2 + (has_weight ? 1 : 0) : -1; }
  int input_count() const { return first_input() + 2 + (has_weight ? 1 : 0) + (has_pos_weight ? 1 : 0); }
  int output_index() const { return input_count(); }
  int output_count() const {
    return operation == Operation::kGradAll ? 2 + (has_weight ? 1 : 0) + (has_pos_weight ? 1 : 0) : 1;
  }
};

aclDataType DataTypeFromName(const char *name, int index) {
  if (name == nullptr) ThrowError("argument " + std::to_string(index) + " has no dtype");
  if (std::strcmp(name, "float32") == 0) return ACL_FLOAT;
  if (std::strcmp(name, "float16") == 0) return ACL_FLOAT16;
  if (std::strcmp(name, "bfloat16") == 0) return ACL_BF16;
  ThrowError("argument " + std::to_string(index) + " has unsupported dtype " + name +
             " (supported: float16, float32, bfloat16)");
}

TensorHandle MakeContiguousTensor(const AotCall &call, int index) {
  const int rank = call.ndims[index];
  if (rank < 0 || rank > kMaxRank) {
    ThrowError("argument " + std::to_string(index) + " has rank " + std::to_string(rank) + "; at most 8 is supported");
  }
  if (rank > 0 && call.shapes[index] == nullptr) ThrowError("argument " + std::to_string(index) + " has no shape");
  return ms_bcewl::entry::MakeContiguousView(call.shapes[index], rank, DataTypeFromName(call.dtypes[index], index),
                                             call.params[index]);
}

TensorHandle MakeOptionalTensor(const AotCall &call, int index) {
  return index < 0 ? TensorHandle() : MakeContiguousTensor(call, index);
}

using GradientPlan = aclnnStatus (*)(const aclTensor *, const aclTensor *, const aclTensor *, const aclTensor *,
                                     const aclTensor *, int64_t, aclTensor *, uint64_t *, aclOpExecutor **);

// The four gradient APIs share one signature; the forward is the one without grad_output.
struct GradientApi {
  GradientPlan plan;
  PhaseTwo run;
};

// The phase-1 arguments of every operation; the outputs after out are those of kGradAll (null where absent).
struct PhaseOneArgs {
  const aclTensor *grad_output;
  const aclTensor *input;
  const aclTensor *target;
  const aclTensor *weight;
  const aclTensor *pos_weight;
  int64_t reduction;
  aclTensor *out;
  aclTensor *target_out;
  aclTensor *weight_out;
  aclTensor *pos_weight_out;
};

GradientApi GradientApiFor(Operation operation) {
  switch (operation) {
    case Operation::kGradSelf:
      return {aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize, aclnnBinaryCrossEntropyWithLogitsBackward};
    case Operation::kGradTarget:
      return {aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize,
              aclnnBinaryCrossEntropyWithLogitsTargetBackward};
    case Operation::kGradWeight:
      return {aclnnBinaryCrossEntropyWithLogitsWeightBackwardGetWorkspaceSize,
              aclnnBinaryCrossEntropyWithLogitsWeightBackward};
    case Operation::kGradPosWeight:
      return {aclnnBinaryCrossEntropyWithLogitsPosWeightBackwardGetWorkspaceSize,
              aclnnBinaryCrossEntropyWithLogitsPosWeightBackward};
    case Operation::kForward:
    case Operation::kGradAll:
    case Operation::kLossAndAllGradients:
      break;
  }
  ThrowError("this operation has no single-output gradient API");
}

aclnnStatus PlanForOperation(Operation operation, const PhaseOneArgs &a, uint64_t *workspace_size,
                             aclOpExecutor **executor, PhaseTwo *run) {
  if (operation == Operation::kForward) {
    *run = aclnnBinaryCrossEntropyWithLogits;
    return aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(a.input, a.target, a.weight, a.pos_weight, a.reduction,
                                                             a.out, workspace_size, executor);
  }
  if (operation == Operation::kGradAll) {
    *run = aclnnBinaryCrossEntropyWithLogitsAllBackward;
    return aclnnBinaryCrossEntropyWithLogitsAllBackwardGetWorkspaceSize(
        a.grad_output, a.input, a.target, a.weight, a.pos_weight, a.reduction, a.out, a.target_out, a.weight_out,
        a.pos_weight_out, workspace_size, executor);
  }
  const GradientApi api = GradientApiFor(operation);
  *run = api.run;
  return api.plan(a.grad_output, a.input, a.target, a.weight, a.pos_weight, a.reduction, a.out, workspace_size,
                  executor);
}

void CheckCall(const Layout &layout, const AotCall &call) {
  const int expected = layout.input_count() + layout.output_count();
  if (call.nparam != expected) {
    ThrowError("expected " + std::to_string(expected) + " arguments (inputs and outputs), got " +
               std::to_string(call.nparam));
  }
  if (call.params == nullptr || call.ndims == nullptr || call.shapes == nullptr || call.dtypes == nullptr) {
    ThrowError("MindSpore passed a null argument table");
  }
}

// A shape as Python prints a tuple: (), (5,), (4, 5).
std::string PythonTuple(const int64_t *dims, int rank) {
  std::string text = "(";
  for (int i = 0; i < rank; ++i) {
    text += (i > 0 ? ", " : "") + std::to_string(dims[i]);
  }
  return text + (rank == 1 ? ",)" : ")");
}

[[noreturn]] void ThrowAsPython(const std::string &sentence) {
  throw std::runtime_error("For 'binary_cross_entropy_with_logits', " + sentence);
}

void CheckRankAsPython(const AotCall &call, int index, const char *name) {
  const int rank = call.ndims[index];
  if (rank < 0) ThrowError("argument " + std::to_string(index) + " has rank " + std::to_string(rank));
  if (rank > kMaxRank) {
    ThrowAsPython("'" + std::string(name) + "' has rank " + std::to_string(rank) + " (shape " +
                  PythonTuple(call.shapes[index], rank) + "); at most 8 dimensions are supported.");
  }
}

// numpy broadcasting with trailing alignment that must not enlarge input's shape.
bool BroadcastsWithoutEnlarging(const int64_t *dims, int rank, const int64_t *input_dims, int input_rank) {
  if (rank > input_rank) return false;
  for (int i = 1; i <= rank; ++i) {
    const int64_t dim = dims[rank - i];
    if (dim != 1 && dim != input_dims[input_rank - i]) return false;
  }
  return true;
}

void CheckShapesAsPython(const Layout &layout, const AotCall &call) {
  const int input = layout.first_input();
  const int target = input + 1;
  const std::vector<std::pair<int, const char *>> optional = {{layout.weight_index(), "weight"},
                                                              {layout.pos_weight_index(), "pos_weight"}};
  CheckRankAsPython(call, input, "input");
  CheckRankAsPython(call, target, "target");
  for (const auto &[index, name] : optional) {
    if (index >= 0) CheckRankAsPython(call, index, name);
  }
  const int input_rank = call.ndims[input];
  const int64_t *input_dims = call.shapes[input];
  const std::string input_shape = PythonTuple(input_dims, input_rank);
  if (call.ndims[target] != input_rank || !std::equal(input_dims, input_dims + input_rank, call.shapes[target])) {
    ThrowAsPython("'input' and 'target' must have the same shape, but got input " + input_shape + " and target " +
                  PythonTuple(call.shapes[target], call.ndims[target]) + ".");
  }
  for (const auto &[index, name] : optional) {
    if (index >= 0 && !BroadcastsWithoutEnlarging(call.shapes[index], call.ndims[index], input_dims, input_rank)) {
      ThrowAsPython("'" + std::string(name) + "' of shape " + PythonTuple(call.shapes[index], call.ndims[index]) +
                    " must broadcast to the shape of 'input' " + input_shape + " without enlarging it.");
    }
  }
}

void Launch(const Layout &layout, int64_t reduction, const AotCall &call) {
  CheckCall(layout, call);
  CheckShapesAsPython(layout, call);
  const int first = layout.first_input();
  TensorHandle grad_output = first == 0 ? TensorHandle() : MakeContiguousTensor(call, 0);
  TensorHandle input = MakeContiguousTensor(call, first);
  TensorHandle target = MakeContiguousTensor(call, first + 1);
  TensorHandle weight = MakeOptionalTensor(call, layout.weight_index());
  TensorHandle pos_weight = MakeOptionalTensor(call, layout.pos_weight_index());
  // kGradAll's outputs follow its inputs: dx, dy, [dw,] [dp].
  const int out_index = layout.output_index();
  const bool all = layout.operation == Operation::kGradAll;
  TensorHandle out = MakeContiguousTensor(call, out_index);
  TensorHandle target_out = MakeOptionalTensor(call, all ? out_index + 1 : -1);
  TensorHandle weight_out = MakeOptionalTensor(call, all && layout.has_weight ? out_index + 2 : -1);
  TensorHandle pos_weight_out =
      MakeOptionalTensor(call, all && layout.has_pos_weight ? out_index + 2 + (layout.has_weight ? 1 : 0) : -1);
  const PhaseOneArgs args{grad_output.get(), input.get(), target.get(),     weight.get(),     pos_weight.get(),
                          reduction,         out.get(),   target_out.get(), weight_out.get(), pos_weight_out.get()};
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = nullptr;
  PhaseTwo run = nullptr;
  ThrowOnError(PlanForOperation(layout.operation, args, &workspace_size, &executor, &run), "GetWorkspaceSize");
  ms_bcewl::entry::RunPhaseTwo(run, workspace_size, executor);
}

std::vector<int64_t> ShapeOf(int *ndims, int64_t **shapes, int index) {
  if (ndims == nullptr || shapes == nullptr || ndims[index] < 0 || ndims[index] > kMaxRank) {
    ThrowError("infer shape received an invalid shape table");
  }
  return std::vector<int64_t>(shapes[index], shapes[index] + ndims[index]);
}

// Output shapes: the loss keeps input's shape for 'none' and is 0-d otherwise; each gradient has its argument's.
std::vector<int64_t> InferShape(const Layout &layout, int64_t reduction, int *ndims, int64_t **shapes) {
  switch (layout.operation) {
    case Operation::kForward:
      return reduction == ms_bcewl::kReductionNone ? ShapeOf(ndims, shapes, 0) : std::vector<int64_t>{};
    case Operation::kGradSelf:
      return ShapeOf(ndims, shapes, layout.first_input());
    case Operation::kGradTarget:
      return ShapeOf(ndims, shapes, layout.first_input() + 1);
    case Operation::kGradWeight:
      return ShapeOf(ndims, shapes, layout.weight_index());
    case Operation::kGradPosWeight:
      return ShapeOf(ndims, shapes, layout.pos_weight_index());
    case Operation::kGradAll:
    case Operation::kLossAndAllGradients:
      break;
  }
  ThrowError("no InferShape for this operation");
}

}  // namespace

#define MS_BCEWL_AOT_SYMBOL(operation, variant, reduction) ms_bcewl_##operation##_##variant##_##reduction
#define MS_BCEWL_STRING(token) #token
#define MS_BCEWL_EXPANDED_STRING(tokens) MS_BCEWL_STRING(tokens)

// The layout of a registry row, whose operation is named as in MS_BCEWL_FOR_EACH_OPERATION.
#define MS_BCEWL_AOT_LAYOUT(operation, has_w, has_p) (Layout{ms_bcewl::OperationNamed(#operation), has_w, has_p})

#define MS_BCEWL_AOT_INFER_SHAPE_library(operation, variant, reduction, layout, reduction_constant)               \
  extern "C" MS_BCEWL_AOT_EXPORT std::vector<int64_t> ms_bcewl_##operation##_##variant##_##reduction##InferShape( \
      int *ndims, int64_t **shapes, void *) {                                                                     \
    static constexpr Layout kLayout = layout;                                                                     \
    return InferShape(kLayout, reduction_constant, ndims, shapes);                                                \
  }
#define MS_BCEWL_AOT_INFER_SHAPE_python(operation, variant, reduction, layout, reduction_constant)

// One reduction of one registry row: the entry, and its InferShape where the row's shapes come from the library.
#define MS_BCEWL_AOT_ENTRY(reduction, reduction_constant, code, operation, variant, has_w, has_p, shape_source)        \
  extern "C" MS_BCEWL_AOT_EXPORT int MS_BCEWL_AOT_SYMBOL(operation, variant, reduction)(                               \
      int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes, void *, void *) {                  \
    static constexpr Layout kLayout = MS_BCEWL_AOT_LAYOUT(operation, has_w, has_p);                                    \
    Launch(kLayout, ms_bcewl::reduction_constant, AotCall{nparam, params, ndims, shapes, dtypes});                     \
    return 0;                                                                                                          \
  }                                                                                                                    \
  MS_BCEWL_AOT_INFER_SHAPE_##shape_source(operation, variant, reduction, MS_BCEWL_AOT_LAYOUT(operation, has_w, has_p), \
                                          ms_bcewl::reduction_constant)

// The table line of one entry: symbol, operation, has_weight, has_pos_weight, reduction, aclnn code, shapes.
#define MS_BCEWL_AOT_TABLE_LINE(reduction, reduction_constant, code, operation, variant, has_w, has_p, shape_source) \
  MS_BCEWL_EXPANDED_STRING(MS_BCEWL_AOT_SYMBOL(operation, variant, reduction))                                       \
  " " #operation " " #has_w " " #has_p " " #reduction " " #code " " #shape_source "\n"

#define MS_BCEWL_AOT_ROW_ENTRIES(...) MS_BCEWL_FOR_EACH_REDUCTION(MS_BCEWL_AOT_ENTRY, __VA_ARGS__)
#define MS_BCEWL_AOT_ROW_TABLE_LINES(...) MS_BCEWL_FOR_EACH_REDUCTION(MS_BCEWL_AOT_TABLE_LINE, __VA_ARGS__)

MS_BCEWL_AOT_ENTRIES(MS_BCEWL_AOT_ROW_ENTRIES)

// Every entry as a line of text, for ms_bcewl/_primitives.py, which builds its primitives from it.
extern "C" MS_BCEWL_AOT_EXPORT const char *ms_bcewl_aot_registry() {
  return MS_BCEWL_AOT_ENTRIES(MS_BCEWL_AOT_ROW_TABLE_LINES);
}
