// Reductions in the block order of bcewl_kernel.h: each task sums whole blocks (BlockSums), and each output's block
// partials are added in block order once every task is done, so that no sum depends on the thread count.
#ifndef MS_BCEWL_KERNEL_BLOCK_REDUCTIONS_H_
#define MS_BCEWL_KERNEL_BLOCK_REDUCTIONS_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernel/bcewl_kernel.h"
#include "kernel/call_plan.h"
#include "kernel/element_access.h"
#include "kernel/host_driver.h"
#include "kernel/isa_kernels.h"
#include "kernel/staging.h"
#include "kernel/strided_cursor.h"
#include "kernel/task_pieces.h"

namespace ms_bcewl::kernel {

// The sum of a block of `length` contributions from its kSumLanes lanes, folded in halves.
double FoldLanes(double *lanes, int64_t length);

// out[o] = cast(scale * the block partials of o added in block order), partials[o * blocks_per_output + block].
void StoreBlockTotals(const Reduction &reduction, double scale, const double *partials);

// Where the block partials of a reduction go: the caller's workspace, or (with one block per output, when the
// caller's workspace has 0 bytes: ReductionWorkspaceBytes) `own`.
double *PartialsOf(const Reduction &reduction, double *workspace, std::vector<double> &own);

inline int64_t BlockStart(const Reduction &reduction, int64_t block) {
  const int64_t output = block / reduction.blocks_per_output;
  return output * reduction.per_output + (block % reduction.blocks_per_output) * kReductionBlockElements;
}

// Sums blocks [first_block, last_block) into partials[0 .. last_block - first_block): add_chunk(stager, first,
// count, sums) adds the contributions of elements [first, first + count) to *sums.
template <class AddChunk>
void SumBlocks(Stager &stager, const Reduction &reduction, int64_t first_block, int64_t last_block, double *partials,
               AddChunk &&add_chunk) {
  BlockSums sums;
  sums.Open((first_block % reduction.blocks_per_output) * kReductionBlockElements, reduction.per_output, partials);
  ForEachChunk(BlockStart(reduction, first_block), BlockStart(reduction, last_block),
               [&](int64_t first, int64_t count) { add_chunk(stager, first, count, &sums); });
}

// out[o] = cast(total_of(o) * scale) for outputs [first, first + count).
template <class TotalOf>
void StoreOutputs(const Reduction &reduction, double scale, int64_t first, int64_t count, TotalOf &&total_of) {
  // The kept dims lead the reordered problem: the outputs are their row-major elements.
  int kept_rank = reduction.problem.rank;
  for (int64_t reduced = 1; kept_rank > 0 && reduced < reduction.per_output;) {
    reduced *= reduction.problem.shape[--kept_rank];
  }
  StridedCursor<1> cursor(kept_rank, reduction.problem.shape, {reduction.out.strides}, first);
  for (int64_t output = first; output < first + count; ++output, cursor.Next()) {
    StoreElementFromDouble(reduction.out.data, cursor.Offset(0), reduction.out.dtype, total_of(output) * scale);
  }
}

// Sums the blocks of `reduction` on the tasks, add_chunk as in SumBlocks, and stores each output's total times
// total_scale; the block partials go to workspace (ReductionWorkspaceBytes; or a buffer of its own where that is
// null), or straight to the outputs where an output has one block.
template <class AddChunk>
void SumInBlocks(const Plan &plan, const Reduction &reduction, double total_scale, double *workspace,
                 AddChunk &&add_chunk) {
  const int64_t blocks_per_output = reduction.blocks_per_output;
  const int64_t blocks = reduction.outputs * blocks_per_output;
  std::vector<double> own_workspace;
  if (blocks_per_output > 1 && workspace == nullptr) {
    own_workspace.resize(static_cast<size_t>(blocks));
    workspace = own_workspace.data();
  }
  const int tasks = TaskCount(reduction.problem.numel, blocks);
  const int64_t block_elements = std::min(kReductionBlockElements, reduction.per_output);
  const int64_t blocks_per_piece = std::clamp(kElementsPerPiece / block_elements, int64_t{1}, kOutputsPerBatch);
  ForEachPiece(plan, tasks, reduction.problem.numel, blocks, blocks_per_piece,
               [&](Stager &stager, int64_t first, int64_t last) {
                 if (blocks_per_output > 1) {  // block partials into the workspace; outputs after all tasks
                   SumBlocks(stager, reduction, first, last, workspace + first, add_chunk);
                   return;
                 }
                 double totals[kOutputsPerBatch];  // one block per output
                 SumBlocks(stager, reduction, first, last, totals, add_chunk);
                 StoreOutputs(reduction, total_scale, first, last - first,
                              [&](int64_t output) { return totals[output - first]; });
               });
  if (blocks_per_output > 1) {
    StoreBlockTotals(reduction, total_scale, workspace);
  }
}

}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_BLOCK_REDUCTIONS_H_
