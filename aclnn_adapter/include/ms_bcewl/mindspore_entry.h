// What the MindSpore entries share, in the library (src/mindspore/graph_entries.cpp) and in the pyboost module
// (src/mindspore/mindspore_entries.cpp, compiled on the user's machine): a call's tensors as aclTensor views, its
// OpArguments and the two phases of the aclnn API. Inline: each binary includes it once, the native tests too.
#ifndef MS_BCEWL_MINDSPORE_ENTRY_H_
#define MS_BCEWL_MINDSPORE_ENTRY_H_

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

// Phase 1 with msBcewlPlanOperation's signature: that function, or the GRAPH entries' own inside the library.
using PlanFunction = aclnnStatus (*)(const OpArguments *arguments, uint64_t *workspace_size, aclOpExecutor **executor);

// Plans and runs one call on the calling thread, with a workspace reused across its calls (no allocation per call
// once it has grown); the executor is released whatever happens.
inline void Run(const OpArguments &arguments, PlanFunction plan = msBcewlPlanOperation) {
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = nullptr;
  ThrowOnError(plan(&arguments, &workspace_size, &executor), "GetWorkspaceSize");
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

#endif  // MS_BCEWL_MINDSPORE_ENTRY_H_
