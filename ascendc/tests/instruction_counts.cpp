// ascendc_sim_counts: what the simulated kernels execute per element, as the table in docs/performance.md.
//   ascendc_sim_counts              markdown tables: vector instructions and DataCopy bytes per element, for the
//                                   forward and gradient kernels, every variant and dtype, finite inputs and
//                                   inputs with one infinite logit per tile (every tile on the limit path); then
//                                   the vector instructions per element as the MindSpore dispatch launches them
//   ascendc_sim_counts --checksums  a hash of the outputs of a fixed set of launches, to compare two builds'
//                                   kernels bit for bit
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernel_test_support.h"

namespace test {
namespace {

constexpr uint64_t kTiles = 8;

struct Counts {
  double perElement;  // elements processed by vector instructions / loss elements
  double elementsPerInstruction;
  double copyBytesPerElement;
};

Counts Measure(uint64_t n) {
  const AscendC::sim::LaunchStats &stats = AscendC::sim::LastLaunchStats();
  const double elements = static_cast<double>(n);
  return Counts{static_cast<double>(stats.vectorElements) / elements,
                static_cast<double>(stats.vectorElements) / static_cast<double>(stats.vectorInstructions),
                static_cast<double>(stats.dataCopyBytesIn + stats.dataCopyBytesOut) / elements};
}

// One infinite logit in the middle of every tile.
template <typename T>
void InfinityPerTile(std::vector<T> *x, uint64_t tile) {
  for (uint64_t start = 0; start < x->size(); start += tile) (*x)[start + tile / 2] = FromDouble<T>(INFINITY);
}

// A large same-shape gradient request on one core, to read the length of a full tile from its plan.
template <typename T>
bcewl::GradTilingRequest LargeGradRequest(const Variant &variant) {
  bcewl::GradTilingRequest request;
  request.totalLength = 1 << 22;
  request.dtype = DtypeOf<T>();
  request.weight = variant.weight ? SameShape(request.totalLength) : Absent();
  request.posWeight = variant.posWeight ? SameShape(request.totalLength) : Absent();
  request.dout = SameShape(request.totalLength);
  return request;
}

// Counts launch(c) with c's finite inputs, then with an infinite logit in every tile, and prints the row.
template <typename Case, typename Launch>
void PrintRow(const char *kernel, const Variant &variant, Case &c, uint64_t tile, Launch launch) {
  const uint64_t n = c.request.totalLength;
  launch(c);
  const Counts finite = Measure(n);
  InfinityPerTile(&c.in.x, tile);
  launch(c);
  const Counts infinite = Measure(n);
  std::printf("| %s | %s | %s | %.2f | %.2f | %.0f | %.1f |\n", kernel, variant.name, DtypeName(c.request.dtype),
              finite.perElement, infinite.perElement, finite.elementsPerInstruction, finite.copyBytesPerElement);
}

// kTiles full tiles on one core.
template <typename T>
void ForwardRow(const Variant &variant) {
  const uint64_t tile = ForwardTileLength<T>(variant.weight, variant.posWeight);
  const uint64_t n = kTiles * tile;
  auto c = MakeForwardCase<T>(n, 1, variant.weight ? SameShape(n) : Absent(),
                              variant.posWeight ? SameShape(n) : Absent(), 2);
  PrintRow("forward", variant, c, tile, [](ForwardCase<T> &launched) { LaunchForward(launched); });
}

template <typename T>
void GradRow(const Variant &variant) {
  const bcewl::GradTilingRequest request = LargeGradRequest<T>(variant);
  const uint64_t tile = bcewl::PlanGrad(request).data.geometry.chunkLength;
  const uint64_t n = kTiles * tile;
  auto c = MakeGradCase<T>(n, 1, Reduction::kNone, SameShape(n), variant.weight ? SameShape(n) : Absent(),
                           variant.posWeight ? SameShape(n) : Absent(), 3);
  PrintRow("gradient", variant, c, tile, [](GradCase<T> &launched) { LaunchGrad(launched); });
}

// An absent weight as the MindSpore dispatch passes it: a 0-d one.
bcewl::OperandRequest AsLaunched(bool present, uint64_t n) { return present ? SameShape(n) : Runs(1, 1); }

template <typename T>
void UnitAbsentWeights(const Variant &variant, LossInputs<T> *in) {
  if (!variant.weight) in->w = {FromDouble<T>(1.0)};
  if (!variant.posWeight) in->p = {FromDouble<T>(1.0)};
}

// The variant as the dispatch launches it, kTiles full tiles on one core, finite inputs: the forward, and the
// gradient for reduction none (same-shape dout) and mean (0-d dout, scale 1 / n).
template <typename T>
void LaunchedRow(const Variant &variant) {
  const uint64_t forwardN = kTiles * ForwardTileLength<T>(variant.weight, variant.posWeight);
  auto forward =
      MakeForwardCase<T>(forwardN, 1, AsLaunched(variant.weight, forwardN), AsLaunched(variant.posWeight, forwardN), 2);
  UnitAbsentWeights(variant, &forward.in);
  LaunchForward(forward);
  const double forwardCount = Measure(forwardN).perElement;
  const uint64_t gradN = kTiles * bcewl::PlanGrad(LargeGradRequest<T>(variant)).data.geometry.chunkLength;
  double gradCounts[2];
  for (int mean = 0; mean < 2; ++mean) {
    auto grad =
        MakeGradCase<T>(gradN, 1, mean ? Reduction::kMean : Reduction::kNone, mean ? Runs(1, 1) : SameShape(gradN),
                        AsLaunched(variant.weight, gradN), AsLaunched(variant.posWeight, gradN), 3);
    UnitAbsentWeights(variant, &grad.in);
    LaunchGrad(grad);
    gradCounts[mean] = Measure(gradN).perElement;
  }
  std::printf("| %s | %s | %.2f | %.2f | %.2f |\n", variant.name, DtypeName(DtypeOf<T>()), forwardCount, gradCounts[0],
              gradCounts[1]);
}

void PrintTable() {
  std::printf(
      "| kernel | variant | dtype | vector instructions / element, finite | one infinity per tile | "
      "elements / instruction | DataCopy bytes / element |\n|---|---|---|---|---|---|---|\n");
  for (const Variant &variant : kVariants) {
    ForEachDtype([&](auto tag) { ForwardRow<typename decltype(tag)::type>(variant); });
  }
  for (const Variant &variant : kVariants) {
    ForEachDtype([&](auto tag) { GradRow<typename decltype(tag)::type>(variant); });
  }
  std::printf(
      "\nAs the MindSpore dispatch launches them (an absent weight as a 0-d one), finite inputs:\n\n"
      "| variant | dtype | forward | gradient, none | gradient, mean |\n|---|---|--:|--:|--:|\n");
  for (const Variant &variant : kVariants) {
    ForEachDtype([&](auto tag) { LaunchedRow<typename decltype(tag)::type>(variant); });
  }
}

// FNV-1a of the bytes of `values`.
template <typename T>
uint64_t Hash(const std::vector<T> &values) {
  uint64_t hash = 1469598103934665603ull;
  const unsigned char *bytes = reinterpret_cast<const unsigned char *>(values.data());
  for (size_t i = 0; i < values.size() * sizeof(T); ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

// Random inputs, then every special combination cycled over them, then infinities in some tiles only.
enum class Inputs { kRandom, kSpecial, kSomeTilesInfinite };
const char *const kInputNames[] = {"random", "special", "some tiles infinite"};

template <typename T>
void Prepare(LossInputs<T> *in, Inputs inputs) {
  if (inputs == Inputs::kSpecial) UseSpecialValues(in);
  if (inputs == Inputs::kSomeTilesInfinite) {
    for (uint64_t i = 0; i < in->x.size(); i += 9973) in->x[i] = FromDouble<T>(i % 2 == 0 ? INFINITY : -INFINITY);
  }
}

template <typename T>
void PrintChecksums(const Variant &variant) {
  for (uint64_t n : {1ull, 33ull, 4097ull, 30011ull, 100003ull}) {
    for (uint32_t cores : {1u, 7u}) {
      for (int inputs = 0; inputs < 3; ++inputs) {
        auto f = MakeForwardCase<T>(n, cores, variant.weight ? SameShape(n) : Absent(),
                                    variant.posWeight ? SameShape(n) : Absent(), n + cores);
        Prepare(&f.in, static_cast<Inputs>(inputs));
        auto g = MakeGradCase<T>(n, cores, Reduction::kNone, SameShape(n), variant.weight ? SameShape(n) : Absent(),
                                 variant.posWeight ? SameShape(n) : Absent(), n + cores);
        Prepare(&g.in, static_cast<Inputs>(inputs));
        std::printf("%s %s n=%llu cores=%u %s: forward %016llx gradient %016llx\n", variant.name,
                    DtypeName(DtypeOf<T>()), static_cast<unsigned long long>(n), cores, kInputNames[inputs],
                    static_cast<unsigned long long>(Hash(LaunchForward(f))),
                    static_cast<unsigned long long>(Hash(LaunchGrad(g))));
      }
    }
  }
}

}  // namespace
}  // namespace test

int main(int argc, char **argv) {
  const bool checksums = argc > 1 && std::strcmp(argv[1], "--checksums") == 0;
  if (argc > 1 && !checksums) {
    std::fprintf(stderr, "usage: %s [--checksums]\n", argv[0]);
    return 2;
  }
  if (!checksums) {
    test::PrintTable();
    return 0;
  }
  for (const test::Variant &variant : test::kVariants) {
    test::ForEachDtype([&](auto tag) { test::PrintChecksums<typename decltype(tag)::type>(variant); });
  }
  return 0;
}
