// Calls any of the five single-output two-phase operations through the public API, and builds the tensors of a test
// scenario.
#ifndef MS_BCEWL_TESTS_NATIVE_OP_RUNNER_H_
#define MS_BCEWL_TESTS_NATIVE_OP_RUNNER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "host_tensor.h"
#include "ms_bcewl/operations.h"
#include "reference_bcewl.h"

namespace test {

using ms_bcewl::Operation;
using ms_bcewl::OperationName;

// The operations with one output, which the helpers below run; the fused ones have tests of their own.
constexpr Operation kSingleOutputOperations[] = {Operation::kForward, Operation::kGradSelf, Operation::kGradTarget,
                                                 Operation::kGradWeight, Operation::kGradPosWeight};

struct OpTensors {
  const aclTensor *grad = nullptr;  // ignored by the forward
  const aclTensor *self = nullptr;
  const aclTensor *target = nullptr;
  const aclTensor *weight = nullptr;
  const aclTensor *pos_weight = nullptr;
  aclTensor *out = nullptr;
};

aclnnStatus PlanOp(Operation op, const OpTensors &tensors, int64_t reduction, uint64_t *workspace_size,
                   aclOpExecutor **executor);
aclnnStatus ExecuteOp(Operation op, void *workspace, uint64_t workspace_size, aclOpExecutor *executor,
                      aclrtStream stream = nullptr);
// Phase 1 (plan), a workspace from aclrtMalloc when one is needed, phase 2 (run); the first failing status, or
// success.
aclnnStatus RunTwoPhases(const std::function<aclnnStatus(uint64_t *, aclOpExecutor **)> &plan,
                         const std::function<aclnnStatus(void *, uint64_t, aclOpExecutor *)> &run);
// RunTwoPhases of op.
aclnnStatus RunOp(Operation op, const OpTensors &tensors, int64_t reduction);

enum class Layout {
  kContiguous,
  kColumnMajor,  // a transposed view
  kPadded,       // an offset and gaps between rows
};

struct Dtypes {
  aclDataType x = ACL_FLOAT;
  aclDataType y = ACL_FLOAT;
  aclDataType w = ACL_FLOAT;
  aclDataType p = ACL_FLOAT;
  aclDataType g = ACL_FLOAT;
};

struct Scenario {
  Shape shape;
  std::optional<Shape> w_shape;
  std::optional<Shape> p_shape;
  std::optional<Shape> g_shape;  // default: self's shape for none, [] for mean / sum
  int64_t reduction = 0;
  Dtypes dtypes;
  Layout layout = Layout::kContiguous;
  uint64_t seed = 1;
};

std::string Describe(Operation op, const Scenario &scenario);

std::unique_ptr<HostTensor> MakeTensor(const Shape &shape, aclDataType dtype, Layout layout);

// The scenario's inputs filled with seeded random values (x in [-4, 4], y in [0, 1], w in [0.1, 2], p in
// [0.3, 3], g in [0.25, 2]), and the reference problem over exactly the stored values.
class ScenarioInputs {
 public:
  explicit ScenarioInputs(const Scenario &scenario);

  OpTensors Tensors(aclTensor *out) const;
  RefProblem &reference() { return reference_; }

  std::unique_ptr<HostTensor> x, y, w, p, g;

 private:
  RefProblem reference_;
};

// The output tensor an operation needs (the owner's shape and dtype), with every storage element set to a
// sentinel so that writes outside the view show.
std::unique_ptr<HostTensor> MakeOutput(Operation op, const Scenario &scenario);
constexpr double kSentinel = 768.0;  // exact in float32, float16 and bfloat16

std::vector<double> ExpectedOutput(Operation op, const RefResult &reference);

// Whether every actual value is within the tolerance of the output dtype of the expected one (NaN matches NaN,
// infinities match exactly); describes the first mismatch in *why.
bool Close(const std::vector<double> &actual, const std::vector<double> &expected, aclDataType dtype, std::string *why);

// Runs op on the scenario's random inputs and compares its output with the float64 reference: values within
// the output dtype's tolerance, nothing written outside the output view. Records a failure naming the scenario.
void ExpectScenarioMatchesReference(Operation op, const Scenario &scenario);

// Runs op on float32 contiguous inputs (w, p, g optional) and returns the output values (empty on failure).
struct Float32Inputs {
  RefArray x;
  RefArray y;
  std::optional<RefArray> w;
  std::optional<RefArray> p;
  std::optional<RefArray> g;
};
std::vector<double> RunFloat32(Operation op, const Float32Inputs &inputs, int64_t reduction,
                               aclnnStatus *status = nullptr);

// The MindSpore documentation example (x, y of shape (2, 3), w = p = ones(3)): its mean is 0.34636119.
Float32Inputs MindSporeDocExample();
constexpr double kMindSporeDocMean = 0.34636119;
constexpr double kMindSporeDocSum = 2.07816714;

// After an error: the next valid call must still give the right answer.
void ExpectValidCallStillRight();

std::string NumberText(double value);  // %.9g

std::vector<double> RandomValues(int64_t count, double low, double high, uint64_t seed);

}  // namespace test

#endif  // MS_BCEWL_TESTS_NATIVE_OP_RUNNER_H_
