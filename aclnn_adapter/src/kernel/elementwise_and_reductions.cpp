// ComputeElementwise, ComputeReduction and Fill of bcewl_kernel.h (host_driver.h describes the driver).
#include "kernel/bcewl_kernel.h"
#include "kernel/block_reductions.h"
#include "kernel/call_plan.h"
#include "kernel/element_access.h"
#include "kernel/elementwise_pass.h"
#include "kernel/row_reductions.h"
#include "kernel/staging.h"
#include "kernel/strided_cursor.h"

namespace ms_bcewl::kernel {

void ComputeElementwise(const Problem &problem, Quantity quantity, float scale, const Destination &out) {
  ComputeOutputs(problem, &out, 1, true,
                 [&](const IsaKernels &kernels, int64_t count, const RowInputs &in, void *const *values) {
                   kernels.values(quantity, count, in, scale, values[0]);
                 });
}

void ComputeReduction(const Reduction &reduction, Quantity quantity, double scale, double *workspace) {
  if (reduction.problem.numel == 0) {
    return;
  }
  const bool loss = quantity == Quantity::kLoss;
  const float g_scale = loss ? 1.0f : static_cast<float>(scale);
  const double total_scale = loss ? scale : 1.0;
  if (IsElementwise(reduction) && !loss) {  // a weight of self's shape: each output is one element's value
    ComputeElementwise(reduction.problem, quantity, g_scale, reduction.out);
    return;
  }
  if (SumsRowByRow(reduction)) {
    ComputeRowByRowReduction(reduction, quantity, g_scale, total_scale, workspace);
    return;
  }
  const Plan plan = MakePlan(reduction.problem, nullptr, 0, true);
  SumInBlocks(plan, reduction, total_scale, workspace,
              [&](Stager &stager, int64_t first, int64_t count, BlockSums *sums) {
                plan.kernels->sums(quantity, count, stager.Inputs(first, count), g_scale, sums);
              });
}

void Fill(int rank, const int64_t *shape, const Destination &out, float value) {
  int64_t numel = 1;
  for (int dim = 0; dim < rank; ++dim) {
    numel *= shape[dim];
  }
  StridedCursor<1> cursor(rank, shape, {out.strides}, 0);
  for (int64_t i = 0; i < numel; ++i, cursor.Next()) {
    StoreElement(out.data, cursor.Offset(0), out.dtype, value);
  }
}

}  // namespace ms_bcewl::kernel
