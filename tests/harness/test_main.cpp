// The main function of a test program: `<program> [substring]` runs the tests whose name contains the substring
// (all without it). The last line is "N passed, M failed"; the exit status is 1 if a test failed or none ran.
#include <cstdio>

#include "test_harness.h"

int main(int argc, char **argv) {
  const test::RunCounts counts = test::RunTests(argc > 1 ? argv[1] : "");
  std::printf("%d passed, %d failed\n", counts.passed, counts.failed);
  return counts.failed == 0 && counts.passed > 0 ? 0 : 1;
}
