// OpDef of MsBcewlSigmoidCrossEntropyWithLogitsGrad (dx) for a CANN custom op package. Input order follows the
// kernel (predict, target, dout, weight, pos_weight), not the aclnn API (gradOutput first).
// Untested: written against the public OpDef API (register/op_def_registry.h), never compiled here.
#ifdef MS_BCEWL_WITH_CANN

#include "bcewl_cann_host.h"

namespace ops {

class MsBcewlSigmoidCrossEntropyWithLogitsGrad : public OpDef {
 public:
  explicit MsBcewlSigmoidCrossEntropyWithLogitsGrad(const char *name) : OpDef(name) {
    // One entry per supported combination: every input and the gradient share one dtype.
    const std::vector<ge::DataType> types = {ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16};
    NdTensor(this->Input("predict"), REQUIRED, types);
    NdTensor(this->Input("target"), REQUIRED, types);
    NdTensor(this->Input("dout"), REQUIRED, types);
    NdTensor(this->Input("weight"), OPTIONAL, types);
    NdTensor(this->Input("pos_weight"), OPTIONAL, types);
    NdTensor(this->Output("gradient"), REQUIRED, types);
    this->Attr("reduction").AttrType(REQUIRED).Int();  // the aclnn code: 0 none, 1 mean, 2 sum
    this->SetInferShape(ge::InferShapeLikePredict).SetInferDataType(ge::InferDataTypeLikePredict);
    this->AICore().SetTiling(optiling::MsBcewlSigmoidCrossEntropyWithLogitsGradTilingFunc).AddConfig("ascend910b");
  }
};

OP_ADD(MsBcewlSigmoidCrossEntropyWithLogitsGrad);

}  // namespace ops

#endif  // MS_BCEWL_WITH_CANN
