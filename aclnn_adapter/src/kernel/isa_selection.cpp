#include "kernel/isa_selection.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iterator>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace ms_bcewl::kernel {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// What the kernels need of an x86 CPU, read with cpuid and xgetbv (the OS saves the ymm / zmm registers) rather than
// __builtin_cpu_supports: the runtime behind that (libgcc's or compiler-rt's __cpu_model) is left empty by zig's
// compiler-rt, which links the wheels' library, and the kernels then never left the scalar path.
struct X86Features {
  bool avx2_fma_f16c = false;
  bool avx512f = false;
  bool avx512dq = false;
  bool avx512bf16 = false;
};

constexpr unsigned Bit(int n) { return 1u << n; }

X86Features ReadX86Features() {
  X86Features features;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & Bit(27)) || !(ecx & Bit(28))) {
    return features;  // no cpuid leaf 1, no OSXSAVE or no AVX
  }
  const bool fma = ecx & Bit(12);
  const bool f16c = ecx & Bit(29);
  unsigned xcr0 = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0), "=d"(xcr0_high) : "c"(0));
  const bool ymm_saved = (xcr0 & 0x6u) == 0x6u;    // SSE and AVX state
  const bool zmm_saved = (xcr0 & 0xE6u) == 0xE6u;  // and the opmask and both halves of zmm
  if (!ymm_saved || !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
    return features;
  }
  features.avx2_fma_f16c = (ebx & Bit(5)) && fma && f16c;
  features.avx512f = zmm_saved && (ebx & Bit(16));
  features.avx512dq = zmm_saved && (ebx & Bit(17));
  features.avx512bf16 = features.avx512f && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & Bit(5));
  return features;
}

bool CpuSupports(Isa isa) {
  static const X86Features features = ReadX86Features();
  switch (isa) {
    case Isa::kScalar:
      return true;
    case Isa::kAvx2:
      return features.avx2_fma_f16c;
    case Isa::kAvx512:
      return features.avx512f;
    case Isa::kAvx512BFloat16:
      return features.avx512f && features.avx512dq && features.avx512bf16;
    case Isa::kNeon:
      return false;
  }
  return false;
}
#elif defined(__aarch64__) && defined(__linux__)
// Advanced SIMD as the kernel reports it (AT_HWCAP), the way x86 reads cpuid: every aarch64 Linux server has it.
bool CpuSupports(Isa isa) {
  static const bool asimd = (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0;
  return isa == Isa::kScalar || (isa == Isa::kNeon && asimd);
}
#else
bool CpuSupports(Isa isa) { return isa == Isa::kScalar; }
#endif

// The ISA MS_BCEWL_ISA names, or null where it is unset or names none.
const Isa *RequestedIsa() {
  const char *name = std::getenv("MS_BCEWL_ISA");
  for (size_t isa = 0; name != nullptr && isa < std::size(kIsaNames); ++isa) {
    if (std::strcmp(name, kIsaNames[isa]) == 0) {
      return &kIsas[isa];
    }
  }
  return nullptr;
}

// The kernels of `isa`, else of the best available ISA below it.
const IsaKernels *BestAtOrBelow(Isa isa) {
  while (AvailableKernels(isa) == nullptr) {
    isa = kIsaBelow[static_cast<int>(isa)];
  }
  return AvailableKernels(isa);
}

const IsaKernels &AutomaticKernels() {
  static const IsaKernels *const chosen = [] {
    if (const Isa *requested = RequestedIsa()) {
      return BestAtOrBelow(*requested);
    }
    for (size_t isa = std::size(kIsas); --isa > 0;) {
      if (const IsaKernels *kernels = AvailableKernels(kIsas[isa])) {
        return kernels;
      }
    }
    return &ScalarKernels();
  }();
  return *chosen;
}

std::atomic<const IsaKernels *> g_forced_kernels{nullptr};

}  // namespace

const IsaKernels *AvailableKernels(Isa isa) {
  const IsaKernels *kernels = nullptr;
  switch (isa) {
    case Isa::kScalar:
      kernels = &ScalarKernels();
      break;
    case Isa::kAvx2:
      kernels = Avx2Kernels();
      break;
    case Isa::kAvx512:
      kernels = Avx512Kernels();
      break;
    case Isa::kAvx512BFloat16:
      kernels = Avx512BFloat16Kernels();
      break;
    case Isa::kNeon:
      kernels = NeonKernels();
      break;
  }
  return kernels != nullptr && CpuSupports(isa) ? kernels : nullptr;
}

const IsaKernels &ActiveKernels() {
  const IsaKernels *forced = g_forced_kernels.load(std::memory_order_acquire);
  return forced != nullptr ? *forced : AutomaticKernels();
}

void ForceKernels(const IsaKernels *kernels) { g_forced_kernels.store(kernels, std::memory_order_release); }

}  // namespace ms_bcewl::kernel
