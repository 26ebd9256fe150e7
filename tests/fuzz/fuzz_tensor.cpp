#include "fuzz_tensor.h"

#include <algorithm>

namespace fuzz {
namespace {

constexpr size_t kMaxDescribableRank = 64;

// The values an enum whose enumerators lie in -1 .. 47 can hold (aclDataType, aclFormat): the smallest two's
// complement bit-field that holds them.
bool IsEnumValue(int32_t code) { return code >= -64 && code <= 63; }

bool HasNegative(const Shape &values) {
  return std::any_of(values.begin(), values.end(), [](int64_t value) { return value < 0; });
}

}  // namespace

size_t ElementBytes(int32_t dtype) {
  switch (dtype) {
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
    case ACL_UINT16:
      return 2;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_COMPLEX32:
      return 4;
    case ACL_INT64:
    case ACL_UINT64:
    case ACL_DOUBLE:
    case ACL_COMPLEX64:
      return 8;
    case ACL_COMPLEX128:
      return 16;
    default:
      return 1;
  }
}

bool IsSupportedDtype(int32_t dtype) { return dtype == ACL_FLOAT || dtype == ACL_FLOAT16 || dtype == ACL_BF16; }

std::optional<int64_t> CountOf(const Shape &dims) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0 || __builtin_mul_overflow(count, dim, &count)) {
      return std::nullopt;
    }
  }
  return count;
}

std::optional<Shape> EffectiveStrides(const Descriptor &descriptor) {
  if (descriptor.strides) {
    return descriptor.strides;
  }
  Shape strides(descriptor.dims.size(), 1);
  for (size_t dim = descriptor.dims.size(); dim > 1; --dim) {
    if (__builtin_mul_overflow(strides[dim - 1], std::max<int64_t>(descriptor.dims[dim - 1], 1), &strides[dim - 2])) {
      return std::nullopt;
    }
  }
  return strides;
}

std::optional<int64_t> StorageNeeded(const Descriptor &descriptor) {
  const std::optional<Shape> effective = EffectiveStrides(descriptor);
  if (!effective) {
    return std::nullopt;
  }
  const Shape &strides = *effective;
  __int128 lowest = descriptor.offset;
  __int128 highest = descriptor.offset;
  for (size_t dim = 0; dim < descriptor.dims.size(); ++dim) {
    __int128 reach = 0;
    if (__builtin_mul_overflow(static_cast<__int128>(descriptor.dims[dim] - 1), strides[dim], &reach) ||
        __builtin_add_overflow(reach < 0 ? lowest : highest, reach, reach < 0 ? &lowest : &highest)) {
      return std::nullopt;
    }
  }
  if (lowest < 0 || highest >= INT64_MAX) {
    return std::nullopt;
  }
  return static_cast<int64_t>(highest) + 1;
}

Creation ExpectedCreation(const Descriptor &d) {
  if ((d.null_dims && !d.dims.empty()) || (d.null_storage_dims && !d.storage_dims.empty()) || HasNegative(d.dims) ||
      HasNegative(d.storage_dims) || !IsEnumValue(d.dtype) || !IsEnumValue(d.format)) {
    return Creation::kMustReject;
  }
  const std::optional<int64_t> numel = CountOf(d.dims);
  const std::optional<int64_t> storage = CountOf(d.storage_dims);
  const std::optional<Shape> strides = EffectiveStrides(d);
  const bool adapter_limit = d.dims.size() > kMaxDescribableRank || d.storage_dims.size() > kMaxDescribableRank ||
                             !numel || !storage || !strides || HasNegative(*strides) || d.offset < 0;
  const bool empty = std::find(d.dims.begin(), d.dims.end(), 0) != d.dims.end();
  if (!empty) {
    const std::optional<int64_t> needed = StorageNeeded(d);
    if (!needed || (storage && *needed > *storage)) {
      return Creation::kMustReject;
    }
  }
  return adapter_limit ? Creation::kMayReject : Creation::kMustAccept;
}

aclTensor *CreateTensor(const Descriptor &d, Storage *storage) {
  const Shape strides = d.strides.value_or(Shape{});
  // The enum arguments are passed as the ints they are in the C ABI, whatever their value.
  return aclCreateTensor(d.null_dims ? nullptr : d.dims.data(), d.dims.size(), static_cast<aclDataType>(d.dtype),
                         d.strides ? strides.data() : nullptr, d.offset, static_cast<aclFormat>(d.format),
                         d.null_storage_dims ? nullptr : d.storage_dims.data(), d.storage_dims.size(),
                         d.null_data ? nullptr : storage->data());
}

std::vector<int64_t> ViewIndices(const Descriptor &descriptor) {
  const Shape strides = EffectiveStrides(descriptor).value();
  const Shape &dims = descriptor.dims;
  std::vector<int64_t> indices(static_cast<size_t>(CountOf(dims).value_or(0)));
  Shape position(dims.size(), 0);
  int64_t index = descriptor.offset;
  for (int64_t &element : indices) {
    element = index;
    for (size_t dim = dims.size(); dim-- > 0;) {
      if (++position[dim] < dims[dim]) {
        index += strides[dim];
        break;
      }
      index -= (dims[dim] - 1) * strides[dim];
      position[dim] = 0;
    }
  }
  return indices;
}

std::vector<double> ViewValues(const Descriptor &descriptor, const Storage &storage) {
  std::vector<double> values;
  for (int64_t index : ViewIndices(descriptor)) {
    values.push_back(test::DecodeElement(storage.data(), index, static_cast<aclDataType>(descriptor.dtype)));
  }
  return values;
}

}  // namespace fuzz
