// Reductions that keep the innermost dims (the gradient of a per-class weight or pos_weight). In its own dim order
// such a problem is [reduced dims][kept dims]: its row r, the `outputs` consecutive elements r * outputs .., adds
// the r-th contribution to every output. Taken row after row, each output's lanes receive the same values in the
// same order as in SumBlocks, so the results are bitwise the same; but memory is read once, in order, instead of
// once per output at a stride. Lane sums of kSumLanes rows are kept for every output, hence a limit on outputs.
#ifndef MS_BCEWL_KERNEL_ROW_REDUCTIONS_H_
#define MS_BCEWL_KERNEL_ROW_REDUCTIONS_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernel/bcewl_kernel.h"
#include "kernel/call_plan.h"
#include "kernel/isa_kernels.h"
#include "kernel/staging.h"
#include "kernel/task_pieces.h"

namespace ms_bcewl::kernel {

// Whether ComputeReduction sums `reduction` row by row. (One row, per_output == 1, has nothing to sum:
// ComputeReduction writes it elementwise.)
bool SumsRowByRow(const Reduction &reduction);

// false: every reduction takes the general path, to compare results with it (a test hook).
void SetRowReductions(bool enabled);

// Reductions that sum row by row over one pass of a problem: [0] and [1] (that of weight and that of pos_weight in
// ComputeGradients; a single one in [0] otherwise), null where absent, all with the same outputs (columns), with
// where their block partials go; and, where `loss` is not null, the loss summed over every dim in the same pass.
struct RowSums {
  const Reduction *joined[2] = {};
  double *partials[2] = {};
  const Reduction *loss = nullptr;  // one output; its blocks tile each row block (columns of them)
  double *loss_partials = nullptr;
  double loss_scale = 1.0;
  float *staged_loss = nullptr;  // instead of `loss`: where the pass writes each element's loss, for a sum after it

  const Reduction *First() const { return joined[0] != nullptr ? joined[0] : joined[1]; }
};

// Lane groups per row block, a divisor of kSumLanes. The lanes of a row block are independent, each summing its
// rows in order, so `groups` tasks can share a block, each taking the rows of kSumLanes / groups lanes: as many
// groups as an elementwise pass has tasks for the row blocks to feed, as long as a group's runs of rows hold a
// chunk's worth of elements. (A pass that sums the loss takes 1: the loss's blocks run across the lanes.)
int LaneGroups(const Reduction &reduction);

// ComputeReduction for SumsRowByRow: `values` of a gradient take g * g_scale, as sums do.
void ComputeRowByRowReduction(const Reduction &reduction, Quantity quantity, float g_scale, double total_scale,
                              double *workspace);

// The rows of a row block that start at row first_row: kReductionBlockElements, fewer for the last block.
struct RowBlock {
  int64_t first_row;
  int64_t rows;
};

// What the tasks of a SumRowBlocks pass share: its pieces (a lane group of a row block each), and each joined
// reduction's lanes of every row block (kSumLanes rows of `columns` lane sums), which the task that sums a group's
// lanes copies in, to be folded after the tasks.
struct RowPass {
  explicit RowPass(const RowSums &row_sums);

  const RowSums &sums;
  const Reduction &first;
  int64_t columns;
  int groups;
  int64_t block_lanes;
  int64_t group_lanes;
  int64_t pieces;
  std::vector<double> block_sums[2];
};

// A task's own lanes of one row block for each joined reduction (no cache line shared with another task while it
// adds), the float32 values of a chunk's contributions to them (null where not joined), and the loss's block sums.
struct PieceLanes {
  PieceLanes(const RowPass &pass, Stager &stager);

  std::vector<double> lanes[2];
  float *values[2] = {};
  BlockSums loss_sums;
};

// The steps of a piece: the lane group's lanes zeroed and, where the pass sums the loss, its first block opened;
// each chunk's values added to the lanes; the group's lanes copied to the row block's.
RowBlock StartPiece(const RowPass &pass, int64_t numel, int64_t block, int group, PieceLanes *lanes);
void AddToPieceLanes(const IsaKernels &kernels, const RowPass &pass, const RowBlock &rows, int64_t first, int64_t count,
                     PieceLanes *lanes);
void CopyGroupLanes(const PieceLanes &lanes, int64_t block, int group, RowPass *pass);

// After the tasks: each joined reduction's row blocks folded into its partials, and every total stored.
void FoldAndStoreRowSums(const RowPass &pass, double total_scale);

// Calls body(first_row, rows) for the runs of rows of lane group `group` (of `groups`) in a row block: the rows r
// with (r - first row of the block) % kSumLanes in [group, group + 1) * kSumLanes / groups.
template <class Body>
void ForEachRowRun(const RowBlock &block, int groups, int group, Body &&body) {
  const int64_t end = block.first_row + block.rows;
  if (groups == 1) {
    body(block.first_row, block.rows);
    return;
  }
  const int64_t run = kSumLanes / groups;
  for (int64_t first_row = block.first_row + group * run; first_row < end; first_row += kSumLanes) {
    body(first_row, std::min(run, end - first_row));
  }
}

// Piece `piece` of a SumRowBlocks pass: lane group piece % groups of row block piece / groups.
template <class Compute>
void SumPiece(const Plan &plan, int64_t numel, int64_t piece, Stager &stager, Compute &compute, PieceLanes *lanes,
              RowPass *pass) {
  const int64_t block = piece / pass->groups;
  const int group = static_cast<int>(piece % pass->groups);
  const RowBlock rows = StartPiece(*pass, numel, block, group, lanes);
  const int64_t columns = pass->columns;
  ForEachRowRun(rows, pass->groups, group, [&](int64_t first_row, int64_t run_rows) {
    ForEachChunk(first_row * columns, (first_row + run_rows) * columns, [&](int64_t element, int64_t count) {
      compute(stager, element, count, lanes->values, &lanes->loss_sums);
      AddToPieceLanes(*plan.kernels, *pass, rows, element, count, lanes);
    });
  });
  CopyGroupLanes(*lanes, block, group, pass);
}

// The reductions of `sums` over the problem, row block by row block (each shared by LaneGroups tasks):
// compute(stager, first, count, values, loss_sums) fills values[k] (where sums.joined[k]) with the contributions of
// elements [first, first + count), adds their losses to *loss_sums (where sums.loss), and may write elementwise
// outputs of the plan. Each block's lanes get the values in the order of bcewl_kernel.h; the blocks are folded
// after every task is done. The totals are multiplied by total_scale (the loss's by loss_scale). A row block of
// kReductionBlockElements rows is `columns` whole blocks of the loss, so the loss's blocks close within the row
// block that opened them.
template <class Compute>
void SumRowBlocks(const Plan &plan, const Problem &problem, const RowSums &sums, double total_scale,
                  Compute &&compute) {
  RowPass pass(sums);
  ForEachPiece(plan, TaskCount(problem.numel, pass.pieces), problem.numel, pass.pieces, 1,
               [&](Stager &stager, int64_t first_piece, int64_t last_piece) {
                 PieceLanes lanes(pass, stager);
                 for (int64_t piece = first_piece; piece < last_piece; ++piece) {
                   SumPiece(plan, problem.numel, piece, stager, compute, &lanes, &pass);
                 }
               });
  FoldAndStoreRowSums(pass, total_scale);
}

}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_ROW_REDUCTIONS_H_
