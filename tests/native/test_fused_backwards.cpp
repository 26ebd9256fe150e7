// aclnnBinaryCrossEntropyWithLogitsAllBackward (gradSelf, gradTarget and the gradients of weight and pos_weight in
// one call), bit for bit the single gradients on every ISA, thread count, dtype, layout, broadcast pattern and
// reduction, with nothing written outside the output views, and with its own argument errors.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "aclnnop/aclnn_binary_cross_entropy_with_logits_all_backward.h"
#include "one_call_checks.h"
#include "op_runner.h"
#include "test_harness.h"

namespace {

using test::HostTensor;
using test::Operation;
using test::Scenario;
using test::Shape;

// The outputs of aclnnBinaryCrossEntropyWithLogitsAllBackward after gradSelf (t.out).
struct MoreGradients {
  aclTensor *target = nullptr;
  aclTensor *weight = nullptr;
  aclTensor *pos_weight = nullptr;
};

aclnnStatus RunAll(const test::OpTensors &t, const MoreGradients &more, int64_t reduction) {
  return test::RunTwoPhases(
      [&](uint64_t *workspace_size, aclOpExecutor **executor) {
        return aclnnBinaryCrossEntropyWithLogitsAllBackwardGetWorkspaceSize(
            t.grad, t.self, t.target, t.weight, t.pos_weight, reduction, t.out, more.target, more.weight,
            more.pos_weight, workspace_size, executor);
      },
      [](void *workspace, uint64_t workspace_size, aclOpExecutor *executor) {
        return aclnnBinaryCrossEntropyWithLogitsAllBackward(workspace, workspace_size, executor, nullptr);
      });
}

// Every gradient the scenario has.
std::vector<Operation> GradientsOf(const Scenario &scenario) {
  std::vector<Operation> ops = {Operation::kGradSelf, Operation::kGradTarget};
  if (scenario.w_shape) {
    ops.push_back(Operation::kGradWeight);
  }
  if (scenario.p_shape) {
    ops.push_back(Operation::kGradPosWeight);
  }
  return ops;
}

// AllBackward's outputs against the single gradients' on every ISA the machine has, with 1, 2 and 4 threads.
void ExpectAllBackwardEqualsSeparate(const std::vector<Scenario> &scenarios) {
  const auto fused = [](const Scenario &scenario, const test::ScenarioInputs &inputs, const std::vector<Operation> &ops,
                        const std::vector<std::unique_ptr<HostTensor>> &outputs) {
    const auto output = [&](Operation op) {
      const auto found = std::find(ops.begin(), ops.end(), op);
      return found == ops.end() ? nullptr : outputs[found - ops.begin()]->get();
    };
    return RunAll(inputs.Tensors(outputs[0]->get()),
                  {outputs[1]->get(), output(Operation::kGradWeight), output(Operation::kGradPosWeight)},
                  scenario.reduction);
  };
  test::ExpectOneCallEqualsSingleOperations(scenarios, GradientsOf, [](test::ScenarioInputs *) {}, fused, "all");
}

const test::Dtypes kMixed = {ACL_FLOAT16, ACL_BF16, ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
const test::Dtypes kHalf = {ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16};
const test::Dtypes kBFloat16 = {ACL_BF16, ACL_BF16, ACL_BF16, ACL_BF16, ACL_BF16};

// Per-class weights sum in the pass of dx and dy when they have a row block (8192 rows) per task: (16400, 7) has
// 3 blocks for up to 3 tasks, (8200, 9) 2 for 2, (37, 29) one; or when the tasks can share a block by its lanes, each
// taking runs of 16 / groups rows of at least 512 elements: (132, 1000) in 2 or 4 lane groups, (2, 50, 700) and
// (66, 1000) in 2. The other patterns get a pass of their own within the call, the code of the single gradients.
std::vector<Scenario> AllBackwardScenarios() {
  std::vector<Scenario> scenarios;
  for (int64_t reduction : {0, 1, 2}) {
    // a 0-d self; weights that do and do not sum per class; long rows; a scalar pos_weight
    scenarios.push_back({Shape{}, std::nullopt, std::nullopt, std::nullopt, reduction, {}, test::Layout::kContiguous});
    scenarios.push_back(
        {Shape{37, 29}, Shape{29}, Shape{37, 1}, std::nullopt, reduction, kMixed, test::Layout::kPadded});
    scenarios.push_back(
        {Shape{5, 7, 3}, Shape{7, 1}, std::nullopt, std::nullopt, reduction, kBFloat16, test::Layout::kColumnMajor});
    scenarios.push_back(
        {Shape{3, 50021}, Shape{3, 1}, Shape{50021}, std::nullopt, reduction, kHalf, test::Layout::kContiguous});
    scenarios.push_back(
        {Shape{140001}, Shape{140001}, Shape{1}, std::nullopt, reduction, {}, test::Layout::kContiguous});
    scenarios.push_back(
        {Shape{16400, 7}, Shape{7}, Shape{1, 7}, std::nullopt, reduction, {}, test::Layout::kContiguous});
    scenarios.push_back(
        {Shape{8200, 9}, std::nullopt, Shape{9}, std::nullopt, reduction, kHalf, test::Layout::kContiguous});
    scenarios.push_back(
        {Shape{8200, 9}, Shape{9}, std::nullopt, std::nullopt, reduction, kMixed, test::Layout::kPadded});
    scenarios.push_back(
        {Shape{37, 29}, Shape{29}, Shape{29}, std::nullopt, reduction, kBFloat16, test::Layout::kColumnMajor});
    scenarios.push_back(
        {Shape{132, 1000}, Shape{1000}, Shape{1, 1000}, std::nullopt, reduction, {}, test::Layout::kContiguous});
    scenarios.push_back(
        {Shape{2, 50, 700}, Shape{700}, std::nullopt, std::nullopt, reduction, kHalf, test::Layout::kContiguous});
    scenarios.push_back(
        {Shape{66, 1000}, std::nullopt, Shape{1000}, std::nullopt, reduction, kBFloat16, test::Layout::kPadded});
    // weight per class joins; pos_weight per (channel, class) has other columns and a pass of its own
    scenarios.push_back(
        {Shape{700, 4, 9}, Shape{9}, Shape{4, 9}, std::nullopt, reduction, {}, test::Layout::kContiguous});
    // a scalar weight and a full-shape pos_weight: neither sums row by row; dp joins the pass as an output
    scenarios.push_back(
        {Shape{30, 23}, Shape{}, Shape{30, 23}, std::nullopt, reduction, kMixed, test::Layout::kContiguous});
    // full-shape weights (masks) as outputs of the pass: both (four outputs) on the threads in float16, which then
    // stages the outputs as float32; one in place in float32; through strided views; a weight without self's
    // leading 1
    scenarios.push_back(
        {Shape{300, 257}, Shape{300, 257}, Shape{300, 257}, std::nullopt, reduction, kHalf, test::Layout::kContiguous});
    scenarios.push_back(
        {Shape{140001}, Shape{140001}, std::nullopt, std::nullopt, reduction, {}, test::Layout::kContiguous});
    scenarios.push_back({Shape{41, 3, 19}, Shape{41, 3, 19}, Shape{41, 3, 19}, std::nullopt, reduction, kBFloat16,
                         test::Layout::kColumnMajor});
    scenarios.push_back(
        {Shape{1, 37, 29}, Shape{37, 29}, std::nullopt, std::nullopt, reduction, kMixed, test::Layout::kPadded});
  }
  return scenarios;
}

TEST_CASE(all_backward_equals_the_single_gradients_bitwise) { ExpectAllBackwardEqualsSeparate(AllBackwardScenarios()); }

TEST_CASE(all_backward_of_an_empty_self_writes_only_the_weight_gradients_zeros) {
  const Scenario scenario{Shape{0, 3}, Shape{3}, Shape{1}, std::nullopt, 1, {}, test::Layout::kContiguous};
  const test::ScenarioInputs inputs(scenario);
  auto dx = test::MakeOutput(Operation::kGradSelf, scenario);
  auto dy = test::MakeOutput(Operation::kGradTarget, scenario);
  auto dw = test::MakeOutput(Operation::kGradWeight, scenario);
  auto dp = test::MakeOutput(Operation::kGradPosWeight, scenario);
  EXPECT_EQ(RunAll(inputs.Tensors(dx->get()), {dy->get(), dw->get(), dp->get()}, 1), ACLNN_SUCCESS);
  EXPECT_MSG(dw->Values() == std::vector<double>(3, 0.0), "gradWeightOptional is not zeros");
  EXPECT_MSG(dp->Values() == std::vector<double>(1, 0.0), "gradPosWeightOptional is not zeros");
  EXPECT_MSG(test::UntouchedOutsideView(*dw) && test::UntouchedOutsideView(*dp),
             "wrote outside a weight gradient's view");
}

struct OutputErrorCase {
  const char *what;
  std::function<aclnnStatus()> call;
  aclnnStatus status;
  const char *says;
};

void ExpectOutputErrors(const std::vector<OutputErrorCase> &cases) {
  for (const OutputErrorCase &c : cases) {
    EXPECT_MSG(c.call() == c.status, c.what);
    const std::string message = aclGetRecentErrMsg();
    EXPECT_MSG(message.find(c.says) != std::string::npos, std::string(c.what) + ": message: " + message);
  }
  test::ExpectValidCallStillRight();
}

// The outputs after the first: each error names its output; the first output's are those of aclnn...Backward.
TEST_CASE(all_backward_checks_its_other_outputs) {
  const Scenario scenario{Shape{4, 3}, Shape{3}, std::nullopt, std::nullopt, 0, {}, test::Layout::kContiguous};
  const test::ScenarioInputs inputs(scenario);
  auto dx = test::MakeOutput(Operation::kGradSelf, scenario);
  const test::OpTensors t = inputs.Tensors(dx->get());
  auto dy = test::MakeOutput(Operation::kGradTarget, scenario);
  auto dw = test::MakeOutput(Operation::kGradWeight, scenario);
  auto half_3 = test::MakeTensor(Shape{3}, ACL_FLOAT16, test::Layout::kContiguous);
  auto float_1x3 = test::MakeTensor(Shape{1, 3}, ACL_FLOAT, test::Layout::kContiguous);
  ExpectOutputErrors({
      {"all: null gradTarget", [&] { return RunAll(t, {nullptr, dw->get(), nullptr}, 0); }, ACLNN_ERR_PARAM_NULLPTR,
       "gradTarget is null"},
      {"all: weight without its gradient", [&] { return RunAll(t, {dy->get(), nullptr, nullptr}, 0); },
       ACLNN_ERR_PARAM_NULLPTR, "gradWeightOptional is null"},
      {"all: a gradient without its input", [&] { return RunAll(t, {dy->get(), dw->get(), dw->get()}, 0); },
       ACLNN_ERR_PARAM_INVALID, "gradPosWeightOptional is given but posWeightOptional is null"},
      {"all: gradWeight dtype", [&] { return RunAll(t, {dy->get(), half_3->get(), nullptr}, 0); },
       ACLNN_ERR_PARAM_INVALID, "gradWeightOptional has dtype FLOAT16 but must have the dtype of weightOptional"},
      {"all: gradWeight shape", [&] { return RunAll(t, {dy->get(), float_1x3->get(), nullptr}, 0); },
       ACLNN_ERR_PARAM_INVALID, "gradWeightOptional has shape [1,3] but must have the shape of weightOptional, [3]"},
  });
}

TEST_CASE(all_backward_rejects_an_executor_of_another_operation) {
  const Scenario scenario{Shape{4, 3}, std::nullopt, std::nullopt, std::nullopt, 0, {}, test::Layout::kContiguous};
  const test::ScenarioInputs inputs(scenario);
  auto dx = test::MakeOutput(Operation::kGradSelf, scenario);
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = nullptr;
  EXPECT_EQ(test::PlanOp(Operation::kGradSelf, inputs.Tensors(dx->get()), 0, &workspace_size, &executor),
            ACLNN_SUCCESS);
  EXPECT_EQ(aclnnBinaryCrossEntropyWithLogitsAllBackward(nullptr, workspace_size, executor, nullptr),
            ACLNN_ERR_PARAM_INVALID);
  const std::string message = aclGetRecentErrMsg();
  EXPECT_MSG(
      message.find("was planned by aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize") != std::string::npos,
      "message: " + message);
}

}  // namespace
