// OpDef of MsBcewlSigmoidCrossEntropyWithLogitsGrad (dx) for a CANN custom op package (register/op_def_registry.h).
// Input order follows the kernel (predict, target, dout, scale, weight, pos_weight), not CANN's aclnn API
// (gradOutput first). Never run; compiled against CANN's public headers and the project's stand-ins.
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
    // The reduction's factor as a 0-d float32 tensor (1 / numel for mean, else 1): the op takes no scalar
    // argument, which MindSpore cannot pass to an Ascend C op in both PyNative and graph mode.
    NdTensor(this->Input("scale"), REQUIRED, {ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT});
    NdTensor(this->Input("weight"), OPTIONAL, types);
    NdTensor(this->Input("pos_weight"), OPTIONAL, types);
    NdTensor(this->Output("gradient"), REQUIRED, types);
    this->SetInferShape(ge::InferShapeLikePredict).SetInferDataType(ge::InferDataTypeLikePredict);
    AddSocConfigs(this->AICore().SetTiling(optiling::MsBcewlSigmoidCrossEntropyWithLogitsGradTilingFunc));
  }
};

OP_ADD(MsBcewlSigmoidCrossEntropyWithLogitsGrad);

}  // namespace ops
