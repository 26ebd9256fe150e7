// DataCopy (32-byte multiples only) and DataCopyPad (any byte length, each block padded to 32 bytes in UB)
// between global memory and UB.
#ifndef MS_BCEWL_ASCENDC_SIM_DATA_COPY_H_
#define MS_BCEWL_ASCENDC_SIM_DATA_COPY_H_

#include <cstdint>
#include <cstring>

#include "ascendc_sim/checks.h"
#include "ascendc_sim/context.h"
#include "ascendc_sim/tensor.h"

namespace AscendC {

struct DataCopyExtParams {
  uint16_t blockCount = 0;
  uint32_t blockLen = 0;   // bytes
  uint32_t srcStride = 0;  // gap between blocks: bytes on the GM side, 32-byte blocks on the UB side
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
};

template <typename T>
struct DataCopyPadExtParams {
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  T paddingValue{};
};

namespace sim {

// The NPU copies floor(bytes / 32) blocks without complaint; here a partial block is an error.
void CheckWholeBlocks(uint64_t bytes, const char *op);
void CheckPadBlocks(uint32_t blockCount, uint32_t blockLen, uint32_t gmGapBytes, uint32_t elementBytes);

// Adds a copy's bytes to the launch's statistics, by direction.
inline void CountCopiedBytes(uint64_t bytes, bool toGm) {
  (toGm ? MutableStats().dataCopyBytesOut : MutableStats().dataCopyBytesIn) += bytes;
}

template <typename T>
void CheckDataCopy(const LocalTensor<T> &local, const GlobalTensor<T> &global, uint32_t count, bool toGm) {
  CheckWholeBlocks(static_cast<uint64_t>(count) * sizeof(T), "DataCopy");
  RequireUsable(local, count, "DataCopy");
  global.RequireWithin(0, count, "DataCopy");
  ++MutableStats().dataCopyCalls;
  CountCopiedBytes(static_cast<uint64_t>(count) * sizeof(T), toGm);
}

// Where the blocks of one DataCopyPad lie: UB blocks start on 32-byte boundaries, GM blocks are packed.
struct PadLayout {
  uint64_t ubPitch;  // bytes from one UB block to the next
  uint64_t gmPitch;  // bytes from one GM block to the next
  uint64_t ubBytes;  // UB bytes spanned by all blocks
  uint64_t gmBytes;  // GM bytes spanned by all blocks
};

template <typename T>
PadLayout CheckPadParams(const DataCopyExtParams &params, uint32_t ubGapBlocks, uint32_t gmGapBytes) {
  CheckPadBlocks(params.blockCount, params.blockLen, gmGapBytes, sizeof(T));
  const uint64_t ubBlock = (params.blockLen + kUbBlockBytes - 1) / kUbBlockBytes * kUbBlockBytes;
  const uint64_t ubPitch = ubBlock + static_cast<uint64_t>(ubGapBlocks) * kUbBlockBytes;
  const uint64_t gmPitch = static_cast<uint64_t>(params.blockLen) + gmGapBytes;
  const uint64_t lastBlock = params.blockCount - 1;
  return PadLayout{ubPitch, gmPitch, lastBlock * ubPitch + ubBlock, lastBlock * gmPitch + params.blockLen};
}

template <typename T>
void CheckPadFootprint(const LocalTensor<T> &local, const GlobalTensor<T> &global, const PadLayout &layout,
                       const DataCopyExtParams &params, bool toGm) {
  RequireUsable(local, layout.ubBytes / sizeof(T), "DataCopyPad");
  global.RequireWithin(0, layout.gmBytes / sizeof(T), "DataCopyPad");
  ++MutableStats().dataCopyPadCalls;
  CountCopiedBytes(static_cast<uint64_t>(params.blockCount) * params.blockLen, toGm);
}

// GM -> UB without padding values: the NPU fills each block's UB lanes up to the next 32 bytes with the block's
// first element (asc-devkit DataCopyPad, GM -> UB, "dummy" data when leftPadding and rightPadding are 0).
template <typename T>
void FillDummyLanes(uint8_t *ub, uint64_t ubPitch, uint32_t blocks, uint32_t blockLen) {
  const uint32_t paddedLen = (blockLen + kUbBlockBytes - 1) / kUbBlockBytes * kUbBlockBytes;
  for (uint32_t block = 0; block < blocks; ++block) {
    uint8_t *start = ub + block * ubPitch;
    for (uint32_t offset = blockLen; offset < paddedLen; offset += sizeof(T))
      std::memcpy(start + offset, start, sizeof(T));
  }
}

inline void CopyBlocks(uint8_t *dst, uint64_t dstPitch, const uint8_t *src, uint64_t srcPitch, uint32_t blocks,
                       uint32_t blockBytes) {
  for (uint32_t block = 0; block < blocks; ++block) {
    std::memcpy(dst + block * dstPitch, src + block * srcPitch, blockBytes);
  }
}

}  // namespace sim

template <typename T>
void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const uint32_t count) {
  sim::CheckDataCopy(dst, src, count, false);
  std::memcpy(dst.SimBytes(), src.SimData(), static_cast<size_t>(count) * sizeof(T));
}

template <typename T>
void DataCopy(const GlobalTensor<T> &dst, const LocalTensor<T> &src, const uint32_t count) {
  sim::CheckDataCopy(src, dst, count, true);
  std::memcpy(dst.SimData(), src.SimBytes(), static_cast<size_t>(count) * sizeof(T));
}

template <typename T>
void DataCopyPad(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const DataCopyExtParams &params,
                 const DataCopyPadExtParams<T> &padParams) {
  if (padParams.isPad || padParams.leftPadding != 0 || padParams.rightPadding != 0) {
    sim::Violation("DataCopyPad: explicit padding is not simulated");
  }
  const sim::PadLayout layout = sim::CheckPadParams<T>(params, params.dstStride, params.srcStride);
  sim::CheckPadFootprint(dst, src, layout, params, false);
  sim::CopyBlocks(dst.SimBytes(), layout.ubPitch, reinterpret_cast<const uint8_t *>(src.SimData()), layout.gmPitch,
                  params.blockCount, params.blockLen);
  sim::FillDummyLanes<T>(dst.SimBytes(), layout.ubPitch, params.blockCount, params.blockLen);
}

template <typename T>
void DataCopyPad(const GlobalTensor<T> &dst, const LocalTensor<T> &src, const DataCopyExtParams &params) {
  const sim::PadLayout layout = sim::CheckPadParams<T>(params, params.srcStride, params.dstStride);
  sim::CheckPadFootprint(src, dst, layout, params, true);
  sim::CopyBlocks(reinterpret_cast<uint8_t *>(dst.SimData()), layout.gmPitch, src.SimBytes(), layout.ubPitch,
                  params.blockCount, params.blockLen);
}

}  // namespace AscendC

#endif  // MS_BCEWL_ASCENDC_SIM_DATA_COPY_H_
