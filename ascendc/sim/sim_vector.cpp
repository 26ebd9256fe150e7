// Element loops of the simulated vector instructions, in float32 as the vector unit computes them.
#include <cmath>
#include <cstring>
#include <string>

#include "ascendc_sim/checks.h"
#include "ascendc_sim/vector_math.h"

namespace AscendC {
namespace sim {
namespace {

template <typename T>
T Load(const uint8_t *base, uint32_t i) {
  T value;
  std::memcpy(&value, base + i * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void Store(uint8_t *base, uint32_t i, T value) {
  std::memcpy(base + i * sizeof(T), &value, sizeof(T));
}

template <typename Fn>
void ForEachUnary(const LocalTensor<float> &dst, const LocalTensor<float> &src, uint32_t n, Fn fn) {
  uint8_t *out = dst.SimBytes();
  const uint8_t *in = src.SimBytes();
  for (uint32_t i = 0; i < n; ++i) Store(out, i, fn(Load<float>(in, i)));
}

// NaN-propagating minimum and maximum.
float MinPropagatingNan(float a, float b) { return (std::isnan(a) || a < b) ? a : b; }
float MaxPropagatingNan(float a, float b) { return (std::isnan(a) || a > b) ? a : b; }

bool MaskBit(const uint8_t *mask, uint32_t i) { return ((mask[i / 8] >> (i % 8)) & 1u) != 0; }

bool CompareFloats(float a, float b, CMPMODE mode) {
  switch (mode) {
    case CMPMODE::LT:
      return a < b;
    case CMPMODE::GT:
      return a > b;
    case CMPMODE::EQ:
      return a == b;
    case CMPMODE::LE:
      return a <= b;
    case CMPMODE::GE:
      return a >= b;
    case CMPMODE::NE:
      return a != b;
  }
  return false;
}

uint32_t MaskBytes(uint32_t count) { return (count + 7) / 8; }

// Bytes of `count` floats rounded up to whole vector repeats: what a mask instruction reads of its mask.
uint32_t WholeRepeatsOfFloats(uint32_t count) {
  constexpr uint32_t kFloatsPerRepeat = kVectorRepeatBytes / sizeof(float);
  return (count + kFloatsPerRepeat - 1) / kFloatsPerRepeat * kFloatsPerRepeat;
}

// Overlap rules of the mask instructions are not confirmed, so the simulation forbids any overlap.
template <typename D, typename S>
void RequireDisjoint(const LocalTensor<D> &dst, uint64_t dstBytes, const LocalTensor<S> &src, uint64_t srcBytes,
                     const char *op) {
  const uint64_t dstBegin = dst.SimByteOffset();
  const uint64_t srcBegin = src.SimByteOffset();
  if (dstBegin < srcBegin + srcBytes && srcBegin < dstBegin + dstBytes) {
    Violation(std::string(op) + ": destination overlaps a source");
  }
}

void RequireSimulatedRounding(RoundMode mode, bool narrowing) {
  if (mode != RoundMode::CAST_NONE && !(narrowing && mode == RoundMode::CAST_RINT)) {
    Violation("Cast: only CAST_NONE, and CAST_RINT for narrowing, are simulated");
  }
}

template <typename D, typename S>
void CastElements(const LocalTensor<D> &dst, const LocalTensor<S> &src, RoundMode mode, uint32_t count) {
  RequireSimulatedRounding(mode, sizeof(D) < sizeof(S));
  RequireUsable(dst, count, "Cast");
  RequireUsable(src, count, "Cast");
  RequireNoPartialOverlap(dst, src, count, "Cast");
  CountVectorInstruction(count);
  uint8_t *out = dst.SimBytes();
  const uint8_t *in = src.SimBytes();
  for (uint32_t i = 0; i < count; ++i) Store(out, i, static_cast<D>(static_cast<float>(Load<S>(in, i))));
}

float BinaryResult(BinaryKind kind, float x, float y) {
  switch (kind) {
    case BinaryKind::kAdd:
      return x + y;
    case BinaryKind::kSub:
      return x - y;
    case BinaryKind::kMul:
      return x * y;
    case BinaryKind::kDiv:
      return x / y;
  }
  return x;
}

}  // namespace

void VectorUnary(UnaryKind kind, const LocalTensor<float> &dst, const LocalTensor<float> &src, float scalar,
                 int32_t count) {
  static const char *const kNames[] = {"Abs", "Exp", "Ln", "Muls", "Adds", "Mins", "Maxs"};
  const char *op = kNames[static_cast<int>(kind)];
  const uint32_t n = CheckCount(count, op);
  RequireUsable(dst, n, op);
  RequireUsable(src, n, op);
  RequireNoPartialOverlap(dst, src, n, op);
  CountVectorInstruction(n);
  switch (kind) {
    case UnaryKind::kAbs:
      return ForEachUnary(dst, src, n, [](float x) { return std::fabs(x); });
    case UnaryKind::kExp:
      return ForEachUnary(dst, src, n, [](float x) { return std::exp(x); });
    case UnaryKind::kLn:
      return ForEachUnary(dst, src, n, [](float x) { return std::log(x); });
    case UnaryKind::kMuls:
      return ForEachUnary(dst, src, n, [scalar](float x) { return x * scalar; });
    case UnaryKind::kAdds:
      return ForEachUnary(dst, src, n, [scalar](float x) { return x + scalar; });
    case UnaryKind::kMins:
      return ForEachUnary(dst, src, n, [scalar](float x) { return MinPropagatingNan(x, scalar); });
    case UnaryKind::kMaxs:
      return ForEachUnary(dst, src, n, [scalar](float x) { return MaxPropagatingNan(x, scalar); });
  }
}

void VectorBinary(BinaryKind kind, const LocalTensor<float> &dst, const LocalTensor<float> &src0,
                  const LocalTensor<float> &src1, int32_t count) {
  static const char *const kNames[] = {"Add", "Sub", "Mul", "Div"};
  const char *op = kNames[static_cast<int>(kind)];
  const uint32_t n = CheckCount(count, op);
  RequireUsable(dst, n, op);
  RequireUsable(src0, n, op);
  RequireUsable(src1, n, op);
  RequireNoPartialOverlap(dst, src0, n, op);
  RequireNoPartialOverlap(dst, src1, n, op);
  CountVectorInstruction(n);
  uint8_t *out = dst.SimBytes();
  const uint8_t *a = src0.SimBytes();
  const uint8_t *b = src1.SimBytes();
  for (uint32_t i = 0; i < n; ++i) {
    const float x = Load<float>(a, i);
    const float y = Load<float>(b, i);
    Store(out, i, BinaryResult(kind, x, y));
  }
}

void VectorDuplicate(const LocalTensor<float> &dst, float value, int32_t count) {
  const uint32_t n = CheckCount(count, "Duplicate");
  RequireUsable(dst, n, "Duplicate");
  CountVectorInstruction(n);
  uint8_t *out = dst.SimBytes();
  for (uint32_t i = 0; i < n; ++i) Store(out, i, value);
}

void VectorCompareScalar(const LocalTensor<uint8_t> &dst, const LocalTensor<float> &src, float scalar, CMPMODE mode,
                         uint32_t count) {
  if (count * sizeof(float) % kVectorRepeatBytes != 0) {
    Violation("CompareScalar: " + std::to_string(count) + " float elements are not whole 256-byte repeats");
  }
  RequireUsable(src, count, "CompareScalar");
  RequireUsable(dst, MaskBytes(count), "CompareScalar");
  RequireDisjoint(dst, MaskBytes(count), src, count * sizeof(float), "CompareScalar");
  CountVectorInstruction(count);
  uint8_t *mask = dst.SimBytes();
  const uint8_t *in = src.SimBytes();
  std::memset(mask, 0, MaskBytes(count));
  for (uint32_t i = 0; i < count; ++i) {
    if (CompareFloats(Load<float>(in, i), scalar, mode)) mask[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  }
}

void VectorSelect(const LocalTensor<float> &dst, const LocalTensor<uint8_t> &selMask, const LocalTensor<float> &src0,
                  const LocalTensor<float> *src1, float src1Scalar, SELMODE mode, uint32_t count) {
  const SELMODE expected = src1 == nullptr ? SELMODE::VSEL_TENSOR_SCALAR_MODE : SELMODE::VSEL_TENSOR_TENSOR_MODE;
  if (mode != expected)
    Violation(
        "Select: only VSEL_TENSOR_SCALAR_MODE with a scalar and VSEL_TENSOR_TENSOR_MODE "
        "with two tensors are simulated");
  if (CurrentBlock().UnallocatedBytes() < kSelectScratchUbBytes) {
    Violation("Select: " + std::to_string(CurrentBlock().UnallocatedBytes()) +
              " UB bytes left unallocated, its tensor modes need 8 KiB of scratch");
  }
  const uint32_t maskBytes = MaskBytes(WholeRepeatsOfFloats(count));
  RequireUsable(dst, count, "Select");
  RequireUsable(selMask, maskBytes, "Select");
  RequireUsable(src0, count, "Select");
  RequireDisjoint(dst, count * sizeof(float), selMask, maskBytes, "Select");
  RequireDisjoint(dst, count * sizeof(float), src0, count * sizeof(float), "Select");
  if (src1 != nullptr) {
    RequireUsable(*src1, count, "Select");
    RequireDisjoint(dst, count * sizeof(float), *src1, count * sizeof(float), "Select");
  }
  CountVectorInstruction(count);
  uint8_t *out = dst.SimBytes();
  const uint8_t *mask = selMask.SimBytes();
  const uint8_t *a = src0.SimBytes();
  const uint8_t *b = src1 == nullptr ? nullptr : src1->SimBytes();
  for (uint32_t i = 0; i < count; ++i) {
    const float other = b == nullptr ? src1Scalar : Load<float>(b, i);
    Store(out, i, MaskBit(mask, i) ? Load<float>(a, i) : other);
  }
}

void VectorReduceSum(const LocalTensor<float> &dst, const LocalTensor<float> &src,
                     const LocalTensor<float> &sharedTmpBuffer, int32_t count) {
  constexpr uint32_t kFloatsPerRepeat = kVectorRepeatBytes / sizeof(float);
  constexpr uint32_t kFloatsPerBlock = kUbBlockBytes / sizeof(float);
  const uint32_t n = CheckCount(count, "ReduceSum");
  const uint32_t repeats = (n + kFloatsPerRepeat - 1) / kFloatsPerRepeat;
  const uint32_t tmpFloats = (repeats == 0 ? 1 : repeats + kFloatsPerBlock - 1) / kFloatsPerBlock * kFloatsPerBlock;
  RequireUsable(dst, 1, "ReduceSum");
  RequireUsable(src, n, "ReduceSum");
  RequireUsable(sharedTmpBuffer, tmpFloats, "ReduceSum");
  RequireDisjoint(dst, sizeof(float), src, n * sizeof(float), "ReduceSum");
  RequireDisjoint(sharedTmpBuffer, tmpFloats * sizeof(float), src, n * sizeof(float), "ReduceSum");
  CountVectorInstruction(n);
  if (n == 0) return;
  const uint8_t *in = src.SimBytes();
  float total = 0.0f;
  for (uint32_t first = 0; first < n; first += kFloatsPerRepeat) {
    float lanes[kFloatsPerRepeat] = {};  // lanes past count add 0
    for (uint32_t i = first; i < n && i < first + kFloatsPerRepeat; ++i) lanes[i - first] = Load<float>(in, i);
    for (uint32_t width = kFloatsPerRepeat / 2; width > 0; width /= 2) {
      for (uint32_t i = 0; i < width; ++i) lanes[i] += lanes[i + width];
    }
    total = first == 0 ? lanes[0] : total + lanes[0];
  }
  Store(dst.SimBytes(), 0, total);
}

void VectorCast(const LocalTensor<float> &dst, const LocalTensor<half> &src, RoundMode mode, uint32_t count) {
  CastElements(dst, src, mode, count);
}

void VectorCast(const LocalTensor<float> &dst, const LocalTensor<bfloat16_t> &src, RoundMode mode, uint32_t count) {
  CastElements(dst, src, mode, count);
}

void VectorCast(const LocalTensor<half> &dst, const LocalTensor<float> &src, RoundMode mode, uint32_t count) {
  CastElements(dst, src, mode, count);
}

void VectorCast(const LocalTensor<bfloat16_t> &dst, const LocalTensor<float> &src, RoundMode mode, uint32_t count) {
  CastElements(dst, src, mode, count);
}

}  // namespace sim
}  // namespace AscendC
