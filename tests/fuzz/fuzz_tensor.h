// The tensors the fuzzer hands to aclCreateTensor: a descriptor (what it passes), the verdict aclCreateTensor
// owes it, and the element indices and values of a view over its storage. A storage is a heap buffer of exactly
// the bytes its descriptor declares, so that ASan reports any access outside what the caller described.
#ifndef MS_BCEWL_TESTS_FUZZ_FUZZ_TENSOR_H_
#define MS_BCEWL_TESTS_FUZZ_FUZZ_TENSOR_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "aclnn/acl_meta.h"
#include "host_tensor.h"

namespace fuzz {

using test::Shape;
using Storage = std::vector<unsigned char>;

// The aclCreateTensor arguments; dims, strides and offset count elements of dtype.
struct Descriptor {
  Shape dims;
  bool null_dims = false;        // viewDims = nullptr with viewDimsNum = dims.size()
  std::optional<Shape> strides;  // nullopt: stride = nullptr (contiguous)
  int64_t offset = 0;
  int32_t dtype = ACL_FLOAT;       // any int, as a C caller may pass
  int32_t format = ACL_FORMAT_ND;  // any int; the operations ignore it
  Shape storage_dims;
  bool null_storage_dims = false;  // storageDims = nullptr with storageDimsNum = storage_dims.size()
  bool null_data = false;
};

// Any code: the size of one element, or 1 for codes that have none (so that a read of such a tensor overruns).
size_t ElementBytes(int32_t dtype);
bool IsSupportedDtype(int32_t dtype);  // float32, float16, bfloat16

// The product of dims, or nullopt if a partial product leaves int64 (or a dim is negative).
std::optional<int64_t> CountOf(const Shape &dims);

// The strides the view has: the given ones, else contiguous; nullopt if contiguous strides leave int64 (possible
// for an empty view, whose element count does not bound them).
std::optional<Shape> EffectiveStrides(const Descriptor &descriptor);

// The largest storage index + 1 a non-empty view reaches, or nullopt if it is beyond int64 or negative indices
// are reached.
std::optional<int64_t> StorageNeeded(const Descriptor &descriptor);

// What aclCreateTensor owes a descriptor. It must reject a view that reaches outside its storage, a negative dim,
// a null array with a count, and a dtype or format code outside the values its enum can hold. It may reject what
// the headers leave open and the adapter limits (negative strides, a negative offset of an empty view, more than 64
// dims, counts or contiguous strides beyond int64). It must accept the rest.
enum class Creation { kMustAccept, kMayReject, kMustReject };
Creation ExpectedCreation(const Descriptor &descriptor);

aclTensor *CreateTensor(const Descriptor &descriptor, Storage *storage);

// Row-major storage indices of the view's elements (the view must be accepted and small).
std::vector<int64_t> ViewIndices(const Descriptor &descriptor);

// The view's values, row-major (float32, float16 or bfloat16).
std::vector<double> ViewValues(const Descriptor &descriptor, const Storage &storage);

}  // namespace fuzz

#endif  // MS_BCEWL_TESTS_FUZZ_FUZZ_TENSOR_H_
