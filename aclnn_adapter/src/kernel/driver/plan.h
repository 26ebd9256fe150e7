// The host kernel driver's plan of a call and the means its passes run on: how each view is read or written
// (Plan, Stager), which ISA kernels run (the best the CPU supports, chosen once), and how the work reaches the
// threads (task pieces over a persistent thread pool). passes.h holds the passes themselves.
#ifndef MS_BCEWL_KERNEL_DRIVER_PLAN_H_
#define MS_BCEWL_KERNEL_DRIVER_PLAN_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernel/bcewl_kernel.h"
#include "kernel/isa/float_formats.h"
#include "kernel/isa/isa_kernels.h"

// The host kernel driver: the functions of bcewl_kernel.h over the per-ISA kernels of isa_kernels.h, in one pass
// over memory per call and on the threads of the thread pool below.
//
// ISA (ActiveKernels): the best of avx512bf16, avx512, avx2, scalar (x86-64) or of neon, scalar (aarch64) that is
// compiled in and that the CPU supports, chosen once; MS_BCEWL_ISA caps the choice.
//
// Operands (Plan, Stager). Each input is classified once per call: absent (reads a shared chunk of ones)
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
// Chunks and tasks (the task pieces below). Work is cut into chunks of kChunk elements at fixed multiples of kChunk
// (for reductions, within whole reduction blocks), staged as contiguous float32, and handed to the ISA kernel. The
// tasks (one per thread) take pieces of about kElementsPerPiece elements in turn until none are left. Calls below
// kSerialBelow elements run on the calling thread.
//
// Determinism (the block and row sums of passes.h). Element values depend only on the element, and every block of
// a reduction is summed in the lane order of bcewl_kernel.h by one task (its partial goes to the workspace; the
// partials of an output are added in block order after the tasks), so results are bitwise the same for every
// thread count.
//
// The public functions: passes.cpp.

namespace ms_bcewl::kernel {

constexpr int64_t kChunk = 512;              // elements staged at a time (the staging buffers stay in L1)
constexpr int64_t kSerialBelow = 65536;      // smaller calls run on the calling thread
constexpr int64_t kElementsPerTask = 32768;  // at least this many elements per task
constexpr int64_t kElementsPerPiece = 8192;  // the work a task takes at a time
constexpr int64_t kOutputsPerBatch = 1024;   // block sums kept on a task's stack before they are stored
constexpr int64_t kMaxTiledPeriod = 4096;    // longer periods are not tiled (a task's copy: period + kChunk)

}  // namespace ms_bcewl::kernel

// Which per-ISA kernels a call uses: the best that is compiled in and that the CPU supports (cpuid on x86-64, AT_HWCAP
// on aarch64), chosen once; MS_BCEWL_ISA=scalar|avx2|avx512|avx512bf16|neon (read once, at the first call) caps the
// choice (isa_kernels.h).

namespace ms_bcewl::kernel {

// The kernels of isa where they are compiled in and this CPU supports them, else null.
const IsaKernels *AvailableKernels(Isa isa);

// The kernels of a call: those of ForceKernels where set, else the automatic choice.
const IsaKernels &ActiveKernels();

// Every call uses `kernels` from now on; null: back to the automatic choice (a test hook).
void ForceKernels(const IsaKernels *kernels);

}  // namespace ms_bcewl::kernel

// The plan of a call: how each view (input or output) is read or written, and the problem dims merged as far as the
// strided views allow.

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

// Walks a shape in row-major order from any linear index, keeping the element offset of several strided views.

namespace ms_bcewl::kernel {

template <int kViews>
class StridedCursor {
 public:
  StridedCursor(int rank, const int64_t *shape, const std::array<const int64_t *, kViews> &strides, int64_t start)
      : rank_(rank), strides_(strides) {
    offsets_.fill(0);
    int64_t rest = start;
    for (int dim = rank - 1; dim >= 0; --dim) {
      shape_[dim] = shape[dim];
      index_[dim] = shape[dim] > 0 ? rest % shape[dim] : 0;
      rest = shape[dim] > 0 ? rest / shape[dim] : 0;
      for (int view = 0; view < kViews; ++view) {
        offsets_[view] += index_[dim] * strides_[view][dim];
      }
    }
  }

  int64_t Offset(int view) const { return offsets_[view]; }

  void Next() {
    for (int dim = rank_ - 1; dim >= 0; --dim) {
      if (++index_[dim] < shape_[dim]) {
        for (int view = 0; view < kViews; ++view) {
          offsets_[view] += strides_[view][dim];
        }
        return;
      }
      index_[dim] = 0;
      for (int view = 0; view < kViews; ++view) {
        offsets_[view] -= (shape_[dim] - 1) * strides_[view][dim];
      }
    }
  }

 private:
  int rank_;
  int64_t shape_[kMaxRank] = {};
  int64_t index_[kMaxRank] = {};
  std::array<const int64_t *, kViews> strides_;
  std::array<int64_t, kViews> offsets_;
};

}  // namespace ms_bcewl::kernel

// Loading an element as float32 and storing float32 / float64 results in the three supported dtypes.

namespace ms_bcewl::kernel {

inline size_t ElementBytes(DType dtype) { return dtype == DType::kFloat32 ? 4 : 2; }

inline float LoadElement(const void *data, int64_t index, DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return HalfToFloat(static_cast<const uint16_t *>(data)[index]);
    case DType::kBFloat16:
      return BFloat16ToFloat(static_cast<const uint16_t *>(data)[index]);
    case DType::kFloat32:
      break;
  }
  return static_cast<const float *>(data)[index];
}

inline void StoreElement(void *data, int64_t index, DType dtype, float value) {
  switch (dtype) {
    case DType::kFloat16:
      static_cast<uint16_t *>(data)[index] = FloatToHalf(value);
      return;
    case DType::kBFloat16:
      static_cast<uint16_t *>(data)[index] = FloatToBFloat16(value);
      return;
    case DType::kFloat32:
      static_cast<float *>(data)[index] = value;
      return;
  }
}

// One correctly rounded cast from the float64 accumulator to the destination dtype.
inline void StoreElementFromDouble(void *data, int64_t index, DType dtype, double value) {
  if (dtype == DType::kFloat32) {
    static_cast<float *>(data)[index] = static_cast<float>(value);
  } else {
    StoreElement(data, index, dtype, DoubleToFloatRoundingToOdd(value));
  }
}

}  // namespace ms_bcewl::kernel

// Staging: one task's buffers through which each chunk's inputs reach the ISA kernels as contiguous float32, and
// through which its values reach outputs that the kernels cannot write in place.

namespace ms_bcewl::kernel {

// Calls run(offset, stride, done, length) for the runs of elements [first, first + count) of a strided view:
// `length` elements at view offsets offset + i * stride, which are elements first + done + i.
template <class Run>
void ForEachRun(const Plan &plan, int view, int64_t first, int64_t count, Run &&run) {
  const int64_t row_length = plan.shape[plan.outer_rank];
  const int64_t stride = plan.strides[view][plan.outer_rank];
  StridedCursor<1> rows(plan.outer_rank, plan.shape, {plan.strides[view]}, first / row_length);
  int64_t column = first % row_length;
  for (int64_t done = 0; done < count; rows.Next()) {
    const int64_t length = std::min(row_length - column, count - done);
    run(rows.Offset(0) + column * stride, stride, done, length);
    done += length;
    column = 0;
  }
}

template <typename T>
void CopyRun(T *destination, int64_t destination_stride, const T *source, int64_t source_stride, int64_t length) {
  if (destination_stride == 1 && source_stride == 1) {
    std::memcpy(destination, source, static_cast<size_t>(length) * sizeof(T));
    return;
  }
  for (int64_t i = 0; i < length; ++i) {
    std::memcpy(destination + i * destination_stride, source + i * source_stride, sizeof(T));
  }
}

template <typename T>
void Gather(const Plan &plan, int view, int64_t first, int64_t count, T *packed) {
  const T *data = static_cast<const T *>(plan.views[view].data);
  ForEachRun(plan, view, first, count, [&](int64_t offset, int64_t stride, int64_t done, int64_t length) {
    CopyRun(packed + done, 1, data + offset, stride, length);
  });
}

template <typename T>
void Scatter(const Plan &plan, int view, int64_t first, int64_t count, const T *packed) {
  T *data = static_cast<T *>(const_cast<void *>(plan.views[view].data));
  ForEachRun(plan, view, first, count, [&](int64_t offset, int64_t stride, int64_t done, int64_t length) {
    CopyRun(data + offset, stride, packed + done, 1, length);
  });
}

// What an absent input reads: a chunk of ones, shared, so that no call fills one (g++ -O2 fills with scalar
// stores).
constexpr std::array<float, kChunk> OnesChunk() {
  std::array<float, kChunk> ones{};
  for (size_t i = 0; i < ones.size(); ++i) {
    ones[i] = 1.0f;
  }
  return ones;
}
alignas(64) inline constexpr std::array<float, kChunk> kOnesChunk = OnesChunk();

// Whether an input is 1 everywhere.
inline bool IsOne(const View &input) {
  return input.source == Source::kOnes || (input.source == Source::kConstant && input.constant == 1.0f);
}

// One task's staging buffers: each chunk's inputs as contiguous float32, and its output values. The per-chunk
// members are defined here, to inline into the loops of the passes.
class Stager {
 public:
  // `elements` bounds the chunk sizes the task will stage (so that a small call fills only what it uses).
  Stager(const Plan &plan, int64_t elements);

  RowInputs Inputs(int64_t first, int64_t count) {
    const bool in_registers = plan_.xy_dtype != DType::kFloat32;  // x and y are then read where they are
    RowInputs in{in_registers ? nullptr : Input(0, first, count), in_registers ? nullptr : Input(1, first, count),
                 Input(2, first, count), Input(3, first, count), Input(4, first, count)};
    in.unit_weight = IsOne(plan_.views[2]);
    in.unit_pos_weight = IsOne(plan_.views[3]);
    if (in_registers) {
      in.xy_dtype = plan_.xy_dtype;
      in.x16 = static_cast<const uint16_t *>(plan_.views[0].data) + first;
      in.y16 = static_cast<const uint16_t *>(plan_.views[1].data) + first;
    }
    return in;
  }

  // Where the values of elements [first, first + count) of output `output` go: the output itself when it is
  // linear float32 or the plan converts it in registers, else float32 staging.
  void *OutputValues(int output, int64_t first) {
    const int view = kFirstOutput + output;
    const View &out = plan_.views[view];
    if (plan_.xy_dtype != DType::kFloat32) {
      return static_cast<uint16_t *>(const_cast<void *>(out.data)) + first;
    }
    if (out.source == Source::kLinear && out.dtype == DType::kFloat32) {
      return static_cast<float *>(const_cast<void *>(out.data)) + first;
    }
    return buffers_[view];
  }

  // Writes the values of OutputValues(output, first) to the output.
  void StoreOutput(int output, int64_t first, int64_t count) {
    if (plan_.xy_dtype != DType::kFloat32) {
      return;  // the ISA kernels wrote the output in place
    }
    const int view = kFirstOutput + output;
    const View &out = plan_.views[view];
    if (out.dtype == DType::kFloat32) {
      if (out.source == Source::kStrided) {
        Scatter(plan_, view, first, count, buffers_[view]);
      }
      return;
    }
    if (out.source == Source::kLinear) {
      plan_.kernels->narrow(out.dtype, buffers_[view], count,
                            static_cast<uint16_t *>(const_cast<void *>(out.data)) + first);
      return;
    }
    plan_.kernels->narrow(out.dtype, buffers_[view], count, sixteen_bits_);
    Scatter(plan_, view, first, count, sixteen_bits_);
  }

  // float32 room for a chunk's values of summed quantity `sum` (0 or 1), which go to lane sums, not to an output.
  float *SumValues(int sum) { return sum_values_[sum]; }

 private:
  const float *Input(int view, int64_t first, int64_t count) {
    const View &input = plan_.views[view];
    float *buffer = buffers_[view];
    switch (input.source) {
      case Source::kOnes:
        return kOnesChunk.data();
      case Source::kConstant:
        return buffer;
      case Source::kLinear:
        if (input.dtype == DType::kFloat32) {
          return static_cast<const float *>(input.data) + first;
        }
        plan_.kernels->widen(input.dtype, static_cast<const uint16_t *>(input.data) + first, count, buffer);
        return buffer;
      case Source::kStrided:
        if (const float *values = PeriodicValues(view, first, count)) {
          return values;
        }
        if (input.dtype == DType::kFloat32) {
          Gather(plan_, view, first, count, buffer);
        } else {
          Gather(plan_, view, first, count, sixteen_bits_);
          plan_.kernels->widen(input.dtype, sixteen_bits_, count, buffer);
        }
        return buffer;
    }
    return buffer;
  }

  // The values of elements [first, first + count) of a periodic input where they lie in one run: in its tiled copy,
  // or, float32, in the input itself when they do not wrap around the period. Null otherwise.
  const float *PeriodicValues(int view, int64_t first, int64_t count) const {
    const View &input = plan_.views[view];
    if (input.period == 0) {
      return nullptr;
    }
    const int64_t phase = first % input.period;
    if (!tiled_[view].empty()) {
      return tiled_[view].data() + phase;
    }
    if (input.dtype == DType::kFloat32 && phase + count <= input.period) {
      return static_cast<const float *>(input.data) + phase;
    }
    return nullptr;
  }

  // *tiled = `length` values of the periodic input: its period, repeated, as float32.
  void Tile(const View &input, int64_t length, std::vector<float> *tiled) const;

  const Plan &plan_;
  std::vector<float> tiled_[kInputs];  // periodic inputs (period <= kMaxTiledPeriod): the period, repeated
  alignas(64) float buffers_[kViews][kChunk];
  alignas(64) float sum_values_[2][kChunk];
  alignas(64) uint16_t sixteen_bits_[kChunk];
};

}  // namespace ms_bcewl::kernel

// The host kernels' threads: a small persistent pool for fork-join loops over a fixed number of tasks.
//
// The pool starts its workers on first use and keeps them; a loop of n tasks runs task 0 on the calling thread and
// tasks 1 .. n-1 on the workers, or on the calling thread where no worker has started them by the time it has
// finished task 0, and returns when all are done. One loop runs at a time: a loop started while
// another is running (another thread's call, or a nested one) runs its tasks one after the other on the calling
// thread, which gives the same results (the kernels' results never depend on how tasks are spread over threads).
// A child process after fork() gets a fresh pool. On Linux a worker woken for a loop keeps off the CPU the loop's
// caller is on (a worker woken on its waker's CPU after an idle spell would otherwise share it for the whole loop).

namespace ms_bcewl::kernel {

// The threads a loop may use: SetKernelThreads's value, else MS_BCEWL_NUM_THREADS (a positive integer, read once),
// else std::thread::hardware_concurrency() (no more than the cores this process may run on); at least 1, at most
// kMaxKernelThreads.
constexpr int kMaxKernelThreads = 256;
int KernelThreads();
void SetKernelThreads(int threads);  // 0 or less: back to the default

using TaskFunction = void (*)(void *context, int task);
void RunTasks(int tasks, TaskFunction function, void *context);

// Held workers do not wake for new loops (their callers run every task), until released: lets a test check that
// a loop never waits for a worker that has not started.
void HoldWorkersForTesting(bool held);

// The task count of the latest loop, for tests: what the kernels decided, whatever the scheduler then did.
int LatestLoopTasks();
void NoteLoopTasks(int tasks);

// Calls body(task) for task = 0 .. tasks - 1, spread over the pool's threads.
template <class Body>
void ParallelFor(int tasks, Body &body) {
  NoteLoopTasks(tasks);
  if (tasks <= 1) {
    body(0);
    return;
  }
  RunTasks(tasks, [](void *context, int task) { (*static_cast<Body *>(context))(task); }, &body);
}

}  // namespace ms_bcewl::kernel

// How a pass's work reaches the threads: pieces taken in turn by the tasks, and chunks of at most kChunk elements
// within a piece, at positions that do not depend on the thread count.

namespace ms_bcewl::kernel {

// Calls body(first, count) for the chunks of [begin, end): pieces of at most kChunk elements that end at multiples
// of kChunk (so the same elements share a chunk whatever the task ranges).
template <class Body>
void ForEachChunk(int64_t begin, int64_t end, Body &&body) {
  for (int64_t first = begin; first < end;) {
    const int64_t last = std::min(end, (first / kChunk + 1) * kChunk);
    body(first, last - first);
    first = last;
  }
}

// Calls body(stager, first, last) for the pieces [first, last) of [0, units), units_per_piece units each, on
// `tasks` threads: a thread takes the next piece whenever it finishes one, so one that starts late or is preempted
// leaves its share to the others. No result depends on which thread takes a piece.
template <class Body>
void ForEachPiece(const Plan &plan, int tasks, int64_t numel, int64_t units, int64_t units_per_piece, Body &&body) {
  std::atomic<int64_t> next{0};
  auto task = [&](int) {
    Stager stager(plan, numel);
    for (int64_t first; (first = next.fetch_add(units_per_piece, std::memory_order_relaxed)) < units;) {
      body(stager, first, std::min(units, first + units_per_piece));
    }
  };
  ParallelFor(tasks, task);
}

// The tasks of a call of `numel` elements cut into `units` that no two tasks share.
inline int TaskCount(int64_t numel, int64_t units) {
  if (numel < kSerialBelow) {
    return 1;
  }
  const int64_t tasks = std::min({static_cast<int64_t>(KernelThreads()), units, numel / kElementsPerTask});
  return static_cast<int>(std::max<int64_t>(tasks, 1));
}

}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_DRIVER_PLAN_H_
