// The per-ISA kernels that the host driver (driver/plan.h) calls: the per-element math over contiguous
// float32 arrays, and the float16 / bfloat16 conversions. Each ISA has its own compile, with that ISA's -m flags only
// (aclnn_adapter/CMakeLists.txt), of a file that instantiates element_math.h with its vector policy:
//   bcewl_kernel_plain.cpp   scalar, std::exp / std::log1p (the reference path; its top comment has the numerics)
//   bcewl_kernel_avx2.cpp    AVX2 + FMA + F16C, 8 lanes
//   bcewl_kernel_avx512.cpp  AVX-512F, 16 lanes; compiled again with AVX512_BF16's bfloat16 rounding
//   bcewl_kernel_neon.cpp    aarch64 Advanced SIMD, 4 lanes
// The driver picks one at run time from what the CPU supports, so the library runs on any x86-64 or aarch64 (and
// elsewhere, where only the scalar one is compiled in).
//
// The SIMD kernels use their own exp and log1p (element_math.h), within the bounds below of float64 (measured over
// every float of the domain the kernels use: 0.78 and 0.85 ulp; the tests check the bounds on a dense sweep); the
// scalar kernels use glibc's (0.50 and 1.29 ulp measured the same way), so per element the two paths' exp and log1p
// differ by at most the sums. Everything else is the same IEEE float32 arithmetic in the same order, without
// contraction into FMAs (-ffp-contract=off), so a value does not depend on where its element falls in a vector, a
// chunk or a thread's range.
#ifndef MS_BCEWL_KERNEL_ISA_KERNELS_H_
#define MS_BCEWL_KERNEL_ISA_KERNELS_H_

#include <cstdint>

#include "kernel/bcewl_kernel.h"

namespace ms_bcewl::kernel {

enum class Isa : uint8_t { kScalar = 0, kAvx2 = 1, kAvx512 = 2, kAvx512BFloat16 = 3, kNeon = 4 };

// Every ISA: the scalar baseline, then x86-64's from the least to the most capable, then aarch64's. A CPU has the
// ISAs of one architecture only, so the last one available is the best. MS_BCEWL_ISA names them (kIsaNames) to cap
// the automatic choice: the named ISA, else the best available below it (kIsaBelow: the next one down in its
// architecture's order, the scalar one at the bottom of both).
constexpr Isa kIsas[] = {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAvx512BFloat16, Isa::kNeon};
constexpr const char *kIsaNames[] = {"scalar", "avx2", "avx512", "avx512bf16", "neon"};
constexpr Isa kIsaBelow[] = {Isa::kScalar, Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kScalar};

// Maximum error, in units in the last place of the float32 result, of the SIMD exp(t) for t <= 0 (including the
// subnormal range and -inf) and of the SIMD log1p(e) for e in [0, 1], against float64.
constexpr double kVectorExpMaxUlps = 1.0;
constexpr double kVectorLog1pMaxUlps = 1.0;

// count contiguous float32 values of each input (absent inputs come as a buffer of ones); except that with a
// 16-bit xy_dtype, x and y are the tensors' own float16 / bfloat16 values (x16, y16, not x and y), converted in
// registers, and the outputs of values() and gradients() take that dtype too (narrowed in registers).
// The host driver picks it where x, y and every output are contiguous and share that dtype: no staging copies.
struct RowInputs {
  const float *x;
  const float *y;
  const float *w;
  const float *p;
  const float *g;
  DType xy_dtype = DType::kFloat32;
  const uint16_t *x16 = nullptr;
  const uint16_t *y16 = nullptr;
  bool unit_weight = false;      // w is 1 everywhere (absent, or a constant 1): products with it are skipped
  bool unit_pos_weight = false;  // p is 1 everywhere: the same, and dy skips a log1p (element_math.h)
};

// Lanes of a block sum: the contribution at position q of its block goes to lane q % kSumLanes (bcewl_kernel.h).
constexpr int kSumLanes = 16;

// The running state of the reduction order of bcewl_kernel.h: consecutive blocks of kReductionBlockElements
// contributions (fewer for an output's last block); each block is summed in kSumLanes float64 lanes, each lane in
// index order, and the lanes are folded when the block closes.
struct BlockSums {
  double lanes[kSumLanes];  // the open block's lane sums so far
  int64_t filled;           // contributions added to the open block
  int64_t length;           // contributions of the open block
  double *partials;         // where the sum of the open block goes when it closes
  int64_t position;         // of the open block's first contribution within its output
  int64_t per_output;       // contributions per output

  // Opens the block that starts at contribution `start` of its output, its sum to go to *destination.
  void Open(int64_t start, int64_t contributions_per_output, double *destination);
  // Folds the lanes into *partials++ and opens the next block (defined once, in driver/passes.cpp).
  void Close();
};

struct IsaKernels {
  Isa isa;
  const char *name;
  int width;  // float32 lanes per vector
  // dst[i] = the float16 or bfloat16 src[i], widened exactly (except that the SIMD ISAs' conversions, F16C's and
  // fcvtl, turn a signaling float16 NaN into the quiet one with the same payload, which the first arithmetic
  // operation on it would do anyway).
  void (*widen)(DType dtype, const uint16_t *src, int64_t count, float *dst);
  // dst[i] = src[i] rounded to float16 or bfloat16 exactly as float_formats.h does.
  void (*narrow)(DType dtype, const float *src, int64_t count, uint16_t *dst);
  // out[i] = value(i) * scale: for the gradients, value(i) with g * scale in place of g (all are linear in g); the
  // loss (no g) times scale. out holds in.xy_dtype values (float32 by default).
  void (*values)(Quantity quantity, int64_t count, const RowInputs &in, float scale, void *out);
  // values() of kGradSelf into grad_self, of kGradTarget into grad_target, and, where not null, of kGradWeight into
  // grad_weight and of kGradPosWeight into grad_pos_weight (always float32: they are summed) and of kLoss with scale
  // 1 into loss (float32), from one exp per element.
  void (*gradients)(int64_t count, const RowInputs &in, float scale, void *grad_self, void *grad_target,
                    float *grad_weight, float *grad_pos_weight, float *loss);
  // Adds value(i), i = 0 .. count - 1, with g * g_scale in place of g, to their lanes of *sums in order, closing
  // blocks as they fill.
  void (*sums)(Quantity quantity, int64_t count, const RowInputs &in, float g_scale, BlockSums *sums);
  // sums() of kLoss into *loss_sums and, from the same exp, what gradients() writes with g * g_scale for its scale
  // (grad_weight and grad_pos_weight where not null).
  void (*loss_sums_with_gradients)(int64_t count, const RowInputs &in, float g_scale, BlockSums *loss_sums,
                                   void *grad_self, void *grad_target, float *grad_weight, float *grad_pos_weight);
  // sums[i] += values[i] as float64, i = 0 .. count - 1: one add per element, so every ISA gives the same sums.
  void (*add_to_sums)(const float *values, int64_t count, double *sums);
  // Adds values[i], i = 0 .. count - 1, to their lanes of *sums in order, closing blocks as they fill: what sums()
  // does with the values it computes.
  void (*add_to_block_sums)(const float *values, int64_t count, BlockSums *sums);
  // The kernels' exp (for t <= 0) and log1p (for e in [0, 1]), exposed for the tests of their error bounds.
  void (*exp)(const float *t, int64_t count, float *out);
  void (*log1p)(const float *e, int64_t count, float *out);
};

const IsaKernels &ScalarKernels();
const IsaKernels *Avx2Kernels();            // nullptr where the compiler could not build it
const IsaKernels *Avx512Kernels();          // nullptr where the compiler could not build it
const IsaKernels *Avx512BFloat16Kernels();  // nullptr where the compiler could not build it
const IsaKernels *NeonKernels();            // nullptr but on aarch64

}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_ISA_KERNELS_H_
