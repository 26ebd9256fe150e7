// How an AOT entry (a kernel or its InferShape) reports a failure to MindSpore, in source and wheel builds alike.
// MindSpore catches a std::exception from either and raises its what() in Python as the RuntimeError text; it shows a
// kernel's non-zero return as a bare number, and an InferShape returns no status at all. So the message travels as a
// std::runtime_error of the C++ runtime MindSpore itself uses, libstdc++: a wheel's library carries its own C++
// runtime (libc++), whose exceptions libstdc++ code cannot catch, and the process would abort.
#ifndef MS_BCEWL_MINDSPORE_AOT_FAILURE_H_
#define MS_BCEWL_MINDSPORE_AOT_FAILURE_H_

#include <exception>

#include "runtime/error_message.h"

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

#endif  // MS_BCEWL_MINDSPORE_AOT_FAILURE_H_
