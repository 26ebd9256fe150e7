// CANN's runtime on the host, as the library sees it inside: the aclTensor, the usable streams, the handles it has
// handed out, the failure messages and the enum arguments of the C ABI.
#ifndef MS_BCEWL_RUNTIME_HOST_RUNTIME_H_
#define MS_BCEWL_RUNTIME_HOST_RUNTIME_H_

#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "acl/acl_base.h"
#include "aclnn/acl_meta.h"

// Enum arguments of the C ABI. CANN's headers declare them as enums, and a C caller may pass any int; but in C++,
// loading an enum outside the values it can hold (the smallest bit-field that holds its enumerators) is undefined.
// So an entry point reads such an argument as the int it was passed as, checks the code, and only then converts it.

namespace ms_bcewl {

// The int a caller passed as *argument, read without loading it as the enum.
template <typename Enum>
int32_t AbiEnumCode(const Enum *argument) {
  static_assert(sizeof(Enum) == sizeof(int32_t), "the enums of the C ABI are int-sized");
  int32_t code = 0;
  std::memcpy(&code, argument, sizeof(code));
  return code;
}

}  // namespace ms_bcewl

// A thread-safe set of the handles a library has handed out and not yet taken back, so that a destroy or a use
// of an unknown, already released or forged handle is answered with an error code instead of undefined behaviour.

namespace ms_bcewl {

template <typename Handle>
class LiveHandles {
 public:
  void Add(const Handle *handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    handles_.insert(handle);
  }

  bool Contains(const Handle *handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    return handles_.count(handle) != 0;
  }

  // Removes the handle and reports whether it was live: of two threads claiming one handle, exactly one wins.
  bool Claim(const Handle *handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    return handles_.erase(handle) != 0;
  }

 private:
  std::mutex mutex_;
  std::unordered_set<const Handle *> handles_;
};

}  // namespace ms_bcewl

// The failure messages behind aclGetRecentErrMsg() (per thread) and msBcewlLastErrorMessage() (process-wide).
// Every public function that fails records one sentence; successful calls leave the last message in place.

namespace ms_bcewl {

// Records "<api>: error <code>: <sentence>" for this thread and as the process-wide latest, and returns code,
// so that a failing path reads `return Fail(...)`.
int Fail(const char *api, int code, const std::string &sentence);

// Records `message` as it stands, as Fail records its line, and returns this thread's copy; never throws (out of
// memory, it returns a fixed sentence saying so instead).
const char *KeepMessage(const char *message) noexcept;

// Runs body; an exception (std::bad_alloc, ...) must not cross the C ABI, so it becomes a failure recorded
// with code (561000 ACLNN_ERR_INNER for aclnn functions, ACL_ERROR_BAD_ALLOC for the runtime), and on_error
// is returned.
template <typename Result, typename Body>
Result WithInternalErrorsCaught(const char *api, int code, Result on_error, Body &&body) {
  try {
    return body();
  } catch (const std::exception &error) {
    Fail(api, code, std::string("internal error: ") + error.what());
  } catch (...) {
    Fail(api, code, "internal error.");
  }
  return on_error;
}

}  // namespace ms_bcewl

// The host aclTensor: a strided view (shape, strides and offset in elements) over a storage buffer.

struct aclTensor {
  std::vector<int64_t> view_shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  aclDataType dtype = ACL_DT_UNDEFINED;
  aclFormat format = ACL_FORMAT_UNDEFINED;
  std::vector<int64_t> storage_shape;
  void *data = nullptr;
  int64_t numel = 0;  // of the view
};

// Internal view of the host runtime (acl/acl_rt.h): the "device" is host memory and a stream runs synchronously.

namespace ms_bcewl {

// nullptr (the default stream) or a stream from aclrtCreateStream that has not been destroyed.
bool IsUsableStream(aclrtStream stream);

}  // namespace ms_bcewl

#endif  // MS_BCEWL_RUNTIME_HOST_RUNTIME_H_
