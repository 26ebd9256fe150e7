// The C++ test harness of the native tests, the fuzzer's regression cases and the Ascend C simulation tests.
// TEST_CASE registers a test. EXPECT_* record a failure and let the test go on; ASSERT_* record it and end the test.
// A message is streamed, so it may be a string expression or pieces joined by <<: EXPECT_MSG(ok, "lane " << i).
#ifndef MS_BCEWL_TESTS_HARNESS_TEST_HARNESS_H_
#define MS_BCEWL_TESTS_HARNESS_TEST_HARNESS_H_

#include <functional>
#include <sstream>
#include <string>

namespace test {

// Thrown by ASSERT_* to end the running test. Not a std::exception, so that a test's own
// catch (const std::exception &) cannot swallow it.
struct TestAborted {};

struct RunCounts {
  int passed = 0;
  int failed = 0;
};

// Registers a test; returns true so that it can initialise a static. TEST_CASE calls it, and so does a file that
// registers one test per parameter set.
bool RegisterTest(std::string name, std::function<void()> body);

// Runs every registered test whose name contains `filter`, in registration order, printing "[ ok ] name" or
// "[FAIL] name" and the test's failure messages under it.
RunCounts RunTests(const char *filter);

// Records a failure of the running test at file:line; the test goes on.
void RecordFailure(const char *file, int line, const std::string &message);

// Records a failure of the running test at file:line and ends the test. Call it on the test's own thread only.
[[noreturn]] void AbortTest(const char *file, int line, const std::string &message);

template <typename Actual, typename Expected>
void ExpectEqual(const Actual &actual, const Expected &expected, const char *actual_text, const char *file, int line) {
  if (!(actual == expected)) {
    std::ostringstream message;
    message << actual_text << " is " << actual << ", expected " << expected;
    RecordFailure(file, line, message.str());
  }
}

}  // namespace test

#define TEST_CASE(name)                                                    \
  static void name();                                                      \
  static const bool name##_registered = ::test::RegisterTest(#name, name); \
  static void name()

// Calls report(file, line, text) when `condition` is false; `text` is streamed.
#define TEST_HARNESS_REPORT_UNLESS(condition, report, text) \
  do {                                                      \
    if (!(condition)) {                                     \
      std::ostringstream test_harness_text_;                \
      test_harness_text_ << text;                           \
      report(__FILE__, __LINE__, test_harness_text_.str()); \
    }                                                       \
  } while (0)

#define EXPECT_TRUE(condition) TEST_HARNESS_REPORT_UNLESS(condition, ::test::RecordFailure, "expected: " #condition)
#define EXPECT_MSG(condition, message) \
  TEST_HARNESS_REPORT_UNLESS(condition, ::test::RecordFailure, "expected: " #condition "; " << message)
#define EXPECT_EQ(actual, expected) ::test::ExpectEqual((actual), (expected), #actual, __FILE__, __LINE__)

#define ASSERT_TRUE(condition) TEST_HARNESS_REPORT_UNLESS(condition, ::test::AbortTest, "expected: " #condition)
#define ASSERT_MSG(condition, message) \
  TEST_HARNESS_REPORT_UNLESS(condition, ::test::AbortTest, "expected: " #condition "; " << message)

#endif  // MS_BCEWL_TESTS_HARNESS_TEST_HARNESS_H_
