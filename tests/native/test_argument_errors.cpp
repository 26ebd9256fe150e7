// Phase-1 argument errors of every operation: each code and message, the precedence of the checks
// (CheckNotNull, CheckDtypeValid, CheckReduction, CheckShape), and a right answer from the next valid call.
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "op_runner.h"
#include "test_harness.h"

namespace {

using test::HostTensor;
using test::Operation;
using test::OpTensors;
using test::Shape;

// Valid float32 arguments of shape (2, 3) for every operation, and spare tensors to break them with.
struct Arguments {
  HostTensor grad{{2, 3}, ACL_FLOAT};
  HostTensor self{{2, 3}, ACL_FLOAT};
  HostTensor target{{2, 3}, ACL_FLOAT};
  HostTensor weight{{3}, ACL_FLOAT};
  HostTensor pos_weight{{3}, ACL_FLOAT};
  HostTensor out_like_self{{2, 3}, ACL_FLOAT};
  HostTensor out_like_weight{{3}, ACL_FLOAT};
  HostTensor out_scalar{{}, ACL_FLOAT};

  HostTensor double_2x3{{2, 3}, ACL_DOUBLE};
  HostTensor int32_3{{3}, ACL_INT32};
  HostTensor half_2x3{{2, 3}, ACL_FLOAT16};
  HostTensor half_3{{3}, ACL_FLOAT16};
  HostTensor rank9{{1, 1, 1, 1, 1, 1, 1, 2, 3}, ACL_FLOAT};
  HostTensor f32_2x1x3{{2, 1, 3}, ACL_FLOAT};
  HostTensor f32_1x2x3{{1, 2, 3}, ACL_FLOAT};
  HostTensor f32_2{{2}, ACL_FLOAT};
  HostTensor f32_3x2{{3, 2}, ACL_FLOAT};
  HostTensor f32_4{{4}, ACL_FLOAT};

  OpTensors For(Operation op) {
    const bool weight_shaped = op == Operation::kGradWeight || op == Operation::kGradPosWeight;
    return OpTensors{grad.get(),   self.get(),       target.get(),
                     weight.get(), pos_weight.get(), weight_shaped ? out_like_weight.get() : out_like_self.get()};
  }
};

const char *OutName(Operation op) {
  static const char *kNames[] = {"out", "out", "gradTarget", "gradWeight", "gradPosWeight"};
  return kNames[static_cast<int>(op)];
}

struct Call {
  OpTensors tensors;
  int64_t reduction = 1;
  bool null_workspace_size = false;
  bool null_executor = false;
};

struct ErrorCase {
  std::string name;
  std::function<bool(Operation)> applies;
  std::function<void(Arguments &, Operation, Call &)> break_call;
  aclnnStatus expected;
  std::vector<std::string> words;  // the message names them; "{out}" stands for the output's name
};

std::function<bool(Operation)> AllOps() {
  return [](Operation) { return true; };
}
std::function<bool(Operation)> Gradients() {
  return [](Operation op) { return op != Operation::kForward; };
}
std::function<bool(Operation)> Only(Operation wanted) {
  return [wanted](Operation op) { return op == wanted; };
}

std::vector<ErrorCase> ErrorCases() {
  constexpr aclnnStatus kNull = ACLNN_ERR_PARAM_NULLPTR;
  constexpr aclnnStatus kInvalid = ACLNN_ERR_PARAM_INVALID;
  return {
      {"null_self",
       AllOps(),
       [](Arguments &, Operation, Call &c) { c.tensors.self = nullptr; },
       kNull,
       {"self is null"}},
      {"null_target", AllOps(), [](Arguments &, Operation, Call &c) { c.tensors.target = nullptr; }, kNull, {"target"}},
      {"null_out",
       AllOps(),
       [](Arguments &, Operation, Call &c) { c.tensors.out = nullptr; },
       kNull,
       {"{out} is null"}},
      {"null_grad_output",
       Gradients(),
       [](Arguments &, Operation, Call &c) { c.tensors.grad = nullptr; },
       kNull,
       {"gradOutput"}},
      {"null_weight_of_dw",
       Only(Operation::kGradWeight),
       [](Arguments &, Operation, Call &c) { c.tensors.weight = nullptr; },
       kNull,
       {"weight is null"}},
      {"null_pos_weight_of_dp",
       Only(Operation::kGradPosWeight),
       [](Arguments &, Operation, Call &c) { c.tensors.pos_weight = nullptr; },
       kNull,
       {"posWeight is null"}},
      {"null_workspace_size",
       AllOps(),
       [](Arguments &, Operation, Call &c) { c.null_workspace_size = true; },
       kNull,
       {"workspaceSize"}},
      {"null_executor", AllOps(), [](Arguments &, Operation, Call &c) { c.null_executor = true; }, kNull, {"executor"}},
      {"double_self",
       AllOps(),
       [](Arguments &a, Operation, Call &c) { c.tensors.self = a.double_2x3.get(); },
       kInvalid,
       {"self", "DOUBLE"}},
      {"int32_weight",
       AllOps(),
       [](Arguments &a, Operation, Call &c) { c.tensors.weight = a.int32_3.get(); },
       kInvalid,
       {"weight", "INT32"}},
      {"out_dtype_not_the_owners",
       AllOps(),
       [](Arguments &a, Operation op, Call &c) {
         const bool weight_shaped = op == Operation::kGradWeight || op == Operation::kGradPosWeight;
         c.tensors.out = weight_shaped ? a.half_3.get() : a.half_2x3.get();
       },
       kInvalid,
       {"{out} has dtype FLOAT16"}},
      {"reduction_3", AllOps(), [](Arguments &, Operation, Call &c) { c.reduction = 3; }, kInvalid, {"reduction 3"}},
      {"reduction_minus_1",
       AllOps(),
       [](Arguments &, Operation, Call &c) { c.reduction = -1; },
       kInvalid,
       {"reduction -1"}},
      {"rank_9_self",
       AllOps(),
       [](Arguments &a, Operation, Call &c) { c.tensors.self = a.rank9.get(); },
       kInvalid,
       {"self", "9 dims"}},
      {"target_shape_differs",
       AllOps(),
       [](Arguments &a, Operation, Call &c) { c.tensors.target = a.f32_2x1x3.get(); },
       kInvalid,
       {"[2,3]", "[2,1,3]"}},
      {"weight_enlarges_self",
       Only(Operation::kForward),
       [](Arguments &a, Operation, Call &c) { c.tensors.weight = a.f32_1x2x3.get(); },
       kInvalid,
       {"weightOptional", "[1,2,3]"}},
      {"pos_weight_not_broadcastable",
       Only(Operation::kForward),
       [](Arguments &a, Operation, Call &c) { c.tensors.pos_weight = a.f32_2.get(); },
       kInvalid,
       {"posWeightOptional"}},
      {"grad_output_not_broadcastable",
       Gradients(),
       [](Arguments &a, Operation, Call &c) { c.tensors.grad = a.f32_3x2.get(); },
       kInvalid,
       {"gradOutput", "[3,2]"}},
      {"out_shape_wrong",
       AllOps(),
       [](Arguments &a, Operation op, Call &c) {
         c.reduction = 0;
         c.tensors.out =
             op == Operation::kGradWeight || op == Operation::kGradPosWeight ? a.f32_4.get() : a.f32_3x2.get();
       },
       kInvalid,
       {"{out} has shape"}},
      {"mean_out_not_scalar",
       Only(Operation::kForward),
       [](Arguments &a, Operation, Call &c) { c.tensors.out = a.f32_2.get(); },
       kInvalid,
       {"[] or [1]"}},
      {"gradient_out_scalar_for_mean",
       Only(Operation::kGradSelf),
       [](Arguments &a, Operation, Call &c) { c.tensors.out = a.out_scalar.get(); },
       kInvalid,
       {"out has shape []"}},
      // Precedence: the earlier check wins.
      {"null_self_before_bad_dtype",
       AllOps(),
       [](Arguments &a, Operation, Call &c) {
         c.tensors.self = nullptr;
         c.tensors.target = a.double_2x3.get();
       },
       kNull,
       {"self is null"}},
      {"null_workspace_size_before_bad_dtype",
       AllOps(),
       [](Arguments &a, Operation, Call &c) {
         c.null_workspace_size = true;
         c.tensors.self = a.double_2x3.get();
       },
       kNull,
       {"workspaceSize"}},
      {"dtype_before_reduction",
       AllOps(),
       [](Arguments &a, Operation, Call &c) {
         c.tensors.target = a.double_2x3.get();
         c.reduction = 7;
       },
       kInvalid,
       {"target", "DOUBLE"}},
      {"reduction_before_shape",
       AllOps(),
       [](Arguments &a, Operation, Call &c) {
         c.tensors.target = a.f32_2x1x3.get();
         c.reduction = 7;
       },
       kInvalid,
       {"reduction 7"}},
  };
}

bool Mentions(const std::string &message, std::string word, Operation op) {
  const size_t placeholder = word.find("{out}");
  if (placeholder != std::string::npos) {
    word.replace(placeholder, 5, OutName(op));
  }
  return message.find(word) != std::string::npos;
}

void ExpectError(const ErrorCase &error, Operation op) {
  Arguments arguments;
  Call call{arguments.For(op)};
  error.break_call(arguments, op, call);
  uint64_t workspace_size = 123;
  aclOpExecutor *executor = reinterpret_cast<aclOpExecutor *>(&workspace_size);
  const aclnnStatus status =
      test::PlanOp(op, call.tensors, call.reduction, call.null_workspace_size ? nullptr : &workspace_size,
                   call.null_executor ? nullptr : &executor);
  const std::string message = aclGetRecentErrMsg();
  EXPECT_MSG(status == error.expected, "status " + std::to_string(status) + ", message: " + message);
  for (const std::string &word : error.words) {
    EXPECT_MSG(Mentions(message, word, op), "message \"" + message + "\" does not mention \"" + word + "\"");
  }
  EXPECT_TRUE(call.null_executor || executor == nullptr);
  test::ExpectValidCallStillRight();
}

bool RegisterErrorCases() {
  for (const ErrorCase &error : ErrorCases()) {
    for (Operation op : test::kSingleOutputOperations) {
      if (error.applies(op)) {
        test::RegisterTest("argument_error " + error.name + " " + test::OperationName(op),
                           [error, op] { ExpectError(error, op); });
      }
    }
  }
  return true;
}

const bool kRegistered = RegisterErrorCases();

}  // namespace

TEST_CASE(argument_error_tensor_with_elements_but_no_data) {
  const int64_t dims[] = {2, 3};
  aclTensor *dataless = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 2, nullptr);
  Arguments arguments;
  OpTensors tensors = arguments.For(Operation::kForward);
  tensors.target = dataless;
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = nullptr;
  EXPECT_EQ(test::PlanOp(Operation::kForward, tensors, 0, &workspace_size, &executor), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_TRUE(std::strstr(aclGetRecentErrMsg(), "target") != nullptr);
  aclDestroyTensor(dataless);
  test::ExpectValidCallStillRight();
}

// As in CANN, an empty self skips the broadcast checks (nothing is read): a mean is NaN whatever the weight.
TEST_CASE(argument_empty_self_skips_broadcast_checks) {
  HostTensor self({5, 0, 3}, ACL_FLOAT), target({5, 0, 3}, ACL_FLOAT), weight({2}, ACL_FLOAT), out({}, ACL_FLOAT);
  EXPECT_EQ(test::RunOp(Operation::kForward, {nullptr, self.get(), target.get(), weight.get(), nullptr, out.get()}, 1),
            ACLNN_SUCCESS);
  EXPECT_TRUE(std::isnan(out.Values()[0]));
}
