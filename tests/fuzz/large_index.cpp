// ms_bcewl_large_index: the operations over more than 2^31 elements, against the float64 reference, so that any
// 32-bit element index, offset, block count or loop counter in the adapter shows. Not part of CI (it needs about
// 9 GB of memory and a minute); docs/reliability.md has the command and the figures of the last run.
//
//   ms_bcewl_large_index [--rows R]     (default R = 2181000: 2^31 + 33,516,352 elements; a small R is a smoke run)
//
// self is a contiguous float16 [R, C] tensor (C = 1000) whose element i holds one of 1024 logits, picked by a hash
// of the 64-bit index i (positive ones only beyond 2^31), so that an element read or written at a wrapped index
// gets another value. target
// ([C] float32 broadcast to [R, C] by a stride-0 row), weight ([C] float32), pos_weight ([] float32) and the
// gradient ([] float32) are small. Checked: the forward sum and mean, gradWeight (mean: a reduction to C outputs
// of R elements each, walked with 64-bit strides) and gradSelf (none: 2^31+ float16 outputs, written into a buffer
// of NaN, every element compared). The reference is tests/native's float64 Reference over the 1024 x C distinct
// (logit, column) pairs, summed over the index in float64.
// Last line: "large index: <elements> elements, <checks> checks, <failed> failed, <seconds> s"; exit status 0 only
// if every check passed.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "ops.h"
#include "reference_bcewl.h"
#include "tolerance.h"

namespace {

using fuzz::Operation;
using test::Shape;

constexpr int64_t kColumns = 1000;
constexpr int64_t kDefaultRows = 2181000;
constexpr int kDistinctLogits = 1024;
constexpr double kGrad = 0.75;
constexpr double kPosWeight = 1.5;
constexpr uint16_t kFloat16NaN = 0x7E00;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Which of the distinct logits element i holds: the top bits of a 64-bit hash of i, from the upper (positive)
// half only at i >= 2^31, so that elements read at an index wrapped below 2^31 move the sums too.
int LogitOf(uint64_t i) {
  const int beyond_int32 = i >> 31 != 0 ? kDistinctLogits / 2 : 0;
  i = (i ^ (i >> 30)) * 0xBF58476D1CE4E5B9ull;
  i = (i ^ (i >> 27)) * 0x94D049BB133111EBull;
  return static_cast<int>((i ^ (i >> 31)) >> 54) | beyond_int32;
}

struct Inputs {
  int64_t rows = 0;
  int64_t numel = 0;
  std::vector<uint16_t> logit_bits;   // kDistinctLogits float16 values
  std::unique_ptr<uint16_t[]> self;   // rows * kColumns
  std::vector<float> target, weight;  // kColumns
  float pos_weight = static_cast<float>(kPosWeight);
  float grad = static_cast<float>(kGrad);
};

Inputs MakeInputs(int64_t rows) {
  Inputs inputs;
  inputs.rows = rows;
  inputs.numel = rows * kColumns;
  for (int k = 0; k < kDistinctLogits; ++k) {
    uint16_t bits = 0;
    test::EncodeElement(&bits, 0, ACL_FLOAT16, -8.0 + 16.0 * (k + 0.5) / kDistinctLogits);
    inputs.logit_bits.push_back(bits);
  }
  inputs.self.reset(new uint16_t[static_cast<size_t>(inputs.numel)]);
  for (int64_t i = 0; i < inputs.numel; ++i) {
    inputs.self[i] = inputs.logit_bits[LogitOf(static_cast<uint64_t>(i))];
  }
  for (int64_t c = 0; c < kColumns; ++c) {
    inputs.target.push_back(static_cast<float>(c % 11) / 10.0f);
    inputs.weight.push_back(0.5f + static_cast<float>(c % 7) / 8.0f);
  }
  return inputs;
}

// The reference terms of every (logit k, column c) pair: loss, gradSelf and the unweighted gradWeight term, each
// with the gradient applied, at index k * kColumns + c.
struct Terms {
  std::vector<double> loss, dx, dw;
  fuzz::Magnitudes magnitudes;
};

Terms ReferenceTerms(const Inputs &inputs) {
  test::RefProblem problem;
  const Shape pairs = {kDistinctLogits, kColumns};
  problem.x = {pairs, {}};
  problem.y = {pairs, {}};
  problem.w = test::RefArray{pairs, {}};
  for (int k = 0; k < kDistinctLogits; ++k) {
    for (int64_t c = 0; c < kColumns; ++c) {
      problem.x.values.push_back(test::DecodeElement(&inputs.logit_bits[k], 0, ACL_FLOAT16));
      problem.y.values.push_back(inputs.target[c]);
      problem.w->values.push_back(inputs.weight[c]);
    }
  }
  problem.p = test::RefArray{{}, {kPosWeight}};
  problem.g = test::RefArray{{}, {kGrad}};
  const test::RefResult result = test::Reference(problem);
  Terms terms{result.loss, result.dx, result.dw, {}};
  terms.magnitudes = {fuzz::MaxMagnitude(problem.x.values), fuzz::MaxMagnitude(problem.y.values),
                      fuzz::MaxMagnitude(problem.w->values), kPosWeight, kGrad};
  return terms;
}

class Tensor {
 public:
  Tensor(Shape dims, Shape strides, aclDataType dtype, Shape storage, void *data)
      : tensor_(aclCreateTensor(dims.data(), dims.size(), dtype, strides.data(), 0, ACL_FORMAT_ND, storage.data(),
                                storage.size(), data)) {}
  ~Tensor() { aclDestroyTensor(tensor_); }
  Tensor(const Tensor &) = delete;
  Tensor &operator=(const Tensor &) = delete;
  aclTensor *get() const { return tensor_; }

 private:
  aclTensor *tensor_;
};

struct Arguments {
  aclTensor *grad, *self, *target, *weight, *pos_weight;
};

// Both phases with an aclrtMalloc workspace; prints the failure and returns false if a call fails.
bool RunOp(Operation op, const Arguments &a, int64_t reduction, aclTensor *out) {
  const fuzz::OpApi &api = fuzz::ApiOf(op);
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = nullptr;
  aclnnStatus status = api.plan(a.grad, a.self, a.target, a.weight, a.pos_weight, reduction, out, nullptr, nullptr,
                                nullptr, nullptr, &workspace_size, &executor);
  void *workspace = nullptr;
  if (status == ACLNN_SUCCESS && workspace_size > 0) {
    status = aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST);
  }
  if (status == ACLNN_SUCCESS) {
    status = api.run(workspace, workspace_size, executor, nullptr);
  }
  if (workspace != nullptr) {
    aclrtFree(workspace);
  }
  if (status != ACLNN_SUCCESS) {
    std::printf("%s failed: %d %s\n", api.name, status, aclGetRecentErrMsg());
  }
  return status == ACLNN_SUCCESS;
}

struct Tally {
  int checks = 0;
  int failed = 0;
};

void Record(Tally *tally, const std::string &what, bool passed, const std::string &detail, double seconds) {
  ++tally->checks;
  tally->failed += passed ? 0 : 1;
  std::printf("%-46s %s  %s  (%.1f s)\n", what.c_str(), passed ? "ok    " : "FAILED", detail.c_str(), seconds);
  std::fflush(stdout);
}

std::string Comparison(double actual, double expected) {
  char text[160];
  std::snprintf(text, sizeof(text), "result %.9g, reference %.9g, relative difference %.2e", actual, expected,
                std::fabs(actual - expected) / std::fabs(expected));
  return text;
}

void CheckForward(const Inputs &inputs, const Terms &terms, const Arguments &arguments, Tally *tally) {
  double sum = 0.0;
  for (int64_t row = 0, i = 0; row < inputs.rows; ++row) {
    double row_sum = 0.0;
    for (int64_t c = 0; c < kColumns; ++c, ++i) {
      row_sum += terms.loss[LogitOf(static_cast<uint64_t>(i)) * kColumns + c];
    }
    sum += row_sum;
  }
  const double bound = fuzz::ElementErrorBound(Operation::kForward, terms.magnitudes);
  for (int64_t reduction : {2, 1}) {
    float out = std::nanf("");
    Tensor out_tensor({}, {}, ACL_FLOAT, {1}, &out);
    const auto start = std::chrono::steady_clock::now();
    const bool ran = RunOp(Operation::kForward, arguments, reduction, out_tensor.get());
    const double expected = reduction == 2 ? sum : sum / static_cast<double>(inputs.numel);
    const double scaled_bound = reduction == 2 ? bound * static_cast<double>(inputs.numel) : bound;
    Record(tally, reduction == 2 ? "forward, reduction sum" : "forward, reduction mean",
           ran && fuzz::Acceptable(out, expected, scaled_bound, ACL_FLOAT), Comparison(out, expected), Seconds(start));
  }
}

void CheckGradWeight(const Inputs &inputs, const Terms &terms, const Arguments &arguments, Tally *tally) {
  std::vector<double> expected(kColumns, 0.0);
  for (int64_t i = 0; i < inputs.numel; ++i) {
    const int64_t c = i % kColumns;
    expected[c] += terms.dw[LogitOf(static_cast<uint64_t>(i)) * kColumns + c];
  }
  std::vector<float> out(kColumns, std::nanf(""));
  Tensor out_tensor({kColumns}, {1}, ACL_FLOAT, {kColumns}, out.data());
  const auto start = std::chrono::steady_clock::now();
  const bool ran = RunOp(Operation::kGradWeight, arguments, 1, out_tensor.get());
  const double numel = static_cast<double>(inputs.numel);
  const double bound = fuzz::ElementErrorBound(Operation::kGradWeight, terms.magnitudes) * inputs.rows / numel;
  int64_t wrong = 0;
  double worst = 0.0;
  for (int64_t c = 0; c < kColumns; ++c) {
    wrong += fuzz::Acceptable(out[c], expected[c] / numel, bound, ACL_FLOAT) ? 0 : 1;
    worst = std::fmax(worst, std::fabs(out[c] - expected[c] / numel) / std::fabs(expected[c] / numel));
  }
  char detail[160];
  std::snprintf(detail, sizeof(detail), "%lld of %lld outputs off, largest relative difference %.2e",
                static_cast<long long>(wrong), static_cast<long long>(kColumns), worst);
  Record(tally, "gradWeight [1000], reduction mean", ran && wrong == 0, detail, Seconds(start));
}

void CheckGradSelf(const Inputs &inputs, const Terms &terms, const Arguments &arguments, Tally *tally) {
  // The accepted float16 interval of every (logit, column) pair's value.
  const double bound = fuzz::ElementErrorBound(Operation::kGradSelf, terms.magnitudes);
  std::vector<float> lowest(terms.dx.size()), highest(terms.dx.size());
  for (size_t pair = 0; pair < terms.dx.size(); ++pair) {
    lowest[pair] = static_cast<float>(test::RoundToDtype(terms.dx[pair] - bound, ACL_FLOAT16));
    highest[pair] = static_cast<float>(test::RoundToDtype(terms.dx[pair] + bound, ACL_FLOAT16));
  }
  std::vector<float> float16_values(1 << 16);
  for (uint32_t bits = 0; bits < float16_values.size(); ++bits) {
    const uint16_t value = static_cast<uint16_t>(bits);
    float16_values[bits] = static_cast<float>(test::DecodeElement(&value, 0, ACL_FLOAT16));
  }
  std::unique_ptr<uint16_t[]> out(new uint16_t[static_cast<size_t>(inputs.numel)]);
  std::fill_n(out.get(), inputs.numel, kFloat16NaN);
  Tensor out_tensor({inputs.rows, kColumns}, {kColumns, 1}, ACL_FLOAT16, {inputs.numel}, out.get());
  const auto start = std::chrono::steady_clock::now();
  const bool ran = RunOp(Operation::kGradSelf, arguments, 0, out_tensor.get());
  const double seconds = Seconds(start);
  int64_t wrong = 0;
  int64_t first_wrong = -1;
  for (int64_t i = 0; i < inputs.numel; ++i) {
    const size_t pair = static_cast<size_t>(LogitOf(static_cast<uint64_t>(i)) * kColumns + i % kColumns);
    const float actual = float16_values[out[i]];
    if (!(actual >= lowest[pair] && actual <= highest[pair])) {
      first_wrong = first_wrong < 0 ? i : first_wrong;
      ++wrong;
    }
  }
  char detail[160];
  std::snprintf(detail, sizeof(detail), "%lld of %lld elements off (first: %lld)", static_cast<long long>(wrong),
                static_cast<long long>(inputs.numel), static_cast<long long>(first_wrong));
  Record(tally, "gradSelf [rows, 1000] float16, reduction none", ran && wrong == 0, detail, seconds);
}

}  // namespace

int main(int argc, char **argv) {
  int64_t rows = kDefaultRows;
  if (argc == 3 && std::strcmp(argv[1], "--rows") == 0) {
    rows = std::strtoll(argv[2], nullptr, 10);
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--rows R]\n", argv[0]);
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  const Inputs inputs = MakeInputs(rows);
  const Terms terms = ReferenceTerms(inputs);
  std::printf("%lld elements (2^31 %+lld), inputs made in %.1f s\n", static_cast<long long>(inputs.numel),
              static_cast<long long>(inputs.numel - (int64_t{1} << 31)), Seconds(start));
  Tensor self({rows, kColumns}, {kColumns, 1}, ACL_FLOAT16, {inputs.numel}, inputs.self.get());
  Tensor target({rows, kColumns}, {0, 1}, ACL_FLOAT, {kColumns}, const_cast<float *>(inputs.target.data()));
  Tensor weight({kColumns}, {1}, ACL_FLOAT, {kColumns}, const_cast<float *>(inputs.weight.data()));
  Tensor pos_weight({}, {}, ACL_FLOAT, {1}, const_cast<float *>(&inputs.pos_weight));
  Tensor grad({}, {}, ACL_FLOAT, {1}, const_cast<float *>(&inputs.grad));
  const Arguments arguments{grad.get(), self.get(), target.get(), weight.get(), pos_weight.get()};
  Tally tally;
  CheckForward(inputs, terms, arguments, &tally);
  CheckGradWeight(inputs, terms, arguments, &tally);
  CheckGradSelf(inputs, terms, arguments, &tally);
  std::printf("large index: %lld elements, %d checks, %d failed, %.1f s\n", static_cast<long long>(inputs.numel),
              tally.checks, tally.failed, Seconds(start));
  return tally.failed == 0 ? 0 : 1;
}
