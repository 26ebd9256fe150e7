// The forward kernel against the float64 reference: variants, dtypes, core counts, sizes, broadcasts, specials.
#include <cmath>
#include <vector>

#include "kernel_test_support.h"

namespace test {
namespace {

const uint32_t kCoreCounts[] = {1, 8, 20, 48};

template <typename T>
void CheckSameShape(uint64_t n, uint32_t cores, const Variant &variant, uint64_t seed) {
  auto c = MakeForwardCase<T>(n, cores, variant.weight ? SameShape(n) : Absent(),
                              variant.posWeight ? SameShape(n) : Absent(), seed);
  CheckForward(c);
}

}  // namespace

TEST_CASE(forward_all_variants_dtypes_cores_and_sizes) {
  ForEachDtype([](auto tag) {
    using T = typename decltype(tag)::type;
    for (const Variant &variant : kVariants) {
      const uint64_t tile = ForwardTileLength<T>(variant.weight, variant.posWeight);
      const uint64_t sizes[] = {0, 1, 7, 33, tile, tile + 1, 3 * tile + 5, 40001};
      for (uint32_t cores : kCoreCounts) {
        for (uint64_t n : sizes) CheckSameShape<T>(n, cores, variant, n * 31 + cores);
      }
    }
  });
}

TEST_CASE(forward_more_than_a_million_elements) {
  CheckSameShape<half>(1000003, 48, kVariants[3], 7);
  CheckSameShape<float>(1048583, 20, kVariants[1], 8);
}

TEST_CASE(forward_full_tiles_use_data_copy_and_tails_data_copy_pad) {
  const uint64_t tile = ForwardTileLength<float>(true, true);
  auto whole = MakeForwardCase<float>(4 * tile, 1, SameShape(4 * tile), SameShape(4 * tile), 1);
  CheckForward(whole);
  ASSERT_TRUE(AscendC::sim::LastLaunchStats().dataCopyPadCalls == 0);
  ASSERT_TRUE(AscendC::sim::LastLaunchStats().dataCopyCalls == 4 * 5);  // 4 tiles x (4 inputs + 1 output)

  auto tail = MakeForwardCase<float>(4 * tile + 3, 1, SameShape(4 * tile + 3), SameShape(4 * tile + 3), 2);
  CheckForward(tail);
  ASSERT_TRUE(AscendC::sim::LastLaunchStats().dataCopyPadCalls == 5);  // the tail tile: 4 inputs + 1 output
}

namespace {

struct BroadcastCase {
  const char *name;
  uint64_t n;
  bcewl::OperandRequest weight;
  bcewl::OperandRequest posWeight;
  uint32_t weightMode;  // the mode the tiling must pick, proving which kernel path ran
  uint32_t posWeightMode;
};

// Shapes in comments; N, C, H, W as in PyTorch.
const BroadcastCase kBroadcastCases[] = {
    // w (C,) on (N, C): the row is resident in UB
    {"trailing C=5", 5 * 700, Trailing(5), Absent(), bcewl::kOperandRowResident, bcewl::kOperandAbsent},
    {"trailing C=16", 16 * 300, Absent(), Trailing(16), bcewl::kOperandAbsent, bcewl::kOperandRowResident},
    {"trailing C=1000", 1000 * 37, Trailing(1000), Trailing(1000), bcewl::kOperandRowResident,
     bcewl::kOperandRowResident},
    // a row longer than a tile: rows are cut into chunks and the operand is streamed per chunk
    {"trailing C=10007", 10007 * 3, Trailing(10007), Absent(), bcewl::kOperandStream, bcewl::kOperandAbsent},
    // w (N, 1) on (N, C) and w (C, 1, 1) on (N, C, H, W): one value per run of `inner` elements
    {"outer (N,1) C=3", 3 * 2001, Runs(2001, 3), Absent(), bcewl::kOperandRunConstant, bcewl::kOperandAbsent},
    {"per-class (C,1,1)", 2 * 3 * 7 * 9, Runs(3, 63), Runs(3, 63), bcewl::kOperandRunConstant,
     bcewl::kOperandRunConstant},
    {"outer run longer than a tile", 5 * 9001, Runs(5, 9001), Absent(), bcewl::kOperandRunConstant,
     bcewl::kOperandAbsent},
    // w of shape (1,): a scalar
    {"scalar", 4099, Runs(1, 1), Trailing(1), bcewl::kOperandRunConstant, bcewl::kOperandRunConstant},
    // w (N, 1) with pos_weight (C,): both patterns share the row length C
    {"outer weight, trailing pos_weight", 60 * 2000, Runs(60, 2000), Trailing(2000), bcewl::kOperandRunConstant,
     bcewl::kOperandRowResident},
    // w (H, W) with pos_weight (W,) on (N, C, H, W): w repeats every H*W, wider than a row of W
    {"trailing H*W with trailing W", 2 * 3 * 4 * 10, Trailing(40), Trailing(10), bcewl::kOperandStream,
     bcewl::kOperandRowResident},
    // w (C, 1, 1) with pos_weight (W,) on (N, C, H, W): one weight value spans H rows of W
    {"per-class weight over several rows", 2 * 3 * 4 * 10, Runs(3, 40), Trailing(10), bcewl::kOperandRunConstant,
     bcewl::kOperandRowResident},
    // full-shape weight with a per-class pos_weight (C, 1, 1)
    {"full weight, per-class pos_weight", 2 * 4 * 25, SameShape(200), Runs(4, 25), bcewl::kOperandStream,
     bcewl::kOperandRunConstant},
};

}  // namespace

TEST_CASE(forward_broadcast_modes) {
  ForEachDtype([](auto tag) {
    using T = typename decltype(tag)::type;
    for (const BroadcastCase &broadcast : kBroadcastCases) {
      for (uint32_t cores : {1u, 8u, 48u}) {
        auto c = MakeForwardCase<T>(broadcast.n, cores, broadcast.weight, broadcast.posWeight, broadcast.n + cores);
        const auto plan = bcewl::PlanForward(c.request);
        ASSERT_MSG(plan.data.weight.mode == broadcast.weightMode,
                   broadcast.name << ": weight mode " << plan.data.weight.mode);
        ASSERT_MSG(plan.data.posWeight.mode == broadcast.posWeightMode,
                   broadcast.name << ": pos_weight mode " << plan.data.posWeight.mode);
        CheckForward(c);
      }
    }
  });
}

TEST_CASE(forward_with_a_smaller_ub) {
  constexpr uint32_t kSmallUb = 48 * 1024;
  ForEachDtype([](auto tag) {
    using T = typename decltype(tag)::type;
    auto full = MakeForwardCase<T>(30011, 4, SameShape(30011), SameShape(30011), 3);
    CheckForward(full, kSmallUb);
    ASSERT_TRUE(AscendC::sim::LastLaunchStats().peakUbBytes <= kSmallUb);
    auto rows = MakeForwardCase<T>(7 * 3001, 2, Trailing(7), Runs(3001, 7), 4);
    CheckForward(rows, kSmallUb);
  });
}

TEST_CASE(forward_limits_at_infinite_logits_and_nan) {
  const float inf = INFINITY;
  const float nan = NAN;
  struct Special {
    float x, y, w, p;
    double expected;
  };
  // docs/contract.md §9 Infinities and NaN: the limits where they exist, NaN where they do not, NaN propagating.
  const Special specials[] = {
      {inf, 1.0f, 1.0f, 1.0f, 0.0},         {-inf, 0.0f, 1.0f, 1.0f, 0.0},
      {inf, 0.0f, 1.0f, 1.0f, INFINITY},    {-inf, 1.0f, 1.0f, 1.0f, INFINITY},
      {inf, 0.5f, 1.0f, 2.0f, INFINITY},    {-inf, 0.5f, 1.0f, 2.0f, INFINITY},
      {inf, 0.0f, 0.0f, 1.0f, 0.0},         {-inf, 1.0f, 1.0f, 0.0f, 0.0},
      {-inf, 1.0f, 2.0f, -1.0f, -INFINITY}, {inf, 2.0f, 1.0f, 1.0f, -INFINITY},
      {inf, 1.0f, nan, 1.0f, NAN},          {-inf, 0.0f, 1.0f, nan, NAN},
      {inf, nan, 1.0f, 1.0f, NAN},          {nan, 0.3f, 1.0f, 1.0f, NAN},
      {0.5f, nan, 1.0f, 1.0f, NAN},         {0.5f, 0.5f, nan, 1.0f, NAN},
      {0.5f, 0.5f, 1.0f, nan, NAN},         {100.0f, 1.0f, 2.0f, 3.0f, 0.0},
      {-100.0f, 0.0f, 2.0f, 3.0f, 0.0},     {0.0f, 0.0f, 1.0f, 1.0f, std::log(2.0)},
  };
  const uint64_t n = sizeof(specials) / sizeof(specials[0]);
  auto c = MakeForwardCase<float>(n, 1, SameShape(n), SameShape(n), 5);
  for (uint64_t i = 0; i < n; ++i) {
    c.in.x[i] = specials[i].x;
    c.in.y[i] = specials[i].y;
    c.in.w[i] = specials[i].w;
    c.in.p[i] = specials[i].p;
  }
  const std::vector<float> loss = LaunchForward(c);
  for (uint64_t i = 0; i < n; ++i) {
    const double expected = specials[i].expected;
    const bool ok = std::isnan(expected)
                        ? std::isnan(loss[i])
                        : (std::isinf(expected) ? loss[i] == expected : std::fabs(loss[i] - expected) < 1e-6);
    ASSERT_MSG(ok, "special " << i << ": got " << loss[i] << ", expected " << expected);
  }
}

TEST_CASE(forward_special_values_match_the_reference_in_every_variant_and_dtype) {
  ForEachDtype([](auto tag) {
    using T = typename decltype(tag)::type;
    const uint64_t n = 3 * kSpecialCombinations + 7;
    for (const Variant &variant : kVariants) {
      auto c = MakeForwardCase<T>(n, 2, variant.weight ? SameShape(n) : Absent(),
                                  variant.posWeight ? SameShape(n) : Absent(), 5);
      UseSpecialValues(&c.in);
      CheckForward(c);
    }
  });
}

TEST_CASE(forward_unknown_tiling_key_writes_nothing) {
  auto c = MakeForwardCase<float>(64, 1, Absent(), Absent(), 6);
  auto plan = bcewl::PlanForward(c.request);
  std::vector<uint8_t> tiling = TilingBytes(plan.data);
  for (uint32_t key : {3u * bcewl::kTilingKeyDtypeStride, 2u, 12u}) {
    AscendC::SimSetTilingKey(key);
    std::vector<float> loss(64, Sentinel<float>());
    AscendC::SimLaunch(&ms_bcewl_sigmoid_cross_entropy_with_logits, plan.blockDim, Gm(c.in.x), Gm(c.in.y),
                       static_cast<GM_ADDR>(nullptr), static_cast<GM_ADDR>(nullptr), Gm(loss),
                       static_cast<GM_ADDR>(nullptr), Gm(tiling));
    for (float value : loss) ASSERT_MSG(value == Sentinel<float>(), "key " << key << " wrote output");
  }
}

// The variant is the launch's tiling key alone, as on the NPU, where each key is its own binary: with the key of
// the unweighted variant, a weight in GM is not read.
TEST_CASE(forward_tiling_key_alone_selects_the_variant) {
  const uint64_t n = 300;
  auto weighted = MakeForwardCase<float>(n, 1, SameShape(n), Absent(), 7);
  const auto plan = bcewl::PlanForward(weighted.request);
  std::vector<uint8_t> tiling = TilingBytes(plan.data);
  std::vector<float> loss(n, Sentinel<float>());
  AscendC::SimSetTilingKey(plan.tilingKey - bcewl::kTilingKeyWeightFlag);
  AscendC::SimLaunch(&ms_bcewl_sigmoid_cross_entropy_with_logits, plan.blockDim, Gm(weighted.in.x), Gm(weighted.in.y),
                     Gm(weighted.in.w), static_cast<GM_ADDR>(nullptr), Gm(loss), static_cast<GM_ADDR>(nullptr),
                     Gm(tiling));
  auto plain = weighted;
  plain.request.weight = Absent();
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_MSG(Matches(loss[i], ExpectedLoss(plain, i), RoundingOf<float>()), "loss[" << i << "] = " << loss[i]);
  }
}

TEST_CASE(forward_launch_with_more_blocks_than_planned) {
  auto c = MakeForwardCase<half>(5000, 3, Trailing(50), Absent(), 9);
  const auto plan = bcewl::PlanForward(c.request);
  std::vector<uint8_t> tiling = TilingBytes(plan.data);
  std::vector<float> loss(5000, Sentinel<float>());
  AscendC::SimSetTilingKey(plan.tilingKey);
  AscendC::SimLaunch(&ms_bcewl_sigmoid_cross_entropy_with_logits, plan.blockDim + 5, Gm(c.in.x), Gm(c.in.y), Gm(c.in.w),
                     static_cast<GM_ADDR>(nullptr), Gm(loss), static_cast<GM_ADDR>(nullptr), Gm(tiling));
  for (uint64_t i = 0; i < loss.size(); ++i) {
    ASSERT_MSG(Matches(loss[i], ExpectedLoss(c, i), RoundingOf<float>()), "loss[" << i << "] = " << loss[i]);
  }
}

}  // namespace test
