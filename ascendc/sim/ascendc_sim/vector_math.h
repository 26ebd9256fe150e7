// The vector instructions the kernels use, in their "first count elements" form. Only float math is simulated
// (the kernels widen fp16/bf16 with Cast first); the element loops live in sim_vector.cpp.
//
// Bit masks (CompareScalar's output, Select's selMask) are uint8_t tensors: element i is bit i % 8 of byte i / 8
// (the documented little-endian order). Comparisons follow IEEE 754: NaN compares false, except NE (true).
#ifndef MS_BCEWL_ASCENDC_SIM_VECTOR_MATH_H_
#define MS_BCEWL_ASCENDC_SIM_VECTOR_MATH_H_

#include <cstdint>
#include <type_traits>

#include "ascendc_sim/tensor.h"
#include "ascendc_sim/types.h"

namespace AscendC {

enum class RoundMode { CAST_NONE, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };
enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

namespace sim {

enum class UnaryKind { kAbs, kExp, kLn, kMuls, kAdds, kMins, kMaxs };
enum class BinaryKind { kAdd, kSub, kMul, kDiv };

void VectorUnary(UnaryKind kind, const LocalTensor<float> &dst, const LocalTensor<float> &src, float scalar,
                 int32_t count);
void VectorBinary(BinaryKind kind, const LocalTensor<float> &dst, const LocalTensor<float> &src0,
                  const LocalTensor<float> &src1, int32_t count);
void VectorDuplicate(const LocalTensor<float> &dst, float value, int32_t count);
void VectorCompareScalar(const LocalTensor<uint8_t> &dst, const LocalTensor<float> &src, float scalar, CMPMODE mode,
                         uint32_t count);
void VectorReduceSum(const LocalTensor<float> &dst, const LocalTensor<float> &src,
                     const LocalTensor<float> &sharedTmpBuffer, int32_t count);
// src1 == nullptr: the tensor-scalar mode with src1Scalar.
void VectorSelect(const LocalTensor<float> &dst, const LocalTensor<uint8_t> &selMask, const LocalTensor<float> &src0,
                  const LocalTensor<float> *src1, float src1Scalar, SELMODE mode, uint32_t count);
// Widening is exact; narrowing (CAST_NONE or CAST_RINT) rounds to nearest, ties to even.
void VectorCast(const LocalTensor<float> &dst, const LocalTensor<half> &src, RoundMode mode, uint32_t count);
void VectorCast(const LocalTensor<float> &dst, const LocalTensor<bfloat16_t> &src, RoundMode mode, uint32_t count);
void VectorCast(const LocalTensor<half> &dst, const LocalTensor<float> &src, RoundMode mode, uint32_t count);
void VectorCast(const LocalTensor<bfloat16_t> &dst, const LocalTensor<float> &src, RoundMode mode, uint32_t count);

template <typename T>
constexpr void RequireFloat() {
  static_assert(std::is_same<T, float>::value, "only float vector math is simulated");
}

template <typename U>
constexpr void RequireByteMask() {
  static_assert(std::is_same<U, uint8_t>::value, "only uint8_t bit masks are simulated");
}

}  // namespace sim

template <typename T>
void Abs(const LocalTensor<T> &dst, const LocalTensor<T> &src, const int32_t &count) {
  sim::RequireFloat<T>();
  sim::VectorUnary(sim::UnaryKind::kAbs, dst, src, 0.0f, count);
}

template <typename T>
void Exp(const LocalTensor<T> &dst, const LocalTensor<T> &src, const int32_t &count) {
  sim::RequireFloat<T>();
  sim::VectorUnary(sim::UnaryKind::kExp, dst, src, 0.0f, count);
}

template <typename T>
void Ln(const LocalTensor<T> &dst, const LocalTensor<T> &src, const int32_t &count) {
  sim::RequireFloat<T>();
  sim::VectorUnary(sim::UnaryKind::kLn, dst, src, 0.0f, count);
}

template <typename T>
void Muls(const LocalTensor<T> &dst, const LocalTensor<T> &src, const T &scalarValue, const int32_t &count) {
  sim::RequireFloat<T>();
  sim::VectorUnary(sim::UnaryKind::kMuls, dst, src, scalarValue, count);
}

template <typename T>
void Adds(const LocalTensor<T> &dst, const LocalTensor<T> &src, const T &scalarValue, const int32_t &count) {
  sim::RequireFloat<T>();
  sim::VectorUnary(sim::UnaryKind::kAdds, dst, src, scalarValue, count);
}

template <typename T>
void Mins(const LocalTensor<T> &dst, const LocalTensor<T> &src, const T &scalarValue, const int32_t &count) {
  sim::RequireFloat<T>();
  sim::VectorUnary(sim::UnaryKind::kMins, dst, src, scalarValue, count);
}

template <typename T>
void Maxs(const LocalTensor<T> &dst, const LocalTensor<T> &src, const T &scalarValue, const int32_t &count) {
  sim::RequireFloat<T>();
  sim::VectorUnary(sim::UnaryKind::kMaxs, dst, src, scalarValue, count);
}

template <typename T>
void Add(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1, const int32_t &count) {
  sim::RequireFloat<T>();
  sim::VectorBinary(sim::BinaryKind::kAdd, dst, src0, src1, count);
}

template <typename T>
void Sub(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1, const int32_t &count) {
  sim::RequireFloat<T>();
  sim::VectorBinary(sim::BinaryKind::kSub, dst, src0, src1, count);
}

template <typename T>
void Mul(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1, const int32_t &count) {
  sim::RequireFloat<T>();
  sim::VectorBinary(sim::BinaryKind::kMul, dst, src0, src1, count);
}

// IEEE division here; the NPU's rounding of it was not confirmed.
template <typename T>
void Div(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1, const int32_t &count) {
  sim::RequireFloat<T>();
  sim::VectorBinary(sim::BinaryKind::kDiv, dst, src0, src1, count);
}

template <typename T>
void Duplicate(const LocalTensor<T> &dst, const T &scalarValue, const int32_t &count) {
  sim::RequireFloat<T>();
  sim::VectorDuplicate(dst, scalarValue, count);
}

// The "first count elements" form requires count elements to fill whole 256-byte repeats.
template <typename T, typename U>
void CompareScalar(const LocalTensor<U> &dst, const LocalTensor<T> &src0, const T src1Scalar, CMPMODE cmpMode,
                   uint32_t count) {
  sim::RequireFloat<T>();
  sim::RequireByteMask<U>();
  sim::VectorCompareScalar(dst, src0, src1Scalar, cmpMode, count);
}

// dst = selMask bit set ? src0 : src1. On Atlas A2 the tensor-scalar and tensor-tensor modes need 8 KiB of UB left
// unallocated as their scratch.
template <typename T, typename U>
void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0, T src1Scalar,
            SELMODE selMode, uint32_t count) {
  sim::RequireFloat<T>();
  sim::RequireByteMask<U>();
  sim::VectorSelect(dst, selMask, src0, nullptr, src1Scalar, selMode, count);
}

template <typename T, typename U>
void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0,
            const LocalTensor<T> &src1, SELMODE selMode, uint32_t count) {
  sim::RequireFloat<T>();
  sim::RequireByteMask<U>();
  sim::VectorSelect(dst, selMask, src0, &src1, 0.0f, selMode, count);
}

// dst[0] = the sum of src's first count elements, as Atlas A2 adds them in this form: a binary tree within each
// 256-byte repeat, the repeats' sums in order. sharedTmpBuffer must hold one float per repeat, rounded up to 32
// bytes (what the other forms and SoCs use it for); count 0 writes nothing.
template <typename T, bool isSetMask = true>
void ReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<T> &sharedTmpBuffer,
               const int32_t count) {
  sim::RequireFloat<T>();
  sim::VectorReduceSum(dst, src, sharedTmpBuffer, count);
}

template <typename T, typename U>
void Cast(const LocalTensor<T> &dst, const LocalTensor<U> &src, const RoundMode &roundMode, const uint32_t count) {
  sim::VectorCast(dst, src, roundMode, count);
}

}  // namespace AscendC

#endif  // MS_BCEWL_ASCENDC_SIM_VECTOR_MATH_H_
