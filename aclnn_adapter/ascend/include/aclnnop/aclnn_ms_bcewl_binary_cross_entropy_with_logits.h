// The Ascend backend of the ms_bcewl aclnn adapter (libms_bcewl_ascend.so): BCEWithLogits and its gradient with
// respect to self on an NPU, with the two-phase aclnn contract and the semantics of
// aclnnBinaryCrossEntropyWithLogits[Backward] (docs/contract.md §2 Loss and gradients), under names of its own so
// that nothing collides with CANN's. Written against the public CANN API and never compiled or run (ascendc/README.md).
//
// The executor it returns is its own, not CANN's: pass it only to the matching phase-2 function below or to
// aclnnMsBcewlDestroyExecutor, never to aclDestroyAclOpExecutor / aclSetAclOpExecutorRepeatable.
// Phase 2 enqueues several CANN ops on the stream; their own workspaces come from a device buffer per stream that
// this library keeps (and grows, synchronising the stream first) for the life of the process.
#ifndef MS_BCEWL_ASCEND_ACLNN_MS_BCEWL_BINARY_CROSS_ENTROPY_WITH_LOGITS_H_
#define MS_BCEWL_ASCEND_ACLNN_MS_BCEWL_BINARY_CROSS_ENTROPY_WITH_LOGITS_H_

#include "aclnn/aclnn_base.h"

#define MS_BCEWL_ASCEND_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

// reduction: 0 none, 1 mean, 2 sum. out: target's dtype; self's shape for none, [] or [1] otherwise.
MS_BCEWL_ASCEND_API aclnnStatus aclnnMsBcewlBinaryCrossEntropyWithLogitsGetWorkspaceSize(
    const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
MS_BCEWL_ASCEND_API aclnnStatus aclnnMsBcewlBinaryCrossEntropyWithLogits(void *workspace, uint64_t workspaceSize,
                                                                         aclOpExecutor *executor,
                                                                         aclrtStream stream);

// The gradient with respect to self; out has self's shape and dtype.
MS_BCEWL_ASCEND_API aclnnStatus aclnnMsBcewlBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, const aclTensor *weightOptional,
    const aclTensor *posWeightOptional, int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);
MS_BCEWL_ASCEND_API aclnnStatus aclnnMsBcewlBinaryCrossEntropyWithLogitsBackward(void *workspace,
                                                                                 uint64_t workspaceSize,
                                                                                 aclOpExecutor *executor,
                                                                                 aclrtStream stream);

// Releases an executor that phase 2 was never given (phase 2 consumes its executor).
MS_BCEWL_ASCEND_API aclnnStatus aclnnMsBcewlDestroyExecutor(aclOpExecutor *executor);

// The sentence of this thread's last failure in this library, including the text CANN gave for a failing op.
MS_BCEWL_ASCEND_API const char *aclnnMsBcewlLastErrorMessage(void);

#ifdef __cplusplus
}
#endif

#endif  // MS_BCEWL_ASCEND_ACLNN_MS_BCEWL_BINARY_CROSS_ENTROPY_WITH_LOGITS_H_
