// TPipe, TQue and TBuf: UB allocation and the queue protocol AllocTensor -> EnQue -> DeQue -> FreeTensor.
#ifndef MS_BCEWL_ASCENDC_SIM_PIPE_H_
#define MS_BCEWL_ASCENDC_SIM_PIPE_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "ascendc_sim/context.h"
#include "ascendc_sim/tensor.h"

namespace AscendC {

enum class TPosition : uint8_t { GM, VECIN, VECOUT, VECCALC };
using QuePosition = TPosition;

template <TPosition pos, int32_t depth>
class TQue {
  static_assert(depth >= 1, "a queue holds at least one tensor");

 public:
  template <typename T>
  LocalTensor<T> AllocTensor() {
    RequireInitialised("AllocTensor");
    for (sim::BufferRecord *record : buffers_) {
      if (record->state == sim::BufferState::kFree) {
        record->state = sim::BufferState::kAllocated;
        return LocalTensor<T>::SimView(record, record->offset, record->bytes / sizeof(T));
      }
    }
    sim::QueueExhausted(buffers_.size());
  }

  template <typename T>
  bool EnQue(const LocalTensor<T> &tensor) {
    sim::BufferRecord *record = RequireOwned(tensor, "EnQue");
    if (record->state != sim::BufferState::kAllocated)
      sim::Violation("EnQue of a tensor that is not freshly allocated");
    if (fifo_.size() >= static_cast<size_t>(depth)) sim::Violation("EnQue beyond the queue depth");
    record->state = sim::BufferState::kQueued;
    fifo_.push_back(record);
    return true;
  }

  template <typename T>
  LocalTensor<T> DeQue() {
    if (fifo_.empty()) sim::Violation("DeQue on an empty queue; the NPU would wait forever");
    sim::BufferRecord *record = fifo_.front();
    fifo_.pop_front();
    record->state = sim::BufferState::kDequeued;
    return LocalTensor<T>::SimView(record, record->offset, record->bytes / sizeof(T));
  }

  template <typename T>
  void FreeTensor(LocalTensor<T> &tensor) {
    sim::BufferRecord *record = RequireOwned(tensor, "FreeTensor");
    if (record->state != sim::BufferState::kDequeued) sim::Violation("FreeTensor of a tensor that was not dequeued");
    record->state = sim::BufferState::kFree;
  }

  // Called by TPipe::InitBuffer.
  void SimBind(std::vector<sim::BufferRecord *> buffers) {
    if (!buffers_.empty()) sim::Violation("InitBuffer called twice for one queue");
    buffers_ = std::move(buffers);
  }

 private:
  void RequireInitialised(const char *what) const {
    if (buffers_.empty()) sim::Violation(what + std::string(" on a queue without InitBuffer"));
  }
  template <typename T>
  sim::BufferRecord *RequireOwned(const LocalTensor<T> &tensor, const char *what) const {
    for (sim::BufferRecord *record : buffers_) {
      if (record == tensor.SimRecord() && record->offset == tensor.SimByteOffset()) return record;
    }
    sim::Violation(what + std::string(" of a tensor that this queue did not allocate"));
  }

  std::vector<sim::BufferRecord *> buffers_;
  std::deque<sim::BufferRecord *> fifo_;
};

template <TPosition pos>
class TBuf {
 public:
  template <typename T>
  LocalTensor<T> Get() const {
    if (record_ == nullptr) sim::Violation("TBuf::Get without InitBuffer");
    return LocalTensor<T>::SimView(record_, record_->offset, record_->bytes / sizeof(T));
  }

  // Called by TPipe::InitBuffer.
  void SimBind(sim::BufferRecord *record) {
    if (record_ != nullptr) sim::Violation("InitBuffer called twice for one TBuf");
    record_ = record;
  }

 private:
  sim::BufferRecord *record_ = nullptr;
};

class TPipe {
 public:
  template <TPosition pos, int32_t depth>
  bool InitBuffer(TQue<pos, depth> &que, uint8_t num, uint32_t len) {
    if (num == 0) sim::Violation("InitBuffer with zero buffers");
    std::vector<sim::BufferRecord *> buffers;
    for (uint8_t i = 0; i < num; ++i) buffers.push_back(sim::CurrentBlock().AllocateBuffer(len, true));
    que.SimBind(std::move(buffers));
    return true;
  }

  template <TPosition pos>
  bool InitBuffer(TBuf<pos> &buf, uint32_t len) {
    buf.SimBind(sim::CurrentBlock().AllocateBuffer(len, false));
    return true;
  }

  // An event id free for `event`; the simulation has one per event, as SetFlag/WaitFlag are checked in pairs.
  TEventID FetchEventID(HardEvent event) {
    (void)event;
    return 0;
  }
};

}  // namespace AscendC

#endif  // MS_BCEWL_ASCENDC_SIM_PIPE_H_
