// How a pass's work reaches the threads: pieces taken in turn by the tasks, and chunks of at most kChunk elements
// within a piece, at positions that do not depend on the thread count.
#ifndef MS_BCEWL_KERNEL_TASK_PIECES_H_
#define MS_BCEWL_KERNEL_TASK_PIECES_H_

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "kernel/call_plan.h"
#include "kernel/host_driver.h"
#include "kernel/staging.h"
#include "kernel/thread_pool.h"

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

#endif  // MS_BCEWL_KERNEL_TASK_PIECES_H_
