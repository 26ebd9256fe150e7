// Runs the host adapter's CheckArguments on tensors rebuilt from facts. Compiled against the host headers only
// (aclnn_adapter/include and src): the host aclTensor defined there is used in this file alone, never handed to
// CANN, and stays inside this library (hidden visibility), so it does not meet CANN's own aclTensor.
#include "shared_checks.h"

#include <functional>
#include <numeric>

#include "api/argument_checks.h"
#include "tensor/tensor.h"

namespace ms_bcewl::ascend {
namespace {

// A host tensor with the facts' shape and dtype. Its data pointer only has to be non-null: it is never read.
aclTensor HostTensorOf(const TensorFacts &facts) {
  aclTensor tensor;
  tensor.view_shape = facts.shape;
  tensor.storage_shape = facts.shape;
  tensor.dtype = static_cast<aclDataType>(facts.dtype);
  tensor.format = ACL_FORMAT_ND;
  tensor.numel = std::accumulate(facts.shape.begin(), facts.shape.end(), int64_t{1}, std::multiplies<>());
  tensor.data = &tensor;
  return tensor;
}

const aclTensor *PresentOrNull(const TensorFacts &facts, const aclTensor &tensor) {
  return facts.present ? &tensor : nullptr;
}

}  // namespace

int CheckCall(const CallFacts &facts) {
  const aclTensor grad_output = HostTensorOf(facts.grad_output);
  const aclTensor self = HostTensorOf(facts.self);
  const aclTensor target = HostTensorOf(facts.target);
  const aclTensor weight = HostTensorOf(facts.weight);
  const aclTensor pos_weight = HostTensorOf(facts.pos_weight);
  aclTensor out = HostTensorOf(facts.out);
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = nullptr;
  const OpArguments arguments{facts.kind,
                              PresentOrNull(facts.grad_output, grad_output),
                              PresentOrNull(facts.self, self),
                              PresentOrNull(facts.target, target),
                              PresentOrNull(facts.weight, weight),
                              PresentOrNull(facts.pos_weight, pos_weight),
                              facts.reduction,
                              facts.out.present ? &out : nullptr,
                              facts.has_workspace_size ? &workspace_size : nullptr,
                              facts.has_executor ? &executor : nullptr};
  return CheckArguments(arguments);
}

}  // namespace ms_bcewl::ascend
