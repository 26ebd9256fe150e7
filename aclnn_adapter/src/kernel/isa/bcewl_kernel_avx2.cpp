// The AVX2 kernels (8 lanes, with FMA and F16C): the vector policy for element_math.h.
// Compiled with -mavx2 -mfma -mf16c (aclnn_adapter/CMakeLists.txt); the driver calls them only on a CPU that has
// all three. Everything here has internal linkage but Avx2Kernels(), so no AVX2 code can stand in for a baseline
// function of the same name elsewhere in the library.
#include "kernel/isa/isa_kernels.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)

#include <immintrin.h>

#include <cstdint>

#include "kernel/isa/kernel_table.h"

namespace ms_bcewl::kernel {
namespace {

struct Avx2 {
  static constexpr int kWidth = 8;
  using F = __m256;
  using M = __m256;

  static F Load(const float *source) { return _mm256_loadu_ps(source); }
  static void Store(float *destination, F value) { _mm256_storeu_ps(destination, value); }
  static F Set(float value) { return _mm256_set1_ps(value); }
  static F Add(F a, F b) { return _mm256_add_ps(a, b); }
  static F Sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F Mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F Div(F a, F b) { return _mm256_div_ps(a, b); }
  static F Fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F Min(F a, F b) { return _mm256_min_ps(a, b); }
  static F Max(F a, F b) { return _mm256_max_ps(a, b); }
  static F Neg(F a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
  static F Abs(F a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static F Round(F a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static F Pow2(F n) {  // 2^n for integral n in [-126, 127]
    const __m256i biased = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(biased, 23));
  }
  static F ScaleByPow2(F x, F n) { return ScaleByPow2InTwoSteps<Avx2>(x, n); }
  static M Equal(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static M GreaterEqual(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
  static M And(M a, M b) { return _mm256_and_ps(a, b); }
  static F Select(M m, F a, F b) { return _mm256_blendv_ps(b, a, m); }
  static bool Any(M m) { return _mm256_movemask_ps(m) != 0; }
  static F Exp(F t) { return VectorExp<Avx2>(t); }
  static F Log1p(F e) { return VectorLog1p<Avx2>(e); }
  static void AddToLanes(double *lanes, F value) {
    _mm256_storeu_pd(lanes, _mm256_add_pd(_mm256_loadu_pd(lanes), _mm256_cvtps_pd(_mm256_castps256_ps128(value))));
    _mm256_storeu_pd(lanes + 4,
                     _mm256_add_pd(_mm256_loadu_pd(lanes + 4), _mm256_cvtps_pd(_mm256_extractf128_ps(value, 1))));
  }

  static F LoadHalf(const uint16_t *source) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(source)));
  }
  static F LoadBFloat16(const uint16_t *source) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(source)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  static void StoreHalf(uint16_t *destination, F value) {
    _mm_storeu_si128(reinterpret_cast<__m128i *>(destination), _mm256_cvtps_ph(value, _MM_FROUND_TO_NEAREST_INT));
  }
  // float_formats.h's FloatToBFloat16: round to nearest, ties to even; NaN keeps its leading bits and turns quiet.
  static void StoreBFloat16(uint16_t *destination, F value) {
    const __m256i bits = _mm256_castps_si256(value);
    const __m256i high = _mm256_srli_epi32(bits, 16);
    const __m256i odd = _mm256_and_si256(high, _mm256_set1_epi32(1));
    const __m256i biased = _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7FFF)), odd);
    const __m256i quiet = _mm256_or_si256(high, _mm256_set1_epi32(0x40));
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(value, value, _CMP_UNORD_Q));
    const __m256i result = _mm256_blendv_epi8(_mm256_srli_epi32(biased, 16), quiet, nan);
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(result), _mm256_extracti128_si256(result, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(destination), packed);
  }
};

constexpr IsaKernels kAvx2Kernels = MakeKernels<Avx2>(Isa::kAvx2, "avx2");

}  // namespace

const IsaKernels *Avx2Kernels() { return &kAvx2Kernels; }

}  // namespace ms_bcewl::kernel

#else

namespace ms_bcewl::kernel {

const IsaKernels *Avx2Kernels() { return nullptr; }

}  // namespace ms_bcewl::kernel

#endif
