// Elementwise passes: each chunk's values computed into up to kMaxOutputs outputs, in place or through staging.
#ifndef MS_BCEWL_KERNEL_ELEMENTWISE_PASS_H_
#define MS_BCEWL_KERNEL_ELEMENTWISE_PASS_H_

#include <algorithm>
#include <cstdint>

#include "kernel/bcewl_kernel.h"
#include "kernel/call_plan.h"
#include "kernel/host_driver.h"
#include "kernel/staging.h"
#include "kernel/task_pieces.h"

namespace ms_bcewl::kernel {

// compute(values), where values[k] is where the values of elements [first, first + count) of output k go (k <
// out_count); then writes them to the outputs.
template <class Compute>
void WriteOutputs(Stager &stager, int out_count, int64_t first, int64_t count, Compute &&compute) {
  void *values[kMaxOutputs] = {};
  for (int output = 0; output < out_count; ++output) {
    values[output] = stager.OutputValues(output, first);
  }
  compute(values);
  for (int output = 0; output < out_count; ++output) {
    stager.StoreOutput(output, first, count);
  }
}

// Elementwise work into `out_count` outputs: compute(kernels, count, inputs, values) fills values[k] with the
// values of output k for one chunk. in_registers: whether the ISA kernel may read x and y and write every output
// in their 16-bit dtype (MakePlan); otherwise values[k] is float32.
template <class Compute>
void ComputeOutputs(const Problem &problem, const Destination *outs, int out_count, bool in_registers,
                    Compute &&compute) {
  if (problem.numel == 0) {
    return;
  }
  const Plan plan = MakePlan(problem, outs, out_count, in_registers);
  const int64_t chunks = (problem.numel + kChunk - 1) / kChunk;
  const int tasks = TaskCount(problem.numel, chunks);
  ForEachPiece(plan, tasks, problem.numel, chunks, kElementsPerPiece / kChunk,
               [&](Stager &stager, int64_t first_chunk, int64_t last_chunk) {
                 ForEachChunk(first_chunk * kChunk, std::min(problem.numel, last_chunk * kChunk),
                              [&](int64_t first, int64_t count) {
                                WriteOutputs(stager, out_count, first, count, [&](void *const *values) {
                                  compute(*plan.kernels, count, stager.Inputs(first, count), values);
                                });
                              });
               });
}

}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_ELEMENTWISE_PASS_H_
