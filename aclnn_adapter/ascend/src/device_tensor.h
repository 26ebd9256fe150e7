// CANN tensors seen from this library: their facts (for the shared checks and the plan), and the tensors,
// arrays and scalars this library creates itself, each released when it goes out of scope.
#ifndef MS_BCEWL_ASCEND_DEVICE_TENSOR_H_
#define MS_BCEWL_ASCEND_DEVICE_TENSOR_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "aclnn/acl_meta.h"
#include "shared_checks.h"
#include "status_codes.h"

namespace ms_bcewl::ascend {

// present = false for a null tensor. Throws std::runtime_error if CANN cannot describe the tensor.
TensorFacts FactsOf(const aclTensor *tensor);

// Row-major strides from the first element of storage: what the op package's kernels can read as it is.
bool IsDenseFromStart(const aclTensor *tensor);

int64_t ElementCount(const std::vector<int64_t> &shape);
uint64_t ElementBytes(aclDataType dtype);

struct TensorDeleter {
  void operator()(aclTensor *tensor) const { aclDestroyTensor(tensor); }
};
struct IntArrayDeleter {
  void operator()(aclIntArray *array) const { aclDestroyIntArray(array); }
};
struct ScalarDeleter {
  void operator()(aclScalar *scalar) const { aclDestroyScalar(scalar); }
};
using OwnedTensor = std::unique_ptr<aclTensor, TensorDeleter>;
using OwnedIntArray = std::unique_ptr<aclIntArray, IntArrayDeleter>;
using OwnedScalar = std::unique_ptr<aclScalar, ScalarDeleter>;

// A dense ND tensor of `shape` and `dtype` over device memory at `data`. Throws if CANN refuses it.
OwnedTensor DenseTensor(const std::vector<int64_t> &shape, aclDataType dtype, void *data);
// [0, 1, ..., rank - 1]: every dim, for a reduction to one value.
OwnedIntArray AllDims(size_t rank);
OwnedScalar FloatScalar(float value);

}  // namespace ms_bcewl::ascend

#endif  // MS_BCEWL_ASCEND_DEVICE_TENSOR_H_
