// What the MindSpore entries share (include/ms_bcewl/mindspore_entry.h): the place of each
// tensor of a call in its arguments, and the two phases the library exports for them (msBcewlPlanOperation,
// msBcewlRunOperation), which must give the bits and the refusals of the aclnn functions.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "aclnnop/aclnn_binary_cross_entropy_with_logits_all_backward.h"
#include "ms_bcewl/mindspore_entry.h"
#include "op_runner.h"
#include "test_harness.h"

namespace {

using ms_bcewl::OpArguments;
using ms_bcewl::Variant;
using ms_bcewl::entry::Signature;
using ms_bcewl::entry::Views;
using test::HostTensor;
using test::Operation;

// Views whose handles are distinct tensors, so that each argument can be traced to its place.
Views DistinctViews(int count) {
  Views views;
  const int64_t dims[] = {1};
  static float data[ms_bcewl::kMaxTensors];
  for (int k = 0; k < count; ++k) {
    views[k] = ms_bcewl::entry::MakeContiguousView(dims, 1, ACL_FLOAT, &data[k]);
  }
  return views;
}

using Tensors = std::vector<const aclTensor *>;

// The tensors of the arguments in the order of the fields of OpArguments and OpOutputs.
Tensors Fields(const OpArguments &a) {
  const ms_bcewl::OpOutputs &out = a.outputs;
  return {a.grad_output, a.self,        a.target,        a.weight,        a.pos_weight,
          out.loss,      out.grad_self, out.grad_target, out.grad_weight, out.grad_pos_weight};
}

// Self, target, weight and pos_weight of a [4, 3] problem, with a [3] weight and a [1, 3] pos_weight.
struct Inputs {
  HostTensor grad{{4, 3}, ACL_FLOAT}, self{{4, 3}, ACL_FLOAT}, target{{4, 3}, ACL_FLOAT16};
  HostTensor weight{{3}, ACL_BF16}, pos_weight{{1, 3}, ACL_FLOAT};

  Inputs() {
    grad.Set(test::RandomValues(12, -2, 2, 1));
    self.Set(test::RandomValues(12, -4, 4, 2));
    target.Set(test::RandomValues(12, 0, 1, 3));
    weight.Set(test::RandomValues(3, 0, 2, 4));
    pos_weight.Set(test::RandomValues(3, 0, 3, 5));
  }
};

// The four gradients of one call, with the shapes and dtypes of their inputs.
struct Gradients {
  HostTensor self{{4, 3}, ACL_FLOAT}, target{{4, 3}, ACL_FLOAT16}, weight{{3}, ACL_BF16}, pos_weight{{1, 3}, ACL_FLOAT};

  std::vector<std::vector<uint8_t>> Bytes() const {
    return {self.ViewBytes(), target.ViewBytes(), weight.ViewBytes(), pos_weight.ViewBytes()};
  }
};

aclnnStatus RunThroughEntryPhases(const OpArguments &arguments) {
  return test::RunTwoPhases(
      [&](uint64_t *workspace_size, aclOpExecutor **executor) {
        return msBcewlPlanOperation(&arguments, workspace_size, executor);
      },
      [&](void *workspace, uint64_t workspace_size, aclOpExecutor *executor) {
        return msBcewlRunOperation(arguments.operation, workspace, workspace_size, executor, nullptr);
      });
}

}  // namespace

TEST_CASE(entry_arguments_take_each_view_from_its_place_in_the_signature) {
  // [grad_output,] self, target, [weight,] [pos_weight], then the outputs in the order of the C signature.
  const Views v = DistinctViews(9);
  const OpArguments gradients = ArgumentsOf(Signature{Operation::kGradAll, Variant::kWp}, 2, v);
  EXPECT_TRUE(Fields(gradients) == Tensors({v[0].get(), v[1].get(), v[2].get(), v[3].get(), v[4].get(), nullptr,
                                            v[5].get(), v[6].get(), v[7].get(), v[8].get()}));
  EXPECT_EQ(gradients.reduction, int64_t{2});
  const OpArguments fused = ArgumentsOf(Signature{Operation::kLossAndAllGradients, Variant::kP}, 0, v);
  EXPECT_TRUE(Fields(fused) == Tensors({nullptr, v[0].get(), v[1].get(), nullptr, v[2].get(), v[3].get(), v[4].get(),
                                        v[5].get(), nullptr, v[6].get()}));
  const OpArguments weight_gradient = ArgumentsOf(Signature{Operation::kGradWeight, Variant::kW}, 1, v);
  EXPECT_TRUE(Fields(weight_gradient) == Tensors({v[0].get(), v[1].get(), v[2].get(), v[3].get(), nullptr, nullptr,
                                                  nullptr, nullptr, v[4].get(), nullptr}));
}

TEST_CASE(entry_phases_give_the_bits_of_the_aclnn_functions) {
  const Inputs in;
  Gradients through_aclnn, through_entry;
  const test::OpTensors tensors{in.grad.get(),   in.self.get(),       in.target.get(),
                                in.weight.get(), in.pos_weight.get(), through_aclnn.self.get()};
  EXPECT_EQ(test::RunTwoPhases(
                [&](uint64_t *workspace_size, aclOpExecutor **executor) {
                  return aclnnBinaryCrossEntropyWithLogitsAllBackwardGetWorkspaceSize(
                      tensors.grad, tensors.self, tensors.target, tensors.weight, tensors.pos_weight, 1,
                      through_aclnn.self.get(), through_aclnn.target.get(), through_aclnn.weight.get(),
                      through_aclnn.pos_weight.get(), workspace_size, executor);
                },
                [](void *workspace, uint64_t workspace_size, aclOpExecutor *executor) {
                  return aclnnBinaryCrossEntropyWithLogitsAllBackward(workspace, workspace_size, executor, nullptr);
                }),
            ACLNN_SUCCESS);
  const OpArguments arguments{Operation::kGradAll,
                              in.grad.get(),
                              in.self.get(),
                              in.target.get(),
                              in.weight.get(),
                              in.pos_weight.get(),
                              1,
                              {nullptr, through_entry.self.get(), through_entry.target.get(),
                               through_entry.weight.get(), through_entry.pos_weight.get()}};
  EXPECT_EQ(RunThroughEntryPhases(arguments), ACLNN_SUCCESS);
  EXPECT_TRUE(through_entry.Bytes() == through_aclnn.Bytes());
}

TEST_CASE(entry_phases_refuse_as_the_aclnn_functions_do) {
  uint64_t workspace_size = 7;
  aclOpExecutor *executor = nullptr;
  EXPECT_EQ(msBcewlPlanOperation(nullptr, &workspace_size, &executor), ACLNN_ERR_PARAM_NULLPTR);
  const Inputs in;
  HostTensor loss{{}, ACL_FLOAT};
  const OpArguments mismatched{Operation::kForward, nullptr, in.self.get(), in.pos_weight.get(), nullptr, nullptr, 1,
                               {loss.get()}};
  EXPECT_EQ(msBcewlPlanOperation(&mismatched, &workspace_size, &executor), ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(std::string(aclGetRecentErrMsg()).find("must be equal") != std::string::npos);
  EXPECT_TRUE(executor == nullptr && workspace_size == 0);
  EXPECT_EQ(msBcewlRunOperation(Operation::kForward, nullptr, 0, nullptr, nullptr), ACLNN_ERR_PARAM_INVALID);
  test::ExpectValidCallStillRight();
}

TEST_CASE(entry_run_throws_the_library_sentence_and_then_runs_a_valid_call) {
  const Inputs in;
  HostTensor loss{{}, ACL_FLOAT16};
  const OpArguments bad_reduction{Operation::kForward, nullptr, in.self.get(), in.target.get(), nullptr, nullptr, 3,
                                  {loss.get()}};
  std::string message;
  try {
    ms_bcewl::entry::Run(bad_reduction);
  } catch (const std::runtime_error &error) {
    message = error.what();
  }
  EXPECT_MSG(message.find("reduction 3 is not in [0, 2]") != std::string::npos, message);
  EXPECT_MSG(message.find("returned aclnn status 161002") != std::string::npos, message);
  OpArguments sum = bad_reduction;
  sum.reduction = 2;
  ms_bcewl::entry::Run(sum);
  const double expected =
      test::Reference(
          test::RefProblem{{in.self.shape(), in.self.Values()}, {in.target.shape(), in.target.Values()}, {}, {}, {}, 2})
          .loss[0];
  const double got = loss.Values()[0];
  EXPECT_MSG(std::fabs(got - expected) <= 1e-3 * std::fabs(expected), got << " against " << expected);  // float16
}
