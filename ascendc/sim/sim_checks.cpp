// The rule checks of the simulated instructions and their messages.
#include <string>

#include "ascendc_sim/checks.h"
#include "ascendc_sim/context.h"
#include "ascendc_sim/data_copy.h"

namespace AscendC {
namespace sim {
namespace {

constexpr uint32_t kMaxDataCopyPadBlocks = 4095;

}  // namespace

void CheckTensorUse(const BufferRecord *record, uint32_t byteOffset, uint32_t length, uint64_t count, const char *op) {
  const std::string name(op);
  if (record == nullptr) Violation(name + ": LocalTensor was never allocated");
  if (record->state == BufferState::kFree) Violation(name + ": LocalTensor used after FreeTensor");
  if (record->state == BufferState::kQueued) Violation(name + ": LocalTensor used while it is enqueued");
  if (byteOffset % kUbBlockBytes != 0) {
    Violation(name + ": UB address " + std::to_string(byteOffset) + " is not 32-byte aligned");
  }
  if (count > length) {
    Violation(name + ": " + std::to_string(count) + " elements exceed the LocalTensor's " + std::to_string(length));
  }
}

void CheckNoPartialOverlap(uint64_t dstBegin, uint64_t dstBytes, uint64_t srcBegin, uint64_t srcBytes, const char *op) {
  const bool overlap = dstBegin < srcBegin + srcBytes && srcBegin < dstBegin + dstBytes;
  if (overlap && (dstBegin != srcBegin || dstBytes != srcBytes)) {
    Violation(std::string(op) + ": destination partly overlaps a source");
  }
}

uint32_t CheckCount(int32_t count, const char *op) {
  if (count < 0) Violation(std::string(op) + ": negative count");
  return static_cast<uint32_t>(count);
}

void LocalOffsetOutOfRange(uint32_t offset, uint32_t length) {
  Violation("LocalTensor offset " + std::to_string(offset) + " beyond its " + std::to_string(length) + " elements");
}

void GlobalRangeOutOfBounds(uint64_t offset, uint64_t count, uint64_t size, const char *what) {
  Violation(std::string(what) + ": elements [" + std::to_string(offset) + ", " + std::to_string(offset + count) +
            ") outside a GlobalTensor of " + std::to_string(size));
}

void QueueExhausted(size_t buffers) {
  Violation("AllocTensor: all " + std::to_string(buffers) +
            " buffers of the queue are in use (missing FreeTensor); the NPU would wait forever");
}

void CheckWholeBlocks(uint64_t bytes, const char *op) {
  if (bytes % kUbBlockBytes != 0) {
    Violation(std::string(op) + " of " + std::to_string(bytes) +
              " bytes is not a multiple of 32 bytes (the NPU would silently copy only " +
              std::to_string(bytes / kUbBlockBytes * kUbBlockBytes) + "); use DataCopyPad");
  }
}

void CheckPadBlocks(uint32_t blockCount, uint32_t blockLen, uint32_t gmGapBytes, uint32_t elementBytes) {
  if (blockCount == 0 || blockCount > kMaxDataCopyPadBlocks) {
    Violation("DataCopyPad: blockCount " + std::to_string(blockCount) + " outside [1, 4095]");
  }
  if (blockLen == 0 || blockLen % elementBytes != 0 || gmGapBytes % elementBytes != 0) {
    Violation("DataCopyPad: blockLen and GM stride must be positive multiples of the element size");
  }
}

}  // namespace sim
}  // namespace AscendC
