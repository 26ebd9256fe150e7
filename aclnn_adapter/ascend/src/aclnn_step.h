// One CANN aclnn op as a step of this library's phase 2: its phase 1, its workspace from this library's device
// scratch for the stream, its phase 2. A failing op is recorded with the text CANN gave for it.
#ifndef MS_BCEWL_ASCEND_ACLNN_STEP_H_
#define MS_BCEWL_ASCEND_ACLNN_STEP_H_

#include <cstdint>

#include "aclnn/acl_meta.h"
#include "status_codes.h"

namespace ms_bcewl::ascend {

// Device memory of at least `bytes` for `stream`, kept per stream for the life of the process. Growing it first
// synchronises the stream, since ops already enqueued may still use the old buffer. Throws on failure.
void *StreamScratch(aclrtStream stream, uint64_t bytes);

// Records "<op> failed with <status>: <aclGetRecentErrMsg()>" under `api` and returns status.
aclnnStatus OpFailed(const char *api, const char *op, aclnnStatus status);

template <typename PlanFunction, typename RunFunction, typename... Args>
aclnnStatus RunStep(const char *api, const char *op, PlanFunction plan, RunFunction run, aclrtStream stream,
                    Args... args) {
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = nullptr;
  aclnnStatus status = plan(args..., &workspace_size, &executor);
  if (status != ACLNN_SUCCESS) {
    return OpFailed(api, op, status);
  }
  void *workspace = workspace_size == 0 ? nullptr : StreamScratch(stream, workspace_size);
  status = run(workspace, workspace_size, executor, stream);
  return status == ACLNN_SUCCESS ? status : OpFailed(api, op, status);
}

}  // namespace ms_bcewl::ascend

// RUN_ACLNN_STEP(api, stream, aclnnXxx, args...): aclnnXxxGetWorkspaceSize(args..., &size, &executor), then
// aclnnXxx on `stream`; evaluates to the status.
#define RUN_ACLNN_STEP(api, stream, op, ...) \
  ::ms_bcewl::ascend::RunStep(api, #op, op##GetWorkspaceSize, op, stream, __VA_ARGS__)

#endif  // MS_BCEWL_ASCEND_ACLNN_STEP_H_
