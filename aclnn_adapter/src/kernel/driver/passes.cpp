// The functions of bcewl_kernel.h (ComputeElementwise, ComputeReduction, ComputeGradients, ComputeLossAndGradients,
// Fill, the reduction plan) over the passes of passes.h.

#include "kernel/driver/passes.h"

#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <vector>

#include "kernel/bcewl_kernel.h"

// ComputeElementwise, ComputeReduction and Fill of bcewl_kernel.h (plan.h describes the driver).

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

// PlanReduction and ReductionWorkspaceBytes: the order contract of bcewl_kernel.h, shared by every kernel
// implementation.

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

namespace ms_bcewl::kernel {

void BlockSums::Open(int64_t start, int64_t contributions_per_output, double *destination) {
  std::fill(lanes, lanes + kSumLanes, 0.0);
  filled = 0;
  partials = destination;
  position = start;
  per_output = contributions_per_output;
  length = std::min(kReductionBlockElements, per_output - position);
}

void BlockSums::Close() {
  *partials++ = FoldLanes(lanes, length);
  const int64_t next = position + kReductionBlockElements;
  Open(next >= per_output ? 0 : next, per_output, partials);
}

// Lane j += lane j + h for h = 8, 4, 2, 1. Lanes the block never reached hold +0.0 and are left out (adding +0.0
// changes no lane sum: a sum that starts at +0.0 is never -0.0).
double FoldLanes(double *lanes, int64_t length) {
  int width = kSumLanes;
  while (width / 2 >= length) {
    width /= 2;
  }
  for (int half = width / 2; half > 0; half /= 2) {
    for (int lane = 0; lane < half; ++lane) {
      lanes[lane] += lanes[lane + half];
    }
  }
  return lanes[0];
}

void StoreBlockTotals(const Reduction &reduction, double scale, const double *partials) {
  StoreOutputs(reduction, scale, 0, reduction.outputs, [&](int64_t output) {
    double total = 0.0;
    for (int64_t block = 0; block < reduction.blocks_per_output; ++block) {
      total += partials[output * reduction.blocks_per_output + block];
    }
    return total;
  });
}

double *PartialsOf(const Reduction &reduction, double *workspace, std::vector<double> &own) {
  if (reduction.blocks_per_output > 1 && workspace != nullptr) {
    return workspace;
  }
  own.resize(static_cast<size_t>(reduction.outputs * reduction.blocks_per_output));
  return own.data();
}

}  // namespace ms_bcewl::kernel

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

namespace ms_bcewl::kernel {
namespace {

// Where the block partials of each weight gradient go in a workspace laid out as GradientsWorkspaceBytes says:
// weight's, then pos_weight's (null where the workspace is).
std::array<double *, 2> WeightWorkspaces(const Reduction *grad_weight, double *workspace) {
  std::array<double *, 2> workspaces = {workspace, workspace};
  if (grad_weight != nullptr && workspace != nullptr) {
    workspaces[1] += ReductionWorkspaceBytes(*grad_weight) / sizeof(double);
  }
  return workspaces;
}

}  // namespace

bool JoinsThePass(const Reduction &reduction, const RowSums &sums) {
  const int64_t numel = reduction.natural.numel;
  const int64_t pieces = reduction.blocks_per_output * LaneGroups(reduction);
  return SumsRowByRow(reduction) && (sums.First() == nullptr || reduction.outputs == sums.First()->outputs) &&
         TaskCount(numel, pieces) >= TaskCount(numel, (numel + kChunk - 1) / kChunk);
}

WeightGradients::WeightGradients(const Destination &grad_self, const Destination &grad_target,
                                 const Reduction *grad_weight, const Reduction *grad_pos_weight, double *workspace)
    : reductions_{grad_weight, grad_pos_weight}, workspaces_(WeightWorkspaces(grad_weight, workspace)) {
  outs_[0] = grad_self;
  outs_[1] = grad_target;
  for (int k = 0; k < 2; ++k) {
    if (reductions_[k] != nullptr && JoinsThePass(*reductions_[k], sums_)) {
      sums_.joined[k] = reductions_[k];
      sums_.partials[k] = PartialsOf(*reductions_[k], workspaces_[k], own_partials_[k]);
    }
  }
  for (int k = 0; k < 2 && !SumRowByRow(); ++k) {
    if (reductions_[k] != nullptr && IsElementwise(*reductions_[k])) {
      output_of_[k] = out_count_;
      outs_[out_count_++] = reductions_[k]->natural_out;
    }
  }
}

void WeightGradients::ComputeTheRest(double scale) const {
  const Quantity quantities[2] = {Quantity::kGradWeight, Quantity::kGradPosWeight};
  for (int k = 0; k < 2; ++k) {
    if (reductions_[k] != nullptr && sums_.joined[k] == nullptr && output_of_[k] < 0) {
      ComputeReduction(*reductions_[k], quantities[k], scale, workspaces_[k]);
    }
  }
}

void ComputeGradientsWithRowSums(const Problem &problem, float scale, const Destination *outs, const RowSums &sums) {
  const Plan plan = MakePlan(problem, outs, 2, true);
  const bool loss = sums.loss != nullptr;
  SumRowBlocks(plan, problem, sums, 1.0,
               [&](Stager &stager, int64_t first, int64_t count, float *const *values, BlockSums *loss_sums) {
                 WriteOutputs(stager, 2, first, count, [&](void *const *outputs) {
                   const RowInputs in = stager.Inputs(first, count);
                   if (loss) {
                     plan.kernels->loss_sums_with_gradients(count, in, scale, loss_sums, outputs[0], outputs[1],
                                                            values[0], values[1]);
                   } else {
                     float *staged_loss = sums.staged_loss == nullptr ? nullptr : sums.staged_loss + first;
                     plan.kernels->gradients(count, in, scale, outputs[0], outputs[1], values[0], values[1],
                                             staged_loss);
                   }
                 });
               });
}

void ComputeGradients(const Problem &problem, double scale, const Destination &grad_self,
                      const Destination &grad_target, const Reduction *grad_weight, const Reduction *grad_pos_weight,
                      double *workspace) {
  if (problem.numel == 0) {
    return;
  }
  const WeightGradients weights(grad_self, grad_target, grad_weight, grad_pos_weight, workspace);
  const float g_scale = static_cast<float>(scale);
  if (weights.SumRowByRow()) {
    ComputeGradientsWithRowSums(problem, g_scale, weights.Outs(), weights.Sums());
  } else {
    ComputeOutputs(problem, weights.Outs(), weights.OutCount(), weights.InRegisters(),
                   [&](const IsaKernels &kernels, int64_t count, const RowInputs &in, void *const *values) {
                     kernels.gradients(count, in, g_scale, values[0], values[1], weights.ValuesOf(0, values),
                                       weights.ValuesOf(1, values), nullptr);
                   });
  }
  weights.ComputeTheRest(scale);
}

uint64_t GradientsWorkspaceBytes(const Reduction *grad_weight, const Reduction *grad_pos_weight) {
  uint64_t bytes = 0;
  for (const Reduction *reduction : {grad_weight, grad_pos_weight}) {
    bytes += reduction == nullptr ? 0 : ReductionWorkspaceBytes(*reduction);
  }
  return bytes;
}

}  // namespace ms_bcewl::kernel

// ComputeLossAndGradients: the loss summed over every dim and the gradients of every input, from one pass where the
// pass of the gradients allows it.

namespace ms_bcewl::kernel {
namespace {

// The weight gradient that a pass without the loss sums first (WeightGradients), or null where none joins it.
const Reduction *FirstToJoin(const Reduction *grad_weight, const Reduction *grad_pos_weight) {
  for (const Reduction *reduction : {grad_weight, grad_pos_weight}) {
    if (reduction != nullptr && JoinsThePass(*reduction, RowSums{})) {
      return reduction;
    }
  }
  return nullptr;
}

// Whether ComputeLossAndGradients writes each element's loss to its workspace and sums it after the pass: where a
// weight gradient joins the pass only with its row blocks shared by lane groups, across which the loss's blocks run.
bool StagesLoss(const Reduction *grad_weight, const Reduction *grad_pos_weight) {
  const Reduction *first = FirstToJoin(grad_weight, grad_pos_weight);
  return first != nullptr && LaneGroups(*first) > 1;
}

// Where ComputeLossAndGradients stages the loss of each element: in its workspace after the block partials of the
// loss and of the weight gradients (weight_bytes), or in `own` where the workspace is null.
float *StagedLossOf(const Reduction &loss, uint64_t weight_bytes, double *workspace, std::vector<float> &own) {
  if (workspace != nullptr) {
    return reinterpret_cast<float *>(workspace + (ReductionWorkspaceBytes(loss) + weight_bytes) / sizeof(double));
  }
  own.resize(static_cast<size_t>(loss.problem.numel));
  return own.data();
}

// The loss's sum of the staged losses of its elements, in the order of bcewl_kernel.h, on the tasks.
void SumStagedLoss(const Reduction &loss, double scale, double *workspace, const float *staged) {
  const Plan plan = MakePlan(loss.problem, nullptr, 0, false);
  SumInBlocks(plan, loss, scale, workspace, [&](Stager &, int64_t first, int64_t count, BlockSums *sums) {
    plan.kernels->add_to_block_sums(staged + first, count, sums);
  });
}

}  // namespace

void ComputeLossAndGradients(const Reduction &loss, double scale, const Destination &grad_self,
                             const Destination &grad_target, const Reduction *grad_weight,
                             const Reduction *grad_pos_weight, double *workspace) {
  if (loss.problem.numel == 0) {
    return;
  }
  double *weight_workspace =
      workspace == nullptr ? nullptr : workspace + ReductionWorkspaceBytes(loss) / sizeof(double);
  const bool stage_loss = StagesLoss(grad_weight, grad_pos_weight);
  const WeightGradients weights(grad_self, grad_target, grad_weight, grad_pos_weight, weight_workspace);
  const float g_scale = static_cast<float>(scale);
  // The loss reduces every dim: its problem is in its own dim order, that of the weight gradients' natural one.
  if (stage_loss) {
    std::vector<float> own_staged;
    float *staged = StagedLossOf(loss, GradientsWorkspaceBytes(grad_weight, grad_pos_weight), workspace, own_staged);
    RowSums sums = weights.Sums();
    sums.staged_loss = staged;
    ComputeGradientsWithRowSums(loss.problem, g_scale, weights.Outs(), sums);
    SumStagedLoss(loss, scale, workspace, staged);
  } else if (weights.SumRowByRow()) {
    std::vector<double> own_loss_partials;
    RowSums sums = weights.Sums();
    sums.loss = &loss;
    sums.loss_partials = PartialsOf(loss, workspace, own_loss_partials);
    sums.loss_scale = scale;
    ComputeGradientsWithRowSums(loss.problem, g_scale, weights.Outs(), sums);
  } else {
    const Plan plan = MakePlan(loss.problem, weights.Outs(), weights.OutCount(), weights.InRegisters());
    SumInBlocks(plan, loss, scale, workspace, [&](Stager &stager, int64_t first, int64_t count, BlockSums *sums) {
      WriteOutputs(stager, weights.OutCount(), first, count, [&](void *const *values) {
        plan.kernels->loss_sums_with_gradients(count, stager.Inputs(first, count), g_scale, sums, values[0], values[1],
                                               weights.ValuesOf(0, values), weights.ValuesOf(1, values));
      });
    });
  }
  weights.ComputeTheRest(scale);
}

uint64_t LossAndGradientsWorkspaceBytes(const Reduction &loss, const Reduction *grad_weight,
                                        const Reduction *grad_pos_weight) {
  const uint64_t staged = StagesLoss(grad_weight, grad_pos_weight) ? loss.problem.numel * sizeof(float) : 0;
  return ReductionWorkspaceBytes(loss) + GradientsWorkspaceBytes(grad_weight, grad_pos_weight) + staged;
}

}  // namespace ms_bcewl::kernel
