// Reads shapes, dtypes, the reduction attribute and the platform from a gert::TilingContext, calls the plain
// tiling and stores its result; infers output shapes and dtypes. Untested: written against the public CANN API,
// never compiled against CANN here.
#include "bcewl_cann_host.h"

#ifdef MS_BCEWL_WITH_CANN

#include <cstring>
#include <vector>

#include "bcewl_tiling.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
namespace {

// IR input indices, as declared by the OpDefs; pos_weight always follows weight.
constexpr size_t kPredict = 0;
constexpr size_t kForwardWeight = 2;
constexpr size_t kGradDout = 2;
constexpr size_t kGradWeight = 3;
constexpr size_t kGradReductionAttr = 0;

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

bcewl::PlatformLimits ReadPlatform(gert::TilingContext *context, uint32_t *systemWorkspace) {
  const auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
  bcewl::PlatformLimits limits;
  platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, limits.ubBytes);
  limits.coreNum = platform.GetCoreNumAiv();
  *systemWorkspace = platform.GetLibApiWorkSpaceSize();
  return limits;
}

template <typename TilingData>
ge::graphStatus Store(gert::TilingContext *context, const bcewl::TilingPlan<TilingData> &plan,
                      uint32_t systemWorkspace) {
  if (!plan.ok()) return ge::GRAPH_FAILED;
  gert::TilingData *raw = context->GetRawTilingData();
  if (raw == nullptr || raw->GetCapacity() < sizeof(TilingData)) return ge::GRAPH_FAILED;
  std::memcpy(raw->GetData(), &plan.data, sizeof(TilingData));
  raw->SetDataSize(sizeof(TilingData));
  context->SetBlockDim(plan.blockDim);
  size_t *workspaces = context->GetWorkspaceSizes(1);
  workspaces[0] = systemWorkspace;
  return ge::GRAPH_SUCCESS;
}

// The Int attribute holds the aclnn code (0 none, 1 mean, 2 sum); PlanGrad rejects any other value.
bcewl::Reduction ReadReduction(gert::TilingContext *context) {
  const gert::RuntimeAttrs *attrs = context->GetAttrs();
  const int64_t *code = attrs == nullptr ? nullptr : attrs->GetAttrPointer<int64_t>(kGradReductionAttr);
  return static_cast<bcewl::Reduction>(code == nullptr ? -1 : *code);
}

// Fills what both requests share: element count, dtype, weight, pos_weight (at weightIndex + 1) and platform.
template <typename Request>
bool ReadCommon(gert::TilingContext *context, size_t weightIndex, std::vector<int64_t> *dims, Request *request,
                uint32_t *systemWorkspace) {
  *dims = Dims(context->GetInputShape(kPredict)->GetStorageShape());
  request->totalLength = ElementCount(*dims);
  request->platform = ReadPlatform(context, systemWorkspace);
  return ToDtypeCode(context->GetInputDesc(kPredict)->GetDataType(), &request->dtype) &&
         DescribeInput(context->GetOptionalInputShape(weightIndex), *dims, &request->weight) &&
         DescribeInput(context->GetOptionalInputShape(weightIndex + 1), *dims, &request->posWeight);
}

}  // namespace

ge::graphStatus MsBcewlSigmoidCrossEntropyWithLogitsTilingFunc(gert::TilingContext *context) {
  bcewl::ForwardTilingRequest request;
  std::vector<int64_t> dims;
  uint32_t systemWorkspace = 0;
  if (!ReadCommon(context, kForwardWeight, &dims, &request, &systemWorkspace)) return ge::GRAPH_FAILED;
  return Store(context, bcewl::PlanForward(request), systemWorkspace);
}

ge::graphStatus MsBcewlSigmoidCrossEntropyWithLogitsGradTilingFunc(gert::TilingContext *context) {
  bcewl::GradTilingRequest request;
  std::vector<int64_t> dims;
  uint32_t systemWorkspace = 0;
  if (!ReadCommon(context, kGradWeight, &dims, &request, &systemWorkspace) ||
      !DescribeInput(context->GetInputShape(kGradDout), dims, &request.dout)) {
    return ge::GRAPH_FAILED;
  }
  request.reduction = ReadReduction(context);
  return Store(context, bcewl::PlanGrad(request), systemWorkspace);
}

}  // namespace optiling

namespace ge {

graphStatus InferShapeLikePredict(gert::InferShapeContext *context) {
  const gert::Shape *predict = context->GetInputShape(0);
  gert::Shape *output = context->GetOutputShape(0);
  if (predict == nullptr || output == nullptr) return GRAPH_FAILED;
  *output = *predict;
  return GRAPH_SUCCESS;
}

graphStatus InferDataTypeFloat(gert::InferDataTypeContext *context) { return context->SetOutputDataType(0, DT_FLOAT); }

graphStatus InferDataTypeLikePredict(gert::InferDataTypeContext *context) {
  return context->SetOutputDataType(0, context->GetInputDataType(0));
}

}  // namespace ge

#endif  // MS_BCEWL_WITH_CANN
