// The host kernel driver: ComputeElementwise, ComputeReduction and Fill of bcewl_kernel.h over the per-ISA kernels
// of isa_kernels.h, in one pass over memory per call and on the threads of thread_pool.h.
//
// ISA: the best of avx512bf16, avx512, avx2, scalar that is compiled in and that the CPU supports
// (__builtin_cpu_supports), chosen once; MS_BCEWL_ISA=scalar|avx2|avx512|avx512bf16 (read once, at the first call)
// caps the choice.
//
// Operands. Each input is classified once per call: absent (reads as 1) or constant (all strides 0 over the
// non-trivial dims: a scalar weight) come from a buffer filled once per task; linear (offset == linear index:
// contiguous, or a full-shape operand) is read in place (float32) or widened chunk by chunk (float16 / bfloat16;
// where x, y and every output are linear and share one 16-bit dtype, the ISA kernels convert them in registers
// instead, with no staging: Plan::xy_dtype);
// anything else (a per-row vector, a per-class constant, a transposed view, ...) is strided: gathered run by run
// along the innermost of the dims merged over the strided views (a memcpy, a fill or a strided copy per run),
// except where it is periodic (broadcast over outer dims, contiguous over the inner ones: a per-class weight of shape
// (C,) beside an (N, C) self): then a chunk reads a copy of the period tiled once per task, or, for a long float32
// period, the input itself where the chunk does not wrap around the period.
// The output is written in place when linear, else staged and scattered the same way.
//
// Work is cut into chunks of kChunk elements at fixed multiples of kChunk (for reductions, within whole reduction
// blocks), staged as contiguous float32, and handed to the ISA kernel. The tasks (one per thread) take pieces of
// about kElementsPerPiece elements in turn until none are left. Calls below kSerialBelow elements run on the calling
// thread. Element values depend only on the element, and every block of a
// reduction is summed in the lane order of bcewl_kernel.h by one task (its partial goes to the workspace; the
// partials of an output are added in block order after the tasks), so results are bitwise the same for every
// thread count.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <vector>

#include "kernel/bcewl_kernel.h"
#include "kernel/element_access.h"
#include "kernel/isa_kernels.h"
#include "kernel/kernel_testing.h"
#include "kernel/strided_cursor.h"
#include "kernel/thread_pool.h"

namespace ms_bcewl::kernel {

void BlockSums::Open(int64_t start, int64_t contributions_per_output, double *destination) {
  std::fill(lanes, lanes + kSumLanes, 0.0);
  filled = 0;
  partials = destination;
  position = start;
  per_output = contributions_per_output;
  length = std::min(kReductionBlockElements, per_output - position);
}

namespace {

// The sum of a block of `length` contributions from its lanes: lane j += lane j + h for h = 8, 4, 2, 1. Lanes the
// block never reached hold +0.0 and are left out (adding +0.0 changes no lane sum: a sum that starts at +0.0 is
// never -0.0).
double FoldLanes(double *lanes, int64_t length) {
  int width = kSumLanes;
  while (width / 2 >= length) {
    width /= 2;
  }
  for (int half = width / 2; half > 0; half /= 2) {
    for (int lane = 0; lane < half; ++lane) {
      lanes[lane] += lanes[lane + half];
    }
  }
  return lanes[0];
}

}  // namespace

void BlockSums::Close() {
  *partials++ = FoldLanes(lanes, length);
  const int64_t next = position + kReductionBlockElements;
  Open(next >= per_output ? 0 : next, per_output, partials);
}

namespace {

constexpr int64_t kChunk = 512;                // elements staged at a time (the staging buffers stay in L1)
constexpr int64_t kSerialBelow = 65536;        // smaller calls run on the calling thread
constexpr int64_t kElementsPerTask = 32768;    // at least this many elements per task
constexpr int64_t kElementsPerPiece = 8192;    // the work a task takes at a time
constexpr int64_t kOutputsPerBatch = 1024;     // block sums kept on a task's stack before they are stored
constexpr int64_t kMaxTiledPeriod = 4096;      // longer periods are not tiled (a task's copy: period + kChunk)

// ---- ISA selection ----

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

const IsaKernels &ActiveKernels() {
  const IsaKernels *forced = g_forced_kernels.load(std::memory_order_acquire);
  return forced != nullptr ? *forced : AutomaticKernels();
}

// ---- the plan of a call ----

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

bool AllDims(const Problem &problem, const int64_t *strides, bool (*fits)(int64_t stride, int64_t contiguous)) {
  int64_t contiguous = 1;
  for (int dim = problem.rank - 1; dim >= 0; --dim) {
    if (problem.shape[dim] != 1 && !fits(strides[dim], contiguous)) {
      return false;
    }
    contiguous *= problem.shape[dim];
  }
  return true;
}

// The period of a view that is broadcast (stride 0) over the outer dims and contiguous over the inner ones: its
// element i is data[i % period]. 0 for any other view.
int64_t PeriodOf(const Problem &problem, const int64_t *strides) {
  int64_t period = 1;
  int dim = problem.rank - 1;
  for (; dim >= 0 && (problem.shape[dim] == 1 || strides[dim] == period); --dim) {
    period *= problem.shape[dim];
  }
  for (; dim >= 0; --dim) {
    if (problem.shape[dim] != 1 && strides[dim] != 0) {
      return 0;
    }
  }
  return period;
}

View Classify(const Problem &problem, const void *data, DType dtype, const int64_t *strides) {
  View view;
  view.data = data;
  view.dtype = dtype;
  if (data == nullptr) {
    view.source = Source::kOnes;
  } else if (AllDims(problem, strides, [](int64_t stride, int64_t) { return stride == 0; })) {
    view.source = Source::kConstant;
    view.constant = LoadElement(data, 0, dtype);
  } else if (AllDims(problem, strides, [](int64_t stride, int64_t contiguous) { return stride == contiguous; })) {
    view.source = Source::kLinear;
  } else {
    view.source = Source::kStrided;
    view.period = PeriodOf(problem, strides);
  }
  return view;
}

// The dtype that x, y and the outputs share, where the ISA kernels may convert them in registers: all linear and
// of one 16-bit dtype. float32 otherwise (float32 views are read and written in place anyway).
DType InRegistersDType(const Plan &plan, int out_count) {
  const DType dtype = plan.views[0].dtype;
  const auto shares = [&](int view) {
    return plan.views[view].source == Source::kLinear && plan.views[view].dtype == dtype;
  };
  bool all_share = dtype != DType::kFloat32 && shares(0) && shares(1);
  for (int output = 0; output < out_count; ++output) {
    all_share = all_share && shares(kFirstOutput + output);
  }
  return all_share ? dtype : DType::kFloat32;
}

// outs: the `out_count` destinations of elementwise work (none for a reduction). in_registers: whether the ISA
// kernels may read x and y (and write the outputs) in their 16-bit dtype.
Plan MakePlan(const Problem &problem, const Destination *outs, int out_count, bool in_registers) {
  Plan plan;
  plan.kernels = &ActiveKernels();
  const Operand *inputs[kInputs] = {&problem.self, &problem.target, &problem.weight, &problem.pos_weight,
                                    &problem.grad_output};
  const int64_t *strides[kViews] = {};
  for (int view = 0; view < kInputs; ++view) {
    plan.views[view] = Classify(problem, inputs[view]->data, inputs[view]->dtype, inputs[view]->strides);
    strides[view] = inputs[view]->strides;
  }
  for (int output = 0; output < kMaxOutputs; ++output) {
    const int view = kFirstOutput + output;
    strides[view] = problem.self.strides;  // unused unless there is such an output
    if (output < out_count) {
      plan.views[view] = Classify(problem, outs[output].data, outs[output].dtype, outs[output].strides);
      if (plan.views[view].source != Source::kLinear) {
        plan.views[view].source = Source::kStrided;  // (a constant output view is written element after element)
      }
      strides[view] = outs[output].strides;
    }
  }
  int merged = 0;
  for (int dim = 0; dim < problem.rank; ++dim) {
    const int64_t size = problem.shape[dim];
    if (size == 1) {
      continue;
    }
    bool mergeable = merged > 0;
    for (int view = 0; view < kViews && mergeable; ++view) {
      mergeable = plan.views[view].source != Source::kStrided ||
                  plan.strides[view][merged - 1] == strides[view][dim] * size;
    }
    if (!mergeable) {
      plan.shape[merged++] = 1;
    }
    plan.shape[merged - 1] *= size;
    for (int view = 0; view < kViews; ++view) {
      plan.strides[view][merged - 1] = strides[view][dim];
    }
  }
  if (merged == 0) {
    plan.shape[merged++] = 1;
  }
  plan.outer_rank = merged - 1;
  plan.xy_dtype = in_registers ? InRegistersDType(plan, out_count) : DType::kFloat32;
  return plan;
}

// ---- staging ----

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

// What an absent input reads: a chunk of ones, shared, so that no call fills one (g++ -O2 fills with scalar stores:
// 0.4 us a call for the three of a forward).
constexpr std::array<float, kChunk> OnesChunk() {
  std::array<float, kChunk> ones{};
  for (size_t i = 0; i < ones.size(); ++i) {
    ones[i] = 1.0f;
  }
  return ones;
}
alignas(64) constexpr std::array<float, kChunk> kOnesChunk = OnesChunk();

// Whether an input is 1 everywhere.
bool IsOne(const View &input) {
  return input.source == Source::kOnes || (input.source == Source::kConstant && input.constant == 1.0f);
}

// One task's staging buffers: each chunk's inputs as contiguous float32, and its output values. `elements` bounds
// the chunk sizes the task will stage (so that a small call fills only what it uses).
class Stager {
 public:
  Stager(const Plan &plan, int64_t elements) : plan_(plan) {
    const int64_t used = std::min(kChunk, elements);
    for (int view = 0; view < kInputs; ++view) {
      const View &input = plan.views[view];
      if (input.source == Source::kConstant) {
        std::fill(buffers_[view], buffers_[view] + used, input.constant);
      } else if (input.period > 0 && input.period <= kMaxTiledPeriod) {
        Tile(input, input.period + used, &tiled_[view]);
      }
    }
  }

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
  void Tile(const View &input, int64_t length, std::vector<float> *tiled) const {
    tiled->resize(static_cast<size_t>(length));
    float *values = tiled->data();
    if (input.dtype == DType::kFloat32) {
      std::memcpy(values, input.data, static_cast<size_t>(input.period) * sizeof(float));
    } else {
      plan_.kernels->widen(input.dtype, static_cast<const uint16_t *>(input.data), input.period, values);
    }
    for (int64_t filled = input.period; filled < length;) {
      const int64_t copied = std::min(filled, length - filled);
      std::memcpy(values + filled, values, static_cast<size_t>(copied) * sizeof(float));
      filled += copied;
    }
  }

  const Plan &plan_;
  std::vector<float> tiled_[kInputs];  // periodic inputs (period <= kMaxTiledPeriod): the period, repeated
  alignas(64) float buffers_[kViews][kChunk];
  alignas(64) float sum_values_[2][kChunk];
  alignas(64) uint16_t sixteen_bits_[kChunk];
};

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

int TaskCount(int64_t numel, int64_t units) {
  if (numel < kSerialBelow) {
    return 1;
  }
  const int64_t tasks = std::min({static_cast<int64_t>(KernelThreads()), units, numel / kElementsPerTask});
  return static_cast<int>(std::max<int64_t>(tasks, 1));
}

// ---- reductions ----

int64_t BlockStart(const Reduction &reduction, int64_t block) {
  const int64_t output = block / reduction.blocks_per_output;
  return output * reduction.per_output + (block % reduction.blocks_per_output) * kReductionBlockElements;
}

// Sums blocks [first_block, last_block) into partials[0 .. last_block - first_block): add_chunk(stager, first,
// count, sums) adds the contributions of elements [first, first + count) to *sums.
template <class AddChunk>
void SumBlocks(Stager &stager, const Reduction &reduction, int64_t first_block, int64_t last_block, double *partials,
               AddChunk &&add_chunk) {
  BlockSums sums;
  sums.Open((first_block % reduction.blocks_per_output) * kReductionBlockElements, reduction.per_output, partials);
  ForEachChunk(BlockStart(reduction, first_block), BlockStart(reduction, last_block),
               [&](int64_t first, int64_t count) { add_chunk(stager, first, count, &sums); });
}

// out[o] = cast(total_of(o) * scale) for outputs [first, first + count).
template <class TotalOf>
void StoreOutputs(const Reduction &reduction, double scale, int64_t first, int64_t count, TotalOf &&total_of) {
  // The kept dims lead the reordered problem: the outputs are their row-major elements.
  int kept_rank = reduction.problem.rank;
  for (int64_t reduced = 1; kept_rank > 0 && reduced < reduction.per_output;) {
    reduced *= reduction.problem.shape[--kept_rank];
  }
  StridedCursor<1> cursor(kept_rank, reduction.problem.shape, {reduction.out.strides}, first);
  for (int64_t output = first; output < first + count; ++output, cursor.Next()) {
    StoreElementFromDouble(reduction.out.data, cursor.Offset(0), reduction.out.dtype, total_of(output) * scale);
  }
}

// out[o] = cast(scale * the block partials of o added in block order), partials[o * blocks_per_output + block].
void StoreBlockTotals(const Reduction &reduction, double scale, const double *partials) {
  StoreOutputs(reduction, scale, 0, reduction.outputs, [&](int64_t output) {
    double total = 0.0;
    for (int64_t block = 0; block < reduction.blocks_per_output; ++block) {
      total += partials[output * reduction.blocks_per_output + block];
    }
    return total;
  });
}

// Sums the blocks of `reduction` on the tasks, add_chunk as in SumBlocks, and stores each output's total times
// total_scale; the block partials go to workspace (ReductionWorkspaceBytes; or a buffer of its own where that is
// null), or straight to the outputs where an output has one block.
template <class AddChunk>
void SumInBlocks(const Plan &plan, const Reduction &reduction, double total_scale, double *workspace,
                 AddChunk &&add_chunk) {
  const int64_t blocks_per_output = reduction.blocks_per_output;
  const int64_t blocks = reduction.outputs * blocks_per_output;
  std::vector<double> own_workspace;
  if (blocks_per_output > 1 && workspace == nullptr) {
    own_workspace.resize(static_cast<size_t>(blocks));
    workspace = own_workspace.data();
  }
  const int tasks = TaskCount(reduction.problem.numel, blocks);
  const int64_t block_elements = std::min(kReductionBlockElements, reduction.per_output);
  const int64_t blocks_per_piece = std::clamp(kElementsPerPiece / block_elements, int64_t{1}, kOutputsPerBatch);
  ForEachPiece(plan, tasks, reduction.problem.numel, blocks, blocks_per_piece,
               [&](Stager &stager, int64_t first, int64_t last) {
                 if (blocks_per_output > 1) {  // block partials into the workspace; outputs after all tasks
                   SumBlocks(stager, reduction, first, last, workspace + first, add_chunk);
                   return;
                 }
                 double totals[kOutputsPerBatch];  // one block per output
                 SumBlocks(stager, reduction, first, last, totals, add_chunk);
                 StoreOutputs(reduction, total_scale, first, last - first,
                              [&](int64_t output) { return totals[output - first]; });
               });
  if (blocks_per_output > 1) {
    StoreBlockTotals(reduction, total_scale, workspace);
  }
}

// Where the block partials of each weight gradient go in a workspace laid out as GradientsWorkspaceBytes says:
// weight's, then pos_weight's (null where the workspace is).
std::array<double *, 2> WeightWorkspaces(const Reduction *grad_weight, double *workspace) {
  std::array<double *, 2> workspaces = {workspace, workspace};
  if (grad_weight != nullptr && workspace != nullptr) {
    workspaces[1] += ReductionWorkspaceBytes(*grad_weight) / sizeof(double);
  }
  return workspaces;
}

// ---- reductions that keep the innermost dims (the gradient of a per-class weight or pos_weight) ----
//
// In its own dim order such a problem is [reduced dims][kept dims]: its row r, the `outputs` consecutive elements
// r * outputs .., adds the r-th contribution to every output. Taken row after row, each output's lanes receive the
// same values in the same order as in SumBlocks, so the results are bitwise the same; but memory is read once, in
// order, instead of once per output at a stride. Lane sums of kSumLanes rows are kept for every output, hence the
// limit on outputs.
constexpr int64_t kMaxRowOutputs = 4096;
std::atomic<bool> g_row_reductions{true};  // a test hook turns it off to compare with the general path

// (One row, per_output == 1, has nothing to sum: ComputeReduction writes it elementwise.)
bool SumsRowByRow(const Reduction &reduction) {
  return reduction.kept_dims_innermost && reduction.outputs > 1 && reduction.outputs <= kMaxRowOutputs &&
         reduction.per_output > 1 && g_row_reductions.load(std::memory_order_relaxed);
}

// The rows of a row block that start at row first_row: kReductionBlockElements, fewer for the last block.
struct RowBlock {
  int64_t first_row;
  int64_t rows;
};

RowBlock RowBlockOf(const Reduction &reduction, int64_t block) {
  const int64_t first_row = block * kReductionBlockElements;
  return {first_row, std::min(kReductionBlockElements, reduction.per_output - first_row)};
}

// Adds the values of elements [first, first + count) of a row block to lanes: kSumLanes rows of `columns` lane
// sums, the element in row r and column c to lane (r % kSumLanes) * columns + c.
void AddToRowLanes(const IsaKernels &kernels, const float *values, int64_t first, int64_t count, int64_t columns,
                   const RowBlock &block, double *lanes) {
  int64_t row = first / columns - block.first_row;
  int64_t column = first % columns;
  for (int64_t done = 0; done < count; ++row, column = 0) {
    const int64_t length = std::min(count - done, columns - column);
    kernels.add_to_sums(values + done, length, lanes + (row % kSumLanes) * columns + column);
    done += length;
  }
}

// Folds the lanes of a row block into the partial of each output: partials[column * blocks_per_output + block].
void FoldRowLanes(const Reduction &reduction, int64_t block, const RowBlock &rows, const double *lanes,
                  double *partials) {
  for (int64_t column = 0; column < reduction.outputs; ++column) {
    double column_lanes[kSumLanes];
    for (int lane = 0; lane < kSumLanes; ++lane) {
      column_lanes[lane] = lanes[lane * reduction.outputs + column];
    }
    partials[column * reduction.blocks_per_output + block] = FoldLanes(column_lanes, rows.rows);
  }
}

// Where the block partials of a reduction go: the caller's workspace, or (with one block per output, when the
// caller's workspace has 0 bytes: ReductionWorkspaceBytes) `own`.
double *PartialsOf(const Reduction &reduction, double *workspace, std::vector<double> &own) {
  if (reduction.blocks_per_output > 1 && workspace != nullptr) {
    return workspace;
  }
  own.resize(static_cast<size_t>(reduction.outputs * reduction.blocks_per_output));
  return own.data();
}

// Reductions that sum row by row over one pass of a problem: [0] and [1] (that of weight and that of pos_weight in
// ComputeGradients; a single one in [0] otherwise), null where absent, all with the same outputs (columns), with
// where their block partials go; and, where `loss` is not null, the loss summed over every dim in the same pass.
struct RowSums {
  const Reduction *joined[2] = {};
  double *partials[2] = {};
  const Reduction *loss = nullptr;  // one output; its blocks tile each row block (columns of them)
  double *loss_partials = nullptr;
  double loss_scale = 1.0;
  float *staged_loss = nullptr;  // instead of `loss`: where the pass writes each element's loss, for a sum after it

  const Reduction *First() const { return joined[0] != nullptr ? joined[0] : joined[1]; }
};

// Lane groups per row block, a divisor of kSumLanes. The lanes of a row block are independent, each summing its
// rows in order, so `groups` tasks can share a block, each taking the rows of kSumLanes / groups lanes: as many
// groups as an elementwise pass has tasks for the row blocks to feed, as long as a group's runs of rows hold a
// chunk's worth of elements. (A pass that sums the loss takes 1: the loss's blocks run across the lanes.)
int LaneGroups(const Reduction &reduction) {
  const int64_t numel = reduction.natural.numel;
  const int64_t wanted = TaskCount(numel, (numel + kChunk - 1) / kChunk);
  int groups = 1;
  while (groups < kSumLanes && reduction.blocks_per_output * groups < wanted &&
         (kSumLanes / (2 * groups)) * reduction.outputs >= kChunk) {
    groups *= 2;
  }
  return groups;
}

// Calls body(first_row, rows) for the runs of rows of lane group `group` (of `groups`) in a row block: the rows r
// with (r - first row of the block) % kSumLanes in [group, group + 1) * kSumLanes / groups.
template <class Body>
void ForEachRowRun(const RowBlock &block, int groups, int group, Body &&body) {
  const int64_t end = block.first_row + block.rows;
  if (groups == 1) {
    body(block.first_row, block.rows);
    return;
  }
  const int64_t run = kSumLanes / groups;
  for (int64_t first_row = block.first_row + group * run; first_row < end; first_row += kSumLanes) {
    body(first_row, std::min(run, end - first_row));
  }
}

// The reductions of `sums` over the problem, row block by row block (each shared by LaneGroups tasks):
// compute(stager, first, count, values, loss_sums) fills values[k] (where sums.joined[k]) with the contributions of
// elements [first, first + count), adds their losses to *loss_sums (where sums.loss), and may write elementwise
// outputs of the plan. Each block's lanes get the values in the order of bcewl_kernel.h, in a task's own lanes
// (no cache line shared with another task while it adds), which it then copies to the block's; the blocks are
// folded after every task is done. The totals are multiplied by total_scale (the loss's by loss_scale). A row block
// of kReductionBlockElements rows is `columns` whole blocks of the loss, so the loss's blocks close within the row
// block that opened them.
template <class Compute>
void SumRowBlocks(const Plan &plan, const Problem &problem, const RowSums &sums, double total_scale,
                  Compute &&compute) {
  const Reduction &first = *sums.First();
  const int64_t columns = first.outputs;
  const int groups = sums.loss != nullptr ? 1 : LaneGroups(first);
  const int64_t block_lanes = kSumLanes * columns;
  const int64_t group_lanes = block_lanes / groups;
  std::vector<double> block_sums[2];
  for (int k = 0; k < 2; ++k) {
    if (sums.joined[k] != nullptr) {
      block_sums[k].resize(static_cast<size_t>(first.blocks_per_output * block_lanes));
    }
  }
  const int64_t pieces = first.blocks_per_output * groups;
  ForEachPiece(plan, TaskCount(problem.numel, pieces), problem.numel, pieces, 1,
               [&](Stager &stager, int64_t first_piece, int64_t last_piece) {
                 std::vector<double> lanes[2];
                 float *values[2] = {};
                 for (int k = 0; k < 2; ++k) {
                   if (sums.joined[k] != nullptr) {
                     lanes[k].resize(static_cast<size_t>(block_lanes));
                     values[k] = stager.SumValues(k);
                   }
                 }
                 BlockSums loss_sums;
                 for (int64_t piece = first_piece; piece < last_piece; ++piece) {
                   const int64_t block = piece / groups;
                   const int group = static_cast<int>(piece % groups);
                   const RowBlock rows = RowBlockOf(first, block);
                   for (std::vector<double> &sum_lanes : lanes) {  // the group's lane rows: all it adds to
                     if (!sum_lanes.empty()) {
                       std::fill_n(sum_lanes.begin() + group * group_lanes, group_lanes, 0.0);
                     }
                   }
                   if (sums.loss != nullptr) {  // (one lane group)
                     const int64_t first_element = rows.first_row * columns;
                     loss_sums.Open(first_element, problem.numel,
                                    sums.loss_partials + first_element / kReductionBlockElements);
                   }
                   ForEachRowRun(rows, groups, group, [&](int64_t first_row, int64_t run_rows) {
                     ForEachChunk(first_row * columns, (first_row + run_rows) * columns,
                                  [&](int64_t element, int64_t count) {
                                    compute(stager, element, count, values, &loss_sums);
                                    for (int k = 0; k < 2; ++k) {
                                      if (values[k] != nullptr) {
                                        AddToRowLanes(*plan.kernels, values[k], element, count, columns, rows,
                                                      lanes[k].data());
                                      }
                                    }
                                  });
                   });
                   for (int k = 0; k < 2; ++k) {  // the group's lane rows, kSumLanes / groups of them
                     if (values[k] != nullptr) {
                       std::copy_n(lanes[k].data() + group * group_lanes, group_lanes,
                                   block_sums[k].data() + block * block_lanes + group * group_lanes);
                     }
                   }
                 }
               });
  for (int k = 0; k < 2; ++k) {
    if (sums.joined[k] == nullptr) {
      continue;
    }
    for (int64_t block = 0; block < first.blocks_per_output; ++block) {
      FoldRowLanes(*sums.joined[k], block, RowBlockOf(first, block), block_sums[k].data() + block * block_lanes,
                   sums.partials[k]);
    }
    StoreBlockTotals(*sums.joined[k], total_scale, sums.partials[k]);
  }
  if (sums.loss != nullptr) {
    StoreBlockTotals(*sums.loss, sums.loss_scale, sums.loss_partials);
  }
}

// ComputeReduction for SumsRowByRow: `values` of a gradient take g * g_scale, as sums do.
void ComputeRowByRowReduction(const Reduction &reduction, Quantity quantity, float g_scale, double total_scale,
                              double *workspace) {
  const Plan plan = MakePlan(reduction.natural, nullptr, 0, false);
  std::vector<double> own_partials;
  RowSums sums;
  sums.joined[0] = &reduction;
  sums.partials[0] = PartialsOf(reduction, workspace, own_partials);
  SumRowBlocks(plan, reduction.natural, sums, total_scale,
               [&](Stager &stager, int64_t first, int64_t count, float *const *values, BlockSums *) {
                 plan.kernels->values(quantity, count, stager.Inputs(first, count), g_scale, values[0]);
               });
}

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

// ---- the gradients of every input in one pass ----

// A weight gradient joins the pass of dx and dy when it sums row by row with the columns of one already in, and the
// pieces the pass then hands out (row blocks, split into LaneGroups) are at least as many as the tasks of an
// elementwise pass.
bool JoinsThePass(const Reduction &reduction, const RowSums &sums) {
  const int64_t numel = reduction.natural.numel;
  const int64_t pieces = reduction.blocks_per_output * LaneGroups(reduction);
  return SumsRowByRow(reduction) && (sums.First() == nullptr || reduction.outputs == sums.First()->outputs) &&
         TaskCount(numel, pieces) >= TaskCount(numel, (numel + kChunk - 1) / kChunk);
}

// Where the weight gradients of a pass of dx and dy go: those that sum row by row and join (sums), or else those of
// self's shape, as further elementwise outputs (outs[output_of[k]]); the others are a ComputeReduction after the
// pass (ComputeTheRest).
class WeightGradients {
 public:
  WeightGradients(const Destination &grad_self, const Destination &grad_target, const Reduction *grad_weight,
                  const Reduction *grad_pos_weight, double *workspace)
      : reductions_{grad_weight, grad_pos_weight}, workspaces_(WeightWorkspaces(grad_weight, workspace)) {
    outs_[0] = grad_self;
    outs_[1] = grad_target;
    for (int k = 0; k < 2; ++k) {
      if (reductions_[k] != nullptr && JoinsThePass(*reductions_[k], sums_)) {
        sums_.joined[k] = reductions_[k];
        sums_.partials[k] = PartialsOf(*reductions_[k], workspaces_[k], own_partials_[k]);
      }
    }
    for (int k = 0; k < 2 && !SumRowByRow(); ++k) {
      if (reductions_[k] != nullptr && IsElementwise(*reductions_[k])) {
        output_of_[k] = out_count_;
        outs_[out_count_++] = reductions_[k]->natural_out;
      }
    }
  }

  bool SumRowByRow() const { return sums_.First() != nullptr; }
  const RowSums &Sums() const { return sums_; }
  const Destination *Outs() const { return outs_; }
  int OutCount() const { return out_count_; }
  // The ISA kernels write weight gradients as float32 (their row sums take them so), hence no 16-bit outputs in
  // registers when one is an output.
  bool InRegisters() const { return out_count_ == 2; }

  // The float32 values of weight gradient k among an elementwise pass's output values (null where it is not one).
  float *ValuesOf(int k, void *const *values) const {
    return output_of_[k] < 0 ? nullptr : static_cast<float *>(values[output_of_[k]]);
  }

  void ComputeTheRest(double scale) const {
    const Quantity quantities[2] = {Quantity::kGradWeight, Quantity::kGradPosWeight};
    for (int k = 0; k < 2; ++k) {
      if (reductions_[k] != nullptr && sums_.joined[k] == nullptr && output_of_[k] < 0) {
        ComputeReduction(*reductions_[k], quantities[k], scale, workspaces_[k]);
      }
    }
  }

 private:
  const Reduction *reductions_[2];
  std::array<double *, 2> workspaces_;
  std::vector<double> own_partials_[2];
  RowSums sums_;
  Destination outs_[kMaxOutputs];
  int out_count_ = 2;
  int output_of_[2] = {-1, -1};
};

// dx and dy into outs, and the weight gradients that joined, from one exp per element; with sums.loss also the
// loss, with sums.staged_loss each element's loss.
void ComputeGradientsWithRowSums(const Problem &problem, float scale, const Destination *outs, const RowSums &sums) {
  const Plan plan = MakePlan(problem, outs, 2, true);
  const bool loss = sums.loss != nullptr;
  SumRowBlocks(plan, problem, sums, 1.0,
               [&](Stager &stager, int64_t first, int64_t count, float *const *values, BlockSums *loss_sums) {
                 WriteOutputs(stager, 2, first, count, [&](void *const *outputs) {
                   const RowInputs in = stager.Inputs(first, count);
                   if (loss) {
                     plan.kernels->loss_sums_with_gradients(count, in, scale, loss_sums, outputs[0], outputs[1],
                                                            values[0], values[1]);
                   } else {
                     float *staged_loss = sums.staged_loss == nullptr ? nullptr : sums.staged_loss + first;
                     plan.kernels->gradients(count, in, scale, outputs[0], outputs[1], values[0], values[1],
                                             staged_loss);
                   }
                 });
               });
}

// ---- the loss with the gradients of every input ----

// The weight gradient that a pass without the loss sums first (WeightGradients), or null where none joins it.
const Reduction *FirstToJoin(const Reduction *grad_weight, const Reduction *grad_pos_weight) {
  for (const Reduction *reduction : {grad_weight, grad_pos_weight}) {
    if (reduction != nullptr && JoinsThePass(*reduction, RowSums{})) {
      return reduction;
    }
  }
  return nullptr;
}

// Whether ComputeLossAndGradients writes each element's loss to its workspace and sums it after the pass: where a
// weight gradient joins the pass only with its row blocks shared by lane groups, across which the loss's blocks run.
bool StagesLoss(const Reduction *grad_weight, const Reduction *grad_pos_weight) {
  const Reduction *first = FirstToJoin(grad_weight, grad_pos_weight);
  return first != nullptr && LaneGroups(*first) > 1;
}

// Where ComputeLossAndGradients stages the loss of each element: in its workspace after the block partials of the
// loss and of the weight gradients (weight_bytes), or in `own` where the workspace is null.
float *StagedLossOf(const Reduction &loss, uint64_t weight_bytes, double *workspace, std::vector<float> &own) {
  if (workspace != nullptr) {
    return reinterpret_cast<float *>(workspace + (ReductionWorkspaceBytes(loss) + weight_bytes) / sizeof(double));
  }
  own.resize(static_cast<size_t>(loss.problem.numel));
  return own.data();
}

// The loss's sum of the staged losses of its elements, in the order of bcewl_kernel.h, on the tasks.
void SumStagedLoss(const Reduction &loss, double scale, double *workspace, const float *staged) {
  const Plan plan = MakePlan(loss.problem, nullptr, 0, false);
  SumInBlocks(plan, loss, scale, workspace, [&](Stager &, int64_t first, int64_t count, BlockSums *sums) {
    plan.kernels->add_to_block_sums(staged + first, count, sums);
  });
}

}  // namespace

void ComputeElementwise(const Problem &problem, Quantity quantity, float scale, const Destination &out) {
  ComputeOutputs(problem, &out, 1, true, [&](const IsaKernels &kernels, int64_t count, const RowInputs &in,
                                              void *const *values) {
    kernels.values(quantity, count, in, scale, values[0]);
  });
}

void ComputeGradients(const Problem &problem, double scale, const Destination &grad_self,
                      const Destination &grad_target, const Reduction *grad_weight, const Reduction *grad_pos_weight,
                      double *workspace) {
  if (problem.numel == 0) {
    return;
  }
  const WeightGradients weights(grad_self, grad_target, grad_weight, grad_pos_weight, workspace);
  const float g_scale = static_cast<float>(scale);
  if (weights.SumRowByRow()) {
    ComputeGradientsWithRowSums(problem, g_scale, weights.Outs(), weights.Sums());
  } else {
    ComputeOutputs(problem, weights.Outs(), weights.OutCount(), weights.InRegisters(),
                   [&](const IsaKernels &kernels, int64_t count, const RowInputs &in, void *const *values) {
                     kernels.gradients(count, in, g_scale, values[0], values[1], weights.ValuesOf(0, values),
                                       weights.ValuesOf(1, values), nullptr);
                   });
  }
  weights.ComputeTheRest(scale);
}

uint64_t GradientsWorkspaceBytes(const Reduction *grad_weight, const Reduction *grad_pos_weight) {
  uint64_t bytes = 0;
  for (const Reduction *reduction : {grad_weight, grad_pos_weight}) {
    bytes += reduction == nullptr ? 0 : ReductionWorkspaceBytes(*reduction);
  }
  return bytes;
}

void ComputeReduction(const Reduction &reduction, Quantity quantity, double scale, double *workspace) {
  if (reduction.problem.numel == 0) {
    return;
  }
  const bool loss = quantity == Quantity::kLoss;
  const float g_scale = loss ? 1.0f : static_cast<float>(scale);
  const double total_scale = loss ? scale : 1.0;
  if (IsElementwise(reduction) && !loss) {  // a weight of self's shape: each output is one element's value
    ComputeElementwise(reduction.problem, quantity, g_scale, reduction.out);
    return;
  }
  if (SumsRowByRow(reduction)) {
    ComputeRowByRowReduction(reduction, quantity, g_scale, total_scale, workspace);
    return;
  }
  const Plan plan = MakePlan(reduction.problem, nullptr, 0, true);
  SumInBlocks(plan, reduction, total_scale, workspace,
              [&](Stager &stager, int64_t first, int64_t count, BlockSums *sums) {
                plan.kernels->sums(quantity, count, stager.Inputs(first, count), g_scale, sums);
              });
}

void ComputeLossAndGradients(const Reduction &loss, double scale, const Destination &grad_self,
                             const Destination &grad_target, const Reduction *grad_weight,
                             const Reduction *grad_pos_weight, double *workspace) {
  if (loss.problem.numel == 0) {
    return;
  }
  double *weight_workspace =
      workspace == nullptr ? nullptr : workspace + ReductionWorkspaceBytes(loss) / sizeof(double);
  const bool stage_loss = StagesLoss(grad_weight, grad_pos_weight);
  const WeightGradients weights(grad_self, grad_target, grad_weight, grad_pos_weight, weight_workspace);
  const float g_scale = static_cast<float>(scale);
  // The loss reduces every dim: its problem is in its own dim order, that of the weight gradients' natural one.
  if (stage_loss) {
    std::vector<float> own_staged;
    float *staged = StagedLossOf(loss, GradientsWorkspaceBytes(grad_weight, grad_pos_weight), workspace, own_staged);
    RowSums sums = weights.Sums();
    sums.staged_loss = staged;
    ComputeGradientsWithRowSums(loss.problem, g_scale, weights.Outs(), sums);
    SumStagedLoss(loss, scale, workspace, staged);
  } else if (weights.SumRowByRow()) {
    std::vector<double> own_loss_partials;
    RowSums sums = weights.Sums();
    sums.loss = &loss;
    sums.loss_partials = PartialsOf(loss, workspace, own_loss_partials);
    sums.loss_scale = scale;
    ComputeGradientsWithRowSums(loss.problem, g_scale, weights.Outs(), sums);
  } else {
    const Plan plan = MakePlan(loss.problem, weights.Outs(), weights.OutCount(), weights.InRegisters());
    SumInBlocks(plan, loss, scale, workspace, [&](Stager &stager, int64_t first, int64_t count, BlockSums *sums) {
      WriteOutputs(stager, weights.OutCount(), first, count, [&](void *const *values) {
        plan.kernels->loss_sums_with_gradients(count, stager.Inputs(first, count), g_scale, sums, values[0],
                                               values[1], weights.ValuesOf(0, values), weights.ValuesOf(1, values));
      });
    });
  }
  weights.ComputeTheRest(scale);
}

uint64_t LossAndGradientsWorkspaceBytes(const Reduction &loss, const Reduction *grad_weight,
                                        const Reduction *grad_pos_weight) {
  const uint64_t staged = StagesLoss(grad_weight, grad_pos_weight) ? loss.problem.numel * sizeof(float) : 0;
  return ReductionWorkspaceBytes(loss) + GradientsWorkspaceBytes(grad_weight, grad_pos_weight) + staged;
}

void Fill(int rank, const int64_t *shape, const Destination &out, float value) {
  int64_t numel = 1;
  for (int dim = 0; dim < rank; ++dim) {
    numel *= shape[dim];
  }
  StridedCursor<1> cursor(rank, shape, {out.strides}, 0);
  for (int64_t i = 0; i < numel; ++i, cursor.Next()) {
    StoreElement(out.data, cursor.Offset(0), out.dtype, value);
  }
}

// ---- test hooks ----

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
        g_forced_kernels.store(kernels, std::memory_order_release);
      }
      return kernels != nullptr;
    },
    [] { g_forced_kernels.store(nullptr, std::memory_order_release); },
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
    [](bool enabled) { g_row_reductions.store(enabled, std::memory_order_relaxed); },
    [](bool held) { HoldWorkersForTesting(held); },
};

}  // namespace

}  // namespace ms_bcewl::kernel

extern "C" const ms_bcewl::kernel::KernelTestingHooks *msBcewlKernelTestingHooks(void) {
  return &ms_bcewl::kernel::kTestingHooks;
}
