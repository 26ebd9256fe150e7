// The phase-1 checks (docs/contract.md §10 Errors) for the Ascend backend, run by the host adapter's own
// src/api/argument_checks.cpp (shared source, not a copy). This header is the seam between the two worlds:
// the Ascend sources see CANN's headers and shared_checks.cpp the host ones, so it holds no acl type beyond
// what api/operation.h declares in both (opaque handles).
#ifndef MS_BCEWL_ASCEND_SHARED_CHECKS_H_
#define MS_BCEWL_ASCEND_SHARED_CHECKS_H_

#include <cstdint>
#include <vector>

#include "api/operation.h"

namespace ms_bcewl::ascend {

// What the checks need of a tensor argument; dtype holds an aclDataType value (the same numbers in both headers).
struct TensorFacts {
  bool present = false;
  std::vector<int64_t> shape;
  int dtype = -1;
};

struct CallFacts {
  OpKind kind = OpKind::kForward;  // kForward or kGradSelf: the two operations of this library
  TensorFacts grad_output;          // kGradSelf only
  TensorFacts self;
  TensorFacts target;
  TensorFacts weight;
  TensorFacts pos_weight;
  TensorFacts out;
  int64_t reduction = 0;
  bool has_workspace_size = false;
  bool has_executor = false;
};

// 0, or 161001 / 161002 with the sentence recorded for aclnnMsBcewlLastErrorMessage(). Device data is never
// looked at (the host check for "elements but no data" cannot apply to device memory).
int CheckCall(const CallFacts &facts);

}  // namespace ms_bcewl::ascend

#endif  // MS_BCEWL_ASCEND_SHARED_CHECKS_H_
