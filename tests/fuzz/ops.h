// The seven two-phase operations of the aclnn API under one phase-1 signature (the forward and the loss with every
// gradient take no gradOutput; only the two fused operations, which give the gradients of every input, take
// gradTarget and the gradients of weight and pos_weight, and only the loss with every gradient takes `loss`, its
// first output: its gradSelf is `out`, as for AllBackward), with the exported names that their error messages start
// with and the names their messages give the outputs.
#ifndef MS_BCEWL_TESTS_FUZZ_OPS_H_
#define MS_BCEWL_TESTS_FUZZ_OPS_H_

#include "aclnn/acl_meta.h"

namespace fuzz {

// The single-output operations first; then the fused operations: the gradients of every input, and the loss with
// the gradients of every input for a gradOutput of 1.
enum class Op { kForward, kGradSelf, kGradTarget, kGradWeight, kGradPosWeight, kGradAll, kLossAndAllGradients };
constexpr int kOpCount = 7;
constexpr int kSingleOutputOpCount = 5;  // the operations before kGradAll
constexpr Op kFusedOps[] = {Op::kGradAll, Op::kLossAndAllGradients};
constexpr int kMaxOutputs = 5;

inline bool IsFused(Op op) { return static_cast<int>(op) >= kSingleOutputOpCount; }
inline bool TakesGradOutput(Op op) { return op != Op::kForward && op != Op::kLossAndAllGradients; }
// The operations whose outputs include the gradients of weight and pos_weight (each given exactly with its input).
inline bool GivesWeightGradients(Op op) { return op == Op::kGradAll || op == Op::kLossAndAllGradients; }

using PlanFunction = aclnnStatus (*)(const aclTensor *grad_output, const aclTensor *self, const aclTensor *target,
                                     const aclTensor *weight, const aclTensor *pos_weight, int64_t reduction,
                                     aclTensor *out, aclTensor *grad_target, aclTensor *grad_weight,
                                     aclTensor *grad_pos_weight, aclTensor *loss, uint64_t *workspace_size,
                                     aclOpExecutor **executor);
using RunFunction = aclnnStatus (*)(void *workspace, uint64_t workspace_size, aclOpExecutor *executor,
                                    aclrtStream stream);

struct OpApi {
  const char *name;  // forward, dx, dy, dw, dp, dx+dy+dw+dp, loss+dx+dy+dw+dp
  const char *plan_name;
  const char *run_name;
  PlanFunction plan;
  RunFunction run;
  // The names its messages give its outputs, in the order of its C signature (out first; nullptr past the last).
  const char *output_names[kMaxOutputs];
};

const OpApi &ApiOf(Op op);

}  // namespace fuzz

#endif  // MS_BCEWL_TESTS_FUZZ_OPS_H_
