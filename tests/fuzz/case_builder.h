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

// The tensor arguments, in the order of the C signatures.
enum Role { kGrad, kSelf, kTarget, kWeight, kPosWeight, kOut, kRoles };
inline const char *const kRoleNames[kRoles] = {"gradOutput", "self", "target", "weight", "posWeight", "out"};
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
  Op op = Op::kForward;
  int64_t reduction = 0;
  std::array<std::optional<Descriptor>, kRoles> tensors;  // nullopt: the argument is nullptr
  std::array<size_t, kRoles> storage_bytes = {};          // of each tensor's own storage
  Role out_storage = kOut;  // out's own storage, or the input whose storage out's view is over
  bool null_workspace_size = false;
  bool null_executor = false;
  bool destroy_tensors_before_run = false;
  bool device_workspace = false;  // aclrtMalloc memory rather than the heap
  bool check_accessors = false;
  bool destroy_twice = false;
  bool non_finite_inputs = false;
  RunMode run_mode = RunMode::kRun;
};

// The same seed always builds the same case.
Case BuildCase(uint64_t seed);

// The case in words, for findings.
std::string Describe(const Case &c);

// Whether the operation needs the tensor (an optional one may be nullptr).
bool IsRequired(Op op, Role role);

// The tensor whose dtype and shape the output has (DESIGN.md §3: each gradient has its argument's dtype).
Role OwnerOf(Op op);

}  // namespace fuzz

#endif  // MS_BCEWL_TESTS_FUZZ_CASE_BUILDER_H_
