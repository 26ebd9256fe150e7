#include "device_tensor.h"

#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>

namespace ms_bcewl::ascend {
namespace {

// aclGetViewShape / aclGetViewStrides hand out new[] arrays that the caller deletes.
std::vector<int64_t> TakeDims(aclnnStatus status, int64_t *values, uint64_t count, const char *what) {
  const std::unique_ptr<int64_t[]> owned(values);
  if (status != ACLNN_SUCCESS) {
    throw std::runtime_error(std::string(what) + " failed with " + std::to_string(status));
  }
  return std::vector<int64_t>(values, values + count);
}

std::vector<int64_t> ViewShape(const aclTensor *tensor) {
  int64_t *dims = nullptr;
  uint64_t count = 0;
  const aclnnStatus status = aclGetViewShape(tensor, &dims, &count);
  return TakeDims(status, dims, count, "aclGetViewShape");
}

std::vector<int64_t> ViewStrides(const aclTensor *tensor) {
  int64_t *strides = nullptr;
  uint64_t count = 0;
  const aclnnStatus status = aclGetViewStrides(tensor, &strides, &count);
  return TakeDims(status, strides, count, "aclGetViewStrides");
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t dim = shape.size(); dim > 1; --dim) {
    strides[dim - 2] = strides[dim - 1] * shape[dim - 1];
  }
  return strides;
}

}  // namespace

TensorFacts FactsOf(const aclTensor *tensor) {
  TensorFacts facts;
  if (tensor == nullptr) {
    return facts;
  }
  aclDataType dtype = ACL_DT_UNDEFINED;
  if (aclGetDataType(tensor, &dtype) != ACLNN_SUCCESS) {
    throw std::runtime_error("aclGetDataType failed");
  }
  facts.present = true;
  facts.shape = ViewShape(tensor);
  facts.dtype = static_cast<int>(dtype);
  return facts;
}

bool IsDenseFromStart(const aclTensor *tensor) {
  int64_t offset = 0;
  if (aclGetViewOffset(tensor, &offset) != ACLNN_SUCCESS) {
    throw std::runtime_error("aclGetViewOffset failed");
  }
  const std::vector<int64_t> shape = ViewShape(tensor);
  const std::vector<int64_t> strides = ViewStrides(tensor);
  const std::vector<int64_t> dense = RowMajorStrides(shape);
  for (size_t dim = 0; dim < shape.size(); ++dim) {
    if (shape[dim] != 1 && strides[dim] != dense[dim]) {
      return false;  // a stride of a size-1 dim is never used
    }
  }
  return offset == 0;
}

int64_t ElementCount(const std::vector<int64_t> &shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

uint64_t ElementBytes(aclDataType dtype) { return dtype == ACL_FLOAT ? 4 : 2; }

OwnedTensor DenseTensor(const std::vector<int64_t> &shape, aclDataType dtype, void *data) {
  const std::vector<int64_t> strides = RowMajorStrides(shape);
  aclTensor *tensor = aclCreateTensor(shape.data(), shape.size(), dtype, strides.data(), 0, ACL_FORMAT_ND,
                                      shape.data(), shape.size(), data);
  if (tensor == nullptr) {
    throw std::runtime_error("aclCreateTensor failed for a workspace tensor");
  }
  return OwnedTensor(tensor);
}

OwnedIntArray AllDims(size_t rank) {
  std::vector<int64_t> dims(rank);
  std::iota(dims.begin(), dims.end(), int64_t{0});
  aclIntArray *array = aclCreateIntArray(dims.data(), dims.size());
  if (array == nullptr) {
    throw std::runtime_error("aclCreateIntArray failed");
  }
  return OwnedIntArray(array);
}

OwnedScalar FloatScalar(float value) {
  aclScalar *scalar = aclCreateScalar(&value, ACL_FLOAT);
  if (scalar == nullptr) {
    throw std::runtime_error("aclCreateScalar failed");
  }
  return OwnedScalar(scalar);
}

}  // namespace ms_bcewl::ascend
