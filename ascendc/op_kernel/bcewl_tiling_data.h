// Tiling data shared by the host tiling (op_host/bcewl_tiling.cpp) and the kernels. Plain structs only:
// the same bytes are written on the host and read on the AI core.
#ifndef MS_BCEWL_ASCENDC_BCEWL_TILING_DATA_H_
#define MS_BCEWL_ASCENDC_BCEWL_TILING_DATA_H_

#include <cstdint>

namespace bcewl {

// Element type of every input of one launch (the adapter promotes mixed dtypes before the launch).
enum DtypeCode : uint32_t {
  kDtypeFloat32 = 0,
  kDtypeFloat16 = 1,
  kDtypeBFloat16 = 2,
};

// The tiling key names the kernel variant: kTilingKeyDtypeStride * dtype + kTilingKeyWeightFlag * hasWeight +
// kTilingKeyPosWeightFlag * hasPosWeight, e.g. 110 = float16 with weight, without pos_weight. The host passes it to
// SetTilingKey; the kernel is compiled once per key (TILING_KEY_IS, bcewl_kernel_common.h), not stored here.
constexpr uint32_t kTilingKeyDtypeStride = 100;
constexpr uint32_t kTilingKeyWeightFlag = 10;
constexpr uint32_t kTilingKeyPosWeightFlag = 1;

// Float scratch tiles (TBuf) each kernel allocates beside its queues; the host tiling sizes tiles for them. The
// forward's fourth holds ones for the whole launch, so that 1 - y is one Sub instead of a Muls and an Adds.
constexpr uint32_t kForwardScratchTiles = 4;
// The gradient's: ones for the launch (sigmoid is 1 / (1 + exp(-x)), a Div), a float result tile for a 16-bit
// gradient (a float32 one is computed in its output buffer), and two more with pos_weight.
constexpr uint32_t kGradOnesScratchTiles = 1;
constexpr uint32_t kGrad16BitResultScratchTiles = 1;
constexpr uint32_t kGradPosWeightScratchTiles = 2;

// How the kernel realises a broadcast operand (weight, pos_weight, dout). Element i of the output reads
// operand[(i / inner) % period].
enum OperandMode : uint32_t {
  kOperandAbsent = 0,
  kOperandStream = 1,       // inner == 1: loaded per tile like predict (period == totalLength: same shape)
  kOperandRowResident = 2,  // inner == 1, period == rowLength: one row, loaded once per core, replicated in UB
  kOperandRunConstant = 3,  // inner > 1: one value per run of `inner` elements, filled with Duplicate
};

struct OperandTiling {
  uint32_t mode;
  uint32_t reserved;
  uint64_t period;  // operand elements addressed (its element count)
  uint64_t inner;   // consecutive output elements that share one operand element
};

// The flat output is viewed as rowCount rows of rowLength elements; rowLength is the shortest period or run of
// the broadcast operands, so that no tile row crosses an operand boundary. A unit is one chunk of one row; a core
// takes consecutive units, a tile takes rowsPerTile consecutive units (always 1 when a row has several chunks).
struct TileGeometry {
  uint64_t totalLength;
  uint64_t rowLength;
  uint64_t rowCount;
  uint64_t unitCount;  // rowCount * chunksPerRow
  uint32_t chunksPerRow;
  uint32_t chunkLength;  // row elements per unit (== rowLength when chunksPerRow == 1)
  uint32_t rowStride;    // UB elements between tile rows: chunkLength rounded up to 32 bytes of the input dtype
  uint32_t rowsPerTile;
  uint32_t tileCapacity;  // elements of every per-tile UB buffer: rowsPerTile * rowStride, rounded up to 256
  uint32_t reserved;
};

struct ForwardTilingData {
  TileGeometry geometry;
  OperandTiling weight;
  OperandTiling posWeight;
};

// The gradient's reduction scale (1 / numel for mean) is the grad op's float32 input `scale`, not tiling: the op
// takes no scalar argument, which MindSpore could not pass in both modes (ascendc/README.md).
struct GradTilingData {
  TileGeometry geometry;
  OperandTiling dout;
  OperandTiling weight;
  OperandTiling posWeight;
};

static_assert(sizeof(OperandTiling) == 24, "tiling layout is shared by host and kernel");
static_assert(sizeof(TileGeometry) == 56, "tiling layout is shared by host and kernel");
static_assert(sizeof(ForwardTilingData) == 104, "tiling layout is shared by host and kernel");
static_assert(sizeof(GradTilingData) == 128, "tiling layout is shared by host and kernel");

}  // namespace bcewl

#endif  // MS_BCEWL_ASCENDC_BCEWL_TILING_DATA_H_
