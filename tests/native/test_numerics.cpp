// Extreme and non-finite logits, and NaN propagation (the cases are listed atop bcewl_kernel_plain.cpp).
#include <cmath>
#include <limits>

#include "op_runner.h"
#include "test_harness.h"

namespace {

using test::Float32Inputs;
using test::Operation;
using test::RefArray;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Float32Inputs OneElement(double x, double y, double w, double p, double g) {
  Float32Inputs inputs;
  inputs.x = RefArray{{1}, {x}};
  inputs.y = RefArray{{1}, {y}};
  inputs.w = RefArray{{1}, {w}};
  inputs.p = RefArray{{1}, {p}};
  inputs.g = RefArray{{}, {g}};
  return inputs;
}

double RunOne(Operation op, const Float32Inputs &inputs) {
  const std::vector<double> values = test::RunFloat32(op, inputs, 0);
  return values.size() == 1 ? values[0] : -12345.0;
}

bool SameOrBothNaN(double actual, double expected) {
  return std::isnan(expected) ? std::isnan(actual) : std::fabs(actual - expected) <= 1e-6 || actual == expected;
}

struct InfiniteLogitCase {
  double x, y, w, p, g;
  double loss, dx, dy, dw, dp;
};

}  // namespace

TEST_CASE(infinite_logits_give_the_limits_where_they_exist) {
  const InfiniteLogitCase cases[] = {
      // x, y, w, p, g         loss, dx, dy, dw, dp
      {kInf, 1.0, 1.0, 2.0, 1.0, 0.0, 0.0, -kInf, 0.0, 0.0},        // y = 1: loss -> 0
      {-kInf, 0.0, 1.0, 2.0, 1.0, 0.0, 0.0, kInf, 0.0, 0.0},        // y = 0: loss -> 0
      {kInf, 0.25, 0.5, 2.0, 1.0, kInf, 0.375, -kInf, kInf, 0.0},   // dx = w*(1 - y)*g
      {-kInf, 0.25, 0.5, 2.0, 1.0, kInf, -0.25, kInf, kInf, kInf},  // dx = -w*p*y*g
      {-kInf, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, kInf},        // p = 0 annihilates
      {kInf, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, kInf, 0.0},         // w = 0 annihilates
      {kInf, 1.5, 1.0, 1.0, 1.0, -kInf, -0.5, -kInf, -kInf, 0.0},   // y > 1: loss -> -inf
      {kInf, 0.5, 1.0, 1.0, 0.0, kInf, 0.0, 0.0, 0.0, 0.0},         // g = 0 annihilates (not in the loss)
  };
  for (const InfiniteLogitCase &c : cases) {
    const Float32Inputs inputs = OneElement(c.x, c.y, c.w, c.p, c.g);
    const double expected[] = {c.loss, c.dx, c.dy, c.dw, c.dp};
    for (Operation op : test::kSingleOutputOperations) {
      const double actual = RunOne(op, inputs);
      EXPECT_MSG(SameOrBothNaN(actual, expected[static_cast<int>(op)]),
                 std::string(test::OperationName(op)) + " at x=" + test::NumberText(c.x) + " y=" +
                     test::NumberText(c.y) + " w=" + test::NumberText(c.w) + " p=" + test::NumberText(c.p) + ": got " +
                     test::NumberText(actual) + ", expected " + test::NumberText(expected[static_cast<int>(op)]));
    }
  }
}

// NaN reaches exactly the outputs whose formula reads the NaN input: dy does not read y, dw does not read w,
// dp does not read p.
TEST_CASE(nan_propagates_to_the_outputs_that_depend_on_it) {
  struct NaNCase {
    Float32Inputs inputs;
    bool nan_expected[5];  // loss, dx, dy, dw, dp
  };
  const NaNCase cases[] = {
      {OneElement(kNaN, 0.5, 1.0, 2.0, 1.0), {true, true, true, true, true}},
      {OneElement(0.5, kNaN, 1.0, 2.0, 1.0), {true, true, false, true, true}},
      {OneElement(0.5, 0.5, kNaN, 2.0, 1.0), {true, true, true, false, true}},
      {OneElement(0.5, 0.5, 1.0, kNaN, 1.0), {true, true, true, true, false}},
      {OneElement(0.5, 0.5, 1.0, 2.0, kNaN), {false, true, true, true, true}},
  };
  for (const NaNCase &c : cases) {
    for (Operation op : test::kSingleOutputOperations) {
      const double actual = RunOne(op, c.inputs);
      const bool nan_expected = c.nan_expected[static_cast<int>(op)];
      EXPECT_MSG(nan_expected ? std::isnan(actual) : std::isfinite(actual),
                 std::string(test::OperationName(op)) + " got " + test::NumberText(actual));
    }
  }
}

TEST_CASE(reductions_of_non_finite_losses) {
  Float32Inputs inputs;
  inputs.x = RefArray{{3}, {0.5, kNaN, 1.0}};
  inputs.y = RefArray{{3}, {0.5, 0.5, 0.5}};
  EXPECT_TRUE(std::isnan(test::RunFloat32(Operation::kForward, inputs, 1)[0]));
  inputs.x.values = {kInf, 0.5, -kInf};  // +inf and +inf losses: sum +inf
  EXPECT_EQ(test::RunFloat32(Operation::kForward, inputs, 2)[0], kInf);
  inputs.y.values = {2.0, 0.5, 0.5};  // -inf and +inf: no limit
  EXPECT_TRUE(std::isnan(test::RunFloat32(Operation::kForward, inputs, 2)[0]));
}

// Large finite logits with pos_weight: every output finite and equal to the float64 reference.
TEST_CASE(extreme_logits_give_finite_accurate_losses_and_gradients) {
  Float32Inputs inputs;
  const std::vector<double> logits = {20, -20, 88, -88, 1e4, -1e4};
  for (double y : {0.0, 0.3, 1.0}) {
    for (double x : logits) {
      inputs.x.values.push_back(x);
      inputs.y.values.push_back(y);
    }
  }
  const test::Shape shape = {3, static_cast<int64_t>(logits.size())};
  inputs.x.shape = inputs.y.shape = shape;
  inputs.w = RefArray{{1}, {0.75}};
  inputs.p = RefArray{{3, 1}, {2.5, 0.5, 4.0}};
  inputs.g = RefArray{{}, {1.25}};
  for (int64_t reduction : {0, 1, 2}) {
    const test::RefResult reference =
        test::Reference(test::RefProblem{inputs.x, inputs.y, inputs.w, inputs.p, inputs.g, reduction});
    for (Operation op : test::kSingleOutputOperations) {
      const std::vector<double> actual = test::RunFloat32(op, inputs, reduction);
      bool finite = !actual.empty();
      for (double value : actual) {
        finite = finite && std::isfinite(value);
      }
      std::string why;
      EXPECT_MSG(finite && test::Close(actual, test::ExpectedOutput(op, reference), ACL_FLOAT, &why),
                 std::string(test::OperationName(op)) + " reduction " + std::to_string(reduction) + ": " +
                     (finite ? why : "a non-finite value"));
    }
  }
}
