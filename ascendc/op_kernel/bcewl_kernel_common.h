// Pieces shared by the forward and the gradient kernel: the split of the loss into core blocks and tiles, the
// broadcast-aware operand loader, the output stream and the tiling-key dispatch. The same source compiles with
// the CANN compiler and, against ascendc/sim, with g++.
#ifndef MS_BCEWL_ASCENDC_BCEWL_KERNEL_COMMON_H_
#define MS_BCEWL_ASCENDC_BCEWL_KERNEL_COMMON_H_

#include "bcewl_tiling_data.h"
#include "kernel_operator.h"

namespace bcewl {

using namespace AscendC;

constexpr int32_t kBufferNum = 2;  // double buffering: CopyIn of tile t+1 overlaps Compute of tile t
constexpr uint32_t kUbBlockBytes = 32;

template <typename A, typename B>
struct IsSame {
  static constexpr bool value = false;
};
template <typename A>
struct IsSame<A, A> {
  static constexpr bool value = true;
};

__aicore__ inline uint64_t MinU64(uint64_t a, uint64_t b) { return a < b ? a : b; }
__aicore__ inline uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t AlignUpBytes(uint32_t bytes) {
  return (bytes + kUbBlockBytes - 1) / kUbBlockBytes * kUbBlockBytes;
}

__aicore__ inline OperandTiling FullShapeOperand(const TileGeometry &geometry) {
  OperandTiling full{kOperandStream, 0, geometry.totalLength, 1};
  return full;
}

// The consecutive units of one core and the flat range [start, start + length) they cover.
struct BlockSpan {
  uint64_t firstUnit;
  uint64_t unitCount;
  uint64_t start;
  uint64_t length;
  uint64_t tileCount;
};

// One tile: `rows` rows of `cols` elements; row r starts at flat index (firstRow + r) * rowLength + colOffset.
struct TileSpan {
  uint64_t firstRow;
  uint64_t flatOffset;
  uint32_t colOffset;
  uint32_t rows;
  uint32_t cols;
  uint32_t count;  // elements every vector instruction of the tile processes, padding lanes between rows included
};

__aicore__ inline uint64_t UnitOffset(const TileGeometry &geometry, uint64_t unit) {
  return unit / geometry.chunksPerRow * geometry.rowLength + unit % geometry.chunksPerRow * geometry.chunkLength;
}

__aicore__ inline BlockSpan MakeBlockSpan(const TileGeometry &geometry, uint64_t blockIdx, uint64_t blockNum) {
  const uint64_t base = geometry.unitCount / blockNum;
  const uint64_t extra = geometry.unitCount % blockNum;
  BlockSpan block{};
  block.firstUnit = blockIdx * base + MinU64(blockIdx, extra);
  block.unitCount = base + (blockIdx < extra ? 1 : 0);
  if (block.unitCount == 0) {
    return block;
  }
  block.start = UnitOffset(geometry, block.firstUnit);
  block.length = UnitOffset(geometry, block.firstUnit + block.unitCount) - block.start;
  block.tileCount = CeilDiv(block.unitCount, geometry.rowsPerTile);
  return block;
}

__aicore__ inline TileSpan MakeTileSpan(const TileGeometry &geometry, const BlockSpan &block, uint64_t tile) {
  const uint64_t unit = block.firstUnit + tile * geometry.rowsPerTile;
  const uint64_t chunk = unit % geometry.chunksPerRow;
  TileSpan span{};
  span.firstRow = unit / geometry.chunksPerRow;
  span.colOffset = static_cast<uint32_t>(chunk * geometry.chunkLength);
  span.flatOffset = span.firstRow * geometry.rowLength + span.colOffset;
  span.rows = static_cast<uint32_t>(MinU64(geometry.rowsPerTile, block.firstUnit + block.unitCount - unit));
  span.cols = static_cast<uint32_t>(MinU64(geometry.chunkLength, geometry.rowLength - span.colOffset));
  span.count = (span.rows - 1) * geometry.rowStride + span.cols;
  return span;
}

// Tile rows from row r up to the next multiple of `cycle` in the flat index (cycle is a multiple of rowLength
// whenever a tile has more than one row).
__aicore__ inline uint32_t RowsToBoundary(const TileSpan &tile, uint32_t r, uint64_t rowLength, uint64_t cycle) {
  const uint64_t flat = (tile.firstRow + r) * rowLength + tile.colOffset;
  return static_cast<uint32_t>(MinU64(tile.rows - r, CeilDiv(cycle - flat % cycle, rowLength)));
}

// UB gap between rows of `cols` elements laid out every `rowStride` elements, in 32-byte blocks.
template <typename T>
__aicore__ inline uint32_t RowGapBlocks(uint32_t cols, uint32_t rowStride) {
  return (rowStride * static_cast<uint32_t>(sizeof(T)) - AlignUpBytes(cols * sizeof(T))) / kUbBlockBytes;
}

template <typename T>
__aicore__ inline bool RowsAreWholeBlocks(uint32_t rows, uint32_t cols, uint32_t rowStride) {
  return (cols * sizeof(T)) % kUbBlockBytes == 0 && (rows == 1 || cols == rowStride);
}

template <typename Tensor>
struct ElementOf;
template <typename T>
struct ElementOf<LocalTensor<T>> {
  using type = T;
};
template <typename T>
struct ElementOf<GlobalTensor<T>> {
  using type = T;
};

// One DataCopyPad block per row; the UB side of the copy (its destination or its source) has rows rowStride apart.
template <typename T>
__aicore__ inline DataCopyExtParams RowCopyParams(uint32_t rows, uint32_t cols, uint32_t rowStride, bool toGm) {
  const uint32_t gap = RowGapBlocks<T>(cols, rowStride);
  DataCopyExtParams params{static_cast<uint16_t>(rows), cols * static_cast<uint32_t>(sizeof(T)), toGm ? gap : 0,
                           toGm ? 0 : gap, 0};
  return params;
}

template <typename T>
__aicore__ inline void CopyRowsPadded(const LocalTensor<T> &dst, const GlobalTensor<T> &src, uint32_t rows,
                                      uint32_t cols, uint32_t rowStride) {
  DataCopyPadExtParams<T> padParams{false, 0, 0, T{}};
  DataCopyPad(dst, src, RowCopyParams<T>(rows, cols, rowStride, false), padParams);
}

template <typename T>
__aicore__ inline void CopyRowsPadded(const GlobalTensor<T> &dst, const LocalTensor<T> &src, uint32_t rows,
                                      uint32_t cols, uint32_t rowStride) {
  DataCopyPad(dst, src, RowCopyParams<T>(rows, cols, rowStride, true));
}

// Copies rows x cols elements between contiguous GM and UB rows rowStride apart (either direction): one DataCopy
// when that is a whole number of 32-byte blocks without gaps, otherwise one DataCopyPad.
template <typename Dst, typename Src>
__aicore__ inline void CopyRows(const Dst &dst, const Src &src, uint32_t rows, uint32_t cols, uint32_t rowStride) {
  using T = typename ElementOf<Dst>::type;
  if (RowsAreWholeBlocks<T>(rows, cols, rowStride)) {
    DataCopy(dst, src, rows * cols);
  } else {
    CopyRowsPadded(dst, src, rows, cols, rowStride);
  }
}

template <typename T>
__aicore__ inline float ScalarToFloat(T value) {
  if constexpr (IsSame<T, bfloat16_t>::value) {
    return ToFloat(value);
  } else {
    return static_cast<float>(value);
  }
}

// One value for every element (a 0-d or (1,) operand).
__aicore__ inline bool IsSingleValue(const OperandTiling &operand) {
  return operand.mode == kOperandRunConstant && operand.period == 1;
}

template <typename T>
__aicore__ inline float ReadScalar(GM_ADDR gm) {
  GlobalTensor<T> value;
  value.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(gm), 1);
  return ScalarToFloat(value.GetValue(0));
}

template <typename T>
__aicore__ inline void WidenInto(const LocalTensor<float> &dst, const LocalTensor<T> &src, uint32_t count) {
  if constexpr (IsSame<T, float>::value) {
    Muls(dst, src, 1.0f, count);
  } else {
    Cast(dst, src, RoundMode::CAST_NONE, count);
  }
}

// An input seen through the tile geometry; Acquire() hands out its values for a tile as float.
template <typename T>
class InputOperand {
 public:
  __aicore__ inline void Init(TPipe &pipe, GM_ADDR gm, const OperandTiling &tiling, const TileGeometry &geometry,
                              const BlockSpan &block) {
    tiling_ = tiling;
    rowLength_ = geometry.rowLength;
    rowStride_ = geometry.rowStride;
    const bool perBlock = tiling.mode == kOperandStream && tiling.period == geometry.totalLength;
    origin_ = perBlock ? block.start : 0;
    gm_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(gm) + origin_, perBlock ? block.length : tiling.period);
    const uint32_t floatBytes = geometry.tileCapacity * static_cast<uint32_t>(sizeof(float));
    if (tiling.mode == kOperandStream) {
      pipe.InitBuffer(inQueue_, kBufferNum, geometry.tileCapacity * static_cast<uint32_t>(sizeof(T)));
      if constexpr (!IsSame<T, float>::value) {
        pipe.InitBuffer(floatBuf_, floatBytes);
      }
      return;
    }
    pipe.InitBuffer(floatBuf_, floatBytes);
    if (tiling.mode == kOperandRowResident) {
      pipe.InitBuffer(inQueue_, 1, rowStride_ * static_cast<uint32_t>(sizeof(T)));
      LoadResidentRows(geometry.rowsPerTile);
    } else if (IsSingleValue(tiling)) {  // the same value in every tile: filled once
      const float value = ScalarToFloat(gm_.GetValue(0));
      Duplicate(floatBuf_.template Get<float>(), value, static_cast<int32_t>(geometry.tileCapacity));
    }
  }

  __aicore__ inline void CopyIn(const TileSpan &tile) {
    if (tiling_.mode != kOperandStream) {
      return;
    }
    LocalTensor<T> staged = inQueue_.template AllocTensor<T>();
    for (uint32_t r = 0; r < tile.rows;) {
      const uint32_t rows = RowsToBoundary(tile, r, rowLength_, tiling_.period);
      const uint64_t index = ((tile.firstRow + r) * rowLength_ + tile.colOffset) % tiling_.period;
      CopyRows(staged[r * rowStride_], gm_[index - origin_], rows, tile.cols, rowStride_);
      r += rows;
    }
    inQueue_.EnQue(staged);
  }

  __aicore__ inline LocalTensor<float> Acquire(const TileSpan &tile) {
    LocalTensor<float> values;
    if (tiling_.mode == kOperandStream) {
      LocalTensor<T> staged = inQueue_.template DeQue<T>();
      if constexpr (IsSame<T, float>::value) {
        held_ = staged;  // used in place, freed by Release()
        return staged;
      } else {
        values = floatBuf_.template Get<float>();
        Cast(values, staged, RoundMode::CAST_NONE, tile.count);
        inQueue_.FreeTensor(staged);
        return values;
      }
    }
    values = floatBuf_.template Get<float>();
    if (tiling_.mode == kOperandRunConstant && !IsSingleValue(tiling_)) {
      FillRuns(values, tile);
    }
    return values;
  }

  __aicore__ inline void Release() {
    if constexpr (IsSame<T, float>::value) {
      if (tiling_.mode == kOperandStream) {
        inQueue_.FreeTensor(held_);
      }
    }
  }

 private:
  // The operand is one row: load it once, widen it and replicate it to every row a tile can have.
  __aicore__ inline void LoadResidentRows(uint32_t rowsPerTile) {
    LocalTensor<T> staged = inQueue_.template AllocTensor<T>();
    CopyRows(staged, gm_, 1, static_cast<uint32_t>(rowLength_), rowStride_);
    inQueue_.EnQue(staged);
    staged = inQueue_.template DeQue<T>();
    LocalTensor<float> rows = floatBuf_.template Get<float>();
    // The whole stride, with the lanes DataCopyPad filled up to 32 bytes: every lane of a tile then holds a value
    // of the operand (the forward's finite check sums them all).
    WidenInto(rows, staged, rowStride_);
    inQueue_.FreeTensor(staged);
    for (uint32_t done = 1; done < rowsPerTile; done *= 2) {
      const uint32_t copies = static_cast<uint32_t>(MinU64(done, rowsPerTile - done));
      Muls(rows[done * rowStride_], rows, 1.0f, copies * rowStride_);
    }
  }

  // One operand value per run of `inner` flat elements; a run may span several tile rows.
  __aicore__ inline void FillRuns(const LocalTensor<float> &values, const TileSpan &tile) {
    for (uint32_t r = 0; r < tile.rows;) {
      const uint32_t rows = RowsToBoundary(tile, r, rowLength_, tiling_.inner);
      const uint64_t flat = (tile.firstRow + r) * rowLength_ + tile.colOffset;
      const float value = ScalarToFloat(gm_.GetValue(flat / tiling_.inner % tiling_.period));
      // Up to the next run's first lane, so that no lane between two rows is left unwritten.
      const uint32_t lastRowLanes = r + rows < tile.rows ? rowStride_ : tile.cols;
      Duplicate(values[r * rowStride_], value, static_cast<int32_t>((rows - 1) * rowStride_ + lastRowLanes));
      r += rows;
    }
  }

  TQue<QuePosition::VECIN, kBufferNum> inQueue_;
  TBuf<QuePosition::VECCALC> floatBuf_;
  GlobalTensor<T> gm_;
  LocalTensor<T> held_;
  OperandTiling tiling_;
  uint64_t origin_ = 0;
  uint64_t rowLength_ = 0;
  uint32_t rowStride_ = 0;
};

// weight and pos_weight, each present or not at compile time.
template <typename T, bool HasWeight, bool HasPosWeight>
class OptionalWeights {
 public:
  __aicore__ inline void Init(TPipe &pipe, GM_ADDR weight, GM_ADDR posWeight, const OperandTiling &weightTiling,
                              const OperandTiling &posWeightTiling, const TileGeometry &geometry,
                              const BlockSpan &block) {
    if constexpr (HasWeight) {
      weight_.Init(pipe, weight, weightTiling, geometry, block);
    }
    if constexpr (HasPosWeight) {
      posWeight_.Init(pipe, posWeight, posWeightTiling, geometry, block);
    }
  }

  __aicore__ inline void CopyIn(const TileSpan &tile) {
    if constexpr (HasWeight) {
      weight_.CopyIn(tile);
    }
    if constexpr (HasPosWeight) {
      posWeight_.CopyIn(tile);
    }
  }

  __aicore__ inline void Acquire(const TileSpan &tile) {
    if constexpr (HasWeight) {
      weight = weight_.Acquire(tile);
    }
    if constexpr (HasPosWeight) {
      posWeight = posWeight_.Acquire(tile);
    }
  }

  __aicore__ inline void Release() {
    if constexpr (HasWeight) {
      weight_.Release();
    }
    if constexpr (HasPosWeight) {
      posWeight_.Release();
    }
  }

  LocalTensor<float> weight;
  LocalTensor<float> posWeight;

 private:
  InputOperand<T> weight_;
  InputOperand<T> posWeight_;
};

// The per-core slice of the output and its VECOUT queue.
template <typename U>
class OutputStream {
 public:
  __aicore__ inline void Init(TPipe &pipe, GM_ADDR gm, const TileGeometry &geometry, const BlockSpan &block) {
    start_ = block.start;
    rowStride_ = geometry.rowStride;
    gm_.SetGlobalBuffer(reinterpret_cast<__gm__ U *>(gm) + block.start, block.length);
    pipe.InitBuffer(queue_, kBufferNum, geometry.tileCapacity * static_cast<uint32_t>(sizeof(U)));
  }

  __aicore__ inline LocalTensor<U> Alloc() { return queue_.template AllocTensor<U>(); }
  __aicore__ inline void Push(const LocalTensor<U> &tensor) { queue_.EnQue(tensor); }

  __aicore__ inline void CopyOut(const TileSpan &tile) {
    LocalTensor<U> result = queue_.template DeQue<U>();
    CopyRows(gm_[tile.flatOffset - start_], result, tile.rows, tile.cols, rowStride_);
    queue_.FreeTensor(result);
  }

 private:
  TQue<QuePosition::VECOUT, kBufferNum> queue_;
  GlobalTensor<U> gm_;
  uint64_t start_ = 0;
  uint32_t rowStride_ = 0;
};

// What the forward and the gradient kernel share: predict, target, the optional weights, the output and a float
// scratch buffer, set up for this core's block. Derived kernels add their inputs and define Compute().
template <typename T, bool HasWeight, bool HasPosWeight, typename OutT>
class ElementwiseKernelBase {
 public:
  __aicore__ inline void CopyOut(const TileSpan &tile) { output_.CopyOut(tile); }

 protected:
  struct Inputs {
    GM_ADDR predict;
    GM_ADDR target;
    GM_ADDR weight;
    GM_ADDR posWeight;
    GM_ADDR output;
  };

  // False when this core has no elements to process.
  __aicore__ inline bool InitCommon(const TileGeometry &geometry, const Inputs &gm, const OperandTiling &weight,
                                    const OperandTiling &posWeight, uint32_t scratchTiles) {
    block_ = MakeBlockSpan(geometry, GetBlockIdx(), GetBlockNum());
    if (block_.tileCount == 0) {
      return false;
    }
    predict_.Init(pipe_, gm.predict, FullShapeOperand(geometry), geometry, block_);
    target_.Init(pipe_, gm.target, FullShapeOperand(geometry), geometry, block_);
    weights_.Init(pipe_, gm.weight, gm.posWeight, weight, posWeight, geometry, block_);
    output_.Init(pipe_, gm.output, geometry, block_);
    pipe_.InitBuffer(scratch_, scratchTiles * geometry.tileCapacity * static_cast<uint32_t>(sizeof(float)));
    tileCapacity_ = geometry.tileCapacity;
    return true;
  }

  __aicore__ inline void CopyInCommon(const TileSpan &tile) {
    predict_.CopyIn(tile);
    target_.CopyIn(tile);
    weights_.CopyIn(tile);
  }

  __aicore__ inline void ReleaseCommon() {
    predict_.Release();
    target_.Release();
    weights_.Release();
  }

  // Scratch tile `index` (float, tileCapacity elements).
  __aicore__ inline LocalTensor<float> Scratch(uint32_t index) { return scratch_.Get<float>()[index * tileCapacity_]; }

  // The copy-in of tile t + 1 is issued before tile t is computed (the input queues hold two tiles): a Compute
  // that waits for the vector pipe, to read a result as a scalar, then leaves the next tile's copy running.
  template <typename Kernel>
  __aicore__ inline void ProcessTiles(Kernel &kernel, const TileGeometry &geometry) {
    kernel.CopyIn(MakeTileSpan(geometry, block_, 0));
    for (uint64_t t = 0; t < block_.tileCount; ++t) {
      const TileSpan tile = MakeTileSpan(geometry, block_, t);
      if (t + 1 < block_.tileCount) {
        kernel.CopyIn(MakeTileSpan(geometry, block_, t + 1));
      }
      kernel.Compute(tile);
      kernel.CopyOut(tile);
    }
  }

  TPipe pipe_;
  BlockSpan block_{};
  InputOperand<T> predict_;
  InputOperand<T> target_;
  OptionalWeights<T, HasWeight, HasPosWeight> weights_;
  OutputStream<OutT> output_;
  TBuf<QuePosition::VECCALC> scratch_;
  uint32_t tileCapacity_ = 0;
};

// v = log(1 + exp(v)), in place.
__aicore__ inline void SoftplusInPlace(const LocalTensor<float> &v, int32_t n) {
  Exp(v, v, n);
  Adds(v, v, 1.0f, n);
  Ln(v, v, n);
}

// dst = log(1 + exp(-|x|)) = softplus(-|x|), finite for every x but NaN.
__aicore__ inline void SoftplusOfNegAbs(const LocalTensor<float> &dst, const LocalTensor<float> &x, int32_t n) {
  Abs(dst, x, n);
  Muls(dst, dst, -1.0f, n);
  SoftplusInPlace(dst, n);
}

// dst = 1 + (p - 1) * y, the factor pos_weight puts on -logsig(x).
__aicore__ inline void PosWeightFactor(const LocalTensor<float> &dst, const LocalTensor<float> &p,
                                       const LocalTensor<float> &y, int32_t n) {
  Adds(dst, p, -1.0f, n);
  Mul(dst, dst, y, n);
  Adds(dst, dst, 1.0f, n);
}

template <typename Kernel, typename TilingData, typename... GmAddrs>
__aicore__ inline void RunKernel(const TilingData &tiling, GmAddrs... gm) {
  Kernel kernel;
  kernel.Run(tiling, gm...);
}

template <uint32_t DtypeCodeValue>
struct DtypeOfCode;
template <>
struct DtypeOfCode<kDtypeFloat32> {
  using type = float;
};
template <>
struct DtypeOfCode<kDtypeFloat16> {
  using type = half;
};
template <>
struct DtypeOfCode<kDtypeBFloat16> {
  using type = bfloat16_t;
};

template <typename... GmAddrs>
__aicore__ inline GM_ADDR NthAddress(uint32_t n, GmAddrs... gm) {
  GM_ADDR addresses[] = {gm...};
  return addresses[n];
}

// A single-value weight or pos_weight equal to 1, which is what the adapter passes for an absent one.
template <typename T>
__aicore__ inline bool IsUnitScalar(const OperandTiling &operand, GM_ADDR gm) {
  return IsSingleValue(operand) && ReadScalar<T>(gm) == 1.0f;
}

// Runs Kernel<T, HasWeight, HasPosWeight>, or the variant without a weight or pos_weight that is one value equal to
// 1: the same result (a factor of exactly 1; p = 1 in p * y and 1 + (p - 1) * y) in fewer instructions, for every
// input the contract covers (an infinite target, outside it, can give NaN with p and not without).
template <template <typename, bool, bool> class Kernel, typename T, bool HasWeight, bool HasPosWeight,
          typename TilingData, typename... GmAddrs>
__aicore__ inline void RunSkippingUnitWeights(const TilingData &tiling, GmAddrs... gm) {
  using Variant = Kernel<T, HasWeight, HasPosWeight>;
  if constexpr (HasWeight) {
    if (IsUnitScalar<T>(tiling.weight, NthAddress(Variant::kWeightArgument, gm...))) {
      RunSkippingUnitWeights<Kernel, T, false, HasPosWeight>(tiling, gm...);
      return;
    }
  }
  if constexpr (HasPosWeight) {
    if (IsUnitScalar<T>(tiling.posWeight, NthAddress(Variant::kPosWeightArgument, gm...))) {
      RunSkippingUnitWeights<Kernel, T, HasWeight, false>(tiling, gm...);
      return;
    }
  }
  RunKernel<Variant>(tiling, gm...);
}

// Runs the variant that tiling key Key names (bcewl_tiling_data.h), decoded at compile time.
template <template <typename, bool, bool> class Kernel, uint32_t Key, typename TilingData, typename... GmAddrs>
__aicore__ inline void RunVariant(const TilingData &tiling, GmAddrs... gm) {
  constexpr uint32_t flags = Key % kTilingKeyDtypeStride;
  static_assert(flags == 0 || flags == kTilingKeyWeightFlag || flags == kTilingKeyPosWeightFlag ||
                    flags == kTilingKeyWeightFlag + kTilingKeyPosWeightFlag,
                "not a tiling key of bcewl_tiling_data.h");
  using T = typename DtypeOfCode<Key / kTilingKeyDtypeStride>::type;
  RunSkippingUnitWeights<Kernel, T, (flags >= kTilingKeyWeightFlag),
                         (flags % kTilingKeyWeightFlag == kTilingKeyPosWeightFlag)>(tiling, gm...);
}

}  // namespace bcewl

// X(key, ...) for every tiling key the host tiling produces: 3 dtypes times 4 weight variants. Literals, because
// CANN's op compiler collects the keys from the TILING_KEY_IS arguments of the preprocessed kernel (numbers only)
// and compiles the kernel once per key with TILING_KEY_VAR defined to it: one code path per binary.
// clang-format off
#define BCEWL_FOR_EACH_TILING_KEY(X, ...)                                            \
  X(0, __VA_ARGS__)   X(1, __VA_ARGS__)   X(10, __VA_ARGS__)  X(11, __VA_ARGS__)  \
  X(100, __VA_ARGS__) X(101, __VA_ARGS__) X(110, __VA_ARGS__) X(111, __VA_ARGS__) \
  X(200, __VA_ARGS__) X(201, __VA_ARGS__) X(210, __VA_ARGS__) X(211, __VA_ARGS__)
// clang-format on

#define BCEWL_RUN_IF_TILING_KEY(key, Kernel, ...)  \
  if (TILING_KEY_IS(key)) {                        \
    ::bcewl::RunVariant<Kernel, key>(__VA_ARGS__); \
  }

// Runs Kernel<T, HasWeight, HasPosWeight>::Run(tiling, gm...) for the launch's tiling key; an unknown key runs nothing.
#define BCEWL_DISPATCH_BY_TILING_KEY(Kernel, ...) \
  BCEWL_FOR_EACH_TILING_KEY(BCEWL_RUN_IF_TILING_KEY, Kernel, __VA_ARGS__)

#endif  // MS_BCEWL_ASCENDC_BCEWL_KERNEL_COMMON_H_
