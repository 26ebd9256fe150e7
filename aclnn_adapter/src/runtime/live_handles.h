// A thread-safe set of the handles a library has handed out and not yet taken back, so that a destroy or a use
// of an unknown, already released or forged handle is answered with an error code instead of undefined behaviour.
#ifndef MS_BCEWL_RUNTIME_LIVE_HANDLES_H_
#define MS_BCEWL_RUNTIME_LIVE_HANDLES_H_

#include <mutex>
#include <unordered_set>

namespace ms_bcewl {

template <typename Handle>
class LiveHandles {
 public:
  void Add(const Handle *handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    handles_.insert(handle);
  }

  bool Contains(const Handle *handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    return handles_.count(handle) != 0;
  }

  // Removes the handle and reports whether it was live: of two threads claiming one handle, exactly one wins.
  bool Claim(const Handle *handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    return handles_.erase(handle) != 0;
  }

 private:
  std::mutex mutex_;
  std::unordered_set<const Handle *> handles_;
};

}  // namespace ms_bcewl

#endif  // MS_BCEWL_RUNTIME_LIVE_HANDLES_H_
