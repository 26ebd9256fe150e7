// The per-element formulas and the loops over contiguous arrays, written once over a vector policy V and
// instantiated by each ISA's translation unit (isa_kernels.h). The formulas and their rules for infinite logits
// are those of the top comment of bcewl_kernel_plain.cpp, in the same operation order; the scalar policy gives
// exactly the plain implementation's results.
//
// A policy V provides, on F (V::kWidth float32 lanes) and M (a mask of lanes):
//   Load / Store (unaligned), Set (broadcast), Add, Sub, Mul, Div, Min (called as Min(v, 0) only: 0 for NaN v, as
//   std::fmin), Neg, Abs, Equal and GreaterEqual (ordered: false for NaN), And (of masks), Select(m, a, b) (a where
//   m), Any (a lane of m set), Exp and Log1p, LoadHalf / LoadBFloat16 / StoreHalf / StoreBFloat16 (kWidth values),
//   AddToLanes(lanes, v) (lanes[i] += double(v[i]) for the kWidth lanes, each rounded once),
// and the SIMD ones also what exp and log1p below use: Fma(a, b, c) = a*b + c rounded once, Max(a, b) (NaN where b is
// NaN), Round (to the nearest integer, ties to even), ScaleByPow2(x, n) = x * 2^n rounded once (integral n in
// [-150, 127], x in [1/2, 2]; NaN where either is NaN).
//
// Partial vectors (the last count < kWidth elements of an array) go through zero-padded copies, never a read or a
// write past the end of an array.
#ifndef MS_BCEWL_KERNEL_ELEMENT_MATH_H_
#define MS_BCEWL_KERNEL_ELEMENT_MATH_H_

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernel/bcewl_kernel.h"
#include "kernel/isa/isa_kernels.h"

// exp and log1p for the SIMD kernels, written once over a vector policy V (listed above).
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

// The per-vector helpers are forced inline: the loops then keep every vector in
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

namespace ms_bcewl::kernel {
namespace {  // internal linkage: each ISA's translation unit has its own copy, compiled for its ISA

template <class V>
struct Lanes {
  typename V::F x, y, w, p, g;
};

template <class V>
MS_BCEWL_KERNEL_INLINE typename V::F LoadFloats(const float *source, int64_t count) {
  if (count == V::kWidth) {
    return V::Load(source);
  }
  alignas(64) float padded[V::kWidth] = {};
  std::memcpy(padded, source, static_cast<size_t>(count) * sizeof(float));
  return V::Load(padded);
}

template <class V>
MS_BCEWL_KERNEL_INLINE void StoreFloats(float *destination, int64_t count, typename V::F value) {
  if (count == V::kWidth) {
    V::Store(destination, value);
    return;
  }
  alignas(64) float padded[V::kWidth];
  V::Store(padded, value);
  std::memcpy(destination, padded, static_cast<size_t>(count) * sizeof(float));
}

template <class V, bool kHalf>
MS_BCEWL_KERNEL_INLINE typename V::F LoadSixteenBits(const uint16_t *source) {
  return kHalf ? V::LoadHalf(source) : V::LoadBFloat16(source);
}

template <class V, bool kHalf>
MS_BCEWL_KERNEL_INLINE void StoreSixteenBits(uint16_t *destination, typename V::F value) {
  if constexpr (kHalf) {
    V::StoreHalf(destination, value);
  } else {
    V::StoreBFloat16(destination, value);
  }
}

// count (<= kWidth) values of a float32 (kDType kFloat32) or 16-bit array, widened in registers.
template <class V, DType kDType>
MS_BCEWL_KERNEL_INLINE typename V::F LoadValues(const void *source, int64_t index, int64_t count) {
  if constexpr (kDType == DType::kFloat32) {
    return LoadFloats<V>(static_cast<const float *>(source) + index, count);
  } else {
    const uint16_t *first = static_cast<const uint16_t *>(source) + index;
    if (count == V::kWidth) {
      return LoadSixteenBits<V, kDType == DType::kFloat16>(first);
    }
    uint16_t padded[V::kWidth] = {};
    std::memcpy(padded, first, static_cast<size_t>(count) * sizeof(uint16_t));
    return LoadSixteenBits<V, kDType == DType::kFloat16>(padded);
  }
}

// Stores count (<= kWidth) values into a float32 or 16-bit array, narrowed in registers as float_formats.h does.
template <class V, DType kDType>
MS_BCEWL_KERNEL_INLINE void StoreValues(void *destination, int64_t index, int64_t count, typename V::F value) {
  if constexpr (kDType == DType::kFloat32) {
    StoreFloats<V>(static_cast<float *>(destination) + index, count, value);
  } else {
    uint16_t *first = static_cast<uint16_t *>(destination) + index;
    if (count == V::kWidth) {
      StoreSixteenBits<V, kDType == DType::kFloat16>(first, value);
      return;
    }
    uint16_t narrowed[V::kWidth];
    StoreSixteenBits<V, kDType == DType::kFloat16>(narrowed, value);
    std::memcpy(first, narrowed, static_cast<size_t>(count) * sizeof(uint16_t));
  }
}

// x and y as kXy (RowInputs), the others float32.
template <class V, DType kXy>
MS_BCEWL_KERNEL_INLINE Lanes<V> LoadLanes(const RowInputs &in, int64_t index, int64_t count) {
  const void *x = kXy == DType::kFloat32 ? static_cast<const void *>(in.x) : in.x16;
  const void *y = kXy == DType::kFloat32 ? static_cast<const void *>(in.y) : in.y16;
  return Lanes<V>{LoadValues<V, kXy>(x, index, count), LoadValues<V, kXy>(y, index, count),
                  LoadFloats<V>(in.w + index, count), LoadFloats<V>(in.p + index, count),
                  LoadFloats<V>(in.g + index, count)};
}

// A constant rather than calls of std::numeric_limits: an ISA's translation unit must not emit (at -O0) an
// out-of-line copy of a shared inline function, which the linker could pick for the baseline code too.
constexpr float kInfinity = std::numeric_limits<float>::infinity();

template <class V>
MS_BCEWL_KERNEL_INLINE typename V::M IsInfinite(typename V::F v) {
  return V::Equal(V::Abs(v), V::Set(kInfinity));
}

// c * v, except that an exactly zero c times an infinite v is 0 (the limit); NaN stays NaN.
template <class V>
MS_BCEWL_KERNEL_INLINE typename V::F ProductWithZeroLimit(typename V::F c, typename V::F v) {
  const typename V::F zero = V::Set(0.0f);
  return V::Select(V::And(V::Equal(c, zero), IsInfinite<V>(v)), zero, V::Mul(c, v));
}

// Which of weight and pos_weight are 1 everywhere (absent, or a constant 1), known at compile time: the products
// with them are skipped, which gives the same bits (v * 1 is v, and 1 is not 0 for the zero limits), and dy skips
// its log1p term where pos_weight is 1 (TargetDerivative).
template <bool kUnitWeight, bool kUnitPosWeight>
struct UnitInputs {
  static constexpr bool kWeight = kUnitWeight;
  static constexpr bool kPosWeight = kUnitPosWeight;
};

// w * v with the zero limit, or v where w is 1.
template <class V, bool kUnit>
MS_BCEWL_KERNEL_INLINE typename V::F Weighted(typename V::F w, typename V::F v) {
  return kUnit ? v : ProductWithZeroLimit<V>(w, v);
}

// factor * v, or v where the factor is 1 (kUnit).
template <class V, bool kUnit>
MS_BCEWL_KERNEL_INLINE typename V::F Times(typename V::F factor, typename V::F v) {
  return kUnit ? v : V::Mul(factor, v);
}

// (1 - y) * x - (1 + (p - 1) * y) * logsig(x), computed as -(1 - y) * logsig(-x) - p*y * logsig(x) (the same,
// since x = logsig(x) - logsig(-x)); for infinite x with the zero limits (bcewl_kernel_plain.cpp).
template <class V, class Units>
MS_BCEWL_KERNEL_INLINE typename V::F UnweightedLoss(const Lanes<V> &in, typename V::F logsig,
                                                    typename V::F logsig_of_minus_x) {
  using F = typename V::F;
  const F one = V::Set(1.0f);
  const F py = Times<V, Units::kPosWeight>(in.p, in.y);
  const F finite = V::Neg(V::Add(V::Mul(V::Sub(one, in.y), logsig_of_minus_x), V::Mul(py, logsig)));
  const typename V::M infinite = IsInfinite<V>(in.x);
  if (!V::Any(infinite)) {
    return finite;
  }
  const F limit = V::Neg(
      V::Add(ProductWithZeroLimit<V>(V::Sub(one, in.y), logsig_of_minus_x), ProductWithZeroLimit<V>(py, logsig)));
  return V::Select(infinite, limit, finite);
}

// exp(-|x|) in [0, 1]: no overflow for any x. Every quantity is computed from it.
template <class V>
MS_BCEWL_KERNEL_INLINE typename V::F ExpOfMinusAbs(const Lanes<V> &in) {
  return V::Exp(V::Neg(V::Abs(in.x)));
}

// p * softplus(-x) - softplus(x), the derivative of the unweighted loss in y, as p * max(-x, 0) - max(x, 0) +
// (p - 1) * log1p(exp(-|x|)): the two softplus share their log1p term, so nothing cancels but the result itself
// (where p == 1 it is -x, exact). kUnitPosWeight: p is 1 everywhere, and the log1p term, times p - 1 == 0, is not
// computed (the same bits: it is finite, so that product is +0 either way).
template <class V, bool kUnitPosWeight>
MS_BCEWL_KERNEL_INLINE typename V::F TargetDerivative(const Lanes<V> &in, typename V::F e) {
  using F = typename V::F;
  const F zero = V::Set(0.0f);
  const F minus_x = V::Neg(in.x);
  if constexpr (kUnitPosWeight) {
    return V::Add(minus_x, zero);  // what adding (p - 1) * log1p(e) == +0 does: -0 becomes +0
  } else {
    const F linear = V::Select(V::GreaterEqual(in.x, zero), minus_x, ProductWithZeroLimit<V>(in.p, minus_x));
    return V::Add(linear, V::Mul(V::Sub(in.p, V::Set(1.0f)), V::Log1p(e)));
  }
}

// Units: which inputs are 1 everywhere (UnitInputs).
template <class V, Quantity kQuantity, class Units>
MS_BCEWL_KERNEL_INLINE typename V::F ElementValueFrom(const Lanes<V> &in, typename V::F e) {
  using F = typename V::F;
  const F zero = V::Set(0.0f);
  const F one = V::Set(1.0f);
  if constexpr (kQuantity == Quantity::kGradSelf) {
    const F sigmoid = V::Div(V::Select(V::GreaterEqual(in.x, zero), one, e), V::Add(one, e));
    const F py = Times<V, Units::kPosWeight>(in.p, in.y);
    const F unweighted = V::Sub(V::Mul(V::Sub(V::Add(py, one), in.y), sigmoid), py);
    return V::Mul(Times<V, Units::kWeight>(in.w, unweighted), in.g);
  } else if constexpr (kQuantity == Quantity::kGradTarget) {
    return ProductWithZeroLimit<V>(in.g,
                                   Weighted<V, Units::kWeight>(in.w, TargetDerivative<V, Units::kPosWeight>(in, e)));
  } else {
    const F softplus = V::Log1p(e);
    const F logsig = V::Sub(V::Min(in.x, zero), softplus);                     // log(sigmoid(x))
    const F logsig_of_minus_x = V::Sub(V::Min(V::Neg(in.x), zero), softplus);  // log(sigmoid(-x))
    if constexpr (kQuantity == Quantity::kLoss) {
      return Weighted<V, Units::kWeight>(in.w, UnweightedLoss<V, Units>(in, logsig, logsig_of_minus_x));
    } else if constexpr (kQuantity == Quantity::kGradWeight) {
      return ProductWithZeroLimit<V>(in.g, UnweightedLoss<V, Units>(in, logsig, logsig_of_minus_x));
    } else {
      const F wy = Times<V, Units::kWeight>(in.w, in.y);
      return V::Neg(ProductWithZeroLimit<V>(V::Mul(wy, in.g), logsig));
    }
  }
}

template <class V, Quantity kQuantity, class Units>
MS_BCEWL_KERNEL_INLINE typename V::F ElementValue(const Lanes<V> &in) {
  return ElementValueFrom<V, kQuantity, Units>(in, ExpOfMinusAbs<V>(in));
}

// The inputs of elements [index, index + count) with g * g_scale in place of g. Every gradient is linear in g, so
// a mean's 1/numel enters through g, before the products that a result which fits might otherwise overflow.
template <class V, DType kXy>
MS_BCEWL_KERNEL_INLINE Lanes<V> LoadScaledLanes(const RowInputs &in, int64_t index, int64_t count, float g_scale) {
  Lanes<V> lanes = LoadLanes<V, kXy>(in, index, count);
  lanes.g = V::Mul(lanes.g, V::Set(g_scale));
  return lanes;
}

template <class V, Quantity kQuantity, DType kXy, class Units>
void ValuesLoop(int64_t count, const RowInputs &in, float scale, void *out) {
  for (int64_t i = 0; i < count; i += V::kWidth) {
    const int64_t lanes = count - i < V::kWidth ? count - i : V::kWidth;
    if constexpr (kQuantity == Quantity::kLoss) {  // the loss has no g: scaled after
      const typename V::F loss = ElementValue<V, kQuantity, Units>(LoadLanes<V, kXy>(in, i, lanes));
      StoreValues<V, kXy>(out, i, lanes, V::Mul(loss, V::Set(scale)));
    } else {
      const Lanes<V> values = LoadScaledLanes<V, kXy>(in, i, lanes, scale);
      StoreValues<V, kXy>(out, i, lanes, ElementValue<V, kQuantity, Units>(values));
    }
  }
}

// Adds one contribution to its lane of the open block, closing the block when it is full.
MS_BCEWL_KERNEL_INLINE void AddToOpenBlock(BlockSums *sums, float value) {
  sums->lanes[sums->filled % kSumLanes] += static_cast<double>(value);
  if (++sums->filled == sums->length) {
    sums->Close();
  }
}

// Where the gradients of one pass go: dx and dy (RowInputs::xy_dtype values), the weight gradients (float32: they
// are summed) where not null, and the loss (float32, unscaled: it has no g) where not null.
struct GradientOutputs {
  void *grad_self;
  void *grad_target;
  float *grad_weight;
  float *grad_pos_weight;
  float *loss;
};

// Stores the values of elements [i, i + lanes) of what `out` holds (kWeight, kPosWeight and kLoss: whether it holds
// that output), from the inputs and their exp(-|x|).
template <class V, DType kXy, bool kWeight, bool kPosWeight, class Units, bool kLoss>
MS_BCEWL_KERNEL_INLINE void StoreGradients(const Lanes<V> &in, typename V::F e, int64_t i, int64_t lanes,
                                           const GradientOutputs &out) {
  StoreValues<V, kXy>(out.grad_self, i, lanes, ElementValueFrom<V, Quantity::kGradSelf, Units>(in, e));
  StoreValues<V, kXy>(out.grad_target, i, lanes, ElementValueFrom<V, Quantity::kGradTarget, Units>(in, e));
  if constexpr (kWeight) {
    StoreFloats<V>(out.grad_weight + i, lanes, ElementValueFrom<V, Quantity::kGradWeight, Units>(in, e));
  }
  if constexpr (kPosWeight) {
    StoreFloats<V>(out.grad_pos_weight + i, lanes, ElementValueFrom<V, Quantity::kGradPosWeight, Units>(in, e));
  }
  if constexpr (kLoss) {
    StoreFloats<V>(out.loss + i, lanes, ElementValueFrom<V, Quantity::kLoss, Units>(in, e));
  }
}

// The values of ValuesLoop for kGradSelf and kGradTarget, for kGradWeight and kGradPosWeight where kWeight and
// kPosWeight, and for kLoss with scale 1 where kLoss (the last three into float32 arrays), bit for bit, from one exp
// per element.
template <class V, DType kXy, bool kWeight, bool kPosWeight, class Units, bool kLoss>
void GradientsLoop(int64_t count, const RowInputs &in, float scale, const GradientOutputs &out) {
  for (int64_t i = 0; i < count; i += V::kWidth) {
    const int64_t lanes = count - i < V::kWidth ? count - i : V::kWidth;
    const Lanes<V> values = LoadScaledLanes<V, kXy>(in, i, lanes, scale);
    StoreGradients<V, kXy, kWeight, kPosWeight, Units, kLoss>(values, ExpOfMinusAbs<V>(values), i, lanes, out);
  }
}

// The lanes of the next vector added to *sums: a vector starts at a block position that is a multiple of its width,
// so that it maps to the lanes [filled % kSumLanes, + kWidth); a misaligned start (a new call, a new block) is
// realigned by a shorter vector.
template <class V>
MS_BCEWL_KERNEL_INLINE int64_t NextVectorLanes(const BlockSums *sums, int64_t remaining) {
  static_assert(kSumLanes % V::kWidth == 0, "a vector must map to consecutive lanes");
  const int64_t aligned = V::kWidth - sums->filled % V::kWidth;
  return remaining < aligned ? remaining : aligned;
}

// Adds the first `lanes` values of a vector (lanes from NextVectorLanes) to their lanes of *sums, in order.
template <class V>
MS_BCEWL_KERNEL_INLINE void AddVector(typename V::F value, int64_t lanes, BlockSums *sums) {
  if (lanes == V::kWidth && sums->length - sums->filled > V::kWidth) {  // inside the open block
    V::AddToLanes(sums->lanes + sums->filled % kSumLanes, value);
    sums->filled += V::kWidth;
    return;
  }
  alignas(64) float values[V::kWidth];
  V::Store(values, value);
  for (int64_t lane = 0; lane < lanes; ++lane) {
    AddToOpenBlock(sums, values[lane]);
  }
}

// Adds `groups` groups of kSumLanes values, value_at(i, kWidth) for the vectors from element `first` on, to the
// lanes of the open block, whose next value goes to lane 0 and which these values do not fill: in a local copy of
// the lanes that the loop keeps in registers (each lane still adds its values in index order).
template <class V, class ValueAt>
MS_BCEWL_KERNEL_INLINE void AddGroupsInsideTheBlock(int64_t groups, int64_t first, BlockSums *sums, ValueAt &value_at) {
  alignas(64) double lanes[kSumLanes];
  std::memcpy(lanes, sums->lanes, sizeof(lanes));
  for (int64_t group = 0; group < groups; ++group) {
    for (int vector = 0; vector < kSumLanes / V::kWidth; ++vector) {
      V::AddToLanes(lanes + vector * V::kWidth, value_at(first + group * kSumLanes + vector * V::kWidth, V::kWidth));
    }
  }
  std::memcpy(sums->lanes, lanes, sizeof(lanes));
  sums->filled += groups * kSumLanes;
}

// Adds value_at(i, lanes), the values of elements [i, i + lanes), for i = 0 .. count - 1 to their lanes of *sums in
// order, closing blocks as they fill: whole groups of kSumLanes inside the open block at once, the rest vector by
// vector.
template <class V, class ValueAt>
MS_BCEWL_KERNEL_INLINE void AddInBlockOrder(int64_t count, BlockSums *sums, ValueAt &&value_at) {
  for (int64_t i = 0; i < count;) {
    const int64_t left = count - i;
    const int64_t inside = sums->length - sums->filled - 1;  // leaves the block's last value to AddVector
    const int64_t room = left < inside ? left : inside;
    const int64_t groups = sums->filled % kSumLanes == 0 ? room / kSumLanes : 0;
    if (groups > 0) {
      AddGroupsInsideTheBlock<V>(groups, i, sums, value_at);
      i += groups * kSumLanes;
      continue;
    }
    const int64_t lanes = NextVectorLanes<V>(sums, count - i);
    AddVector<V>(value_at(i, lanes), lanes, sums);
    i += lanes;
  }
}

// How many elements ahead SumsLoop prefetches its inputs when it only sums: left to the hardware prefetchers, the
// AVX-512 sum loop waited on its loads from memory longer than the elementwise loop, which also stores
// (docs/performance.md). Longer distances measured no faster; the loop that also stores gradients ran slower with it.
constexpr int64_t kPrefetchElements = 256;

// Asks for the cache line of element `index` of an array; a prefetch never faults, so the index may lie past the end
// (the address is formed as an integer: no pointer past the array is made).
template <typename T>
MS_BCEWL_KERNEL_INLINE void PrefetchElement(const T *array, int64_t index) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(array) + static_cast<uintptr_t>(index) * sizeof(T);
  __builtin_prefetch(reinterpret_cast<const void *>(address));
}

// Prefetches, kPrefetchElements past element i, the inputs that quantity kQuantity reads (g: the gradients).
template <Quantity kQuantity, DType kXy, class Units>
MS_BCEWL_KERNEL_INLINE void PrefetchAhead(const RowInputs &in, int64_t i) {
  const int64_t ahead = i + kPrefetchElements;
  if constexpr (kXy == DType::kFloat32) {
    PrefetchElement(in.x, ahead);
    PrefetchElement(in.y, ahead);
  } else {
    PrefetchElement(in.x16, ahead);
    PrefetchElement(in.y16, ahead);
  }
  if constexpr (!Units::kWeight) {
    PrefetchElement(in.w, ahead);
  }
  if constexpr (!Units::kPosWeight) {
    PrefetchElement(in.p, ahead);
  }
  if constexpr (kQuantity != Quantity::kLoss) {
    PrefetchElement(in.g, ahead);
  }
}

// Adds value(i) to the lanes of *sums; with kGradients also stores what GradientsLoop<kWeight, kPosWeight> stores
// (not the loss), from the same exp (the loss takes no g, so g_scale serves both).
// Not inlined: inlined into the nested dispatch lambdas of LossSumsWithGradients, g++ 12 laid out its loop around
// a far jump, 8 % slower (1e6 elements, one thread).
template <class V, Quantity kQuantity, DType kXy, bool kGradients, class Units, bool kWeight = false,
          bool kPosWeight = false>
__attribute__((noinline)) void SumsLoop(int64_t count, const RowInputs &in, float g_scale, BlockSums *sums,
                                        const GradientOutputs &out) {
  AddInBlockOrder<V>(count, sums, [&](int64_t i, int64_t lanes) {
    if constexpr (!kGradients) PrefetchAhead<kQuantity, kXy, Units>(in, i);
    const Lanes<V> inputs = LoadScaledLanes<V, kXy>(in, i, lanes, g_scale);
    const typename V::F e = ExpOfMinusAbs<V>(inputs);
    if constexpr (kGradients) {
      StoreGradients<V, kXy, kWeight, kPosWeight, Units, false>(inputs, e, i, lanes, out);
    }
    return ElementValueFrom<V, kQuantity, Units>(inputs, e);
  });
}

// Calls body(std::integral_constant<Enum, v>{}) for the one v of kValues equal to value: a run-time value picks a
// compile-time instantiation.
template <typename Enum, Enum... kValues, typename Body>
void Dispatch(Enum value, Body &&body) {
  ((value == kValues ? (body(std::integral_constant<Enum, kValues>{}), true) : false) || ...);
}

template <typename Body>
void WithQuantity(Quantity quantity, Body &&body) {
  Dispatch<Quantity, Quantity::kLoss, Quantity::kGradSelf, Quantity::kGradTarget, Quantity::kGradWeight,
           Quantity::kGradPosWeight>(quantity, body);
}

template <typename Body>
void WithDType(DType dtype, Body &&body) {
  Dispatch<DType, DType::kFloat32, DType::kFloat16, DType::kBFloat16>(dtype, body);
}

template <typename Body>
void WithFlag(bool flag, Body &&body) {
  Dispatch<bool, false, true>(flag, body);
}

// Calls body(units) with units an object of the UnitInputs type of `in`.
template <typename Body>
void WithUnits(const RowInputs &in, Body &&body) {
  WithFlag(in.unit_weight, [&](auto weight) {
    WithFlag(in.unit_pos_weight,
             [&](auto pos_weight) { body(UnitInputs<decltype(weight)::value, decltype(pos_weight)::value>{}); });
  });
}

template <class V>
void Values(Quantity quantity, int64_t count, const RowInputs &in, float scale, void *out) {
  WithQuantity(quantity, [&](auto q) {
    WithDType(in.xy_dtype, [&](auto xy) {
      WithUnits(in, [&](auto units) {
        ValuesLoop<V, decltype(q)::value, decltype(xy)::value, decltype(units)>(count, in, scale, out);
      });
    });
  });
}

// Calls body(xy, weight, pos_weight, units) with compile-time constants: x's and y's dtype, whether `out` holds
// each weight gradient, and which inputs are 1 everywhere (an object of a UnitInputs type).
template <typename Body>
void WithGradientKinds(const RowInputs &in, const GradientOutputs &out, Body &&body) {
  WithDType(in.xy_dtype, [&](auto xy) {
    WithFlag(out.grad_weight != nullptr, [&](auto weight) {
      WithFlag(out.grad_pos_weight != nullptr,
               [&](auto pos_weight) { WithUnits(in, [&](auto units) { body(xy, weight, pos_weight, units); }); });
    });
  });
}

template <class V>
void Gradients(int64_t count, const RowInputs &in, float scale, void *grad_self, void *grad_target, float *grad_weight,
               float *grad_pos_weight, float *loss) {
  const GradientOutputs out{grad_self, grad_target, grad_weight, grad_pos_weight, loss};
  WithGradientKinds(in, out, [&](auto xy, auto weight, auto pos_weight, auto units) {
    WithFlag(loss != nullptr, [&](auto with_loss) {
      GradientsLoop<V, decltype(xy)::value, decltype(weight)::value, decltype(pos_weight)::value, decltype(units),
                    decltype(with_loss)::value>(count, in, scale, out);
    });
  });
}

template <class V>
void Sums(Quantity quantity, int64_t count, const RowInputs &in, float g_scale, BlockSums *sums) {
  WithQuantity(quantity, [&](auto q) {
    WithDType(in.xy_dtype, [&](auto xy) {
      WithUnits(in, [&](auto units) {
        SumsLoop<V, decltype(q)::value, decltype(xy)::value, false, decltype(units)>(count, in, g_scale, sums, {});
      });
    });
  });
}

template <class V>
void LossSumsWithGradients(int64_t count, const RowInputs &in, float g_scale, BlockSums *loss_sums, void *grad_self,
                           void *grad_target, float *grad_weight, float *grad_pos_weight) {
  const GradientOutputs out{grad_self, grad_target, grad_weight, grad_pos_weight, nullptr};
  WithGradientKinds(in, out, [&](auto xy, auto weight, auto pos_weight, auto units) {
    SumsLoop<V, Quantity::kLoss, decltype(xy)::value, true, decltype(units), decltype(weight)::value,
             decltype(pos_weight)::value>(count, in, g_scale, loss_sums, out);
  });
}

}  // namespace
}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_ELEMENT_MATH_H_
