// The AVX-512 kernels (16 lanes): their vector policy for element_math.h and their table. This file is compiled twice
// (aclnn_adapter/CMakeLists.txt): with -mavx512f it gives Avx512Kernels(); as the object ms_bcewl_avx512_bf16, with
// MS_BCEWL_AVX512_BF16_KERNELS and -mavx512f -mavx512dq -mavx512bf16, Avx512BFloat16Kernels(): the same results,
// bfloat16 outputs rounded by vcvtneps2bf16 where that is exact (kNativeBFloat16). Compiled without its flags (a
// compiler that lacks them), each gives a null table; the driver calls each only on a CPU (and OS) with its
// extensions. Everything here has internal linkage but those two functions, so each compile keeps its own code.
#include "kernel/isa/isa_kernels.h"

#if defined(MS_BCEWL_AVX512_BF16_KERNELS)
#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512BF16__)
#define MS_BCEWL_AVX512_NATIVE_BFLOAT16 true
#endif
#elif defined(__AVX512F__)
#define MS_BCEWL_AVX512_NATIVE_BFLOAT16 false
#endif

#if defined(MS_BCEWL_AVX512_NATIVE_BFLOAT16)

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's avx512fintrin.h makes its "undefined" vectors by self-initialisation, which -Wuninitialized reports
// wherever the intrinsics are inlined.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernel/isa/element_math.h"
#include "kernel/isa/kernel_table.h"

namespace ms_bcewl::kernel {
namespace {

template <bool kNativeBFloat16>
struct Avx512Policy {
  static constexpr int kWidth = 16;
  using F = __m512;
  using M = __mmask16;

  static F Load(const float *source) { return _mm512_loadu_ps(source); }
  static void Store(float *destination, F value) { _mm512_storeu_ps(destination, value); }
  static F Set(float value) { return _mm512_set1_ps(value); }
  static F Add(F a, F b) { return _mm512_add_ps(a, b); }
  static F Sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F Mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F Div(F a, F b) { return _mm512_div_ps(a, b); }
  static F Fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F Min(F a, F b) { return _mm512_min_ps(a, b); }
  static F Max(F a, F b) { return _mm512_max_ps(a, b); }
  static F Neg(F a) {  // AVX-512F has no float xor (that is AVX-512DQ): flip the sign bit as an integer
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN)));
  }
  static F Abs(F a) { return _mm512_abs_ps(a); }
  static F Round(F a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // vscalefps: x * 2^floor(n), rounded once by MXCSR's mode (nearest even), gradual underflow included (Intel SDM).
  static F ScaleByPow2(F x, F n) { return _mm512_scalef_ps(x, n); }
  static M Equal(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static M GreaterEqual(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
  static M And(M a, M b) { return static_cast<M>(a & b); }
  static F Select(M m, F a, F b) { return _mm512_mask_blend_ps(m, b, a); }
  static bool Any(M m) { return m != 0; }
  static F Exp(F t) { return VectorExp<Avx512Policy>(t); }
  static F Log1p(F e) { return VectorLog1p<Avx512Policy>(e); }
  static void AddToLanes(double *lanes, F value) {
    const __m256 high = _mm256_castsi256_ps(_mm512_extracti64x4_epi64(_mm512_castps_si512(value), 1));
    _mm512_storeu_pd(lanes, _mm512_add_pd(_mm512_loadu_pd(lanes), _mm512_cvtps_pd(_mm512_castps512_ps256(value))));
    _mm512_storeu_pd(lanes + 8, _mm512_add_pd(_mm512_loadu_pd(lanes + 8), _mm512_cvtps_pd(high)));
  }

  static F LoadHalf(const uint16_t *source) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(source)));
  }
  static F LoadBFloat16(const uint16_t *source) {
    const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(source)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
  static void StoreHalf(uint16_t *destination, F value) {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(destination), _mm512_cvtps_ph(value, _MM_FROUND_TO_NEAREST_INT));
  }
  // float_formats.h's FloatToBFloat16: round to nearest, ties to even; NaN keeps its leading bits and turns quiet.
  // vcvtneps2bf16 (AVX512_BF16) rounds every input the same way except subnormals, which it reads as zeros (Intel
  // SDM): a vector that holds one takes the exact integer path.
  static void StoreBFloat16(uint16_t *destination, F value) {
    if constexpr (kNativeBFloat16) {
      constexpr int kSubnormal = 0x20;  // vfpclassps category (AVX512DQ)
      if (_mm512_fpclass_ps_mask(value, kSubnormal) == 0) {
        const __m256bh narrowed = _mm512_cvtneps_pbh(value);
        std::memcpy(destination, &narrowed, sizeof(narrowed));
        return;
      }
    }
    const __m512i bits = _mm512_castps_si512(value);
    const __m512i high = _mm512_srli_epi32(bits, 16);
    const __m512i odd = _mm512_and_si512(high, _mm512_set1_epi32(1));
    const __m512i biased = _mm512_add_epi32(_mm512_add_epi32(bits, _mm512_set1_epi32(0x7FFF)), odd);
    const __m512i quiet = _mm512_or_si512(high, _mm512_set1_epi32(0x40));
    const __mmask16 nan = _mm512_cmp_ps_mask(value, value, _CMP_UNORD_Q);
    const __m512i result = _mm512_mask_blend_epi32(nan, _mm512_srli_epi32(biased, 16), quiet);
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(destination), _mm512_cvtepi32_epi16(result));
  }
};

using Avx512 = Avx512Policy<MS_BCEWL_AVX512_NATIVE_BFLOAT16>;
constexpr IsaKernels kKernels = MS_BCEWL_AVX512_NATIVE_BFLOAT16
                                    ? MakeKernels<Avx512>(Isa::kAvx512BFloat16, "avx512bf16")
                                    : MakeKernels<Avx512>(Isa::kAvx512, "avx512");

}  // namespace
}  // namespace ms_bcewl::kernel

#endif

namespace ms_bcewl::kernel {

#if defined(MS_BCEWL_AVX512_BF16_KERNELS)
const IsaKernels *Avx512BFloat16Kernels() {
#else
const IsaKernels *Avx512Kernels() {
#endif
#if defined(MS_BCEWL_AVX512_NATIVE_BFLOAT16)
  return &kKernels;
#else
  return nullptr;
#endif
}

}  // namespace ms_bcewl::kernel
