// A minimal test harness: TEST_CASE registers a function, CHECK throws on failure, the runner prints
// one line per failure and finally "N passed, M failed".
#ifndef MS_BCEWL_ASCENDC_TESTS_TEST_HARNESS_H_
#define MS_BCEWL_ASCENDC_TESTS_TEST_HARNESS_H_

#include <sstream>
#include <stdexcept>
#include <string>

namespace bcewl_test {

class TestFailure : public std::runtime_error {
 public:
  explicit TestFailure(const std::string &message) : std::runtime_error(message) {}
};

void RegisterTest(const char *name, void (*body)());
int RunAllTests(int argc, char **argv);

struct TestRegistrar {
  TestRegistrar(const char *name, void (*body)()) { RegisterTest(name, body); }
};

[[noreturn]] void Fail(const char *file, int line, const std::string &message);

}  // namespace bcewl_test

#define TEST_CASE(name)                                                    \
  static void name();                                                      \
  static const ::bcewl_test::TestRegistrar name##_registrar(#name, &name); \
  static void name()

#define CHECK_MSG(condition, message)                               \
  do {                                                              \
    if (!(condition)) {                                             \
      std::ostringstream check_stream_;                             \
      check_stream_ << "CHECK(" #condition ") failed: " << message; \
      ::bcewl_test::Fail(__FILE__, __LINE__, check_stream_.str());  \
    }                                                               \
  } while (0)

#define CHECK(condition) CHECK_MSG(condition, "")

#endif  // MS_BCEWL_ASCENDC_TESTS_TEST_HARNESS_H_
