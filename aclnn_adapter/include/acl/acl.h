// Application umbrella header, as in CANN.
#ifndef MS_BCEWL_ACL_ACL_H_
#define MS_BCEWL_ACL_ACL_H_

#include "acl/acl_base.h"
#include "acl/acl_rt.h"

#endif  // MS_BCEWL_ACL_ACL_H_
