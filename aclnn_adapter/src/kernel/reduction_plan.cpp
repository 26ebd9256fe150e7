// PlanReduction and ReductionWorkspaceBytes: the order contract of bcewl_kernel.h, shared by every kernel
// implementation.
#include <algorithm>
#include <initializer_list>

#include "kernel/bcewl_kernel.h"

namespace ms_bcewl::kernel {
namespace {

template <typename Strided>
Strided Reordered(const Strided &view, const int *order, int rank) {
  Strided reordered = view;
  for (int dim = 0; dim < rank; ++dim) {
    reordered.strides[dim] = view.strides[order[dim]];
  }
  return reordered;
}

}  // namespace

Reduction PlanReduction(const Problem &problem, const int64_t *out_shape, const Destination &out) {
  int order[kMaxRank] = {};
  int placed = 0;
  for (int dim = 0; dim < problem.rank; ++dim) {
    if (out_shape[dim] != 1) {
      order[placed++] = dim;
    }
  }
  const int kept_rank = placed;
  for (int dim = 0; dim < problem.rank; ++dim) {
    if (out_shape[dim] == 1) {
      order[placed++] = dim;
    }
  }

  Reduction reduction;
  reduction.problem = problem;
  reduction.outputs = 1;
  reduction.per_output = 1;
  for (int dim = 0; dim < problem.rank; ++dim) {
    reduction.problem.shape[dim] = problem.shape[order[dim]];
    (dim < kept_rank ? reduction.outputs : reduction.per_output) *= problem.shape[order[dim]];
  }
  for (Operand *operand : {&reduction.problem.self, &reduction.problem.target, &reduction.problem.weight,
                           &reduction.problem.pos_weight, &reduction.problem.grad_output}) {
    *operand = Reordered(*operand, order, problem.rank);
  }
  reduction.out = Reordered(out, order, problem.rank);
  reduction.natural = problem;
  reduction.natural_out = out;
  int last_reduced = -1;
  int first_kept = problem.rank;
  for (int dim = 0; dim < problem.rank; ++dim) {
    if (out_shape[dim] != 1) {
      first_kept = std::min(first_kept, dim);
    } else if (problem.shape[dim] != 1) {
      last_reduced = dim;
    }
  }
  reduction.kept_dims_innermost = last_reduced < first_kept;
  reduction.blocks_per_output = (reduction.per_output + kReductionBlockElements - 1) / kReductionBlockElements;
  return reduction;
}

uint64_t ReductionWorkspaceBytes(const Reduction &reduction) {
  if (reduction.blocks_per_output <= 1) {
    return 0;
  }
  return static_cast<uint64_t>(reduction.outputs) * static_cast<uint64_t>(reduction.blocks_per_output) * sizeof(double);
}

}  // namespace ms_bcewl::kernel
