// Runs the two kernels in the simulation on generated inputs and compares every output element with the float64
// reference.
#ifndef MS_BCEWL_ASCENDC_TESTS_KERNEL_TEST_SUPPORT_H_
#define MS_BCEWL_ASCENDC_TESTS_KERNEL_TEST_SUPPORT_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bcewl_tiling.h"
#include "kernel_operator.h"
#include "reference.h"
#include "test_harness.h"

extern "C" void ms_bcewl_sigmoid_cross_entropy_with_logits(GM_ADDR predict, GM_ADDR target, GM_ADDR weight,
                                                           GM_ADDR pos_weight, GM_ADDR loss, GM_ADDR workspace,
                                                           GM_ADDR tiling);
extern "C" void ms_bcewl_sigmoid_cross_entropy_with_logits_grad(GM_ADDR predict, GM_ADDR target, GM_ADDR dout,
                                                                GM_ADDR scale, GM_ADDR weight, GM_ADDR pos_weight,
                                                                GM_ADDR gradient, GM_ADDR workspace, GM_ADDR tiling);

namespace test {

// fn() must throw a SimViolation whose message contains `fragment`.
template <typename Fn>
void ExpectViolation(Fn fn, const std::string &fragment) {
  bool violated = false;
  std::string message;
  try {
    fn();
  } catch (const AscendC::SimViolation &violation) {
    violated = true;
    message = violation.what();
  }
  ASSERT_MSG(violated, "expected a SimViolation mentioning \"" << fragment << "\"");
  ASSERT_MSG(message.find(fragment) != std::string::npos, "message \"" << message << "\" lacks \"" << fragment << "\"");
}

// The four variants of both kernels: which of weight and pos_weight are present.
struct Variant {
  const char *name;
  bool weight;
  bool posWeight;
};
constexpr Variant kVariants[] = {
    {"plain", false, false}, {"weight", true, false}, {"pos_weight", false, true}, {"both", true, true}};

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls fn(TypeTag<T>{}) for float, half and bfloat16_t.
template <typename Fn>
void ForEachDtype(Fn fn) {
  fn(TypeTag<float>{});
  fn(TypeTag<half>{});
  fn(TypeTag<bfloat16_t>{});
}

template <typename T>
bcewl::DtypeCode DtypeOf();
template <>
inline bcewl::DtypeCode DtypeOf<float>() {
  return bcewl::kDtypeFloat32;
}
template <>
inline bcewl::DtypeCode DtypeOf<half>() {
  return bcewl::kDtypeFloat16;
}
template <>
inline bcewl::DtypeCode DtypeOf<bfloat16_t>() {
  return bcewl::kDtypeBFloat16;
}

inline const char *DtypeName(bcewl::DtypeCode dtype) {
  return dtype == bcewl::kDtypeFloat32 ? "float32" : dtype == bcewl::kDtypeFloat16 ? "float16" : "bfloat16";
}

inline bcewl::OperandRequest Absent() { return bcewl::OperandRequest{}; }
inline bcewl::OperandRequest SameShape(uint64_t n) { return bcewl::OperandRequest{true, n, 1}; }
inline bcewl::OperandRequest Trailing(uint64_t period) { return bcewl::OperandRequest{true, period, 1}; }
inline bcewl::OperandRequest Runs(uint64_t period, uint64_t inner) {
  return bcewl::OperandRequest{true, period, inner};
}

inline uint64_t OperandIndex(const bcewl::OperandRequest &request, uint64_t i) {
  return i / request.inner % request.period;
}

enum class ValueKind { kLogit, kTarget, kWeight, kPosWeight, kGradOut };

// Deterministic inputs in the ranges the loss sees in practice, with exact 0/1 targets and some large logits.
template <typename T>
std::vector<T> MakeValues(uint64_t count, ValueKind kind, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<T> values(count);
  for (uint64_t i = 0; i < count; ++i) {
    const double u = unit(rng);
    double v = 0.0;
    switch (kind) {
      case ValueKind::kLogit:
        v = i % 97 == 5 ? (u - 0.5) * 180.0 : (u - 0.5) * 24.0;
        break;
      case ValueKind::kTarget:
        v = i % 7 == 0 ? static_cast<double>(i % 2) : u;
        break;
      case ValueKind::kWeight:
        v = u * 3.0 - 1.0;
        break;
      case ValueKind::kPosWeight:
        v = u * 4.0;
        break;
      case ValueKind::kGradOut:
        v = u * 4.0 - 2.0;
        break;
    }
    values[i] = FromDouble<T>(v);
  }
  return values;
}

template <typename TilingData>
std::vector<uint8_t> TilingBytes(const TilingData &data) {
  std::vector<uint8_t> bytes(sizeof(TilingData));
  std::memcpy(bytes.data(), &data, sizeof(TilingData));
  return bytes;
}

// How a launch gets its tiling: through the tiling argument (a dynamic-shape binary), or compiled into the
// binary with a null tiling argument (a static-shape one).
enum class TilingPath { kDynamic, kStatic };

inline AscendC::SimLaunchConfig LaunchConfig(uint32_t blockDim, uint32_t ubBytes, TilingPath path,
                                             const std::vector<uint8_t> &tiling) {
  AscendC::SimLaunchConfig config;
  config.blockDim = blockDim;
  config.ubBytes = ubBytes;
  config.staticTiling = path == TilingPath::kStatic ? &tiling : nullptr;
  return config;
}

inline GM_ADDR TilingArgument(TilingPath path, std::vector<uint8_t> &tiling) {
  return path == TilingPath::kStatic ? nullptr : tiling.data();
}

template <typename T>
GM_ADDR Gm(std::vector<T> &values) {
  return values.empty() ? nullptr : reinterpret_cast<GM_ADDR>(values.data());
}

template <typename T>
std::vector<T> OperandValues(const bcewl::OperandRequest &request, ValueKind kind, uint64_t seed) {
  return request.present ? MakeValues<T>(request.period, kind, seed) : std::vector<T>{};
}

// A value the kernels never produce, so that unwritten output shows up.
template <typename T>
T Sentinel() {
  return FromDouble<T>(-12345.0);
}

// predict, target and the optional weights of one test case.
template <typename T>
struct LossInputs {
  std::vector<T> x, y, w, p;
};

template <typename T>
LossInputs<T> MakeLossInputs(uint64_t n, const bcewl::OperandRequest &weight, const bcewl::OperandRequest &posWeight,
                             uint64_t seed) {
  LossInputs<T> in;
  in.x = MakeValues<T>(n, ValueKind::kLogit, seed);
  in.y = MakeValues<T>(n, ValueKind::kTarget, seed + 1);
  in.w = OperandValues<T>(weight, ValueKind::kWeight, seed + 2);
  in.p = OperandValues<T>(posWeight, ValueKind::kPosWeight, seed + 3);
  return in;
}

// Every combination of infinite, NaN and ordinary logits with targets 0, 1, 0.5 and NaN and weights and
// pos_weights that are ordinary, 0 or NaN, cycled over the elements (same-shape weights).
constexpr uint64_t kSpecialCombinations = 5 * 4 * 4 * 4;

template <typename T>
void UseSpecialValues(LossInputs<T> *in) {
  const float xs[] = {INFINITY, -INFINITY, NAN, 0.5f, -3.0f};
  const float ys[] = {0.0f, 1.0f, 0.5f, NAN};
  const float ws[] = {1.5f, 0.0f, -2.0f, NAN};
  const float ps[] = {2.0f, 0.0f, 1.0f, NAN};
  for (uint64_t i = 0; i < in->x.size(); ++i) {
    in->x[i] = FromDouble<T>(xs[i % 5]);
    in->y[i] = FromDouble<T>(ys[i / 5 % 4]);
    if (!in->w.empty()) in->w[i] = FromDouble<T>(ws[i / 20 % 4]);
    if (!in->p.empty()) in->p[i] = FromDouble<T>(ps[i / 80 % 4]);
  }
}

inline std::string DescribeOperand(const bcewl::OperandRequest &request) {
  return request.present ? "(" + std::to_string(request.period) + "," + std::to_string(request.inner) + ")" : "-";
}

template <typename Request>
std::string DescribeRequest(const Request &request) {
  return std::string(DtypeName(request.dtype)) + " n=" + std::to_string(request.totalLength) +
         " cores=" + std::to_string(request.platform.coreNum) + " weight=" + DescribeOperand(request.weight) +
         " pos_weight=" + DescribeOperand(request.posWeight);
}

// Weight and pos_weight seen by flat element i (1 when absent).
template <typename T, typename Request>
double WeightAt(const Request &request, const LossInputs<T> &in, uint64_t i) {
  return request.weight.present ? ToDouble(in.w[OperandIndex(request.weight, i)]) : 1.0;
}
template <typename T, typename Request>
double PosWeightAt(const Request &request, const LossInputs<T> &in, uint64_t i) {
  return request.posWeight.present ? ToDouble(in.p[OperandIndex(request.posWeight, i)]) : 1.0;
}

// Whether the kernel skips the weight or pos_weight of `in`: one value equal to 1, as the adapter passes for an
// absent one.
template <typename T, typename Request>
bool SkipsAUnitWeight(const Request &request, const LossInputs<T> &in) {
  const auto unit = [](const bcewl::OperandRequest &operand, const std::vector<T> &values) {
    return operand.present && operand.period == 1 && ToDouble(values[0]) == 1.0;
  };
  return unit(request.weight, in.w) || unit(request.posWeight, in.p);
}

// The launch used exactly the UB the tiling planned; less when it skipped a weight the plan made room for.
template <typename Plan>
void CheckPlannedUb(const Plan &plan, bool skipsAWeight, const std::string &what) {
  const uint32_t used = AscendC::sim::LastLaunchStats().peakUbBytes;
  ASSERT_MSG(used == plan.ubBytes || (skipsAWeight && used < plan.ubBytes),
             "kernel allocated " << used << " UB bytes, tiling planned " << plan.ubBytes << " for " << what);
}

template <typename T>
struct ForwardCase {
  bcewl::ForwardTilingRequest request;
  LossInputs<T> in;
};

template <typename T>
ForwardCase<T> MakeForwardCase(uint64_t n, uint32_t cores, const bcewl::OperandRequest &weight,
                               const bcewl::OperandRequest &posWeight, uint64_t seed) {
  ForwardCase<T> c;
  c.request.totalLength = n;
  c.request.dtype = DtypeOf<T>();
  c.request.weight = weight;
  c.request.posWeight = posWeight;
  c.request.platform.coreNum = cores;
  c.in = MakeLossInputs<T>(n, weight, posWeight, seed);
  return c;
}

// Elements of one full tile when the whole tensor runs on one core.
template <typename T>
uint64_t ForwardTileLength(bool weight, bool posWeight) {
  bcewl::ForwardTilingRequest request;
  request.totalLength = 1 << 22;
  request.dtype = DtypeOf<T>();
  request.weight = weight ? SameShape(request.totalLength) : Absent();
  request.posWeight = posWeight ? SameShape(request.totalLength) : Absent();
  return bcewl::PlanForward(request).data.geometry.chunkLength;
}

// Plans and launches the forward kernel; the output starts as Sentinel().
template <typename T>
std::vector<float> LaunchForward(ForwardCase<T> &c, uint32_t ubBytes = AscendC::sim::kAscend910bUbBytes,
                                 TilingPath path = TilingPath::kDynamic) {
  c.request.platform.ubBytes = ubBytes;
  const auto plan = bcewl::PlanForward(c.request);
  ASSERT_MSG(plan.ok(), plan.error << " for " << DescribeRequest(c.request));
  std::vector<float> loss(c.request.totalLength, Sentinel<float>());
  std::vector<uint8_t> tiling = TilingBytes(plan.data);
  AscendC::SimSetTilingKey(plan.tilingKey);
  AscendC::SimLaunch(LaunchConfig(plan.blockDim, ubBytes, path, tiling), &ms_bcewl_sigmoid_cross_entropy_with_logits,
                     Gm(c.in.x), Gm(c.in.y), Gm(c.in.w), Gm(c.in.p), Gm(loss), static_cast<GM_ADDR>(nullptr),
                     TilingArgument(path, tiling));
  CheckPlannedUb(plan, SkipsAUnitWeight(c.request, c.in), DescribeRequest(c.request));
  return loss;
}

template <typename T>
Expected ExpectedLoss(const ForwardCase<T> &c, uint64_t i) {
  return ReferenceLoss(ToDouble(c.in.x[i]), ToDouble(c.in.y[i]), WeightAt(c.request, c.in, i),
                       PosWeightAt(c.request, c.in, i));
}

template <typename T>
void CheckForward(ForwardCase<T> &c, uint32_t ubBytes = AscendC::sim::kAscend910bUbBytes) {
  const std::vector<float> loss = LaunchForward(c, ubBytes);
  for (uint64_t i = 0; i < loss.size(); ++i) {
    const Expected expected = ExpectedLoss(c, i);
    ASSERT_MSG(Matches(loss[i], expected, RoundingOf<float>()),
               DescribeRequest(c.request) << ": loss[" << i << "] = " << loss[i] << ", expected " << expected.value
                                          << " (x=" << ToDouble(c.in.x[i]) << ", y=" << ToDouble(c.in.y[i]) << ")");
  }
}

// The reduction the gradient is taken for: only the grad op's scale input depends on it.
enum class Reduction { kNone, kMean, kSum };

template <typename T>
struct GradCase {
  bcewl::GradTilingRequest request;
  Reduction reduction;
  LossInputs<T> in;
  std::vector<T> g;
  std::vector<float> scale;  // the op's 0-d float32 input: 1 / n for mean, as the Python dispatch passes it
};

template <typename T>
GradCase<T> MakeGradCase(uint64_t n, uint32_t cores, Reduction reduction, const bcewl::OperandRequest &dout,
                         const bcewl::OperandRequest &weight, const bcewl::OperandRequest &posWeight, uint64_t seed) {
  GradCase<T> c;
  c.request.totalLength = n;
  c.request.dtype = DtypeOf<T>();
  c.reduction = reduction;
  c.scale = {reduction == Reduction::kMean && n > 0 ? static_cast<float>(1.0 / static_cast<double>(n)) : 1.0f};
  c.request.dout = dout;
  c.request.weight = weight;
  c.request.posWeight = posWeight;
  c.request.platform.coreNum = cores;
  c.in = MakeLossInputs<T>(n, weight, posWeight, seed);
  c.g = OperandValues<T>(dout, ValueKind::kGradOut, seed + 4);
  return c;
}

template <typename T>
std::string Describe(const GradCase<T> &c) {
  return DescribeRequest(c.request) + " reduction=" + std::to_string(static_cast<int>(c.reduction)) +
         " dout=" + DescribeOperand(c.request.dout);
}

template <typename T>
std::vector<T> LaunchGrad(GradCase<T> &c, TilingPath path = TilingPath::kDynamic) {
  const auto plan = bcewl::PlanGrad(c.request);
  ASSERT_MSG(plan.ok(), plan.error << " for " << Describe(c));
  std::vector<T> gradient(c.request.totalLength, Sentinel<T>());
  std::vector<uint8_t> tiling = TilingBytes(plan.data);
  AscendC::SimSetTilingKey(plan.tilingKey);
  AscendC::SimLaunch(LaunchConfig(plan.blockDim, c.request.platform.ubBytes, path, tiling),
                     &ms_bcewl_sigmoid_cross_entropy_with_logits_grad, Gm(c.in.x), Gm(c.in.y), Gm(c.g), Gm(c.scale),
                     Gm(c.in.w), Gm(c.in.p), Gm(gradient), static_cast<GM_ADDR>(nullptr), TilingArgument(path, tiling));
  CheckPlannedUb(plan, SkipsAUnitWeight(c.request, c.in), Describe(c));
  return gradient;
}

template <typename T>
void CheckGrad(GradCase<T> &c) {
  const std::vector<T> gradient = LaunchGrad(c);
  const uint64_t n = c.request.totalLength;
  const double scale = c.reduction == Reduction::kMean ? 1.0 / static_cast<double>(n) : 1.0;
  for (uint64_t i = 0; i < n; ++i) {
    const double g = ToDouble(c.g[OperandIndex(c.request.dout, i)]);
    const Expected expected = ReferenceGradient(ToDouble(c.in.x[i]), ToDouble(c.in.y[i]), g,
                                                WeightAt(c.request, c.in, i), PosWeightAt(c.request, c.in, i), scale);
    ASSERT_MSG(Matches(ToDouble(gradient[i]), expected, RoundingOf<T>()),
               Describe(c) << ": dx[" << i << "] = " << ToDouble(gradient[i]) << ", expected " << expected.value
                           << " (x=" << ToDouble(c.in.x[i]) << ", y=" << ToDouble(c.in.y[i]) << ")");
  }
}

}  // namespace test

#endif  // MS_BCEWL_ASCENDC_TESTS_KERNEL_TEST_SUPPORT_H_
