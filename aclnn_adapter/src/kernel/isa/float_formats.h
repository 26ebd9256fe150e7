// IEEE binary16 (float16) and bfloat16 conversions. Widening is exact; narrowing rounds to nearest, ties to even;
// infinities stay infinities and NaNs stay (quiet) NaNs with the sign and the leading payload bits kept.
#ifndef MS_BCEWL_KERNEL_FLOAT_FORMATS_H_
#define MS_BCEWL_KERNEL_FLOAT_FORMATS_H_

#include <cstdint>
#include <cstring>

namespace ms_bcewl::kernel {

inline uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

inline float FloatFromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// Adds one unit in the last kept place when the dropped bits are above half, or exactly half with an odd
// kept part: round to nearest, ties to even.
inline uint32_t ShiftRightRoundingToEven(uint32_t bits, int shift) {
  const uint32_t kept = bits >> shift;
  const uint32_t dropped = bits & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  return kept + ((dropped > half || (dropped == half && (kept & 1u))) ? 1u : 0u);
}

inline float HalfToFloat(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1Fu;
  uint32_t mantissa = half & 0x3FFu;
  if (exponent == 0x1Fu) {
    return FloatFromBits(sign | 0x7F800000u | (mantissa << 13));
  }
  if (exponent != 0) {
    return FloatFromBits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  }
  if (mantissa == 0) {
    return FloatFromBits(sign);
  }
  uint32_t float_exponent = 113;  // a subnormal half is mantissa * 2^-24: normalise it
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    --float_exponent;
  }
  return FloatFromBits(sign | (float_exponent << 23) | ((mantissa & 0x3FFu) << 13));
}

inline uint16_t FloatToHalf(float value) {
  const uint32_t bits = FloatBits(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  constexpr uint32_t kInfinity = 0x7F800000u;
  constexpr uint32_t kFirstRoundingToInfinity = 0x477FF000u;  // 65520 = halfway from 65504 to 2^16
  constexpr uint32_t kSmallestNormalHalf = 0x38800000u;       // 2^-14
  constexpr uint32_t kHalfOfSmallestSubnormal = 0x33000000u;  // 2^-25: this and below round to zero
  if (magnitude > kInfinity) {
    return static_cast<uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
  }
  if (magnitude >= kFirstRoundingToInfinity) {
    return static_cast<uint16_t>(sign | 0x7C00u);
  }
  if (magnitude >= kSmallestNormalHalf) {
    return static_cast<uint16_t>(sign | ShiftRightRoundingToEven(magnitude - 0x38000000u, 13));
  }
  if (magnitude <= kHalfOfSmallestSubnormal) {
    return sign;
  }
  // A subnormal half counts units of 2^-24; the float is (mantissa | implicit bit) * 2^(exponent - 150).
  const int exponent = static_cast<int>(magnitude >> 23);
  const uint32_t mantissa = (magnitude & 0x7FFFFFu) | 0x800000u;
  return static_cast<uint16_t>(sign | ShiftRightRoundingToEven(mantissa, 126 - exponent));
}

inline float BFloat16ToFloat(uint16_t bfloat) { return FloatFromBits(static_cast<uint32_t>(bfloat) << 16); }

inline uint16_t FloatToBFloat16(float value) {
  const uint32_t bits = FloatBits(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  }
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// double -> float rounding toward zero, then setting the last bit when inexact ("round to odd"). Narrowing that
// result to half or bfloat16 with ties-to-even gives the correctly rounded double -> half / bfloat16, which a
// plain double -> float -> half would not at ties (double rounding).
inline float DoubleToFloatRoundingToOdd(double value) {
  float nearest = static_cast<float>(value);
  if (static_cast<double>(nearest) == value || nearest != nearest) {
    return nearest;
  }
  uint32_t bits = FloatBits(nearest);
  if (static_cast<double>(nearest) > value ? value > 0 : value < 0) {
    --bits;  // rounded away from zero (possibly to infinity): step back toward zero
  }
  return FloatFromBits(bits | 1u);
}

}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_FLOAT_FORMATS_H_
