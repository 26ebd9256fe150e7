#include "test_harness.h"

#include <cstdio>
#include <cstring>
#include <vector>

namespace test {
namespace {

struct RegisteredTest {
  std::string name;
  std::function<void()> body;
};

std::vector<RegisteredTest> &Tests() {
  static std::vector<RegisteredTest> tests;
  return tests;
}

int failures_in_current_test = 0;

}  // namespace

bool RegisterTest(const std::string &name, std::function<void()> body) {
  Tests().push_back({name, std::move(body)});
  return true;
}

void RecordFailure(const char *file, int line, const std::string &message) {
  ++failures_in_current_test;
  std::printf("    %s:%d: %s\n", file, line, message.c_str());
}

}  // namespace test

// Usage: ms_bcewl_native_tests [substring]  (runs the tests whose name contains it)
int main(int argc, char **argv) {
  const char *filter = argc > 1 ? argv[1] : "";
  int passed = 0;
  int failed = 0;
  for (const auto &registered : test::Tests()) {
    if (std::strstr(registered.name.c_str(), filter) == nullptr) {
      continue;
    }
    test::failures_in_current_test = 0;
    registered.body();
    if (test::failures_in_current_test == 0) {
      ++passed;
    } else {
      ++failed;
      std::printf("[ FAIL ] %s\n", registered.name.c_str());
    }
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
