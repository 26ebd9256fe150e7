#include "regressions.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl_rt.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_weight_backward.h"
#include "test_harness.h"

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
TEST_CASE(empty_view_with_strides_beyond_int64_is_rejected) {
  EXPECT_TRUE(RejectedAsInvalid({{0, kTwoTo40, kTwoTo40}}));
  EXPECT_TRUE(Accepted({{0, kTwoTo40}}));
}

// Found by seed 1: a dataType (or format) outside the values its enum can hold was loaded as the enum (undefined
// behaviour, reported by UBSan). Such codes are now rejected with 161002; in-range unknown codes still reach
// the operations, which reject them as unsupported dtypes.
TEST_CASE(enum_codes_outside_their_range_are_rejected) {
  EXPECT_TRUE(RejectedAsInvalid({{2}, INT32_MAX, ACL_FORMAT_ND, {2}}));
  EXPECT_TRUE(RejectedAsInvalid({{2}, 64, ACL_FORMAT_ND, {2}}));
  EXPECT_TRUE(RejectedAsInvalid({{2}, ACL_FLOAT, -65, {2}}));
  EXPECT_TRUE(RejectedAsInvalid({{2}, ACL_FLOAT, INT32_MIN, {2}}));
  EXPECT_TRUE(Accepted({{2}, 63, ACL_FORMAT_ND, {2}}));
  EXPECT_TRUE(Accepted({{2}, -64, 63, {2}}));
}

// aclrtMemcpy of 4 host bytes with `kind` (a C caller's int): whether it returns `expected`, with a message of that
// status on failure, and copies exactly when it succeeds.
bool MemcpyGives(int32_t kind, aclError expected) {
  const unsigned char source[4] = {1, 2, 3, 4};
  unsigned char destination[4] = {};
  const aclError status =
      aclrtMemcpy(destination, sizeof(destination), source, sizeof(source), static_cast<aclrtMemcpyKind>(kind));
  const bool copied = std::memcmp(destination, source, sizeof(source)) == 0;
  if (status == ACL_SUCCESS) {
    return expected == ACL_SUCCESS && copied;
  }
  const std::string prefix = "aclrtMemcpy: error " + std::to_string(status) + ": kind " + std::to_string(kind);
  return status == expected && !copied && std::string(aclGetRecentErrMsg()).rfind(prefix, 0) == 0;
}

// Found by review after the aclCreateTensor fix: aclrtMemcpy compared its kind as the enum to range-check it, which
// is undefined for a code the enum cannot hold (aclrtMemcpyKind holds 0 .. 7: not 8 and beyond, nor negative codes);
// GCC's UBSan does not instrument such a by-value parameter, so it went unreported. Every code outside [0, 4] is now
// rejected with ACL_ERROR_INVALID_PARAM before it becomes the enum (runtime/host_runtime.h).
TEST_CASE(memcpy_kinds_outside_their_range_are_rejected) {
  for (int32_t kind : {-1, 5, 7, 8, 64, INT32_MIN, INT32_MAX}) {
    EXPECT_MSG(MemcpyGives(kind, ACL_ERROR_INVALID_PARAM), "kind " << kind);
  }
  EXPECT_TRUE(MemcpyGives(ACL_MEMCPY_HOST_TO_HOST, ACL_SUCCESS));
  EXPECT_TRUE(MemcpyGives(ACL_MEMCPY_DEFAULT, ACL_SUCCESS));
}

// A contiguous float32 view of `values`, of shape `dims`.
aclTensor *FloatView(const Shape &dims, std::vector<float> &values) {
  return aclCreateTensor(dims.data(), dims.size(), ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims.data(), dims.size(),
                         values.data());
}

// Found by the CI campaign (ASan heap-buffer-overflow): the gradient of a per-class weight with one reduction
// block per class is summed row by row, and wrote its partials through the caller's workspace pointer although the
// plan asked for 0 bytes. It now keeps them in a buffer of its own; the canary must stay untouched.
TEST_CASE(row_by_row_reduction_never_writes_a_zero_byte_workspace) {
  std::vector<float> x(100 * 64, 0.5f), y(100 * 64, 1.0f), weight(64, 1.0f), grad(1, 1.0f), grad_weight(64);
  aclTensor *tensors[] = {FloatView({}, grad), FloatView({100, 64}, x), FloatView({100, 64}, y),
                          FloatView({64}, weight), FloatView({64}, grad_weight)};
  uint64_t workspace_size = 1;
  aclOpExecutor *executor = nullptr;
  const aclnnStatus planned = aclnnBinaryCrossEntropyWithLogitsWeightBackwardGetWorkspaceSize(
      tensors[0], tensors[1], tensors[2], tensors[3], nullptr, 1, tensors[4], &workspace_size, &executor);
  EXPECT_EQ(planned, ACLNN_SUCCESS);
  EXPECT_EQ(workspace_size, uint64_t{0});
  std::vector<unsigned char> canary(4096, 0xA5);
  if (planned == ACLNN_SUCCESS) {
    EXPECT_EQ(aclnnBinaryCrossEntropyWithLogitsWeightBackward(canary.data(), 0, executor, nullptr), ACLNN_SUCCESS);
  }
  for (aclTensor *tensor : tensors) {
    aclDestroyTensor(tensor);
  }
  EXPECT_MSG(std::all_of(canary.begin(), canary.end(), [](unsigned char byte) { return byte == 0xA5; }),
             "the 0-byte workspace was written to");
}

}  // namespace

// The regression cases are this program's TEST_CASEs: each counts as a case, a failing one as unexpected.
void RunRegressions(Stats *stats) {
  const test::RunCounts counts = test::RunTests("");
  stats->cases += static_cast<uint64_t>(counts.passed + counts.failed);
  stats->unexpected += static_cast<uint64_t>(counts.failed);
}

}  // namespace fuzz
