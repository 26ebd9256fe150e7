// How the kernels get their tiling: the struct they register is the one they read, through the tiling argument of
// a dynamic-shape launch or from the bytes a static-shape binary carries (its launch passes a null tiling).
#include <cstdint>
#include <vector>

#include "kernel_test_support.h"

namespace test {
namespace {

using namespace AscendC;

template <typename T>
void CheckStaticMatchesDynamic(const Variant &variant, uint64_t n) {
  auto forward =
      MakeForwardCase<T>(n, 3, variant.weight ? Trailing(7) : Absent(), variant.posWeight ? SameShape(n) : Absent(), n);
  const std::vector<float> dynamicLoss = LaunchForward(forward);
  const std::vector<float> staticLoss = LaunchForward(forward, sim::kAscend910bUbBytes, TilingPath::kStatic);
  ASSERT_MSG(std::memcmp(dynamicLoss.data(), staticLoss.data(), n * sizeof(float)) == 0,
             "forward " << DescribeRequest(forward.request));

  auto grad = MakeGradCase<T>(n, 3, Reduction::kMean, Runs(1, n), variant.weight ? SameShape(n) : Absent(),
                              variant.posWeight ? Trailing(7) : Absent(), n);
  const std::vector<T> dynamicDx = LaunchGrad(grad);
  const std::vector<T> staticDx = LaunchGrad(grad, TilingPath::kStatic);
  ASSERT_MSG(std::memcmp(dynamicDx.data(), staticDx.data(), n * sizeof(T)) == 0, "gradient " << Describe(grad));
}

struct OtherTiling {
  uint64_t value;
};

void ReadsUnregisteredTiling(GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(OtherTiling, data, tiling);
  (void)data;
}

void ReadsAnotherStruct(GM_ADDR tiling) {
  REGISTER_TILING_DEFAULT(bcewl::ForwardTilingData);
  GET_TILING_DATA_WITH_STRUCT(OtherTiling, data, tiling);
  (void)data;
}

void ReadsRegisteredTiling(GM_ADDR tiling) {
  REGISTER_TILING_DEFAULT(OtherTiling);
  GET_TILING_DATA_WITH_STRUCT(OtherTiling, data, tiling);
  (void)data;
}

}  // namespace

TEST_CASE(kernels_give_the_same_bits_with_static_and_dynamic_tiling) {
  for (const Variant &variant : kVariants) {
    ForEachDtype([&](auto tag) { CheckStaticMatchesDynamic<typename decltype(tag)::type>(variant, 7 * 1031); });
  }
}

TEST_CASE(sim_rejects_tiling_the_op_compiler_would_not_size_or_pass) {
  std::vector<uint8_t> tiling(sizeof(OtherTiling), 0);
  const auto launch = [&](void (*kernel)(GM_ADDR), GM_ADDR argument, const std::vector<uint8_t> *staticTiling) {
    SimLaunchConfig config;
    config.staticTiling = staticTiling;
    SimLaunch(config, kernel, argument);
  };
  ExpectViolation([&] { launch(&ReadsUnregisteredTiling, tiling.data(), nullptr); }, "without REGISTER_TILING_DEFAULT");
  ExpectViolation([&] { launch(&ReadsAnotherStruct, tiling.data(), nullptr); }, "without REGISTER_TILING_DEFAULT");
  ExpectViolation([&] { launch(&ReadsRegisteredTiling, nullptr, nullptr); }, "without tiling data");
  const std::vector<uint8_t> wrongSize(sizeof(OtherTiling) + 8, 0);
  ExpectViolation([&] { launch(&ReadsRegisteredTiling, nullptr, &wrongSize); }, "static tiling of 16 bytes");
}

TEST_CASE(sim_reads_registered_tiling_from_the_argument_or_the_static_bytes) {
  const OtherTiling given{0x0123456789abcdefull};
  std::vector<uint8_t> bytes = TilingBytes(given);
  std::vector<uint64_t> seen(2, 0);
  auto kernel = +[](GM_ADDR t, GM_ADDR out) {
    REGISTER_TILING_DEFAULT(OtherTiling);
    GET_TILING_DATA_WITH_STRUCT(OtherTiling, data, t);
    *reinterpret_cast<uint64_t *>(out) = data.value;
  };
  SimLaunch(kernel, 1, bytes.data(), reinterpret_cast<GM_ADDR>(&seen[0]));
  SimLaunchConfig config;
  config.staticTiling = &bytes;
  SimLaunch(config, kernel, static_cast<GM_ADDR>(nullptr), reinterpret_cast<GM_ADDR>(&seen[1]));
  ASSERT_TRUE(seen[0] == given.value && seen[1] == given.value);
}

}  // namespace test
