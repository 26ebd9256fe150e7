// The seven two-phase operations of the aclnn API under one phase-1 signature (the forward and the loss with every
// gradient take no gradOutput; only the two fused operations, which give the gradients of every input, take
// gradTarget and the gradients of weight and pos_weight, and only the loss with every gradient takes `loss`, its
// first output: its gradSelf is `out`, as for AllBackward), with the exported names that their error messages start
// with and the names their messages give the outputs.
#ifndef MS_BCEWL_TESTS_FUZZ_OPS_H_
#define MS_BCEWL_TESTS_FUZZ_OPS_H_

#include "aclnn/acl_meta.h"
#include "ms_bcewl/operations.h"

namespace fuzz {

using ms_bcewl::Operation;
using ms_bcewl::TakesGradOutput;

// The list of operations has the single-output ones first; then the fused ones, which give the gradients of every
// input (of weight and pos_weight each exactly with its input), the second also the loss for a gradOutput of 1.
constexpr int kSingleOutputOpCount = static_cast<int>(Operation::kGradAll);
constexpr Operation kFusedOps[] = {Operation::kGradAll, Operation::kLossAndAllGradients};
constexpr int kMaxOutputs = 5;

inline bool IsFused(Operation op) { return ms_bcewl::GivesAllGradients(op); }

using PlanFunction = aclnnStatus (*)(const aclTensor *grad_output, const aclTensor *self, const aclTensor *target,
                                     const aclTensor *weight, const aclTensor *pos_weight, int64_t reduction,
                                     aclTensor *out, aclTensor *grad_target, aclTensor *grad_weight,
                                     aclTensor *grad_pos_weight, aclTensor *loss, uint64_t *workspace_size,
                                     aclOpExecutor **executor);
using RunFunction = aclnnStatus (*)(void *workspace, uint64_t workspace_size, aclOpExecutor *executor,
                                    aclrtStream stream);

struct OpApi {
  const char *name;  // the operation's name in the list of operations
  const char *plan_name;
  const char *run_name;
  PlanFunction plan;
  RunFunction run;
  // The names its messages give its outputs, in the order of its C signature (out first; nullptr past the last).
  const char *output_names[kMaxOutputs];
};

OpApi ApiOf(Operation op);

}  // namespace fuzz

#endif  // MS_BCEWL_TESTS_FUZZ_OPS_H_
