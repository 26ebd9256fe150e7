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
  static const struct {
    size_t bytes;
    std::vector<int32_t> dtypes;
  } kSizes[] = {{2, {ACL_FLOAT16, ACL_BF16, ACL_INT16, ACL_UINT16}},
                {4, {ACL_FLOAT, ACL_INT32, ACL_UINT32, ACL_COMPLEX32}},
                {8, {ACL_INT64, ACL_UINT64, ACL_DOUBLE, ACL_COMPLEX64}},
                {16, {ACL_COMPLEX128}}};
  for (const auto &size : kSizes) {
    if (std::find(size.dtypes.begin(), size.dtypes.end(), dtype) != size.dtypes.end()) {
      return size.bytes;
    }
  }
  return 1;
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

namespace {

// What no caller may pass: a null array with a count, a negative dim, a code its enum cannot hold.
bool IsMalformed(const Descriptor &d) {
  const bool null_with_count = (d.null_dims && !d.dims.empty()) || (d.null_storage_dims && !d.storage_dims.empty());
  return null_with_count || HasNegative(d.dims) || HasNegative(d.storage_dims) || !IsEnumValue(d.dtype) ||
         !IsEnumValue(d.format);
}

// What the headers leave open and the adapter may reject.
bool IsBeyondAdapterLimits(const Descriptor &d) {
  const std::optional<Shape> strides = EffectiveStrides(d);
  return d.dims.size() > kMaxDescribableRank || d.storage_dims.size() > kMaxDescribableRank || !CountOf(d.dims) ||
         !CountOf(d.storage_dims) || !strides || HasNegative(*strides) || d.offset < 0;
}

// An empty view reaches no storage, whatever its strides and offset.
bool ReachesOutsideStorage(const Descriptor &d) {
  if (std::find(d.dims.begin(), d.dims.end(), 0) != d.dims.end()) {
    return false;
  }
  const std::optional<int64_t> needed = StorageNeeded(d);
  const std::optional<int64_t> storage = CountOf(d.storage_dims);
  return !needed || (storage && *needed > *storage);
}

}  // namespace

Creation ExpectedCreation(const Descriptor &d) {
  if (IsMalformed(d) || ReachesOutsideStorage(d)) {
    return Creation::kMustReject;
  }
  return IsBeyondAdapterLimits(d) ? Creation::kMayReject : Creation::kMustAccept;
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
