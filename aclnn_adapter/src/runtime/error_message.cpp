#include "runtime/error_message.h"

#include <mutex>

#include "acl/acl_base.h"
#include "ms_bcewl/ms_bcewl_host.h"

namespace ms_bcewl {
namespace {

thread_local std::string this_thread_message;

std::mutex &ProcessMessageMutex() {
  static std::mutex mutex;
  return mutex;
}

std::string &ProcessMessage() {
  static std::string message;
  return message;
}

}  // namespace

int Fail(const char *api, int code, const std::string &sentence) {
  std::string message = std::string(api) + ": error " + std::to_string(code) + ": " + sentence;
  {
    std::lock_guard<std::mutex> lock(ProcessMessageMutex());
    ProcessMessage() = message;
  }
  this_thread_message = std::move(message);
  return code;
}

}  // namespace ms_bcewl

extern "C" const char *aclGetRecentErrMsg() { return ms_bcewl::this_thread_message.c_str(); }

extern "C" const char *msBcewlLastErrorMessage(void) {
  thread_local std::string snapshot;
  std::lock_guard<std::mutex> lock(ms_bcewl::ProcessMessageMutex());
  snapshot = ms_bcewl::ProcessMessage();
  return snapshot.c_str();
}
