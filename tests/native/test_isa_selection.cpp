// Which ISA kernels the library offers here (ActiveKernels, aclnn_adapter/src/kernel/driver/plan.cpp): exactly those
// that the build compiled in and that this CPU has, read apart from the library's own detection, and the best of them
// chosen. The ISA tests (test_kernel_isa.cpp) run every available ISA, so this is what makes them cover every ISA of
// the machine they run on: under qemu-aarch64, neon.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

#include "kernel/kernel_testing.h"
#include "test_harness.h"

namespace {

using ms_bcewl::kernel::Isa;

const ms_bcewl::kernel::KernelTestingHooks &Hooks() { return *msBcewlKernelTestingHooks(); }

const char *IsaName(Isa isa) { return ms_bcewl::kernel::kIsaNames[static_cast<int>(isa)]; }

// The ISA kernels CMake recorded for this build (MS_BCEWL_ISA_KERNELS of aclnn_adapter/CMakeLists.txt).
constexpr const char *kCompiledIsas[] = {MS_BCEWL_COMPILED_ISAS};

bool Compiled(Isa isa) {
  for (const char *name : kCompiledIsas) {
    if (std::strcmp(name, IsaName(isa)) == 0) {
      return true;
    }
  }
  return false;
}

// The features of the first processor in /proc/cpuinfo ("flags" on x86), which list an extension only where the
// OS also saves its registers.
std::set<std::string> CpuInfoFlags() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) == 0 && line.find(':') != std::string::npos) {
      std::istringstream words(line.substr(line.find(':') + 1));
      return {std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
    }
  }
  return {};
}

// Whether this CPU has what `isa`'s kernels need: on x86-64 as /proc/cpuinfo lists it; on aarch64 from AT_HWCAP
// (qemu-user shows a program the host's /proc/cpuinfo, but its own AT_HWCAP).
bool CpuOffers(Isa isa) {
  if (isa == Isa::kScalar) {
    return true;
  }
#if defined(__x86_64__)
  static const std::set<std::string> flags = CpuInfoFlags();
  const std::vector<std::string> needs = isa == Isa::kAvx2     ? std::vector<std::string>{"avx2", "fma", "f16c"}
                                         : isa == Isa::kAvx512 ? std::vector<std::string>{"avx512f"}
                                         : isa == Isa::kAvx512BFloat16
                                             ? std::vector<std::string>{"avx512f", "avx512dq", "avx512_bf16"}
                                             : std::vector<std::string>{"(not an x86 ISA)"};
  for (const std::string &feature : needs) {
    if (flags.count(feature) == 0) {
      return false;
    }
  }
  return true;
#elif defined(__aarch64__) && defined(__linux__)
  return isa == Isa::kNeon && (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0;
#else
  return false;
#endif
}

}  // namespace

TEST_CASE(kernel_isas_available_are_those_compiled_in_that_this_cpu_has) {
  for (Isa isa : ms_bcewl::kernel::kIsas) {
    const bool expected = Compiled(isa) && CpuOffers(isa);
    EXPECT_MSG(Hooks().isa_available(isa) == expected,
               IsaName(isa) << (expected ? " is not available" : " is available") << " (compiled in: " << Compiled(isa)
                            << ", offered by the CPU: " << CpuOffers(isa) << ")");
  }
#if defined(__aarch64__) && defined(__linux__)
  EXPECT_MSG(Compiled(Isa::kNeon) && CpuOffers(Isa::kNeon), "an aarch64 build without neon, or a CPU without ASIMD");
#endif
}

// Without MS_BCEWL_ISA the kernels take the last available ISA of kIsas (a CPU has one architecture's); with it, the
// named one or the best available below it in its architecture's order (kIsaBelow).
TEST_CASE(kernel_automatic_isa_is_the_best_available_at_or_below_ms_bcewl_isa) {
  Isa expected = Isa::kScalar;
  for (Isa isa : ms_bcewl::kernel::kIsas) {
    expected = Hooks().isa_available(isa) ? isa : expected;
  }
  if (const char *requested = std::getenv("MS_BCEWL_ISA")) {
    for (Isa isa : ms_bcewl::kernel::kIsas) {
      if (std::strcmp(requested, IsaName(isa)) == 0) {
        expected = isa;
        while (!Hooks().isa_available(expected)) {
          expected = ms_bcewl::kernel::kIsaBelow[static_cast<int>(expected)];
        }
      }
    }
  }
  Hooks().automatic_isa();
  EXPECT_MSG(Hooks().active_isa() == expected,
             "active " << IsaName(Hooks().active_isa()) << ", expected " << IsaName(expected));
}
