// The simulation must reject what a real NPU would get wrong silently (or hang on), and model what it accepts.
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.h"

namespace test {
namespace {

using namespace AscendC;

// Copies `count` floats GM -> UB -> GM through a queue, the way the kernels do.
void RoundTripKernel(GM_ADDR src, GM_ADDR dst, uint32_t count, uint64_t gmSize) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 2> queue;
  pipe.InitBuffer(queue, 2, 1024);
  GlobalTensor<float> in;
  GlobalTensor<float> out;
  in.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(src), gmSize);
  out.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(dst), gmSize);
  LocalTensor<float> local = queue.AllocTensor<float>();
  DataCopy(local, in, count);
  queue.EnQue(local);
  local = queue.DeQue<float>();
  DataCopy(out, local, count);
  queue.FreeTensor(local);
}

struct Buffers {
  std::vector<float> src = std::vector<float>(256, 1.5f);
  std::vector<float> dst = std::vector<float>(256, 0.0f);
};

void LaunchRoundTrip(Buffers &b, uint32_t count, uint64_t gmSize) {
  SimLaunch(&RoundTripKernel, 1, Gm(b.src), Gm(b.dst), count, gmSize);
}

}  // namespace

TEST_CASE(sim_accepts_a_whole_block_data_copy) {
  Buffers b;
  LaunchRoundTrip(b, 64, 256);
  for (int i = 0; i < 64; ++i) ASSERT_TRUE(b.dst[i] == 1.5f);
  ASSERT_TRUE(b.dst[64] == 0.0f);
  ASSERT_TRUE(sim::LastLaunchStats().dataCopyCalls == 2);
}

TEST_CASE(sim_rejects_misaligned_data_copy) {
  Buffers b;
  ExpectViolation([&] { LaunchRoundTrip(b, 7, 256); }, "28 bytes is not a multiple of 32 bytes");
  ASSERT_TRUE(b.dst[0] == 0.0f);
}

TEST_CASE(sim_rejects_out_of_bounds_global_tensor_access) {
  Buffers b;
  ExpectViolation([&] { LaunchRoundTrip(b, 64, 56); }, "outside a GlobalTensor of 56");
  auto readPastEnd = [&](bool viaGetValue) {
    SimLaunch(
        +[](GM_ADDR src, bool getValue) {
          GlobalTensor<float> gm;
          gm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(src), 16);
          (void)(getValue ? gm.GetValue(16) : gm[17].GetValue(0));
        },
        1, Gm(b.src), viaGetValue);
  };
  ExpectViolation([&] { readPastEnd(true); }, "GetValue: elements [16, 17) outside a GlobalTensor of 16");
  ExpectViolation([&] { readPastEnd(false); }, "GlobalTensor offset: elements [17, 17)");
}

namespace {

// A kernel without arguments must break a rule that the message fragment names.
void ExpectKernelViolation(void (*kernel)(), const std::string &fragment) {
  ExpectViolation([kernel] { SimLaunch(kernel, 1); }, fragment);
}

// One double-buffered VECIN queue of 64 floats per buffer.
struct QueueSetup {
  TPipe pipe;
  TQue<QuePosition::VECIN, 2> queue;
  QueueSetup() { pipe.InitBuffer(queue, 2, 256); }
  LocalTensor<float> Dequeued() {
    queue.EnQue(queue.AllocTensor<float>());
    return queue.DeQue<float>();
  }
};

// One VECCALC buffer of 64 floats.
struct CalcSetup {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> buf;
  CalcSetup() { pipe.InitBuffer(buf, 256); }
  LocalTensor<float> Floats() { return buf.Get<float>(); }
};

}  // namespace

TEST_CASE(sim_rejects_ub_overflow) {
  ExpectKernelViolation(
      +[] {
        QueueSetup setup;
        TQue<QuePosition::VECOUT, 2> big;
        setup.pipe.InitBuffer(big, 2, 96 * 1024);
      },
      "UB overflow, 98816 + 98304 bytes > 196608");
}

TEST_CASE(sim_rejects_misaligned_ub_buffer) {
  ExpectKernelViolation(
      +[] {
        TPipe pipe;
        TBuf<QuePosition::VECCALC> first;
        TBuf<QuePosition::VECCALC> second;
        pipe.InitBuffer(first, 100);
        pipe.InitBuffer(second, 64);
      },
      "UB address 100 is not 32-byte aligned");
}

TEST_CASE(sim_rejects_missing_free_tensor) {
  ExpectKernelViolation(+[] { (void)QueueSetup().Dequeued(); }, "missing FreeTensor");
  ExpectKernelViolation(
      +[] {
        QueueSetup setup;
        for (int i = 0; i < 3; ++i) (void)setup.queue.AllocTensor<float>();
      },
      "all 2 buffers of the queue are in use");
}

TEST_CASE(sim_rejects_broken_queue_protocol) {
  ExpectKernelViolation(+[] { (void)QueueSetup().queue.DeQue<float>(); }, "empty queue");
  ExpectKernelViolation(
      +[] {
        QueueSetup setup;
        LocalTensor<float> t = setup.queue.AllocTensor<float>();
        setup.queue.EnQue(t);
        Muls(t, t, 2.0f, 8);
      },
      "while it is enqueued");
  ExpectKernelViolation(
      +[] {
        QueueSetup setup;
        LocalTensor<float> t = setup.Dequeued();
        setup.queue.FreeTensor(t);
        Muls(t, t, 2.0f, 8);
      },
      "after FreeTensor");
  ExpectKernelViolation(
      +[] {
        QueueSetup setup;
        LocalTensor<float> t = setup.queue.AllocTensor<float>();
        setup.queue.FreeTensor(t);
      },
      "not dequeued");
}

TEST_CASE(sim_rejects_bad_vector_operands) {
  ExpectKernelViolation(
      +[] {
        LocalTensor<float> t = CalcSetup().Floats();
        Muls(t, t, 2.0f, 65);
      },
      "65 elements exceed the LocalTensor's 64");
  ExpectKernelViolation(
      +[] {
        LocalTensor<float> t = CalcSetup().Floats();
        Muls(t[3], t[3], 2.0f, 8);
      },
      "not 32-byte aligned");
  ExpectKernelViolation(
      +[] {
        LocalTensor<float> t = CalcSetup().Floats();
        Muls(t[8], t, 2.0f, 16);
      },
      "partly overlaps");
  ExpectKernelViolation(
      +[] {
        CalcSetup setup;
        Cast(setup.Floats(), setup.buf.Get<half>(), RoundMode::CAST_NONE, 8);  // widening in place
      },
      "Cast: destination partly overlaps");
  ExpectKernelViolation(+[] { (void)CalcSetup().Floats()[65]; }, "LocalTensor offset 65 beyond its 64");
}

TEST_CASE(sim_data_copy_pad_places_blocks_on_32_byte_boundaries) {
  std::vector<float> src(15);
  for (int i = 0; i < 15; ++i) src[i] = static_cast<float>(i);
  std::vector<float> dst(15, -1.0f);
  std::vector<float> ub(48, 0.0f);
  SimLaunch(
      +[](GM_ADDR in, GM_ADDR out, GM_ADDR seen) {
        TPipe pipe;
        TQue<QuePosition::VECIN, 2> queue;
        pipe.InitBuffer(queue, 1, 48 * sizeof(float));
        GlobalTensor<float> src;
        GlobalTensor<float> dst;
        GlobalTensor<float> ubCopy;
        src.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(in), 15);
        dst.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(out), 15);
        ubCopy.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(seen), 48);
        LocalTensor<float> t = queue.AllocTensor<float>();
        Duplicate(t, 0.0f, 48);
        // 3 rows of 5 floats; each row padded to 8 floats, plus a gap of one 32-byte block: rows 16 floats apart.
        DataCopyPad(t, src, DataCopyExtParams{3, 5 * sizeof(float), 0, 1, 0}, DataCopyPadExtParams<float>{});
        queue.EnQue(t);
        t = queue.DeQue<float>();
        DataCopy(ubCopy, t, 48);
        DataCopyPad(dst, t, DataCopyExtParams{3, 5 * sizeof(float), 1, 0, 0});
        queue.FreeTensor(t);
      },
      1, Gm(src), Gm(dst), Gm(ub));
  for (int i = 0; i < 15; ++i) ASSERT_TRUE(dst[i] == static_cast<float>(i));
  for (int row = 0; row < 3; ++row) {
    for (int col = 0; col < 16; ++col) {
      // lanes 5..7 complete the row's 32 bytes with its first element (the NPU's dummy data); the gap stays
      const float expected = col < 5 ? static_cast<float>(row * 5 + col) : col < 8 ? static_cast<float>(row * 5) : 0.0f;
      ASSERT_MSG(ub[row * 16 + col] == expected, "UB lane " << row * 16 + col);
    }
  }
  ASSERT_TRUE(sim::LastLaunchStats().dataCopyPadCalls == 2);
}

TEST_CASE(sim_rejects_bad_data_copy_pad_parameters) {
  std::vector<float> src(8192, 0.0f);
  auto launch = [&](uint16_t blockCount, uint32_t blockLen) {
    SimLaunch(
        +[](GM_ADDR in, uint16_t count, uint32_t len) {
          TPipe pipe;
          TBuf<QuePosition::VECCALC> buf;
          pipe.InitBuffer(buf, 160 * 1024);
          GlobalTensor<float> gm;
          gm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(in), 8192);
          DataCopyPad(buf.Get<float>(), gm, DataCopyExtParams{count, len, 0, 0, 0}, DataCopyPadExtParams<float>{});
        },
        1, Gm(src), blockCount, blockLen);
  };
  ExpectViolation([&] { launch(0, 4); }, "blockCount 0");
  ExpectViolation([&] { launch(4096, 4); }, "blockCount 4096");
  ExpectViolation([&] { launch(1, 6); }, "multiples of the element size");
  ExpectViolation([&] { launch(2, 40000); }, "outside a GlobalTensor");
}

TEST_CASE(sim_rejects_the_forward_kernel_on_a_smaller_ub_than_planned) {
  auto c = MakeForwardCase<half>(50000, 2, SameShape(50000), SameShape(50000), 31);
  const auto plan = bcewl::PlanForward(c.request);
  std::vector<uint8_t> tiling = TilingBytes(plan.data);
  std::vector<float> loss(50000);
  SimSetTilingKey(plan.tilingKey);
  SimLaunchConfig config;
  config.blockDim = plan.blockDim;
  config.ubBytes = 64 * 1024;
  ExpectViolation(
      [&] {
        SimLaunch(config, &ms_bcewl_sigmoid_cross_entropy_with_logits, Gm(c.in.x), Gm(c.in.y), Gm(c.in.w), Gm(c.in.p),
                  Gm(loss), static_cast<GM_ADDR>(nullptr), Gm(tiling));
      },
      "UB overflow");
}

TEST_CASE(sim_runs_blocks_in_order_with_their_index) {
  std::vector<int64_t> seen(2 * 20, -1);
  SimLaunch(
      +[](GM_ADDR out) {
        auto *values = reinterpret_cast<int64_t *>(out);
        values[2 * GetBlockIdx()] = GetBlockIdx();
        values[2 * GetBlockIdx() + 1] = GetBlockNum();
      },
      20, reinterpret_cast<GM_ADDR>(seen.data()));
  for (int64_t b = 0; b < 20; ++b) {
    ASSERT_TRUE(seen[2 * b] == b);
    ASSERT_TRUE(seen[2 * b + 1] == 20);
  }
  ExpectViolation([] { (void)GetBlockIdx(); }, "outside SimLaunch");
  ExpectViolation([] { SimLaunch(+[] {}, 0); }, "blockDim 0");
}

namespace {

// Round-to-nearest-even of `value` to `mantissaBits` explicit bits with the given minimum normal exponent,
// computed in double without the simulation's bit manipulation.
double RoundToFormat(double value, int mantissaBits, int minExponent, double maxFinite) {
  if (std::isnan(value) || std::isinf(value)) return value;
  const int exponent = std::max(std::ilogb(value == 0.0 ? 1.0 : value), minExponent);
  const double quantum = std::ldexp(1.0, exponent - mantissaBits);
  const double rounded = std::nearbyint(value / quantum) * quantum;
  const double overflow = maxFinite + std::ldexp(1.0, std::ilogb(maxFinite) - mantissaBits - 1);
  return std::fabs(rounded) >= overflow ? std::copysign(INFINITY, value) : rounded;
}

}  // namespace

TEST_CASE(sim_float16_and_bfloat16_conversions_are_exact) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const double independent = DecodeHalfBits(static_cast<uint16_t>(bits));
    const double simulated = sim::HalfBitsToFloat(static_cast<uint16_t>(bits));
    ASSERT_TRUE(std::isnan(independent) ? std::isnan(simulated) : simulated == independent);
    const double bf16 = DecodeBFloat16Bits(static_cast<uint16_t>(bits));
    const double bf16Simulated = sim::BFloat16BitsToFloat(static_cast<uint16_t>(bits));
    ASSERT_TRUE(std::isnan(bf16) ? std::isnan(bf16Simulated) : bf16Simulated == bf16);
  }
  ASSERT_TRUE(std::fegetround() == FE_TONEAREST);
  std::mt19937 rng(5);
  std::vector<float> values = {0.0f,          -0.0f,         65504.0f,      65519.99f, 65520.0f, 1e-8f,    2.98e-8f,
                               2.9802322e-8f, 6.1035156e-5f, 3.3895314e38f, -1e30f,    INFINITY, -INFINITY};
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    if (!std::isnan(f)) values.push_back(f);
    values.push_back(std::ldexp(static_cast<float>(rng() % 100000) / 100000.0f, static_cast<int>(rng() % 50) - 30));
  }
  for (float f : values) {
    const double halfExpected = RoundToFormat(f, 10, -14, 65504.0);
    ASSERT_MSG(DecodeHalfBits(sim::FloatToHalfBits(f)) == halfExpected, "half of " << f);
    const double bf16Expected = RoundToFormat(f, 7, -126, 3.3895313892515355e38);
    ASSERT_MSG(DecodeBFloat16Bits(sim::FloatToBFloat16Bits(f)) == bf16Expected, "bfloat16 of " << f);
  }
  ASSERT_TRUE(std::isnan(DecodeHalfBits(sim::FloatToHalfBits(NAN))));
  ASSERT_TRUE(std::isnan(DecodeBFloat16Bits(sim::FloatToBFloat16Bits(NAN))));
}

TEST_CASE(sim_cast_rejects_round_modes_it_does_not_model) {
  ExpectKernelViolation(
      +[] {
        CalcSetup setup;
        Cast(setup.buf.Get<half>(), setup.Floats()[32], RoundMode::CAST_FLOOR, 16);
      },
      "only CAST_NONE");
}

namespace {

constexpr uint32_t kMaskTestCount = 64;  // one 256-byte repeat of floats
constexpr uint32_t kMaskTestTiles = 5;
constexpr uint32_t kMaskSetupBytes = kMaskTestTiles * kMaskTestCount * sizeof(float) + 32;

// Five float tiles of kMaskTestCount elements and a 32-byte (256-bit) mask.
struct MaskSetup {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> floats;
  TBuf<QuePosition::VECCALC> mask;
  MaskSetup() {
    pipe.InitBuffer(floats, kMaskTestTiles * kMaskTestCount * sizeof(float));
    pipe.InitBuffer(mask, 32);
  }
  LocalTensor<float> Tile(uint32_t index) { return floats.Get<float>()[index * kMaskTestCount]; }
  LocalTensor<uint8_t> Mask() { return mask.Get<uint8_t>(); }
};

const float kCompared[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, -1.0f};
constexpr uint32_t kComparedCount = sizeof(kCompared) / sizeof(kCompared[0]);

bool IeeeCompare(float a, float b, CMPMODE mode) {
  switch (mode) {
    case CMPMODE::LT:
      return a < b;
    case CMPMODE::GT:
      return a > b;
    case CMPMODE::EQ:
      return a == b;
    case CMPMODE::LE:
      return a <= b;
    case CMPMODE::GE:
      return a >= b;
    case CMPMODE::NE:
      return a != b;
  }
  return false;
}

// src[i] = kCompared[i % 7]; out gets the mask bytes, then Select(mask, src, 7) and Select(mask, src, 5 everywhere).
void CompareAndSelectKernel(GM_ADDR out, CMPMODE mode) {
  MaskSetup setup;
  const LocalTensor<float> src = setup.Tile(0);
  for (uint32_t i = 0; i < kMaskTestCount; ++i) {
    std::memcpy(src.SimBytes() + i * sizeof(float), &kCompared[i % kComparedCount], sizeof(float));
  }
  CompareScalar(setup.Mask(), src, 0.0f, mode, kMaskTestCount);
  Select(setup.Tile(1), setup.Mask(), src, 7.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, kMaskTestCount);
  Duplicate(setup.Tile(3), 5.0f, kMaskTestCount);
  Select(setup.Tile(2), setup.Mask(), src, setup.Tile(3), SELMODE::VSEL_TENSOR_TENSOR_MODE, kMaskTestCount);
  std::memcpy(out, setup.Mask().SimBytes(), kMaskTestCount / 8);
  std::memcpy(out + 8, setup.Tile(1).SimBytes(), 2 * kMaskTestCount * sizeof(float));
}

}  // namespace

TEST_CASE(sim_compare_scalar_and_select_follow_ieee_and_the_little_endian_bit_order) {
  for (CMPMODE mode : {CMPMODE::LT, CMPMODE::GT, CMPMODE::EQ, CMPMODE::LE, CMPMODE::GE, CMPMODE::NE}) {
    std::vector<uint8_t> out(8 + 2 * kMaskTestCount * sizeof(float));
    SimLaunch(&CompareAndSelectKernel, 1, out.data(), mode);
    for (uint32_t i = 0; i < kMaskTestCount; ++i) {
      const float value = kCompared[i % kComparedCount];
      const bool bit = IeeeCompare(value, 0.0f, mode);
      float scalarSelected;
      float tensorSelected;
      std::memcpy(&scalarSelected, out.data() + 8 + i * sizeof(float), sizeof(float));
      std::memcpy(&tensorSelected, out.data() + 8 + (kMaskTestCount + i) * sizeof(float), sizeof(float));
      ASSERT_MSG(((out[i / 8] >> (i % 8)) & 1u) == (bit ? 1u : 0u), "mode " << static_cast<int>(mode) << " lane " << i);
      const float expectedScalar = bit ? value : 7.0f;
      const float expectedTensor = bit ? value : 5.0f;
      ASSERT_TRUE(std::memcmp(&scalarSelected, &expectedScalar, sizeof(float)) == 0);
      ASSERT_TRUE(std::memcmp(&tensorSelected, &expectedTensor, sizeof(float)) == 0);
    }
  }
}

TEST_CASE(sim_rejects_bad_compare_scalar_and_select_operands) {
  ExpectKernelViolation(
      +[] {
        MaskSetup setup;
        CompareScalar(setup.Mask(), setup.Tile(0), 0.0f, CMPMODE::EQ, 32);
      },
      "32 float elements are not whole 256-byte repeats");
  ExpectKernelViolation(
      +[] {
        MaskSetup setup;
        CompareScalar(setup.Mask(), setup.Tile(0), 0.0f, CMPMODE::EQ, kMaskTestTiles * kMaskTestCount);  // 320 bits
      },
      "40 elements exceed the LocalTensor's 32");
  ExpectKernelViolation(
      +[] {
        MaskSetup setup;
        Select(setup.Tile(0), setup.Mask(), setup.Tile(0), 1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, kMaskTestCount);
      },
      "Select: destination overlaps a source");
  ExpectKernelViolation(
      +[] {
        MaskSetup setup;
        Select(setup.Tile(0), setup.Mask(), setup.Tile(1), setup.Tile(2), SELMODE::VSEL_CMPMASK_SPR, kMaskTestCount);
      },
      "only VSEL_TENSOR_SCALAR_MODE");
  ExpectKernelViolation(
      +[] {
        MaskSetup setup;
        TBuf<QuePosition::VECCALC> rest;
        setup.pipe.InitBuffer(rest, sim::kAscend910bUbBytes - kMaskSetupBytes - 4096);
        Select(setup.Tile(0), setup.Mask(), setup.Tile(1), 1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, kMaskTestCount);
      },
      "4096 UB bytes left unallocated, its tensor modes need 8 KiB");
}

}  // namespace test
