// ms_bcewl extension (no CANN counterpart) of the host build of libms_bcewl.so.
#ifndef MS_BCEWL_MS_BCEWL_HOST_H_
#define MS_BCEWL_MS_BCEWL_HOST_H_

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

// The message of the most recent failure on ANY thread ("" when none yet). aclGetRecentErrMsg() is per thread,
// but MindSpore runs kernels on its own threads, so a caller on another thread (Python through ctypes) reads this
// process-wide copy instead. Like aclGetRecentErrMsg(), reading does not clear it: a message stays until a later
// failure replaces it. The pointer is valid until the calling thread calls this function again.
ACL_FUNC_VISIBILITY const char *msBcewlLastErrorMessage(void);

// The threads the host kernels may use for one loop, by their own rule (MS_BCEWL_NUM_THREADS as strtol reads it,
// else the cores this process may run on): what `ms-bcewl info` reports, asked rather than recomputed.
ACL_FUNC_VISIBILITY int32_t msBcewlKernelThreads(void);

// The name of the ISA the host kernels run on (scalar, avx2, avx512, avx512bf16, neon), by their own rule: the best
// this CPU supports and the build compiled in, capped by MS_BCEWL_ISA (read once per process). A static string.
ACL_FUNC_VISIBILITY const char *msBcewlKernelIsa(void);

#ifdef __cplusplus
}
#endif

#endif  // MS_BCEWL_MS_BCEWL_HOST_H_
