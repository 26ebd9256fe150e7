// The gradients of every input in one pass (ComputeGradients), shared with ComputeLossAndGradients: which weight
// gradients join the pass of dx and dy, and the pass that sums them row by row.
#ifndef MS_BCEWL_KERNEL_GRADIENTS_H_
#define MS_BCEWL_KERNEL_GRADIENTS_H_

#include <array>
#include <vector>

#include "kernel/bcewl_kernel.h"
#include "kernel/call_plan.h"
#include "kernel/row_reductions.h"

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

#endif  // MS_BCEWL_KERNEL_GRADIENTS_H_
