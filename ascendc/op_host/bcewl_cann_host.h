// CANN host callbacks of the two ops: TilingFunc wrappers around the CANN-independent tiling of bcewl_tiling.h,
// and shape / dtype inference. Built by CANN's op project (C++11, CANN's include directory and op_kernel/ only);
// checked here against stand-in CANN headers (ascendc/tests/cann_stand_in) and never run.
#ifndef MS_BCEWL_ASCENDC_BCEWL_CANN_HOST_H_
#define MS_BCEWL_ASCENDC_BCEWL_CANN_HOST_H_

#include <vector>

#include "register/op_def_registry.h"

namespace optiling {

ge::graphStatus MsBcewlSigmoidCrossEntropyWithLogitsTilingFunc(gert::TilingContext *context);
ge::graphStatus MsBcewlSigmoidCrossEntropyWithLogitsGradTilingFunc(gert::TilingContext *context);

}  // namespace optiling

namespace ops {

// The SoCs the op package is built for: Atlas A2 (ascend910b, as the vendor's own 910B kernels of this loss) and
// Atlas A3 (ascend910_93), the same AI core, where asc-devkit's API pages list every instruction the kernels use.
const char *const kSocVersions[] = {"ascend910b", "ascend910_93"};

// One AI core config per SoC, each declaring what the kernels handle: unknown dims and rank, and static shapes
// compiled as dynamic ones (the tiling passed at launch; a static compile, which embeds it, reads the same struct).
inline void AddSocConfigs(OpAICoreDef &aicore) {
  OpAICoreConfig config;
  config.DynamicCompileStaticFlag(true).DynamicRankSupportFlag(true).DynamicShapeSupportFlag(true);
  for (const char *soc : kSocVersions) aicore.AddConfig(soc, config);
}

// Declares an ND tensor parameter accepting `dtypes` (one entry per supported dtype combination).
template <typename Param, typename Presence>
Param &NdTensor(Param &param, Presence presence, const std::vector<ge::DataType> &dtypes) {
  const std::vector<ge::Format> formats(dtypes.size(), ge::FORMAT_ND);
  return param.ParamType(presence).DataType(dtypes).Format(formats).UnknownShapeFormat(formats);
}

}  // namespace ops

namespace ge {

// loss and gradient have the shape of predict.
graphStatus InferShapeLikePredict(gert::InferShapeContext *context);
// loss is always float32 (the adapter reduces and casts); the gradient has the dtype of predict.
graphStatus InferDataTypeFloat(gert::InferDataTypeContext *context);
graphStatus InferDataTypeLikePredict(gert::InferDataTypeContext *context);

}  // namespace ge

#endif  // MS_BCEWL_ASCENDC_BCEWL_CANN_HOST_H_
