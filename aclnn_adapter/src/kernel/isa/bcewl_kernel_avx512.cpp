// The AVX-512 kernels (16 lanes, AVX-512F only) over avx512_policy.h. Compiled with -mavx512f where the compiler
// supports it (aclnn_adapter/CMakeLists.txt); the driver calls them only on a CPU (and OS) with AVX-512F. Everything
// here has internal linkage but Avx512Kernels().
#include "kernel/isa/isa_kernels.h"

#if defined(__AVX512F__)

#include "kernel/isa/avx512_policy.h"
#include "kernel/isa/kernel_table.h"

namespace ms_bcewl::kernel {
namespace {

constexpr IsaKernels kAvx512Kernels = MakeKernels<Avx512Policy<false>>(Isa::kAvx512, "avx512");

}  // namespace

const IsaKernels *Avx512Kernels() { return &kAvx512Kernels; }

}  // namespace ms_bcewl::kernel

#else

namespace ms_bcewl::kernel {

const IsaKernels *Avx512Kernels() { return nullptr; }

}  // namespace ms_bcewl::kernel

#endif
