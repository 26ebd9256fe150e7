// The host kernel's ISA paths and threads (aclnn_adapter/src/kernel/, through its test hooks in kernel_testing.h):
// the SIMD exp and log1p within their documented ulp bounds; 16-bit conversions bit for bit those of
// float_formats.h; every ISA this machine has against the scalar path and the float64 reference, on random and
// extreme values, odd sizes, misaligned views, the three dtypes and the broadcast patterns of weight and
// pos_weight; and bitwise-equal results for 1, 2 and 4 threads.
#include <dirent.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernel/isa/float_formats.h"
#include "kernel/kernel_testing.h"
#include "op_runner.h"
#include "test_harness.h"

namespace {

using ms_bcewl::kernel::DType;
using ms_bcewl::kernel::Isa;
using test::Operation;
using test::RefArray;
using test::Shape;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const ms_bcewl::kernel::KernelTestingHooks &Hooks() { return *msBcewlKernelTestingHooks(); }

const char *IsaName(Isa isa) { return ms_bcewl::kernel::kIsaNames[static_cast<int>(isa)]; }

std::vector<Isa> AvailableIsas() {
  std::vector<Isa> isas;
  for (Isa isa : ms_bcewl::kernel::kIsas) {
    if (Hooks().isa_available(isa)) {
      isas.push_back(isa);
    }
  }
  return isas;
}

// The kernels use `isa` (and `threads` threads, 0: the default) while this lives.
class KernelSettings {
 public:
  explicit KernelSettings(Isa isa, int threads = 0) {
    EXPECT_MSG(Hooks().force_isa(isa), std::string("cannot force ") + IsaName(isa));
    Hooks().set_threads(threads);
  }
  ~KernelSettings() {
    Hooks().automatic_isa();
    Hooks().set_threads(0);
  }
  KernelSettings(const KernelSettings &) = delete;
  KernelSettings &operator=(const KernelSettings &) = delete;
};

float FloatOfBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint32_t BitsOfFloat(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// The float32 ulp at the binade of the float64 value v (the subnormal spacing below 2^-126).
double UlpOf(double v) {
  return v == 0.0 ? std::ldexp(1.0, -149) : std::ldexp(1.0, std::max(std::ilogb(v), -126) - 23);
}

// Every float of [first, last] (bit patterns, one sign) with the given step, and last itself.
std::vector<float> FloatSweep(uint32_t first, uint32_t last, uint32_t step) {
  std::vector<float> values;
  for (uint64_t bits = first; bits <= last; bits += step) {
    values.push_back(FloatOfBits(static_cast<uint32_t>(bits)));
  }
  values.push_back(FloatOfBits(last));
  return values;
}

struct UlpReport {
  double worst = 0.0;  // infinite when the kernel could not run
  float at = 0.0f;
};

using KernelFunction = bool (*)(Isa, const float *, int64_t, float *);

UlpReport MeasureUlps(Isa isa, KernelFunction function, double (*reference)(double), const std::vector<float> &in) {
  std::vector<float> out(in.size());
  UlpReport report;
  if (!function(isa, in.data(), static_cast<int64_t>(in.size()), out.data())) {
    report.worst = kInf;
    return report;
  }
  for (size_t i = 0; i < in.size(); ++i) {
    const double expected = reference(in[i]);
    const double error = std::fabs(out[i] - expected) / UlpOf(expected);
    if (!(error <= report.worst)) {  // (a NaN error counts as the worst)
      report.worst = std::isnan(error) ? kInf : error;
      report.at = in[i];
    }
  }
  return report;
}

double Exp(double t) { return std::exp(t); }
double Log1p(double e) { return std::log1p(e); }

void ExpectWithinUlps(Isa isa, const char *function, const char *argument, const UlpReport &report, double bound) {
  EXPECT_MSG(report.worst <= bound, std::string(IsaName(isa)) + " " + function + ": " + test::NumberText(report.worst) +
                                        " ulp at " + argument + " = " + test::NumberText(report.at));
}

// An argument whose result a kernel must give exactly (a NaN for a NaN).
struct Special {
  float argument;
  float result;
};

bool GivesExactly(Isa isa, KernelFunction function, const std::vector<Special> &specials) {
  std::vector<float> in;
  for (const Special &special : specials) {
    in.push_back(special.argument);
  }
  std::vector<float> out(in.size());
  function(isa, in.data(), static_cast<int64_t>(in.size()), out.data());
  for (size_t i = 0; i < specials.size(); ++i) {
    const float result = specials[i].result;
    if (std::isnan(result) ? !std::isnan(out[i]) : out[i] != result) {
      return false;
    }
  }
  return true;
}

}  // namespace

// The scalar kernels' exp and log1p are the C library's: glibc documents at most 1 ulp for expf and 2 for log1pf on
// x86-64 and aarch64 (libm-test-ulps; 0.50 and 1.29 measured here over every float of the domain).
constexpr double kScalarExpMaxUlps = 1.0;
constexpr double kScalarLog1pMaxUlps = 2.0;

// Every ISA's exp over t in [-105, 0] (normal, subnormal and zero results) and log1p over e in [0, 1]: a sweep of
// about a million floats each (every 1021st float; the SIMD bounds were measured over every float), and special
// arguments. The scalar kernel is checked on every machine, so the test never passes having checked nothing.
TEST_CASE(kernel_exp_and_log1p_stay_within_their_documented_ulp_bounds) {
  const std::vector<float> exp_arguments = FloatSweep(0x80000000u, 0xC2D20000u, 1021);    // -0 .. -105
  const std::vector<float> log1p_arguments = FloatSweep(0x00000000u, 0x3F800000u, 1021);  // 0 .. 1
  const float infinity = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Special> exp_specials = {{-infinity, 0.0f},
                                             {nan, nan},
                                             {-0.0f, 1.0f},
                                             {0.0f, 1.0f},
                                             {-1e4f, 0.0f},
                                             {-104.0f, 0.0f},
                                             {-103.5f, std::exp(-103.5f)},
                                             {-87.5f, std::exp(-87.5f)},
                                             {-1e-40f, 1.0f}};
  const std::vector<Special> log1p_specials = {{nan, nan}, {0.0f, 0.0f}, {1e-40f, 1e-40f}};
  const std::vector<Isa> isas = AvailableIsas();
  EXPECT_MSG(!isas.empty() && isas.front() == Isa::kScalar, "the scalar kernel is not among the available ISAs");
  for (Isa isa : isas) {
    const bool scalar = isa == Isa::kScalar;
    ExpectWithinUlps(isa, "exp", "t", MeasureUlps(isa, Hooks().exp, Exp, exp_arguments),
                     scalar ? kScalarExpMaxUlps : ms_bcewl::kernel::kVectorExpMaxUlps);
    ExpectWithinUlps(isa, "log1p", "e", MeasureUlps(isa, Hooks().log1p, Log1p, log1p_arguments),
                     scalar ? kScalarLog1pMaxUlps : ms_bcewl::kernel::kVectorLog1pMaxUlps);
    EXPECT_MSG(GivesExactly(isa, Hooks().exp, exp_specials),
               std::string(IsaName(isa)) + " exp of -inf, NaN, +-0, -1e4, -104, -103.5, -87.5, -1e-40");
    EXPECT_MSG(GivesExactly(isa, Hooks().log1p, log1p_specials), std::string(IsaName(isa)) + " log1p of NaN, 0, 1e-40");
  }
}

namespace {

using ms_bcewl::kernel::BFloat16ToFloat;
using ms_bcewl::kernel::FloatToBFloat16;
using ms_bcewl::kernel::FloatToHalf;
using ms_bcewl::kernel::HalfToFloat;

float Widened(DType dtype, uint16_t bits) {
  return dtype == DType::kFloat16 ? HalfToFloat(bits) : BFloat16ToFloat(bits);
}

// float_formats.h's bits, but for the quieting of signaling NaNs that F16C does (isa_kernels.h).
uint32_t ExpectedWidening(Isa isa, DType dtype, uint16_t pattern) {
  const uint32_t expected = BitsOfFloat(Widened(dtype, pattern));
  const bool signaling_nan = (expected & 0x7FC00000u) == 0x7F800000u && (expected & 0x003FFFFFu) != 0;
  const bool f16c = dtype == DType::kFloat16 && isa != Isa::kScalar;
  return signaling_nan && f16c ? expected | 0x00400000u : expected;
}

// All 65536 patterns, and the first 3 again: an odd count, so that a last partial vector is covered too.
bool WideningMatches(Isa isa, DType dtype) {
  std::vector<uint16_t> patterns(65536 + 3);
  for (size_t i = 0; i < patterns.size(); ++i) {
    patterns[i] = static_cast<uint16_t>(i);
  }
  std::vector<float> widened(patterns.size());
  Hooks().widen(isa, dtype, patterns.data(), static_cast<int64_t>(patterns.size()), widened.data());
  for (size_t i = 0; i < patterns.size(); ++i) {
    if (BitsOfFloat(widened[i]) != ExpectedWidening(isa, dtype, patterns[i])) {
      return false;
    }
  }
  return true;
}

// A sweep of all floats, every value of the format, the midpoints between neighbours (the ties) and the floats just
// either side of them, NaNs with payloads, infinities and values near the format's limits.
std::vector<float> NarrowingArguments(DType dtype) {
  std::vector<float> floats = FloatSweep(0, 0xFFFFFFFFu, 65521);
  for (uint32_t bits = 0; bits < 65535; ++bits) {
    const float value = Widened(dtype, static_cast<uint16_t>(bits));
    const float next = Widened(dtype, static_cast<uint16_t>(bits + 1));
    floats.push_back(value);
    if (std::isfinite(value) && std::isfinite(next)) {
      const float midpoint = static_cast<float>((static_cast<double>(value) + next) / 2);
      const float infinity = std::numeric_limits<float>::infinity();
      floats.insert(floats.end(), {midpoint, std::nextafter(midpoint, -infinity), std::nextafter(midpoint, infinity)});
    }
  }
  for (uint32_t payload : {1u, 0x1000u, 0x2000u, 0x10000u, 0x3FFFFFu, 0x400000u, 0x400001u, 0x7FFFFFu}) {
    floats.push_back(FloatOfBits(0x7F800000u | payload));
    floats.push_back(FloatOfBits(0xFF800000u | payload));
  }
  floats.insert(floats.end(), {65504.0f, 65519.0f, 65520.0f, 3.4e38f, -3.4e38f, 1e-8f, 5.96e-8f, 2.98e-8f});
  return floats;
}

// Reports the first value narrowed otherwise than float_formats.h does.
void ExpectNarrowingMatches(Isa isa, DType dtype, const std::string &what) {
  const std::vector<float> floats = NarrowingArguments(dtype);
  std::vector<uint16_t> narrowed(floats.size());
  Hooks().narrow(isa, dtype, floats.data(), static_cast<int64_t>(floats.size()), narrowed.data());
  for (size_t i = 0; i < floats.size(); ++i) {
    const uint16_t expected = dtype == DType::kFloat16 ? FloatToHalf(floats[i]) : FloatToBFloat16(floats[i]);
    if (narrowed[i] != expected) {
      EXPECT_MSG(false, what + " narrowing differs from float_formats.h: " + test::NumberText(floats[i]) + " (bits " +
                            std::to_string(BitsOfFloat(floats[i])) + ") gave " + std::to_string(narrowed[i]) +
                            ", expected " + std::to_string(expected));
      return;
    }
  }
}

}  // namespace

// Widening: all 65536 patterns of each 16-bit format. Narrowing: every value of each format, the midpoints between
// neighbours (the ties) and the floats just either side of them, NaNs with payloads, infinities, and a sweep of all
// floats; an odd count so that the last partial vector is covered too.
TEST_CASE(kernel_16_bit_conversions_match_float_formats_bit_for_bit) {
  for (Isa isa : AvailableIsas()) {
    for (DType dtype : {DType::kFloat16, DType::kBFloat16}) {
      const std::string what = std::string(IsaName(isa)) + (dtype == DType::kFloat16 ? " float16" : " bfloat16");
      EXPECT_MSG(WideningMatches(isa, dtype), what + " widening differs from float_formats.h");
      ExpectNarrowingMatches(isa, dtype, what);
    }
  }
}

namespace {

// One call of an operation: its inputs as row-major values (rounded to `dtype` when stored), every tensor of
// `dtype` and viewed at storage offset `offset` (1: misaligned for every vector width).
struct Call {
  Operation op = Operation::kForward;
  int64_t reduction = 0;
  RefArray x, y;
  std::optional<RefArray> w, p;
  RefArray g;
  aclDataType dtype = ACL_FLOAT;
  int64_t offset = 0;
};

struct Result {
  std::vector<double> values;
  std::vector<uint8_t> bytes;
  std::string error;  // empty when the call succeeded and wrote nothing outside its output view
};

Shape OutputShape(const Call &call) {
  switch (call.op) {
    case Operation::kForward:
      return call.reduction == 0 ? call.x.shape : Shape{};
    case Operation::kGradWeight:
      return call.w->shape;
    case Operation::kGradPosWeight:
      return call.p->shape;
    default:
      return call.x.shape;
  }
}

// A call's input tensors, made once and run with any ISA and thread count.
class Prepared {
 public:
  explicit Prepared(const Call &call)
      : call_(call),
        x_(Tensor(call.x)),
        y_(Tensor(call.y)),
        g_(Tensor(call.g)),
        w_(call.w ? Tensor(*call.w) : nullptr),
        p_(call.p ? Tensor(*call.p) : nullptr) {}

  Result Run(Isa isa, int threads = 0) const {
    KernelSettings settings(isa, threads);
    return RunHere();
  }

  // With the kernels' current settings.
  Result RunHere() const {
    const Shape out_shape = OutputShape(call_);
    test::HostTensor out(out_shape, call_.dtype, test::ContiguousStrides(out_shape), call_.offset);
    out.FillStorage(test::kSentinel);
    const test::OpTensors tensors{g_->get(), x_->get(), y_->get(), w_ ? w_->get() : nullptr, p_ ? p_->get() : nullptr,
                                  out.get()};
    Result result;
    const aclnnStatus status = test::RunOp(call_.op, tensors, call_.reduction);
    if (status != ACLNN_SUCCESS) {
      result.error = "status " + std::to_string(status) + ": " + aclGetRecentErrMsg();
      return result;
    }
    for (double untouched : out.ValuesOutsideView()) {
      if (untouched != test::kSentinel) {
        result.error = "wrote outside the output view";
      }
    }
    result.values = out.Values();
    result.bytes = out.ViewBytes();
    return result;
  }

 private:
  std::unique_ptr<test::HostTensor> Tensor(const RefArray &array) const {
    auto tensor = std::make_unique<test::HostTensor>(array.shape, call_.dtype, test::ContiguousStrides(array.shape),
                                                     call_.offset);
    tensor->Set(array.values);
    return tensor;
  }

  const Call &call_;
  std::unique_ptr<test::HostTensor> x_, y_, g_, w_, p_;
};

// The stored (dtype-rounded) inputs, as the reference must see them.
test::RefProblem StoredProblem(const Call &call) {
  auto stored = [&](const RefArray &array) {
    RefArray rounded = array;
    for (double &value : rounded.values) {
      value = test::RoundToDtype(value, call.dtype);
    }
    return rounded;
  };
  test::RefProblem problem;
  problem.x = stored(call.x);
  problem.y = stored(call.y);
  if (call.w) {
    problem.w = stored(*call.w);
  }
  if (call.p) {
    problem.p = stored(*call.p);
  }
  problem.g = stored(call.g);
  problem.reduction = call.reduction;
  return problem;
}

// The row-major index into an array of shape `array_shape` of the element that broadcasts to element `linear` of
// `shape` (numpy rules: trailing alignment, dims of 1 broadcast).
size_t BroadcastIndex(const Shape &shape, size_t linear, const Shape &array_shape) {
  size_t index = 0;
  size_t stride = 1;
  const size_t lead = shape.size() - array_shape.size();
  for (size_t dim = shape.size(); dim-- > lead;) {
    const size_t position = linear % static_cast<size_t>(shape[dim]);
    linear /= static_cast<size_t>(shape[dim]);
    const int64_t size = array_shape[dim - lead];
    index += (size == 1 ? 0 : position) * stride;
    stride *= static_cast<size_t>(size);
  }
  return index;
}

double At(const std::optional<RefArray> &array, const Shape &shape, size_t linear) {
  return array ? array->values[BroadcastIndex(shape, linear, array->shape)] : 1.0;
}

// A bound on the size of the terms of each output value: (1 + |w|)(1 + |g|)(1 + |x|)(1 + |y|)(1 + |p|) per element,
// summed over the elements an output reduces (times 1/numel for mean). The float32 arithmetic of a term errs by a
// few units of 2^-24 of it.
std::vector<double> TermSizes(const Call &call, const test::RefProblem &problem) {
  const Shape &shape = problem.x.shape;
  const size_t numel = problem.x.values.size();
  const Shape out_shape = OutputShape(call);
  std::vector<double> sizes(static_cast<size_t>(test::NumelOf(out_shape)), 0.0);
  const double scale = call.reduction == 1 ? 1.0 / static_cast<double>(numel) : 1.0;
  for (size_t i = 0; i < numel; ++i) {
    const double size = (1 + std::fabs(At(problem.w, shape, i))) * (1 + std::fabs(At(problem.g, shape, i))) *
                        (1 + std::fabs(problem.x.values[i])) * (1 + std::fabs(problem.y.values[i])) *
                        (1 + std::fabs(At(problem.p, shape, i)));
    sizes[BroadcastIndex(shape, i, out_shape)] += size * scale;
  }
  return sizes;
}

bool SameClass(double a, double b) { return std::isnan(a) ? std::isnan(b) : std::isinf(a) ? a == b : std::isfinite(b); }

// The rounding of an output dtype: relative, and absolute (float16 subnormals are 2^-24 apart).
struct DtypeRounding {
  double rtol;
  double atol;
};

DtypeRounding RoundingOf(aclDataType dtype) {
  return {dtype == ACL_FLOAT ? 0.0 : dtype == ACL_FLOAT16 ? 1e-3 : 8e-3, dtype == ACL_FLOAT16 ? 6e-8 : 1e-37};
}

// Whether the SIMD value a and the scalar value b agree: the same class, finite values within 8 units of 2^-24 of
// the term size `size` (exactly equal where a term is infinite: exp and log1p are then exact in both) plus one unit
// of a 16-bit output dtype.
bool AgreesWithScalar(double a, double b, double size, const DtypeRounding &rounding) {
  const double apart =
      std::isfinite(size) ? 8 * 0x1p-24 * size + rounding.rtol * (std::fabs(a) + std::fabs(b)) + rounding.atol : 0.0;
  return SameClass(b, a) && (!std::isfinite(b) || std::fabs(a - b) <= apart);
}

// Whether value a lies near the float64 reference `expected`: within 1e-6 of the term size plus the rounding to the
// output dtype; the same infinity, or finite where a term is infinite. A NaN reference is not compared: the reference
// multiplies 0 by infinite terms as IEEE does, where the kernels take the limits (test_numerics.cpp tests those and
// the propagation of NaN).
bool NearReference(double a, double expected, double size, const DtypeRounding &rounding) {
  if (std::isnan(expected)) {
    return true;
  }
  if (std::isinf(expected) || !std::isfinite(size)) {
    return SameClass(expected, a);
  }
  const double tolerance = 1e-6 * size + 2 * rounding.rtol * std::fabs(expected) + rounding.atol;
  return std::fabs(a - expected) <= tolerance;
}

// Checks the result of `isa` against the float64 reference (NearReference) and, for a SIMD ISA, against the scalar
// result (AgreesWithScalar). The scalar kernel, which every machine has, is checked against the reference alone.
void ExpectMatches(const Call &call, Isa isa, const Result &got, const Result &scalar, const std::string &what) {
  if (!got.error.empty() || !scalar.error.empty()) {
    EXPECT_MSG(false, what + ": " + got.error + scalar.error);
    return;
  }
  const test::RefProblem problem = StoredProblem(call);
  const std::vector<double> expected = test::ExpectedOutput(call.op, test::Reference(problem));
  const std::vector<double> sizes = TermSizes(call, problem);
  if (got.values.size() != expected.size() || scalar.values.size() != expected.size()) {
    EXPECT_MSG(false, what + ": wrong number of values");
    return;
  }
  const DtypeRounding rounding = RoundingOf(call.dtype);
  for (size_t i = 0; i < expected.size(); ++i) {
    const double a = got.values[i];
    const double b = scalar.values[i];
    const bool agrees = isa == Isa::kScalar || AgreesWithScalar(a, b, sizes[i], rounding);
    if (!agrees || !NearReference(a, expected[i], sizes[i], rounding)) {
      EXPECT_MSG(false, what + " element " + std::to_string(i) + ": " + IsaName(isa) + " " + test::NumberText(a) +
                            ", scalar " + test::NumberText(b) + ", float64 reference " + test::NumberText(expected[i]) +
                            " (term size " + test::NumberText(sizes[i]) + ")");
      return;  // one report per call is enough
    }
  }
}

// Values in [low, high] with, when `extremes`, every 5th one taken from the extreme logits (x) or the annihilating
// values (y, w, p, g), so that each vector lane meets them.
std::vector<double> Values(int64_t count, double low, double high, uint64_t seed, const std::vector<double> &extremes) {
  std::vector<double> values = test::RandomValues(count, low, high, seed);
  std::mt19937_64 generator(seed + 99);
  for (int64_t i = 0; i < count && !extremes.empty(); ++i) {
    if (generator() % 5 == 0) {
      values[i] = extremes[generator() % extremes.size()];
    }
  }
  return values;
}

const std::vector<double> kExtremeLogits = {1e4,   -1e4,   88,    -88,    20,   -20,   0.0, -0.0,
                                            1e-40, -1e-40, 103.5, -103.5, kInf, -kInf, kNaN};

Call MakeCall(Operation op, int64_t reduction, const Shape &shape, bool extremes, uint64_t seed, double logits = 30) {
  const int64_t numel = test::NumelOf(shape);
  const std::vector<double> none;
  Call call;
  call.op = op;
  call.reduction = reduction;
  call.x = RefArray{shape, Values(numel, -logits, logits, seed, extremes ? kExtremeLogits : none)};
  call.y = RefArray{shape, Values(numel, 0, 1, seed + 1, extremes ? std::vector<double>{0.0, 1.0, kNaN} : none)};
  call.w = RefArray{shape, Values(numel, 0.1, 2, seed + 2, extremes ? std::vector<double>{0.0} : none)};
  call.p = RefArray{shape, Values(numel, 0.3, 3, seed + 3, extremes ? std::vector<double>{0.0} : none)};
  const Shape g_shape = reduction == 0 ? shape : Shape{};
  const std::vector<double> g_extremes = extremes && reduction == 0 ? std::vector<double>{0.0} : none;
  call.g = RefArray{g_shape, Values(test::NumelOf(g_shape), 0.25, 2, seed + 4, g_extremes)};
  return call;
}

std::string Name(const Call &call, const std::string &extra) {
  const char *dtype = call.dtype == ACL_FLOAT ? "f32" : call.dtype == ACL_FLOAT16 ? "f16" : "bf16";
  return std::string(test::OperationName(call.op)) + " " + test::ShapeText(call.x.shape) + " " + dtype + " reduction " +
         std::to_string(call.reduction) + " offset " + std::to_string(call.offset) + extra;
}

}  // namespace

// Every quantity elementwise (weight and pos_weight of full shape: dw and dp are then one-element reductions), on
// random and extreme values: each SIMD ISA against the scalar path and the float64 reference.
TEST_CASE(kernel_isas_agree_with_scalar_and_reference_on_extreme_values) {
  for (Operation op : test::kSingleOutputOperations) {
    const Call call = MakeCall(op, 0, {3, 1001}, true, 11 + static_cast<uint64_t>(op));
    const Prepared prepared(call);
    const Result scalar = prepared.Run(Isa::kScalar);
    for (Isa isa : AvailableIsas()) {
      ExpectMatches(call, isa, prepared.Run(isa), scalar, Name(call, ""));
    }
  }
}

// Sizes around the vector widths, the 512-element chunks and the 8192-element reduction blocks, views misaligned by
// one element, and the three dtypes; elementwise, mean and sum.
TEST_CASE(kernel_isas_agree_on_odd_sizes_misaligned_views_and_dtypes) {
  for (int64_t size : {1, 7, 15, 17, 8191, 8193, 100003}) {
    for (aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
      if (size == 100003 && dtype != ACL_FLOAT) {
        continue;
      }
      for (Operation op : test::kSingleOutputOperations) {
        for (int64_t reduction : {0, 1, 2}) {
          const bool reduced_kind = op == Operation::kForward || (op == Operation::kGradWeight && size < 100003);
          if (reduction != 0 && !reduced_kind) {
            continue;
          }
          Call call = MakeCall(op, reduction, {size}, false, 7 * static_cast<uint64_t>(size) + reduction, 4);
          call.dtype = dtype;
          call.offset = 1;
          const Prepared prepared(call);
          const Result scalar = prepared.Run(Isa::kScalar);
          for (Isa isa : AvailableIsas()) {
            ExpectMatches(call, isa, prepared.Run(isa), scalar, Name(call, ""));
          }
        }
      }
    }
  }
}

// Whether two results hold the same values bit for bit, except that any NaN matches any NaN (compilers may swap
// the operands of an addition, and x86 returns the first NaN operand's bits).
bool SameBitsUpToNaNs(const Result &a, const Result &b) {
  if (!a.error.empty() || !b.error.empty() || a.values.size() != b.values.size()) {
    return false;
  }
  for (size_t i = 0; i < a.values.size(); ++i) {
    const bool both_nan = std::isnan(a.values[i]) && std::isnan(b.values[i]);
    if (!both_nan && std::memcmp(&a.values[i], &b.values[i], sizeof(double)) != 0) {
      return false;
    }
  }
  return true;
}

namespace {

// Which of weight and pos_weight a call reads as 1, and how: from a scalar 1, or as absent.
struct UnitWeights {
  bool weight;
  bool pos_weight;
  bool scalar;
};

// At least one weight is 1, and not the one whose gradient op computes (that one's shape is its gradient's).
bool Applies(Operation op, const UnitWeights &units) {
  const bool has_its_gradient =
      (op == Operation::kGradWeight && units.weight) || (op == Operation::kGradPosWeight && units.pos_weight);
  return (units.weight || units.pos_weight) && !has_its_gradient;
}

// `call` with the unit weights of `units` as `value`.
Call WithUnitWeights(Call call, const UnitWeights &units, const std::optional<RefArray> &value) {
  if (units.weight) {
    call.w = value;
  }
  if (units.pos_weight) {
    call.p = value;
  }
  return call;
}

std::string UnitWeightsText(const UnitWeights &units) {
  return std::string(units.weight ? " unit weight" : "") + (units.pos_weight ? " unit pos_weight" : "") +
         (units.scalar ? " (scalar 1)" : " (absent)");
}

void ExpectUnitWeightsGiveOnesBits(const Call &random, const UnitWeights &units) {
  const Shape &shape = random.x.shape;
  const RefArray ones{shape, std::vector<double>(static_cast<size_t>(test::NumelOf(shape)), 1.0)};
  const std::optional<RefArray> unit = units.scalar ? std::optional<RefArray>(RefArray{Shape{1}, {1.0}}) : std::nullopt;
  const Call as_ones = WithUnitWeights(random, units, ones);
  const Call as_unit = WithUnitWeights(random, units, unit);
  const Prepared with_ones(as_ones);
  const Prepared with_unit(as_unit);
  for (Isa isa : AvailableIsas()) {
    const Result expected = with_ones.Run(isa);
    const Result got = with_unit.Run(isa);
    EXPECT_MSG(SameBitsUpToNaNs(got, expected),
               Name(as_unit, std::string(" ") + IsaName(isa) + UnitWeightsText(units)) +
                   ": not the bits of full-shape ones " + expected.error + got.error);
  }
}

}  // namespace

// An absent weight or pos_weight, or a scalar 1, reads as 1, and the kernels then skip the products with it
// (RowInputs::unit_weight, unit_pos_weight): the bits of a full-shape tensor of ones (up to NaN payloads), on random
// and extreme values, for every op, reduction and ISA.
TEST_CASE(kernel_weights_of_one_give_the_bits_of_full_shape_ones) {
  for (Operation op : test::kSingleOutputOperations) {
    for (int64_t reduction : {0, 1}) {
      const Call random = MakeCall(op, reduction, {3, 1001}, true, 41 + static_cast<uint64_t>(op));
      for (bool weight : {false, true}) {
        for (bool pos_weight : {false, true}) {
          for (bool scalar : {false, true}) {
            const UnitWeights units{weight, pos_weight, scalar};
            if (Applies(op, units)) {
              ExpectUnitWeightsGiveOnesBits(random, units);
            }
          }
        }
      }
    }
  }
}

namespace {

struct Pattern {
  const char *name;
  Shape shape;                   // self's
  std::optional<Shape> w_shape;  // nullopt: absent
  std::optional<Shape> p_shape;
};

// The broadcast patterns of weight / pos_weight that the kernel reads without materialising them: absent, scalar,
// full, per-row vector (the last dim), per-class (constant over an inner run), and mixtures of them.
const Pattern kPatterns[] = {
    {"absent", {5, 3001}, std::nullopt, std::nullopt},
    {"scalar", {5, 3001}, Shape{}, Shape{1}},
    {"full", {5, 3001}, Shape{5, 3001}, Shape{5, 3001}},
    {"per-row vector", {401, 40}, Shape{40}, Shape{1, 40}},
    {"per-class", {2, 10, 801}, Shape{10, 1}, Shape{1, 10, 1}},
    {"per-row and per-class", {2, 7, 1201}, Shape{1201}, Shape{2, 1, 1}},
    {"short rows", {5011, 3}, Shape{3}, Shape{5011, 1}},
};

Call PatternCall(const Pattern &pattern, Operation op, int64_t reduction, uint64_t seed) {
  Call call = MakeCall(op, reduction, pattern.shape, false, seed);
  auto operand = [](const std::optional<Shape> &shape, double low, double high, uint64_t s) -> std::optional<RefArray> {
    if (!shape) {
      return std::nullopt;
    }
    return RefArray{*shape, test::RandomValues(test::NumelOf(*shape), low, high, s)};
  };
  call.w = operand(pattern.w_shape, 0.1, 2, seed + 2);
  call.p = operand(pattern.p_shape, 0.3, 3, seed + 3);
  return call;
}

}  // namespace

TEST_CASE(kernel_isas_agree_on_weight_and_pos_weight_broadcast_patterns) {
  for (const Pattern &pattern : kPatterns) {
    for (Operation op : test::kSingleOutputOperations) {
      if ((op == Operation::kGradWeight && !pattern.w_shape) || (op == Operation::kGradPosWeight && !pattern.p_shape)) {
        continue;
      }
      for (int64_t reduction : {0, 1}) {
        const Call call = PatternCall(pattern, op, reduction, 31 + static_cast<uint64_t>(op));
        const Prepared prepared(call);
        const Result scalar = prepared.Run(Isa::kScalar);
        for (Isa isa : AvailableIsas()) {
          ExpectMatches(call, isa, prepared.Run(isa), scalar, Name(call, std::string(" ") + pattern.name));
        }
      }
    }
  }
}

namespace {

// `array` broadcast to `shape`, stored at full size.
RefArray Materialised(const RefArray &array, const Shape &shape) {
  RefArray full{shape, std::vector<double>(static_cast<size_t>(test::NumelOf(shape)))};
  for (size_t i = 0; i < full.values.size(); ++i) {
    full.values[i] = array.values[BroadcastIndex(shape, i, array.shape)];
  }
  return full;
}

}  // namespace

// A weight or pos_weight broadcast over the outer dims and contiguous over the inner ones is read from a tiled copy
// of its period, or in place where a chunk does not wrap around a long period (kernel/driver/plan.h): the bits of
// the same values stored at full size, for every op, reduction and ISA, with periods that divide the 512-element
// chunks, that chunks wrap around at every phase, and past the tiled limit, in float32 and float16. The weight whose
// gradient an op computes keeps its shape in both calls (its gradient's shape depends on it).
TEST_CASE(kernel_periodic_weights_give_the_bits_of_their_full_size_values) {
  struct PeriodicCase {
    Pattern pattern;
    aclDataType dtype;
  };
  const PeriodicCase cases[] = {
      {{"per-class (64,)", {1100, 64}, Shape{64}, Shape{64}}, ACL_FLOAT},
      {{"per-class (1000,)", {9, 1000}, Shape{1, 1000}, Shape{1000}}, ACL_FLOAT},
      {{"per-class (1000,)", {9, 1000}, Shape{1, 1000}, Shape{1000}}, ACL_FLOAT16},
      {{"period past the tiled limit", {3, 5000}, Shape{5000}, Shape{1, 5000}}, ACL_FLOAT},
      {{"period past the tiled limit", {3, 5000}, Shape{5000}, Shape{1, 5000}}, ACL_BF16},
      {{"inner block over a batch", {4, 3, 50}, Shape{3, 50}, Shape{50}}, ACL_FLOAT},
  };
  for (const PeriodicCase &periodic_case : cases) {
    const Pattern &pattern = periodic_case.pattern;
    for (Operation op : test::kSingleOutputOperations) {
      for (int64_t reduction : {0, 1}) {
        Call periodic = PatternCall(pattern, op, reduction, 53 + static_cast<uint64_t>(op));
        periodic.dtype = periodic_case.dtype;
        Call full = periodic;
        if (op != Operation::kGradWeight) {
          full.w = Materialised(*periodic.w, pattern.shape);
        }
        if (op != Operation::kGradPosWeight) {
          full.p = Materialised(*periodic.p, pattern.shape);
        }
        const Prepared with_periodic(periodic);
        const Prepared with_full(full);
        for (Isa isa : AvailableIsas()) {
          EXPECT_MSG(SameBitsUpToNaNs(with_periodic.Run(isa), with_full.Run(isa)),
                     Name(periodic, std::string(" ") + pattern.name + " " + IsaName(isa)) +
                         ": not the bits of the full-size values");
        }
      }
    }
  }
}

// Each ISA gives bitwise the same loss (none, mean, sum), dx, dy, dw and dp for 1, 2 and 4 threads, with outputs of
// one block, of many blocks split over the tasks at other than chunk boundaries, and of many outputs.
TEST_CASE(kernel_results_are_bitwise_equal_for_1_2_and_4_threads) {
  struct ThreadCase {
    Pattern pattern;
    Operation op;
    int64_t reduction;
  };
  const Pattern full = {"full", {140001}, Shape{140001}, Shape{140001}};
  const Pattern per_class = {"per-class", {3, 50021}, Shape{3, 1}, Shape{3, 1}};
  const Pattern per_row = {"per-row", {20011, 7}, Shape{7}, Shape{7}};
  const ThreadCase cases[] = {
      {full, Operation::kForward, 0},
      {full, Operation::kForward, 1},
      {full, Operation::kForward, 2},
      {full, Operation::kGradSelf, 0},
      {full, Operation::kGradTarget, 1},
      {full, Operation::kGradWeight, 0},
      {full, Operation::kGradPosWeight, 2},
      {per_class, Operation::kGradWeight, 1},
      {per_class, Operation::kGradPosWeight, 0},
      {per_row, Operation::kGradWeight, 2},
      {per_row, Operation::kGradPosWeight, 1},
      {per_row, Operation::kForward, 1},
  };
  for (Isa isa : AvailableIsas()) {
    for (const ThreadCase &c : cases) {
      const Call call = PatternCall(c.pattern, c.op, c.reduction, 5);
      const Prepared prepared(call);
      const Result one = prepared.Run(isa, 1);
      for (int threads : {2, 4}) {
        const Result many = prepared.Run(isa, threads);
        EXPECT_MSG(one.error.empty() && many.error.empty() && one.bytes == many.bytes,
                   std::string(IsaName(isa)) + " " + Name(call, std::string(" ") + c.pattern.name) + ": " +
                       std::to_string(threads) + " threads differ from 1 " + one.error + many.error);
      }
    }
  }
}

// A reduction that keeps the innermost dims (a per-class weight's gradient) is summed row after row; it must give
// bitwise what the general path, one output at a time, gives: the same lane order for every output, also where
// tasks share a row block by its lanes (4 threads on two blocks of 64 classes; 2 and 4 on one of 1000).
TEST_CASE(row_by_row_reductions_equal_the_general_path_bitwise) {
  struct Threaded {
    Pattern pattern;
    std::vector<int> threads;
  };
  const Threaded patterns[] = {
      {{"per-column, many blocks", {20011, 7}, Shape{7}, Shape{1, 7}}, {2}},
      {{"per-class of 64, two blocks", {8200, 64}, Shape{64}, Shape{64}}, {2, 4}},
      {{"per-class of 37: whole vectors and a tail", {3001, 37}, Shape{37}, Shape{37}}, {2}},
      {{"kept 3x5 after 2 reduced dims", {9, 301, 3, 5}, Shape{3, 5}, Shape{1, 1, 3, 1}}, {2}},
      {{"per-class of 1000 over 132 rows: one block", {132, 1000}, Shape{1000}, Shape{1, 1000}}, {2, 4}},
  };
  for (Isa isa : AvailableIsas()) {
    for (const Threaded &threaded : patterns) {
      for (Operation op : {Operation::kGradWeight, Operation::kGradPosWeight, Operation::kForward}) {
        for (int64_t reduction : {0, 1, 2}) {
          const Call call = PatternCall(threaded.pattern, op, reduction, 17);
          const Prepared prepared(call);
          for (int threads : threaded.threads) {
            const Result row_by_row = prepared.Run(isa, threads);
            Hooks().set_row_reductions(false);
            const Result general = prepared.Run(isa, threads);
            Hooks().set_row_reductions(true);
            EXPECT_MSG(row_by_row.error.empty() && general.error.empty() && row_by_row.bytes == general.bytes,
                       std::string(IsaName(isa)) + " " + Name(call, std::string(" ") + threaded.pattern.name) + ", " +
                           std::to_string(threads) + " threads: row by row differs from the general path " +
                           row_by_row.error + general.error);
          }
        }
      }
    }
  }
}

// Calls from several threads at once: one of them gets the pool, the others run their tasks on their own thread;
// every result is the same.
TEST_CASE(kernel_concurrent_calls_give_the_same_results) {
  const Pattern full = {"full", {140001}, Shape{140001}, Shape{140001}};
  for (Operation op : {Operation::kForward, Operation::kGradWeight}) {
    const Call call = PatternCall(full, op, 1, 9);
    const Prepared prepared(call);
    const Result alone = prepared.Run(Hooks().active_isa(), 2);
    std::vector<Result> results(3);
    {
      KernelSettings settings(Hooks().active_isa(), 2);
      std::vector<std::thread> callers;
      for (Result &result : results) {
        callers.emplace_back([&prepared, &result] { result = prepared.RunHere(); });
      }
      for (std::thread &caller : callers) {
        caller.join();
      }
    }
    for (const Result &result : results) {
      EXPECT_MSG(result.error.empty() && result.bytes == alone.bytes,
                 std::string(test::OperationName(op)) + ": a concurrent call differs " + result.error);
    }
  }
}

// The CPU masks of this process's other threads (the pool's workers among them), read by thread id.
std::vector<cpu_set_t> OtherThreadMasks() {
  std::vector<cpu_set_t> masks;
  DIR *tasks = opendir("/proc/self/task");
  if (tasks == nullptr) {
    return masks;
  }
  const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
  while (const dirent *entry = readdir(tasks)) {
    const pid_t tid = static_cast<pid_t>(std::atoi(entry->d_name));
    cpu_set_t mask;
    if (tid > 0 && tid != self && sched_getaffinity(tid, sizeof(mask), &mask) == 0) {
      masks.push_back(mask);
    }
  }
  closedir(tasks);
  return masks;
}

// Whether some other thread of this process has `expected` as its CPU mask within 2 s: a worker woken for a loop
// sets its mask when it wakes, which may be after the loop (its caller runs the tasks no worker has started).
bool AThreadGetsTheMask(const cpu_set_t &expected) {
  for (int attempt = 0; attempt < 2000; ++attempt) {
    for (const cpu_set_t &mask : OtherThreadMasks()) {
      if (CPU_EQUAL(&mask, &expected)) {
        return true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// A worker woken for a loop keeps off the CPU its loop's caller ran on (else Linux may wake it there after an idle
// spell, and two threads run at the speed of one), and follows the caller when it moves. A process allowed on one
// CPU only (taskset -c N) keeps every thread on it.
TEST_CASE(kernel_workers_keep_off_the_callers_cpu) {
  cpu_set_t allowed;
  EXPECT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && cpus.size() < 2; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) {
      cpus.push_back(cpu);
    }
  }
  const Pattern full = {"full", {140001}, Shape{140001}, Shape{140001}};
  const Call call = PatternCall(full, Operation::kForward, 0, 5);
  const Prepared prepared(call);
  const Result first = prepared.Run(Hooks().active_isa(), 2);  // workers start with their creator's CPUs
  if (cpus.size() < 2) {
    bool all_keep_the_cpu = true;
    for (const cpu_set_t &mask : OtherThreadMasks()) {
      all_keep_the_cpu = all_keep_the_cpu && CPU_EQUAL(&mask, &allowed);
    }
    EXPECT_MSG(first.error.empty() && all_keep_the_cpu, "a thread left the only allowed CPU " + first.error);
    return;
  }
  for (int caller_cpu : cpus) {
    cpu_set_t only;
    CPU_ZERO(&only);
    CPU_SET(caller_cpu, &only);
    EXPECT_EQ(sched_setaffinity(0, sizeof(only), &only), 0);
    const Result result = prepared.Run(Hooks().active_isa(), 2);
    EXPECT_EQ(sched_setaffinity(0, sizeof(allowed), &allowed), 0);
    cpu_set_t expected = allowed;
    CPU_CLR(caller_cpu, &expected);
    EXPECT_MSG(
        result.error.empty() && AThreadGetsTheMask(expected),
        "no thread is kept off CPU " + std::to_string(caller_cpu) + " after a loop called from it " + result.error);
  }
}

// A loop never waits for a worker that has not started: with every core busy, a woken worker may wait a
// scheduler tick for a CPU (a 0.1 ms kernel beside a concurrent one in a MindSpore graph took 4 ms). Held workers
// never wake, so the call must finish on its caller, with the same result, and the workers, released late, must
// leave it alone.
TEST_CASE(kernel_loops_never_wait_for_workers_that_have_not_started) {
  const Pattern full = {"full", {140001}, Shape{140001}, Shape{140001}};
  for (Operation op : {Operation::kForward, Operation::kGradWeight}) {
    const Call call = PatternCall(full, op, op == Operation::kForward ? 0 : 1, 3);
    const Prepared prepared(call);
    const Result expected = prepared.Run(Hooks().active_isa(), 1);
    prepared.Run(Hooks().active_isa(), 4);  // the pool's workers exist
    Hooks().hold_workers(true);
    auto held = std::async(std::launch::async, [&prepared] { return prepared.Run(Hooks().active_isa(), 4); });
    const bool finished = held.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
    Hooks().hold_workers(false);  // (a call that waited for them finishes now)
    const Result alone = held.get();
    const Result after = prepared.Run(Hooks().active_isa(), 4);
    EXPECT_MSG(finished,
               std::string(test::OperationName(op)) + ": a 4-thread call waited for workers that never started");
    EXPECT_MSG(
        alone.error.empty() && alone.bytes == expected.bytes && after.bytes == expected.bytes,
        std::string(test::OperationName(op)) + ": results differ once workers are held or released " + alone.error);
  }
}

TEST_CASE(kernel_thread_count_can_be_set_and_reset) {
  const int default_threads = Hooks().threads();
  EXPECT_TRUE(default_threads >= 1);
  Hooks().set_threads(3);
  EXPECT_EQ(Hooks().threads(), 3);
  Hooks().set_threads(0);
  EXPECT_EQ(Hooks().threads(), default_threads);
  EXPECT_TRUE(Hooks().isa_available(Isa::kScalar));
  EXPECT_TRUE(Hooks().force_isa(Isa::kScalar));
  EXPECT_TRUE(Hooks().active_isa() == Isa::kScalar);
  Hooks().automatic_isa();
}
