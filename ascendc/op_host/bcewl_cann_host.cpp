// Reads shapes, dtypes and the platform from a gert::TilingContext, calls the plain tiling and stores its result
// with the variant's tiling key; infers output shapes and dtypes. Never run: compiled against CANN's public headers
// and the project's stand-ins only.
#include "bcewl_cann_host.h"

#include <cstdio>
#include <string>
#include <vector>

#include "bcewl_tiling.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {

// IR input indices, as declared by the OpDefs; pos_weight always follows weight.
constexpr size_t kPredict = 0;
constexpr size_t kForwardWeight = 2;
constexpr size_t kGradDout = 2;
constexpr size_t kGradScale = 3;
constexpr size_t kGradWeight = 4;

std::vector<int64_t> Dims(const gert::Shape &shape) {
  std::vector<int64_t> dims(shape.GetDimNum());
  for (size_t i = 0; i < dims.size(); ++i) dims[i] = shape.GetDim(i);
  return dims;
}

uint64_t ElementCount(const std::vector<int64_t> &dims) {
  uint64_t count = 1;
  for (int64_t dim : dims) count *= static_cast<uint64_t>(dim);
  return count;
}

bool ToDtypeCode(ge::DataType dtype, bcewl::DtypeCode *code) {
  switch (dtype) {
    case ge::DT_FLOAT:
      *code = bcewl::kDtypeFloat32;
      return true;
    case ge::DT_FLOAT16:
      *code = bcewl::kDtypeFloat16;
      return true;
    case ge::DT_BF16:
      *code = bcewl::kDtypeBFloat16;
      return true;
    default:
      return false;
  }
}

// Absent optional inputs stay absent; a broadcast the kernel cannot follow fails (the graph must expand it).
bool DescribeInput(const gert::StorageShape *shape, const std::vector<int64_t> &outDims,
                   bcewl::OperandRequest *request) {
  if (shape == nullptr) {
    *request = bcewl::OperandRequest{};
    return true;
  }
  return bcewl::DescribeBroadcast(outDims, Dims(shape->GetStorageShape()), request);
}

bcewl::PlatformLimits ReadPlatform(gert::TilingContext *context) {
  const auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
  bcewl::PlatformLimits limits;
  platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, limits.ubBytes);
  limits.coreNum = platform.GetCoreNumAiv();
  return limits;
}

// CANN gives a custom op's host code no public log: a failed tiling says why on stderr, then fails the launch.
ge::graphStatus TilingFailed(const char *opType, const std::string &why) {
  std::fprintf(stderr, "ms_bcewl: tiling of %s failed: %s\n", opType, why.c_str());
  return ge::GRAPH_FAILED;
}

// Stores the plan: tiling bytes, its variant's key (the kernel binary that runs) and the core count. The
// tiling buffer holds the struct the kernels register (REGISTER_TILING_DEFAULT), whose size the op compiler
// recorded. The workspace is 0: the kernels use none, and the system workspace (GetLibApiWorkSpaceSize) is only
// for library APIs that need one, which they do not call.
template <typename TilingData>
ge::graphStatus Store(gert::TilingContext *context, const char *opType, const bcewl::TilingPlan<TilingData> &plan) {
  if (!plan.ok()) return TilingFailed(opType, plan.error);
  TilingData *data = context->GetTilingData<TilingData>();
  size_t *workspaces = context->GetWorkspaceSizes(1);
  if (data == nullptr || workspaces == nullptr) {
    return TilingFailed(opType, "no room for the " + std::to_string(sizeof(TilingData)) +
                                    "-byte tiling struct: was the op package built from these kernels?");
  }
  *data = plan.data;
  workspaces[0] = 0;
  if (context->SetTilingKey(plan.tilingKey) != ge::GRAPH_SUCCESS) return TilingFailed(opType, "SetTilingKey");
  return context->SetBlockDim(plan.blockDim);
}

// Fills what both requests share: element count, dtype, weight, pos_weight (at weightIndex + 1) and platform.
template <typename Request>
bool ReadCommon(gert::TilingContext *context, size_t weightIndex, std::vector<int64_t> *dims, Request *request) {
  const gert::StorageShape *predict = context->GetInputShape(kPredict);
  const auto *predictDesc = context->GetInputDesc(kPredict);
  if (predict == nullptr || predictDesc == nullptr) return false;
  *dims = Dims(predict->GetStorageShape());
  request->totalLength = ElementCount(*dims);
  request->platform = ReadPlatform(context);
  return ToDtypeCode(predictDesc->GetDataType(), &request->dtype) &&
         DescribeInput(context->GetOptionalInputShape(weightIndex), *dims, &request->weight) &&
         DescribeInput(context->GetOptionalInputShape(weightIndex + 1), *dims, &request->posWeight);
}

// The kernel reads one float of `scale`; anything but one element is a caller's error.
bool IsOneElement(const gert::StorageShape *shape) {
  return shape != nullptr && ElementCount(Dims(shape->GetStorageShape())) == 1;
}

constexpr char kForwardOp[] = "MsBcewlSigmoidCrossEntropyWithLogits";
constexpr char kGradOp[] = "MsBcewlSigmoidCrossEntropyWithLogitsGrad";
constexpr char kUnreadableInputs[] =
    "inputs unreadable, of an unsupported dtype, or broadcast in a way the kernel cannot follow";

}  // namespace

ge::graphStatus MsBcewlSigmoidCrossEntropyWithLogitsTilingFunc(gert::TilingContext *context) {
  bcewl::ForwardTilingRequest request;
  std::vector<int64_t> dims;
  if (context == nullptr) return ge::GRAPH_FAILED;
  if (!ReadCommon(context, kForwardWeight, &dims, &request)) return TilingFailed(kForwardOp, kUnreadableInputs);
  return Store(context, kForwardOp, bcewl::PlanForward(request));
}

ge::graphStatus MsBcewlSigmoidCrossEntropyWithLogitsGradTilingFunc(gert::TilingContext *context) {
  bcewl::GradTilingRequest request;
  std::vector<int64_t> dims;
  if (context == nullptr) return ge::GRAPH_FAILED;
  if (!ReadCommon(context, kGradWeight, &dims, &request) ||
      !DescribeInput(context->GetInputShape(kGradDout), dims, &request.dout)) {
    return TilingFailed(kGradOp, kUnreadableInputs);
  }
  if (!IsOneElement(context->GetInputShape(kGradScale))) return TilingFailed(kGradOp, "scale must be one element");
  return Store(context, kGradOp, bcewl::PlanGrad(request));
}

}  // namespace optiling

namespace ge {

graphStatus InferShapeLikePredict(gert::InferShapeContext *context) {
  if (context == nullptr) return GRAPH_FAILED;
  const gert::Shape *predict = context->GetInputShape(0);
  gert::Shape *output = context->GetOutputShape(0);
  if (predict == nullptr || output == nullptr) return GRAPH_FAILED;
  *output = *predict;
  return GRAPH_SUCCESS;
}

graphStatus InferDataTypeFloat(gert::InferDataTypeContext *context) {
  return context == nullptr ? GRAPH_FAILED : context->SetOutputDataType(0, DT_FLOAT);
}

graphStatus InferDataTypeLikePredict(gert::InferDataTypeContext *context) {
  return context == nullptr ? GRAPH_FAILED : context->SetOutputDataType(0, context->GetInputDataType(0));
}

}  // namespace ge
