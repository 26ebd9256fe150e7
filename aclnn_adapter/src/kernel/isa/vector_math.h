// exp and log1p for the SIMD kernels, written once over a vector policy V (element_math.h lists what it provides).
// They cover exactly the arguments the kernels pass: exp(t) for t = -|x| <= 0, and log1p(e) for e = exp(-|x|) in
// [0, 1]. NaN propagates through both.
//
// exp(t): t is clamped to >= -104 (exp(-104) < 2^-150 rounds to 0, as does everything below, -inf included), then
// t = n*ln2 + r with n = round(t / ln2), |r| <= ln2/2 (Cody-Waite: ln2 = kLn2Hi + kLn2Lo; t - n*kLn2Hi is exact in
// one FMA because kLn2Hi has the precision of a float and |r| < 1/2; the rounding error of r is carried along).
// exp(r) = (1 + r) + (r^2 q(r) + the rounding errors of r and of 1 + r), q a degree-4 minimax fit (relative error
// of the polynomial 3.1e-9). exp(r) * 2^n is rounded once, also where it is subnormal (V::ScaleByPow2; on AVX2 by
// ScaleByPow2InTwoSteps below).
//
// log1p(e): 1 + e = 2^k (1 + f) with k = (e >= 1/2), f = e for k = 0 and f = (e - 1)/2 in [-1/4, 0] for k = 1,
// both exact (Sterbenz), so 1 + e is never rounded. log(1 + f) = 2 atanh(s) with s = f/(2 + f) in [-1/7, 1/5],
// evaluated as f - (f^2/2 - s (f^2/2 + R(s^2))) (the fdlibm arrangement: rounding errors of s only reach the small
// correction; the rounding error of f^2/2 is carried along), R(z) = z (c1 + c2 z + c3 z^2 + c4 z^3) a minimax fit of
// 2 atanh(s)/s - 2 on z in [0, 1/25] (absolute error 4.6e-11); then k*ln2 is added in two parts.
//
// Errors against float64 (std::exp, std::log1p in double), measured over every float argument of the two domains
// (1.12e9 and 1.07e9 of them): exp at most 0.78 ulp (0.69 where the result is normal; the larger errors are in the
// subnormal range), log1p at most 0.85 ulp. The documented bounds kVectorExpMaxUlps and kVectorLog1pMaxUlps
// (isa_kernels.h), 1 ulp each, are what tests/native/test_kernel_isa.cpp checks over a dense sweep. For comparison,
// glibc 2.36's float std::exp and std::log1p, which the scalar kernels use, measure 0.50 and 1.29 ulp the same way.
#ifndef MS_BCEWL_KERNEL_VECTOR_MATH_H_
#define MS_BCEWL_KERNEL_VECTOR_MATH_H_

// The per-vector helpers (here and in element_math.h) are forced inline: the loops then keep every vector in
// registers (a call would pass the five input vectors through memory) and the compiler interleaves exp, log1p and
// the formula.
#if defined(__GNUC__)
#define MS_BCEWL_KERNEL_INLINE inline __attribute__((always_inline))
#else
#define MS_BCEWL_KERNEL_INLINE inline
#endif

namespace ms_bcewl::kernel {
namespace {  // internal linkage: each ISA's translation unit has its own copy, compiled for its ISA

constexpr float kLn2Hi = 0x1.62e430p-1f;    // float(ln 2)
constexpr float kLn2Lo = -0x1.05c610p-29f;  // ln 2 - kLn2Hi
constexpr float kLog2E = 0x1.715476p+0f;

template <class V>
MS_BCEWL_KERNEL_INLINE typename V::F VectorExp(typename V::F t) {
  using F = typename V::F;
  t = V::Max(V::Set(-104.0f), t);  // NaN stays NaN (Max)
  const F n = V::Round(V::Mul(t, V::Set(kLog2E)));
  const F r_hi = V::Fma(n, V::Set(-kLn2Hi), t);
  const F r = V::Fma(n, V::Set(-kLn2Lo), r_hi);
  const F r_lo = V::Fma(n, V::Set(-kLn2Lo), V::Sub(r_hi, r));  // the rounding error of r (r_hi - r is exact)
  F q = V::Set(0x1.6a2434p-10f);
  q = V::Fma(q, r, V::Set(0x1.1239e2p-7f));
  q = V::Fma(q, r, V::Set(0x1.5558f2p-5f));
  q = V::Fma(q, r, V::Set(0x1.555492p-3f));
  q = V::Fma(q, r, V::Set(0x1.fffffcp-2f));
  const F one = V::Set(1.0f);
  const F one_plus_r = V::Add(one, r);
  const F one_plus_r_error = V::Add(V::Sub(one, one_plus_r), r);  // exact (Fast2Sum: |r| < 1)
  const F exp_r = V::Add(one_plus_r, V::Fma(V::Mul(r, r), q, V::Add(r_lo, one_plus_r_error)));
  return V::ScaleByPow2(exp_r, n);
}

// x * 2^n rounded once, for integral n in [-150, 127] and x in [1/2, 2]: as 2^h * 2^(n - h), h = round(n/2), each
// factor a normal float (V::Pow2), so that only the last product rounds, also where the result is subnormal.
template <class V>
MS_BCEWL_KERNEL_INLINE typename V::F ScaleByPow2InTwoSteps(typename V::F x, typename V::F n) {
  const typename V::F h = V::Round(V::Mul(n, V::Set(0.5f)));
  return V::Mul(V::Mul(x, V::Pow2(h)), V::Pow2(V::Sub(n, h)));
}

template <class V>
MS_BCEWL_KERNEL_INLINE typename V::F VectorLog1p(typename V::F e) {
  using F = typename V::F;
  const F half = V::Set(0.5f);
  const auto upper = V::GreaterEqual(e, half);
  const F f = V::Select(upper, V::Mul(V::Sub(e, V::Set(1.0f)), half), e);
  const F s = V::Div(f, V::Add(V::Set(2.0f), f));
  const F z = V::Mul(s, s);
  F c = V::Set(0x1.eda3aap-3f);
  c = V::Fma(c, z, V::Set(0x1.23e8dap-2f));
  c = V::Fma(c, z, V::Set(0x1.999be0p-2f));
  c = V::Fma(c, z, V::Set(0x1.555554p-1f));
  const F r = V::Mul(z, c);
  const F half_f = V::Mul(half, f);
  const F half_f2 = V::Mul(half_f, f);
  const F half_f2_error = V::Fma(half_f, f, V::Neg(half_f2));  // f^2/2 - half_f2, exact
  const F zero = V::Set(0.0f);
  const F ln2_lo = V::Select(upper, V::Set(kLn2Lo), zero);
  const F correction = V::Sub(V::Fma(s, V::Add(half_f2, r), ln2_lo), half_f2_error);
  return V::Add(V::Select(upper, V::Set(kLn2Hi), zero), V::Sub(f, V::Sub(half_f2, correction)));
}

}  // namespace
}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_VECTOR_MATH_H_
