// Non-template parts of the simulation: the current block, UB allocation, statistics, float conversions.
#include <cstring>
#include <string>
#include <vector>

#include "ascendc_sim/context.h"
#include "ascendc_sim/tiling_data.h"
#include "ascendc_sim/types.h"

namespace AscendC {
namespace sim {
namespace {

thread_local BlockContext *currentBlock = nullptr;
thread_local LaunchStats stats;
thread_local const std::vector<uint8_t> *staticTiling = nullptr;

uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float BitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// Drops the low `shift` bits of `value`, rounding to nearest, ties to even.
uint32_t ShiftRoundEven(uint32_t value, uint32_t shift) {
  const uint32_t kept = value >> shift;
  const uint32_t rest = value & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  return kept + ((rest > halfway || (rest == halfway && (kept & 1u))) ? 1u : 0u);
}

}  // namespace

void Violation(const std::string &message) {
  const std::string where =
      currentBlock == nullptr ? "[outside a block] " : "[block " + std::to_string(currentBlock->BlockIdx()) + "] ";
  throw SimViolation("SimViolation " + where + message);
}

uint16_t FloatToHalfBits(float value) {
  const uint32_t bits = FloatBits(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return sign | 0x7E00u;   // NaN stays a (quiet) NaN
  if (magnitude >= 0x47800000u) return sign | 0x7C00u;  // >= 65536 or inf: overflow
  const uint32_t exponent = magnitude >> 23;
  if (exponent < 102) return sign;  // below half the smallest subnormal: rounds to zero
  if (exponent < 113) {             // half subnormal: value = m * 2^(e-150) = h * 2^-24
    const uint32_t mantissa = (magnitude & 0x7FFFFFu) | 0x800000u;
    return sign | static_cast<uint16_t>(ShiftRoundEven(mantissa, 126 - exponent));
  }
  // Normal: rebias the exponent (127 -> 15); a carry out of the mantissa correctly bumps the exponent.
  const uint32_t rebased = ((exponent - 112) << 23) | (magnitude & 0x7FFFFFu);
  return sign | static_cast<uint16_t>(ShiftRoundEven(rebased, 13));
}

float HalfBitsToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  const uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0x1Fu) return BitsToFloat(sign | 0x7F800000u | (mantissa << 13));
  if (exponent != 0) return BitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
  const float subnormal = static_cast<float>(mantissa) * (1.0f / 16777216.0f);  // exact: m * 2^-24
  return sign != 0 ? -subnormal : subnormal;
}

uint16_t FloatToBFloat16Bits(float value) {
  const uint32_t bits = FloatBits(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  return static_cast<uint16_t>(ShiftRoundEven(bits, 16));
}

float BFloat16BitsToFloat(uint16_t bits) { return BitsToFloat(static_cast<uint32_t>(bits) << 16); }

BlockContext::BlockContext(uint32_t blockIdx, uint32_t blockNum, uint32_t ubBytes)
    : blockIdx_(blockIdx), blockNum_(blockNum), capacity_(ubBytes), ub_(new uint8_t[ubBytes]) {}

BufferRecord *BlockContext::AllocateBuffer(uint32_t bytes, bool queued) {
  if (used_ % kUbBlockBytes != 0) {
    Violation("InitBuffer: UB address " + std::to_string(used_) +
              " is not 32-byte aligned (a previous buffer length was not a multiple of 32)");
  }
  if (bytes == 0) Violation("InitBuffer with zero bytes");
  if (bytes > capacity_ - used_) {
    Violation("InitBuffer: UB overflow, " + std::to_string(used_) + " + " + std::to_string(bytes) + " bytes > " +
              std::to_string(capacity_));
  }
  std::memset(ub_.get() + used_, 0xFF, bytes);
  records_.push_back(BufferRecord{used_, bytes, queued ? BufferState::kFree : BufferState::kCalc, queued});
  used_ += bytes;
  if (used_ > stats.peakUbBytes) stats.peakUbBytes = used_;
  return &records_.back();
}

void BlockContext::CheckQueueBuffersFreed() const {
  for (const BufferRecord &record : records_) {
    if (record.queued && record.state != BufferState::kFree) {
      Violation("kernel ended with a queue buffer at UB " + std::to_string(record.offset) +
                " not freed (missing FreeTensor)");
    }
  }
}

void BlockContext::SetFlag(HardEvent event, int32_t id) {
  if (!setFlags_.emplace(std::make_pair(event, id), vectorInstructions_).second) {
    Violation("SetFlag twice on event id " + std::to_string(id) + " without a WaitFlag between them");
  }
}

void BlockContext::WaitFlag(HardEvent event, int32_t id) {
  const auto flag = setFlags_.find(std::make_pair(event, id));
  if (flag == setFlags_.end()) {
    Violation("WaitFlag on event id " + std::to_string(id) + " without its SetFlag; the NPU would wait forever");
  }
  if (event == HardEvent::V_S && flag->second > vectorInstructionsSeenByScalar_) {
    vectorInstructionsSeenByScalar_ = flag->second;
  }
  setFlags_.erase(flag);
}

void BlockContext::RequireScalarSeesVectorResults(const char *op) const {
  if (vectorInstructionsSeenByScalar_ != vectorInstructions_) {
    Violation(std::string(op) + ": scalar read of UB after a vector instruction without SetFlag/WaitFlag<V_S>");
  }
}

void BlockContext::CheckFlagsWaited() const {
  if (!setFlags_.empty()) Violation("kernel ended with a SetFlag whose WaitFlag never ran");
}

void BlockContext::RegisterTiling(const char *name, size_t bytes) {
  if (!registeredTiling_.empty() && registeredTiling_ != name) {
    Violation(std::string("REGISTER_TILING_DEFAULT of ") + name + " after " + registeredTiling_ +
              ": the op compiler takes one default tiling struct");
  }
  registeredTiling_ = name;
  registeredTilingBytes_ = bytes;
}

const std::vector<uint8_t> *StaticTiling() { return staticTiling; }

const uint8_t *TilingSource(const char *name, size_t bytes, const uint8_t *tiling) {
  const BlockContext &block = CurrentBlock();
  if (block.RegisteredTiling() != name || block.RegisteredTilingBytes() != bytes) {
    Violation(std::string("GET_TILING_DATA_WITH_STRUCT(") + name +
              ") without REGISTER_TILING_DEFAULT of that struct: the op compiler would size the tiling as 0 bytes");
  }
  if (staticTiling != nullptr) {
    if (staticTiling->size() != bytes) {
      Violation("static tiling of " + std::to_string(staticTiling->size()) + " bytes for " + name + " of " +
                std::to_string(bytes));
    }
    return staticTiling->data();
  }
  if (tiling == nullptr) Violation(std::string("dynamic-shape launch without tiling data for ") + name);
  return tiling;
}

BlockContext &CurrentBlock() {
  if (currentBlock == nullptr) Violation("Ascend C call outside SimLaunch");
  return *currentBlock;
}

LaunchStats &MutableStats() { return stats; }

void CountVectorInstruction(uint64_t elements) {
  CurrentBlock().NoteVectorInstruction();
  ++stats.vectorInstructions;
  stats.vectorElements += elements;
}
const LaunchStats &LastLaunchStats() { return stats; }

BlockScope::BlockScope(uint32_t blockIdx, uint32_t blockNum, uint32_t ubBytes) : context_(blockIdx, blockNum, ubBytes) {
  currentBlock = &context_;
}

BlockScope::~BlockScope() { currentBlock = nullptr; }

void BlockScope::Finish() {
  context_.CheckQueueBuffersFreed();
  context_.CheckFlagsWaited();
}

void BeginLaunch(uint32_t blockDim, const std::vector<uint8_t> *tiling) {
  if (blockDim == 0) Violation("launch with blockDim 0");
  stats = LaunchStats{};
  staticTiling = tiling;
}

}  // namespace sim
}  // namespace AscendC
