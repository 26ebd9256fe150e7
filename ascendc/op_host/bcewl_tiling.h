// Host tiling of the MsBcewlSigmoidCrossEntropyWithLogits forward and gradient kernels, independent of CANN types.
// The CANN TilingFunc wrappers (bcewl_cann_host.cpp) and the simulation tests call these functions. C++11 and no
// include outside op_host/ and op_kernel/: CANN's op project compiles this directory as it is (ascendc/README.md).
#ifndef MS_BCEWL_ASCENDC_BCEWL_TILING_H_
#define MS_BCEWL_ASCENDC_BCEWL_TILING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "bcewl_tiling_data.h"

namespace bcewl {

constexpr uint64_t kAscend910bUbBytes = 192 * 1024;
// Below this many elements per core, launching another core costs more than it saves.
constexpr uint64_t kMinElementsPerCore = 1024;
// DataCopyPad moves at most 4095 blocks (one per tile row) per call.
constexpr uint32_t kMaxRowsPerTile = 4095;
// Every tile buffer holds a multiple of this many elements: the forward kernel's mask instructions
// (CompareScalar, Select) work on whole 256-byte repeats (64 floats), and its one-bit-per-element mask of a tile
// must be a whole number of 32-byte blocks.
constexpr uint32_t kTileCapacityAlignment = 256;
// UB that Select's tensor modes need left unallocated as their scratch (Atlas A2); the forward kernel uses them.
constexpr uint64_t kSelectScratchUbBytes = 8 * 1024;
// UB every plan leaves unallocated beyond that: the margin the vendor's 910B gradient kernel of this loss leaves
// for float32 (ops-nn sigmoid_cross_entropy_with_logits_grad_v2 reserves 4 to 64 KiB of the platform's UB size).
constexpr uint64_t kUbMarginBytes = 16 * 1024;

// An operand broadcast onto the loss: flat loss element i reads operand[(i / inner) % period]. The constructors
// keep brace initialisation working under C++11, where member initialisers make a struct no aggregate.
struct OperandRequest {
  OperandRequest() {}
  OperandRequest(bool isPresent, uint64_t periodValue, uint64_t innerValue)
      : present(isPresent), period(periodValue), inner(innerValue) {}
  bool present = false;
  uint64_t period = 1;
  uint64_t inner = 1;
};

struct PlatformLimits {
  uint32_t coreNum = 1;  // GetCoreNumAiv() on the NPU
  uint64_t ubBytes = kAscend910bUbBytes;
};

struct ForwardTilingRequest {
  uint64_t totalLength = 0;
  DtypeCode dtype = kDtypeFloat32;
  OperandRequest weight;
  OperandRequest posWeight;
  PlatformLimits platform;
};

struct GradTilingRequest {
  uint64_t totalLength = 0;
  DtypeCode dtype = kDtypeFloat32;
  OperandRequest dout;  // required: the loss shape for reduction none, a scalar (period 1) otherwise
  OperandRequest weight;
  OperandRequest posWeight;
  PlatformLimits platform;
};

template <typename TilingData>
struct TilingPlan {
  TilingData data{};
  uint32_t tilingKey = 0;  // the kernel variant: TilingFunc passes it to SetTilingKey (bcewl_tiling_data.h)
  uint32_t blockDim = 0;   // cores to launch
  uint64_t ubBytes = 0;    // UB bytes each core allocates, exactly as the kernel does
  std::string error;       // empty on success
  bool ok() const { return error.empty(); }
};

TilingPlan<ForwardTilingData> PlanForward(const ForwardTilingRequest &request);
TilingPlan<GradTilingData> PlanGrad(const GradTilingRequest &request);

// Describes an operand of shape `operandShape` broadcast (numpy rules) onto `outShape`. Returns false when the
// shapes do not broadcast without enlarging, or when the operand's non-broadcast dimensions are not one
// contiguous block (e.g. (1, C, 1, W) on (N, C, H, W)): the adapter must then expand the operand to outShape.
bool DescribeBroadcast(const std::vector<int64_t> &outShape, const std::vector<int64_t> &operandShape,
                       OperandRequest *request);

}  // namespace bcewl

#endif  // MS_BCEWL_ASCENDC_BCEWL_TILING_H_
