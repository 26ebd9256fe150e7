// The AVX-512 kernels with AVX512_BF16 (avx512_policy.h with kNativeBFloat16): the same results as
// bcewl_kernel_avx512.cpp, bfloat16 outputs rounded by vcvtneps2bf16 where that is exact. Compiled with -mavx512f
// -mavx512dq -mavx512bf16 where the compiler supports them (aclnn_adapter/CMakeLists.txt); the driver calls them only
// on a CPU with all three. Everything here has internal linkage but Avx512BFloat16Kernels().
#include "kernel/isa/isa_kernels.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512BF16__)

#include "kernel/isa/avx512_policy.h"
#include "kernel/isa/kernel_table.h"

namespace ms_bcewl::kernel {
namespace {

constexpr IsaKernels kAvx512BFloat16Kernels = MakeKernels<Avx512Policy<true>>(Isa::kAvx512BFloat16, "avx512bf16");

}  // namespace

const IsaKernels *Avx512BFloat16Kernels() { return &kAvx512BFloat16Kernels; }

}  // namespace ms_bcewl::kernel

#else

namespace ms_bcewl::kernel {

const IsaKernels *Avx512BFloat16Kernels() { return nullptr; }

}  // namespace ms_bcewl::kernel

#endif
