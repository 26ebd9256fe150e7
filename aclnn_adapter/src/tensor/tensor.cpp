// aclCreateTensor / aclDestroyTensor and the aclGet* accessors. A tensor is accepted only if its view lies
// inside its storage, so that no later kernel can read or write outside the buffer the caller described.
#include "tensor/tensor.h"

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <string>

#include "runtime/abi_enum.h"
#include "runtime/error_message.h"
#include "runtime/live_handles.h"

namespace ms_bcewl {
namespace {

// Far above the rank any operator accepts (8): ranks up to this are created and then rejected by the operator
// with a clear message; anything larger is an obviously corrupt count.
constexpr uint64_t kMaxCreatableRank = 64;
constexpr const char *kCreateApi = "aclCreateTensor";

// aclCreateTensor reads its enum arguments as ints (runtime/abi_enum.h) and rejects what the enums cannot hold:
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
