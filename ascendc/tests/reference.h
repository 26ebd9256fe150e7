// Float64 reference of the loss and its gradient (docs/contract.md §2 Loss and gradients), decoders of the 16-bit
// float formats that do not share code with the simulation, and the tolerance rule of the kernel tests.
#ifndef MS_BCEWL_ASCENDC_TESTS_REFERENCE_H_
#define MS_BCEWL_ASCENDC_TESTS_REFERENCE_H_

#include <cstdint>

#include "kernel_operator.h"

namespace test {

double DecodeHalfBits(uint16_t bits);
double DecodeBFloat16Bits(uint16_t bits);

inline double ToDouble(float value) { return value; }
inline double ToDouble(half value) { return DecodeHalfBits(value.bits); }
inline double ToDouble(bfloat16_t value) { return DecodeBFloat16Bits(value.bits); }

template <typename T>
T FromDouble(double value) {
  return static_cast<T>(static_cast<float>(value));
}

// The reference value and the size of the terms it is made of (the scale of float32 rounding errors).
struct Expected {
  double value;
  double magnitude;
};

// loss = w * ((1 - y) * x - (1 + (p - 1) * y) * logsig(x)), logsig(x) = min(x, 0) - log1p(exp(-|x|)); at
// x = +-inf the limits of the host backend (aclnn_adapter/src/kernel/isa/bcewl_kernel_plain.cpp): 0 where an exactly
// zero factor (1 - y, p * y or w) meets the infinite term, NaN propagating.
Expected ReferenceLoss(double x, double y, double w, double p);
// dx = w * ((p * y + 1 - y) * sigmoid(x) - p * y) * g * scale.
Expected ReferenceGradient(double x, double y, double g, double w, double p, double scale);

// Rounding of the output dtype: relative half-ulp and the absolute step near zero.
struct OutputRounding {
  double relative;
  double absolute;
};
template <typename T>
OutputRounding RoundingOf();

// |got - expected| within float32 arithmetic error on the terms plus one rounding to the output dtype;
// NaN must match NaN and infinities must match exactly.
bool Matches(double got, const Expected &expected, const OutputRounding &rounding);

}  // namespace test

#endif  // MS_BCEWL_ASCENDC_TESTS_REFERENCE_H_
