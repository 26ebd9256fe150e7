// The six two-phase operations of the aclnn API under one phase-1 signature (the forward takes no gradOutput; only
// the fused gradient of self and target takes gradTarget), with the exported names that their error messages start
// with and the names their messages give the outputs.
#ifndef MS_BCEWL_TESTS_FUZZ_OPS_H_
#define MS_BCEWL_TESTS_FUZZ_OPS_H_

#include "aclnn/acl_meta.h"

namespace fuzz {

enum class Op { kForward, kGradSelf, kGradTarget, kGradWeight, kGradPosWeight, kGradSelfAndTarget };
constexpr int kOpCount = 6;
constexpr int kSingleOutputOpCount = 5;  // the operations before kGradSelfAndTarget

using PlanFunction = aclnnStatus (*)(const aclTensor *grad_output, const aclTensor *self, const aclTensor *target,
                                     const aclTensor *weight, const aclTensor *pos_weight, int64_t reduction,
                                     aclTensor *out, aclTensor *grad_target, uint64_t *workspace_size,
                                     aclOpExecutor **executor);
using RunFunction = aclnnStatus (*)(void *workspace, uint64_t workspace_size, aclOpExecutor *executor,
                                    aclrtStream stream);

struct OpApi {
  const char *name;  // forward, dx, dy, dw, dp, dx+dy
  const char *plan_name;
  const char *run_name;
  PlanFunction plan;
  RunFunction run;
  const char *out_name;          // the name its messages give out
  const char *grad_target_name;  // and the second output, or nullptr where there is none
};

const OpApi &ApiOf(Op op);

}  // namespace fuzz

#endif  // MS_BCEWL_TESTS_FUZZ_OPS_H_
