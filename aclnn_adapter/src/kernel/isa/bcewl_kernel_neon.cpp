// The aarch64 Advanced SIMD (NEON) kernels (4 lanes): the vector policy for element_math.h.
// Advanced SIMD is part of the aarch64 baseline, so this file needs no extra flags (aclnn_adapter/CMakeLists.txt);
// the driver still calls it only where the kernel reports the feature (AT_HWCAP's HWCAP_ASIMD). Everything here has
// internal linkage but NeonKernels(), like the x86 files.
#include "kernel/isa/isa_kernels.h"

#if defined(__aarch64__) && defined(__ARM_NEON)

#include <arm_neon.h>

#include <cstdint>

#include "kernel/isa/kernel_table.h"

namespace ms_bcewl::kernel {
namespace {

struct Neon {
  static constexpr int kWidth = 4;
  using F = float32x4_t;
  using M = uint32x4_t;

  static F Load(const float *source) { return vld1q_f32(source); }
  static void Store(float *destination, F value) { vst1q_f32(destination, value); }
  static F Set(float value) { return vdupq_n_f32(value); }
  static F Add(F a, F b) { return vaddq_f32(a, b); }
  static F Sub(F a, F b) { return vsubq_f32(a, b); }
  static F Mul(F a, F b) { return vmulq_f32(a, b); }
  static F Div(F a, F b) { return vdivq_f32(a, b); }
  static F Fma(F a, F b, F c) { return vfmaq_f32(c, a, b); }
  static F Min(F a, F b) { return vminnmq_f32(a, b); }  // fminnm: the number where one operand is a quiet NaN
  static F Max(F a, F b) { return vmaxq_f32(a, b); }    // fmax: NaN where either operand is NaN
  static F Neg(F a) { return vnegq_f32(a); }
  static F Abs(F a) { return vabsq_f32(a); }
  static F Round(F a) { return vrndnq_f32(a); }  // frintn: to nearest, ties to even
  static F Pow2(F n) {                           // 2^n for integral n in [-126, 127]
    const int32x4_t biased = vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127));
    return vreinterpretq_f32_s32(vshlq_n_s32(biased, 23));
  }
  static F ScaleByPow2(F x, F n) { return ScaleByPow2InTwoSteps<Neon>(x, n); }
  static M Equal(F a, F b) { return vceqq_f32(a, b); }
  static M GreaterEqual(F a, F b) { return vcgeq_f32(a, b); }
  static M And(M a, M b) { return vandq_u32(a, b); }
  static F Select(M m, F a, F b) { return vbslq_f32(m, a, b); }
  static bool Any(M m) { return vmaxvq_u32(m) != 0; }
  static F Exp(F t) { return VectorExp<Neon>(t); }
  static F Log1p(F e) { return VectorLog1p<Neon>(e); }
  static void AddToLanes(double *lanes, F value) {
    vst1q_f64(lanes, vaddq_f64(vld1q_f64(lanes), vcvt_f64_f32(vget_low_f32(value))));
    vst1q_f64(lanes + 2, vaddq_f64(vld1q_f64(lanes + 2), vcvt_high_f64_f32(value)));
  }

  // fcvtl / fcvtn with the default FPCR of Linux processes (no flush to zero, no default NaN, nearest even): exact
  // widening but for the quieting of signaling NaNs (as F16C), and float_formats.h's narrowing.
  static F LoadHalf(const uint16_t *source) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(source))); }
  static F LoadBFloat16(const uint16_t *source) { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(source), 16)); }
  static void StoreHalf(uint16_t *destination, F value) {
    vst1_u16(destination, vreinterpret_u16_f16(vcvt_f16_f32(value)));
  }
  // float_formats.h's FloatToBFloat16: round to nearest, ties to even; NaN keeps its leading bits and turns quiet.
  static void StoreBFloat16(uint16_t *destination, F value) {
    const uint32x4_t bits = vreinterpretq_u32_f32(value);
    const uint32x4_t high = vshrq_n_u32(bits, 16);
    const uint32x4_t odd = vandq_u32(high, vdupq_n_u32(1));
    const uint32x4_t biased = vaddq_u32(vaddq_u32(bits, vdupq_n_u32(0x7FFF)), odd);
    const uint32x4_t quiet = vorrq_u32(high, vdupq_n_u32(0x40));
    const uint32x4_t nan = vmvnq_u32(vceqq_f32(value, value));
    vst1_u16(destination, vmovn_u32(vbslq_u32(nan, quiet, vshrq_n_u32(biased, 16))));
  }
};

constexpr IsaKernels kNeonKernels = MakeKernels<Neon>(Isa::kNeon, "neon");

}  // namespace

const IsaKernels *NeonKernels() { return &kNeonKernels; }

}  // namespace ms_bcewl::kernel

#else

namespace ms_bcewl::kernel {

const IsaKernels *NeonKernels() { return nullptr; }

}  // namespace ms_bcewl::kernel

#endif
