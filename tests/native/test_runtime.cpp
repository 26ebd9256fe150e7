// The host runtime of acl/acl_rt.h and the failure messages.
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "ms_bcewl/ms_bcewl_host.h"
#include "test_harness.h"

namespace {

bool MessageMentions(const char *word) { return std::strstr(aclGetRecentErrMsg(), word) != nullptr; }

}  // namespace

TEST_CASE(runtime_init_device_and_stream_lifecycle) {
  EXPECT_EQ(aclInit(nullptr), ACL_SUCCESS);
  EXPECT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  aclrtStream stream = nullptr;
  EXPECT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  EXPECT_TRUE(stream != nullptr);
  EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);  // the default stream
  EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
  EXPECT_TRUE(aclrtDestroyStream(stream) != ACL_SUCCESS);
  EXPECT_TRUE(aclrtSynchronizeStream(stream) != ACL_SUCCESS);
  EXPECT_TRUE(MessageMentions("stream"));
  EXPECT_TRUE(aclrtCreateStream(nullptr) != ACL_SUCCESS);
  EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

TEST_CASE(runtime_rejects_a_device_that_does_not_exist) {
  EXPECT_TRUE(aclrtSetDevice(1) != ACL_SUCCESS);
  EXPECT_TRUE(MessageMentions("device 1"));
  EXPECT_TRUE(aclrtSetDevice(-1) != ACL_SUCCESS);
  EXPECT_TRUE(aclrtResetDevice(3) != ACL_SUCCESS);
}

TEST_CASE(runtime_malloc_free_and_invalid_frees) {
  void *memory = nullptr;
  EXPECT_EQ(aclrtMalloc(&memory, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  EXPECT_TRUE(memory != nullptr && reinterpret_cast<uintptr_t>(memory) % 64 == 0);
  std::memset(memory, 1, 100);
  EXPECT_TRUE(aclrtFreeHost(memory) != ACL_SUCCESS);  // device memory is not host memory
  EXPECT_EQ(aclrtFree(memory), ACL_SUCCESS);
  EXPECT_TRUE(aclrtFree(memory) != ACL_SUCCESS);  // already freed
  EXPECT_TRUE(MessageMentions("not a live device allocation"));
  int on_stack = 0;
  EXPECT_TRUE(aclrtFree(&on_stack) != ACL_SUCCESS);
  EXPECT_TRUE(aclrtFree(nullptr) != ACL_SUCCESS);
  EXPECT_TRUE(aclrtMalloc(nullptr, 8, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS);
  memory = &on_stack;
  EXPECT_TRUE(aclrtMalloc(&memory, 0, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS);
  EXPECT_TRUE(memory == nullptr);
  EXPECT_TRUE(MessageMentions("size"));
  EXPECT_TRUE(aclrtMalloc(&memory, SIZE_MAX, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS);
}

TEST_CASE(runtime_malloc_host_and_free_host) {
  void *memory = nullptr;
  EXPECT_EQ(aclrtMallocHost(&memory, 16), ACL_SUCCESS);
  EXPECT_TRUE(aclrtFree(memory) != ACL_SUCCESS);
  EXPECT_EQ(aclrtFreeHost(memory), ACL_SUCCESS);
  EXPECT_TRUE(aclrtFreeHost(memory) != ACL_SUCCESS);
  EXPECT_TRUE(aclrtMallocHost(&memory, 0) != ACL_SUCCESS);
}

TEST_CASE(runtime_memcpy_round_trip_and_argument_checks) {
  const std::vector<float> host = {1.5f, -2.0f, 3.25f, 4.0f};
  const size_t bytes = host.size() * sizeof(float);
  void *device = nullptr;
  void *second = nullptr;
  EXPECT_EQ(aclrtMalloc(&device, bytes, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  EXPECT_EQ(aclrtMalloc(&second, bytes, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_SUCCESS);
  EXPECT_EQ(aclrtMemcpy(device, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  EXPECT_EQ(aclrtMemcpy(second, bytes, device, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
  std::vector<float> back(host.size(), 0.0f);
  EXPECT_EQ(aclrtMemcpy(back.data(), bytes, second, bytes, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_TRUE(back == host);
  // An interior part of an allocation is device memory too.
  EXPECT_EQ(aclrtMemcpy(back.data(), 4, static_cast<char *>(device) + 12, 4, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  EXPECT_EQ(back[0], 4.0f);

  EXPECT_TRUE(aclrtMemcpy(device, 4, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS);
  EXPECT_TRUE(MessageMentions("destMax"));
  EXPECT_TRUE(aclrtMemcpy(nullptr, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS);
  EXPECT_TRUE(aclrtMemcpy(device, bytes, nullptr, bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS);
  EXPECT_TRUE(aclrtMemcpy(device, bytes, host.data(), bytes, static_cast<aclrtMemcpyKind>(9)) != ACL_SUCCESS);
  EXPECT_TRUE(MessageMentions("kind"));
  // The device side must lie inside a live allocation: not host memory, not past the end.
  EXPECT_TRUE(aclrtMemcpy(back.data(), bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS);
  EXPECT_TRUE(aclrtMemcpy(back.data(), bytes, static_cast<char *>(device) + 4, bytes, ACL_MEMCPY_DEVICE_TO_HOST) !=
              ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(device), ACL_SUCCESS);
  EXPECT_TRUE(aclrtMemcpy(back.data(), bytes, device, bytes, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(second), ACL_SUCCESS);
  EXPECT_EQ(aclrtMemcpy(back.data(), bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_HOST), ACL_SUCCESS);
}

TEST_CASE(error_message_is_per_thread_and_the_process_copy_sees_every_thread) {
  std::string fresh_thread_message = "unset";
  std::thread([&] { fresh_thread_message = aclGetRecentErrMsg(); }).join();
  EXPECT_EQ(fresh_thread_message, std::string(""));

  std::string other_thread_message;
  std::thread([&] {
    aclrtSetDevice(42);
    other_thread_message = aclGetRecentErrMsg();
  }).join();
  EXPECT_TRUE(other_thread_message.find("device 42") != std::string::npos);
  EXPECT_TRUE(std::string(msBcewlLastErrorMessage()).find("device 42") != std::string::npos);
  EXPECT_TRUE(std::string(aclGetRecentErrMsg()).find("device 42") == std::string::npos);

  aclrtFree(nullptr);
  EXPECT_TRUE(std::string(aclGetRecentErrMsg()).find("aclrtFree") != std::string::npos);
  EXPECT_TRUE(std::string(msBcewlLastErrorMessage()).find("aclrtFree") != std::string::npos);
  // A successful call leaves the message of the last failure in place.
  EXPECT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  EXPECT_TRUE(std::string(aclGetRecentErrMsg()).find("aclrtFree") != std::string::npos);
}
