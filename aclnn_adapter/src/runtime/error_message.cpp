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

void Keep(std::string message) {
  {
    std::lock_guard<std::mutex> lock(ProcessMessageMutex());
    ProcessMessage() = message;
  }
  this_thread_message = std::move(message);
}

}  // namespace

int Fail(const char *api, int code, const std::string &sentence) {
  Keep(std::string(api) + ": error " + std::to_string(code) + ": " + sentence);
  return code;
}

const char *KeepMessage(const char *message) noexcept {
  try {
    Keep(message);
    return this_thread_message.c_str();
  } catch (...) {
    return "ms_bcewl: out of memory while reporting an error";
  }
}

}  // namespace ms_bcewl

extern "C" const char *aclGetRecentErrMsg() { return ms_bcewl::this_thread_message.c_str(); }

extern "C" const char *msBcewlLastErrorMessage(void) {
  thread_local std::string snapshot;
  std::lock_guard<std::mutex> lock(ms_bcewl::ProcessMessageMutex());
  snapshot = ms_bcewl::ProcessMessage();
  return snapshot.c_str();
}
