// Which per-ISA kernels a call uses: the best that is compiled in and that the CPU supports (cpuid on x86-64, AT_HWCAP
// on aarch64), chosen once; MS_BCEWL_ISA=scalar|avx2|avx512|avx512bf16|neon (read once, at the first call) caps the
// choice (isa_kernels.h).
#ifndef MS_BCEWL_KERNEL_ISA_SELECTION_H_
#define MS_BCEWL_KERNEL_ISA_SELECTION_H_

#include "kernel/isa_kernels.h"

namespace ms_bcewl::kernel {

// The kernels of isa where they are compiled in and this CPU supports them, else null.
const IsaKernels *AvailableKernels(Isa isa);

// The kernels of a call: those of ForceKernels where set, else the automatic choice.
const IsaKernels &ActiveKernels();

// Every call uses `kernels` from now on; null: back to the automatic choice (a test hook).
void ForceKernels(const IsaKernels *kernels);

}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_ISA_SELECTION_H_
