// The host kernel interface: plain problem descriptors in, results written through strided destinations.
// The host driver implements it (driver/plan.h: one pass per call, SIMD kernels chosen at run time, a thread pool)
// over the per-ISA kernels of isa_kernels.h; the numerics are those of the top comment of bcewl_kernel_plain.cpp (the
// scalar kernels), and every implementation keeps the reduction order below.
//
// Reduction order (what makes sums bitwise reproducible for every thread count): PlanReduction reorders the
// problem dims so that the kept dims (those of the destination) come first and the reduced dims last; in that
// row-major order the contributions to output o are the linear range [o * per_output, (o + 1) * per_output).
// That range is cut into blocks of kReductionBlockElements. A block sums its float32 values in 16 float64 lanes
// (the value at position q of the block goes to lane q % 16; each lane adds its values in index order), and folds
// the lanes in halves (lane j += lane j + h for h = 8, 4, 2, 1); then the block partials are added in block order,
// the total is multiplied by the scale and cast once to the destination dtype. The lanes keep the additions of a
// block independent of each other, so SIMD kernels add a whole vector at once instead of one value after another.
#ifndef MS_BCEWL_KERNEL_BCEWL_KERNEL_H_
#define MS_BCEWL_KERNEL_BCEWL_KERNEL_H_

#include <cstdint>

namespace ms_bcewl::kernel {

constexpr int kMaxRank = 8;
constexpr int64_t kReductionBlockElements = 8192;

enum class DType : uint8_t { kFloat32, kFloat16, kBFloat16 };

// An input broadcast to the problem shape. data points at its first element (the view offset applied), or is
// nullptr for an absent optional input, which then reads as 1. Strides are in elements, 0 on broadcast dims.
struct Operand {
  const void *data = nullptr;
  DType dtype = DType::kFloat32;
  int64_t strides[kMaxRank] = {};
};

// Where results go: strides over the problem dims, in elements.
struct Destination {
  void *data = nullptr;
  DType dtype = DType::kFloat32;
  int64_t strides[kMaxRank] = {};
};

// The elementwise problem: shape is self's; every operand is broadcast to it.
struct Problem {
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t numel = 0;
  Operand self;
  Operand target;
  Operand weight;
  Operand pos_weight;
  Operand grad_output;
};

// What is computed per element (formulas in bcewl_kernel_plain.cpp).
enum class Quantity { kLoss, kGradSelf, kGradTarget, kGradWeight, kGradPosWeight };

// out[i] = cast(value(i) * scale) for every element of the problem (scale in float32: 1, or 1/numel for mean). A
// gradient's scale enters through g (value(i) with g * scale in place of g) before the other products, so that a
// result that fits float32 cannot overflow in between.
void ComputeElementwise(const Problem &problem, Quantity quantity, float scale, const Destination &out);

struct Reduction {
  Problem problem;  // dims reordered: kept dims first, reduced dims last
  Destination out;  // strides over the reordered dims; 0 on the reduced ones
  int64_t outputs = 0;
  int64_t per_output = 0;
  int64_t blocks_per_output = 0;
  // The problem in its own dim order, and whether every reduced dim comes before every kept one there (the
  // gradient of a per-class weight): then each run of `outputs` consecutive elements adds one contribution to
  // every output, and the kernel can read the problem once in memory order.
  Problem natural;
  bool kept_dims_innermost = false;
  Destination natural_out;  // out with strides over natural's dims
};

// out_shape: the destination's shape aligned to the problem's rank (leading 1s); a dim of 1 is reduced.
// out: the destination with strides over the problem dims (0 on the reduced ones).
Reduction PlanReduction(const Problem &problem, const int64_t *out_shape, const Destination &out);

// Bytes of float64 block partials the reduction needs: outputs * blocks_per_output * 8 when an output has more
// than one block, else 0.
uint64_t ReductionWorkspaceBytes(const Reduction &reduction);

// out[o] = cast(scale * sum of value(i) over the contributions to o), summed in the order described above. For the
// gradients, scale enters through g (float32) as in ComputeElementwise; the loss's sum is scaled in float64.
// A gradient with one contribution per output (a weight of self's shape) has nothing to sum: out[o] is that
// contribution, as ComputeElementwise writes it.
// workspace holds ReductionWorkspaceBytes(reduction) bytes (may be null when that is 0).
void ComputeReduction(const Reduction &reduction, Quantity quantity, double scale, double *workspace);

// The gradients of every input from one call: ComputeElementwise of kGradSelf into grad_self and of kGradTarget
// into grad_target, and ComputeReduction of kGradWeight into *grad_weight and of kGradPosWeight into
// *grad_pos_weight (each where not null), bit for bit. One pass over the inputs computes exp(-|x|) once per element
// for the two elementwise gradients and for every weight gradient that sums row by row (a per-class weight:
// kept_dims_innermost, at most 4096 outputs, more than one row) and has enough rows to keep every thread busy (row
// blocks of 8192 rows, shared by up to 16 tasks where a run of its rows holds 512 elements), or, where none does, for
// every weight gradient that IsElementwise (a weight of self's shape, such as a mask); any other weight gradient is a
// ComputeReduction after the pass. scale: 1, or 1/numel for mean (entering through g, as above). workspace holds
// GradientsWorkspaceBytes(grad_weight, grad_pos_weight) bytes (may be null when that is 0).
void ComputeGradients(const Problem &problem, double scale, const Destination &grad_self,
                      const Destination &grad_target, const Reduction *grad_weight, const Reduction *grad_pos_weight,
                      double *workspace);

// The workspace of ComputeGradients: that of each reduction given, one after the other.
uint64_t GradientsWorkspaceBytes(const Reduction *grad_weight, const Reduction *grad_pos_weight);

// The loss summed over every dim (mean or sum: loss reduces the whole problem, scale 1 or 1/numel) and the
// gradients of every input for a gradOutput of 1: ComputeReduction of kLoss into loss.out and ComputeGradients
// without grad_output, bit for bit. The loss, dx, dy and the weight gradients that ComputeGradients computes in its
// pass come from one pass over the inputs (one exp per element); where that pass shares row blocks between tasks by
// their lanes, across which the loss's blocks run, it writes each element's loss to the workspace instead, summed in
// the loss's blocks after it. Any other weight gradient is a ComputeReduction after the pass. workspace holds
// LossAndGradientsWorkspaceBytes bytes.
void ComputeLossAndGradients(const Reduction &loss, double scale, const Destination &grad_self,
                             const Destination &grad_target, const Reduction *grad_weight,
                             const Reduction *grad_pos_weight, double *workspace);

// The loss's ReductionWorkspaceBytes, then GradientsWorkspaceBytes, then, where the pass stages the loss of each
// element, numel float32 values.
uint64_t LossAndGradientsWorkspaceBytes(const Reduction &loss, const Reduction *grad_weight,
                                        const Reduction *grad_pos_weight);

// Writes value to every element of the strided view of the given shape (the results for an empty self).
void Fill(int rank, const int64_t *shape, const Destination &out, float value);

}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_BCEWL_KERNEL_H_
