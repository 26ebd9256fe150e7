// A failing AOT entry as MindSpore meets it (RaiseFailure, src/mindspore/graph_entries.cpp): a std::runtime_error of
// the process's libstdc++, which this program has where g++ built it; in a program without one (zig's build, run under
// qemu in CI), a non-zero return, an empty InferShape and the message as aclGetRecentErrMsg(). Either way the message
// is the sentence of the Python API's check.
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "acl/acl_base.h"
#include "test_harness.h"

#ifdef __clang__
#pragma clang diagnostic ignored "-Wreturn-type-c-linkage"  // MindSpore's InferShape returns a std::vector
#endif
extern "C" int ms_bcewl_forward_mean(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                                     void *stream, void *extra);
extern "C" int ms_bcewl_forward_pos_weighted_mean(int nparam, void **params, int *ndims, int64_t **shapes,
                                                  const char **dtypes, void *stream, void *extra);
extern "C" int ms_bcewl_grad_self_mean(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                                       void *stream, void *extra);
extern "C" std::vector<int64_t> ms_bcewl_forward_noneInferShape(int *ndims, int64_t **shapes, void *extra);

namespace {

bool ProcessHasLibstdcxx() {
  void *library = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (library != nullptr) dlclose(library);
  return library != nullptr;
}

// What the caller of an entry learns of its failure, "" if `call` reports none: with libstdc++ the message of the
// exception raised, else aclGetRecentErrMsg() after `call` reported a failure by its result.
template <typename Call>
std::string FailureSeenByCaller(const Call &call) {
  try {
    const bool failed = call();
    return failed && !ProcessHasLibstdcxx() ? aclGetRecentErrMsg() : "";
  } catch (const std::runtime_error &error) {
    return ProcessHasLibstdcxx() ? error.what() : "raised without libstdc++";
  }
}

// The arguments of one forward call: input (4, 3), a target of `target_dims`, 0-d units for the absent weight and
// pos_weight, a 0-d loss.
struct ForwardCall {
  std::vector<float> input = std::vector<float>(12, 0.5f), target = std::vector<float>(12, 0.5f);
  float weight = 1.0f, pos_weight = 1.0f, loss = -1.0f;
  int64_t input_dims[2] = {4, 3};
  int64_t target_dims[2];
  void *params[5] = {input.data(), target.data(), &weight, &pos_weight, &loss};
  int ndims[5] = {2, 2, 0, 0, 0};
  int64_t *shapes[5] = {input_dims, target_dims, nullptr, nullptr, nullptr};
  const char *dtypes[5] = {"float32", "float32", "float32", "float32", "float32"};

  explicit ForwardCall(int64_t target_columns) : target_dims{4, target_columns} {}
  int Run() { return ms_bcewl_forward_mean(5, params, ndims, shapes, dtypes, nullptr, nullptr); }
};

}  // namespace

TEST_CASE(aot_entry_failure_reaches_its_caller_as_the_python_sentence) {
  ForwardCall mismatched(2);
  const std::string message = FailureSeenByCaller([&] { return mismatched.Run() != 0; });
  EXPECT_EQ(message, std::string("For 'binary_cross_entropy_with_logits', 'input' and 'target' must have the same "
                                 "shape, but got input (4, 3) and target (4, 2)."));
  ForwardCall valid(3);
  EXPECT_EQ(valid.Run(), 0);
  EXPECT_MSG(std::fabs(valid.loss - 0.724077f) < 1e-6f, valid.loss);  // 0.5 * 0.5 + log(1 + e^-0.5)
}

TEST_CASE(aot_infer_shape_failure_reaches_its_caller_as_the_python_sentence) {
  int64_t dims[9] = {1, 1, 1, 1, 1, 1, 1, 1, 2};
  int ndims[4] = {9, 9, 0, 0};
  int64_t *shapes[4] = {dims, dims, nullptr, nullptr};
  std::vector<int64_t> shape{7};
  const std::string message = FailureSeenByCaller([&] {
    shape = ms_bcewl_forward_noneInferShape(ndims, shapes, nullptr);
    return shape.empty();
  });
  EXPECT_EQ(message, std::string("For 'binary_cross_entropy_with_logits', 'input' has rank 9 (shape (1, 1, 1, 1, 1, "
                                 "1, 1, 1, 2)); at most 8 dimensions are supported."));
  // raised: nothing assigned; else the fallback's empty shape
  EXPECT_TRUE(shape == (ProcessHasLibstdcxx() ? std::vector<int64_t>{7} : std::vector<int64_t>{}));
  ndims[0] = ndims[1] = 8;
  EXPECT_TRUE(ms_bcewl_forward_noneInferShape(ndims, shapes, nullptr) == std::vector<int64_t>(dims, dims + 8));
}

// input 0.5, target 0.5: (1 - y) x + (1 + (p - 1) y) log(1 + e^-x), times w; log(1 + e^-0.5) = 0.474077.
TEST_CASE(aot_entry_takes_input_and_target_then_the_weights_its_caller_passed) {
  ForwardCall call(3);
  float weight = 2.0f, pos_weight = 3.0f;
  // Calls `entry` with input, target, then `weights`, then the loss; returns the loss.
  const auto run = [&](decltype(&ms_bcewl_forward_mean) entry, std::vector<void *> weights) {
    std::vector<void *> params{call.input.data(), call.target.data()};
    params.insert(params.end(), weights.begin(), weights.end());
    params.push_back(&call.loss);
    int ndims[5] = {2, 2, 0, 0, 0};
    int64_t *shapes[5] = {call.input_dims, call.target_dims, nullptr, nullptr, nullptr};
    EXPECT_EQ(entry(static_cast<int>(params.size()), params.data(), ndims, shapes, call.dtypes, nullptr, nullptr), 0);
    return call.loss;
  };
  EXPECT_MSG(std::fabs(run(ms_bcewl_forward_mean, {}) - 0.724077f) < 1e-6f, call.loss);
  EXPECT_MSG(std::fabs(run(ms_bcewl_forward_mean, {&weight}) - 2.0f * 0.724077f) < 1e-6f, call.loss);
  EXPECT_MSG(std::fabs(run(ms_bcewl_forward_pos_weighted_mean, {&pos_weight}) - (0.25f + 2.0f * 0.474077f)) < 1e-6f,
             call.loss);
  // dx of the mean with pos_weight alone: (sigmoid(x) (1 + (p - 1) y) - p y) / 12, sigmoid(0.5) = 0.622459
  float dout = 1.0f;
  std::vector<float> dx(12, -1.0f);
  void *grad_params[5] = {&dout, call.input.data(), call.target.data(), &pos_weight, dx.data()};
  int grad_ndims[5] = {0, 2, 2, 0, 2};
  int64_t *grad_shapes[5] = {nullptr, call.input_dims, call.target_dims, nullptr, call.input_dims};
  EXPECT_EQ(ms_bcewl_grad_self_mean(5, grad_params, grad_ndims, grad_shapes, call.dtypes, nullptr, nullptr), 0);
  EXPECT_MSG(std::fabs(dx[11] - (0.622459f * 2.0f - 1.5f) / 12.0f) < 1e-6f, dx[11]);
  const std::string message = FailureSeenByCaller([&] {
    return ms_bcewl_forward_mean(6, call.params, call.ndims, call.shapes, call.dtypes, nullptr, nullptr) != 0;
  });
  EXPECT_EQ(message, std::string("ms_bcewl: expected 3, 4 or 5 arguments (inputs and outputs), got 6"));
}
