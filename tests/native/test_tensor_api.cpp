// aclCreateTensor validation, aclDestroyTensor and the aclGet* accessors.
#include <cstring>
#include <vector>

#include "aclnn/acl_meta.h"
#include "test_harness.h"

namespace {

std::vector<int64_t> Dims(int64_t *values, uint64_t count) {
  std::vector<int64_t> dims(values, values + count);
  delete[] values;
  return dims;
}

bool MessageMentions(const char *word) { return std::strstr(aclGetRecentErrMsg(), word) != nullptr; }

float storage[64];

aclTensor *Create(std::vector<int64_t> dims, const int64_t *strides, int64_t offset, int64_t storage_elements) {
  const int64_t storage_dims[] = {storage_elements};
  return aclCreateTensor(dims.data(), dims.size(), ACL_FLOAT, strides, offset, ACL_FORMAT_ND, storage_dims, 1, storage);
}

}  // namespace

TEST_CASE(tensor_accessors_return_what_was_created) {
  const int64_t dims[] = {2, 3};
  const int64_t strides[] = {1, 2};
  const int64_t storage_dims[] = {4, 2};
  aclTensor *tensor = aclCreateTensor(dims, 2, ACL_BF16, strides, 1, ACL_FORMAT_NCHW, storage_dims, 2, storage);
  EXPECT_TRUE(tensor != nullptr);
  int64_t *values = nullptr;
  uint64_t count = 0;
  EXPECT_EQ(aclGetViewShape(tensor, &values, &count), ACLNN_SUCCESS);
  EXPECT_TRUE(Dims(values, count) == std::vector<int64_t>({2, 3}));
  EXPECT_EQ(aclGetViewStrides(tensor, &values, &count), ACLNN_SUCCESS);
  EXPECT_TRUE(Dims(values, count) == std::vector<int64_t>({1, 2}));
  EXPECT_EQ(aclGetStorageShape(tensor, &values, &count), ACLNN_SUCCESS);
  EXPECT_TRUE(Dims(values, count) == std::vector<int64_t>({4, 2}));
  int64_t offset = -1;
  EXPECT_EQ(aclGetViewOffset(tensor, &offset), ACLNN_SUCCESS);
  EXPECT_EQ(offset, 1);
  aclFormat format = ACL_FORMAT_UNDEFINED;
  EXPECT_EQ(aclGetFormat(tensor, &format), ACLNN_SUCCESS);
  EXPECT_EQ(format, ACL_FORMAT_NCHW);
  aclDataType dtype = ACL_DT_UNDEFINED;
  EXPECT_EQ(aclGetDataType(tensor, &dtype), ACLNN_SUCCESS);
  EXPECT_EQ(dtype, ACL_BF16);
  EXPECT_EQ(aclDestroyTensor(tensor), ACLNN_SUCCESS);
}

TEST_CASE(tensor_null_strides_mean_contiguous_and_a_scalar_has_rank_zero) {
  aclTensor *tensor = Create({2, 3, 4}, nullptr, 0, 24);
  int64_t *values = nullptr;
  uint64_t count = 0;
  EXPECT_EQ(aclGetViewStrides(tensor, &values, &count), ACLNN_SUCCESS);
  EXPECT_TRUE(Dims(values, count) == std::vector<int64_t>({12, 4, 1}));
  EXPECT_EQ(aclDestroyTensor(tensor), ACLNN_SUCCESS);

  const int64_t one[] = {1};
  aclTensor *scalar = aclCreateTensor(nullptr, 0, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, one, 1, storage);
  EXPECT_TRUE(scalar != nullptr);
  EXPECT_EQ(aclGetViewShape(scalar, &values, &count), ACLNN_SUCCESS);
  EXPECT_EQ(Dims(values, count).size(), size_t{0});
  EXPECT_EQ(aclDestroyTensor(scalar), ACLNN_SUCCESS);
}

TEST_CASE(tensor_creation_rejects_invalid_descriptions) {
  EXPECT_TRUE(aclCreateTensor(nullptr, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, nullptr, 0, storage) == nullptr);
  EXPECT_TRUE(MessageMentions("viewDims is null"));
  EXPECT_TRUE(Create({2, -1}, nullptr, 0, 8) == nullptr);
  EXPECT_TRUE(MessageMentions("negative"));
  std::vector<int64_t> too_many(65, 1);
  EXPECT_TRUE(Create(too_many, nullptr, 0, 1) == nullptr);
  EXPECT_TRUE(MessageMentions("65 dims"));
  EXPECT_TRUE(Create({int64_t{1} << 40, int64_t{1} << 40}, nullptr, 0, 1) == nullptr);
  EXPECT_TRUE(MessageMentions("int64"));
  // The view must lie inside the storage.
  EXPECT_TRUE(Create({4, 4}, nullptr, 0, 15) == nullptr);
  EXPECT_TRUE(MessageMentions("beyond its storage"));
  EXPECT_TRUE(Create({4}, nullptr, 1, 4) == nullptr);
  const int64_t wide_strides[] = {8, 1};
  EXPECT_TRUE(Create({2, 4}, wide_strides, 0, 11) == nullptr);
  EXPECT_TRUE(Create({2}, nullptr, -1, 8) == nullptr);
  const int64_t negative_strides[] = {-1};
  EXPECT_TRUE(Create({2}, negative_strides, 1, 8) == nullptr);
  const int64_t huge_strides[] = {INT64_MAX};
  EXPECT_TRUE(Create({3}, huge_strides, 0, 8) == nullptr);
  const int64_t two[] = {2};
  EXPECT_TRUE(aclCreateTensor(two, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, nullptr, 1, storage) == nullptr);
  EXPECT_TRUE(MessageMentions("storageDims"));
  // An empty view fits any storage; a view that just fits is accepted.
  aclTensor *empty = Create({5, 0, 3}, nullptr, 0, 1);
  aclTensor *exact = Create({2, 4}, wide_strides, 0, 12);
  EXPECT_TRUE(empty != nullptr && exact != nullptr);
  aclDestroyTensor(empty);
  aclDestroyTensor(exact);
}

TEST_CASE(tensor_destroy_and_accessors_answer_bad_handles_with_codes) {
  EXPECT_EQ(aclDestroyTensor(nullptr), ACLNN_ERR_PARAM_NULLPTR);
  aclTensor *tensor = Create({2}, nullptr, 0, 2);
  EXPECT_EQ(aclDestroyTensor(tensor), ACLNN_SUCCESS);
  EXPECT_EQ(aclDestroyTensor(tensor), ACLNN_ERR_PARAM_INVALID);
  EXPECT_TRUE(MessageMentions("already destroyed"));
  int64_t *values = nullptr;
  uint64_t count = 0;
  int64_t offset = 0;
  aclDataType dtype;
  EXPECT_EQ(aclGetViewShape(nullptr, &values, &count), ACLNN_ERR_PARAM_NULLPTR);
  aclTensor *live = Create({2}, nullptr, 0, 2);
  EXPECT_EQ(aclGetViewShape(live, nullptr, &count), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetViewStrides(live, &values, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetViewOffset(nullptr, &offset), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetDataType(live, nullptr), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetDataType(nullptr, &dtype), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclDestroyTensor(live), ACLNN_SUCCESS);
}
