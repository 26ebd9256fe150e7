// CANN's aclnnBinaryCrossEntropyWithLogits pipeline on the NPU, planned in phase 1 and enqueued in phase 2:
//   each input (predict, target, [dout], weight, pos_weight) is used as it is when it already has the promoted
//   dtype, is dense from its first element and has a broadcast the kernel's tiling follows; otherwise
//   aclnnInplaceCopy stages it in the workspace (cast, contiguous, expanded to self's shape if need be);
//   forward: the op package's kernel (reduction none, float32 loss, at infinite logits the limits of
//   docs/contract.md §9 Infinities and NaN), then aclnnMean / aclnnReduceSum over all dims in float32 for mean /
//   sum, then aclnnInplaceCopy into out (the cast to out's dtype, any strides);
//   gradient of self: the op package's grad kernel (reduction as the aclnn int, 1/numel applied inside), then
//   aclnnInplaceCopy into out.
// An empty self launches no kernel: mean fills out with NaN, sum with 0 (aclnnInplaceFillScalar).
#ifndef MS_BCEWL_ASCEND_PIPELINE_H_
#define MS_BCEWL_ASCEND_PIPELINE_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "aclnn/acl_meta.h"
#include "shared_checks.h"

namespace ms_bcewl::ascend {

// An input as the kernel reads it: the caller's tensor, or a dense copy in the workspace.
struct StagedInput {
  const aclTensor *caller = nullptr;  // null: an absent optional input
  bool staged = false;
  std::vector<int64_t> staged_shape;
  uint64_t offset = 0;
};

// Kernel argument order of both kernels; kDout only for the gradient.
enum InputSlot { kPredict, kTarget, kDout, kWeight, kPosWeight, kInputSlots };

struct Plan {
  OpKind kind;
  int64_t reduction;
  aclTensor *out;
  std::vector<int64_t> shape;  // self's
  aclDataType dtype;           // promoted: the dtype of every kernel input
  StagedInput inputs[kInputSlots];
  uint64_t result_offset = 0;   // kernel output: the float32 loss, or dx in the promoted dtype
  uint64_t reduced_offset = 0;  // mean / sum of the loss, float32
  uint64_t workspace_bytes = 0;
};

// For phase-1 arguments (kForward or kGradSelf) that have passed the shared checks; `facts` are their tensors'.
// The caller's tensors must stay alive until phase 2 has run (the aclnn contract).
std::unique_ptr<Plan> MakePlan(const OpArguments &call, const CallFacts &facts);
// Enqueues the plan on `stream`; `workspace` holds plan.workspace_bytes bytes. Throws on internal failures.
aclnnStatus RunPlan(const Plan &plan, const char *api, void *workspace, aclrtStream stream);

}  // namespace ms_bcewl::ascend

#endif  // MS_BCEWL_ASCEND_PIPELINE_H_
