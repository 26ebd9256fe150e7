#include "aclnn_step.h"

#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "acl/acl.h"
#include "runtime/error_message.h"

namespace ms_bcewl::ascend {
namespace {

struct DeviceBuffer {
  void *data = nullptr;
  uint64_t bytes = 0;
};

std::mutex &ScratchMutex() {
  static std::mutex mutex;
  return mutex;
}

std::unordered_map<aclrtStream, DeviceBuffer> &ScratchByStream() {
  static std::unordered_map<aclrtStream, DeviceBuffer> buffers;
  return buffers;
}

void Grow(aclrtStream stream, uint64_t bytes, DeviceBuffer *buffer) {
  if (buffer->data != nullptr) {
    if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) {
      throw std::runtime_error("aclrtSynchronizeStream failed before growing the scratch buffer");
    }
    aclrtFree(buffer->data);
    *buffer = DeviceBuffer{};
  }
  if (aclrtMalloc(&buffer->data, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
    buffer->data = nullptr;
    throw std::runtime_error("aclrtMalloc of " + std::to_string(bytes) + " scratch bytes failed");
  }
  buffer->bytes = bytes;
}

}  // namespace

void *StreamScratch(aclrtStream stream, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(ScratchMutex());
  DeviceBuffer &buffer = ScratchByStream()[stream];
  if (buffer.bytes < bytes) {
    Grow(stream, bytes, &buffer);
  }
  return buffer.data;
}

aclnnStatus OpFailed(const char *api, const char *op, aclnnStatus status) {
  const char *cann_message = aclGetRecentErrMsg();
  return Fail(api, status, std::string(op) + " failed with " + std::to_string(status) + ": " +
                               (cann_message == nullptr ? "(no message)" : cann_message));
}

}  // namespace ms_bcewl::ascend
