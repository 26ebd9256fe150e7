// The plan of a call: how each view (input or output) is read or written, and the problem dims merged as far as the
// strided views allow.
#ifndef MS_BCEWL_KERNEL_CALL_PLAN_H_
#define MS_BCEWL_KERNEL_CALL_PLAN_H_

#include <cstdint>

#include "kernel/bcewl_kernel.h"
#include "kernel/isa_kernels.h"

namespace ms_bcewl::kernel {

// The views of a call: the five inputs, then (for elementwise work) up to four outputs (dx, dy, dw, dp).
constexpr int kInputs = 5;
constexpr int kFirstOutput = 5;
constexpr int kMaxOutputs = 4;
constexpr int kViews = kInputs + kMaxOutputs;

enum class Source : uint8_t { kOnes, kConstant, kLinear, kStrided };

struct View {
  Source source = Source::kOnes;
  const void *data = nullptr;
  DType dtype = DType::kFloat32;
  float constant = 1.0f;
  int64_t period = 0;  // a periodic strided view (PeriodOf): element i is data[i % period]; else 0
};

struct Plan {
  const IsaKernels *kernels = nullptr;
  View views[kViews];
  // float16 / bfloat16 where x, y and every output are linear views of that dtype: the ISA kernels read and write
  // them in place (RowInputs::xy_dtype); float32 otherwise.
  DType xy_dtype = DType::kFloat32;
  // The problem dims without those of size 1, adjacent ones merged where every strided view allows it; the last
  // merged dim is the run along which strided views are copied.
  int outer_rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[kViews][kMaxRank] = {};
};

// outs: the `out_count` destinations of elementwise work (none for a reduction). in_registers: whether the ISA
// kernels may read x and y (and write the outputs) in their 16-bit dtype.
Plan MakePlan(const Problem &problem, const Destination *outs, int out_count, bool in_registers);

}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_CALL_PLAN_H_
