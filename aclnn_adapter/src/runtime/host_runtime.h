// Internal view of the host runtime (acl/acl_rt.h): the "device" is host memory and a stream runs synchronously.
#ifndef MS_BCEWL_RUNTIME_HOST_RUNTIME_H_
#define MS_BCEWL_RUNTIME_HOST_RUNTIME_H_

#include "acl/acl_base.h"

namespace ms_bcewl {

// nullptr (the default stream) or a stream from aclrtCreateStream that has not been destroyed.
bool IsUsableStream(aclrtStream stream);

}  // namespace ms_bcewl

#endif  // MS_BCEWL_RUNTIME_HOST_RUNTIME_H_
