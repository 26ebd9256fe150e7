// The passes of the host kernel driver over the plan of plan.h: elementwise values, deterministic sums in blocks
// (BlockSums) or row by row (the weight gradients that keep the innermost dims), and the pass of every gradient.
#ifndef MS_BCEWL_KERNEL_DRIVER_PASSES_H_
#define MS_BCEWL_KERNEL_DRIVER_PASSES_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "kernel/bcewl_kernel.h"
#include "kernel/driver/plan.h"
#include "kernel/isa/isa_kernels.h"

// Reductions in the block order of bcewl_kernel.h: each task sums whole blocks (BlockSums), and each output's block
// partials are added in block order once every task is done, so that no sum depends on the thread count.

namespace ms_bcewl::kernel {

// One contribution per output (a weight of self's shape): nothing to sum, the values are written elementwise.
inline bool IsElementwise(const Reduction &reduction) { return reduction.per_output == 1; }

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

// Reductions that keep the innermost dims (the gradient of a per-class weight or pos_weight). In its own dim order
// such a problem is [reduced dims][kept dims]: its row r, the `outputs` consecutive elements r * outputs .., adds
// the r-th contribution to every output. Taken row after row, each output's lanes receive the same values in the
// same order as in SumBlocks, so the results are bitwise the same; but memory is read once, in order, instead of
// once per output at a stride. Lane sums of kSumLanes rows are kept for every output, hence a limit on outputs.

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

// Elementwise passes: each chunk's values computed into up to kMaxOutputs outputs, in place or through staging.

namespace ms_bcewl::kernel {

// compute(values), where values[k] is where the values of elements [first, first + count) of output k go (k <
// out_count); then writes them to the outputs.
template <class Compute>
void WriteOutputs(Stager &stager, int out_count, int64_t first, int64_t count, Compute &&compute) {
  void *values[kMaxOutputs] = {};
  for (int output = 0; output < out_count; ++output) {
    values[output] = stager.OutputValues(output, first);
  }
  compute(values);
  for (int output = 0; output < out_count; ++output) {
    stager.StoreOutput(output, first, count);
  }
}

// Elementwise work into `out_count` outputs: compute(kernels, count, inputs, values) fills values[k] with the
// values of output k for one chunk. in_registers: whether the ISA kernel may read x and y and write every output
// in their 16-bit dtype (MakePlan); otherwise values[k] is float32.
template <class Compute>
void ComputeOutputs(const Problem &problem, const Destination *outs, int out_count, bool in_registers,
                    Compute &&compute) {
  if (problem.numel == 0) {
    return;
  }
  const Plan plan = MakePlan(problem, outs, out_count, in_registers);
  const int64_t chunks = (problem.numel + kChunk - 1) / kChunk;
  const int tasks = TaskCount(problem.numel, chunks);
  ForEachPiece(plan, tasks, problem.numel, chunks, kElementsPerPiece / kChunk,
               [&](Stager &stager, int64_t first_chunk, int64_t last_chunk) {
                 ForEachChunk(first_chunk * kChunk, std::min(problem.numel, last_chunk * kChunk),
                              [&](int64_t first, int64_t count) {
                                WriteOutputs(stager, out_count, first, count, [&](void *const *values) {
                                  compute(*plan.kernels, count, stager.Inputs(first, count), values);
                                });
                              });
               });
}

}  // namespace ms_bcewl::kernel

// The gradients of every input in one pass (ComputeGradients), shared with ComputeLossAndGradients: which weight
// gradients join the pass of dx and dy, and the pass that sums them row by row.

namespace ms_bcewl::kernel {

// A weight gradient joins the pass of dx and dy when it sums row by row with the columns of one already in, and the
// pieces the pass then hands out (row blocks, split into LaneGroups) are at least as many as the tasks of an
// elementwise pass.
bool JoinsThePass(const Reduction &reduction, const RowSums &sums);

// Where the weight gradients of a pass of dx and dy go: those that sum row by row and join (sums), or else those of
// self's shape, as further elementwise outputs (outs[output_of[k]]); the others are a ComputeReduction after the
// pass (ComputeTheRest).
class WeightGradients {
 public:
  WeightGradients(const Destination &grad_self, const Destination &grad_target, const Reduction *grad_weight,
                  const Reduction *grad_pos_weight, double *workspace);

  bool SumRowByRow() const { return sums_.First() != nullptr; }
  const RowSums &Sums() const { return sums_; }
  const Destination *Outs() const { return outs_; }
  int OutCount() const { return out_count_; }
  // The ISA kernels write weight gradients as float32 (their row sums take them so), hence no 16-bit outputs in
  // registers when one is an output.
  bool InRegisters() const { return out_count_ == 2; }

  // The float32 values of weight gradient k among an elementwise pass's output values (null where it is not one).
  float *ValuesOf(int k, void *const *values) const {
    return output_of_[k] < 0 ? nullptr : static_cast<float *>(values[output_of_[k]]);
  }

  void ComputeTheRest(double scale) const;

 private:
  const Reduction *reductions_[2];
  std::array<double *, 2> workspaces_;
  std::vector<double> own_partials_[2];
  RowSums sums_;
  Destination outs_[kMaxOutputs];
  int out_count_ = 2;
  int output_of_[2] = {-1, -1};
};

// dx and dy into outs, and the weight gradients that joined, from one exp per element; with sums.loss also the
// loss, with sums.staged_loss each element's loss.
void ComputeGradientsWithRowSums(const Problem &problem, float scale, const Destination *outs, const RowSums &sums);

}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_DRIVER_PASSES_H_
