// The five two-phase operations of the aclnn API under one phase-1 signature (the forward takes no gradOutput),
// with the exported names that their error messages start with.
#ifndef MS_BCEWL_TESTS_FUZZ_OPS_H_
#define MS_BCEWL_TESTS_FUZZ_OPS_H_

#include "aclnn/acl_meta.h"

namespace fuzz {

enum class Op { kForward, kGradSelf, kGradTarget, kGradWeight, kGradPosWeight };
constexpr int kOpCount = 5;

using PlanFunction = aclnnStatus (*)(const aclTensor *grad_output, const aclTensor *self, const aclTensor *target,
                                     const aclTensor *weight, const aclTensor *pos_weight, int64_t reduction,
                                     aclTensor *out, uint64_t *workspace_size, aclOpExecutor **executor);
using RunFunction = aclnnStatus (*)(void *workspace, uint64_t workspace_size, aclOpExecutor *executor,
                                    aclrtStream stream);

struct OpApi {
  const char *name;  // forward, dx, dy, dw, dp
  const char *plan_name;
  const char *run_name;
  PlanFunction plan;
  RunFunction run;
};

const OpApi &ApiOf(Op op);

}  // namespace fuzz

#endif  // MS_BCEWL_TESTS_FUZZ_OPS_H_
