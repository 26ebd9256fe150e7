// The state of the simulated AI core that runs the current block: its unified buffer (UB), the buffers carved
// out of it, and the rule checks that a real NPU would punish with wrong results or a hang.
#ifndef MS_BCEWL_ASCENDC_SIM_CONTEXT_H_
#define MS_BCEWL_ASCENDC_SIM_CONTEXT_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>

namespace AscendC {

// Thrown at the first broken rule; the message names the rule and the block.
class SimViolation : public std::runtime_error {
 public:
  explicit SimViolation(const std::string &message) : std::runtime_error(message) {}
};

namespace sim {

constexpr uint32_t kUbBlockBytes = 32;
constexpr uint32_t kVectorRepeatBytes = 256;          // what the vector unit processes per repeat
constexpr uint32_t kSelectScratchUbBytes = 8 * 1024;  // UB that Select's tensor modes need left free (Atlas A2)
constexpr uint32_t kAscend910bUbBytes = 192 * 1024;

[[noreturn]] void Violation(const std::string &message);
[[noreturn]] void LocalOffsetOutOfRange(uint32_t offset, uint32_t length);
[[noreturn]] void GlobalRangeOutOfBounds(uint64_t offset, uint64_t count, uint64_t size, const char *what);
[[noreturn]] void QueueExhausted(size_t buffers);

enum class BufferState { kFree, kAllocated, kQueued, kDequeued, kCalc };

struct BufferRecord {
  uint32_t offset;  // bytes from the start of UB
  uint32_t bytes;
  BufferState state;
  bool queued;  // owned by a TQue (must be freed before the block ends) rather than a TBuf
};

struct LaunchStats {
  uint32_t peakUbBytes = 0;  // largest sum of InitBuffer sizes over the blocks of the last launch
  uint64_t dataCopyCalls = 0;
  uint64_t dataCopyPadCalls = 0;
};

class BlockContext {
 public:
  BlockContext(uint32_t blockIdx, uint32_t blockNum, uint32_t ubBytes);

  uint32_t BlockIdx() const { return blockIdx_; }
  uint32_t BlockNum() const { return blockNum_; }
  uint8_t *Ub() { return ub_.get(); }
  uint32_t UnallocatedBytes() const { return capacity_ - used_; }

  // Places a buffer right after the previous one, as TPipe::InitBuffer does; new bytes are filled with 0xFF
  // (a NaN pattern) so that reading unwritten lanes shows up in results.
  BufferRecord *AllocateBuffer(uint32_t bytes, bool queued);
  void CheckQueueBuffersFreed() const;

 private:
  uint32_t blockIdx_;
  uint32_t blockNum_;
  uint32_t capacity_;
  uint32_t used_ = 0;
  std::unique_ptr<uint8_t[]> ub_;
  std::deque<BufferRecord> records_;  // deque: records keep their address while buffers are added
};

BlockContext &CurrentBlock();
LaunchStats &MutableStats();
const LaunchStats &LastLaunchStats();

// Makes one block current for its lifetime; Finish() runs the end-of-block checks.
class BlockScope {
 public:
  BlockScope(uint32_t blockIdx, uint32_t blockNum, uint32_t ubBytes);
  ~BlockScope();
  BlockScope(const BlockScope &) = delete;
  BlockScope &operator=(const BlockScope &) = delete;
  void Finish();

 private:
  BlockContext context_;
};

void BeginLaunch(uint32_t blockDim);

}  // namespace sim
}  // namespace AscendC

#endif  // MS_BCEWL_ASCENDC_SIM_CONTEXT_H_
