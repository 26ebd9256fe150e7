#include "kernel/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <system_error>
#include <thread>

#include "ms_bcewl/ms_bcewl_host.h"

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
