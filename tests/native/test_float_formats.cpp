// The library's header-only float16 / bfloat16 conversions against the tests' own codec (dtype_codec.cpp).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "host_tensor.h"
#include "kernel/driver/plan.h"
#include "kernel/isa/float_formats.h"
#include "test_harness.h"

namespace {

using ms_bcewl::kernel::BFloat16ToFloat;
using ms_bcewl::kernel::FloatToBFloat16;
using ms_bcewl::kernel::FloatToHalf;
using ms_bcewl::kernel::HalfToFloat;

double TestDecode(uint16_t bits, aclDataType dtype) { return test::DecodeElement(&bits, 0, dtype); }

uint16_t TestEncode(double value, aclDataType dtype) {
  uint16_t bits = 0;
  test::EncodeElement(&bits, 0, dtype, value);
  return bits;
}

bool SameValue(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

using Widen = float (*)(uint16_t);
using Narrow = uint16_t (*)(float);

// Exact widening of all 65536 patterns; NaN keeps its sign.
void ExpectExactWidening(Widen widen, aclDataType dtype) {
  int mismatches = 0;
  for (uint32_t bits = 0; bits <= 0xFFFFu; ++bits) {
    const float wide = widen(static_cast<uint16_t>(bits));
    const bool nan_sign_kept = !std::isnan(wide) || std::signbit(wide) == ((bits & 0x8000u) != 0);
    mismatches += !SameValue(wide, TestDecode(static_cast<uint16_t>(bits), dtype)) || !nan_sign_kept;
  }
  EXPECT_EQ(mismatches, 0);
}

// Narrowing: every value round-trips; the midpoint of two neighbours goes to the even one, and the floats just
// beside the midpoint go to the nearer one (the test codec decides, from the exact doubles).
void ExpectRoundingToNearestEven(Widen widen, Narrow narrow, aclDataType dtype, uint16_t largest_finite) {
  int mismatches = 0;
  for (uint32_t bits = 0; bits < largest_finite; ++bits) {
    const float low = widen(static_cast<uint16_t>(bits));
    const float high = widen(static_cast<uint16_t>(bits + 1));
    const float middle = static_cast<float>((static_cast<double>(low) + high) / 2);
    for (float value : {low, middle, std::nextafter(middle, 0.0f), std::nextafter(middle, 1e30f), -middle}) {
      mismatches += narrow(value) != TestEncode(value, dtype);
    }
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace

TEST_CASE(half_widening_is_exact_for_every_pattern) { ExpectExactWidening(HalfToFloat, ACL_FLOAT16); }

TEST_CASE(bfloat16_widening_is_exact_for_every_pattern) { ExpectExactWidening(BFloat16ToFloat, ACL_BF16); }

TEST_CASE(half_narrowing_rounds_to_nearest_even) {
  ExpectRoundingToNearestEven(HalfToFloat, FloatToHalf, ACL_FLOAT16, 0x7BFF);
}

TEST_CASE(bfloat16_narrowing_rounds_to_nearest_even) {
  ExpectRoundingToNearestEven(BFloat16ToFloat, FloatToBFloat16, ACL_BF16, 0x7F7F);
}

TEST_CASE(narrowing_handles_overflow_underflow_infinity_and_nan) {
  EXPECT_EQ(FloatToHalf(65519.996f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);
  EXPECT_EQ(FloatToHalf(1e30f), 0x7C00);
  EXPECT_EQ(FloatToHalf(-INFINITY), 0xFC00);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(FloatToHalf(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(FloatToHalf(-std::ldexp(1.0f, -30)), 0x8000);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(NAN))));
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(NAN))));
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(-NAN))));
  EXPECT_EQ(FloatToBFloat16(3.4e38f), 0x7F80);  // above the largest bfloat16 by more than half a step
  EXPECT_EQ(FloatToBFloat16(-INFINITY), 0xFF80);
}

// A double just above a half-way point that float rounding would land exactly on: narrowing through float
// would round down to even; the correctly rounded result is the upper neighbour.
TEST_CASE(double_results_are_rounded_once_to_half_and_bfloat16) {
  using ms_bcewl::kernel::DType;
  using ms_bcewl::kernel::StoreElementFromDouble;
  uint16_t stored = 0;
  StoreElementFromDouble(&stored, 0, DType::kFloat16, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40));
  EXPECT_EQ(stored, TestEncode(1.0 + std::ldexp(1.0, -10), ACL_FLOAT16));
  StoreElementFromDouble(&stored, 0, DType::kFloat16, 1.0 + std::ldexp(1.0, -11) - std::ldexp(1.0, -40));
  EXPECT_EQ(stored, TestEncode(1.0, ACL_FLOAT16));
  StoreElementFromDouble(&stored, 0, DType::kBFloat16, -(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -45)));
  EXPECT_EQ(stored, TestEncode(-(1.0 + std::ldexp(1.0, -7)), ACL_BF16));
  StoreElementFromDouble(&stored, 0, DType::kFloat16, 1e300);
  EXPECT_EQ(stored, 0x7C00);
}
