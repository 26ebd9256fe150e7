// Phase 2 and the executor: consumption, reuse, forged handles, workspace checks, and plans that outlive the
// aclTensors they were made from.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "op_runner.h"
#include "test_harness.h"

namespace {

using test::HostTensor;
using test::Operation;

bool MessageMentions(const char *word) { return std::strstr(aclGetRecentErrMsg(), word) != nullptr; }

// A mean over more than one 8192-element block, so that the plan needs a workspace of block partials.
struct MultiBlockMean {
  HostTensor self{{3, 8000}, ACL_FLOAT};
  HostTensor target{{3, 8000}, ACL_FLOAT};
  HostTensor out{{1}, ACL_FLOAT};
  double expected;

  MultiBlockMean() {
    self.Set(test::RandomValues(24000, -3, 3, 7));
    target.Set(test::RandomValues(24000, 0, 1, 8));
    expected = test::Reference(
                   test::RefProblem{{self.shape(), self.Values()}, {target.shape(), target.Values()}, {}, {}, {}, 1})
                   .loss[0];
  }

  aclOpExecutor *Plan(uint64_t *workspace_size) {
    aclOpExecutor *executor = nullptr;
    EXPECT_EQ(test::PlanOp(Operation::kForward, {nullptr, self.get(), target.get(), nullptr, nullptr, out.get()}, 1,
                           workspace_size, &executor),
              ACLNN_SUCCESS);
    return executor;
  }

  bool Right() const { return std::fabs(out.Values()[0] - expected) <= 1e-6 * std::fabs(expected); }
};

}  // namespace

TEST_CASE(executor_phase_two_twice_is_an_error_not_a_crash) {
  MultiBlockMean mean;
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = mean.Plan(&workspace_size);
  EXPECT_EQ(workspace_size, uint64_t{3 * sizeof(double)});  // ceil(24000 / 8192) block partials
  void *workspace = nullptr;
  EXPECT_EQ(aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  EXPECT_EQ(test::ExecuteOp(Operation::kForward, workspace, workspace_size, executor), ACLNN_SUCCESS);
  EXPECT_TRUE(mean.Right());
  EXPECT_EQ(test::ExecuteOp(Operation::kForward, workspace, workspace_size, executor), ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(MessageMentions("already run"));
  EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_ERR_PARAM_INVALID);
  aclrtFree(workspace);
  test::ExpectValidCallStillRight();
}

TEST_CASE(executor_workspace_too_small_or_null_is_rejected_and_a_replan_works) {
  MultiBlockMean mean;
  void *workspace = nullptr;
  EXPECT_EQ(aclrtMalloc(&workspace, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = mean.Plan(&workspace_size);
  EXPECT_EQ(test::ExecuteOp(Operation::kForward, workspace, workspace_size - 1, executor), ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(MessageMentions("workspaceSize 23"));
  // Phase 2 consumed the executor although it failed.
  EXPECT_EQ(test::ExecuteOp(Operation::kForward, workspace, workspace_size, executor), ACLNN_ERR_PARAM_INVALID);
  executor = mean.Plan(&workspace_size);
  EXPECT_EQ(test::ExecuteOp(Operation::kForward, nullptr, workspace_size, executor), ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(MessageMentions("workspace is null"));
  executor = mean.Plan(&workspace_size);
  EXPECT_EQ(test::ExecuteOp(Operation::kForward, static_cast<char *>(workspace) + 4, workspace_size, executor),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(MessageMentions("aligned"));
  executor = mean.Plan(&workspace_size);
  EXPECT_EQ(test::ExecuteOp(Operation::kForward, workspace, workspace_size, executor), ACLNN_SUCCESS);
  EXPECT_TRUE(mean.Right());
  aclrtFree(workspace);
}

TEST_CASE(executor_null_forged_or_destroyed_handles_are_rejected) {
  EXPECT_EQ(test::ExecuteOp(Operation::kForward, nullptr, 0, nullptr), ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(MessageMentions("executor is null"));
  alignas(64) char forged[256] = {};
  EXPECT_EQ(test::ExecuteOp(Operation::kGradSelf, nullptr, 0, reinterpret_cast<aclOpExecutor *>(forged)),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclDestroyAclOpExecutor(reinterpret_cast<aclOpExecutor *>(forged)), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(aclDestroyAclOpExecutor(nullptr), ACLNN_ERR_PARAM_NULLPTR);

  MultiBlockMean mean;
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = mean.Plan(&workspace_size);
  EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
  EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_ERR_PARAM_INVALID);
  EXPECT_EQ(test::ExecuteOp(Operation::kForward, nullptr, 0, executor), ACLNN_ERR_PARAM_INVALID);
  test::ExpectValidCallStillRight();
}

TEST_CASE(executor_of_one_operation_cannot_run_another) {
  MultiBlockMean mean;
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = mean.Plan(&workspace_size);
  EXPECT_EQ(test::ExecuteOp(Operation::kGradSelf, nullptr, 0, executor), ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(MessageMentions("planned by aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize"));
  EXPECT_EQ(test::ExecuteOp(Operation::kForward, nullptr, 0, executor), ACLNN_ERR_PARAM_INVALID);
}

TEST_CASE(executor_runs_on_a_created_stream_and_rejects_a_destroyed_one) {
  const test::Float32Inputs inputs = test::MindSporeDocExample();
  HostTensor self({2, 3}, ACL_FLOAT), target({2, 3}, ACL_FLOAT), out({}, ACL_FLOAT);
  self.Set(inputs.x.values);
  target.Set(inputs.y.values);
  aclrtStream stream = nullptr;
  EXPECT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  for (bool destroyed : {false, true}) {
    if (destroyed) {
      aclrtDestroyStream(stream);
    }
    uint64_t workspace_size = 0;
    aclOpExecutor *executor = nullptr;
    EXPECT_EQ(test::PlanOp(Operation::kForward, {nullptr, self.get(), target.get(), nullptr, nullptr, out.get()}, 1,
                           &workspace_size, &executor),
              ACLNN_SUCCESS);
    EXPECT_EQ(test::ExecuteOp(Operation::kForward, nullptr, 0, executor, stream),
              destroyed ? ACLNN_ERR_PARAM_INVALID : ACLNN_SUCCESS);
  }
  EXPECT_TRUE(std::fabs(out.Values()[0] - test::kMindSporeDocMean) < 1e-7);
}

TEST_CASE(executor_plan_outlives_the_tensor_handles) {
  const test::Float32Inputs inputs = test::MindSporeDocExample();
  float x[6], y[6], out = 0.0f;
  for (int i = 0; i < 6; ++i) {
    x[i] = static_cast<float>(inputs.x.values[i]);
    y[i] = static_cast<float>(inputs.y.values[i]);
  }
  const int64_t dims[] = {2, 3};
  const int64_t one[] = {1};
  aclTensor *self = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 2, x);
  aclTensor *target = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 2, y);
  aclTensor *result = aclCreateTensor(one, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, one, 1, &out);
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = nullptr;
  EXPECT_EQ(test::PlanOp(Operation::kForward, {nullptr, self, target, nullptr, nullptr, result}, 2, &workspace_size,
                         &executor),
            ACLNN_SUCCESS);
  aclDestroyTensor(self);
  aclDestroyTensor(target);
  aclDestroyTensor(result);
  EXPECT_EQ(test::ExecuteOp(Operation::kForward, nullptr, 0, executor), ACLNN_SUCCESS);
  EXPECT_TRUE(std::fabs(out - test::kMindSporeDocSum) < 1e-6);
}

TEST_CASE(executor_workspace_sizes_follow_the_plan) {
  struct Expected {
    Operation op;
    test::Shape shape;
    test::Shape weight_shape;
    int64_t reduction;
    uint64_t bytes;
  };
  const Expected cases[] = {
      {Operation::kForward, {100000}, {1}, 0, 0},                               // elementwise: no workspace
      {Operation::kForward, {100}, {1}, 1, 0},                                  // one block: no partials to keep
      {Operation::kForward, {100000}, {1}, 2, 13 * sizeof(double)},             // 13 blocks
      {Operation::kGradWeight, {4, 30000}, {4, 1}, 1, 4 * 4 * sizeof(double)},  // 4 outputs x 4 blocks
      {Operation::kGradWeight, {4, 30000}, {30000}, 1, 0},                      // 4 contributions per output
      {Operation::kGradSelf, {4, 30000}, {1}, 1, 0},
  };
  for (const Expected &c : cases) {
    test::Scenario scenario;
    scenario.shape = c.shape;
    scenario.w_shape = c.weight_shape;
    scenario.reduction = c.reduction;
    test::ScenarioInputs inputs(scenario);
    auto out = test::MakeOutput(c.op, scenario);
    uint64_t workspace_size = 1;
    aclOpExecutor *executor = nullptr;
    EXPECT_EQ(test::PlanOp(c.op, inputs.Tensors(out->get()), c.reduction, &workspace_size, &executor), ACLNN_SUCCESS);
    EXPECT_MSG(workspace_size == c.bytes, std::string(test::OperationName(c.op)) + " planned " +
                                              std::to_string(workspace_size) + " bytes, expected " +
                                              std::to_string(c.bytes));
    EXPECT_EQ(aclDestroyAclOpExecutor(executor), ACLNN_SUCCESS);
  }
}

// A plan of 0 workspace bytes may be handed any pointer: nothing is written through it. Per-class gradients with
// one block per output are summed row by row into partials of their own (a regression: they were written to the
// caller's 0-byte workspace).
TEST_CASE(executor_never_writes_a_workspace_of_zero_bytes) {
  for (Operation op : {Operation::kGradWeight, Operation::kGradPosWeight, Operation::kForward}) {
    test::Scenario scenario;
    scenario.shape = {100, 64};
    scenario.w_shape = test::Shape{64};
    scenario.p_shape = test::Shape{64};
    scenario.reduction = 1;
    test::ScenarioInputs inputs(scenario);
    auto out = test::MakeOutput(op, scenario);
    uint64_t workspace_size = 1;
    aclOpExecutor *executor = nullptr;
    EXPECT_EQ(test::PlanOp(op, inputs.Tensors(out->get()), scenario.reduction, &workspace_size, &executor),
              ACLNN_SUCCESS);
    EXPECT_EQ(workspace_size, uint64_t{0});
    std::vector<unsigned char> canary(4096, 0xA5);
    EXPECT_EQ(test::ExecuteOp(op, canary.data(), 0, executor), ACLNN_SUCCESS);
    EXPECT_MSG(std::all_of(canary.begin(), canary.end(), [](unsigned char byte) { return byte == 0xA5; }),
               std::string(test::OperationName(op)) + " wrote to a workspace of 0 bytes");
  }
}
