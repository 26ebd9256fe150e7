// OpDef of MsBcewlSigmoidCrossEntropyWithLogits (forward, reduction none) for a CANN custom op package
// (register/op_def_registry.h). Never run; compiled against CANN's public headers and the project's stand-ins.
#include "bcewl_cann_host.h"

namespace ops {

class MsBcewlSigmoidCrossEntropyWithLogits : public OpDef {
 public:
  explicit MsBcewlSigmoidCrossEntropyWithLogits(const char *name) : OpDef(name) {
    // One entry per supported combination: every input shares one dtype, the loss is float32.
    const std::vector<ge::DataType> inputTypes = {ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16};
    NdTensor(this->Input("predict"), REQUIRED, inputTypes);
    NdTensor(this->Input("target"), REQUIRED, inputTypes);
    NdTensor(this->Input("weight"), OPTIONAL, inputTypes);
    NdTensor(this->Input("pos_weight"), OPTIONAL, inputTypes);
    NdTensor(this->Output("loss"), REQUIRED, {ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT});
    this->SetInferShape(ge::InferShapeLikePredict).SetInferDataType(ge::InferDataTypeFloat);
    AddSocConfigs(this->AICore().SetTiling(optiling::MsBcewlSigmoidCrossEntropyWithLogitsTilingFunc));
  }
};

OP_ADD(MsBcewlSigmoidCrossEntropyWithLogits);

}  // namespace ops
