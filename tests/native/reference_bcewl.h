// A float64 reference of BCEWithLogits and its gradients, written from the mathematics rather than from the
// library: -w * (p*y*log(sigmoid(x)) + (1 - y)*log(sigmoid(-x))), derivatives taken by hand in that form,
// broadcasting by explicit numpy index arithmetic.
#ifndef MS_BCEWL_TESTS_NATIVE_REFERENCE_BCEWL_H_
#define MS_BCEWL_TESTS_NATIVE_REFERENCE_BCEWL_H_

#include <optional>
#include <vector>

#include "host_tensor.h"

namespace test {

struct RefArray {
  Shape shape;
  std::vector<double> values;  // row-major
};

struct RefProblem {
  RefArray x;
  RefArray y;
  std::optional<RefArray> w;
  std::optional<RefArray> p;
  std::optional<RefArray> g;  // upstream gradient; absent reads as 1
  int64_t reduction = 0;
};

struct RefResult {
  std::vector<double> loss;  // numel values for none, one for mean / sum
  std::vector<double> dx;
  std::vector<double> dy;
  std::vector<double> dw;  // empty when w is absent
  std::vector<double> dp;  // empty when p is absent
};

RefResult Reference(const RefProblem &problem);

// sum_i g_i * l_i (divided by numel for mean): the scalar whose derivatives are dx, dy, dw and dp.
double ReferenceObjective(const RefProblem &problem);

}  // namespace test

#endif  // MS_BCEWL_TESTS_NATIVE_REFERENCE_BCEWL_H_
