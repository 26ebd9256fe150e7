#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

#include "test_harness.h"

namespace bcewl_test {
namespace {

struct RegisteredTest {
  const char *name;
  void (*body)();
};

std::vector<RegisteredTest> &Registry() {
  static std::vector<RegisteredTest> tests;
  return tests;
}

}  // namespace

void RegisterTest(const char *name, void (*body)()) { Registry().push_back({name, body}); }

void Fail(const char *file, int line, const std::string &message) {
  throw TestFailure(std::string(file) + ":" + std::to_string(line) + ": " + message);
}

// Runs every test whose name contains argv[1] (all tests without an argument).
int RunAllTests(int argc, char **argv) {
  const char *filter = argc > 1 ? argv[1] : "";
  int passed = 0;
  int failed = 0;
  for (const RegisteredTest &test : Registry()) {
    if (std::strstr(test.name, filter) == nullptr) continue;
    const auto begin = std::chrono::steady_clock::now();
    try {
      test.body();
      ++passed;
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      std::printf("[ ok ] %s (%.2f s)\n", test.name, seconds);
    } catch (const std::exception &error) {
      ++failed;
      std::printf("[FAIL] %s: %s\n", test.name, error.what());
    }
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 && passed > 0 ? 0 : 1;
}

}  // namespace bcewl_test

int main(int argc, char **argv) { return bcewl_test::RunAllTests(argc, argv); }
