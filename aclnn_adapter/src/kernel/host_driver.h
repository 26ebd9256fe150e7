// The host kernel driver: the functions of bcewl_kernel.h over the per-ISA kernels of isa_kernels.h, in one pass
// over memory per call and on the threads of thread_pool.h.
//
// ISA (isa_selection.h): the best of avx512bf16, avx512, avx2, scalar (x86-64) or of neon, scalar (aarch64) that is
// compiled in and that the CPU supports, chosen once; MS_BCEWL_ISA caps the choice.
//
// Operands (call_plan.h, staging.h). Each input is classified once per call: absent (reads a shared chunk of ones)
// or constant (all strides 0 over the non-trivial dims: a scalar weight; a buffer filled once per task); linear (offset
// == linear index: contiguous, or a full-shape operand) is read in place (float32) or widened chunk by chunk (float16 /
// bfloat16; where x, y and every output are linear and share one 16-bit dtype, the ISA kernels convert them in
// registers instead, with no staging: Plan::xy_dtype);
// anything else (a per-row vector, a per-class constant, a transposed view, ...) is strided: gathered run by run
// along the innermost of the dims merged over the strided views (a memcpy, a fill or a strided copy per run),
// except where it is periodic (broadcast over outer dims, contiguous over the inner ones: a per-class weight of shape
// (C,) beside an (N, C) self): then a chunk reads a copy of the period tiled once per task, or, for a long float32
// period, the input itself where the chunk does not wrap around the period.
// The output is written in place when linear, else staged and scattered the same way.
//
// Chunks and tasks (task_pieces.h). Work is cut into chunks of kChunk elements at fixed multiples of kChunk (for
// reductions, within whole reduction blocks), staged as contiguous float32, and handed to the ISA kernel. The tasks
// (one per thread) take pieces of about kElementsPerPiece elements in turn until none are left. Calls below
// kSerialBelow elements run on the calling thread.
//
// Determinism (block_reductions.h, row_reductions.h). Element values depend only on the element, and every block of
// a reduction is summed in the lane order of bcewl_kernel.h by one task (its partial goes to the workspace; the
// partials of an output are added in block order after the tasks), so results are bitwise the same for every
// thread count.
//
// The public functions: elementwise_and_reductions.cpp, gradients.cpp, loss_and_gradients.cpp.
#ifndef MS_BCEWL_KERNEL_HOST_DRIVER_H_
#define MS_BCEWL_KERNEL_HOST_DRIVER_H_

#include <cstdint>

namespace ms_bcewl::kernel {

constexpr int64_t kChunk = 512;              // elements staged at a time (the staging buffers stay in L1)
constexpr int64_t kSerialBelow = 65536;      // smaller calls run on the calling thread
constexpr int64_t kElementsPerTask = 32768;  // at least this many elements per task
constexpr int64_t kElementsPerPiece = 8192;  // the work a task takes at a time
constexpr int64_t kOutputsPerBatch = 1024;   // block sums kept on a task's stack before they are stored
constexpr int64_t kMaxTiledPeriod = 4096;    // longer periods are not tiled (a task's copy: period + kChunk)

}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_HOST_DRIVER_H_
