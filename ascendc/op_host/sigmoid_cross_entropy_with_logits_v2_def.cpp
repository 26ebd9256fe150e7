// OpDef of SigmoidCrossEntropyWithLogitsV2 (forward, reduction none) for a CANN custom op package.
// Untested: written against the public OpDef API (register/op_def_registry.h), never compiled here.
#ifdef MS_BCEWL_WITH_CANN

#include "bcewl_cann_host.h"

namespace ops {

class SigmoidCrossEntropyWithLogitsV2 : public OpDef {
 public:
  explicit SigmoidCrossEntropyWithLogitsV2(const char* name) : OpDef(name) {
    // One entry per supported combination: every input shares one dtype, the loss is float32.
    const std::vector<ge::DataType> inputTypes = {ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16};
    NdTensor(this->Input("predict"), REQUIRED, inputTypes);
    NdTensor(this->Input("target"), REQUIRED, inputTypes);
    NdTensor(this->Input("weight"), OPTIONAL, inputTypes);
    NdTensor(this->Input("pos_weight"), OPTIONAL, inputTypes);
    NdTensor(this->Output("loss"), REQUIRED, {ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT});
    this->SetInferShape(ge::InferShapeLikePredict).SetInferDataType(ge::InferDataTypeFloat);
    this->AICore().SetTiling(optiling::SigmoidCrossEntropyWithLogitsV2TilingFunc).AddConfig("ascend910b");
  }
};

OP_ADD(SigmoidCrossEntropyWithLogitsV2);

}  // namespace ops

#endif  // MS_BCEWL_WITH_CANN
