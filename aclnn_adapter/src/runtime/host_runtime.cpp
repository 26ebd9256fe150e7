// acl/acl_rt.h and aclnn/aclnn_base.h on the host. Device memory is 64-byte aligned host memory; every live
// allocation and stream is registered, so that freeing or using an unknown or already released handle returns
// an error code instead of corrupting the heap. Launches run synchronously, so synchronizing only validates.
#include "runtime/host_runtime.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "acl/acl_rt.h"
#include "aclnn/aclnn_base.h"
#include "runtime/abi_enum.h"
#include "runtime/error_message.h"
#include "runtime/live_handles.h"

namespace ms_bcewl {
namespace {

constexpr size_t kAllocationAlignment = 64;
constexpr int32_t kOnlyDeviceId = 0;

enum class MemoryKind { kDevice, kHost };

const char *MemoryKindName(MemoryKind kind) { return kind == MemoryKind::kDevice ? "device" : "host"; }

struct Allocation {
  size_t size;
  MemoryKind kind;
};

class AllocationRegistry {
 public:
  void Add(void *ptr, Allocation allocation) {
    std::lock_guard<std::mutex> lock(mutex_);
    allocations_[Address(ptr)] = allocation;
  }

  // Removes ptr if it starts a live allocation of that kind.
  bool Remove(void *ptr, MemoryKind kind) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = allocations_.find(Address(ptr));
    if (found == allocations_.end() || found->second.kind != kind) {
      return false;
    }
    allocations_.erase(found);
    return true;
  }

  // Whether [ptr, ptr + count) lies inside one live allocation of that kind.
  bool Contains(const void *ptr, size_t count, MemoryKind kind) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto after = allocations_.upper_bound(Address(ptr));
    if (after == allocations_.begin()) {
      return false;
    }
    const auto &[start, allocation] = *std::prev(after);
    const uintptr_t offset = Address(ptr) - start;
    return allocation.kind == kind && offset <= allocation.size && count <= allocation.size - offset;
  }

 private:
  static uintptr_t Address(const void *ptr) { return reinterpret_cast<uintptr_t>(ptr); }

  std::mutex mutex_;
  std::map<uintptr_t, Allocation> allocations_;
};

AllocationRegistry &Allocations() {
  static AllocationRegistry registry;
  return registry;
}

// A host stream has no state: work is finished when a launch returns. It exists so that handles can be checked.
struct HostStream {};

LiveHandles<HostStream> &LiveStreams() {
  static LiveHandles<HostStream> streams;
  return streams;
}

aclError Allocate(const char *api, void **ptr, size_t size, MemoryKind kind) {
  if (ptr == nullptr) {
    return Fail(api, ACL_ERROR_INVALID_PARAM, "the output pointer is null.");
  }
  *ptr = nullptr;
  if (size == 0) {
    return Fail(api, ACL_ERROR_INVALID_PARAM, "size must be greater than 0, as on CANN.");
  }
  if (size > SIZE_MAX - kAllocationAlignment) {
    return Fail(api, ACL_ERROR_BAD_ALLOC, "cannot allocate " + std::to_string(size) + " bytes.");
  }
  const size_t rounded = (size + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
  std::unique_ptr<void, decltype(&std::free)> memory(std::aligned_alloc(kAllocationAlignment, rounded), std::free);
  if (memory == nullptr) {
    return Fail(api, ACL_ERROR_BAD_ALLOC, "cannot allocate " + std::to_string(size) + " bytes.");
  }
  return WithInternalErrorsCaught(api, ACL_ERROR_BAD_ALLOC, ACL_ERROR_BAD_ALLOC, [&] {
    Allocations().Add(memory.get(), Allocation{size, kind});
    *ptr = memory.release();
    return ACL_SUCCESS;
  });
}

aclError Release(const char *api, void *ptr, MemoryKind kind) {
  if (ptr == nullptr) {
    return Fail(api, ACL_ERROR_INVALID_PARAM, "the pointer is null.");
  }
  if (!Allocations().Remove(ptr, kind)) {
    return Fail(api, ACL_ERROR_INVALID_PARAM,
                std::string("the pointer is not a live ") + MemoryKindName(kind) +
                    " allocation (unknown, already freed, or from the other allocator).");
  }
  std::free(ptr);
  return ACL_SUCCESS;
}

aclError CheckDeviceId(const char *api, int32_t device_id) {
  if (device_id != kOnlyDeviceId) {
    return Fail(api, ACL_ERROR_RT_PARAM_INVALID,
                "device " + std::to_string(device_id) + " does not exist; the host build has only device 0.");
  }
  return ACL_SUCCESS;
}

bool IsDeviceSide(aclrtMemcpyKind kind, bool destination) {
  switch (kind) {
    case ACL_MEMCPY_HOST_TO_DEVICE:
      return destination;
    case ACL_MEMCPY_DEVICE_TO_HOST:
      return !destination;
    case ACL_MEMCPY_DEVICE_TO_DEVICE:
      return true;
    default:
      return false;
  }
}

// kind_code: the caller's aclrtMemcpyKind as an int (runtime/abi_enum.h), converted once it is known to be one.
aclError CheckMemcpyArguments(void *dst, size_t dest_max, const void *src, size_t count, int32_t kind_code) {
  const char *api = "aclrtMemcpy";
  if (dst == nullptr || src == nullptr) {
    return Fail(api, ACL_ERROR_INVALID_PARAM, dst == nullptr ? "dst is null." : "src is null.");
  }
  if (kind_code < ACL_MEMCPY_HOST_TO_HOST || kind_code > ACL_MEMCPY_DEFAULT) {
    return Fail(api, ACL_ERROR_INVALID_PARAM, "kind " + std::to_string(kind_code) + " is not in [0, 4].");
  }
  const auto kind = static_cast<aclrtMemcpyKind>(kind_code);
  if (count > dest_max) {
    return Fail(api, ACL_ERROR_INVALID_PARAM,
                "count " + std::to_string(count) + " exceeds destMax " + std::to_string(dest_max) + ".");
  }
  if (IsDeviceSide(kind, true) && !Allocations().Contains(dst, count, MemoryKind::kDevice)) {
    return Fail(api, ACL_ERROR_INVALID_PARAM,
                "dst [dst, dst + " + std::to_string(count) + ") is not inside a live aclrtMalloc allocation.");
  }
  if (IsDeviceSide(kind, false) && !Allocations().Contains(src, count, MemoryKind::kDevice)) {
    return Fail(api, ACL_ERROR_INVALID_PARAM,
                "src [src, src + " + std::to_string(count) + ") is not inside a live aclrtMalloc allocation.");
  }
  return ACL_SUCCESS;
}

}  // namespace

bool IsUsableStream(aclrtStream stream) {
  return stream == nullptr || LiveStreams().Contains(static_cast<HostStream *>(stream));
}

}  // namespace ms_bcewl

using ms_bcewl::Fail;
using ms_bcewl::MemoryKind;

// The host runtime needs no global state, so (re)initialising and finalising always succeed; configPath is
// accepted and ignored.
extern "C" aclError aclInit(const char * /*configPath*/) { return ACL_SUCCESS; }
extern "C" aclError aclFinalize() { return ACL_SUCCESS; }
extern "C" aclnnStatus aclnnInit(const char * /*configPath*/) { return ACLNN_SUCCESS; }
extern "C" aclnnStatus aclnnFinalize() { return ACLNN_SUCCESS; }

extern "C" aclError aclrtSetDevice(int32_t deviceId) { return ms_bcewl::CheckDeviceId("aclrtSetDevice", deviceId); }

extern "C" aclError aclrtResetDevice(int32_t deviceId) { return ms_bcewl::CheckDeviceId("aclrtResetDevice", deviceId); }

extern "C" aclError aclrtCreateStream(aclrtStream *stream) {
  if (stream == nullptr) {
    return Fail("aclrtCreateStream", ACL_ERROR_INVALID_PARAM, "the output pointer is null.");
  }
  return ms_bcewl::WithInternalErrorsCaught("aclrtCreateStream", ACL_ERROR_BAD_ALLOC, ACL_ERROR_BAD_ALLOC, [&] {
    auto created = std::make_unique<ms_bcewl::HostStream>();
    ms_bcewl::LiveStreams().Add(created.get());
    *stream = created.release();
    return ACL_SUCCESS;
  });
}

extern "C" aclError aclrtDestroyStream(aclrtStream stream) {
  auto *host_stream = static_cast<ms_bcewl::HostStream *>(stream);
  if (stream == nullptr || !ms_bcewl::LiveStreams().Claim(host_stream)) {
    return Fail("aclrtDestroyStream", ACL_ERROR_RT_PARAM_INVALID, "the stream is null, unknown or already destroyed.");
  }
  delete host_stream;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtSynchronizeStream(aclrtStream stream) {
  if (!ms_bcewl::IsUsableStream(stream)) {
    return Fail("aclrtSynchronizeStream", ACL_ERROR_RT_PARAM_INVALID, "the stream is unknown or already destroyed.");
  }
  return ACL_SUCCESS;
}

// policy is never read (the host has one kind of memory), so any int a C caller passes as it is harmless.
extern "C" aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy /*policy*/) {
  return ms_bcewl::Allocate("aclrtMalloc", devPtr, size, MemoryKind::kDevice);
}

extern "C" aclError aclrtFree(void *devPtr) { return ms_bcewl::Release("aclrtFree", devPtr, MemoryKind::kDevice); }

extern "C" aclError aclrtMallocHost(void **hostPtr, size_t size) {
  return ms_bcewl::Allocate("aclrtMallocHost", hostPtr, size, MemoryKind::kHost);
}

extern "C" aclError aclrtFreeHost(void *hostPtr) {
  return ms_bcewl::Release("aclrtFreeHost", hostPtr, MemoryKind::kHost);
}

extern "C" aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind) {
  const aclError status = ms_bcewl::CheckMemcpyArguments(dst, destMax, src, count, ms_bcewl::AbiEnumCode(&kind));
  if (status == ACL_SUCCESS && count > 0) {
    std::memmove(dst, src, count);
  }
  return status;
}
