// aclnnBinaryCrossEntropyWithLogitsSelfTargetBackward (the gradients of self and target in one pass): bit for bit
// the results of the two single gradients on every ISA, thread count, dtype, layout, broadcast pattern and
// reduction; nothing written outside the output views; and its own argument errors for the second output.
#include <string>
#include <vector>

#include "aclnnop/aclnn_binary_cross_entropy_with_logits_self_target_backward.h"
#include "kernel/kernel_testing.h"
#include "op_runner.h"
#include "test_harness.h"

namespace {

using ms_bcewl::kernel::Isa;
using test::HostTensor;
using test::Op;
using test::Scenario;
using test::Shape;

const ms_bcewl::kernel::KernelTestingHooks &Hooks() { return *msBcewlKernelTestingHooks(); }

aclnnStatus RunBoth(const test::OpTensors &t, aclTensor *grad_target, int64_t reduction) {
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = nullptr;
  const aclnnStatus status = aclnnBinaryCrossEntropyWithLogitsSelfTargetBackwardGetWorkspaceSize(
      t.grad, t.self, t.target, t.weight, t.pos_weight, reduction, t.out, grad_target, &workspace_size, &executor);
  if (status != ACLNN_SUCCESS) {
    return status;
  }
  return aclnnBinaryCrossEntropyWithLogitsSelfTargetBackward(nullptr, workspace_size, executor, nullptr);
}

bool UntouchedOutsideView(const HostTensor &out) {
  for (double value : out.ValuesOutsideView()) {
    if (value != test::kSentinel) {
      return false;
    }
  }
  return true;
}

// The fused call against dx and dy called one by one, on the kernels of the current ISA and thread setting.
void ExpectFusedEqualsSeparate(const Scenario &scenario, const std::string &setting) {
  const test::ScenarioInputs inputs(scenario);
  const std::string name = test::Describe(Op::kGradSelf, scenario) + " " + setting;
  auto dx = test::MakeOutput(Op::kGradSelf, scenario);
  auto dy = test::MakeOutput(Op::kGradTarget, scenario);
  auto both_dx = test::MakeOutput(Op::kGradSelf, scenario);
  auto both_dy = test::MakeOutput(Op::kGradTarget, scenario);
  EXPECT_MSG(test::RunOp(Op::kGradSelf, inputs.Tensors(dx->get()), scenario.reduction) == ACLNN_SUCCESS, name);
  EXPECT_MSG(test::RunOp(Op::kGradTarget, inputs.Tensors(dy->get()), scenario.reduction) == ACLNN_SUCCESS, name);
  EXPECT_MSG(RunBoth(inputs.Tensors(both_dx->get()), both_dy->get(), scenario.reduction) == ACLNN_SUCCESS,
             name + ": " + aclGetRecentErrMsg());
  EXPECT_MSG(both_dx->ViewBytes() == dx->ViewBytes(), name + ": gradSelf differs from aclnn...Backward");
  EXPECT_MSG(both_dy->ViewBytes() == dy->ViewBytes(), name + ": gradTarget differs from aclnn...TargetBackward");
  EXPECT_MSG(UntouchedOutsideView(*both_dx) && UntouchedOutsideView(*both_dy), name + ": wrote outside a view");
}

std::vector<Scenario> Scenarios() {
  std::vector<Scenario> scenarios;
  const test::Dtypes mixed = {ACL_FLOAT16, ACL_BF16, ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
  for (int64_t reduction : {0, 1, 2}) {
    scenarios.push_back({Shape{}, std::nullopt, std::nullopt, std::nullopt, reduction, {}, test::Layout::kContiguous});
    scenarios.push_back({Shape{37, 29}, Shape{29}, Shape{37, 1}, std::nullopt, reduction, mixed,
                         test::Layout::kPadded});
    scenarios.push_back({Shape{5, 7, 3}, Shape{7, 1}, std::nullopt, std::nullopt, reduction,
                         {ACL_BF16, ACL_BF16, ACL_BF16, ACL_BF16, ACL_BF16}, test::Layout::kColumnMajor});
    scenarios.push_back({Shape{3, 50021}, Shape{3, 1}, Shape{50021}, std::nullopt, reduction,
                         {ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16},
                         test::Layout::kContiguous});
    scenarios.push_back({Shape{140001}, Shape{140001}, Shape{1}, std::nullopt, reduction, {},
                         test::Layout::kContiguous});
  }
  return scenarios;
}

TEST_CASE(self_target_backward_equals_the_two_single_gradients_bitwise) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (!Hooks().force_isa(isa)) {
      continue;
    }
    for (int threads : {1, 2, 4}) {
      Hooks().set_threads(threads);
      for (const Scenario &scenario : Scenarios()) {
        ExpectFusedEqualsSeparate(scenario, "isa " + std::to_string(static_cast<int>(isa)) + ", " +
                                                std::to_string(threads) + " threads");
      }
    }
  }
  Hooks().set_threads(0);
  Hooks().automatic_isa();
}

TEST_CASE(self_target_backward_of_an_empty_self_writes_nothing) {
  const Scenario scenario{Shape{0, 3}, Shape{3}, std::nullopt, std::nullopt, 1, {}, test::Layout::kContiguous};
  const test::ScenarioInputs inputs(scenario);
  auto dx = test::MakeOutput(Op::kGradSelf, scenario);
  auto dy = test::MakeOutput(Op::kGradTarget, scenario);
  EXPECT_EQ(RunBoth(inputs.Tensors(dx->get()), dy->get(), 1), ACLNN_SUCCESS);
}

// The second output's errors: each names gradTarget; the first output's are those of aclnn...Backward.
TEST_CASE(self_target_backward_checks_grad_target) {
  const Scenario scenario{Shape{4, 3}, std::nullopt, std::nullopt, std::nullopt, 0, {}, test::Layout::kContiguous};
  const test::ScenarioInputs inputs(scenario);
  auto dx = test::MakeOutput(Op::kGradSelf, scenario);
  auto wrong_dtype = test::MakeTensor(Shape{4, 3}, ACL_FLOAT16, test::Layout::kContiguous);
  auto wrong_shape = test::MakeTensor(Shape{3, 4}, ACL_FLOAT, test::Layout::kContiguous);
  struct Case {
    aclTensor *grad_target;
    aclnnStatus status;
    const char *says;
  };
  const Case cases[] = {
      {nullptr, ACLNN_ERR_PARAM_NULLPTR, "gradTarget is null"},
      {wrong_dtype->get(), ACLNN_ERR_PARAM_INVALID, "gradTarget has dtype FLOAT16 but must have the dtype of target"},
      {wrong_shape->get(), ACLNN_ERR_PARAM_INVALID, "gradTarget has shape [3,4] but must have the shape of target"},
  };
  for (const Case &c : cases) {
    EXPECT_EQ(RunBoth(inputs.Tensors(dx->get()), c.grad_target, 0), c.status);
    const std::string message = aclGetRecentErrMsg();
    EXPECT_MSG(message.find(c.says) != std::string::npos, "message: " + message);
  }
  test::ExpectValidCallStillRight();
}

TEST_CASE(self_target_backward_rejects_an_executor_of_another_operation) {
  const Scenario scenario{Shape{4, 3}, std::nullopt, std::nullopt, std::nullopt, 0, {}, test::Layout::kContiguous};
  const test::ScenarioInputs inputs(scenario);
  auto dx = test::MakeOutput(Op::kGradSelf, scenario);
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = nullptr;
  EXPECT_EQ(test::PlanOp(Op::kGradSelf, inputs.Tensors(dx->get()), 0, &workspace_size, &executor), ACLNN_SUCCESS);
  EXPECT_EQ(aclnnBinaryCrossEntropyWithLogitsSelfTargetBackward(nullptr, workspace_size, executor, nullptr),
            ACLNN_ERR_PARAM_INVALID);
  const std::string message = aclGetRecentErrMsg();
  EXPECT_MSG(message.find("was planned by aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize") !=
                 std::string::npos,
             "message: " + message);
}

}  // namespace
