#include "reference.h"

#include <cmath>

namespace test {
namespace {

constexpr double kFloat32Epsilon = 1.0 / 8388608.0;  // 2^-23
// Exp, Ln and about twenty float32 operations per element, each within an ulp or two of its inputs.
constexpr double kArithmeticUlps = 64.0;

double LogSigmoid(double x) { return std::fmin(x, 0.0) - std::log1p(std::exp(-std::fabs(x))); }

// c * v, except that c == 0 times an infinite v is 0 (the limit of c * f(x) for c = 0); NaN stays NaN.
double ProductWithZeroLimit(double c, double v) { return c == 0.0 && std::isinf(v) ? 0.0 : c * v; }

// Size of the terms of 1 + (p - 1) * y: float32 rounds each of them, so its error scales with this, not with
// the (possibly much smaller) result.
double FactorMagnitude(double y, double p) { return std::fabs((p - 1.0) * y) + 1.0; }

// A 16-bit IEEE-style float with `mantissaBits` fraction bits and the rest (after the sign) exponent.
double DecodeBinary16(uint16_t bits, int mantissaBits) {
  const int exponentBits = 15 - mantissaBits;
  const int bias = (1 << (exponentBits - 1)) - 1;
  const int maxExponent = (1 << exponentBits) - 1;
  const double sign = (bits & 0x8000u) != 0 ? -1.0 : 1.0;
  const int exponent = (bits >> mantissaBits) & maxExponent;
  const int mantissa = bits & ((1 << mantissaBits) - 1);
  if (exponent == maxExponent) return mantissa != 0 ? std::nan("") : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, 1 - bias - mantissaBits);
  return sign * std::ldexp((1 << mantissaBits) + mantissa, exponent - bias - mantissaBits);
}

}  // namespace

double DecodeHalfBits(uint16_t bits) { return DecodeBinary16(bits, 10); }

double DecodeBFloat16Bits(uint16_t bits) { return DecodeBinary16(bits, 7); }

Expected ReferenceLoss(double x, double y, double w, double p) {
  if (std::isinf(x)) {  // the equal form -(1 - y) * logsig(-x) - p*y * logsig(x), whose limits are exact
    const double unweighted =
        -(ProductWithZeroLimit(1.0 - y, LogSigmoid(-x)) + ProductWithZeroLimit(p * y, LogSigmoid(x)));
    return Expected{ProductWithZeroLimit(w, unweighted), 0.0};
  }
  const double logsig = LogSigmoid(x);
  const double factor = 1.0 + (p - 1.0) * y;
  const double value = w * ((1.0 - y) * x - factor * logsig);
  const double magnitude = std::fabs(w) * (std::fabs((1.0 - y) * x) + std::fabs(p * y * x) +
                                           FactorMagnitude(y, p) * (std::fabs(logsig) + 1.0));
  return Expected{value, magnitude};
}

Expected ReferenceGradient(double x, double y, double g, double w, double p, double scale) {
  const double logsig = LogSigmoid(x);
  const double sigmoid = std::exp(logsig);
  const double factor = p * y + 1.0 - y;
  const double outer = w * g * scale;
  const double value = outer * (factor * sigmoid - p * y);
  // exp(logsig) inherits the absolute error of logsig, which grows with |x| (none where sigmoid is exactly 0).
  const double sigmoidError = sigmoid == 0.0 ? 0.0 : sigmoid * (2.0 + std::fabs(logsig));
  const double magnitude = std::fabs(outer) * (FactorMagnitude(y, p) * sigmoidError + std::fabs(p * y));
  return Expected{value, magnitude};
}

template <>
OutputRounding RoundingOf<float>() {
  return {0.0, 1e-37};
}
template <>
OutputRounding RoundingOf<half>() {
  return {std::ldexp(1.0, -11), std::ldexp(1.0, -25)};
}
template <>
OutputRounding RoundingOf<bfloat16_t>() {
  return {std::ldexp(1.0, -8), 1e-37};
}

bool Matches(double got, const Expected &expected, const OutputRounding &rounding) {
  if (std::isnan(expected.value)) return std::isnan(got);
  if (std::isinf(expected.value)) return got == expected.value;
  const double arithmetic = kArithmeticUlps * kFloat32Epsilon * expected.magnitude;
  const double tolerance =
      arithmetic * (1.0 + rounding.relative) + rounding.relative * std::fabs(expected.value) + rounding.absolute;
  return std::fabs(got - expected.value) <= tolerance;
}

}  // namespace test
