// The executor: the plan phase 1 makes (what to compute, over which views, with how much workspace) and phase 2
// runs. Live executors are registered, so that phase 2 or aclDestroyAclOpExecutor on an unknown, already used
// or destroyed executor is an error code and never a use after free.
#ifndef MS_BCEWL_API_EXECUTOR_H_
#define MS_BCEWL_API_EXECUTOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <variant>

#include "api/operation.h"
#include "kernel/bcewl_kernel.h"

namespace ms_bcewl {

struct NoWork {};

// A value into every element of up to three outputs (the results for an empty self).
struct FillWork {
  struct Target {
    int rank;
    int64_t shape[kernel::kMaxRank];
    kernel::Destination out;
    float value;
  };
  Target targets[3];
  int count;
};

struct ElementwiseWork {
  kernel::Problem problem;
  kernel::Quantity quantity;
  float scale;
  kernel::Destination out;
};

// The gradients of self and target, and those of weight and pos_weight that are asked for, from one call.
struct GradientsWork {
  kernel::Problem problem;
  double scale;
  kernel::Destination grad_self;
  kernel::Destination grad_target;
  std::optional<kernel::Reduction> grad_weight;
  std::optional<kernel::Reduction> grad_pos_weight;
};

struct ReductionWork {
  kernel::Reduction reduction;
  kernel::Quantity quantity;
  double scale;
};

// The loss and the gradients of every input for a gradOutput of 1 (gradients.problem has no grad_output). A summed
// loss (mean, sum: its reduction) is computed in the pass of dx and dy; an elementwise one (none) before them.
struct LossAndGradientsWork {
  std::variant<kernel::Reduction, ElementwiseWork> loss;
  GradientsWork gradients;
};

using Work = std::variant<NoWork, FillWork, ElementwiseWork, GradientsWork, ReductionWork, LossAndGradientsWork>;

uint64_t WorkspaceBytes(const Work &work);
void Execute(const Work &work, void *workspace);

// Registers a new executor and hands out its handle.
aclOpExecutor *ReleaseToCaller(Operation operation, Work work);

// Takes a live executor back from the caller (it is no longer live afterwards); null if it was not live.
std::unique_ptr<aclOpExecutor> ClaimFromCaller(aclOpExecutor *executor);

}  // namespace ms_bcewl

struct aclOpExecutor {
  ms_bcewl::Operation operation;
  ms_bcewl::Work work;
  uint64_t workspace_bytes;
};

#endif  // MS_BCEWL_API_EXECUTOR_H_
