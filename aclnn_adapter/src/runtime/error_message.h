// The failure messages behind aclGetRecentErrMsg() (per thread) and msBcewlLastErrorMessage() (process-wide).
// Every public function that fails records one sentence; successful calls leave the last message in place.
#ifndef MS_BCEWL_RUNTIME_ERROR_MESSAGE_H_
#define MS_BCEWL_RUNTIME_ERROR_MESSAGE_H_

#include <exception>
#include <string>

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

#endif  // MS_BCEWL_RUNTIME_ERROR_MESSAGE_H_
