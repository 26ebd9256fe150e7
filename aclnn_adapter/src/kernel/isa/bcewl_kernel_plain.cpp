// The scalar kernels: the reference path of the host kernel (std::exp, std::log1p), used where the CPU has no
// supported SIMD extension or when MS_BCEWL_ISA=scalar; the SIMD kernels follow the same formulas in the same
// order (element_math.h) and differ only in exp and log1p (element_math.h).
//
// Numerics: every input is widened to float32 and each element is computed in float32:
//   logsig(x) = min(x, 0) - log1p(exp(-|x|))            sigmoid(x) from exp(-|x|) (no overflow for any x)
//   loss = w * ((1 - y) * x - (1 + (p - 1) * y) * logsig(x))
//   dx   = w * ((p*y + 1 - y) * sigmoid(x) - p*y) * g
//   dy   = w * (logsig(-x) - p * logsig(x)) * g
//        computed as w * (p*max(-x, 0) - max(x, 0) + (p - 1) * log1p(exp(-|x|))) * g
//   dw   = ((1 - y) * x - (1 + (p - 1) * y) * logsig(x)) * g       (before the sum down to w's shape)
//   dp   = -w * y * logsig(x) * g                                  (before the sum down to p's shape)
// An absent weight, pos_weight or gradOutput reads as 1.
//
// The loss is computed in the equivalent form -(1 - y) * logsig(-x) - p*y * logsig(x) (x = logsig(x) - logsig(-x)):
// it has no product as large as (1 + (p - 1) * y) * x, which overflows float32 for |x| near its maximum where the
// loss itself fits, and no cancellation of such products for large |x|. dy's form adds the log1p that its two
// logsig terms share once, instead of subtracting two copies of it: nothing cancels but the result itself (where
// p == 1 it is -x, exact; the difference form lost a small x's digits to log(2)). dx, dy, dw and dp take
// g * (1/numel) for a mean before their other products, for the same reason as the loss form.
// Infinite logits. The loss form would still give 0 * inf at x = ±inf where the loss has a limit, so there a
// factor that is exactly 0 times an infinite term gives 0: the limit of c * f(x) for c = 0. The results:
//   loss (and dw / g): x = +inf: +inf if y < 1, 0 if y == 1, -inf if y > 1 (times w; 0 if w == 0)
//                      x = -inf: 0 if p*y == 0, else +inf or -inf with the sign of p*y (times w)
//   dx: finite, w*(1 - y)*g at +inf and -w*p*y*g at -inf
//   dy: x = +inf: -inf (0 if w*g == 0); x = -inf: +inf with the sign of p (0 if p == 0 or w*g == 0)
//   dp: x = +inf: 0; x = -inf: +inf with the sign of w*y*g (0 if w*y*g == 0)
// NaN in any input is never annihilated: it propagates to every output it affects. Infinite y, p, w or g have
// no such treatment (plain IEEE arithmetic, often NaN).
#include <cmath>
#include <cstdint>

#include "kernel/isa/float_formats.h"
#include "kernel/isa/isa_kernels.h"
#include "kernel/isa/kernel_table.h"

namespace ms_bcewl::kernel {
namespace {

struct Scalar {
  static constexpr int kWidth = 1;
  using F = float;
  using M = bool;

  static F Load(const float *source) { return *source; }
  static void Store(float *destination, F value) { *destination = value; }
  static F Set(float value) { return value; }
  static F Add(F a, F b) { return a + b; }
  static F Sub(F a, F b) { return a - b; }
  static F Mul(F a, F b) { return a * b; }
  static F Div(F a, F b) { return a / b; }
  static F Min(F a, F b) { return std::fmin(a, b); }
  static F Neg(F a) { return -a; }
  static F Abs(F a) { return std::fabs(a); }
  static M Equal(F a, F b) { return a == b; }
  static M GreaterEqual(F a, F b) { return a >= b; }
  static M And(M a, M b) { return a && b; }
  static F Select(M m, F a, F b) { return m ? a : b; }
  static bool Any(M m) { return m; }
  static F Exp(F t) { return std::exp(t); }
  static F Log1p(F e) { return std::log1p(e); }
  static void AddToLanes(double *lanes, F value) { lanes[0] += static_cast<double>(value); }
  static F LoadHalf(const uint16_t *source) { return HalfToFloat(*source); }
  static F LoadBFloat16(const uint16_t *source) { return BFloat16ToFloat(*source); }
  static void StoreHalf(uint16_t *destination, F value) { *destination = FloatToHalf(value); }
  static void StoreBFloat16(uint16_t *destination, F value) { *destination = FloatToBFloat16(value); }
};

constexpr IsaKernels kScalarKernels = MakeKernels<Scalar>(Isa::kScalar, "scalar");

}  // namespace

const IsaKernels &ScalarKernels() { return kScalarKernels; }

}  // namespace ms_bcewl::kernel
