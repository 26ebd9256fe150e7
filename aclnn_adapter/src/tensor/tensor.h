// The host aclTensor: a strided view (shape, strides and offset in elements) over a storage buffer.
#ifndef MS_BCEWL_TENSOR_TENSOR_H_
#define MS_BCEWL_TENSOR_TENSOR_H_

#include <cstdint>
#include <vector>

#include "aclnn/acl_meta.h"

struct aclTensor {
  std::vector<int64_t> view_shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  aclDataType dtype = ACL_DT_UNDEFINED;
  aclFormat format = ACL_FORMAT_UNDEFINED;
  std::vector<int64_t> storage_shape;
  void *data = nullptr;
  int64_t numel = 0;  // of the view
};

#endif  // MS_BCEWL_TENSOR_TENSOR_H_
