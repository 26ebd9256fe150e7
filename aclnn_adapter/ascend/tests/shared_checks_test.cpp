// Host test of the CANN-independent part of the Ascend backend: the shared checks reached through the facts
// seam, with this library's names in the messages. Prints "N passed, M failed"; exits non-zero on a failure.
#include <cstdio>
#include <string>
#include <vector>

#include "aclnnop/aclnn_ms_bcewl_binary_cross_entropy_with_logits.h"
#include "shared_checks.h"

namespace {

using ms_bcewl::OpKind;
using ms_bcewl::ascend::CallFacts;
using ms_bcewl::ascend::CheckCall;
using ms_bcewl::ascend::TensorFacts;

int passed = 0;
int failed = 0;

TensorFacts Tensor(std::vector<int64_t> shape, aclDataType dtype = ACL_FLOAT) {
  return TensorFacts{true, std::move(shape), static_cast<int>(dtype)};
}

CallFacts ValidForward(int64_t reduction = 1) {
  CallFacts facts;
  facts.self = Tensor({4, 3});
  facts.target = Tensor({4, 3});
  facts.weight = Tensor({3});
  facts.out = reduction == 0 ? Tensor({4, 3}) : Tensor({});
  facts.reduction = reduction;
  facts.has_workspace_size = true;
  facts.has_executor = true;
  return facts;
}

CallFacts ValidGradSelf() {
  CallFacts facts = ValidForward();
  facts.kind = OpKind::kGradSelf;
  facts.grad_output = Tensor({});
  facts.out = Tensor({4, 3});
  return facts;
}

void Expect(const char *name, const CallFacts &facts, int status, const char *message_part = "") {
  const int got = CheckCall(facts);
  const std::string message = aclnnMsBcewlLastErrorMessage();
  if (got == status && message.find(message_part) != std::string::npos) {
    ++passed;
    return;
  }
  ++failed;
  std::printf("FAILED %s: status %d (expected %d), message \"%s\" (expected to contain \"%s\")\n", name, got,
              status, message.c_str(), message_part);
}

}  // namespace

int main() {
  Expect("valid mean forward", ValidForward(), 0);
  Expect("valid none forward", ValidForward(0), 0);
  Expect("valid gradient of self", ValidGradSelf(), 0);

  CallFacts facts = ValidForward();
  facts.out = Tensor({1});
  Expect("mean into out [1]", facts, 0);

  facts = ValidForward();
  facts.self = TensorFacts{};
  Expect("null self", facts, 161001, "aclnnMsBcewlBinaryCrossEntropyWithLogitsGetWorkspaceSize: error 161001");

  facts = ValidForward();
  facts.has_executor = false;
  Expect("null executor pointer", facts, 161001, "executor");

  facts = ValidForward();
  facts.target = Tensor({4, 3}, ACL_DOUBLE);
  Expect("double target", facts, 161002, "DOUBLE");

  facts = ValidForward();
  facts.out = Tensor({}, ACL_FLOAT16);
  Expect("out dtype differs from target", facts, 161002, "must have the dtype of target");

  facts = ValidForward();
  facts.reduction = 3;
  Expect("reduction 3", facts, 161002, "reduction 3");

  facts = ValidForward();
  facts.target = Tensor({4, 1, 3});
  Expect("self and target shapes differ", facts, 161002, "must be equal");

  facts = ValidForward();
  facts.weight = Tensor({1, 4, 3});
  Expect("weight enlarging self", facts, 161002, "cannot broadcast");

  facts = ValidForward();
  facts.self = facts.target = Tensor({1, 1, 1, 1, 1, 1, 1, 1, 1});
  Expect("rank 9", facts, 161002, "at most 8");

  facts = ValidGradSelf();
  facts.out = Tensor({4, 3}, ACL_BF16);
  Expect("gradient dtype differs from self", facts, 161002,
         "aclnnMsBcewlBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize");

  facts = ValidGradSelf();
  facts.grad_output = TensorFacts{};
  Expect("null gradOutput", facts, 161001, "gradOutput");

  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
