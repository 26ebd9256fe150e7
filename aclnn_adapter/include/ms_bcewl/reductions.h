// The reductions and their aclnn codes (docs/contract.md §3): the one C++ definition. Python's one is
// REDUCTIONS in ms_bcewl/_library.py; the library exports this list, so a test holds the two equal.
#ifndef MS_BCEWL_REDUCTIONS_H_
#define MS_BCEWL_REDUCTIONS_H_

#include <cstdint>

// X(name, constant, aclnn code, ...) for each reduction; arguments after X pass through to every X.
#define MS_BCEWL_FOR_EACH_REDUCTION(X, ...) \
  X(none, kReductionNone, 0, __VA_ARGS__)   \
  X(mean, kReductionMean, 1, __VA_ARGS__)   \
  X(sum, kReductionSum, 2, __VA_ARGS__)

namespace ms_bcewl {

#define MS_BCEWL_REDUCTION_CONSTANT(name, constant, code, ...) constexpr int64_t constant = code;
MS_BCEWL_FOR_EACH_REDUCTION(MS_BCEWL_REDUCTION_CONSTANT, )
#undef MS_BCEWL_REDUCTION_CONSTANT

}  // namespace ms_bcewl

#endif  // MS_BCEWL_REDUCTIONS_H_
