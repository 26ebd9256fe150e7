#include "fuzz_case.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "case_builder.h"
#include "fuzz_tensor.h"
#include "kernel/kernel_testing.h"
#include "ops.h"
#include "reference_bcewl.h"
#include "tolerance.h"

namespace fuzz {
namespace {

constexpr int64_t kMaxRunElements = int64_t{1} << 18;  // larger planned problems are destroyed, not run
constexpr size_t kMaxOpRank = 8;
constexpr uint64_t kMaxPrintedFindings = 40;
constexpr double kMemcpyChance = 0.05;  // of a case also calling aclrtMemcpy once
// Of a case also running a case of each fused operation (built from its own seed, as often as each single-output
// operation), and of an executor handed to another operation's phase 2 going to each fused operation's.
constexpr double kFusedCaseChance = 1.0 / kSingleOutputOpCount;
constexpr double kOtherOpIsFusedChance = 1.0 / kSingleOutputOpCount;

// A case's random streams, as offsets from its seed (the builder's is the seed itself). Each stream makes the same
// draws whatever the others do, so a stream added later leaves the cases of a seed as they were.
enum Stream : uint64_t {
  kValues = 1,
  kPhaseTwo = 2,
  kMemcpy = 3,
  kOtherOp = 5,
  kGradAllCase = 6,
  kLossAndAllGradientsCase = 7,
  kIsa = 8
};

// The fused operations whose cases go with a case, each from a stream of its own.
constexpr struct {
  Operation op;
  Stream stream;
} kCompanions[] = {{Operation::kGradAll, kGradAllCase}, {Operation::kLossAndAllGradients, kLossAndAllGradientsCase}};

using ms_bcewl::kernel::Isa;

const ms_bcewl::kernel::KernelTestingHooks &Hooks() { return *msBcewlKernelTestingHooks(); }

// The ISAs the cases run on: the automatic choice (which MS_BCEWL_ISA caps) and every available ISA below it, so
// that a campaign checks each ISA kernel of the machine, not only its best.
const std::vector<Isa> &CaseIsas() {
  static const std::vector<Isa> isas = [] {
    std::vector<Isa> available;
    Hooks().automatic_isa();
    for (Isa isa = Hooks().active_isa();; isa = ms_bcewl::kernel::kIsaBelow[static_cast<int>(isa)]) {
      if (Hooks().isa_available(isa)) {
        available.push_back(isa);
      }
      if (isa == Isa::kScalar) {
        return available;
      }
    }
  }();
  return isas;
}

const char *IsaName(Isa isa) { return ms_bcewl::kernel::kIsaNames[static_cast<int>(isa)]; }

uint64_t SplitMix(uint64_t value) {
  value += 0x9E3779B97F4A7C15ull;
  value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ull;
  value = (value ^ (value >> 27)) * 0x94D049BB133111EBull;
  return value ^ (value >> 31);
}

std::string NumberText(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

// The status in a failing aclCreateTensor's message (it returns no status), or -1 if it is not a documented one.
int CreationFailureStatus(const std::string &message) {
  for (int status : {ACLNN_ERR_PARAM_NULLPTR, ACLNN_ERR_PARAM_INVALID}) {
    if (message.rfind("aclCreateTensor: error " + std::to_string(status) + ": ", 0) == 0) {
      return status;
    }
  }
  return -1;
}

bool IsOutput(Role role) { return role >= kOut; }

bool BroadcastsTo(const Shape &shape, const Shape &to) {
  if (shape.size() > to.size()) {
    return false;
  }
  for (size_t i = 1; i <= shape.size(); ++i) {
    const int64_t dim = shape[shape.size() - i];
    if (dim != 1 && dim != to[to.size() - i]) {
      return false;
    }
  }
  return true;
}

// The values of each input: mostly in the range its argument is meant for, some outside it or extreme.
double SelfValue(Random &random) {
  return random.Chance(0.05) ? random.Pick({0.0, -0.0, 1e-30, 20.0, -20.0, 90.0, -90.0, 3e4, -3e4})
                             : random.Uniform(-8.0, 8.0);
}

double TargetValue(Random &random) {
  if (random.Chance(0.2)) {
    return random.Pick({0.0, 1.0});
  }
  return random.Chance(0.1) ? random.Uniform(-1.0, 2.0) : random.Uniform(0.0, 1.0);
}

double WeightValue(Random &random) { return random.Chance(0.1) ? random.Uniform(-2.0, 0.0) : random.Uniform(0.0, 2.0); }

double PosWeightValue(Random &random) {
  return random.Chance(0.1) ? random.Uniform(-1.0, 0.0) : random.Uniform(0.0, 3.0);
}

double GradValue(Random &random) { return random.Uniform(-2.0, 2.0); }

double RandomValue(Random &random, Role role, bool non_finite) {
  if (non_finite && random.Chance(0.02)) {
    return random.Pick({std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                        std::numeric_limits<double>::quiet_NaN()});
  }
  static const struct {
    Role role;
    double (*draw)(Random &random);
  } kInputValues[] = {{kSelf, SelfValue},
                      {kTarget, TargetValue},
                      {kWeight, WeightValue},
                      {kPosWeight, PosWeightValue},
                      {kGrad, GradValue}};
  for (const auto &input : kInputValues) {
    if (input.role == role) {
      return input.draw(random);
    }
  }
  return random.Uniform(-1e3, 1e3);  // what an output's storage holds before the call
}

// A phase-2 workspace of `bytes` (none when 0): heap memory, or aclrtMalloc memory as in CANN's example.
class Workspace {
 public:
  Workspace(uint64_t bytes, bool device) : device_(device && bytes > 0) {
    if (device_) {
      device_ = aclrtMalloc(&data_, bytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS;
    }
    if (!device_ && bytes > 0) {
      heap_.resize(bytes);
      data_ = heap_.data();
    }
  }
  ~Workspace() {
    if (device_) {
      aclrtFree(data_);
    }
  }
  Workspace(const Workspace &) = delete;
  Workspace &operator=(const Workspace &) = delete;

  unsigned char *data() const { return static_cast<unsigned char *>(data_); }

 private:
  bool device_;
  void *data_ = nullptr;
  std::vector<unsigned char> heap_;
};

// Whether two storages hold the same bytes, taking any two NaNs of `dtype` as equal: a NaN's sign and payload are not
// part of its value, and which NaN operand an instruction passes on depends on how the compiler ordered the operands
// of a commutative operation (with two NaN operands of opposite signs, a build at -O1 gave -NaN where -O2 gave +NaN).
bool SameBitsUpToNaNs(const Storage &a, const Storage &b, int32_t dtype) {
  const size_t bytes = ElementBytes(dtype);
  if (a.size() != b.size() || !IsSupportedDtype(dtype) || a.size() % bytes != 0) {
    return a == b;
  }
  const auto code = static_cast<aclDataType>(dtype);
  for (size_t i = 0; i < a.size() / bytes; ++i) {
    if (std::memcmp(a.data() + i * bytes, b.data() + i * bytes, bytes) != 0 &&
        !(std::isnan(test::DecodeElement(a.data(), static_cast<int64_t>(i), code)) &&
          std::isnan(test::DecodeElement(b.data(), static_cast<int64_t>(i), code)))) {
      return false;
    }
  }
  return true;
}

// The message a failing aclDestroyTensor(nullptr) leaves: set before every checked call, so that a failure's
// message is known to be its own, and a success is seen to leave the message alone.
const std::string &PrimeErrorMessage() {
  static const std::string marker = [] {
    aclDestroyTensor(nullptr);
    return std::string(aclGetRecentErrMsg());
  }();
  aclDestroyTensor(nullptr);
  return marker;
}

// The status phase 1 owes a call, and the output the failure is about (the message must name it), if any.
struct PlanExpectation {
  int status = ACLNN_SUCCESS;
  std::optional<Role> culprit;
};

// The failure about the first of `roles` that `fails`, if any.
template <typename Predicate>
std::optional<PlanExpectation> FirstFailing(const std::vector<Role> &roles, int status, Predicate fails) {
  const auto found = std::find_if(roles.begin(), roles.end(), fails);
  if (found == roles.end()) {
    return std::nullopt;
  }
  return PlanExpectation{status, *found};
}

// ---- aclrtMemcpy ----

// The buffers of an aclrtMemcpy check: an aclrtMalloc one and a heap one of the same size.
struct CopyBuffers {
  unsigned char *device;
  std::vector<unsigned char> host;
};

struct BufferContents {
  std::vector<unsigned char> device;
  std::vector<unsigned char> host;
  bool operator==(const BufferContents &other) const { return device == other.device && host == other.host; }
};

BufferContents ContentsOf(const CopyBuffers &buffers) {
  return {std::vector<unsigned char>(buffers.device, buffers.device + buffers.host.size()), buffers.host};
}

// One end of a copy: the aclrtMalloc buffer, the heap buffer or nullptr, at an offset.
struct End {
  unsigned char *buffer;
  size_t offset;
  unsigned char *data() const { return buffer == nullptr ? nullptr : buffer + offset; }
};

struct Copy {
  int32_t kind;
  End dst;
  End src;
  size_t dest_max;
  size_t count;
};

bool IsMemcpyKind(int32_t kind) { return kind >= ACL_MEMCPY_HOST_TO_HOST && kind <= ACL_MEMCPY_DEFAULT; }

bool WritesDevice(int32_t kind) { return kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE; }

bool ReadsDevice(int32_t kind) { return kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE; }

// Byte by byte, the device's then the host's.
void FillRandomly(Random &random, CopyBuffers *buffers) {
  for (size_t i = 0; i < buffers->host.size(); ++i) {
    buffers->device[i] = static_cast<unsigned char>(random.Bits());
    buffers->host[i] = static_cast<unsigned char>(random.Bits());
  }
}

End DrawEnd(Random &random, CopyBuffers *buffers) {
  const size_t bytes = buffers->host.size();
  unsigned char *buffer = random.Chance(0.05) ? nullptr : random.Chance(0.5) ? buffers->device : buffers->host.data();
  return End{buffer, static_cast<size_t>(random.Between(0, std::min<int64_t>(8, bytes - 1)))};
}

// The host-side ends keep to what a caller must ensure (count and destMax within the buffer); the device-side
// ends and everything else may be wrong, for the adapter to reject.
Copy DrawCopy(Random &random, CopyBuffers *buffers) {
  const size_t bytes = buffers->host.size();
  Copy copy;
  copy.kind = random.Chance(0.8) ? static_cast<int32_t>(random.Between(0, 4))
                                 : random.Pick<int32_t>({-1, 5, 7, 8, 64, INT32_MIN, INT32_MAX});
  copy.dst = DrawEnd(random, buffers);
  copy.src = DrawEnd(random, buffers);
  copy.dest_max = random.Chance(0.7) ? bytes : static_cast<size_t>(random.Between(0, bytes));
  const int64_t most = static_cast<int64_t>(bytes);
  copy.count = static_cast<size_t>(random.Chance(0.9) ? random.Between(0, most) : random.Between(most + 1, most + 8));
  if (!WritesDevice(copy.kind)) {
    copy.dest_max = std::min(copy.dest_max, bytes - copy.dst.offset);
  }
  if (!ReadsDevice(copy.kind)) {
    copy.count = std::min(copy.count, bytes - copy.src.offset);
  }
  return copy;
}

bool IsAccepted(const Copy &copy, const CopyBuffers &buffers) {
  const auto inside_device = [&](const End &end) {
    return end.buffer == buffers.device && end.offset + copy.count <= buffers.host.size();
  };
  return copy.dst.buffer != nullptr && copy.src.buffer != nullptr && IsMemcpyKind(copy.kind) &&
         copy.count <= copy.dest_max && (!WritesDevice(copy.kind) || inside_device(copy.dst)) &&
         (!ReadsDevice(copy.kind) || inside_device(copy.src));
}

// What the buffers must hold after the copy.
BufferContents AfterCopy(const Copy &copy, const CopyBuffers &buffers, bool accepted) {
  BufferContents expected = ContentsOf(buffers);
  if (accepted) {
    const auto model = [&](const End &end) {
      return (end.buffer == buffers.device ? expected.device.data() : expected.host.data()) + end.offset;
    };
    std::memmove(model(copy.dst), model(copy.src), copy.count);
  }
  return expected;
}

class CaseRunner {
 public:
  // The case of case_seed: of a random single-output operation, or of op, run on the kernels of isa.
  CaseRunner(uint64_t seed, uint64_t index, uint64_t case_seed, std::optional<Operation> op, Isa isa, Stats *stats)
      : seed_(seed), index_(index), case_seed_(case_seed), isa_(isa), stats_(stats), case_(BuildCase(case_seed_, op)) {}

  // Case `index_` of the campaign: its own call, then, on streams of their own, perhaps one aclrtMemcpy and a
  // call of each fused operation.
  void Run() {
    ++stats_->cases;
    RunCall();
    Random memcpy_random(case_seed_ + kMemcpy);
    if (memcpy_random.Chance(kMemcpyChance)) {
      CheckMemcpy(memcpy_random);
    }
    for (const auto &[op, stream] : kCompanions) {
      Random companion(case_seed_ + stream);
      if (companion.Chance(kFusedCaseChance)) {
        CaseRunner(seed_, index_, companion.Bits(), op, isa_, stats_).RunCall();
      }
    }
  }

  void RunCall() {
    AllocateStorages();
    CreateTensors();
    if (case_.check_accessors) {
      CheckAccessors();
    }
    for (int role = 0; role < kRoles; ++role) {
      snapshots_[role] = storages_[role] ? *storages_[role] : Storage{};
    }
    const bool computed = PlanAndRun();
    DestroyTensors();
    CheckStoragesUnchanged(computed);
    if (computed) {
      CheckResults();
    }
  }

 private:
  // ---- findings ----

  void Report(uint64_t *counter, const std::string &what) {
    ++*counter;
    static uint64_t printed = 0;
    if (printed++ >= kMaxPrintedFindings) {
      return;
    }
    std::printf("%s in case %llu of seed %llu: %s\n", counter == &stats_->mismatches ? "MISMATCH" : "UNEXPECTED",
                static_cast<unsigned long long>(index_), static_cast<unsigned long long>(seed_), what.c_str());
    if (!described_) {
      std::printf("  case on the %s kernels: %s\n  replay: ms_bcewl_fuzz --seed %llu --case %llu\n", IsaName(isa_),
                  Describe(case_).c_str(), static_cast<unsigned long long>(seed_),
                  static_cast<unsigned long long>(index_));
      described_ = true;
    }
    std::fflush(stdout);
  }

  void Unexpected(const std::string &what) { Report(&stats_->unexpected, what); }

  void Count(const std::string &api, int status) {
    ++stats_->calls;
    ++stats_->statuses[status];
    ++stats_->statuses_by_api[api][status];
  }

  void CheckMessage(const std::string &api, int status, const std::string &marker) {
    const std::string message = aclGetRecentErrMsg();
    if (status == ACLNN_SUCCESS) {
      if (message != marker) {
        Unexpected(api + " succeeded but replaced the last error message with \"" + message + "\"");
      }
      return;
    }
    const std::string prefix = api + ": error " + std::to_string(status) + ": ";
    if (message.rfind(prefix, 0) != 0 || message.size() <= prefix.size()) {
      Unexpected(api + " returned " + std::to_string(status) + " with the message \"" + message + "\"");
    }
  }

  // Calls a status-returning function of the API under test and checks its status (one of `expected`) and message.
  template <typename Call>
  int Checked(const std::string &api, std::initializer_list<int> expected, Call &&call) {
    const std::string &marker = PrimeErrorMessage();
    const int status = call();
    Count(api, status);
    if (std::find(expected.begin(), expected.end(), status) == expected.end()) {
      Unexpected(api + " returned " + std::to_string(status) + ", expected " + std::to_string(*expected.begin()) +
                 " (message: \"" + aclGetRecentErrMsg() + "\")");
    } else {
      CheckMessage(api, status, marker);
    }
    return status;
  }

  // ---- tensors ----

  bool OwnsStorage(int role) const { return case_.tensors[role] && case_.storage_of[role] == role; }

  void AllocateStorages() {
    Random values(case_seed_ + kValues);
    for (int role = 0; role < kRoles; ++role) {
      if (!OwnsStorage(role)) {
        continue;
      }
      auto storage = std::make_shared<Storage>(case_.storage_bytes[role]);
      const int32_t dtype = case_.tensors[role]->dtype;
      const size_t elements = storage->size() / ElementBytes(dtype);
      for (size_t i = 0; i < elements; ++i) {
        if (IsSupportedDtype(dtype)) {
          test::EncodeElement(storage->data(), static_cast<int64_t>(i), static_cast<aclDataType>(dtype),
                              RandomValue(values, static_cast<Role>(role), case_.non_finite_inputs));
        } else {
          (*storage)[i] = static_cast<unsigned char>(values.Bits());
        }
      }
      storages_[role] = std::move(storage);
    }
    for (Role output : OutputRoles(case_.op)) {
      if (case_.tensors[output] && !OwnsStorage(output)) {
        storages_[output] = storages_[case_.storage_of[output]];
      }
    }
  }

  void CreateTensors() {
    for (int role = 0; role < kRoles; ++role) {
      if (!case_.tensors[role]) {
        continue;
      }
      const Descriptor &d = *case_.tensors[role];
      const Creation expected = ExpectedCreation(d);
      const std::string &marker = PrimeErrorMessage();
      handles_[role] = CreateTensor(d, storages_[role].get());
      passed_[role] = handles_[role] != nullptr;
      const std::string what = std::string("aclCreateTensor of ") + kRoleNames[role];
      if (handles_[role] == nullptr) {
        const std::string message = aclGetRecentErrMsg();
        const int status = CreationFailureStatus(message);
        Count("aclCreateTensor", status);
        if (expected == Creation::kMustAccept || status < 0) {
          Unexpected(what + " rejected it: \"" + message + "\"");
        }
      } else {
        Count("aclCreateTensor", ACLNN_SUCCESS);
        if (expected == Creation::kMustReject) {
          Unexpected(what + " accepted a view outside its storage or a broken descriptor");
        }
        CheckMessage("aclCreateTensor", ACLNN_SUCCESS, marker);
      }
    }
  }

  void CheckDims(const char *api, const aclTensor *tensor, const Shape &expected,
                 aclnnStatus (*get)(const aclTensor *, int64_t **, uint64_t *)) {
    int64_t *values = nullptr;
    uint64_t count = 0;
    if (Checked(api, {ACLNN_SUCCESS}, [&] { return get(tensor, &values, &count); }) == ACLNN_SUCCESS) {
      if (Shape(values, values + count) != expected) {
        Unexpected(std::string(api) + " gave " + test::ShapeText(Shape(values, values + count)) + ", expected " +
                   test::ShapeText(expected));
      }
      delete[] values;
    }
    Checked(api, {ACLNN_ERR_PARAM_NULLPTR}, [&] { return get(tensor, nullptr, &count); });
    Checked(api, {ACLNN_ERR_PARAM_NULLPTR}, [&] { return get(nullptr, &values, &count); });
  }

  void CheckAccessors() {
    for (int role = 0; role < kRoles; ++role) {
      if (handles_[role] == nullptr) {
        continue;
      }
      const Descriptor &d = *case_.tensors[role];
      const aclTensor *tensor = handles_[role];
      CheckDims("aclGetViewShape", tensor, d.dims, aclGetViewShape);
      if (const std::optional<Shape> strides = EffectiveStrides(d)) {
        CheckDims("aclGetViewStrides", tensor, *strides, aclGetViewStrides);
      }
      CheckDims("aclGetStorageShape", tensor, d.storage_dims, aclGetStorageShape);
      int64_t offset = -1;
      aclDataType dtype = ACL_DT_UNDEFINED;
      aclFormat format = ACL_FORMAT_UNDEFINED;
      Checked("aclGetViewOffset", {ACLNN_SUCCESS}, [&] { return aclGetViewOffset(tensor, &offset); });
      Checked("aclGetDataType", {ACLNN_SUCCESS}, [&] { return aclGetDataType(tensor, &dtype); });
      Checked("aclGetFormat", {ACLNN_SUCCESS}, [&] { return aclGetFormat(tensor, &format); });
      Checked("aclGetDataType", {ACLNN_ERR_PARAM_NULLPTR}, [&] { return aclGetDataType(tensor, nullptr); });
      if (offset != d.offset || dtype != d.dtype || format != d.format) {
        Unexpected(std::string("the accessors of ") + kRoleNames[role] + " gave offset " + std::to_string(offset) +
                   ", dtype " + std::to_string(dtype) + ", format " + std::to_string(format));
      }
    }
  }

  void DestroyTensors() {
    for (int role = 0; role < kRoles; ++role) {
      if (handles_[role] == nullptr) {
        continue;
      }
      Checked("aclDestroyTensor", {ACLNN_SUCCESS}, [&] { return aclDestroyTensor(handles_[role]); });
      if (case_.destroy_twice) {
        Checked("aclDestroyTensor", {ACLNN_ERR_PARAM_INVALID}, [&] { return aclDestroyTensor(handles_[role]); });
      }
      handles_[role] = nullptr;
    }
  }

  // The descriptor of a tensor the call receives (nullptr where it gets nullptr).
  const Descriptor *Passed(Role role) const { return passed_[role] ? &*case_.tensors[role] : nullptr; }

  int64_t NumelOf(Role role) const { return CountOf(Passed(role)->dims).value_or(INT64_MAX); }

  // ---- phase 1 ----

  // The status docs/contract.md §10 Errors gives the call, checks in CANN's order: null pointers (161001), then
  // dtypes, reduction, ranks and shapes (161002); each check goes through the arguments in the C signature's order.
  // The weight gradients of kGradAll and kLossAndAllGradients go with their inputs: one missing with its input is a
  // null output (161001), one given without its input fails the first 161002 check (the header leaves that check's
  // place open; this is the adapter's). A loss output (the forward's, kLossAndAllGradients's) has the forward's
  // rules: target's dtype, and target's shape for none, else [] or [1].
  PlanExpectation ExpectedPlan() const {
    const std::vector<Role> roles = CheckedRoles();
    std::optional<PlanExpectation> failure = NullPointerFailure(roles);
    if (!failure) {
      failure = DtypeOrReductionFailure(roles);
    }
    if (!failure) {
      failure = ShapeFailure(roles);
    }
    return failure.value_or(PlanExpectation{});
  }

  // A weight gradient whose input the call does not get.
  bool IsGradientOfNoInput(Role role) const { return IsOutput(role) && Passed(OwnerOf(case_.op, role)) == nullptr; }

  // The call checks every argument but the gradients of inputs it does not get (weight gradients only: the other
  // outputs' owners are required).
  std::vector<Role> CheckedRoles() const {
    std::vector<Role> roles = RolesOf(case_.op);
    roles.erase(std::remove_if(roles.begin(), roles.end(), [this](Role r) { return IsGradientOfNoInput(r); }),
                roles.end());
    return roles;
  }

  std::optional<PlanExpectation> NullPointerFailure(const std::vector<Role> &roles) const {
    const auto missing = [this](Role r) { return IsRequired(case_.op, r) && Passed(r) == nullptr; };
    if (std::optional<PlanExpectation> failure = FirstFailing(roles, ACLNN_ERR_PARAM_NULLPTR, missing)) {
      return failure;
    }
    if (case_.null_workspace_size || case_.null_executor) {
      return PlanExpectation{ACLNN_ERR_PARAM_NULLPTR, std::nullopt};
    }
    return FirstFailing(roles, ACLNN_ERR_PARAM_NULLPTR,
                        [this](Role r) { return Passed(r) != nullptr && Passed(r)->null_data && NumelOf(r) > 0; });
  }

  std::optional<PlanExpectation> DtypeOrReductionFailure(const std::vector<Role> &roles) const {
    const auto without_its_input = [this](Role r) { return IsGradientOfNoInput(r) && Passed(r) != nullptr; };
    if (auto failure = FirstFailing(RolesOf(case_.op), ACLNN_ERR_PARAM_INVALID, without_its_input)) {
      return failure;
    }
    const auto unsupported = [this](Role r) { return Passed(r) != nullptr && !IsSupportedDtype(Passed(r)->dtype); };
    if (auto failure = FirstFailing(roles, ACLNN_ERR_PARAM_INVALID, unsupported)) {
      return failure;
    }
    const auto unlike_owner = [this](Role r) {
      return IsOutput(r) && Passed(r)->dtype != Passed(OwnerOf(case_.op, r))->dtype;
    };
    if (auto failure = FirstFailing(roles, ACLNN_ERR_PARAM_INVALID, unlike_owner)) {
      return failure;
    }
    if (case_.reduction < 0 || case_.reduction > 2) {
      return PlanExpectation{ACLNN_ERR_PARAM_INVALID, std::nullopt};
    }
    return std::nullopt;
  }

  std::optional<PlanExpectation> ShapeFailure(const std::vector<Role> &roles) const {
    const auto too_high = [this](Role r) { return Passed(r) != nullptr && Passed(r)->dims.size() > kMaxOpRank; };
    if (auto failure = FirstFailing(roles, ACLNN_ERR_PARAM_INVALID, too_high)) {
      return failure;
    }
    if (Passed(kTarget)->dims != Passed(kSelf)->dims) {
      return PlanExpectation{ACLNN_ERR_PARAM_INVALID, std::nullopt};
    }
    const std::vector<Role> broadcast = {kGrad, kWeight, kPosWeight};
    if (auto failure =
            FirstFailing(broadcast, ACLNN_ERR_PARAM_INVALID, [this](Role r) { return Unbroadcastable(r); })) {
      return failure;
    }
    return FirstFailing(roles, ACLNN_ERR_PARAM_INVALID, [this](Role r) { return HasWrongOutputShape(r); });
  }

  // An input that does not broadcast to a non-empty self.
  bool Unbroadcastable(Role role) const {
    return NumelOf(kSelf) > 0 && Passed(role) != nullptr && !BroadcastsTo(Passed(role)->dims, Passed(kSelf)->dims);
  }

  bool HasWrongOutputShape(Role role) const {
    if (!IsOutput(role)) {
      return false;
    }
    const Shape &out = Passed(role)->dims;
    if (SingleOutputOp(case_.op, role) == Operation::kForward && case_.reduction != 0) {
      return !(out.empty() || out == Shape{1});
    }
    return out != Passed(OwnerOf(case_.op, role))->dims;
  }

  // The name the messages of op give an output.
  const char *OutputName(Role output) const {
    const std::vector<Role> outputs = OutputRoles(case_.op);
    return ApiOf(case_.op).output_names[std::find(outputs.begin(), outputs.end(), output) - outputs.begin()];
  }

  // A failure about an output must say which one: its message goes on with the output's name.
  void CheckCulpritNamed(const char *api, const PlanExpectation &expected) {
    if (!expected.culprit || !IsOutput(*expected.culprit)) {
      return;
    }
    const std::string message = aclGetRecentErrMsg();
    const std::string named =
        std::string(api) + ": error " + std::to_string(expected.status) + ": " + OutputName(*expected.culprit) + " ";
    if (message.rfind(named, 0) != 0) {
      Unexpected(std::string(api) + " failed about " + OutputName(*expected.culprit) +
                 " but its message does not start with that name: \"" + message + "\"");
    }
  }

  // Whether a tensor of the call has too many elements to run it or to compute its reference (a stride-0 view
  // can describe 2^40 elements in one): such a plan is destroyed instead.
  bool TooLargeToRun() const {
    for (int role = 0; role < kRoles; ++role) {
      if (passed_[role] && NumelOf(static_cast<Role>(role)) > kMaxRunElements) {
        return true;
      }
    }
    return false;
  }

  // Phase 1 of api on the tensors of each role.
  aclnnStatus Plan(const OpApi &api, const std::array<aclTensor *, kRoles> &tensors, uint64_t *workspace_size,
                   aclOpExecutor **executor) const {
    return api.plan(tensors[kGrad], tensors[kSelf], tensors[kTarget], tensors[kWeight], tensors[kPosWeight],
                    case_.reduction, tensors[kOut], tensors[kGradTargetOut], tensors[kGradWeightOut],
                    tensors[kGradPosWeightOut], tensors[kLossOut], workspace_size, executor);
  }

  // Returns whether phase 2 computed the results.
  bool PlanAndRun() {
    const OpApi &api = ApiOf(case_.op);
    const PlanExpectation expectation = ExpectedPlan();
    const int expected = expectation.status;
    int not_an_executor = 0;
    uint64_t workspace_bytes = 12345;
    aclOpExecutor *executor = reinterpret_cast<aclOpExecutor *>(&not_an_executor);
    const int status = Checked(api.plan_name, {expected}, [&] {
      return Plan(api, handles_, case_.null_workspace_size ? nullptr : &workspace_bytes,
                  case_.null_executor ? nullptr : &executor);
    });
    if (status == expected) {
      CheckCulpritNamed(api.plan_name, expectation);
    }
    if (status != ACLNN_SUCCESS) {
      if (!case_.null_executor && executor != nullptr) {
        Unexpected(std::string(api.plan_name) + " failed but did not set *executor to nullptr");
      }
      return false;
    }
    if (case_.destroy_tensors_before_run) {
      DestroyTensors();  // a plan outlives the aclTensors it was made from
    }
    if (expected != ACLNN_SUCCESS || TooLargeToRun()) {
      Checked("aclDestroyAclOpExecutor", {ACLNN_SUCCESS}, [&] { return aclDestroyAclOpExecutor(executor); });
      return false;
    }
    return RunPhaseTwo(executor, workspace_bytes);
  }

  // ---- phase 2 ----

  int CallRun(const OpApi &api, void *workspace, uint64_t size, aclOpExecutor *executor, aclrtStream stream,
              std::initializer_list<int> expected) {
    return Checked(api.run_name, expected, [&] { return api.run(workspace, size, executor, stream); });
  }

  void CallDestroy(aclOpExecutor *executor, int expected) {
    Checked("aclDestroyAclOpExecutor", {expected}, [&] { return aclDestroyAclOpExecutor(executor); });
  }

  aclrtStream CreateStream() {
    aclrtStream stream = nullptr;
    Checked("aclrtCreateStream", {ACL_SUCCESS}, [&] { return aclrtCreateStream(&stream); });
    return stream;
  }

  // An operation other than the case's, whose phase 2 gets the case's executor: a single-output operation, drawn on
  // the phase-2 stream as before the fused operations, or instead a fused operation, each in turn drawn on a stream
  // of its own (so a case hands its executor to kGradAll where it did before kLossAndAllGradients).
  Operation OtherOp(Random &phase_two) const {
    Operation single;
    if (IsFused(case_.op)) {
      single = static_cast<Operation>(phase_two.Between(0, kSingleOutputOpCount - 1));
    } else {
      const int shift = static_cast<int>(phase_two.Between(1, kSingleOutputOpCount - 1));
      single = static_cast<Operation>((static_cast<int>(case_.op) + shift) % kSingleOutputOpCount);
    }
    Random own(case_seed_ + kOtherOp);
    for (Operation fused : kFusedOps) {
      if (fused != case_.op && own.Chance(kOtherOpIsFusedChance)) {
        return fused;
      }
    }
    return single;
  }

  // What phase 2 is called with: the case's operation, its plan's executor, and a workspace of the `needed` bytes
  // that phase 1 asked for plus `extra`.
  struct PhaseTwoCall {
    const OpApi &api;
    aclOpExecutor *executor;
    unsigned char *workspace;
    uint64_t needed;
    uint64_t extra;
    Random &random;
  };

  bool RunPhaseTwo(aclOpExecutor *executor, uint64_t needed) {
    Random random(case_seed_ + kPhaseTwo);
    const uint64_t extra = random.Between(1, 64);
    Workspace workspace(needed + extra, case_.device_workspace);
    const PhaseTwoCall call{ApiOf(case_.op), executor, workspace.data(), needed, extra, random};
    using ModeRun = bool (CaseRunner::*)(const PhaseTwoCall &);
    // In RunMode's order.
    static constexpr ModeRun kRunsByMode[] = {&CaseRunner::RunOnce,
                                              &CaseRunner::RunTwice,
                                              &CaseRunner::DestroyThenRun,
                                              &CaseRunner::RunNullExecutor,
                                              &CaseRunner::RunForgedExecutor,
                                              &CaseRunner::RunOtherOps,
                                              &CaseRunner::RunNullWorkspace,
                                              &CaseRunner::RunShortWorkspace,
                                              &CaseRunner::RunMisalignedWorkspace,
                                              &CaseRunner::RunLargerWorkspace,
                                              &CaseRunner::RunOnLiveStream,
                                              &CaseRunner::RunOnDestroyedStream,
                                              &CaseRunner::RunOnForgedStream};
    static_assert(std::size(kRunsByMode) == static_cast<size_t>(RunMode::kForgedStream) + 1);
    return (this->*kRunsByMode[static_cast<int>(case_.run_mode)])(call);
  }

  // Phase 2 of the case's operation with its workspace; returns whether it succeeded (computed the results).
  bool RunOwn(const PhaseTwoCall &call, aclOpExecutor *executor, aclrtStream stream,
              std::initializer_list<int> expected) {
    return CallRun(call.api, call.workspace, call.needed, executor, stream, expected) == ACLNN_SUCCESS;
  }

  bool RunOnce(const PhaseTwoCall &call) { return RunOwn(call, call.executor, nullptr, {ACLNN_SUCCESS}); }

  // An executor runs once.
  bool RunTwice(const PhaseTwoCall &call) {
    const bool computed = RunOwn(call, call.executor, nullptr, {ACLNN_SUCCESS});
    RunOwn(call, call.executor, nullptr, {ACLNN_ERR_PARAM_INVALID});
    return computed;
  }

  bool DestroyThenRun(const PhaseTwoCall &call) {
    CallDestroy(call.executor, ACLNN_SUCCESS);
    RunOwn(call, call.executor, nullptr, {ACLNN_ERR_PARAM_INVALID});
    return false;
  }

  bool RunNullExecutor(const PhaseTwoCall &call) {
    RunOwn(call, nullptr, nullptr, {ACLNN_ERR_PARAM_NULLPTR, ACLNN_ERR_PARAM_INVALID});
    CallDestroy(call.executor, ACLNN_SUCCESS);
    return false;
  }

  bool RunForgedExecutor(const PhaseTwoCall &call) {
    int forged = 0;
    auto *fake = reinterpret_cast<aclOpExecutor *>(&forged);
    RunOwn(call, fake, nullptr, {ACLNN_ERR_PARAM_INVALID});
    CallDestroy(fake, ACLNN_ERR_PARAM_INVALID);
    CallDestroy(call.executor, ACLNN_SUCCESS);
    return false;
  }

  // Phase 2 consumes the executor even when it refuses it.
  bool RunOtherOps(const PhaseTwoCall &call) {
    CallRun(ApiOf(OtherOp(call.random)), call.workspace, call.needed, call.executor, nullptr,
            {ACLNN_ERR_PARAM_INVALID});
    CallDestroy(call.executor, ACLNN_ERR_PARAM_INVALID);
    return false;
  }

  // The status of a run whose workspace is unusable: refused only if the plan needs one.
  static int UnusableWorkspaceStatus(const PhaseTwoCall &call) {
    return call.needed > 0 ? ACLNN_ERR_PARAM_INVALID : ACLNN_SUCCESS;
  }

  bool RunNullWorkspace(const PhaseTwoCall &call) {
    return CallRun(call.api, nullptr, call.needed, call.executor, nullptr, {UnusableWorkspaceStatus(call)}) ==
           ACLNN_SUCCESS;
  }

  bool RunShortWorkspace(const PhaseTwoCall &call) {
    const uint64_t size = call.needed > 0 ? static_cast<uint64_t>(call.random.Between(0, call.needed - 1)) : 0;
    return CallRun(call.api, call.workspace, size, call.executor, nullptr, {UnusableWorkspaceStatus(call)}) ==
           ACLNN_SUCCESS;
  }

  bool RunMisalignedWorkspace(const PhaseTwoCall &call) {
    unsigned char *misaligned = call.workspace == nullptr ? nullptr : call.workspace + call.random.Between(1, 7);
    return CallRun(call.api, misaligned, call.needed, call.executor, nullptr, {UnusableWorkspaceStatus(call)}) ==
           ACLNN_SUCCESS;
  }

  bool RunLargerWorkspace(const PhaseTwoCall &call) {
    return CallRun(call.api, call.workspace, call.needed + call.extra, call.executor, nullptr, {ACLNN_SUCCESS}) ==
           ACLNN_SUCCESS;
  }

  bool RunOnLiveStream(const PhaseTwoCall &call) {
    aclrtStream stream = CreateStream();
    const bool computed = RunOwn(call, call.executor, stream, {ACLNN_SUCCESS});
    Checked("aclrtSynchronizeStream", {ACL_SUCCESS}, [&] { return aclrtSynchronizeStream(stream); });
    Checked("aclrtDestroyStream", {ACL_SUCCESS}, [&] { return aclrtDestroyStream(stream); });
    return computed;
  }

  bool RunOnDestroyedStream(const PhaseTwoCall &call) {
    aclrtStream stream = CreateStream();
    Checked("aclrtDestroyStream", {ACL_SUCCESS}, [&] { return aclrtDestroyStream(stream); });
    RunOwn(call, call.executor, stream, {ACLNN_ERR_PARAM_INVALID});
    return false;
  }

  bool RunOnForgedStream(const PhaseTwoCall &call) {
    int forged = 0;
    RunOwn(call, call.executor, &forged, {ACLNN_ERR_PARAM_INVALID});
    return false;
  }

  // ---- aclrtMemcpy ----

  // One aclrtMemcpy between an aclrtMalloc buffer and a heap buffer of the same size: a kind code in [0, 4] or one
  // that aclrtMemcpyKind cannot hold, random ends, offsets and counts, null pointers. The status is predicted from
  // acl_rt.h's contract, and both buffers must end as a memmove of exactly those bytes (or unchanged) leaves them.
  void CheckMemcpy(Random &random) {
    const size_t bytes = static_cast<size_t>(random.Between(1, 256));
    void *allocation = nullptr;
    if (Checked("aclrtMalloc", {ACL_SUCCESS},
                [&] { return aclrtMalloc(&allocation, bytes, ACL_MEM_MALLOC_HUGE_FIRST); }) != ACL_SUCCESS) {
      return;
    }
    CopyBuffers buffers{static_cast<unsigned char *>(allocation), std::vector<unsigned char>(bytes)};
    FillRandomly(random, &buffers);
    const Copy copy = DrawCopy(random, &buffers);
    const bool accepted = IsAccepted(copy, buffers);
    const BufferContents expected = AfterCopy(copy, buffers, accepted);
    Checked("aclrtMemcpy", {accepted ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM}, [&] {
      return aclrtMemcpy(copy.dst.data(), copy.dest_max, copy.src.data(), copy.count,
                         static_cast<aclrtMemcpyKind>(copy.kind));
    });
    if (!(ContentsOf(buffers) == expected)) {
      Report(&stats_->mismatches, "aclrtMemcpy(kind " + std::to_string(copy.kind) + ", count " +
                                      std::to_string(copy.count) + ", destMax " + std::to_string(copy.dest_max) +
                                      ") left the buffers other than " +
                                      (accepted ? "a copy of exactly those bytes" : "unchanged"));
    }
    Checked("aclrtFree", {ACL_SUCCESS}, [&] { return aclrtFree(allocation); });
  }

  // ---- checks after the call ----

  // The outputs the call got (created, not nullptr): a successful call got every output of op but, for kGradAll, the
  // gradients of the weights it did not get, whose descriptors may be there all the same (ones aclCreateTensor
  // rejected).
  std::vector<Role> GivenOutputs() const {
    std::vector<Role> given;
    for (Role output : OutputRoles(case_.op)) {
      if (passed_[output]) {
        given.push_back(output);
      }
    }
    return given;
  }

  // Which bytes of the storage of `owner` the call may have written: those of the output views over it, when phase 2
  // computed them.
  std::vector<bool> WritableBytes(Role owner, bool computed) const {
    std::vector<bool> writable(storages_[owner]->size(), false);
    for (Role output : GivenOutputs()) {
      if (!computed || case_.storage_of[output] != owner) {
        continue;
      }
      const Descriptor &view = *case_.tensors[output];
      for (int64_t index : ViewIndices(view)) {
        std::fill_n(writable.begin() + index * ElementBytes(view.dtype), ElementBytes(view.dtype), true);
      }
    }
    return writable;
  }

  // Every buffer keeps its bytes, except the elements of the output views when phase 2 computed them.
  void CheckStoragesUnchanged(bool computed) {
    for (int role = 0; role < kRoles; ++role) {
      if (!OwnsStorage(role)) {
        continue;
      }
      const std::vector<bool> writable = WritableBytes(static_cast<Role>(role), computed);
      const Storage &now = *storages_[role];
      for (size_t byte = 0; byte < now.size(); ++byte) {
        if (now[byte] != snapshots_[role][byte] && !writable[byte]) {
          Report(&stats_->mismatches, std::string("byte ") + std::to_string(byte) + " of the storage of " +
                                          kRoleNames[role] + " changed" +
                                          (computed ? " outside the output views" : " although the call failed"));
          break;
        }
      }
    }
  }

  // Whether an output's view shares memory with an input, another output or itself: its results are then not
  // defined element by element, and are not compared.
  bool OutputsOverlap() const {
    for (Role output : GivenOutputs()) {
      if (!OwnsStorage(output)) {
        return true;
      }
      std::vector<int64_t> indices = ViewIndices(*case_.tensors[output]);
      std::sort(indices.begin(), indices.end());
      if (std::adjacent_find(indices.begin(), indices.end()) != indices.end()) {
        return true;
      }
    }
    return false;
  }

  // An input's values as they were before the call (an overlapping output may have overwritten them since).
  test::RefArray Array(Role role) const {
    return test::RefArray{case_.tensors[role]->dims, ViewValues(*case_.tensors[role], snapshots_[role])};
  }

  std::optional<test::RefArray> OptionalArray(Role role) const {
    return passed_[role] ? std::optional<test::RefArray>(Array(role)) : std::nullopt;
  }

  void CheckResults() {
    if (OutputsOverlap()) {
      ++stats_->runs_not_compared;
      return;
    }
    test::RefProblem problem{Array(kSelf),
                             Array(kTarget),
                             OptionalArray(kWeight),
                             OptionalArray(kPosWeight),
                             case_.op == Operation::kForward ? std::nullopt : OptionalArray(kGrad),
                             case_.reduction};
    Magnitudes magnitudes;
    magnitudes.x = MaxMagnitude(problem.x.values);
    magnitudes.y = MaxMagnitude(problem.y.values);
    magnitudes.w = problem.w ? MaxMagnitude(problem.w->values) : 1.0;
    magnitudes.p = problem.p ? MaxMagnitude(problem.p->values) : 1.0;
    magnitudes.g = problem.g ? MaxMagnitude(problem.g->values) : 1.0;
    const test::RefResult reference = test::Reference(problem);
    const double numel = static_cast<double>(test::NumelOf(problem.x.shape));
    bool compared = true;
    for (Role output : GivenOutputs()) {
      compared = CompareWithReference(output, reference, magnitudes, numel) && compared;
    }
    stats_->runs_not_compared += compared ? 0 : 1;
    if (IsFused(case_.op)) {
      CheckEqualsSeparateCalls();
    }
  }

  // Compares an output with its float64 reference; returns false where the bound is not finite (non-finite input).
  bool CompareWithReference(Role output, const test::RefResult &reference, const Magnitudes &magnitudes, double numel) {
    const Operation single = SingleOutputOp(case_.op, output);
    const std::vector<double> *expected_by_op[kSingleOutputOpCount] = {&reference.loss, &reference.dx, &reference.dy,
                                                                       &reference.dw, &reference.dp};
    const std::vector<double> &expected = *expected_by_op[static_cast<int>(single)];
    const Descriptor &out = *case_.tensors[output];
    const std::vector<double> actual = ViewValues(out, *storages_[output]);
    const double bound = ResultErrorBound(single, magnitudes, numel, static_cast<double>(expected.size()));
    if (!std::isfinite(bound)) {
      return false;
    }
    stats_->elements_compared += actual.size();
    stats_->elements_compared_by_op[ApiOf(case_.op).name] += actual.size();
    for (size_t i = 0; i < actual.size() && i < expected.size(); ++i) {
      if (!Acceptable(actual[i], expected[i], bound, static_cast<aclDataType>(out.dtype))) {
        Report(&stats_->mismatches, std::string(OutputName(output)) + " element " + std::to_string(i) + " is " +
                                        NumberText(actual[i]) + ", the float64 reference " + NumberText(expected[i]) +
                                        " (bound " + NumberText(bound) + ")");
        return true;
      }
    }
    if (actual.size() != expected.size()) {
      Report(&stats_->mismatches, std::string(OutputName(output)) + " has " + std::to_string(actual.size()) +
                                      " elements, the reference " + std::to_string(expected.size()));
    }
    return true;
  }

  // The float32 error bound of one output of `single`: one element's bound per element summed into it, divided
  // for mean.
  double ResultErrorBound(Operation single, const Magnitudes &magnitudes, double numel, double outputs) const {
    if (numel == 0) {
      return 0.0;
    }
    const bool reduces = single == Operation::kGradWeight || single == Operation::kGradPosWeight ||
                         (single == Operation::kForward && case_.reduction != 0);
    const double summed = reduces ? numel / outputs : 1.0;
    const double scale = case_.reduction == 1 ? 1.0 / numel : 1.0;
    return ElementErrorBound(single, magnitudes) * summed * scale;
  }

  // ---- the fused operations against separate calls ----

  // A call that must give some of a fused operation's outputs, and those outputs.
  struct SeparateCall {
    Operation op;
    std::vector<Role> outputs;
  };

  // Each gradient's single-output operation; for kLossAndAllGradients, the forward (the loss) and kGradAll with a
  // gradOutput of 1 (the gradients), which the cases of kGradAll compare with the single-output operations in turn.
  std::vector<SeparateCall> SeparateCalls() const {
    const std::vector<Role> given = GivenOutputs();
    if (case_.op == Operation::kLossAndAllGradients) {  // given starts with the loss
      return {{Operation::kForward, {kLossOut}},
              {Operation::kGradAll, std::vector<Role>(given.begin() + 1, given.end())}};
    }
    std::vector<SeparateCall> calls;
    for (Role output : given) {
      calls.push_back({SingleOutputOp(case_.op, output), {output}});
    }
    return calls;
  }

  // Each output of a fused operation must be, bit for bit (any NaN for a NaN), what its separate call writes into the
  // same view over a copy of the output's storage as it was before the call (inputs included that are not finite).
  void CheckEqualsSeparateCalls() {
    ++stats_->runs_compared_bitwise_by_op[ApiOf(case_.op).name];
    for (const SeparateCall &call : SeparateCalls()) {
      std::array<Storage, kRoles> copies;
      for (Role output : call.outputs) {
        copies[output] = snapshots_[output];
      }
      if (!RunSeparately(call, &copies)) {
        continue;
      }
      for (Role output : call.outputs) {
        if (!SameBitsUpToNaNs(copies[output], *storages_[output], case_.tensors[output]->dtype)) {
          Report(&stats_->mismatches,
                 std::string(OutputName(output)) + " differs bitwise from what " + ApiOf(call.op).run_name + " writes");
        }
      }
    }
  }

  // aclCreateTensor of a descriptor it accepted before, or of one the harness makes (`what` names it in findings).
  aclTensor *CreateAccepted(const Descriptor &descriptor, Storage *storage, const std::string &what) {
    const std::string &marker = PrimeErrorMessage();
    aclTensor *tensor = CreateTensor(descriptor, storage);
    Count("aclCreateTensor", tensor == nullptr ? CreationFailureStatus(aclGetRecentErrMsg()) : ACLNN_SUCCESS);
    if (tensor == nullptr) {
      Unexpected("aclCreateTensor of " + what + " rejected it: \"" + aclGetRecentErrMsg() + "\"");
    } else {
      CheckMessage("aclCreateTensor", ACLNN_SUCCESS, marker);
    }
    return tensor;
  }

  // Recreates a tensor of the call over `storage` (an input's: the same memory; an output's: a copy).
  aclTensor *Recreated(Role role, Storage *storage) {
    return CreateAccepted(*case_.tensors[role], storage, kRoleNames[role] + std::string(" (the second time)"));
  }

  // A float32 gradOutput of 1 over `storage`: ones of self's shape for none, else one of shape [].
  aclTensor *UnitGradOutput(Storage *storage) {
    Descriptor unit;
    unit.dims = case_.reduction == 0 ? case_.tensors[kSelf]->dims : Shape{};
    const int64_t numel = test::NumelOf(unit.dims);
    unit.storage_dims = {numel};
    storage->assign(static_cast<size_t>(numel) * ElementBytes(ACL_FLOAT), 0);
    for (int64_t i = 0; i < numel; ++i) {
      test::EncodeElement(storage->data(), i, ACL_FLOAT, 1.0);
    }
    return CreateAccepted(unit, storage, "the gradOutput of 1");
  }

  // Runs call on the inputs of the case's call (and a gradOutput of 1 where the case's operation has none), each of
  // its outputs a view over its copy in `copies`; returns whether it succeeded, as it must.
  bool RunSeparately(const SeparateCall &call, std::array<Storage, kRoles> *copies) {
    std::array<aclTensor *, kRoles> tensors = {};
    for (Role role : kInputRoles) {
      tensors[role] = passed_[role] ? Recreated(role, storages_[role].get()) : nullptr;
    }
    Storage unit_storage;
    if (TakesGradOutput(call.op) && !TakesGradOutput(case_.op)) {
      tensors[kGrad] = UnitGradOutput(&unit_storage);
    }
    for (Role output : call.outputs) {  // a single-output operation's output is its out
      tensors[IsFused(call.op) ? output : kOut] = Recreated(output, &(*copies)[output]);
    }
    const OpApi &api = ApiOf(call.op);
    uint64_t workspace_bytes = 0;
    aclOpExecutor *executor = nullptr;
    bool ran = Checked(api.plan_name, {ACLNN_SUCCESS},
                       [&] { return Plan(api, tensors, &workspace_bytes, &executor); }) == ACLNN_SUCCESS;
    if (ran) {
      Workspace workspace(workspace_bytes, false);
      ran = CallRun(api, workspace.data(), workspace_bytes, executor, nullptr, {ACLNN_SUCCESS}) == ACLNN_SUCCESS;
    }
    for (aclTensor *tensor : tensors) {
      if (tensor != nullptr) {
        Checked("aclDestroyTensor", {ACLNN_SUCCESS}, [&] { return aclDestroyTensor(tensor); });
      }
    }
    return ran;
  }

  const uint64_t seed_;
  const uint64_t index_;
  const uint64_t case_seed_;
  const Isa isa_;
  Stats *const stats_;
  const Case case_;
  bool described_ = false;
  std::array<std::shared_ptr<Storage>, kRoles> storages_;
  std::array<Storage, kRoles> snapshots_;
  std::array<aclTensor *, kRoles> handles_ = {};
  std::array<bool, kRoles> passed_ = {};  // whether the call got the tensor (created, not nullptr)
};

}  // namespace

void RunCase(uint64_t seed, uint64_t index, Stats *stats) {
  const uint64_t case_seed = SplitMix(seed ^ SplitMix(index));
  const std::vector<Isa> &isas = CaseIsas();
  const Isa isa = isas[Random(case_seed + kIsa).Between(0, static_cast<int64_t>(isas.size()) - 1)];
  Hooks().force_isa(isa);
  ++stats->cases_by_isa[IsaName(isa)];
  CaseRunner(seed, index, case_seed, std::nullopt, isa, stats).Run();
  Hooks().automatic_isa();
}

}  // namespace fuzz
