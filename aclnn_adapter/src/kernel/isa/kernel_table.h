// An ISA's table of kernels (IsaKernels, isa_kernels.h) from its vector policy V: the loops of element_math.h, and
// those over arrays that the driver stages apart from the formulas (values added to sums, the 16-bit conversions) and
// that the test hooks call (exp and log1p). Each ISA's translation unit builds its table at compile time.
#ifndef MS_BCEWL_KERNEL_ISA_KERNEL_TABLE_H_
#define MS_BCEWL_KERNEL_ISA_KERNEL_TABLE_H_

#include <cstdint>
#include <cstring>

#include "kernel/isa/element_math.h"
#include "kernel/isa/isa_kernels.h"

namespace ms_bcewl::kernel {
namespace {  // internal linkage: each ISA's translation unit has its own copy, compiled for its ISA

// Adds values[i], i = 0 .. count - 1, to their lanes of *sums in order, closing blocks as they fill.
template <class V>
void AddToBlockSums(const float *values, int64_t count, BlockSums *sums) {
  AddInBlockOrder<V>(count, sums, [&](int64_t i, int64_t lanes) { return LoadFloats<V>(values + i, lanes); });
}

template <class V>
void AddToSums(const float *values, int64_t count, double *sums) {
  int64_t i = 0;
  for (; i + V::kWidth <= count; i += V::kWidth) {
    V::AddToLanes(sums + i, V::Load(values + i));
  }
  for (; i < count; ++i) {
    sums[i] += static_cast<double>(values[i]);
  }
}

template <class V, bool kHalf>
void WidenLoop(const uint16_t *src, int64_t count, float *dst) {
  int64_t i = 0;
  for (; i + V::kWidth <= count; i += V::kWidth) {
    V::Store(dst + i, LoadSixteenBits<V, kHalf>(src + i));
  }
  if (i < count) {
    uint16_t padded[V::kWidth] = {};
    std::memcpy(padded, src + i, static_cast<size_t>(count - i) * sizeof(uint16_t));
    StoreFloats<V>(dst + i, count - i, LoadSixteenBits<V, kHalf>(padded));
  }
}

template <class V, bool kHalf>
void NarrowLoop(const float *src, int64_t count, uint16_t *dst) {
  int64_t i = 0;
  for (; i + V::kWidth <= count; i += V::kWidth) {
    StoreSixteenBits<V, kHalf>(dst + i, V::Load(src + i));
  }
  if (i < count) {
    uint16_t narrowed[V::kWidth];
    StoreSixteenBits<V, kHalf>(narrowed, LoadFloats<V>(src + i, count - i));
    std::memcpy(dst + i, narrowed, static_cast<size_t>(count - i) * sizeof(uint16_t));
  }
}

template <class V>
void Widen(DType dtype, const uint16_t *src, int64_t count, float *dst) {
  (dtype == DType::kFloat16 ? &WidenLoop<V, true> : &WidenLoop<V, false>)(src, count, dst);
}

template <class V>
void Narrow(DType dtype, const float *src, int64_t count, uint16_t *dst) {
  (dtype == DType::kFloat16 ? &NarrowLoop<V, true> : &NarrowLoop<V, false>)(src, count, dst);
}

template <class V, typename V::F (*kFunction)(typename V::F)>
void MapLoop(const float *in, int64_t count, float *out) {
  for (int64_t i = 0; i < count; i += V::kWidth) {
    const int64_t lanes = count - i < V::kWidth ? count - i : V::kWidth;
    StoreFloats<V>(out + i, lanes, kFunction(LoadFloats<V>(in + i, lanes)));
  }
}

template <class V>
constexpr IsaKernels MakeKernels(Isa isa, const char *name) {
  return IsaKernels{isa,
                    name,
                    V::kWidth,
                    &Widen<V>,
                    &Narrow<V>,
                    &Values<V>,
                    &Gradients<V>,
                    &Sums<V>,
                    &LossSumsWithGradients<V>,
                    &AddToSums<V>,
                    &AddToBlockSums<V>,
                    &MapLoop<V, &V::Exp>,
                    &MapLoop<V, &V::Log1p>};
}

}  // namespace
}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_ISA_KERNEL_TABLE_H_
