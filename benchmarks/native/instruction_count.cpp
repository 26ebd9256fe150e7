// One aclnn operation of libms_bcewl.so on N1 and then on N2 elements, each call between marker system calls
// (write(-1, "mark", 4), which fails at once), for benchmarks/count_instructions.py: it runs this program under
// qemu-aarch64, logging every guest instruction and system call, and counts the instructions between the markers.
//
//   instruction_count forward|backward|all_backward plain|wp none|mean N1 N2
//
// backward is dx (aclnnBinaryCrossEntropyWithLogitsBackward); all_backward every gradient in one pass (AllBackward).
// wp: a weight and a pos_weight of self's shape. Inputs are (N / 64, 64), as benchmarks/workloads.py makes them:
// x standard normal, y uniform in [0, 1), weight uniform in [0, 1), pos_weight in [0.5, 1.5), gradOutput 1 for mean
// and uniform in [0, 1) for none. Each call is made once before it is counted (the first call of a process sets up
// the runtime). Prints the status of each call; exits 1 if one failed.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_all_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h"

namespace {

constexpr int64_t kColumns = 64;

struct Options {
  std::string op;
  bool weighted = false;
  int64_t reduction = 0;
  int64_t sizes[2] = {0, 0};
};

// A float32 tensor over its own host buffer, destroyed with it.
class Tensor {
 public:
  Tensor(std::vector<int64_t> shape, std::vector<float> values) : shape_(std::move(shape)), values_(std::move(values)) {
    std::vector<int64_t> strides(shape_.size(), 1);
    for (size_t dim = shape_.size(); dim-- > 1;) {
      strides[dim - 1] = strides[dim] * shape_[dim];
    }
    tensor_ = aclCreateTensor(shape_.data(), shape_.size(), ACL_FLOAT, strides.data(), 0, ACL_FORMAT_ND, shape_.data(),
                              shape_.size(), values_.data());
  }
  ~Tensor() { aclDestroyTensor(tensor_); }
  Tensor(const Tensor &) = delete;
  Tensor &operator=(const Tensor &) = delete;
  aclTensor *get() const { return tensor_; }

 private:
  std::vector<int64_t> shape_;
  std::vector<float> values_;
  aclTensor *tensor_;
};

// The inputs and outputs of one call on `size` elements.
struct Call {
  Call(const Options &options, int64_t size, std::mt19937 *random) {
    const std::vector<int64_t> shape = {size / kColumns, kColumns};
    const std::vector<int64_t> reduced = {};
    auto values = [&](int64_t count, auto distribution) {
      std::vector<float> drawn(static_cast<size_t>(count));
      for (float &value : drawn) {
        value = distribution(*random);
      }
      return drawn;
    };
    auto uniform = [&](float low, float high) { return std::uniform_real_distribution<float>(low, high); };
    auto full = [&](auto distribution) { return std::make_unique<Tensor>(shape, values(size, distribution)); };
    auto zeros = [&] { return std::make_unique<Tensor>(shape, std::vector<float>(static_cast<size_t>(size))); };
    x = full(std::normal_distribution<float>(0.0f, 1.0f));
    y = full(uniform(0.0f, 1.0f));
    if (options.weighted) {
      w = full(uniform(0.0f, 1.0f));
      p = full(uniform(0.5f, 1.5f));
    }
    g = options.reduction == 0 ? full(uniform(0.0f, 1.0f)) : std::make_unique<Tensor>(reduced, std::vector<float>{1});
    const bool reduced_forward = options.op == "forward" && options.reduction != 0;
    out = reduced_forward ? std::make_unique<Tensor>(reduced, std::vector<float>{0}) : zeros();
    if (options.op == "all_backward") {
      grad_target = zeros();
      if (options.weighted) {
        grad_weight = zeros();
        grad_pos_weight = zeros();
      }
    }
  }

  static aclTensor *Of(const std::unique_ptr<Tensor> &tensor) { return tensor ? tensor->get() : nullptr; }

  std::unique_ptr<Tensor> x, y, w, p, g, out, grad_target, grad_weight, grad_pos_weight;
};

// Both phases of the operation: its status.
aclnnStatus Run(const Options &options, const Call &c) {
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = nullptr;
  aclnnStatus status = ACLNN_SUCCESS;
  aclnnStatus (*run)(void *, uint64_t, aclOpExecutor *, aclrtStream) = nullptr;
  const auto x = Call::Of(c.x), y = Call::Of(c.y), w = Call::Of(c.w), p = Call::Of(c.p), g = Call::Of(c.g);
  if (options.op == "forward") {
    status = aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(x, y, w, p, options.reduction, Call::Of(c.out),
                                                               &workspace_size, &executor);
    run = aclnnBinaryCrossEntropyWithLogits;
  } else if (options.op == "backward") {
    status = aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize(g, x, y, w, p, options.reduction,
                                                                       Call::Of(c.out), &workspace_size, &executor);
    run = aclnnBinaryCrossEntropyWithLogitsBackward;
  } else {
    status = aclnnBinaryCrossEntropyWithLogitsAllBackwardGetWorkspaceSize(
        g, x, y, w, p, options.reduction, Call::Of(c.out), Call::Of(c.grad_target), Call::Of(c.grad_weight),
        Call::Of(c.grad_pos_weight), &workspace_size, &executor);
    run = aclnnBinaryCrossEntropyWithLogitsAllBackward;
  }
  if (status != ACLNN_SUCCESS) {
    return status;
  }
  std::vector<unsigned char> workspace(workspace_size);
  return run(workspace.empty() ? nullptr : workspace.data(), workspace_size, executor, nullptr);
}

void Mark() { (void)!write(-1, "mark", 4); }

bool Parse(int argc, char **argv, Options *options) {
  if (argc != 6) {
    return false;
  }
  options->op = argv[1];
  options->weighted = std::string(argv[2]) == "wp";
  options->reduction = std::string(argv[3]) == "mean" ? 1 : 0;
  options->sizes[0] = std::atoll(argv[4]);
  options->sizes[1] = std::atoll(argv[5]);
  const bool known_op = options->op == "forward" || options->op == "backward" || options->op == "all_backward";
  return known_op && options->sizes[0] > 0 && options->sizes[0] % kColumns == 0 && options->sizes[1] % kColumns == 0;
}

}  // namespace

int main(int argc, char **argv) {
  Options options;
  if (!Parse(argc, argv, &options)) {
    std::fprintf(stderr, "usage: %s forward|backward|all_backward plain|wp none|mean N1 N2 (multiples of 64)\n",
                 argv[0]);
    return 2;
  }
  std::mt19937 random(1);
  const Call calls[2] = {Call(options, options.sizes[0], &random), Call(options, options.sizes[1], &random)};
  bool ok = Run(options, calls[0]) == ACLNN_SUCCESS && Run(options, calls[1]) == ACLNN_SUCCESS;
  for (const Call &call : calls) {
    Mark();
    ok = Run(options, call) == ACLNN_SUCCESS && ok;
  }
  Mark();
  std::printf("%s\n", ok ? "ok" : aclGetRecentErrMsg());
  return ok ? 0 : 1;
}
