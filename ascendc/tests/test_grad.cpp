// The gradient kernel against the float64 reference: variants, dtypes, reductions, core counts, sizes, broadcasts.
#include <cmath>
#include <vector>

#include "kernel_test_support.h"

namespace test {
namespace {

// dout has the loss shape for reduction none and is a 0-d tensor (one value) for mean and sum.
bcewl::OperandRequest DoutFor(Reduction reduction, uint64_t n) {
  return reduction == Reduction::kNone ? SameShape(n) : Runs(1, 1);
}

template <typename T>
uint64_t GradTileLength() {
  bcewl::GradTilingRequest request;
  request.totalLength = 1 << 22;
  request.dtype = DtypeOf<T>();
  request.dout = SameShape(request.totalLength);
  request.weight = SameShape(request.totalLength);
  request.posWeight = SameShape(request.totalLength);
  return bcewl::PlanGrad(request).data.geometry.chunkLength;
}

}  // namespace

TEST_CASE(grad_all_variants_dtypes_reductions_cores_and_sizes) {
  ForEachDtype([](auto tag) {
    using T = typename decltype(tag)::type;
    const uint64_t tile = GradTileLength<T>();
    const uint64_t sizes[] = {0, 1, 9, tile, tile + 1, 2 * tile + 17, 30011};
    const Reduction reductions[] = {Reduction::kNone, Reduction::kMean, Reduction::kSum};
    for (int variant = 0; variant < 4; ++variant) {
      const bool hasWeight = (variant & 1) != 0;
      const bool hasPosWeight = (variant & 2) != 0;
      for (uint32_t cores : {1u, 8u, 20u, 48u}) {
        for (uint64_t n : sizes) {
          const Reduction reduction = reductions[(n + cores + variant) % 3];
          auto c = MakeGradCase<T>(n, cores, reduction, DoutFor(reduction, n), hasWeight ? SameShape(n) : Absent(),
                                   hasPosWeight ? SameShape(n) : Absent(), n + 13 * cores + variant);
          CheckGrad(c);
        }
      }
    }
  });
}

TEST_CASE(grad_every_reduction_on_every_dtype) {
  ForEachDtype([](auto tag) {
    using T = typename decltype(tag)::type;
    for (Reduction reduction : {Reduction::kNone, Reduction::kMean, Reduction::kSum}) {
      auto c = MakeGradCase<T>(5003, 8, reduction, DoutFor(reduction, 5003), SameShape(5003), SameShape(5003), 21);
      CheckGrad(c);
    }
  });
}

TEST_CASE(grad_more_than_a_million_elements) {
  constexpr uint64_t kClasses = 1000;
  constexpr uint64_t kElements = 1001 * kClasses;
  auto c = MakeGradCase<bfloat16_t>(kElements, 48, Reduction::kMean, DoutFor(Reduction::kMean, kElements),
                                    SameShape(kElements), Trailing(kClasses), 22);
  CheckGrad(c);
}

TEST_CASE(grad_broadcast_modes) {
  ForEachDtype([](auto tag) {
    using T = typename decltype(tag)::type;
    struct Case {
      uint64_t n;
      bcewl::OperandRequest dout, weight, posWeight;
    };
    const Case cases[] = {
        {6 * 1000, SameShape(6000), Trailing(6), Trailing(6)},    // (N, C) with (C,) class weights
        {3 * 4 * 50, SameShape(600), Runs(4, 50), Trailing(50)},  // (C, 1, 1) weight, (W,) pos_weight
        {7 * 9001, Runs(1, 1), Runs(7, 9001), Trailing(9001)},    // rows longer than a tile, scalar dout
        {2 * 5 * 33, Runs(10, 33), Absent(), Runs(5, 33)},        // dout broadcast like a (N, C, 1) tensor
        {4097, Runs(1, 1), Runs(1, 1), Absent()},                 // scalar weight
    };
    for (const Case &broadcast : cases) {
      for (uint32_t cores : {1u, 8u, 48u}) {
        auto c = MakeGradCase<T>(broadcast.n, cores, Reduction::kSum, broadcast.dout, broadcast.weight,
                                 broadcast.posWeight, broadcast.n + cores);
        CheckGrad(c);
      }
    }
  });
}

TEST_CASE(grad_at_infinite_and_nan_logits) {
  auto c = MakeGradCase<float>(4, 1, Reduction::kNone, SameShape(4), Absent(), SameShape(4), 23);
  const float xs[] = {INFINITY, -INFINITY, NAN, 0.0f};
  const float ys[] = {0.25f, 0.75f, 0.5f, 1.0f};
  for (int i = 0; i < 4; ++i) {
    c.in.x[i] = xs[i];
    c.in.y[i] = ys[i];
    c.g[i] = 1.0f;
    c.in.p[i] = 2.0f;
  }
  const std::vector<float> dx = LaunchGrad(c);
  // sigmoid(+inf) = 1, sigmoid(-inf) = 0: dx = (p*y + 1 - y) * s - p*y
  ASSERT_TRUE(dx[0] == 0.75f);
  ASSERT_TRUE(dx[1] == -1.5f);
  ASSERT_TRUE(std::isnan(dx[2]));
  ASSERT_TRUE(std::fabs(dx[3] + 1.0f) < 1e-6f);
}

TEST_CASE(grad_special_values_match_the_reference_in_every_variant_dtype_and_reduction) {
  ForEachDtype([](auto tag) {
    using T = typename decltype(tag)::type;
    const uint64_t n = 2 * kSpecialCombinations + 3;
    for (int variant = 0; variant < 4; ++variant) {
      for (Reduction reduction : {Reduction::kNone, Reduction::kMean}) {
        auto c = MakeGradCase<T>(n, 2, reduction, DoutFor(reduction, n), (variant & 1) ? SameShape(n) : Absent(),
                                 (variant & 2) ? SameShape(n) : Absent(), 24 + variant);
        UseSpecialValues(&c.in);
        CheckGrad(c);
      }
    }
  });
}

}  // namespace test
