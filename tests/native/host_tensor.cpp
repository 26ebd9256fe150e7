#include "host_tensor.h"

#include <stdexcept>

namespace test {

int64_t NumelOf(const Shape &shape) {
  int64_t numel = 1;
  for (int64_t dim : shape) {
    numel *= dim;
  }
  return numel;
}

std::string ShapeText(const Shape &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    text += (i == 0 ? "" : ",") + std::to_string(shape[i]);
  }
  return text + "]";
}

Shape ContiguousStrides(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (size_t dim = shape.size(); dim > 1; --dim) {
    strides[dim - 2] = strides[dim - 1] * shape[dim - 1];
  }
  return strides;
}

Shape ColumnMajorStrides(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (size_t dim = 1; dim < shape.size(); ++dim) {
    strides[dim] = strides[dim - 1] * shape[dim - 1];
  }
  return strides;
}

HostTensor::HostTensor(Shape shape, aclDataType dtype) : HostTensor(shape, dtype, ContiguousStrides(shape), 0) {}

HostTensor::HostTensor(Shape shape, aclDataType dtype, Shape strides, int64_t offset)
    : shape_(std::move(shape)), dtype_(dtype), strides_(std::move(strides)), offset_(offset) {
  int64_t last = offset_;
  for (size_t dim = 0; dim < shape_.size(); ++dim) {
    last += (shape_[dim] - 1) * strides_[dim];
  }
  storage_elements_ = numel() == 0 ? offset_ + 1 : last + 1;
  storage_.assign((storage_elements_ * DtypeBytes(dtype_) + 7) / 8, 0);
  const int64_t storage_dims[] = {storage_elements_};
  tensor_ = aclCreateTensor(shape_.data(), shape_.size(), dtype_, strides_.data(), offset_, ACL_FORMAT_ND, storage_dims,
                            1, Data());
  if (tensor_ == nullptr) {
    throw std::runtime_error("aclCreateTensor rejected a test tensor " + ShapeText(shape_));
  }
}

HostTensor::~HostTensor() { aclDestroyTensor(tensor_); }

int64_t HostTensor::StorageIndex(int64_t logical) const {
  int64_t index = offset_;
  for (size_t dim = shape_.size(); dim-- > 0;) {
    index += (logical % shape_[dim]) * strides_[dim];
    logical /= shape_[dim];
  }
  return index;
}

void HostTensor::Set(const std::vector<double> &values) {
  if (static_cast<int64_t>(values.size()) != numel()) {
    throw std::runtime_error("HostTensor::Set: wrong value count for " + ShapeText(shape_));
  }
  for (int64_t i = 0; i < numel(); ++i) {
    EncodeElement(Data(), StorageIndex(i), dtype_, values[i]);
  }
}

void HostTensor::FillStorage(double value) {
  for (int64_t i = 0; i < storage_elements_; ++i) {
    EncodeElement(Data(), i, dtype_, value);
  }
}

std::vector<double> HostTensor::Values() const {
  std::vector<double> values(numel());
  for (int64_t i = 0; i < numel(); ++i) {
    values[i] = DecodeElement(Data(), StorageIndex(i), dtype_);
  }
  return values;
}

std::vector<uint8_t> HostTensor::ViewBytes() const {
  const size_t bytes = DtypeBytes(dtype_);
  std::vector<uint8_t> result;
  for (int64_t i = 0; i < numel(); ++i) {
    const auto *element = reinterpret_cast<const uint8_t *>(Data()) + StorageIndex(i) * bytes;
    result.insert(result.end(), element, element + bytes);
  }
  return result;
}

std::vector<double> HostTensor::ValuesOutsideView() const {
  std::vector<bool> in_view(storage_elements_, false);
  for (int64_t i = 0; i < numel(); ++i) {
    in_view[StorageIndex(i)] = true;
  }
  std::vector<double> outside;
  for (int64_t i = 0; i < storage_elements_; ++i) {
    if (!in_view[i]) {
      outside.push_back(DecodeElement(Data(), i, dtype_));
    }
  }
  return outside;
}

}  // namespace test
