// When a computed result counts as equal to the float64 reference. Each element's value is computed in float32
// (docs/contract.md §2 Loss and gradients), so it may differ from the exact value by a few float32 roundings of the
// terms of its formula (cancellation between terms makes that error absolute, not relative); a reduction adds up to
// one such error per element it sums; then the result is rounded once to the output dtype.
#ifndef MS_BCEWL_TESTS_FUZZ_TOLERANCE_H_
#define MS_BCEWL_TESTS_FUZZ_TOLERANCE_H_

#include <vector>

#include "acl/acl_base.h"
#include "ops.h"

namespace fuzz {

// The largest magnitudes of the values an operation reads; an absent weight, pos_weight or gradOutput reads as 1.
// An infinite magnitude (a non-finite input) makes every bound infinite: such results are not compared.
struct Magnitudes {
  double x = 0;
  double y = 0;
  double w = 1;
  double p = 1;
  double g = 1;
};

// The largest |value|, or infinity if a value is not finite.
double MaxMagnitude(const std::vector<double> &values);

// A bound on the absolute float32 error of one element's value of op (before the mean's division).
double ElementErrorBound(Operation op, const Magnitudes &magnitudes);

// Whether actual is an acceptable result of the given output dtype for an exact value `expected` that the float32
// computation knows to within `bound`: actual lies between expected -/+ bound, each rounded to dtype. NaN
// matches NaN.
bool Acceptable(double actual, double expected, double bound, aclDataType dtype);

}  // namespace fuzz

#endif  // MS_BCEWL_TESTS_FUZZ_TOLERANCE_H_
