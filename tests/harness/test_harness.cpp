#include "test_harness.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <utility>
#include <vector>

namespace test {
namespace {

struct RegisteredTest {
  std::string name;
  std::function<void()> body;
};

std::vector<RegisteredTest> &Registry() {
  static std::vector<RegisteredTest> tests;
  return tests;
}

// The running test's failure messages. Guarded because a test may check results on its worker threads.
std::mutex failures_mutex;
std::vector<std::string> failures;

void AddFailure(std::string message) {
  std::lock_guard<std::mutex> lock(failures_mutex);
  failures.push_back(std::move(message));
}

std::vector<std::string> TakeFailures() {
  std::lock_guard<std::mutex> lock(failures_mutex);
  return std::exchange(failures, {});
}

std::string Located(const char *file, int line, const std::string &message) {
  return std::string(file) + ":" + std::to_string(line) + ": " + message;
}

// Runs one test; returns its failure messages, none if it passed. An exception that escapes the test fails it.
std::vector<std::string> RunOne(const RegisteredTest &test) {
  try {
    test.body();
  } catch (const TestAborted &) {
    // AbortTest has recorded why.
  } catch (const std::exception &error) {
    AddFailure(std::string("uncaught exception: ") + error.what());
  } catch (...) {
    AddFailure("uncaught exception of an unknown type");
  }
  return TakeFailures();
}

// Flushed at once, so that a crash in a later test still leaves the lines of the earlier ones.
void PrintResult(const std::string &name, const std::vector<std::string> &messages, double seconds) {
  std::printf("%s %s (%.2f s)\n", messages.empty() ? "[ ok ]" : "[FAIL]", name.c_str(), seconds);
  for (const std::string &message : messages) {
    std::printf("    %s\n", message.c_str());
  }
  std::fflush(stdout);
}

}  // namespace

bool RegisterTest(std::string name, std::function<void()> body) {
  Registry().push_back({std::move(name), std::move(body)});
  return true;
}

void RecordFailure(const char *file, int line, const std::string &message) { AddFailure(Located(file, line, message)); }

void AbortTest(const char *file, int line, const std::string &message) {
  RecordFailure(file, line, message);
  throw TestAborted{};
}

RunCounts RunTests(const char *filter) {
  RunCounts counts;
  for (const RegisteredTest &test : Registry()) {
    if (test.name.find(filter) == std::string::npos) {
      continue;
    }
    const auto begin = std::chrono::steady_clock::now();
    const std::vector<std::string> messages = RunOne(test);
    PrintResult(test.name, messages, std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
    ++(messages.empty() ? counts.passed : counts.failed);
  }
  return counts;
}

}  // namespace test
