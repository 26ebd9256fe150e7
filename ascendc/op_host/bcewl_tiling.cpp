#include "bcewl_tiling.h"

#include <algorithm>
#include <limits>

namespace bcewl {
namespace {

constexpr uint64_t kUbBlockBytes = 32;
constexpr uint64_t kQueueDepth = 2;  // every TQue the kernels allocate is double-buffered
constexpr uint64_t kFloatBytes = sizeof(float);

// What a kernel allocates besides its broadcast operands, per element of tile capacity.
struct KernelBuffers {
  uint64_t inputBytes;    // dtype of predict, target and the operands
  uint64_t outputBytes;   // forward: float; gradient: the input dtype
  uint64_t scratchTiles;  // float scratch tiles (TBuf)
  bool selectMask;        // a one-bit-per-element mask (TBuf), and kSelectScratchUbBytes of UB left unallocated
};

// UB bytes = perElement * tileCapacity + fixed + maskBitsPerElement * tileCapacity / 8.
struct UbCost {
  explicit UbCost(uint64_t perElementBytes = 0, uint64_t fixedBytes = 0, uint64_t maskBits = 0)
      : perElement(perElementBytes), fixed(fixedBytes), maskBitsPerElement(maskBits) {}
  uint64_t perElement;
  uint64_t fixed;
  uint64_t maskBitsPerElement;
};

struct GeometryPlan {
  TileGeometry geometry{};
  uint32_t blockDim = 0;
  uint64_t ubBytes = 0;
  std::string error;
};

uint64_t AlignUp(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }
uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

uint64_t UbBytesFor(const UbCost &cost, uint64_t tileCapacity) {
  return tileCapacity * cost.perElement + tileCapacity * cost.maskBitsPerElement / 8 + cost.fixed;
}

// The largest tile capacity (a multiple of kTileCapacityAlignment) whose buffers fit ubBytes; 0 if none does.
uint64_t MaxTileCapacity(const UbCost &cost, uint64_t ubBytes) {
  if (cost.fixed >= ubBytes) return 0;
  const uint64_t eighthsPerElement = 8 * cost.perElement + cost.maskBitsPerElement;
  return (ubBytes - cost.fixed) * 8 / eighthsPerElement / kTileCapacityAlignment * kTileCapacityAlignment;
}

bool IsKnownDtype(DtypeCode dtype) {
  return dtype == kDtypeFloat32 || dtype == kDtypeFloat16 || dtype == kDtypeBFloat16;
}

uint64_t DtypeBytes(DtypeCode dtype) { return dtype == kDtypeFloat32 ? 4 : 2; }

// Mirrors InputOperand::Init in op_kernel/bcewl_kernel_common.h.
UbCost InputCost(uint32_t mode, uint64_t inputBytes, uint64_t rowStride) {
  switch (mode) {
    case kOperandStream:
      return UbCost(kQueueDepth * inputBytes + (inputBytes == kFloatBytes ? 0 : kFloatBytes));
    case kOperandRowResident:
      return UbCost(kFloatBytes, rowStride * inputBytes);
    case kOperandRunConstant:
      return UbCost(kFloatBytes);
    default:
      return UbCost();
  }
}

UbCost KernelCost(const KernelBuffers &buffers, const std::vector<OperandTiling *> &operands, uint64_t rowStride) {
  const UbCost full = InputCost(kOperandStream, buffers.inputBytes, rowStride);
  UbCost cost(2 * full.perElement + kQueueDepth * buffers.outputBytes + buffers.scratchTiles * kFloatBytes, 0,
              buffers.selectMask ? 1u : 0u);
  for (const OperandTiling *operand : operands) {
    const UbCost extra = InputCost(operand->mode, buffers.inputBytes, rowStride);
    cost.perElement += extra.perElement;
    cost.fixed += extra.fixed;
  }
  return cost;
}

std::string ValidateOperand(const OperandRequest &request, uint64_t totalLength, const char *name) {
  if (!request.present || totalLength == 0) return "";
  const std::string prefix = std::string(name) + ": ";
  if (request.period == 0 || request.inner == 0) return prefix + "period and inner must be positive";
  if (request.period > totalLength || request.inner > totalLength / request.period ||
      totalLength % (request.period * request.inner) != 0) {
    return prefix + "period * inner must divide the element count";
  }
  return "";
}

OperandTiling Normalize(const OperandRequest &request, uint64_t totalLength) {
  if (!request.present) return OperandTiling{kOperandAbsent, 0, 0, 0};
  if (request.period == 1) return OperandTiling{kOperandRunConstant, 0, 1, totalLength};
  if (request.inner == 1) return OperandTiling{kOperandStream, 0, request.period, 1};
  return OperandTiling{kOperandRunConstant, 0, request.period, request.inner};
}

// Flat length after which the operand pattern restarts (stream) or changes value (run constant).
uint64_t RowCycle(const OperandTiling &operand, uint64_t totalLength) {
  if (operand.mode == kOperandStream) return operand.period;
  if (operand.mode == kOperandRunConstant) return operand.inner;
  return totalLength;
}

void SetStreamModes(const std::vector<OperandTiling *> &operands, uint64_t rowLength, uint64_t totalLength,
                    bool residentRows) {
  for (OperandTiling *operand : operands) {
    const bool oneRow = operand->mode != kOperandRunConstant && operand->mode != kOperandAbsent &&
                        operand->period == rowLength && operand->period < totalLength;
    if (oneRow) operand->mode = residentRows ? kOperandRowResident : kOperandStream;
  }
}

GeometryPlan EmptyGeometry() {
  GeometryPlan plan;
  plan.geometry.rowLength = 1;
  plan.geometry.chunksPerRow = 1;
  plan.geometry.rowsPerTile = 1;
  plan.blockDim = 1;
  return plan;
}

// Whole rows per tile: a tile is rowsPerTile rows of rowLength, the rows of a core are consecutive.
bool TryRowTiles(const UbCost &cost, uint64_t ubBytes, uint64_t rowCount, uint64_t coresWanted, GeometryPlan *plan) {
  TileGeometry &g = plan->geometry;
  if (rowCount < coresWanted) return false;
  const uint64_t rowsFit = MaxTileCapacity(cost, ubBytes) / g.rowStride;
  if (rowsFit == 0) return false;
  const uint64_t rowsPerTile = std::min<uint64_t>({rowsFit, CeilDiv(rowCount, coresWanted), kMaxRowsPerTile});
  g.chunksPerRow = 1;
  g.chunkLength = static_cast<uint32_t>(g.rowLength);
  g.unitCount = rowCount;
  g.rowsPerTile = static_cast<uint32_t>(rowsPerTile);
  g.tileCapacity = static_cast<uint32_t>(AlignUp(rowsPerTile * g.rowStride, kTileCapacityAlignment));
  plan->blockDim = static_cast<uint32_t>(coresWanted);
  plan->ubBytes = UbBytesFor(cost, g.tileCapacity);
  return true;
}

// Rows cut into chunks, one chunk per tile; chunks are also cut small enough to give every wanted core work.
void ChunkTiles(const UbCost &cost, uint64_t ubBytes, uint64_t blockElements, uint64_t rowCount, uint64_t coresWanted,
                GeometryPlan *plan) {
  TileGeometry &g = plan->geometry;
  const uint64_t maxChunk = MaxTileCapacity(cost, ubBytes);  // a multiple of blockElements too
  if (maxChunk == 0) {
    plan->error = "UB too small for tiles of " + std::to_string(kTileCapacityAlignment) +
                  " elements: " + std::to_string(ubBytes) + " bytes left for buffers";
    return;
  }
  const uint64_t chunksWanted = std::max(CeilDiv(g.rowLength, maxChunk), CeilDiv(coresWanted, rowCount));
  const uint64_t chunkLength = AlignUp(CeilDiv(g.rowLength, chunksWanted), blockElements);
  const uint64_t chunksPerRow = CeilDiv(g.rowLength, chunkLength);
  if (chunksPerRow > std::numeric_limits<uint32_t>::max()) {
    plan->error = "too many elements for one launch";
    return;
  }
  g.chunksPerRow = static_cast<uint32_t>(chunksPerRow);
  g.chunkLength = static_cast<uint32_t>(chunkLength);
  g.rowStride = g.chunkLength;
  g.unitCount = rowCount * chunksPerRow;
  g.rowsPerTile = 1;
  g.tileCapacity = static_cast<uint32_t>(AlignUp(g.chunkLength, kTileCapacityAlignment));
  plan->blockDim = static_cast<uint32_t>(std::min(coresWanted, g.unitCount));
  plan->ubBytes = UbBytesFor(cost, g.tileCapacity);
}

GeometryPlan PlanGeometry(uint64_t totalLength, DtypeCode dtype, const KernelBuffers &buffers,
                          const std::vector<OperandTiling *> &operands, const PlatformLimits &platform) {
  if (totalLength == 0) return EmptyGeometry();
  GeometryPlan plan;
  const uint64_t reserved = kUbMarginBytes + (buffers.selectMask ? kSelectScratchUbBytes : 0);
  if (platform.ubBytes <= reserved) {
    plan.error = "UB too small: the platform has " + std::to_string(platform.ubBytes) +
                 " bytes and the kernel leaves " + std::to_string(reserved) + " of them free";
    return plan;
  }
  const uint64_t ubBytes = platform.ubBytes - reserved;
  uint64_t rowLength = totalLength;
  for (const OperandTiling *operand : operands) rowLength = std::min(rowLength, RowCycle(*operand, totalLength));
  for (const OperandTiling *operand : operands) {
    if (RowCycle(*operand, totalLength) % rowLength != 0) {
      plan.error = "broadcast patterns of the operands do not nest; expand one to the full shape";
      return plan;
    }
  }
  const uint64_t rowCount = totalLength / rowLength;
  const uint64_t coresWanted = std::min<uint64_t>(platform.coreNum, CeilDiv(totalLength, kMinElementsPerCore));
  const uint64_t blockElements = kUbBlockBytes / DtypeBytes(dtype);
  TileGeometry &g = plan.geometry;
  g.totalLength = totalLength;
  g.rowLength = rowLength;
  g.rowCount = rowCount;

  if (rowLength <= ubBytes) {
    g.rowStride = static_cast<uint32_t>(AlignUp(rowLength, blockElements));
    SetStreamModes(operands, rowLength, totalLength, true);
    if (TryRowTiles(KernelCost(buffers, operands, g.rowStride), ubBytes, rowCount, coresWanted, &plan)) {
      return plan;
    }
    SetStreamModes(operands, rowLength, totalLength, false);
  }
  ChunkTiles(KernelCost(buffers, operands, 0), ubBytes, blockElements, rowCount, coresWanted, &plan);
  return plan;
}

std::string ValidateCommon(DtypeCode dtype, const PlatformLimits &platform) {
  if (!IsKnownDtype(dtype)) return "unsupported dtype code " + std::to_string(dtype);
  if (platform.coreNum == 0 || platform.ubBytes == 0) return "core count and UB size must be positive";
  if (platform.ubBytes > std::numeric_limits<uint32_t>::max()) return "UB size does not fit 32 bits";
  return "";
}

uint32_t TilingKey(DtypeCode dtype, bool hasWeight, bool hasPosWeight) {
  return kTilingKeyDtypeStride * dtype + (hasWeight ? kTilingKeyWeightFlag : 0) +
         (hasPosWeight ? kTilingKeyPosWeightFlag : 0);
}

template <typename Data>
void Finish(const GeometryPlan &geometry, TilingPlan<Data> *plan) {
  plan->error = geometry.error;
  plan->data.geometry = geometry.geometry;
  plan->blockDim = geometry.blockDim;
  plan->ubBytes = geometry.ubBytes;
}

// The first error of a gradient request, or "".
std::string ValidateGrad(const GradTilingRequest &request) {
  const uint64_t n = request.totalLength;
  std::string error = ValidateCommon(request.dtype, request.platform);
  if (!error.empty()) return error;
  if (!request.dout.present) return "dout is required";
  error = ValidateOperand(request.dout, n, "dout");
  if (error.empty()) error = ValidateOperand(request.weight, n, "weight");
  if (error.empty()) error = ValidateOperand(request.posWeight, n, "pos_weight");
  return error;
}

// Where an operand broadcast to the loss shape keeps the loss's dims (operand dim == loss dim > 1): in
// [first, last], their sizes multiplying to period; total is the loss's element count.
struct KeptDims {
  size_t first = 0;
  size_t last = 0;
  uint64_t period = 1;
  uint64_t total = 1;
};

// False unless the operand broadcasts to the loss shape with its kept dims in one block: broadcast dims (operand 1,
// loss > 1) may lie only before or after it. Dims where the loss has size 1 do not matter.
bool FindKeptDims(const std::vector<int64_t> &outShape, const std::vector<int64_t> &operandShape, KeptDims *kept) {
  const size_t rank = outShape.size();
  const size_t lead = rank - operandShape.size();
  kept->first = rank;
  bool broadcastAfterKept = false;
  bool split = false;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t dim = i < lead ? 1 : operandShape[i - lead];
    if (outShape[i] < 0 || (dim != 1 && dim != outShape[i])) return false;
    kept->total *= static_cast<uint64_t>(outShape[i]);
    if (dim != 1) {
      split = split || broadcastAfterKept;
      kept->first = std::min(kept->first, i);
      kept->last = i;
      kept->period *= static_cast<uint64_t>(dim);
    } else {
      broadcastAfterKept = broadcastAfterKept || (kept->first < rank && outShape[i] != 1);
    }
  }
  return !split;
}

}  // namespace

TilingPlan<ForwardTilingData> PlanForward(const ForwardTilingRequest &request) {
  TilingPlan<ForwardTilingData> plan;
  const uint64_t n = request.totalLength;
  plan.error = ValidateCommon(request.dtype, request.platform);
  if (plan.error.empty()) plan.error = ValidateOperand(request.weight, n, "weight");
  if (plan.error.empty()) plan.error = ValidateOperand(request.posWeight, n, "pos_weight");
  if (!plan.ok()) return plan;

  auto &data = plan.data;
  plan.tilingKey = TilingKey(request.dtype, request.weight.present, request.posWeight.present);
  data.weight = Normalize(request.weight, n);
  data.posWeight = Normalize(request.posWeight, n);
  const KernelBuffers buffers{DtypeBytes(request.dtype), kFloatBytes, kForwardScratchTiles, true};
  Finish(PlanGeometry(n, request.dtype, buffers, {&data.weight, &data.posWeight}, request.platform), &plan);
  return plan;
}

TilingPlan<GradTilingData> PlanGrad(const GradTilingRequest &request) {
  TilingPlan<GradTilingData> plan;
  const uint64_t n = request.totalLength;
  plan.error = ValidateGrad(request);
  if (!plan.ok()) return plan;

  auto &data = plan.data;
  plan.tilingKey = TilingKey(request.dtype, request.weight.present, request.posWeight.present);
  data.dout = Normalize(request.dout, n);
  data.weight = Normalize(request.weight, n);
  data.posWeight = Normalize(request.posWeight, n);
  const uint64_t inputBytes = DtypeBytes(request.dtype);
  const uint64_t scratchTiles = kGradOnesScratchTiles + (inputBytes == kFloatBytes ? 0 : kGrad16BitResultScratchTiles) +
                                (request.posWeight.present ? kGradPosWeightScratchTiles : 0);
  const KernelBuffers buffers{inputBytes, inputBytes, scratchTiles, false};
  // A single-value dout is read once into a scalar factor: no buffer (GradKernel::Run).
  std::vector<OperandTiling *> operands{&data.weight, &data.posWeight};
  if (data.dout.mode != kOperandRunConstant || data.dout.period != 1) operands.push_back(&data.dout);
  Finish(PlanGeometry(n, request.dtype, buffers, operands, request.platform), &plan);
  return plan;
}

bool DescribeBroadcast(const std::vector<int64_t> &outShape, const std::vector<int64_t> &operandShape,
                       OperandRequest *request) {
  if (operandShape.size() > outShape.size()) return false;
  KeptDims kept;
  if (!FindKeptDims(outShape, operandShape, &kept)) return false;
  if (kept.total == 0) {
    *request = OperandRequest(true, 1, 1);  // nothing is read
  } else if (kept.first == outShape.size()) {
    *request = OperandRequest(true, 1, kept.total);  // one value for every element
  } else {
    uint64_t inner = 1;
    for (size_t i = kept.last + 1; i < outShape.size(); ++i) inner *= static_cast<uint64_t>(outShape[i]);
    *request = OperandRequest(true, kept.period, inner);
  }
  return true;
}

}  // namespace bcewl
