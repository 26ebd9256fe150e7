#include "reference_bcewl.h"

#include <cmath>

namespace test {
namespace {

// log(sigmoid(x)) without overflow in either direction.
double LogSigmoid(double x) { return x >= 0 ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x)); }

double Sigmoid(double x) { return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x)); }

// The row-major index into `array` of the element that broadcasts to element `linear` of `shape`.
int64_t BroadcastIndex(const Shape &shape, int64_t linear, const Shape &array_shape) {
  const size_t lead = shape.size() - array_shape.size();
  int64_t result = 0;
  int64_t array_stride = 1;
  for (size_t dim = shape.size(); dim-- > lead;) {
    const int64_t index = linear % shape[dim];
    linear /= shape[dim];
    const int64_t size = array_shape[dim - lead];
    result += (size == 1 ? 0 : index) * array_stride;
    array_stride *= size;
  }
  return result;
}

double ValueAt(const std::optional<RefArray> &array, const Shape &shape, int64_t linear) {
  return array ? array->values[BroadcastIndex(shape, linear, array->shape)] : 1.0;
}

struct ElementTerms {
  double loss;
  double dx;
  double dy;
  double dw;
  double dp;
};

ElementTerms Terms(double x, double y, double w, double p, double g) {
  const double log_s = LogSigmoid(x);
  const double log_one_minus_s = LogSigmoid(-x);
  const double unweighted = -(p * y * log_s + (1 - y) * log_one_minus_s);
  ElementTerms terms;
  terms.loss = w * unweighted;
  // d/dx log(s) = 1 - s; d/dx log(1 - s) = -s.
  terms.dx = -w * (p * y * (1 - Sigmoid(x)) - (1 - y) * Sigmoid(x)) * g;
  terms.dy = -w * (p * log_s - log_one_minus_s) * g;
  terms.dw = unweighted * g;
  terms.dp = -w * y * log_s * g;
  return terms;
}

}  // namespace

RefResult Reference(const RefProblem &problem) {
  const Shape &shape = problem.x.shape;
  const int64_t numel = NumelOf(shape);
  const double scale = problem.reduction == 1 ? 1.0 / numel : 1.0;
  RefResult result;
  result.loss.assign(problem.reduction == 0 ? numel : 1, 0.0);
  result.dx.assign(numel, 0.0);
  result.dy.assign(numel, 0.0);
  result.dw.assign(problem.w ? problem.w->values.size() : 0, 0.0);
  result.dp.assign(problem.p ? problem.p->values.size() : 0, 0.0);
  for (int64_t i = 0; i < numel; ++i) {
    const ElementTerms terms = Terms(problem.x.values[i], problem.y.values[i], ValueAt(problem.w, shape, i),
                                     ValueAt(problem.p, shape, i), ValueAt(problem.g, shape, i));
    result.loss[problem.reduction == 0 ? i : 0] += terms.loss;
    result.dx[i] = terms.dx * scale;
    result.dy[i] = terms.dy * scale;
    if (problem.w) {
      result.dw[BroadcastIndex(shape, i, problem.w->shape)] += terms.dw * scale;
    }
    if (problem.p) {
      result.dp[BroadcastIndex(shape, i, problem.p->shape)] += terms.dp * scale;
    }
  }
  if (problem.reduction == 1) {
    result.loss[0] = numel == 0 ? std::nan("") : result.loss[0] / numel;
  }
  return result;
}

double ReferenceObjective(const RefProblem &problem) {
  const Shape &shape = problem.x.shape;
  const int64_t numel = NumelOf(shape);
  double objective = 0.0;
  for (int64_t i = 0; i < numel; ++i) {
    objective += ValueAt(problem.g, shape, i) * Terms(problem.x.values[i], problem.y.values[i],
                                                      ValueAt(problem.w, shape, i), ValueAt(problem.p, shape, i), 1.0)
                                                    .loss;
  }
  return problem.reduction == 1 ? objective / numel : objective;
}

}  // namespace test
