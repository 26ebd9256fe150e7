// The four gradients against central finite differences of the float64 reference loss: this checks the
// gradient formulas themselves, independently of how the reference or the library writes them.
#include <cmath>
#include <functional>

#include "op_runner.h"
#include "test_harness.h"

namespace {

using test::Float32Inputs;
using test::Operation;
using test::RefArray;
using test::RefProblem;

RefArray RandomFloat32Array(test::Shape shape, double low, double high, uint64_t seed) {
  std::vector<double> values = test::RandomValues(test::NumelOf(shape), low, high, seed);
  for (double &value : values) {
    value = static_cast<float>(value);
  }
  return RefArray{shape, values};
}

Float32Inputs SmallProblem(int64_t reduction, uint64_t seed) {
  Float32Inputs inputs;
  inputs.x = RandomFloat32Array({2, 3}, -3, 3, seed);
  inputs.y = RandomFloat32Array({2, 3}, -0.2, 1.2, seed + 1);
  inputs.w = RandomFloat32Array({3}, 0.2, 2, seed + 2);
  inputs.p = RandomFloat32Array({2, 1}, 0.3, 3, seed + 3);
  inputs.g = RandomFloat32Array(reduction == 0 ? test::Shape{2, 3} : test::Shape{}, -2, 2, seed + 4);
  return inputs;
}

RefProblem AsReference(const Float32Inputs &inputs, int64_t reduction) {
  return RefProblem{inputs.x, inputs.y, inputs.w, inputs.p, inputs.g, reduction};
}

// d objective / d values[k] by central differences, for each k.
std::vector<double> FiniteDifferences(RefProblem problem,
                                      const std::function<std::vector<double> &(RefProblem &)> &parameter) {
  std::vector<double> derivatives;
  const double step = 1e-6;
  for (size_t k = 0; k < parameter(problem).size(); ++k) {
    const double original = parameter(problem)[k];
    parameter(problem)[k] = original + step;
    const double above = test::ReferenceObjective(problem);
    parameter(problem)[k] = original - step;
    const double below = test::ReferenceObjective(problem);
    parameter(problem)[k] = original;
    derivatives.push_back((above - below) / (2 * step));
  }
  return derivatives;
}

std::function<std::vector<double> &(RefProblem &)> ParameterOf(Operation op) {
  switch (op) {
    case Operation::kGradSelf:
      return [](RefProblem &problem) -> std::vector<double> & { return problem.x.values; };
    case Operation::kGradTarget:
      return [](RefProblem &problem) -> std::vector<double> & { return problem.y.values; };
    case Operation::kGradWeight:
      return [](RefProblem &problem) -> std::vector<double> & { return problem.w->values; };
    default:
      return [](RefProblem &problem) -> std::vector<double> & { return problem.p->values; };
  }
}

void ExpectGradientMatchesFiniteDifferences(Operation op, int64_t reduction) {
  const Float32Inputs inputs = SmallProblem(reduction, 40 + reduction);
  const std::vector<double> gradient = test::RunFloat32(op, inputs, reduction);
  const std::vector<double> expected = FiniteDifferences(AsReference(inputs, reduction), ParameterOf(op));
  bool close = gradient.size() == expected.size();
  for (size_t k = 0; close && k < expected.size(); ++k) {
    close = std::fabs(gradient[k] - expected[k]) <= 2e-5 * std::max(1.0, std::fabs(expected[k]));
  }
  EXPECT_MSG(close, std::string(test::OperationName(op)) + " reduction " + std::to_string(reduction) +
                        " differs from finite differences of the loss");
}

bool RegisterFiniteDifferenceTests() {
  for (Operation op :
       {Operation::kGradSelf, Operation::kGradTarget, Operation::kGradWeight, Operation::kGradPosWeight}) {
    for (int64_t reduction : {0, 1, 2}) {
      test::RegisterTest(
          std::string("finite_differences ") + test::OperationName(op) + " reduction " + std::to_string(reduction),
          [op, reduction] { ExpectGradientMatchesFiniteDifferences(op, reduction); });
    }
  }
  return true;
}

const bool kRegistered = RegisterFiniteDifferenceTests();

}  // namespace
