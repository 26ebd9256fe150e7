// The kernels as the MindSpore dispatch launches them: an absent weight or pos_weight arrives as a 0-d one (a
// single value equal to 1), and must cost what the variant without it costs, with the same bits.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernel_test_support.h"

namespace test {
namespace {

// Logits and targets the contract covers, special ones included (no infinite target).
template <typename T>
void UseEdgeLogitsAndTargets(LossInputs<T> *in) {
  const double xs[] = {INFINITY, -INFINITY, NAN, 0.0, -0.0, 88.5, -88.5, 16.7, -16.7, 1e-3};
  const double ys[] = {0.0, 1.0, 0.25, NAN, 2.0, -1.0};
  for (uint64_t i = 0; i < in->x.size(); i += 3) {
    in->x[i] = FromDouble<T>(xs[i / 3 % 10]);
    in->y[i] = FromDouble<T>(ys[i / 30 % 6]);
  }
}

// The variant's own case with its absent weights passed as the dispatch passes them: 0-d ones.
template <typename Case>
Case AsLaunched(const Case &own, const Variant &variant) {
  using T = typename decltype(own.in.x)::value_type;
  Case launched = own;
  if (!variant.weight) {
    launched.request.weight = Runs(1, 1);
    launched.in.w = {FromDouble<T>(1.0)};
  }
  if (!variant.posWeight) {
    launched.request.posWeight = Runs(1, 1);
    launched.in.p = {FromDouble<T>(1.0)};
  }
  return launched;
}

// Vector elements the last launch processed, without its one-off fill of a tile of ones on each core.
template <typename Plan>
uint64_t PerTileWork(const Plan &plan) {
  return AscendC::sim::LastLaunchStats().vectorElements -
         static_cast<uint64_t>(plan.blockDim) * plan.data.geometry.tileCapacity;
}

// The launch as the dispatch makes it gives the bits of the variant's own launch; with finite inputs also its
// per-tile work. Edge inputs send forward tiles to the limit path, whose mask instructions round each tile up to
// whole repeats, so that its work there depends on the tiling.
template <typename Case, typename Launch, typename Plan>
void CheckAsLaunched(Case &own, const Variant &variant, bool edge, Launch launch, Plan plan, const char *kernel) {
  if (edge) UseEdgeLogitsAndTargets(&own.in);
  Case launched = AsLaunched(own, variant);
  const auto ownOut = launch(own);
  const uint64_t ownWork = PerTileWork(plan(own.request));
  const auto launchedOut = launch(launched);
  const uint64_t launchedWork = PerTileWork(plan(launched.request));
  const std::string what = std::string(kernel) + " " + DescribeRequest(launched.request);
  ASSERT_MSG(std::memcmp(ownOut.data(), launchedOut.data(), ownOut.size() * sizeof(ownOut[0])) == 0, what);
  ASSERT_MSG(edge || launchedWork == ownWork, what << ": " << launchedWork << " vs " << ownWork);
}

bcewl::OperandRequest IfPresent(bool present, uint64_t n) { return present ? SameShape(n) : Absent(); }

}  // namespace

TEST_CASE(absent_weights_passed_as_0d_ones_cost_nothing_and_change_no_bit) {
  for (const Variant &variant : kVariants) {
    ForEachDtype([&](auto tag) {
      using T = typename decltype(tag)::type;
      for (uint64_t n : {1ull, 3 * 4096ull + 77}) {
        for (bool edge : {false, true}) {
          auto forward = MakeForwardCase<T>(n, 3, IfPresent(variant.weight, n), IfPresent(variant.posWeight, n), n);
          CheckAsLaunched(
              forward, variant, edge, [](ForwardCase<T> &c) { return LaunchForward(c); }, &bcewl::PlanForward,
              "forward");
          for (Reduction reduction : {Reduction::kNone, Reduction::kMean}) {
            const bcewl::OperandRequest dout = reduction == Reduction::kNone ? SameShape(n) : Runs(1, 1);
            auto grad = MakeGradCase<T>(n, 3, reduction, dout, IfPresent(variant.weight, n),
                                        IfPresent(variant.posWeight, n), n);
            CheckAsLaunched(
                grad, variant, edge, [](GradCase<T> &c) { return LaunchGrad(c); }, &bcewl::PlanGrad, "gradient");
          }
        }
      }
    });
  }
}

}  // namespace test
