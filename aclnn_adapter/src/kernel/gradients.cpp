#include "kernel/gradients.h"

#include "kernel/block_reductions.h"
#include "kernel/elementwise_pass.h"
#include "kernel/host_driver.h"
#include "kernel/task_pieces.h"

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
