// Seven of the eight two-phase operations of the aclnn API (all but the loss with every gradient) under one phase-1
// signature (the forward takes no gradOutput; only the fused gradients take gradTarget, and only the gradients of
// every input take the gradients of weight and pos_weight), with the exported names that their error messages start
// with and the names their messages give the outputs.
#ifndef MS_BCEWL_TESTS_FUZZ_OPS_H_
#define MS_BCEWL_TESTS_FUZZ_OPS_H_

#include "aclnn/acl_meta.h"

namespace fuzz {

// The single-output operations first; then the fused gradients: of self and target, and of every input.
enum class Op { kForward, kGradSelf, kGradTarget, kGradWeight, kGradPosWeight, kGradSelfAndTarget, kGradAll };
constexpr int kOpCount = 7;
constexpr int kSingleOutputOpCount = 5;  // the operations before kGradSelfAndTarget
constexpr Op kFusedOps[] = {Op::kGradSelfAndTarget, Op::kGradAll};
constexpr int kMaxOutputs = 4;

inline bool IsFused(Op op) { return static_cast<int>(op) >= kSingleOutputOpCount; }

using PlanFunction = aclnnStatus (*)(const aclTensor *grad_output, const aclTensor *self, const aclTensor *target,
                                     const aclTensor *weight, const aclTensor *pos_weight, int64_t reduction,
                                     aclTensor *out, aclTensor *grad_target, aclTensor *grad_weight,
                                     aclTensor *grad_pos_weight, uint64_t *workspace_size, aclOpExecutor **executor);
using RunFunction = aclnnStatus (*)(void *workspace, uint64_t workspace_size, aclOpExecutor *executor,
                                    aclrtStream stream);

struct OpApi {
  const char *name;  // forward, dx, dy, dw, dp, dx+dy, dx+dy+dw+dp
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
