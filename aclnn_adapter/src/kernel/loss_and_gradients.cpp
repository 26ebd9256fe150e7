// ComputeLossAndGradients: the loss summed over every dim and the gradients of every input, from one pass where the
// pass of the gradients allows it.
#include <vector>

#include "kernel/bcewl_kernel.h"
#include "kernel/block_reductions.h"
#include "kernel/call_plan.h"
#include "kernel/elementwise_pass.h"
#include "kernel/gradients.h"
#include "kernel/row_reductions.h"
#include "kernel/staging.h"

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
