// The aclnn status values this library returns. CANN defines them in opdev/op_errno.h, which its public aclnn
// headers do not include; the values are CANN's (docs/contract.md §10 Errors; the host headers define the same).
#ifndef MS_BCEWL_ASCEND_STATUS_CODES_H_
#define MS_BCEWL_ASCEND_STATUS_CODES_H_

#ifndef ACLNN_SUCCESS
#define ACLNN_SUCCESS 0
#endif
#ifndef ACLNN_ERR_PARAM_INVALID
#define ACLNN_ERR_PARAM_INVALID 161002
#endif
#ifndef ACLNN_ERR_INNER
#define ACLNN_ERR_INNER 561000
#endif

#endif  // MS_BCEWL_ASCEND_STATUS_CODES_H_
