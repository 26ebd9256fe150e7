// The host kernels' threads: a small persistent pool for fork-join loops over a fixed number of tasks.
//
// The pool starts its workers on first use and keeps them; a loop of n tasks runs task 0 on the calling thread and
// tasks 1 .. n-1 on the workers, or on the calling thread where no worker has started them by the time it has
// finished task 0, and returns when all are done. One loop runs at a time: a loop started while
// another is running (another thread's call, or a nested one) runs its tasks one after the other on the calling
// thread, which gives the same results (the kernels' results never depend on how tasks are spread over threads).
// A child process after fork() gets a fresh pool. On Linux a worker woken for a loop keeps off the CPU the loop's
// caller is on (a worker woken on its waker's CPU after an idle spell would otherwise share it for the whole loop).
#ifndef MS_BCEWL_KERNEL_THREAD_POOL_H_
#define MS_BCEWL_KERNEL_THREAD_POOL_H_

#include <type_traits>

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

#endif  // MS_BCEWL_KERNEL_THREAD_POOL_H_
