// Host tiling: every element covered exactly once by the kernels' own block/tile walk, no buffer beyond UB,
// 32-byte alignment, errors, and the shape-to-broadcast description.
#include <string>
#include <vector>

#include "bcewl_kernel_common.h"
#include "kernel_test_support.h"

namespace test {
namespace {

uint64_t BytesOf(bcewl::DtypeCode dtype) { return dtype == bcewl::kDtypeFloat32 ? 4 : 2; }

// Walks blocks and tiles as the kernels do and checks that they tile [0, totalLength) in order, without gaps or
// overlaps, inside the planned buffers, and aligned to 32 bytes wherever the row length allows.
void CheckCoverage(const bcewl::TileGeometry &g, uint32_t blockDim, bcewl::DtypeCode dtype, const std::string &what) {
  const uint64_t bytes = BytesOf(dtype);
  const bool alignable = (g.rowLength * bytes) % 32 == 0 || g.rowCount == 1;
  ASSERT_MSG(g.tileCapacity % bcewl::kTileCapacityAlignment == 0 && g.rowStride * bytes % 32 == 0, what);
  ASSERT_MSG(g.rowsPerTile == 1 || g.chunksPerRow == 1, what);
  ASSERT_MSG(g.rowsPerTile <= bcewl::kMaxRowsPerTile, what);
  uint64_t cursor = 0;
  for (uint32_t b = 0; b < blockDim; ++b) {
    const bcewl::BlockSpan block = bcewl::MakeBlockSpan(g, b, blockDim);
    ASSERT_MSG(block.unitCount > 0, what << ": block " << b << " has no work");
    ASSERT_MSG(block.start == cursor, what << ": block " << b << " starts at " << block.start);
    ASSERT_MSG(!alignable || block.start * bytes % 32 == 0, what << ": block " << b << " start misaligned");
    for (uint64_t t = 0; t < block.tileCount; ++t) {
      const bcewl::TileSpan tile = bcewl::MakeTileSpan(g, block, t);
      ASSERT_MSG(tile.flatOffset == cursor, what << ": tile " << t << " of block " << b << " at " << tile.flatOffset);
      ASSERT_MSG(tile.rows >= 1 && tile.rows <= g.rowsPerTile && tile.cols >= 1 && tile.cols <= g.rowStride, what);
      ASSERT_MSG(tile.count <= g.tileCapacity, what);
      ASSERT_MSG(tile.rows == 1 || tile.cols == g.rowLength, what);
      ASSERT_MSG(!alignable || tile.flatOffset * bytes % 32 == 0, what << ": tile start misaligned");
      cursor += static_cast<uint64_t>(tile.rows) * tile.cols;
    }
    ASSERT_MSG(cursor == block.start + block.length, what << ": block " << b << " length");
  }
  ASSERT_MSG(cursor == g.totalLength, what << ": covered " << cursor << " of " << g.totalLength);
}

// The margin of UB every plan leaves free, as the vendor's 910B gradient kernel of this loss does for float32.
constexpr uint64_t kVendorUbMarginBytes = 16 * 1024;

// ubReserved: UB the kernel must leave unallocated besides the margin (Select's scratch in the forward kernel).
template <typename Plan>
void CheckPlan(const Plan &plan, uint64_t n, uint32_t cores, bcewl::DtypeCode dtype, uint64_t ubReserved,
               const std::string &what) {
  ASSERT_MSG(plan.ok(), what << ": " << plan.error);
  ASSERT_MSG(plan.blockDim >= 1 && plan.blockDim <= cores, what << ": blockDim " << plan.blockDim);
  ASSERT_MSG(plan.ubBytes + ubReserved + kVendorUbMarginBytes <= bcewl::kAscend910bUbBytes,
             what << ": " << plan.ubBytes << " UB bytes");
  ASSERT_MSG(n == 0 || plan.ubBytes > 0, what);
  if (n > 0) CheckCoverage(plan.data.geometry, plan.blockDim, dtype, what);
}

struct Shape2d {
  uint64_t rows;
  uint64_t cols;
};

}  // namespace

TEST_CASE(tiling_covers_every_element_once_within_ub_for_all_core_counts) {
  const Shape2d shapes[] = {{0, 5},       {1, 1},       {1, 2},        {3, 5},        {16, 1},
                            {1, 1023},    {1, 1024},    {1, 1025},     {7, 4097},     {4096, 16},
                            {100, 10007}, {1000003, 1}, {25000, 4000}, {33333334, 3}, {1, 100000000}};
  const bcewl::DtypeCode dtypes[] = {bcewl::kDtypeFloat32, bcewl::kDtypeFloat16, bcewl::kDtypeBFloat16};
  for (const Shape2d &shape : shapes) {
    const uint64_t n = shape.rows * shape.cols;
    const bcewl::OperandRequest weights[][2] = {
        {Absent(), Absent()},
        {SameShape(n), SameShape(n)},
        {Trailing(shape.cols), Runs(shape.rows, shape.cols)},
    };
    for (bcewl::DtypeCode dtype : dtypes) {
      for (uint32_t cores = 1; cores <= 48; ++cores) {
        for (const auto &pair : weights) {
          const std::string what = std::string(DtypeName(dtype)) + " " + std::to_string(shape.rows) + "x" +
                                   std::to_string(shape.cols) + " cores=" + std::to_string(cores);
          bcewl::ForwardTilingRequest forward;
          forward.totalLength = n;
          forward.dtype = dtype;
          forward.weight = pair[0];
          forward.posWeight = pair[1];
          forward.platform.coreNum = cores;
          CheckPlan(bcewl::PlanForward(forward), n, cores, dtype, bcewl::kSelectScratchUbBytes, "forward " + what);

          bcewl::GradTilingRequest grad;
          grad.totalLength = n;
          grad.dtype = dtype;
          grad.dout = Runs(1, 1);
          grad.weight = pair[0];
          grad.posWeight = pair[1];
          grad.platform.coreNum = cores;
          CheckPlan(bcewl::PlanGrad(grad), n, cores, dtype, 0, "grad " + what);
        }
      }
    }
  }
}

TEST_CASE(tiling_uses_every_core_when_there_is_enough_work) {
  bcewl::ForwardTilingRequest request;
  request.totalLength = 48 * bcewl::kMinElementsPerCore;
  request.platform.coreNum = 48;
  ASSERT_TRUE(bcewl::PlanForward(request).blockDim == 48);
  request.totalLength = 3 * bcewl::kMinElementsPerCore;
  ASSERT_TRUE(bcewl::PlanForward(request).blockDim == 3);
  request.totalLength = 100;
  ASSERT_TRUE(bcewl::PlanForward(request).blockDim == 1);
}

TEST_CASE(tiling_key_encodes_dtype_and_variant) {
  bcewl::ForwardTilingRequest request;
  request.totalLength = 10;
  request.dtype = bcewl::kDtypeFloat16;
  request.weight = SameShape(10);
  ASSERT_TRUE(bcewl::PlanForward(request).tilingKey == 110);
  request.dtype = bcewl::kDtypeBFloat16;
  request.weight = Absent();
  request.posWeight = Trailing(5);
  ASSERT_TRUE(bcewl::PlanForward(request).tilingKey == 201);
  request.dtype = bcewl::kDtypeFloat32;
  request.weight = Trailing(2);
  ASSERT_TRUE(bcewl::PlanForward(request).tilingKey == 11);
}

TEST_CASE(tiling_gives_grad_the_key_of_its_variant) {
  bcewl::GradTilingRequest request;
  request.totalLength = 10;
  request.dtype = bcewl::kDtypeBFloat16;
  request.dout = Runs(1, 1);
  request.weight = SameShape(10);
  request.posWeight = Trailing(5);
  ASSERT_TRUE(bcewl::PlanGrad(request).tilingKey == 211);
  request.dtype = bcewl::kDtypeFloat32;
  request.weight = Absent();
  request.posWeight = Absent();
  ASSERT_TRUE(bcewl::PlanGrad(request).tilingKey == 0);
}

TEST_CASE(tiling_rejects_invalid_requests) {
  bcewl::ForwardTilingRequest forward;
  forward.totalLength = 12;
  forward.platform.coreNum = 0;
  ASSERT_TRUE(!bcewl::PlanForward(forward).ok());
  forward.platform.coreNum = 4;
  forward.dtype = static_cast<bcewl::DtypeCode>(7);
  ASSERT_TRUE(!bcewl::PlanForward(forward).ok());
  forward.dtype = bcewl::kDtypeFloat32;
  forward.weight = Trailing(5);  // 5 does not divide 12
  ASSERT_TRUE(!bcewl::PlanForward(forward).ok());
  forward.weight = Runs(0, 1);
  ASSERT_TRUE(!bcewl::PlanForward(forward).ok());
  forward.weight = Trailing(4);    // repeats every 4 ...
  forward.posWeight = Runs(2, 6);  // ... changes every 6: no common row length
  ASSERT_TRUE(bcewl::PlanForward(forward).error.find("do not nest") != std::string::npos);
  forward.posWeight = Absent();
  forward.weight = Absent();
  forward.platform.ubBytes = bcewl::kSelectScratchUbBytes + kVendorUbMarginBytes;  // nothing left beside them
  ASSERT_TRUE(bcewl::PlanForward(forward).error.find("the platform has 24576 bytes") != std::string::npos);
  forward.platform.ubBytes += 4 * 1024;  // less than 256 elements of every buffer
  ASSERT_TRUE(bcewl::PlanForward(forward).error.find("4096 bytes left for buffers") != std::string::npos);

  bcewl::GradTilingRequest grad;
  grad.totalLength = 12;
  ASSERT_TRUE(bcewl::PlanGrad(grad).error == "dout is required");
  grad.dout = SameShape(12);
  grad.weight = Trailing(7);
  ASSERT_TRUE(!bcewl::PlanGrad(grad).ok());
  grad.weight = Absent();
  grad.platform.ubBytes = kVendorUbMarginBytes;
  ASSERT_TRUE(bcewl::PlanGrad(grad).error.find("UB too small") != std::string::npos);
}

TEST_CASE(describe_broadcast_shapes) {
  struct Case {
    std::vector<int64_t> out;
    std::vector<int64_t> operand;
    bool describable;
    uint64_t period;
    uint64_t inner;
  };
  const Case cases[] = {
      {{4, 5}, {4, 5}, true, 20, 1},           // same shape
      {{4, 5}, {5}, true, 5, 1},               // (C,) on (N, C)
      {{4, 5}, {1, 5}, true, 5, 1},            // (1, C)
      {{4, 5}, {4, 1}, true, 4, 5},            // (N, 1): one value per row
      {{2, 3, 4, 5}, {3, 1, 1}, true, 3, 20},  // (C, 1, 1) on (N, C, H, W)
      {{2, 3, 4, 5}, {4, 5}, true, 20, 1},     // (H, W)
      {{2, 3, 4, 5}, {1}, true, 1, 120},       // a single value
      {{2, 3, 4, 5}, {}, true, 1, 120},        // 0-d
      {{2, 1, 4}, {2, 1, 1}, true, 2, 4},      // size-1 loss dims in between
      {{2, 3, 4, 5}, {3, 1, 5}, false, 0, 0},  // kept dims not contiguous: expand first
      {{4, 5}, {3}, false, 0, 0},              // not broadcastable
      {{5}, {2, 5}, false, 0, 0},              // would enlarge the loss
      {{1}, {5}, false, 0, 0},                 // would enlarge the loss
      {{0, 5}, {5}, true, 1, 1},               // empty loss: nothing is read
  };
  for (const Case &c : cases) {
    bcewl::OperandRequest request;
    const bool describable = bcewl::DescribeBroadcast(c.out, c.operand, &request);
    ASSERT_TRUE(describable == c.describable);
    if (!describable) continue;
    ASSERT_TRUE(request.present);
    ASSERT_MSG(request.period == c.period && request.inner == c.inner,
               "period " << request.period << " inner " << request.inner);
  }
}

}  // namespace test
