// The acl*, aclrt* and aclnn runtime functions of include/acl and include/aclnn on the host: failure messages,
// tensors, device memory and streams (host_runtime.h).

#include "runtime/host_runtime.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "acl/acl_base.h"
#include "acl/acl_rt.h"
#include "aclnn/aclnn_base.h"
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

// aclCreateTensor / aclDestroyTensor and the aclGet* accessors. A tensor is accepted only if its view lies
// inside its storage, so that no later kernel can read or write outside the buffer the caller described.

namespace ms_bcewl {
namespace {

// Far above the rank any operator accepts (8): ranks up to this are created and then rejected by the operator
// with a clear message; anything larger is an obviously corrupt count.
constexpr uint64_t kMaxCreatableRank = 64;
constexpr const char *kCreateApi = "aclCreateTensor";

// aclCreateTensor reads its enum arguments as ints (host_runtime.h) and rejects what the enums cannot hold:
// -64 .. 63 for aclDataType and aclFormat, whose enumerators lie in -1 .. 47.
constexpr int32_t kLowestEnumCode = -64;
constexpr int32_t kHighestEnumCode = 63;

bool CheckEnumCode(const char *what, int32_t code) {
  if (code < kLowestEnumCode || code > kHighestEnumCode) {
    Fail(kCreateApi, ACLNN_ERR_PARAM_INVALID,
         std::string(what) + " " + std::to_string(code) + " is not a value of its enum type.");
    return false;
  }
  return true;
}

LiveHandles<aclTensor> &LiveTensors() {
  static LiveHandles<aclTensor> tensors;
  return tensors;
}

std::string DimsText(const int64_t *dims, uint64_t count) {
  std::string text = "[";
  for (uint64_t i = 0; i < count; ++i) {
    text += (i == 0 ? "" : ",") + std::to_string(dims[i]);
  }
  return text + "]";
}

// Validates a dims array and returns its element count through numel.
bool CheckDims(const char *what, const int64_t *dims, uint64_t count, int64_t *numel) {
  if (count > kMaxCreatableRank) {
    Fail(kCreateApi, ACLNN_ERR_PARAM_INVALID,
         std::string(what) + " has " + std::to_string(count) + " dims; at most " + std::to_string(kMaxCreatableRank) +
             " can be described.");
    return false;
  }
  if (dims == nullptr && count > 0) {
    Fail(kCreateApi, ACLNN_ERR_PARAM_NULLPTR,
         std::string(what) + " is null but its count is " + std::to_string(count) + ".");
    return false;
  }
  *numel = 1;
  for (uint64_t i = 0; i < count; ++i) {
    if (dims[i] < 0) {
      Fail(kCreateApi, ACLNN_ERR_PARAM_INVALID,
           std::string(what) + " " + DimsText(dims, count) + " has a negative dim.");
      return false;
    }
    if (__builtin_mul_overflow(*numel, dims[i], numel)) {
      Fail(kCreateApi, ACLNN_ERR_PARAM_INVALID,
           std::string(what) + " " + DimsText(dims, count) + " has more elements than int64 can count.");
      return false;
    }
  }
  return true;
}

// Row-major strides (a dim of 0 counts as 1). False if they leave int64: CheckDims bounds them only for a view
// with elements, not for an empty one such as [0, 2^40, 2^40].
bool ContiguousStrides(const std::vector<int64_t> &shape, std::vector<int64_t> *strides) {
  strides->assign(shape.size(), 1);
  for (size_t dim = shape.size(); dim > 1; --dim) {
    if (__builtin_mul_overflow((*strides)[dim - 1], std::max<int64_t>(shape[dim - 1], 1), &(*strides)[dim - 2])) {
      return false;
    }
  }
  return true;
}

// Whether offset + sum((dim - 1) * stride), the last element the view reaches, lies inside the storage.
bool CheckViewInsideStorage(const aclTensor &tensor, int64_t storage_numel) {
  if (tensor.offset < 0) {
    Fail(kCreateApi, ACLNN_ERR_PARAM_INVALID, "the view offset " + std::to_string(tensor.offset) + " is negative.");
    return false;
  }
  for (int64_t stride : tensor.strides) {
    if (stride < 0) {
      Fail(kCreateApi, ACLNN_ERR_PARAM_INVALID,
           "strides " + DimsText(tensor.strides.data(), tensor.strides.size()) + " have a negative stride.");
      return false;
    }
  }
  if (tensor.numel == 0) {
    return true;
  }
  int64_t last = tensor.offset;
  bool overflow = false;
  for (size_t dim = 0; dim < tensor.view_shape.size(); ++dim) {
    int64_t reach = 0;
    overflow |= __builtin_mul_overflow(tensor.view_shape[dim] - 1, tensor.strides[dim], &reach);
    overflow |= __builtin_add_overflow(last, reach, &last);
  }
  if (overflow || last >= storage_numel) {
    Fail(kCreateApi, ACLNN_ERR_PARAM_INVALID,
         "the view " + DimsText(tensor.view_shape.data(), tensor.view_shape.size()) + " with strides " +
             DimsText(tensor.strides.data(), tensor.strides.size()) + " and offset " + std::to_string(tensor.offset) +
             " reaches beyond its storage " + DimsText(tensor.storage_shape.data(), tensor.storage_shape.size()) + ".");
    return false;
  }
  return true;
}

// The accessors' common null-argument check.
bool CheckAccessorArguments(const char *api, const aclTensor *tensor, std::initializer_list<const void *> results) {
  if (tensor == nullptr) {
    Fail(api, ACLNN_ERR_PARAM_NULLPTR, "the tensor is null.");
    return false;
  }
  for (const void *result : results) {
    if (result == nullptr) {
      Fail(api, ACLNN_ERR_PARAM_NULLPTR, "an output pointer is null.");
      return false;
    }
  }
  return true;
}

template <typename Value>
aclnnStatus CopyOutField(const char *api, const aclTensor *tensor, Value aclTensor::*field, Value *result) {
  if (!CheckAccessorArguments(api, tensor, {result})) {
    return ACLNN_ERR_PARAM_NULLPTR;
  }
  *result = tensor->*field;
  return ACLNN_SUCCESS;
}

// CANN hands out view metadata as new[] arrays that the caller releases with delete[].
aclnnStatus CopyOutDims(const char *api, const aclTensor *tensor, std::vector<int64_t> aclTensor::*field,
                        int64_t **values, uint64_t *count) {
  if (!CheckAccessorArguments(api, tensor, {values, count})) {
    return ACLNN_ERR_PARAM_NULLPTR;
  }
  return WithInternalErrorsCaught(api, ACLNN_ERR_INNER, ACLNN_ERR_INNER, [&] {
    const std::vector<int64_t> &source = tensor->*field;
    *values = new int64_t[source.size() + 1];  // + 1: never a zero-length new[]
    std::copy(source.begin(), source.end(), *values);
    *count = source.size();
    return ACLNN_SUCCESS;
  });
}

aclTensor *NewTensor(const int64_t *view_dims, uint64_t rank, int32_t dtype_code, const int64_t *strides,
                     int64_t offset, int32_t format_code, const int64_t *storage_dims, uint64_t storage_rank,
                     void *data) {
  int64_t view_numel = 0;
  int64_t storage_numel = 0;
  if (!CheckEnumCode("dataType", dtype_code) || !CheckEnumCode("format", format_code) ||
      !CheckDims("viewDims", view_dims, rank, &view_numel) ||
      !CheckDims("storageDims", storage_dims, storage_rank, &storage_numel)) {
    return nullptr;
  }
  auto tensor = std::make_unique<aclTensor>();
  tensor->view_shape.assign(view_dims, view_dims + rank);
  if (strides != nullptr) {
    tensor->strides.assign(strides, strides + rank);
  } else if (!ContiguousStrides(tensor->view_shape, &tensor->strides)) {
    Fail(kCreateApi, ACLNN_ERR_PARAM_INVALID,
         "viewDims " + DimsText(view_dims, rank) + " have contiguous strides beyond int64; pass strides.");
    return nullptr;
  }
  tensor->offset = offset;
  tensor->dtype = static_cast<aclDataType>(dtype_code);
  tensor->format = static_cast<aclFormat>(format_code);
  tensor->storage_shape.assign(storage_dims, storage_dims + storage_rank);
  tensor->data = data;
  tensor->numel = view_numel;
  if (!CheckViewInsideStorage(*tensor, storage_numel)) {
    return nullptr;
  }
  LiveTensors().Add(tensor.get());
  return tensor.release();
}

}  // namespace
}  // namespace ms_bcewl

using ms_bcewl::Fail;

extern "C" aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                                      const int64_t *stride, int64_t offset, aclFormat format,
                                      const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData) {
  aclTensor *const on_error = nullptr;
  const int32_t dtype_code = ms_bcewl::AbiEnumCode(&dataType);
  const int32_t format_code = ms_bcewl::AbiEnumCode(&format);
  return ms_bcewl::WithInternalErrorsCaught(ms_bcewl::kCreateApi, ACLNN_ERR_INNER, on_error, [&] {
    return ms_bcewl::NewTensor(viewDims, viewDimsNum, dtype_code, stride, offset, format_code, storageDims,
                               storageDimsNum, tensorData);
  });
}

extern "C" aclnnStatus aclDestroyTensor(const aclTensor *tensor) {
  if (tensor == nullptr) {
    return Fail("aclDestroyTensor", ACLNN_ERR_PARAM_NULLPTR, "the tensor is null.");
  }
  if (!ms_bcewl::LiveTensors().Claim(tensor)) {
    return Fail("aclDestroyTensor", ACLNN_ERR_PARAM_INVALID, "the tensor is unknown or already destroyed.");
  }
  delete tensor;
  return ACLNN_SUCCESS;
}

extern "C" aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims, uint64_t *viewDimsNum) {
  return ms_bcewl::CopyOutDims("aclGetViewShape", tensor, &aclTensor::view_shape, viewDims, viewDimsNum);
}

extern "C" aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue, uint64_t *stridesNum) {
  return ms_bcewl::CopyOutDims("aclGetViewStrides", tensor, &aclTensor::strides, stridesValue, stridesNum);
}

extern "C" aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims, uint64_t *storageDimsNum) {
  return ms_bcewl::CopyOutDims("aclGetStorageShape", tensor, &aclTensor::storage_shape, storageDims, storageDimsNum);
}

extern "C" aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset) {
  return ms_bcewl::CopyOutField("aclGetViewOffset", tensor, &aclTensor::offset, offset);
}

extern "C" aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format) {
  return ms_bcewl::CopyOutField("aclGetFormat", tensor, &aclTensor::format, format);
}

extern "C" aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType) {
  return ms_bcewl::CopyOutField("aclGetDataType", tensor, &aclTensor::dtype, dataType);
}

// acl/acl_rt.h and aclnn/aclnn_base.h on the host. Device memory is 64-byte aligned host memory; every live
// allocation and stream is registered, so that freeing or using an unknown or already released handle returns
// an error code instead of corrupting the heap. Launches run synchronously, so synchronizing only validates.

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

// kind_code: the caller's aclrtMemcpyKind as an int (host_runtime.h), converted once it is known to be one.
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
