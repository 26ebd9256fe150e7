// The kernels as the MindSpore dispatch launches them: an absent weight or pos_weight arrives as a 0-d one (a
// single value equal to 1), and must cost what the variant without it costs, with the same bits.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernel_test_support.h"

namespace test {
namespace {

struct Variant {
  bool weight;
  bool posWeight;
};
const Variant kVariants[] = {{false, false}, {true, false}, {false, true}, {true, true}};

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

// Vector elements a launch processed, without the launch's one-off fill of a tile of ones on each core.
uint64_t PerTileWork(uint32_t blockDim, uint32_t tileCapacity) {
  return AscendC::sim::LastLaunchStats().vectorElements - static_cast<uint64_t>(blockDim) * tileCapacity;
}

bcewl::OperandRequest UnitOrAbsent(bool asLaunched, bool present, uint64_t n) {
  if (!present) return Absent();
  return asLaunched ? Runs(1, 1) : SameShape(n);
}

// Edge inputs send tiles to the forward's limit path, whose mask instructions round each tile up to whole repeats:
// their work depends on the tiling, so only their bits are compared.
template <typename T>
void CheckForward(const Variant &variant, uint64_t n, bool edge) {
  // The variant itself, with same-shape weights ...
  auto own =
      MakeForwardCase<T>(n, 3, UnitOrAbsent(false, variant.weight, n), UnitOrAbsent(false, variant.posWeight, n), n);
  // ... and as launched for every variant: the absent ones as 0-d ones, the present ones as the variant's.
  auto launched = MakeForwardCase<T>(n, 3, variant.weight ? own.request.weight : Runs(1, 1),
                                     variant.posWeight ? own.request.posWeight : Runs(1, 1), n);
  launched.in.x = own.in.x;
  launched.in.y = own.in.y;
  if (variant.weight) launched.in.w = own.in.w;
  if (variant.posWeight) launched.in.p = own.in.p;
  if (!variant.weight) launched.in.w = {FromDouble<T>(1.0)};
  if (!variant.posWeight) launched.in.p = {FromDouble<T>(1.0)};
  if (edge) {
    UseEdgeLogitsAndTargets(&own.in);
    UseEdgeLogitsAndTargets(&launched.in);
  }

  const std::vector<float> ownLoss = LaunchForward(own);
  const auto ownPlan = bcewl::PlanForward(own.request);
  const uint64_t ownWork = PerTileWork(ownPlan.blockDim, ownPlan.data.geometry.tileCapacity);
  const std::vector<float> launchedLoss = LaunchForward(launched);
  const auto launchedPlan = bcewl::PlanForward(launched.request);
  const uint64_t launchedWork = PerTileWork(launchedPlan.blockDim, launchedPlan.data.geometry.tileCapacity);
  ASSERT_MSG(std::memcmp(ownLoss.data(), launchedLoss.data(), n * sizeof(float)) == 0,
             "forward " << DescribeRequest(launched.request));
  ASSERT_MSG(edge || launchedWork == ownWork,
             "forward " << DescribeRequest(launched.request) << ": " << launchedWork << " vs " << ownWork);
}

template <typename T>
void CheckGrad(const Variant &variant, uint64_t n, Reduction reduction, bool edge) {
  const bcewl::OperandRequest dout = reduction == Reduction::kNone ? SameShape(n) : Runs(1, 1);
  auto own = MakeGradCase<T>(n, 3, reduction, dout, UnitOrAbsent(false, variant.weight, n),
                             UnitOrAbsent(false, variant.posWeight, n), n);
  auto launched = MakeGradCase<T>(n, 3, reduction, dout, variant.weight ? own.request.weight : Runs(1, 1),
                                  variant.posWeight ? own.request.posWeight : Runs(1, 1), n);
  launched.in.x = own.in.x;
  launched.in.y = own.in.y;
  launched.g = own.g;
  if (variant.weight) launched.in.w = own.in.w;
  if (variant.posWeight) launched.in.p = own.in.p;
  if (!variant.weight) launched.in.w = {FromDouble<T>(1.0)};
  if (!variant.posWeight) launched.in.p = {FromDouble<T>(1.0)};
  if (edge) {
    UseEdgeLogitsAndTargets(&own.in);
    UseEdgeLogitsAndTargets(&launched.in);
  }

  const std::vector<T> ownDx = LaunchGrad(own);
  const auto ownPlan = bcewl::PlanGrad(own.request);
  const uint64_t ownWork = PerTileWork(ownPlan.blockDim, ownPlan.data.geometry.tileCapacity);
  const std::vector<T> launchedDx = LaunchGrad(launched);
  const auto launchedPlan = bcewl::PlanGrad(launched.request);
  const uint64_t launchedWork = PerTileWork(launchedPlan.blockDim, launchedPlan.data.geometry.tileCapacity);
  ASSERT_MSG(std::memcmp(ownDx.data(), launchedDx.data(), n * sizeof(T)) == 0, "gradient " << Describe(launched));
  ASSERT_MSG(launchedWork == ownWork, "gradient " << Describe(launched) << ": " << launchedWork << " vs " << ownWork);
}

}  // namespace

TEST_CASE(absent_weights_passed_as_0d_ones_cost_nothing_and_change_no_bit) {
  for (const Variant &variant : kVariants) {
    ForEachDtype([&](auto tag) {
      using T = typename decltype(tag)::type;
      for (uint64_t n : {1ull, 3 * 4096ull + 77}) {
        for (bool edge : {false, true}) {
          CheckForward<T>(variant, n, edge);
          for (Reduction reduction : {Reduction::kNone, Reduction::kMean}) CheckGrad<T>(variant, n, reduction, edge);
        }
      }
    });
  }
}

}  // namespace test
