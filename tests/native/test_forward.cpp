// Forward loss: published golden values, output shapes [] and [1], empty inputs, determinism, accuracy.
#include <cmath>
#include <cstring>
#include <limits>

#include "op_runner.h"
#include "test_harness.h"

namespace {

using test::Float32Inputs;
using test::HostTensor;
using test::Operation;
using test::RefArray;
using test::RunFloat32;
using test::Shape;

bool Near(const std::vector<double> &actual, const std::vector<double> &expected, double tolerance) {
  if (actual.size() != expected.size()) {
    return false;
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!(std::fabs(actual[i] - expected[i]) <= tolerance * std::max(1.0, std::fabs(expected[i])))) {
      return false;
    }
  }
  return true;
}

Float32Inputs Arange(Shape shape, double x_start, double y_start, std::vector<double> w, std::vector<double> p) {
  Float32Inputs inputs;
  const int64_t numel = test::NumelOf(shape);
  inputs.x = RefArray{shape, {}};
  inputs.y = RefArray{shape, {}};
  for (int64_t i = 0; i < numel; ++i) {
    inputs.x.values.push_back(x_start + i);
    inputs.y.values.push_back(y_start + i);
  }
  inputs.w = RefArray{{static_cast<int64_t>(w.size())}, w};
  inputs.p = RefArray{{static_cast<int64_t>(p.size())}, p};
  return inputs;
}

}  // namespace

// MindSpore's public tests (documentation example, targets outside [0, 1] included).
TEST_CASE(golden_mindspore_doc_example_none_mean_sum) {
  const Float32Inputs inputs = test::MindSporeDocExample();
  EXPECT_TRUE(Near(RunFloat32(Operation::kForward, inputs, 0),
                   {0.61110067, 0.50328247, 0.26318605, 0.58439666, 0.55301525, -0.43681395}, 1e-6));
  EXPECT_TRUE(Near(RunFloat32(Operation::kForward, inputs, 1), {test::kMindSporeDocMean}, 1e-7));
  EXPECT_TRUE(Near(RunFloat32(Operation::kForward, inputs, 2), {test::kMindSporeDocSum}, 1e-7));
  Float32Inputs unweighted = inputs;
  unweighted.w.reset();
  unweighted.p.reset();
  EXPECT_TRUE(Near(RunFloat32(Operation::kForward, unweighted, 1), {test::kMindSporeDocMean}, 1e-7));
}

TEST_CASE(golden_mindspore_doc_example_gradients_of_the_mean) {
  const Float32Inputs inputs = test::MindSporeDocExample();
  const std::vector<double> dx = {0.00167092, -0.00524587, -0.08863537, 0.17917014, 0.05021872, -0.25530204};
  EXPECT_TRUE(Near(RunFloat32(Operation::kGradSelf, inputs, 1), dx, 1e-6));
  std::vector<double> dx_sum = dx;
  for (double &value : dx_sum) {
    value *= 6;
  }
  EXPECT_TRUE(Near(RunFloat32(Operation::kGradSelf, inputs, 2), dx_sum, 1e-6));
  // With p = 1 the gradient of target is -x (divided by numel for mean).
  std::vector<double> dy;
  for (double x : inputs.x.values) {
    dy.push_back(-x / 6);
  }
  EXPECT_TRUE(Near(RunFloat32(Operation::kGradTarget, inputs, 1), dy, 1e-6));
}

// MindSpore's GPU tests with weight and pos_weight that are not ones.
TEST_CASE(golden_mindspore_gpu_cases_with_weights) {
  EXPECT_TRUE(
      Near(RunFloat32(Operation::kForward, Arange({2, 3}, 0, 34, {2, 3, 1}, {6, 3, 4}), 1), {-113.5540387}, 1e-7));
  EXPECT_TRUE(
      Near(RunFloat32(Operation::kForward, Arange({2, 3}, 6, 0, {3, 3, 4}, {6, 3, 4}), 2), {-333.9667604}, 1e-7));
}

// PyTorch's stability case: a logit of -120 with target 1 costs 120, not inf.
TEST_CASE(golden_pytorch_stability_case) {
  Float32Inputs inputs;
  inputs.x = RefArray{{2}, {0.0, -120.0}};
  inputs.y = RefArray{{2}, {0.0, 1.0}};
  EXPECT_TRUE(Near(RunFloat32(Operation::kForward, inputs, 1), {60.34657359}, 1e-7));
  // Gradient at zero with y = 0: sigmoid(0) = 0.5.
  Float32Inputs zeros;
  zeros.x = RefArray{{3, 1}, {0, 0, 0}};
  zeros.y = RefArray{{3, 1}, {0, 0, 0}};
  EXPECT_TRUE(Near(RunFloat32(Operation::kGradSelf, zeros, 2), {0.5, 0.5, 0.5}, 0));
}

TEST_CASE(mean_and_sum_accept_out_of_shape_empty_and_one) {
  const Float32Inputs inputs = test::MindSporeDocExample();
  HostTensor x({2, 3}, ACL_FLOAT), y({2, 3}, ACL_FLOAT);
  x.Set(inputs.x.values);
  y.Set(inputs.y.values);
  for (const Shape &out_shape : {Shape{}, Shape{1}}) {
    for (int64_t reduction : {1, 2}) {
      HostTensor out(out_shape, ACL_FLOAT);
      EXPECT_EQ(test::RunOp(Operation::kForward, {nullptr, x.get(), y.get(), nullptr, nullptr, out.get()}, reduction),
                ACLNN_SUCCESS);
      EXPECT_TRUE(Near(out.Values(), {reduction == 1 ? test::kMindSporeDocMean : test::kMindSporeDocSum}, 1e-7));
    }
  }
}

TEST_CASE(empty_self_none_succeeds_without_work_mean_is_nan_sum_is_zero) {
  for (aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
    HostTensor x({5, 0, 3}, dtype), y({5, 0, 3}, dtype), w({3}, dtype), none_out({5, 0, 3}, dtype);
    uint64_t workspace_size = 99;
    aclOpExecutor *executor = nullptr;
    EXPECT_EQ(test::PlanOp(Operation::kForward, {nullptr, x.get(), y.get(), w.get(), nullptr, none_out.get()}, 0,
                           &workspace_size, &executor),
              ACLNN_SUCCESS);
    EXPECT_EQ(workspace_size, uint64_t{0});
    EXPECT_EQ(test::ExecuteOp(Operation::kForward, nullptr, 0, executor), ACLNN_SUCCESS);
    for (int64_t reduction : {1, 2}) {
      HostTensor out({1}, dtype);
      out.FillStorage(5.0);
      EXPECT_EQ(test::RunOp(Operation::kForward, {nullptr, x.get(), y.get(), w.get(), nullptr, out.get()}, reduction),
                ACLNN_SUCCESS);
      const double value = out.Values()[0];
      EXPECT_TRUE(reduction == 1 ? std::isnan(value) : value == 0.0);
    }
  }
}

TEST_CASE(empty_self_gradients_are_empty_and_weight_gradients_are_zeros) {
  HostTensor x({5, 0, 3}, ACL_FLOAT), y({5, 0, 3}, ACL_FLOAT), g({}, ACL_FLOAT16);
  HostTensor w({3}, ACL_BF16), p({1, 3}, ACL_FLOAT16), dx({5, 0, 3}, ACL_FLOAT);
  g.Set({1.0});
  for (int64_t reduction : {0, 1, 2}) {
    EXPECT_EQ(test::RunOp(Operation::kGradSelf, {g.get(), x.get(), y.get(), w.get(), p.get(), dx.get()}, reduction),
              ACLNN_SUCCESS);
    EXPECT_EQ(test::RunOp(Operation::kGradTarget, {g.get(), x.get(), y.get(), w.get(), p.get(), dx.get()}, reduction),
              ACLNN_SUCCESS);
    HostTensor dw({3}, ACL_BF16), dp({1, 3}, ACL_FLOAT16);
    dw.FillStorage(9.0);
    dp.FillStorage(9.0);
    EXPECT_EQ(test::RunOp(Operation::kGradWeight, {g.get(), x.get(), y.get(), w.get(), p.get(), dw.get()}, reduction),
              ACLNN_SUCCESS);
    EXPECT_EQ(
        test::RunOp(Operation::kGradPosWeight, {g.get(), x.get(), y.get(), w.get(), p.get(), dp.get()}, reduction),
        ACLNN_SUCCESS);
    EXPECT_TRUE(dw.Values() == std::vector<double>(3, 0.0));
    EXPECT_TRUE(dp.Values() == std::vector<double>(3, 0.0));
  }
}

TEST_CASE(two_identical_runs_are_bitwise_equal) {
  for (test::Operation op : test::kSingleOutputOperations) {
    test::Scenario scenario;
    scenario.shape = {4, 5, 2000};
    scenario.w_shape = Shape{5, 1};
    scenario.p_shape = Shape{2000};
    scenario.reduction = op == Operation::kForward ? 1 : 2;
    test::ScenarioInputs inputs(scenario);
    auto first = test::MakeOutput(op, scenario);
    auto second = test::MakeOutput(op, scenario);
    EXPECT_EQ(test::RunOp(op, inputs.Tensors(first->get()), scenario.reduction), ACLNN_SUCCESS);
    EXPECT_EQ(test::RunOp(op, inputs.Tensors(second->get()), scenario.reduction), ACLNN_SUCCESS);
    EXPECT_MSG(first->ViewBytes() == second->ViewBytes(),
               std::string(test::OperationName(op)) + " differs between runs");
  }
}

// The float64 block accumulation keeps a large mean at float32 accuracy of a float64 reference.
TEST_CASE(large_mean_and_sum_match_the_float64_reference) {
  test::Scenario scenario;
  scenario.shape = {300000};
  scenario.w_shape = Shape{1};
  scenario.p_shape = Shape{300000};
  test::ScenarioInputs inputs(scenario);
  for (int64_t reduction : {1, 2}) {
    scenario.reduction = reduction;
    inputs.reference().reduction = reduction;
    HostTensor out({}, ACL_FLOAT);
    EXPECT_EQ(test::RunOp(Operation::kForward, inputs.Tensors(out.get()), reduction), ACLNN_SUCCESS);
    const double expected = test::Reference(inputs.reference()).loss[0];
    EXPECT_MSG(std::fabs(out.Values()[0] - expected) <= 1e-6 * std::fabs(expected),
               "got " + test::NumberText(out.Values()[0]) + ", expected " + test::NumberText(expected));
  }
}
