#include "tolerance.h"

#include <cmath>
#include <limits>

#include "host_tensor.h"

namespace fuzz {
namespace {

// Roundings per term allowed for: a handful of float32 operations, and the few ulps of the SIMD exp and log1p.
constexpr double kFloat32Roundings = 16.0;
constexpr double kFloat32Epsilon = 1.0 / (1 << 24);

}  // namespace

double MaxMagnitude(const std::vector<double> &values) {
  double largest = 0.0;
  for (double value : values) {
    if (!std::isfinite(value)) {
      return std::numeric_limits<double>::infinity();
    }
    largest = std::fmax(largest, std::fabs(value));
  }
  return largest;
}

// The magnitudes of the terms of docs/contract.md §2 Loss and gradients, with |logsig(+-x)| <= |x| + log 2.
double ElementErrorBound(Operation op, const Magnitudes &m) {
  const double log_sigmoid = m.x + std::log(2.0);
  const double one_minus_y = 1.0 + m.y;
  const double log_sigmoid_factor = 1.0 + (m.p + 1.0) * m.y;  // |1 + (p - 1) * y|
  const double unweighted_loss = one_minus_y * m.x + log_sigmoid_factor * log_sigmoid;
  double terms = 0.0;
  switch (op) {
    case Operation::kForward:
      terms = m.w * unweighted_loss;
      break;
    case Operation::kGradSelf:
      terms = m.w * m.g * (2.0 * m.p * m.y + one_minus_y);
      break;
    case Operation::kGradTarget:
      terms = m.w * m.g * (1.0 + m.p) * log_sigmoid;
      break;
    case Operation::kGradWeight:
      terms = m.g * unweighted_loss;
      break;
    case Operation::kGradPosWeight:
      terms = m.w * m.y * log_sigmoid * m.g;
      break;
    case Operation::kGradAll:  // each output has its own bound; this is the largest
      return std::fmax(
          std::fmax(ElementErrorBound(Operation::kGradSelf, m), ElementErrorBound(Operation::kGradTarget, m)),
          std::fmax(ElementErrorBound(Operation::kGradWeight, m), ElementErrorBound(Operation::kGradPosWeight, m)));
    case Operation::kLossAndAllGradients:
      return std::fmax(ElementErrorBound(Operation::kForward, m), ElementErrorBound(Operation::kGradAll, m));
  }
  return kFloat32Roundings * kFloat32Epsilon * terms;
}

bool Acceptable(double actual, double expected, double bound, aclDataType dtype) {
  if (std::isnan(expected)) {
    return std::isnan(actual);
  }
  const double lowest = test::RoundToDtype(expected - bound, dtype);
  const double highest = test::RoundToDtype(expected + bound, dtype);
  return actual >= lowest && actual <= highest;
}

}  // namespace fuzz
