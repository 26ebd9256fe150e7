#include "kernel/row_reductions.h"

#include <atomic>

#include "kernel/block_reductions.h"

namespace ms_bcewl::kernel {
namespace {

constexpr int64_t kMaxRowOutputs = 4096;
std::atomic<bool> g_row_reductions{true};

RowBlock RowBlockOf(const Reduction &reduction, int64_t block) {
  const int64_t first_row = block * kReductionBlockElements;
  return {first_row, std::min(kReductionBlockElements, reduction.per_output - first_row)};
}

// Adds the values of elements [first, first + count) of a row block to lanes: kSumLanes rows of `columns` lane
// sums, the element in row r and column c to lane (r % kSumLanes) * columns + c.
void AddToRowLanes(const IsaKernels &kernels, const float *values, int64_t first, int64_t count, int64_t columns,
                   const RowBlock &block, double *lanes) {
  int64_t row = first / columns - block.first_row;
  int64_t column = first % columns;
  for (int64_t done = 0; done < count; ++row, column = 0) {
    const int64_t length = std::min(count - done, columns - column);
    kernels.add_to_sums(values + done, length, lanes + (row % kSumLanes) * columns + column);
    done += length;
  }
}

// Folds the lanes of a row block into the partial of each output: partials[column * blocks_per_output + block].
void FoldRowLanes(const Reduction &reduction, int64_t block, const RowBlock &rows, const double *lanes,
                  double *partials) {
  for (int64_t column = 0; column < reduction.outputs; ++column) {
    double column_lanes[kSumLanes];
    for (int lane = 0; lane < kSumLanes; ++lane) {
      column_lanes[lane] = lanes[lane * reduction.outputs + column];
    }
    partials[column * reduction.blocks_per_output + block] = FoldLanes(column_lanes, rows.rows);
  }
}

}  // namespace

bool SumsRowByRow(const Reduction &reduction) {
  return reduction.kept_dims_innermost && reduction.outputs > 1 && reduction.outputs <= kMaxRowOutputs &&
         reduction.per_output > 1 && g_row_reductions.load(std::memory_order_relaxed);
}

void SetRowReductions(bool enabled) { g_row_reductions.store(enabled, std::memory_order_relaxed); }

int LaneGroups(const Reduction &reduction) {
  const int64_t numel = reduction.natural.numel;
  const int64_t wanted = TaskCount(numel, (numel + kChunk - 1) / kChunk);
  int groups = 1;
  while (groups < kSumLanes && reduction.blocks_per_output * groups < wanted &&
         (kSumLanes / (2 * groups)) * reduction.outputs >= kChunk) {
    groups *= 2;
  }
  return groups;
}

RowPass::RowPass(const RowSums &row_sums)
    : sums(row_sums),
      first(*row_sums.First()),
      columns(first.outputs),
      groups(row_sums.loss != nullptr ? 1 : LaneGroups(first)),
      block_lanes(kSumLanes * columns),
      group_lanes(block_lanes / groups),
      pieces(first.blocks_per_output * groups) {
  for (int k = 0; k < 2; ++k) {
    if (sums.joined[k] != nullptr) {
      block_sums[k].resize(static_cast<size_t>(first.blocks_per_output * block_lanes));
    }
  }
}

PieceLanes::PieceLanes(const RowPass &pass, Stager &stager) {
  for (int k = 0; k < 2; ++k) {
    if (pass.sums.joined[k] != nullptr) {
      lanes[k].resize(static_cast<size_t>(pass.block_lanes));
      values[k] = stager.SumValues(k);
    }
  }
}

RowBlock StartPiece(const RowPass &pass, int64_t numel, int64_t block, int group, PieceLanes *lanes) {
  for (std::vector<double> &sum_lanes : lanes->lanes) {  // the group's lane rows: all it adds to
    if (!sum_lanes.empty()) {
      std::fill_n(sum_lanes.begin() + group * pass.group_lanes, pass.group_lanes, 0.0);
    }
  }
  const RowBlock rows = RowBlockOf(pass.first, block);
  if (pass.sums.loss != nullptr) {  // (one lane group)
    const int64_t first_element = rows.first_row * pass.columns;
    lanes->loss_sums.Open(first_element, numel, pass.sums.loss_partials + first_element / kReductionBlockElements);
  }
  return rows;
}

void AddToPieceLanes(const IsaKernels &kernels, const RowPass &pass, const RowBlock &rows, int64_t first, int64_t count,
                     PieceLanes *lanes) {
  for (int k = 0; k < 2; ++k) {
    if (lanes->values[k] != nullptr) {
      AddToRowLanes(kernels, lanes->values[k], first, count, pass.columns, rows, lanes->lanes[k].data());
    }
  }
}

void CopyGroupLanes(const PieceLanes &lanes, int64_t block, int group, RowPass *pass) {
  for (int k = 0; k < 2; ++k) {  // the group's lane rows, kSumLanes / groups of them
    if (lanes.values[k] != nullptr) {
      std::copy_n(lanes.lanes[k].data() + group * pass->group_lanes, pass->group_lanes,
                  pass->block_sums[k].data() + block * pass->block_lanes + group * pass->group_lanes);
    }
  }
}

void FoldAndStoreRowSums(const RowPass &pass, double total_scale) {
  const RowSums &sums = pass.sums;
  for (int k = 0; k < 2; ++k) {
    if (sums.joined[k] == nullptr) {
      continue;
    }
    for (int64_t block = 0; block < pass.first.blocks_per_output; ++block) {
      FoldRowLanes(*sums.joined[k], block, RowBlockOf(pass.first, block),
                   pass.block_sums[k].data() + block * pass.block_lanes, sums.partials[k]);
    }
    StoreBlockTotals(*sums.joined[k], total_scale, sums.partials[k]);
  }
  if (sums.loss != nullptr) {
    StoreBlockTotals(*sums.loss, sums.loss_scale, sums.loss_partials);
  }
}

void ComputeRowByRowReduction(const Reduction &reduction, Quantity quantity, float g_scale, double total_scale,
                              double *workspace) {
  const Plan plan = MakePlan(reduction.natural, nullptr, 0, false);
  std::vector<double> own_partials;
  RowSums sums;
  sums.joined[0] = &reduction;
  sums.partials[0] = PartialsOf(reduction, workspace, own_partials);
  SumRowBlocks(plan, reduction.natural, sums, total_scale,
               [&](Stager &stager, int64_t first, int64_t count, float *const *values, BlockSums *) {
                 plan.kernels->values(quantity, count, stager.Inputs(first, count), g_scale, values[0]);
               });
}

}  // namespace ms_bcewl::kernel
