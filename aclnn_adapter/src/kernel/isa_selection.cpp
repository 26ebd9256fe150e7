#include "kernel/isa_selection.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iterator>

namespace ms_bcewl::kernel {
namespace {

bool CpuSupports(Isa isa) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  switch (isa) {
    case Isa::kScalar:
      return true;
    case Isa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    case Isa::kAvx512:
      return __builtin_cpu_supports("avx512f");
    case Isa::kAvx512BFloat16:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512bf16");
  }
  return false;
#else
  return isa == Isa::kScalar;
#endif
}

const IsaKernels &AutomaticKernels() {
  static const IsaKernels *const chosen = [] {
    int cap = static_cast<int>(std::size(kIsas)) - 1;
    if (const char *name = std::getenv("MS_BCEWL_ISA")) {
      for (int isa = 0; isa < static_cast<int>(std::size(kIsaNames)); ++isa) {
        cap = std::strcmp(name, kIsaNames[isa]) == 0 ? isa : cap;
      }
    }
    for (int isa = cap; isa > 0; --isa) {
      if (const IsaKernels *kernels = AvailableKernels(static_cast<Isa>(isa))) {
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
  }
  return kernels != nullptr && CpuSupports(isa) ? kernels : nullptr;
}

const IsaKernels &ActiveKernels() {
  const IsaKernels *forced = g_forced_kernels.load(std::memory_order_acquire);
  return forced != nullptr ? *forced : AutomaticKernels();
}

void ForceKernels(const IsaKernels *kernels) { g_forced_kernels.store(kernels, std::memory_order_release); }

}  // namespace ms_bcewl::kernel
