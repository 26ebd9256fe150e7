// A minimal test harness: TEST_CASE registers a test; EXPECT_* record failures without stopping the test.
#ifndef MS_BCEWL_TESTS_NATIVE_TEST_HARNESS_H_
#define MS_BCEWL_TESTS_NATIVE_TEST_HARNESS_H_

#include <functional>
#include <sstream>
#include <string>

namespace test {

// Registers a test; returns true so that it can initialise a static.
bool RegisterTest(const std::string &name, std::function<void()> body);

// Records a failure of the running test with its location and message.
void RecordFailure(const char *file, int line, const std::string &message);

template <typename Actual, typename Expected>
void ExpectEqual(const Actual &actual, const Expected &expected, const char *actual_text, const char *file, int line) {
  if (!(actual == expected)) {
    std::ostringstream message;
    message << actual_text << " is " << actual << ", expected " << expected;
    RecordFailure(file, line, message.str());
  }
}

}  // namespace test

#define TEST_CASE_CONCAT_INNER(a, b) a##b
#define TEST_CASE_CONCAT(a, b) TEST_CASE_CONCAT_INNER(a, b)

#define TEST_CASE(name)                                                                    \
  static void name();                                                                      \
  static const bool TEST_CASE_CONCAT(name, _registered) = test::RegisterTest(#name, name); \
  static void name()

#define EXPECT_TRUE(condition)                                          \
  do {                                                                  \
    if (!(condition)) {                                                 \
      test::RecordFailure(__FILE__, __LINE__, "expected: " #condition); \
    }                                                                   \
  } while (0)

#define EXPECT_EQ(actual, expected) test::ExpectEqual((actual), (expected), #actual, __FILE__, __LINE__)

#define EXPECT_MSG(condition, message)                    \
  do {                                                    \
    if (!(condition)) {                                   \
      test::RecordFailure(__FILE__, __LINE__, (message)); \
    }                                                     \
  } while (0)

#endif  // MS_BCEWL_TESTS_NATIVE_TEST_HARNESS_H_
