// The test hooks of kernel_testing.h over the driver's ISA choice, thread count and row reductions.
#include "kernel/driver/passes.h"
#include "kernel/driver/plan.h"
#include "kernel/kernel_testing.h"

namespace ms_bcewl::kernel {
namespace {

template <class Apply>
bool WithKernels(Isa isa, Apply &&apply) {
  const IsaKernels *kernels = AvailableKernels(isa);
  if (kernels != nullptr) {
    apply(*kernels);
  }
  return kernels != nullptr;
}

const KernelTestingHooks kTestingHooks = {
    [](Isa isa) { return AvailableKernels(isa) != nullptr; },
    [](Isa isa) {
      const IsaKernels *kernels = AvailableKernels(isa);
      if (kernels != nullptr) {
        ForceKernels(kernels);
      }
      return kernels != nullptr;
    },
    [] { ForceKernels(nullptr); },
    [] { return ActiveKernels().isa; },
    [](int threads) { SetKernelThreads(threads); },
    [] { return KernelThreads(); },
    [](Isa isa, const float *t, int64_t count, float *out) {
      return WithKernels(isa, [&](const IsaKernels &kernels) { kernels.exp(t, count, out); });
    },
    [](Isa isa, const float *e, int64_t count, float *out) {
      return WithKernels(isa, [&](const IsaKernels &kernels) { kernels.log1p(e, count, out); });
    },
    [](Isa isa, DType dtype, const uint16_t *src, int64_t count, float *dst) {
      return WithKernels(isa, [&](const IsaKernels &kernels) { kernels.widen(dtype, src, count, dst); });
    },
    [](Isa isa, DType dtype, const float *src, int64_t count, uint16_t *dst) {
      return WithKernels(isa, [&](const IsaKernels &kernels) { kernels.narrow(dtype, src, count, dst); });
    },
    [](bool enabled) { SetRowReductions(enabled); },
    [](bool held) { HoldWorkersForTesting(held); },
    [] { return LatestLoopTasks(); },
};

}  // namespace
}  // namespace ms_bcewl::kernel

extern "C" const ms_bcewl::kernel::KernelTestingHooks *msBcewlKernelTestingHooks(void) {
  return &ms_bcewl::kernel::kTestingHooks;
}
