// The state of the simulated AI core that runs the current block: its unified buffer (UB), the buffers carved
// out of it, and the rule checks that a real NPU would punish with wrong results or a hang.
#ifndef MS_BCEWL_ASCENDC_SIM_CONTEXT_H_
#define MS_BCEWL_ASCENDC_SIM_CONTEXT_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace AscendC {

// Thrown at the first broken rule; the message names the rule and the block.
class SimViolation : public std::runtime_error {
 public:
  explicit SimViolation(const std::string &message) : std::runtime_error(message) {}
};

// Pipes whose order SetFlag / WaitFlag enforce. Only V -> S (a scalar read of a vector result) changes what the
// simulation accepts; the other events are checked for pairing only.
enum class HardEvent : uint8_t { MTE2_V, V_MTE3, MTE3_V, MTE2_S, S_V, V_S, S_MTE3 };
using TEventID = int8_t;

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

// What the blocks of the last launch executed, summed over its blocks.
struct LaunchStats {
  uint32_t peakUbBytes = 0;  // largest sum of InitBuffer sizes over the blocks of the last launch
  uint64_t dataCopyCalls = 0;
  uint64_t dataCopyPadCalls = 0;
  uint64_t dataCopyBytesIn = 0;     // GM -> UB, DataCopy and DataCopyPad
  uint64_t dataCopyBytesOut = 0;    // UB -> GM
  uint64_t vectorInstructions = 0;  // calls of vector APIs (arithmetic, Cast, Duplicate, masks, reductions)
  uint64_t vectorElements = 0;      // elements those calls processed: the sum of their counts
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

  // Vector results reach the scalar unit only after SetFlag<V_S> and its WaitFlag issued after the last vector
  // instruction; until then a scalar read of UB would see stale data on the NPU.
  void NoteVectorInstruction() { ++vectorInstructions_; }
  void SetFlag(HardEvent event, int32_t id);
  void WaitFlag(HardEvent event, int32_t id);
  void RequireScalarSeesVectorResults(const char *op) const;
  void CheckFlagsWaited() const;

  // REGISTER_TILING_DEFAULT: the tiling struct this block's kernel reads (ascendc_sim/tiling_data.h).
  void RegisterTiling(const char *name, size_t bytes);
  const std::string &RegisteredTiling() const { return registeredTiling_; }
  size_t RegisteredTilingBytes() const { return registeredTilingBytes_; }

 private:
  uint32_t blockIdx_;
  uint32_t blockNum_;
  uint32_t capacity_;
  uint32_t used_ = 0;
  std::unique_ptr<uint8_t[]> ub_;
  std::deque<BufferRecord> records_;  // deque: records keep their address while buffers are added
  uint64_t vectorInstructions_ = 0;
  uint64_t vectorInstructionsSeenByScalar_ = 0;
  std::map<std::pair<HardEvent, int32_t>, uint64_t> setFlags_;  // vector instructions issued at each SetFlag
  std::string registeredTiling_;
  size_t registeredTilingBytes_ = 0;
};

BlockContext &CurrentBlock();
LaunchStats &MutableStats();
// Counts one call of a vector API that processed `elements` elements.
void CountVectorInstruction(uint64_t elements);
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

// staticTiling: the tiling bytes a static-shape binary carries (its launch passes no tiling), or null.
void BeginLaunch(uint32_t blockDim, const std::vector<uint8_t> *staticTiling);

}  // namespace sim
}  // namespace AscendC

#endif  // MS_BCEWL_ASCENDC_SIM_CONTEXT_H_
