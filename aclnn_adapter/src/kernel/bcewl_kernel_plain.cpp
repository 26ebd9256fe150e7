// The plain (scalar, single-threaded) host kernel.
//
// Numerics: every input is widened to float32 and each element is computed in float32:
//   logsig(x) = min(x, 0) - log1p(exp(-|x|))            sigmoid(x) from exp(-|x|) (no overflow for any x)
//   loss = w * ((1 - y) * x - (1 + (p - 1) * y) * logsig(x))
//   dx   = w * ((p*y + 1 - y) * sigmoid(x) - p*y) * g
//   dy   = w * (logsig(-x) - p * logsig(x)) * g
//   dw   = ((1 - y) * x - (1 + (p - 1) * y) * logsig(x)) * g       (before the sum down to w's shape)
//   dp   = -w * y * logsig(x) * g                                  (before the sum down to p's shape)
// An absent weight, pos_weight or gradOutput reads as 1.
//
// Infinite logits. The loss form above would give inf - inf or 0 * inf at x = ±inf even where the loss has a
// limit, so infinite x uses the equivalent form -(1 - y) * logsig(-x) - p*y * logsig(x), and everywhere a
// factor that is exactly 0 times an infinite term gives 0: the limit of c * f(x) for c = 0. The results:
//   loss (and dw / g): x = +inf: +inf if y < 1, 0 if y == 1, -inf if y > 1 (times w; 0 if w == 0)
//                      x = -inf: 0 if p*y == 0, else +inf or -inf with the sign of p*y (times w)
//   dx: finite, w*(1 - y)*g at +inf and -w*p*y*g at -inf
//   dy: x = +inf: -inf (0 if w*g == 0); x = -inf: +inf with the sign of p (0 if p == 0 or w*g == 0)
//   dp: x = +inf: 0; x = -inf: +inf with the sign of w*y*g (0 if w*y*g == 0)
// NaN in any input is never annihilated: it propagates to every output it affects. Infinite y, p, w or g have
// no such treatment (plain IEEE arithmetic, often NaN).
#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>

#include "kernel/bcewl_kernel.h"
#include "kernel/element_access.h"
#include "kernel/strided_cursor.h"

namespace ms_bcewl::kernel {
namespace {

struct ElementInputs {
  float x;
  float y;
  float w;
  float p;
  float g;
};

float LogSigmoid(float x) { return std::fmin(x, 0.0f) - std::log1p(std::exp(-std::fabs(x))); }

float Sigmoid(float x) {
  const float e = std::exp(-std::fabs(x));
  return x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

// c * v, except that an exactly zero c times an infinite v is 0 (the limit); NaN stays NaN.
float ProductWithZeroLimit(float c, float v) { return (c == 0.0f && std::isinf(v)) ? 0.0f : c * v; }

float UnweightedLoss(float x, float y, float p) {
  if (std::isinf(x)) {
    return -(ProductWithZeroLimit(1.0f - y, LogSigmoid(-x)) + ProductWithZeroLimit(p * y, LogSigmoid(x)));
  }
  return (1.0f - y) * x - (1.0f + (p - 1.0f) * y) * LogSigmoid(x);
}

template <Quantity kQuantity>
float ElementValue(const ElementInputs &in) {
  if constexpr (kQuantity == Quantity::kLoss) {
    return ProductWithZeroLimit(in.w, UnweightedLoss(in.x, in.y, in.p));
  } else if constexpr (kQuantity == Quantity::kGradSelf) {
    return in.w * ((in.p * in.y + 1.0f - in.y) * Sigmoid(in.x) - in.p * in.y) * in.g;
  } else if constexpr (kQuantity == Quantity::kGradTarget) {
    const float derivative = LogSigmoid(-in.x) - ProductWithZeroLimit(in.p, LogSigmoid(in.x));
    return ProductWithZeroLimit(in.g, ProductWithZeroLimit(in.w, derivative));
  } else if constexpr (kQuantity == Quantity::kGradWeight) {
    return ProductWithZeroLimit(in.g, UnweightedLoss(in.x, in.y, in.p));
  } else {
    return -ProductWithZeroLimit(in.w * in.y * in.g, LogSigmoid(in.x));
  }
}

float LoadOrOne(const Operand &operand, int64_t offset) {
  return operand.data == nullptr ? 1.0f : LoadElement(operand.data, offset, operand.dtype);
}

// The cursor views of a problem: its five operands, then (for elementwise work) the destination.
constexpr int kInputViews = 5;

std::array<const int64_t *, kInputViews> InputStrides(const Problem &problem) {
  return {problem.self.strides, problem.target.strides, problem.weight.strides, problem.pos_weight.strides,
          problem.grad_output.strides};
}

template <int kViews>
ElementInputs LoadInputs(const Problem &problem, const StridedCursor<kViews> &cursor) {
  return ElementInputs{LoadElement(problem.self.data, cursor.Offset(0), problem.self.dtype),
                       LoadElement(problem.target.data, cursor.Offset(1), problem.target.dtype),
                       LoadOrOne(problem.weight, cursor.Offset(2)), LoadOrOne(problem.pos_weight, cursor.Offset(3)),
                       LoadOrOne(problem.grad_output, cursor.Offset(4))};
}

template <typename Body>
void WithQuantity(Quantity quantity, Body &&body) {
  switch (quantity) {
    case Quantity::kLoss:
      return body(std::integral_constant<Quantity, Quantity::kLoss>{});
    case Quantity::kGradSelf:
      return body(std::integral_constant<Quantity, Quantity::kGradSelf>{});
    case Quantity::kGradTarget:
      return body(std::integral_constant<Quantity, Quantity::kGradTarget>{});
    case Quantity::kGradWeight:
      return body(std::integral_constant<Quantity, Quantity::kGradWeight>{});
    case Quantity::kGradPosWeight:
      return body(std::integral_constant<Quantity, Quantity::kGradPosWeight>{});
  }
}

template <Quantity kQuantity>
void ElementwiseLoop(const Problem &problem, float scale, const Destination &out) {
  const auto inputs = InputStrides(problem);
  StridedCursor<kInputViews + 1> cursor(
      problem.rank, problem.shape, {inputs[0], inputs[1], inputs[2], inputs[3], inputs[4], out.strides}, 0);
  for (int64_t i = 0; i < problem.numel; ++i, cursor.Next()) {
    const float value = ElementValue<kQuantity>(LoadInputs(problem, cursor));
    StoreElement(out.data, cursor.Offset(kInputViews), out.dtype, value * scale);
  }
}

template <Quantity kQuantity>
double BlockSum(const Problem &problem, int64_t begin, int64_t end) {
  StridedCursor<kInputViews> cursor(problem.rank, problem.shape, InputStrides(problem), begin);
  double sum = 0.0;
  for (int64_t i = begin; i < end; ++i, cursor.Next()) {
    sum += static_cast<double>(ElementValue<kQuantity>(LoadInputs(problem, cursor)));
  }
  return sum;
}

template <Quantity kQuantity>
double OutputTotal(const Reduction &reduction, int64_t output, double *partials) {
  const int64_t first = output * reduction.per_output;
  const int64_t last = first + reduction.per_output;
  if (reduction.blocks_per_output == 1) {
    return BlockSum<kQuantity>(reduction.problem, first, last);
  }
  for (int64_t block = 0; block < reduction.blocks_per_output; ++block) {
    const int64_t begin = first + block * kReductionBlockElements;
    partials[block] = BlockSum<kQuantity>(reduction.problem, begin, std::min(begin + kReductionBlockElements, last));
  }
  double total = 0.0;
  for (int64_t block = 0; block < reduction.blocks_per_output; ++block) {
    total += partials[block];
  }
  return total;
}

int64_t OffsetOf(int rank, const int64_t *shape, const int64_t *strides, int64_t linear) {
  int64_t offset = 0;
  for (int dim = rank - 1; dim >= 0 && shape[dim] > 0; --dim) {
    offset += (linear % shape[dim]) * strides[dim];
    linear /= shape[dim];
  }
  return offset;
}

}  // namespace

void ComputeElementwise(const Problem &problem, Quantity quantity, float scale, const Destination &out) {
  WithQuantity(quantity, [&](auto q) { ElementwiseLoop<decltype(q)::value>(problem, scale, out); });
}

void ComputeReduction(const Reduction &reduction, Quantity quantity, double scale, double *workspace) {
  const Problem &problem = reduction.problem;
  WithQuantity(quantity, [&](auto q) {
    for (int64_t output = 0; output < reduction.outputs; ++output) {
      double *partials = workspace == nullptr ? nullptr : workspace + output * reduction.blocks_per_output;
      const double total = OutputTotal<decltype(q)::value>(reduction, output, partials);
      const int64_t first = output * reduction.per_output;
      const int64_t offset = OffsetOf(problem.rank, problem.shape, reduction.out.strides, first);
      StoreElementFromDouble(reduction.out.data, offset, reduction.out.dtype, total * scale);
    }
  });
}

void Fill(int rank, const int64_t *shape, const Destination &out, float value) {
  int64_t numel = 1;
  for (int dim = 0; dim < rank; ++dim) {
    numel *= shape[dim];
  }
  StridedCursor<1> cursor(rank, shape, {out.strides}, 0);
  for (int64_t i = 0; i < numel; ++i, cursor.Next()) {
    StoreElement(out.data, cursor.Offset(0), out.dtype, value);
  }
}

}  // namespace ms_bcewl::kernel
