// aclnnBinaryCrossEntropyWithLogitsAndAllGradients: the loss and the gradients of every input for a gradOutput of 1,
// bit for bit the forward's loss and the single gradients with gradOutput = 1 on every ISA, thread count, dtype,
// layout, broadcast pattern and reduction, with nothing written outside the output views; its empty-self results
// and its own argument errors.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "aclnnop/aclnn_binary_cross_entropy_with_logits_and_all_gradients.h"
#include "one_call_checks.h"
#include "op_runner.h"
#include "test_harness.h"

namespace {

using ms_bcewl::OpOutputs;
using test::HostTensor;
using test::Operation;
using test::Scenario;
using test::Shape;

aclnnStatus RunLossAndAll(const test::OpTensors &t, const OpOutputs &out, int64_t reduction) {
  return test::RunTwoPhases(
      [&](uint64_t *workspace_size, aclOpExecutor **executor) {
        return aclnnBinaryCrossEntropyWithLogitsAndAllGradientsGetWorkspaceSize(
            t.self, t.target, t.weight, t.pos_weight, reduction, out.loss, out.grad_self, out.grad_target,
            out.grad_weight, out.grad_pos_weight, workspace_size, executor);
      },
      [](void *workspace, uint64_t workspace_size, aclOpExecutor *executor) {
        return aclnnBinaryCrossEntropyWithLogitsAndAllGradients(workspace, workspace_size, executor, nullptr);
      });
}

// The operations whose outputs the call gives for a scenario, in the order of OpOutputs' fields.
std::vector<Operation> OpsOf(const Scenario &scenario) {
  std::vector<Operation> ops = {Operation::kForward, Operation::kGradSelf, Operation::kGradTarget};
  if (scenario.w_shape) {
    ops.push_back(Operation::kGradWeight);
  }
  if (scenario.p_shape) {
    ops.push_back(Operation::kGradPosWeight);
  }
  return ops;
}

// The weight gradients stay null where the scenario has no such input.
OpOutputs OutputsOf(const std::vector<Operation> &ops, const std::vector<std::unique_ptr<HostTensor>> &tensors) {
  OpOutputs out;
  aclTensor **slots[] = {&out.loss, &out.grad_self, &out.grad_target, &out.grad_weight, &out.grad_pos_weight};
  for (size_t k = 0; k < ops.size(); ++k) {
    *slots[static_cast<int>(ops[k])] = tensors[k]->get();
  }
  return out;
}

void ExpectEqualsForwardAndGradientsOfOne(const std::vector<Scenario> &scenarios) {
  const auto set_grad_output_to_one = [](test::ScenarioInputs *inputs) {
    inputs->g->Set(std::vector<double>(static_cast<size_t>(inputs->g->numel()), 1.0));
  };
  const auto loss_and_all = [](const Scenario &scenario, const test::ScenarioInputs &inputs,
                               const std::vector<Operation> &ops,
                               const std::vector<std::unique_ptr<HostTensor>> &outputs) {
    return RunLossAndAll(inputs.Tensors(nullptr), OutputsOf(ops, outputs), scenario.reduction);
  };
  test::ExpectOneCallEqualsSingleOperations(scenarios, OpsOf, set_grad_output_to_one, loss_and_all,
                                            "loss and all gradients");
}

const test::Dtypes kMixed = {ACL_FLOAT16, ACL_BF16, ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
const test::Dtypes kHalf = {ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT16};
const test::Dtypes kBFloat16 = {ACL_BF16, ACL_BF16, ACL_BF16, ACL_BF16, ACL_BF16};

// Every reduction over: a 0-d self; per-class and per-row weights; 16-bit data read in registers and staged
// (strided); sizes with several reduction blocks (8192 elements) on one thread and on the threads. The weight
// gradients that join the pass of the loss: per-class ones over several row blocks (8192 rows) on the threads (both,
// in registers too), and full-shape ones (masks); a per-class one joined beside a mask computed after the pass; and
// a per-class one over too few rows for the threads, in a pass whose tasks share a block's lanes, with each
// element's loss staged and summed after it.
std::vector<Scenario> Scenarios() {
  std::vector<Scenario> scenarios;
  for (int64_t reduction : {0, 1, 2}) {
    scenarios.push_back({Shape{}, std::nullopt, std::nullopt, std::nullopt, reduction, {}, test::Layout::kContiguous});
    scenarios.push_back(
        {Shape{37, 29}, Shape{29}, Shape{37, 1}, std::nullopt, reduction, kMixed, test::Layout::kPadded});
    scenarios.push_back(
        {Shape{5, 7, 3}, Shape{7, 1}, std::nullopt, std::nullopt, reduction, kBFloat16, test::Layout::kColumnMajor});
    scenarios.push_back(
        {Shape{1000, 33}, std::nullopt, std::nullopt, std::nullopt, reduction, kBFloat16, test::Layout::kPadded});
    scenarios.push_back(
        {Shape{20000, 9}, std::nullopt, std::nullopt, std::nullopt, reduction, kHalf, test::Layout::kContiguous});
    scenarios.push_back(
        {Shape{300, 257}, std::nullopt, std::nullopt, std::nullopt, reduction, {}, test::Layout::kContiguous});
    scenarios.push_back(
        {Shape{3, 50021}, Shape{3, 1}, Shape{50021}, std::nullopt, reduction, kHalf, test::Layout::kContiguous});
    scenarios.push_back(
        {Shape{140001}, Shape{140001}, std::nullopt, std::nullopt, reduction, {}, test::Layout::kContiguous});
    scenarios.push_back(
        {Shape{16400, 6}, Shape{6}, Shape{1, 6}, std::nullopt, reduction, {}, test::Layout::kContiguous});
    scenarios.push_back(
        {Shape{2, 11000, 3}, std::nullopt, Shape{3}, std::nullopt, reduction, kBFloat16, test::Layout::kContiguous});
    scenarios.push_back(
        {Shape{16400, 4}, Shape{4}, Shape{16400, 4}, std::nullopt, reduction, kHalf, test::Layout::kPadded});
    scenarios.push_back(
        {Shape{300, 257}, std::nullopt, Shape{300, 257}, std::nullopt, reduction, kMixed, test::Layout::kContiguous});
    scenarios.push_back(
        {Shape{132, 1000}, Shape{1000}, Shape{1, 1000}, std::nullopt, reduction, kHalf, test::Layout::kContiguous});
  }
  return scenarios;
}

TEST_CASE(loss_and_all_gradients_equal_the_forward_and_the_gradients_of_a_unit_grad_output_bitwise) {
  ExpectEqualsForwardAndGradientsOfOne(Scenarios());
}

TEST_CASE(loss_and_all_gradients_of_an_empty_self_write_the_empty_loss_and_zero_weight_gradients) {
  for (int64_t reduction : {1, 2}) {
    const Scenario scenario{Shape{0, 3}, Shape{3}, Shape{1}, std::nullopt, reduction, {}, test::Layout::kContiguous};
    const test::ScenarioInputs inputs(scenario);
    const std::vector<Operation> ops = OpsOf(scenario);
    std::vector<std::unique_ptr<HostTensor>> out;
    for (Operation op : ops) {
      out.push_back(test::MakeOutput(op, scenario));
    }
    EXPECT_EQ(RunLossAndAll(inputs.Tensors(nullptr), OutputsOf(ops, out), reduction), ACLNN_SUCCESS);
    const double loss = out[0]->Values()[0];
    EXPECT_MSG(reduction == 1 ? std::isnan(loss) : loss == 0.0, "empty loss " + test::NumberText(loss));
    EXPECT_MSG(out[3]->Values() == std::vector<double>(3, 0.0), "gradWeightOptional is not zeros");
    EXPECT_MSG(out[4]->Values() == std::vector<double>(1, 0.0), "gradPosWeightOptional is not zeros");
  }
}

struct ErrorCase {
  const char *what;
  std::function<aclnnStatus()> call;
  aclnnStatus status;
  const char *says;
};

// Each error names its argument; the checks are those of the forward and of AllBackward.
TEST_CASE(loss_and_all_gradients_check_their_outputs) {
  const Scenario scenario{Shape{4, 3}, Shape{3}, std::nullopt, std::nullopt, 1, {}, test::Layout::kContiguous};
  const test::ScenarioInputs inputs(scenario);
  const test::OpTensors t = inputs.Tensors(nullptr);
  std::vector<std::unique_ptr<HostTensor>> out;
  for (Operation op : OpsOf(scenario)) {
    out.push_back(test::MakeOutput(op, scenario));
  }
  auto float_2 = test::MakeTensor(Shape{2}, ACL_FLOAT, test::Layout::kContiguous);
  auto half_scalar = test::MakeTensor(Shape{}, ACL_FLOAT16, test::Layout::kContiguous);
  auto float_3x4 = test::MakeTensor(Shape{3, 4}, ACL_FLOAT, test::Layout::kContiguous);
  const auto with = [&](int slot, aclTensor *tensor) {
    OpOutputs outputs = OutputsOf(OpsOf(scenario), out);
    aclTensor **slots[] = {&outputs.loss, &outputs.grad_self, &outputs.grad_target, &outputs.grad_weight,
                           &outputs.grad_pos_weight};
    *slots[slot] = tensor;
    return outputs;
  };
  const std::vector<ErrorCase> cases = {
      {"null out", [&] { return RunLossAndAll(t, with(0, nullptr), 1); }, ACLNN_ERR_PARAM_NULLPTR, "out is null"},
      {"mean into shape [2]", [&] { return RunLossAndAll(t, with(0, float_2->get()), 1); }, ACLNN_ERR_PARAM_INVALID,
       "out has shape [2] but reduction mean needs shape [] or [1]"},
      {"out dtype", [&] { return RunLossAndAll(t, with(0, half_scalar->get()), 2); }, ACLNN_ERR_PARAM_INVALID,
       "out has dtype FLOAT16 but must have the dtype of target"},
      {"none into a reduced out", [&] { return RunLossAndAll(t, with(0, out[0]->get()), 0); }, ACLNN_ERR_PARAM_INVALID,
       "out has shape [] but must have the shape of target, [4,3]"},
      {"null gradSelf", [&] { return RunLossAndAll(t, with(1, nullptr), 1); }, ACLNN_ERR_PARAM_NULLPTR,
       "gradSelf is null"},
      {"gradTarget shape", [&] { return RunLossAndAll(t, with(2, float_3x4->get()), 1); }, ACLNN_ERR_PARAM_INVALID,
       "gradTarget has shape [3,4] but must have the shape of target"},
      {"weight without its gradient", [&] { return RunLossAndAll(t, with(3, nullptr), 1); }, ACLNN_ERR_PARAM_NULLPTR,
       "gradWeightOptional is null"},
      {"a gradient without its input", [&] { return RunLossAndAll(t, with(4, out[3]->get()), 1); },
       ACLNN_ERR_PARAM_INVALID, "gradPosWeightOptional is given but posWeightOptional is null"},
      {"reduction 3", [&] { return RunLossAndAll(t, with(0, out[0]->get()), 3); }, ACLNN_ERR_PARAM_INVALID,
       "reduction 3 is not in [0, 2]"},
  };
  for (const ErrorCase &c : cases) {
    EXPECT_MSG(c.call() == c.status, c.what);
    const std::string message = aclGetRecentErrMsg();
    EXPECT_MSG(message.find(c.says) != std::string::npos, std::string(c.what) + ": message: " + message);
    EXPECT_MSG(message.find("aclnnBinaryCrossEntropyWithLogitsAndAllGradientsGetWorkspaceSize") != std::string::npos,
               std::string(c.what) + ": the message does not name the function: " + message);
  }
  test::ExpectValidCallStillRight();
}

}  // namespace
