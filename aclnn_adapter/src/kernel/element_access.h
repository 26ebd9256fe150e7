// Loading an element as float32 and storing float32 / float64 results in the three supported dtypes.
#ifndef MS_BCEWL_KERNEL_ELEMENT_ACCESS_H_
#define MS_BCEWL_KERNEL_ELEMENT_ACCESS_H_

#include <cstddef>
#include <cstdint>

#include "kernel/bcewl_kernel.h"
#include "kernel/float_formats.h"

namespace ms_bcewl::kernel {

inline size_t ElementBytes(DType dtype) { return dtype == DType::kFloat32 ? 4 : 2; }

inline float LoadElement(const void *data, int64_t index, DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return HalfToFloat(static_cast<const uint16_t *>(data)[index]);
    case DType::kBFloat16:
      return BFloat16ToFloat(static_cast<const uint16_t *>(data)[index]);
    case DType::kFloat32:
      break;
  }
  return static_cast<const float *>(data)[index];
}

inline void StoreElement(void *data, int64_t index, DType dtype, float value) {
  switch (dtype) {
    case DType::kFloat16:
      static_cast<uint16_t *>(data)[index] = FloatToHalf(value);
      return;
    case DType::kBFloat16:
      static_cast<uint16_t *>(data)[index] = FloatToBFloat16(value);
      return;
    case DType::kFloat32:
      static_cast<float *>(data)[index] = value;
      return;
  }
}

// One correctly rounded cast from the float64 accumulator to the destination dtype.
inline void StoreElementFromDouble(void *data, int64_t index, DType dtype, double value) {
  if (dtype == DType::kFloat32) {
    static_cast<float *>(data)[index] = static_cast<float>(value);
  } else {
    StoreElement(data, index, dtype, DoubleToFloatRoundingToOdd(value));
  }
}

}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_ELEMENT_ACCESS_H_
