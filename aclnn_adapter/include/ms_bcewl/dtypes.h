// The dtypes ms_bcewl computes in (docs/contract.md §5) as each layer names them: the one map. The MindSpore entries
// translate MindSpore's dtype to aclnn's with it, the api checks aclnn's against it and picks the kernels' from it.
#ifndef MS_BCEWL_DTYPES_H_
#define MS_BCEWL_DTYPES_H_

#include <cstring>

#include "acl/acl_base.h"

// X(MindSpore name, MindSpore TypeId enumerator, aclDataType, kernel::DType enumerator, ...) for each dtype;
// arguments after X pass through to every X.
#define MS_BCEWL_FOR_EACH_DTYPE(X, ...)                              \
  X(float16, kNumberTypeFloat16, ACL_FLOAT16, kFloat16, __VA_ARGS__) \
  X(float32, kNumberTypeFloat32, ACL_FLOAT, kFloat32, __VA_ARGS__)   \
  X(bfloat16, kNumberTypeBFloat16, ACL_BF16, kBFloat16, __VA_ARGS__)

namespace ms_bcewl {

// aclnn's dtype of a MindSpore dtype name; ACL_DT_UNDEFINED for any other name, which phase 1 refuses.
inline aclDataType AclDataTypeNamed(const char *name) {
#define MS_BCEWL_DTYPE_NAMED(ms_name, type_id, acl_dtype, ...) \
  if (std::strcmp(name, #ms_name) == 0) return acl_dtype;
  if (name != nullptr) {
    MS_BCEWL_FOR_EACH_DTYPE(MS_BCEWL_DTYPE_NAMED, )
  }
#undef MS_BCEWL_DTYPE_NAMED
  return ACL_DT_UNDEFINED;
}

}  // namespace ms_bcewl

#endif  // MS_BCEWL_DTYPES_H_
