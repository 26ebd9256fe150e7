// The executor: the plan phase 1 makes (what to compute, over which views, with how much workspace) and phase 2
// runs. Live executors are registered, so that phase 2 or aclDestroyAclOpExecutor on an unknown, already used
// or destroyed executor is an error code and never a use after free.
#ifndef MS_BCEWL_API_EXECUTOR_H_
#define MS_BCEWL_API_EXECUTOR_H_

#include <cstdint>
#include <memory>
#include <variant>

#include "api/operation.h"
#include "kernel/bcewl_kernel.h"

namespace ms_bcewl {

struct NoWork {};

struct FillWork {
  int rank;
  int64_t shape[kernel::kMaxRank];
  kernel::Destination out;
  float value;
};

struct ElementwiseWork {
  kernel::Problem problem;
  kernel::Quantity quantity;
  float scale;
  kernel::Destination out;
};

struct GradSelfAndTargetWork {
  kernel::Problem problem;
  float scale;
  kernel::Destination grad_self;
  kernel::Destination grad_target;
};

struct ReductionWork {
  kernel::Reduction reduction;
  kernel::Quantity quantity;
  double scale;
};

using Work = std::variant<NoWork, FillWork, ElementwiseWork, GradSelfAndTargetWork, ReductionWork>;

uint64_t WorkspaceBytes(const Work &work);
void Execute(const Work &work, void *workspace);

// Registers a new executor and hands out its handle.
aclOpExecutor *ReleaseToCaller(OpKind kind, Work work);

// Takes a live executor back from the caller (it is no longer live afterwards); null if it was not live.
std::unique_ptr<aclOpExecutor> ClaimFromCaller(aclOpExecutor *executor);

}  // namespace ms_bcewl

struct aclOpExecutor {
  ms_bcewl::OpKind kind;
  ms_bcewl::Work work;
  uint64_t workspace_bytes;
};

#endif  // MS_BCEWL_API_EXECUTOR_H_
