#include "regressions.h"

#include <cstdio>
#include <string>
#include <vector>

#include "aclnn/acl_meta.h"

namespace fuzz {
namespace {

using Shape = std::vector<int64_t>;

constexpr int64_t kTwoTo40 = int64_t{1} << 40;

struct CreateArguments {
  Shape dims;
  int32_t dtype = ACL_FLOAT;
  int32_t format = ACL_FORMAT_ND;
  Shape storage_dims = {0};
};

// aclCreateTensor with contiguous strides (stride = nullptr); returns the tensor or nullptr.
aclTensor *Create(const CreateArguments &arguments) {
  return aclCreateTensor(arguments.dims.data(), arguments.dims.size(), static_cast<aclDataType>(arguments.dtype),
                         nullptr, 0, static_cast<aclFormat>(arguments.format), arguments.storage_dims.data(),
                         arguments.storage_dims.size(), nullptr);
}

bool RejectedAsInvalid(const CreateArguments &arguments) {
  aclTensor *tensor = Create(arguments);
  if (tensor != nullptr) {
    aclDestroyTensor(tensor);
    return false;
  }
  return std::string(aclGetRecentErrMsg()).rfind("aclCreateTensor: error 161002: ", 0) == 0;
}

bool Accepted(const CreateArguments &arguments) {
  aclTensor *tensor = Create(arguments);
  return tensor != nullptr && aclDestroyTensor(tensor) == ACLNN_SUCCESS;
}

// Found by seed 1: the contiguous strides of an empty view whose other dims multiply beyond int64 overflowed
// (signed overflow in aclCreateTensor, reported by UBSan). Such a view is now rejected with 161002.
bool EmptyViewWithStridesBeyondInt64IsRejected() {
  return RejectedAsInvalid({{0, kTwoTo40, kTwoTo40}}) && Accepted({{0, kTwoTo40}});
}

// Found by seed 1: a dataType (or format) outside the values its enum can hold was loaded as the enum (undefined
// behaviour, reported by UBSan). Such codes are now rejected with 161002; in-range unknown codes still reach
// the operations, which reject them as unsupported dtypes.
bool EnumCodesOutsideTheirRangeAreRejected() {
  return RejectedAsInvalid({{2}, INT32_MAX, ACL_FORMAT_ND, {2}}) && RejectedAsInvalid({{2}, 64, ACL_FORMAT_ND, {2}}) &&
         RejectedAsInvalid({{2}, ACL_FLOAT, -65, {2}}) && RejectedAsInvalid({{2}, ACL_FLOAT, INT32_MIN, {2}}) &&
         Accepted({{2}, 63, ACL_FORMAT_ND, {2}}) && Accepted({{2}, -64, 63, {2}});
}

struct Regression {
  const char *name;
  bool (*passes)();
};

const Regression kRegressions[] = {
    {"empty_view_with_strides_beyond_int64_is_rejected", EmptyViewWithStridesBeyondInt64IsRejected},
    {"enum_codes_outside_their_range_are_rejected", EnumCodesOutsideTheirRangeAreRejected},
};

}  // namespace

void RunRegressions(Stats *stats) {
  for (const Regression &regression : kRegressions) {
    const bool passes = regression.passes();
    std::printf("regression %s: %s\n", regression.name, passes ? "ok" : "FAILED");
    ++stats->cases;
    stats->unexpected += passes ? 0 : 1;
  }
}

}  // namespace fuzz
