// Stand-in for CANN's register/op_def_registry.h and what it brings in (op_def.h, op_impl_registry.h, the
// exe_graph runtime contexts): declarations of the members op_host calls, with CANN's signatures.
#ifndef MS_BCEWL_CANN_STAND_IN_REGISTER_OP_DEF_REGISTRY_H_
#define MS_BCEWL_CANN_STAND_IN_REGISTER_OP_DEF_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/types.h"

namespace fe {
class PlatFormInfos;
}  // namespace fe

namespace gert {

class Shape {
 public:
  size_t GetDimNum() const;
  int64_t GetDim(size_t idx) const;
};

class StorageShape {
 public:
  const Shape &GetStorageShape() const;
};

class CompileTimeTensorDesc {
 public:
  ge::DataType GetDataType() const;
};

class TilingContext {
 public:
  template <typename T>
  T *GetTilingData();
  const StorageShape *GetInputShape(size_t index) const;
  const StorageShape *GetOptionalInputShape(size_t ir_index) const;
  const CompileTimeTensorDesc *GetInputDesc(size_t index) const;
  fe::PlatFormInfos *GetPlatformInfo() const;
  size_t *GetWorkspaceSizes(size_t workspace_count);
  ge::graphStatus SetTilingKey(uint64_t tiling_key);
  ge::graphStatus SetBlockDim(uint32_t block_dim);
};

class InferShapeContext {
 public:
  const Shape *GetInputShape(size_t index) const;
  Shape *GetOutputShape(size_t index);
};

class InferDataTypeContext {
 public:
  ge::DataType GetInputDataType(size_t index) const;
  ge::graphStatus SetOutputDataType(size_t index, ge::DataType datatype);
};

class OpImplRegisterV2 {
 public:
  using TilingKernelFunc = uint32_t (*)(TilingContext *);
  using InferShapeKernelFunc = uint32_t (*)(InferShapeContext *);
  using InferDataTypeKernelFunc = uint32_t (*)(InferDataTypeContext *);
};

}  // namespace gert

namespace ops {

enum Option { IGNORE = 0, OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3, VIRTUAL = 4 };

class OpParamDef {
 public:
  OpParamDef &ParamType(Option param_type);
  OpParamDef &DataType(std::vector<ge::DataType> types);
  OpParamDef &Format(std::vector<ge::Format> formats);
  OpParamDef &UnknownShapeFormat(std::vector<ge::Format> formats);
};

class OpAICoreConfig {
 public:
  OpAICoreConfig();
  OpAICoreConfig &DynamicCompileStaticFlag(bool flag);
  OpAICoreConfig &DynamicRankSupportFlag(bool flag);
  OpAICoreConfig &DynamicShapeSupportFlag(bool flag);
};

class OpAICoreDef {
 public:
  OpAICoreDef &SetTiling(gert::OpImplRegisterV2::TilingKernelFunc func);
  OpAICoreDef &AddConfig(const char *soc, OpAICoreConfig &aicore_config);
};

class OpDef {
 public:
  explicit OpDef(const char *type);
  OpParamDef &Input(const char *name);
  OpParamDef &Output(const char *name);
  OpDef &SetInferShape(gert::OpImplRegisterV2::InferShapeKernelFunc func);
  OpDef &SetInferDataType(gert::OpImplRegisterV2::InferDataTypeKernelFunc func);
  OpAICoreDef &AICore();
};

using OpDefCreator = OpDef (*)(const char *);

class OpDefFactory {
 public:
  static int OpDefRegister(const char *name, OpDefCreator creator);
};

}  // namespace ops

// As CANN's default (opbuild) expansion: a static registration of the op type's OpDef, compiled in whenever the
// file is.
#define OP_ADD(opType, ...)       \
  static int g_##opType##_added = \
      ops::OpDefFactory::OpDefRegister(#opType, [](const char *name) -> ops::OpDef { return opType(name); })

#endif  // MS_BCEWL_CANN_STAND_IN_REGISTER_OP_DEF_REGISTRY_H_
