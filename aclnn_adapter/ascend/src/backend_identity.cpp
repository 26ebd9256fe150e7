// What makes the shared host sources speak for this library: ms_bcewl::Fail records into this library's own
// message (the host's error_message.cpp cannot be linked here: it defines aclGetRecentErrMsg, which CANN owns),
// and ms_bcewl::TraitsOf names this library's functions in the messages of the shared checks.
// Compiled against the host headers, like shared_checks.cpp.
#include <string>

#include "aclnnop/aclnn_ms_bcewl_binary_cross_entropy_with_logits.h"
#include "api/operation.h"
#include "runtime/error_message.h"

namespace ms_bcewl {
namespace {

thread_local std::string last_message;

}  // namespace

int Fail(const char *api, int code, const std::string &sentence) {
  last_message = std::string(api) + ": error " + std::to_string(code) + ": " + sentence;
  return code;
}

// Indexed by OpKind; this library has the first two operations only.
static_assert(static_cast<int>(OpKind::kForward) == 0 && static_cast<int>(OpKind::kGradSelf) == 1);
const OpTraits &TraitsOf(OpKind kind) {
  static const OpTraits kTraits[] = {
      {"aclnnMsBcewlBinaryCrossEntropyWithLogitsGetWorkspaceSize", "aclnnMsBcewlBinaryCrossEntropyWithLogits",
       "out", nullptr, kernel::Quantity::kLoss},
      {"aclnnMsBcewlBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize",
       "aclnnMsBcewlBinaryCrossEntropyWithLogitsBackward", "out", nullptr, kernel::Quantity::kGradSelf},
  };
  return kTraits[static_cast<int>(kind)];
}

}  // namespace ms_bcewl

extern "C" const char *aclnnMsBcewlLastErrorMessage(void) { return ms_bcewl::last_message.c_str(); }
