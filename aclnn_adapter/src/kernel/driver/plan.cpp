// The plan of a call, the staging buffers, the ISA choice and the thread pool of plan.h.

#include "kernel/driver/plan.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <system_error>
#include <thread>

#include "ms_bcewl/ms_bcewl_host.h"

namespace ms_bcewl::kernel {
namespace {

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

// Classifies the inputs and the `out_count` outputs into plan->views; strides[view] = the view's strides over the
// problem dims.
void ClassifyViews(const Problem &problem, const Destination *outs, int out_count, Plan *plan,
                   const int64_t **strides) {
  const Operand *inputs[kInputs] = {&problem.self, &problem.target, &problem.weight, &problem.pos_weight,
                                    &problem.grad_output};
  for (int view = 0; view < kInputs; ++view) {
    plan->views[view] = Classify(problem, inputs[view]->data, inputs[view]->dtype, inputs[view]->strides);
    strides[view] = inputs[view]->strides;
  }
  for (int output = 0; output < kMaxOutputs; ++output) {
    const int view = kFirstOutput + output;
    strides[view] = problem.self.strides;  // unused unless there is such an output
    if (output < out_count) {
      plan->views[view] = Classify(problem, outs[output].data, outs[output].dtype, outs[output].strides);
      if (plan->views[view].source != Source::kLinear) {
        plan->views[view].source = Source::kStrided;  // (a constant output view is written element after element)
      }
      strides[view] = outs[output].strides;
    }
  }
}

// Whether problem dim `dim`, of `size` elements, continues the last merged dim in every strided view.
bool ContinuesLastDim(const Plan &plan, const int64_t *const *strides, int merged, int dim, int64_t size) {
  for (int view = 0; view < kViews; ++view) {
    if (plan.views[view].source == Source::kStrided && plan.strides[view][merged - 1] != strides[view][dim] * size) {
      return false;
    }
  }
  return true;
}

// plan->shape, strides and outer_rank: the problem dims without those of size 1, merged where ContinuesLastDim.
void MergeDims(const Problem &problem, const int64_t *const *strides, Plan *plan) {
  int merged = 0;
  for (int dim = 0; dim < problem.rank; ++dim) {
    const int64_t size = problem.shape[dim];
    if (size == 1) {
      continue;
    }
    if (merged == 0 || !ContinuesLastDim(*plan, strides, merged, dim, size)) {
      plan->shape[merged++] = 1;
    }
    plan->shape[merged - 1] *= size;
    for (int view = 0; view < kViews; ++view) {
      plan->strides[view][merged - 1] = strides[view][dim];
    }
  }
  if (merged == 0) {
    plan->shape[merged++] = 1;
  }
  plan->outer_rank = merged - 1;
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

}  // namespace

Plan MakePlan(const Problem &problem, const Destination *outs, int out_count, bool in_registers) {
  Plan plan;
  plan.kernels = &ActiveKernels();
  const int64_t *strides[kViews] = {};
  ClassifyViews(problem, outs, out_count, &plan, strides);
  MergeDims(problem, strides, &plan);
  plan.xy_dtype = in_registers ? InRegistersDType(plan, out_count) : DType::kFloat32;
  return plan;
}

}  // namespace ms_bcewl::kernel

namespace ms_bcewl::kernel {

Stager::Stager(const Plan &plan, int64_t elements) : plan_(plan) {
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

void Stager::Tile(const View &input, int64_t length, std::vector<float> *tiled) const {
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

}  // namespace ms_bcewl::kernel

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace ms_bcewl::kernel {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// What the kernels need of an x86 CPU, read with cpuid and xgetbv (the OS saves the ymm / zmm registers) rather than
// __builtin_cpu_supports: the runtime behind that (libgcc's or compiler-rt's __cpu_model) is left empty by zig's
// compiler-rt, which links the wheels' library, and the kernels then never left the scalar path.
struct X86Features {
  bool avx2_fma_f16c = false;
  bool avx512f = false;
  bool avx512dq = false;
  bool avx512bf16 = false;
};

constexpr unsigned Bit(int n) { return 1u << n; }

X86Features ReadX86Features() {
  X86Features features;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & Bit(27)) || !(ecx & Bit(28))) {
    return features;  // no cpuid leaf 1, no OSXSAVE or no AVX
  }
  const bool fma = ecx & Bit(12);
  const bool f16c = ecx & Bit(29);
  unsigned xcr0 = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0), "=d"(xcr0_high) : "c"(0));
  const bool ymm_saved = (xcr0 & 0x6u) == 0x6u;    // SSE and AVX state
  const bool zmm_saved = (xcr0 & 0xE6u) == 0xE6u;  // and the opmask and both halves of zmm
  if (!ymm_saved || !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
    return features;
  }
  features.avx2_fma_f16c = (ebx & Bit(5)) && fma && f16c;
  features.avx512f = zmm_saved && (ebx & Bit(16));
  features.avx512dq = zmm_saved && (ebx & Bit(17));
  features.avx512bf16 = features.avx512f && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & Bit(5));
  return features;
}

bool CpuSupports(Isa isa) {
  static const X86Features features = ReadX86Features();
  switch (isa) {
    case Isa::kScalar:
      return true;
    case Isa::kAvx2:
      return features.avx2_fma_f16c;
    case Isa::kAvx512:
      return features.avx512f;
    case Isa::kAvx512BFloat16:
      return features.avx512f && features.avx512dq && features.avx512bf16;
    case Isa::kNeon:
      return false;
  }
  return false;
}
#elif defined(__aarch64__) && defined(__linux__)
// Advanced SIMD as the kernel reports it (AT_HWCAP), the way x86 reads cpuid: every aarch64 Linux server has it.
bool CpuSupports(Isa isa) {
  static const bool asimd = (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0;
  return isa == Isa::kScalar || (isa == Isa::kNeon && asimd);
}
#else
bool CpuSupports(Isa isa) { return isa == Isa::kScalar; }
#endif

// The ISA MS_BCEWL_ISA names, or null where it is unset or names none.
const Isa *RequestedIsa() {
  const char *name = std::getenv("MS_BCEWL_ISA");
  for (size_t isa = 0; name != nullptr && isa < std::size(kIsaNames); ++isa) {
    if (std::strcmp(name, kIsaNames[isa]) == 0) {
      return &kIsas[isa];
    }
  }
  return nullptr;
}

// The kernels of `isa`, else of the best available ISA below it.
const IsaKernels *BestAtOrBelow(Isa isa) {
  while (AvailableKernels(isa) == nullptr) {
    isa = kIsaBelow[static_cast<int>(isa)];
  }
  return AvailableKernels(isa);
}

const IsaKernels &AutomaticKernels() {
  static const IsaKernels *const chosen = [] {
    if (const Isa *requested = RequestedIsa()) {
      return BestAtOrBelow(*requested);
    }
    for (size_t isa = std::size(kIsas); --isa > 0;) {
      if (const IsaKernels *kernels = AvailableKernels(kIsas[isa])) {
        return kernels;
      }
    }
    return &ScalarKernels();
  }();
  return *chosen;
}

std::atomic<const IsaKernels *> g_forced_kernels{nullptr};

}  // namespace

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
    case Isa::kNeon:
      kernels = NeonKernels();
      break;
  }
  return kernels != nullptr && CpuSupports(isa) ? kernels : nullptr;
}

const IsaKernels &ActiveKernels() {
  const IsaKernels *forced = g_forced_kernels.load(std::memory_order_acquire);
  return forced != nullptr ? *forced : AutomaticKernels();
}

void ForceKernels(const IsaKernels *kernels) { g_forced_kernels.store(kernels, std::memory_order_release); }

}  // namespace ms_bcewl::kernel

namespace ms_bcewl::kernel {
namespace {

int DefaultThreads() {
  static const int threads = [] {
    if (const char *text = std::getenv("MS_BCEWL_NUM_THREADS")) {
      char *end = nullptr;
      const long requested = std::strtol(text, &end, 10);
      if (end != text && *end == '\0' && requested > 0) {
        return static_cast<int>(std::min<long>(requested, kMaxKernelThreads));
      }
    }
    int cores = static_cast<int>(std::thread::hardware_concurrency());
#if defined(__linux__)
    cpu_set_t allowed;  // a process pinned to fewer cores (taskset, a container's cpuset) gets fewer threads
    if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 0) {
      cores = cores > 0 ? std::min(cores, CPU_COUNT(&allowed)) : CPU_COUNT(&allowed);
    }
#endif
    return std::clamp(cores, 1, kMaxKernelThreads);
  }();
  return threads;
}

std::atomic<int> g_thread_override{0};
std::atomic<int> g_latest_loop_tasks{0};

// Keeps the calling worker off `caller_cpu`, the CPU the loop's caller ran on when it handed out the tasks.
// Linux tends to wake a worker on its waker's CPU when the machine was idle, and a loop that lasts under a
// millisecond ends before the load balancer moves it: caller and worker then share one core and two threads run
// at the speed of one. A worker keeps the CPUs it started with (its creator's), minus the caller's; it moves when
// the caller does, with one sched_setaffinity call.
class CallerCpuAvoider {
 public:
  CallerCpuAvoider() {
#if defined(__linux__)
    have_allowed_ = sched_getaffinity(0, sizeof(allowed_), &allowed_) == 0;
#endif
  }

  void Avoid(int caller_cpu) {
#if defined(__linux__)
    if (!have_allowed_ || caller_cpu < 0 || caller_cpu == avoided_ || caller_cpu >= CPU_SETSIZE ||
        !CPU_ISSET(caller_cpu, &allowed_) || CPU_COUNT(&allowed_) < 2) {
      return;
    }
    cpu_set_t others = allowed_;
    CPU_CLR(caller_cpu, &others);
    if (sched_setaffinity(0, sizeof(others), &others) == 0) {
      avoided_ = caller_cpu;
    }
#else
    (void)caller_cpu;
#endif
  }

 private:
#if defined(__linux__)
  cpu_set_t allowed_;  // at the worker's start
  bool have_allowed_ = false;
#endif
  int avoided_ = -1;  // the CPU this worker keeps off now; -1: none
};

int CurrentCpu() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

// A loop's tasks 1 .. n-1 are claimed, one at a time under mutex_, by whichever thread gets to them first: the
// workers as they wake, and the caller once its own task 0 is done. The caller then waits only for tasks that
// have started. It never waits for a worker that has not been scheduled yet: when every core is busy (another
// framework thread, a concurrent kernel), a woken worker may wait a whole scheduler tick (4 ms at 250 Hz) for a
// CPU, and a loop of 0.1 ms would take 4 ms.
class Pool {
 public:
  void Run(int tasks, TaskFunction function, void *context) {
    std::unique_lock<std::mutex> running(run_mutex_, std::try_to_lock);
    if (!running.owns_lock()) {
      for (int task = 0; task < tasks; ++task) {
        function(context, task);
      }
      return;
    }
    const int on_workers = std::min(tasks - 1, Grow(tasks - 1));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      function_ = function;
      context_ = context;
      next_task_ = 1;
      last_task_ = on_workers;
      caller_cpu_ = CurrentCpu();
      ++generation_;
    }
    for (int task = 1; task <= on_workers; ++task) {  // any worker may take any task: wake no more than needed
      wake_.notify_one();
    }
    function(context, 0);
    for (int task = on_workers + 1; task < tasks; ++task) {  // tasks for workers that could not be started
      function(context, task);
    }
    std::unique_lock<std::mutex> lock(mutex_);
    while (next_task_ <= last_task_) {  // tasks no worker has started yet
      const int task = next_task_++;
      lock.unlock();
      function(context, task);
      lock.lock();
    }
    done_.wait(lock, [this] { return started_ == 0; });
  }

  void HoldWorkers(bool held) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      workers_held_ = held;
    }
    wake_.notify_all();
  }

 private:
  // Starts workers up to `wanted` (called with run_mutex_ held); returns how many there are.
  int Grow(int wanted) {
    std::lock_guard<std::mutex> lock(mutex_);
    while (workers_ < wanted) {
      try {
        std::thread([this, seen = generation_] { Work(seen); }).detach();
      } catch (const std::system_error &) {
        break;  // no more threads: the caller runs the rest of the tasks itself
      }
      ++workers_;
    }
    return workers_;
  }

  void Work(unsigned long long seen) {
    CallerCpuAvoider avoider;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen && !workers_held_; });
      seen = generation_;
      const int caller_cpu = caller_cpu_;
      lock.unlock();
      avoider.Avoid(caller_cpu);  // also when the caller has taken the tasks: the next loop finds it moved
      lock.lock();
      if (next_task_ > last_task_) {
        continue;  // woken late: the caller took this loop's tasks
      }
      const int task = next_task_++;
      const TaskFunction function = function_;
      void *context = context_;
      ++started_;
      lock.unlock();
      function(context, task);
      lock.lock();
      if (--started_ == 0) {
        done_.notify_one();
      }
    }
  }

  std::mutex run_mutex_;
  std::mutex mutex_;  // guards everything below
  std::condition_variable wake_;
  std::condition_variable done_;
  int workers_ = 0;
  unsigned long long generation_ = 0;
  TaskFunction function_ = nullptr;
  void *context_ = nullptr;
  int next_task_ = 1;  // the next task to claim of the current loop
  int last_task_ = 0;  // its last task for a worker
  int started_ = 0;    // tasks claimed by workers and not finished
  int caller_cpu_ = -1;
  bool workers_held_ = false;  // a test hook: held workers do not wake
};

// The pool lives as long as the process (its detached workers use it until exit). After fork() the child has none
// of the parent's workers: its handler drops the pool (still reachable, for leak checkers) and the next loop makes
// a new one. Creation takes no lock, so a fork while another thread held one cannot block the child.
std::atomic<Pool *> g_pool{nullptr};
std::atomic<Pool *> g_pool_left_by_fork{nullptr};

void DropPoolInChild() { g_pool_left_by_fork.store(g_pool.exchange(nullptr)); }

Pool &ThePool() {
  Pool *pool = g_pool.load(std::memory_order_acquire);
  if (pool != nullptr) {
    return *pool;
  }
  static const bool fork_handler_installed = pthread_atfork(nullptr, nullptr, DropPoolInChild) == 0;
  (void)fork_handler_installed;
  Pool *created = new Pool();
  if (g_pool.compare_exchange_strong(pool, created, std::memory_order_acq_rel)) {
    return *created;
  }
  delete created;
  return *pool;
}

}  // namespace

int KernelThreads() {
  const int override = g_thread_override.load(std::memory_order_relaxed);
  return override > 0 ? override : DefaultThreads();
}

void SetKernelThreads(int threads) {
  g_thread_override.store(std::clamp(threads, 0, kMaxKernelThreads), std::memory_order_relaxed);
}

int LatestLoopTasks() { return g_latest_loop_tasks.load(std::memory_order_relaxed); }

void NoteLoopTasks(int tasks) { g_latest_loop_tasks.store(tasks, std::memory_order_relaxed); }

void RunTasks(int tasks, TaskFunction function, void *context) { ThePool().Run(tasks, function, context); }

void HoldWorkersForTesting(bool held) { ThePool().HoldWorkers(held); }

}  // namespace ms_bcewl::kernel

extern "C" int32_t msBcewlKernelThreads(void) { return ms_bcewl::kernel::KernelThreads(); }

extern "C" const char *msBcewlKernelIsa(void) {
  return ms_bcewl::kernel::kIsaNames[static_cast<int>(ms_bcewl::kernel::ActiveKernels().isa)];
}
