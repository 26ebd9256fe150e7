// The cases of the fuzzer: what one random call of the aclnn API consists of (the tensor descriptors, some broken
// on purpose, the reduction, the pointers of phase 1 and the way phase 2 is used), and the builder that draws one
// from a seed.
#ifndef MS_BCEWL_TESTS_FUZZ_CASE_BUILDER_H_
#define MS_BCEWL_TESTS_FUZZ_CASE_BUILDER_H_

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "fuzz_tensor.h"
#include "ops.h"

namespace fuzz {

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}

  bool Chance(double probability) { return std::uniform_real_distribution<double>(0.0, 1.0)(engine_) < probability; }
  int64_t Between(int64_t low, int64_t high) { return std::uniform_int_distribution<int64_t>(low, high)(engine_); }
  double Uniform(double low, double high) { return std::uniform_real_distribution<double>(low, high)(engine_); }
  uint64_t Bits() { return engine_(); }

  template <typename T>
  T Pick(std::initializer_list<T> choices) {
    return choices.begin()[Between(0, static_cast<int64_t>(choices.size()) - 1)];
  }

 private:
  std::mt19937_64 engine_;
};

// The tensor arguments, in the order of the C signatures but for kLossOut. Only the fused gradients have
// kGradTargetOut (out is their gradSelf), only kGradAll and kLossAndAllGradients the weight gradients kGradWeightOut
// and kGradPosWeightOut, and only kLossAndAllGradients kLossOut, its first output (the forward's out), which comes
// last here so that the other roles keep the numbers the cases of the other operations are drawn with.
enum Role {
  kGrad,
  kSelf,
  kTarget,
  kWeight,
  kPosWeight,
  kOut,
  kGradTargetOut,
  kGradWeightOut,
  kGradPosWeightOut,
  kLossOut,
  kRoles
};
inline const char *const kRoleNames[kRoles] = {"gradOutput", "self",       "target",     "weight",        "posWeight",
                                               "out",        "gradTarget", "gradWeight", "gradPosWeight", "loss"};
constexpr Role kInputRoles[] = {kGrad, kSelf, kTarget, kWeight, kPosWeight};

// How phase 2 is called after a successful phase 1.
enum class RunMode {
  kRun,
  kRunTwice,
  kDestroyThenRun,
  kNullExecutor,
  kForgedExecutor,
  kOtherOpsRun,  // the executor handed to another operation's phase 2
  kNullWorkspace,
  kShortWorkspace,
  kMisalignedWorkspace,
  kLargerWorkspace,
  kLiveStream,
  kDestroyedStream,
  kForgedStream,
};

struct Case {
  Operation op = Operation::kForward;
  int64_t reduction = 0;
  std::array<std::optional<Descriptor>, kRoles> tensors;  // nullopt: the argument is nullptr
  std::array<size_t, kRoles> storage_bytes = {};          // of each tensor's own storage
  // Whose storage each tensor's view is over: its own, or for an output, an input's or another output's.
  std::array<Role, kRoles> storage_of = {kGrad, kSelf,          kTarget,        kWeight,           kPosWeight,
                                         kOut,  kGradTargetOut, kGradWeightOut, kGradPosWeightOut, kLossOut};
  bool null_workspace_size = false;
  bool null_executor = false;
  bool destroy_tensors_before_run = false;
  bool device_workspace = false;  // aclrtMalloc memory rather than the heap
  bool check_accessors = false;
  bool destroy_twice = false;
  bool non_finite_inputs = false;
  RunMode run_mode = RunMode::kRun;
};

// The same seed always builds the same case: of one of the five single-output operations, or of `op`.
Case BuildCase(uint64_t seed, std::optional<Operation> op = std::nullopt);

// The case in words, for findings.
std::string Describe(const Case &c);

// Whether the operation needs the tensor (an optional one may be nullptr). The weight gradients of kGradAll and
// kLossAndAllGradients are needed where their inputs are given, and must be nullptr where not.
bool IsRequired(Operation op, Role role);

// The roles of op's arguments (tensors before outputs) and of its outputs, in the order of its C signature (for
// kLossAndAllGradients: kLossOut, kOut, kGradTargetOut, kGradWeightOut, kGradPosWeightOut).
std::vector<Role> RolesOf(Operation op);
std::vector<Role> OutputRoles(Operation op);

// The single-output operation whose result op's output is, and whose float64 reference it is compared with: op
// itself, or for the fused operations dx (out), dy (gradTarget), dw (gradWeight), dp (gradPosWeight) and the forward
// (loss); kLossAndAllGradients's gradients for a gradOutput of 1.
Operation SingleOutputOp(Operation op, Role output);

// The tensor whose dtype and shape an output has (docs/contract.md §5 Dtypes: each gradient has its argument's).
Role OwnerOf(Operation op, Role output);

}  // namespace fuzz

#endif  // MS_BCEWL_TESTS_FUZZ_CASE_BUILDER_H_
