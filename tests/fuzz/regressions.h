// Deterministic cases for the bugs the fuzzer found (each fixed in aclnn_adapter/): TEST_CASEs of tests/harness, run
// by `ms_bcewl_fuzz --regressions`. docs/reliability.md lists them.
#ifndef MS_BCEWL_TESTS_FUZZ_REGRESSIONS_H_
#define MS_BCEWL_TESTS_FUZZ_REGRESSIONS_H_

#include "fuzz_case.h"

namespace fuzz {

// Runs every regression case, printing "[ ok ] name" or "[FAIL] name" and its failures; each counts as a case in
// stats, a failing one also as unexpected.
void RunRegressions(Stats *stats);

}  // namespace fuzz

#endif  // MS_BCEWL_TESTS_FUZZ_REGRESSIONS_H_
