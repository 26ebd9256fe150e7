// LocalTensor (a typed view of a UB buffer) and GlobalTensor (a typed, sized view of global memory), with the
// bounds and lifetime checks of the simulation.
#ifndef MS_BCEWL_ASCENDC_SIM_TENSOR_H_
#define MS_BCEWL_ASCENDC_SIM_TENSOR_H_

#include <cstdint>
#include <cstring>

#include "ascendc_sim/context.h"

namespace AscendC {

template <typename T>
class LocalTensor {
 public:
  LocalTensor() = default;

  LocalTensor operator[](uint32_t offset) const {
    if (offset > length_) sim::LocalOffsetOutOfRange(offset, length_);
    return LocalTensor(record_, byteOffset_ + offset * static_cast<uint32_t>(sizeof(T)), length_ - offset);
  }

  // A scalar read of UB: after a vector instruction it needs SetFlag/WaitFlag<HardEvent::V_S> first.
  T GetValue(uint32_t index) const {
    if (record_ == nullptr || record_->state == sim::BufferState::kFree ||
        record_->state == sim::BufferState::kQueued) {
      sim::Violation("LocalTensor::GetValue of a tensor that is not live");
    }
    if (index >= length_) sim::LocalOffsetOutOfRange(index, length_);
    sim::CurrentBlock().RequireScalarSeesVectorResults("LocalTensor::GetValue");
    T value;
    std::memcpy(&value, SimBytes() + static_cast<size_t>(index) * sizeof(T), sizeof(T));
    return value;
  }

  // Simulation accessors (not part of the Ascend C API).
  static LocalTensor SimView(sim::BufferRecord *record, uint32_t byteOffset, uint32_t length) {
    return LocalTensor(record, byteOffset, length);
  }
  sim::BufferRecord *SimRecord() const { return record_; }
  uint32_t SimByteOffset() const { return byteOffset_; }
  uint32_t SimLength() const { return length_; }
  uint8_t *SimBytes() const { return sim::CurrentBlock().Ub() + byteOffset_; }

 private:
  LocalTensor(sim::BufferRecord *record, uint32_t byteOffset, uint32_t length)
      : record_(record), byteOffset_(byteOffset), length_(length) {}

  sim::BufferRecord *record_ = nullptr;
  uint32_t byteOffset_ = 0;
  uint32_t length_ = 0;
};

template <typename T>
class GlobalTensor {
 public:
  void SetGlobalBuffer(T *buffer, uint64_t bufferSize) {
    if (reinterpret_cast<uintptr_t>(buffer) % sizeof(T) != 0) {
      sim::Violation("GlobalTensor address is not aligned to its element size");
    }
    data_ = buffer;
    size_ = bufferSize;
  }

  GlobalTensor operator[](uint64_t offset) const {
    RequireWithin(offset, 0, "GlobalTensor offset");
    GlobalTensor view;
    view.data_ = data_ + offset;
    view.size_ = size_ - offset;
    return view;
  }

  T GetValue(uint64_t offset) const {
    RequireWithin(offset, 1, "GlobalTensor::GetValue");
    return data_[offset];
  }

  // Simulation accessors (not part of the Ascend C API).
  T *SimData() const { return data_; }
  void RequireWithin(uint64_t offset, uint64_t count, const char *what) const {
    if (offset > size_ || count > size_ - offset) sim::GlobalRangeOutOfBounds(offset, count, size_, what);
  }

 private:
  T *data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace AscendC

#endif  // MS_BCEWL_ASCENDC_SIM_TENSOR_H_
