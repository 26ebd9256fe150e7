// Test hooks of the host kernels (tests/native/test_kernel_isa.cpp): which ISA and how many threads the kernels
// use, and direct access to each ISA's exp, log1p and 16-bit conversions. Exported from libms_bcewl.so as the one
// C symbol msBcewlKernelTestingHooks (the library exports no C++ internals); not part of the aclnn API.
#ifndef MS_BCEWL_KERNEL_KERNEL_TESTING_H_
#define MS_BCEWL_KERNEL_KERNEL_TESTING_H_

#include <cstdint>

#include "kernel/bcewl_kernel.h"
#include "kernel/isa/isa_kernels.h"

namespace ms_bcewl::kernel {

struct KernelTestingHooks {
  bool (*isa_available)(Isa isa);  // compiled in and supported by this CPU
  bool (*force_isa)(Isa isa);      // the kernels use isa from now on; false (and no change) when unavailable
  void (*automatic_isa)();         // back to the automatic choice (MS_BCEWL_ISA, else the best available)
  Isa (*active_isa)();
  void (*set_threads)(int threads);  // the threads a kernel call may use from now on; 0: back to the default
  int (*threads)();
  // The kernels of isa applied to count values; false when isa is unavailable.
  bool (*exp)(Isa isa, const float *t, int64_t count, float *out);
  bool (*log1p)(Isa isa, const float *e, int64_t count, float *out);
  bool (*widen)(Isa isa, DType dtype, const uint16_t *src, int64_t count, float *dst);
  bool (*narrow)(Isa isa, DType dtype, const float *src, int64_t count, uint16_t *dst);
  // false: reductions that keep the innermost dims take the general path too (its results must be the same)
  void (*set_row_reductions)(bool enabled);
  // true: the pool's workers do not wake for new loops, as when no CPU is free for them; false: they do again
  void (*hold_workers)(bool held);
  int (*latest_loop_tasks)();  // the task count the latest kernel loop was split into
};

}  // namespace ms_bcewl::kernel

extern "C" __attribute__((visibility("default"))) const ms_bcewl::kernel::KernelTestingHooks *msBcewlKernelTestingHooks(
    void);

#endif  // MS_BCEWL_KERNEL_KERNEL_TESTING_H_
