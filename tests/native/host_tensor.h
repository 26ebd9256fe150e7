// Test-side tensors: host storage in any of the three dtypes, any strided layout, and the aclTensor over it.
// Values are converted with the tests' own code (dtype_codec.cpp), not the library's.
#ifndef MS_BCEWL_TESTS_NATIVE_HOST_TENSOR_H_
#define MS_BCEWL_TESTS_NATIVE_HOST_TENSOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "aclnn/acl_meta.h"

namespace test {

using Shape = std::vector<int64_t>;

int64_t NumelOf(const Shape &shape);
std::string ShapeText(const Shape &shape);

// Exact decoding of a stored element, and encoding of a double to the nearest value of the dtype (ties to even).
double DecodeElement(const void *data, int64_t index, aclDataType dtype);
void EncodeElement(void *data, int64_t index, aclDataType dtype, double value);
double RoundToDtype(double value, aclDataType dtype);
size_t DtypeBytes(aclDataType dtype);

Shape ContiguousStrides(const Shape &shape);
// Strides of a column-major layout: the transpose of a contiguous tensor of the reversed shape.
Shape ColumnMajorStrides(const Shape &shape);

class HostTensor {
 public:
  HostTensor(Shape shape, aclDataType dtype);
  HostTensor(Shape shape, aclDataType dtype, Shape strides, int64_t offset);
  ~HostTensor();
  HostTensor(const HostTensor &) = delete;
  HostTensor &operator=(const HostTensor &) = delete;

  aclTensor *get() const { return tensor_; }
  const Shape &shape() const { return shape_; }
  aclDataType dtype() const { return dtype_; }
  int64_t numel() const { return NumelOf(shape_); }

  // Writes values (row-major over the view), each rounded to the dtype.
  void Set(const std::vector<double> &values);
  // Writes value to every storage element, including those outside the view.
  void FillStorage(double value);
  // The view's values, row-major.
  std::vector<double> Values() const;
  // The raw bytes of the view's elements, row-major (for bitwise comparisons).
  std::vector<uint8_t> ViewBytes() const;
  // The storage elements outside the view (must be untouched by an operator writing the view).
  std::vector<double> ValuesOutsideView() const;

 private:
  int64_t StorageIndex(int64_t logical) const;
  void *Data() const { return const_cast<uint64_t *>(storage_.data()); }

  Shape shape_;
  aclDataType dtype_;
  Shape strides_;
  int64_t offset_;
  int64_t storage_elements_;
  std::vector<uint64_t> storage_;  // 8-byte words, so every dtype is aligned
  aclTensor *tensor_ = nullptr;
};

}  // namespace test

#endif  // MS_BCEWL_TESTS_NATIVE_HOST_TENSOR_H_
