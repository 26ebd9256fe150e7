// Rule checks shared by the simulated instructions. The conditions are tested inline; the messages are built
// out of line (sim_checks.cpp) to keep the kernels' compile time low.
#ifndef MS_BCEWL_ASCENDC_SIM_CHECKS_H_
#define MS_BCEWL_ASCENDC_SIM_CHECKS_H_

#include <cstdint>

#include "ascendc_sim/context.h"
#include "ascendc_sim/tensor.h"

namespace AscendC {
namespace sim {

void CheckTensorUse(const BufferRecord *record, uint32_t byteOffset, uint32_t length, uint64_t count, const char *op);
void CheckNoPartialOverlap(uint64_t dstBegin, uint64_t dstBytes, uint64_t srcBegin, uint64_t srcBytes, const char *op);
uint32_t CheckCount(int32_t count, const char *op);

// The tensor must be live (allocated or dequeued, or a TBuf), start 32-byte aligned and hold `count` elements.
template <typename T>
void RequireUsable(const LocalTensor<T> &tensor, uint64_t count, const char *op) {
  CheckTensorUse(tensor.SimRecord(), tensor.SimByteOffset(), tensor.SimLength(), count, op);
}

// Vector instructions may write in place (same start, same element size) but not over a partly overlapping source.
template <typename D, typename S>
void RequireNoPartialOverlap(const LocalTensor<D> &dst, const LocalTensor<S> &src, uint64_t count, const char *op) {
  CheckNoPartialOverlap(dst.SimByteOffset(), count * sizeof(D), src.SimByteOffset(), count * sizeof(S), op);
}

}  // namespace sim
}  // namespace AscendC

#endif  // MS_BCEWL_ASCENDC_SIM_CHECKS_H_
