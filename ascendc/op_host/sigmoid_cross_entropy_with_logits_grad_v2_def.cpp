// OpDef of SigmoidCrossEntropyWithLogitsGradV2 (dx) for a CANN custom op package. Input order follows the
// kernel (predict, target, dout, weight, pos_weight), not the aclnn API (gradOutput first).
// Untested: written against the public OpDef API (register/op_def_registry.h), never compiled here.
#ifdef MS_BCEWL_WITH_CANN

#include "bcewl_cann_host.h"

namespace ops {

class SigmoidCrossEntropyWithLogitsGradV2 : public OpDef {
 public:
  explicit SigmoidCrossEntropyWithLogitsGradV2(const char* name) : OpDef(name) {
    // One entry per supported combination: every input and the gradient share one dtype.
    const std::vector<ge::DataType> types = {ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16};
    NdTensor(this->Input("predict"), REQUIRED, types);
    NdTensor(this->Input("target"), REQUIRED, types);
    NdTensor(this->Input("dout"), REQUIRED, types);
    NdTensor(this->Input("weight"), OPTIONAL, types);
    NdTensor(this->Input("pos_weight"), OPTIONAL, types);
    NdTensor(this->Output("gradient"), REQUIRED, types);
    this->Attr("reduction").AttrType(OPTIONAL).String("mean");
    this->SetInferShape(ge::InferShapeLikePredict).SetInferDataType(ge::InferDataTypeLikePredict);
    this->AICore().SetTiling(optiling::SigmoidCrossEntropyWithLogitsGradV2TilingFunc).AddConfig("ascend910b");
  }
};

OP_ADD(SigmoidCrossEntropyWithLogitsGradV2);

}  // namespace ops

#endif  // MS_BCEWL_WITH_CANN
