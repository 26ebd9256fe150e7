// What ms_bcewl's framework entry points share (header-only, C++): MindSpore's AOT entries (src/aot/) and its
// PyNative pyboost operators (src/pyboost/, compiled by MindSpore with this folder shipped beside the library).
// Each makes aclTensor views of the framework's buffers and runs the two-phase aclnn API; a failure becomes a
// std::runtime_error whose message reaches the Python caller.
#ifndef MS_BCEWL_ENTRY_SUPPORT_H_
#define MS_BCEWL_ENTRY_SUPPORT_H_

#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "acl/acl_base.h"
#include "aclnn/aclnn_base.h"

namespace ms_bcewl::entry {

// MindSpore's entries report a failure by exception, which MindSpore raises in Python; the aclnn layer beneath
// returns status codes instead.
[[noreturn]] inline void ThrowError(const std::string &what) { throw std::runtime_error("ms_bcewl: " + what); }

struct TensorDeleter {
  void operator()(aclTensor *tensor) const { aclDestroyTensor(tensor); }
};
using TensorHandle = std::unique_ptr<aclTensor, TensorDeleter>;

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

// The second phase of an aclnn call: what every operation's second function shares.
using PhaseTwo = aclnnStatus (*)(void *, uint64_t, aclOpExecutor *, aclrtStream);

// Runs phase two with a workspace reused across calls on the calling thread (no allocation per call once it has
// grown); the executor is released whatever happens.
inline void RunPhaseTwo(PhaseTwo run, uint64_t workspace_size, aclOpExecutor *executor) {
  thread_local std::vector<unsigned char> buffer;
  try {
    if (buffer.size() < workspace_size) buffer.resize(workspace_size);
  } catch (const std::bad_alloc &) {
    aclDestroyAclOpExecutor(executor);
    ThrowError("could not allocate a workspace of " + std::to_string(workspace_size) + " bytes");
  }
  ThrowOnError(run(workspace_size == 0 ? nullptr : buffer.data(), workspace_size, executor, nullptr), "launch");
}

}  // namespace ms_bcewl::entry

#endif  // MS_BCEWL_ENTRY_SUPPORT_H_
