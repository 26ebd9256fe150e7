// The forward kernel computes a tile without the +-inf limits first and keeps that result only where every lane
// is finite. These tests check that the finite path is taken, that it equals the limit path bit for bit, and that
// tiles with infinities, NaN or an overflow still get the limits; the limit path is forced by putting one
// infinite logit into a tile.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <utility>
#include <vector>

#include "kernel_test_support.h"

namespace test {
namespace {

template <typename T>
ForwardCase<T> MakeCase(uint64_t n, uint32_t cores, const Variant &variant, uint64_t seed) {
  return MakeForwardCase<T>(n, cores, variant.weight ? SameShape(n) : Absent(),
                            variant.posWeight ? SameShape(n) : Absent(), seed);
}

// Elements of a full tile. Tiles start at its multiples with same-shape operands, whatever the core count, and
// on one core in every layout.
template <typename T>
uint64_t TileLength(const ForwardCase<T> &c) {
  const bcewl::TileGeometry geometry = bcewl::PlanForward(c.request).data.geometry;
  return geometry.chunksPerRow == 1 ? geometry.rowsPerTile * geometry.rowLength : geometry.chunkLength;
}

// Calls fn(tag, variant, cores) for every dtype (tag as in ForEachDtype), variant and core count.
template <typename Fn>
void ForEachCase(std::initializer_list<uint32_t> coreCounts, Fn fn) {
  ForEachDtype([&](auto tag) {
    for (const Variant &variant : kVariants) {
      for (uint32_t cores : coreCounts) fn(tag, variant, cores);
    }
  });
}

template <typename T>
void SetLane(ForwardCase<T> *c, uint64_t i, float x, float y, float w, float p) {
  c->in.x[i] = FromDouble<T>(x);
  c->in.y[i] = FromDouble<T>(y);
  if (!c->in.w.empty()) c->in.w[i] = FromDouble<T>(w);
  if (!c->in.p.empty()) c->in.p[i] = FromDouble<T>(p);
}

// Finite inputs where the product form and the limits could part: zeros of both signs, zero factors, |x| large
// enough that softplus(-|x|) is 0, negative weights and pos_weights (1 + (p - 1) * y of either sign or 0).
template <typename T>
void UseFiniteEdgeValues(ForwardCase<T> *c) {
  const float xs[] = {0.0f, -0.0f, 20.0f, -20.0f, 9000.0f, -9000.0f, 0.75f};
  const float ys[] = {0.0f, 1.0f, 0.5f, 2.0f, -1.0f};
  const float ws[] = {0.0f, -0.0f, 1.5f, -2.0f};
  const float ps[] = {0.0f, -1.0f, 2.0f, 0.5f, 3.0f};
  for (uint64_t i = 0; i < c->in.x.size(); i += 3) {
    const uint64_t k = i / 3;
    SetLane(c, i, xs[k % 7], ys[k / 7 % 5], ws[k / 35 % 4], ps[k / 140 % 5]);
  }
}

// One infinite logit per tile (at `offset` into it, or its last lane), so that every tile takes the limit path.
// Returns the lanes changed.
template <typename T>
std::vector<uint64_t> MarkEveryTile(ForwardCase<T> *c, uint64_t tile, uint64_t offset) {
  std::vector<uint64_t> marks;
  const uint64_t n = c->in.x.size();
  for (uint64_t start = 0; start < n; start += tile) {
    const uint64_t lane = start + offset < n ? start + offset : n - 1;
    c->in.x[lane] = FromDouble<T>(INFINITY);
    marks.push_back(lane);
  }
  return marks;
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

bool IsMark(const std::vector<uint64_t> &marks, uint64_t i) {
  for (uint64_t mark : marks) {
    if (mark == i) return true;
  }
  return false;
}

template <typename T>
void ExpectReference(const ForwardCase<T> &c, const std::vector<float> &loss, const char *what) {
  for (uint64_t i = 0; i < loss.size(); ++i) {
    const Expected expected = ExpectedLoss(c, i);
    ASSERT_MSG(Matches(loss[i], expected, RoundingOf<float>()),
               what << ", " << DescribeRequest(c.request) << ": loss[" << i << "] = " << loss[i] << ", expected "
                    << expected.value << " (x=" << ToDouble(c.in.x[i]) << ", y=" << ToDouble(c.in.y[i]) << ")");
  }
}

// Launches c, then c with an infinite logit in every tile (all on the limit path), and checks both against the
// reference and every lane but the marks bit for bit against each other. Returns the vector instructions of the
// first launch and of the second.
template <typename T>
std::pair<uint64_t, uint64_t> CompareWithLimitPath(ForwardCase<T> c, const char *what) {
  const std::vector<float> mixed = LaunchForward(c);
  const uint64_t mixedCount = AscendC::sim::LastLaunchStats().vectorInstructions;
  ExpectReference(c, mixed, what);
  const std::vector<uint64_t> marks = MarkEveryTile(&c, TileLength(c), TileLength(c) / 2 + 1);
  const std::vector<float> limits = LaunchForward(c);
  const uint64_t limitsCount = AscendC::sim::LastLaunchStats().vectorInstructions;
  ExpectReference(c, limits, what);
  for (uint64_t i = 0; i < mixed.size(); ++i) {
    if (IsMark(marks, i)) continue;
    ASSERT_MSG(SameBits(mixed[i], limits[i]), what << ", " << DescribeRequest(c.request) << ": loss[" << i
                                                   << "] = " << mixed[i] << " but " << limits[i]
                                                   << " on the limit path (x=" << ToDouble(c.in.x[i])
                                                   << ", y=" << ToDouble(c.in.y[i]) << ")");
  }
  return {mixedCount, limitsCount};
}

}  // namespace

TEST_CASE(forward_finite_tiles_equal_the_limit_path_bit_for_bit) {
  ForEachCase({1u, 4u}, [](auto tag, const Variant &variant, uint32_t cores) {
    using T = typename decltype(tag)::type;
    const uint64_t n = 3 * ForwardTileLength<T>(variant.weight, variant.posWeight) + 77;
    auto plain = MakeCase<T>(n, cores, variant, n + cores);
    auto edges = plain;
    UseFiniteEdgeValues(&edges);
    const auto plainCounts = CompareWithLimitPath(plain, "random finite inputs");
    const auto edgeCounts = CompareWithLimitPath(edges, "finite edge values");
    // The same count means that no tile of the edge values left the finite path.
    ASSERT_MSG(edgeCounts.first == plainCounts.first, DescribeRequest(edges.request)
                                                          << ": " << edgeCounts.first << " vector instructions, "
                                                          << plainCounts.first << " on random inputs");
    ASSERT_TRUE(plainCounts.first < plainCounts.second);
  });
}

TEST_CASE(forward_infinities_in_some_tiles_at_their_edges_and_in_the_tail) {
  ForEachCase({1u, 3u}, [](auto tag, const Variant &variant, uint32_t cores) {
    using T = typename decltype(tag)::type;
    const uint64_t n = 4 * ForwardTileLength<T>(variant.weight, variant.posWeight) + 37;
    auto c = MakeCase<T>(n, cores, variant, n + cores);
    const uint64_t tile = TileLength(c);
    SetLane(&c, tile, INFINITY, 1.0f, 2.0f, 3.0f);            // first lane of tile 1: the limit 0
    SetLane(&c, 3 * tile - 1, -INFINITY, 0.0f, 1.0f, 0.5f);   // last lane of tile 2: the limit 0
    SetLane(&c, 3 * tile - 2, -INFINITY, 1.0f, -1.0f, 0.0f);  // p * y = 0: the limit 0
    SetLane(&c, n - 1, INFINITY, 0.25f, 0.0f, 2.0f);          // last lane of the tail: w = 0 (or +inf)
    SetLane(&c, n - 2, -INFINITY, 0.5f, 1.0f, 2.0f);          // the tail, diverging: +inf
    const auto counts = CompareWithLimitPath(c, "infinities in tiles 1, 2 and the tail");
    // Tile 0 (and tile 3, where the split keeps it) stayed on the finite path.
    ASSERT_TRUE(counts.first < counts.second);
  });
}

TEST_CASE(forward_rows_padded_in_ub_take_the_finite_path) {
  // Rows of 5 or 7 elements lie 32 bytes apart in UB; the lanes between them enter the finite check too.
  struct Layout {
    uint64_t n;
    bcewl::OperandRequest weight, posWeight;
  };
  const Layout layouts[] = {
      {5 * 3001, Trailing(5), Absent()}, {7 * 3001, Trailing(7), Runs(3001, 7)}, {7 * 3001, Absent(), Runs(3001, 7)}};
  ForEachDtype([&](auto tag) {
    using T = typename decltype(tag)::type;
    for (const Layout &layout : layouts) {
      auto c = MakeForwardCase<T>(layout.n, 1, layout.weight, layout.posWeight, layout.n);
      const bcewl::TileGeometry geometry = bcewl::PlanForward(c.request).data.geometry;
      ASSERT_TRUE(geometry.rowStride > geometry.rowLength);
      const auto counts = CompareWithLimitPath(c, "rows padded in UB");
      ASSERT_MSG(counts.first < counts.second, DescribeRequest(c.request)
                                                   << ": " << counts.first << " vector instructions, " << counts.second
                                                   << " with infinities");
    }
  });
}

TEST_CASE(forward_nan_and_overflow_tiles_take_the_limit_path) {
  ForEachCase({1u}, [](auto tag, const Variant &variant, uint32_t cores) {
    using T = typename decltype(tag)::type;
    const uint64_t tile = ForwardTileLength<T>(variant.weight, variant.posWeight);
    auto c = MakeCase<T>(3 * tile, cores, variant, 17);
    SetLane(&c, 5, NAN, 0.0f, 1.0f, 1.0f);         // a NaN logit, no infinity in tile 0
    SetLane(&c, tile + 9, 0.5f, NAN, 0.0f, 0.0f);  // a NaN target with zero factors in tile 1
    CompareWithLimitPath(c, "NaN in tiles 0 and 1");
  });
}

TEST_CASE(forward_loss_overflowing_to_infinity_times_zero_weight_is_zero) {
  // Finite x, y whose loss exceeds float32: the product form gives 0 * inf = NaN, the limits give 0.
  for (const Variant &variant : {kVariants[1], kVariants[3]}) {
    const uint64_t n = 300;
    auto c = MakeCase<float>(n, 1, variant, 23);
    SetLane(&c, 7, 3e38f, -3e38f, 0.0f, 1.0f);
    SetLane(&c, 8, -3e38f, 3e38f, 0.0f, 1.0f);
    const std::vector<float> loss = LaunchForward(c);
    ASSERT_MSG(SameBits(loss[7], 0.0f) && SameBits(loss[8], 0.0f), "got " << loss[7] << ", " << loss[8]);
    ExpectReference(c, loss, "overflow with zero weight");
  }
}

TEST_CASE(forward_all_finite_launch_executes_fewer_vector_instructions) {
  ForEachDtype([](auto tag) {
    using T = typename decltype(tag)::type;
    for (const Variant &variant : kVariants) {
      for (uint32_t cores : {1u, 8u}) {
        auto c = MakeCase<T>(20011, cores, variant, 29);
        LaunchForward(c);
        const uint64_t finite = AscendC::sim::LastLaunchStats().vectorInstructions;
        c.in.x[12345] = FromDouble<T>(-INFINITY);
        LaunchForward(c);
        const uint64_t withInfinity = AscendC::sim::LastLaunchStats().vectorInstructions;
        ASSERT_MSG(finite < withInfinity, DescribeRequest(c.request) << ": " << finite << " vector instructions, "
                                                                     << withInfinity << " with one infinity");
      }
    }
  });
}

namespace {

using namespace AscendC;

// 1024 floats of VECCALC, then 64 for a reduction's result and scratch.
struct ReduceSetup {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> src;
  TBuf<QuePosition::VECCALC> work;
  ReduceSetup() {
    pipe.InitBuffer(src, 4096);
    pipe.InitBuffer(work, 256);
  }
  LocalTensor<float> Src() { return src.Get<float>(); }
  LocalTensor<float> Dst() { return work.Get<float>(); }
  LocalTensor<float> Tmp() { return work.Get<float>()[8]; }
};

// Sums values[0, count) with ReduceSum, reading the result as the kernels do.
float SimReduceSum(const std::vector<float> &values, int32_t count) {
  float result = -1.0f;
  std::vector<float> data = values;
  data.resize(64, 0.0f);
  SimLaunch(
      +[](float *in, int32_t n, float *out) {
        ReduceSetup setup;
        std::memcpy(setup.Src().SimBytes(), in, 64 * sizeof(float));
        Duplicate(setup.Dst(), -1.0f, 8);
        ReduceSum(setup.Dst(), setup.Src(), setup.Tmp(), n);
        SetFlag<HardEvent::V_S>(0);
        WaitFlag<HardEvent::V_S>(0);
        *out = setup.Dst().GetValue(0);
      },
      1, data.data(), count, &result);
  return result;
}

}  // namespace

TEST_CASE(sim_reduce_sum_adds_the_first_count_elements) {
  std::vector<float> values(64);
  for (int i = 0; i < 64; ++i) values[i] = static_cast<float>(i + 1);
  ASSERT_TRUE(SimReduceSum(values, 64) == 2080.0f);
  ASSERT_TRUE(SimReduceSum(values, 10) == 55.0f);
  ASSERT_TRUE(SimReduceSum(values, 0) == -1.0f);  // count 0 writes nothing
  values[3] = INFINITY;
  ASSERT_TRUE(SimReduceSum(values, 64) == INFINITY);
  values[9] = -INFINITY;
  ASSERT_TRUE(std::isnan(SimReduceSum(values, 64)));
  values[3] = NAN;
  values[9] = 1.0f;
  ASSERT_TRUE(std::isnan(SimReduceSum(values, 64)));
  ASSERT_TRUE(SimReduceSum(std::vector<float>(64, 3e38f), 64) == INFINITY);  // overflow: not finite
}

TEST_CASE(sim_rejects_bad_reduce_sum_operands) {
  ExpectViolation(
      [] {
        SimLaunch(
            +[] {
              ReduceSetup setup;
              ReduceSum(setup.Src(), setup.Src(), setup.Tmp(), 64);
            },
            1);
      },
      "ReduceSum: destination overlaps a source");
  ExpectViolation(
      [] {
        SimLaunch(
            +[] {
              ReduceSetup setup;
              ReduceSum(setup.Dst(), setup.Src(), setup.Dst()[56], 512);  // 8 repeats: 8 floats of scratch
              ReduceSum(setup.Dst(), setup.Src(), setup.Dst()[56], 520);  // 9 repeats: 16 floats
            },
            1);
      },
      "ReduceSum: 16 elements exceed the LocalTensor's 8");
}

TEST_CASE(sim_scalar_read_of_a_vector_result_needs_v_to_s_sync) {
  ExpectViolation(
      [] {
        SimLaunch(
            +[] {
              ReduceSetup setup;
              Duplicate(setup.Dst(), 1.0f, 8);
              (void)setup.Dst().GetValue(0);
            },
            1);
      },
      "scalar read of UB after a vector instruction without SetFlag/WaitFlag<V_S>");
  ExpectViolation(
      [] {
        SimLaunch(
            +[] {
              ReduceSetup setup;
              Duplicate(setup.Dst(), 1.0f, 8);
              SetFlag<HardEvent::V_S>(1);
              Duplicate(setup.Dst(), 2.0f, 8);  // issued after the SetFlag: not covered by it
              WaitFlag<HardEvent::V_S>(1);
              (void)setup.Dst().GetValue(0);
            },
            1);
      },
      "without SetFlag/WaitFlag<V_S>");
  ExpectViolation([] { SimLaunch(+[] { WaitFlag<HardEvent::V_S>(2); }, 1); }, "WaitFlag on event id 2 without its");
  ExpectViolation([] { SimLaunch(+[] { SetFlag<HardEvent::V_S>(3); }, 1); }, "SetFlag whose WaitFlag never ran");
  float value = 0.0f;
  SimLaunch(
      +[](float *out) {
        ReduceSetup setup;
        Duplicate(setup.Dst(), 2.5f, 8);
        SetFlag<HardEvent::V_S>(4);
        WaitFlag<HardEvent::V_S>(4);
        *out = setup.Dst().GetValue(7);
      },
      1, &value);
  ASSERT_TRUE(value == 2.5f);
}

TEST_CASE(sim_counts_vector_instructions_elements_and_copied_bytes) {
  std::vector<float> src(64, 1.0f);
  std::vector<float> dst(64, 0.0f);
  SimLaunch(
      +[](GM_ADDR in, GM_ADDR out) {
        TPipe pipe;
        TQue<QuePosition::VECIN, 1> queue;
        TBuf<QuePosition::VECCALC> calc;
        pipe.InitBuffer(queue, 1, 256);
        pipe.InitBuffer(calc, 256);
        GlobalTensor<float> inGm;
        GlobalTensor<float> outGm;
        inGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(in), 64);
        outGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(out), 64);
        LocalTensor<float> local = queue.AllocTensor<float>();
        DataCopy(local, inGm, 64);
        queue.EnQue(local);
        local = queue.DeQue<float>();
        const LocalTensor<float> t = calc.Get<float>();
        Muls(t, local, 2.0f, 64);
        Add(t, t, local, 40);
        ReduceSum(t[32], local, t[40], 24);
        DataCopyPad(outGm, t, DataCopyExtParams{1, 15 * sizeof(float), 0, 0, 0});
        queue.FreeTensor(local);
      },
      1, Gm(src), Gm(dst));
  const sim::LaunchStats &stats = sim::LastLaunchStats();
  ASSERT_TRUE(stats.vectorInstructions == 3);
  ASSERT_TRUE(stats.vectorElements == 64 + 40 + 24);
  ASSERT_TRUE(stats.dataCopyBytesIn == 256);
  ASSERT_TRUE(stats.dataCopyBytesOut == 60);
  ASSERT_TRUE(dst[14] == 3.0f && dst[15] == 0.0f);
}

}  // namespace test
