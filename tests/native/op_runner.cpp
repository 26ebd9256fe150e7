#include "op_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <stdexcept>

#include "aclnnop/aclnn_binary_cross_entropy_with_logits.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_all_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_and_all_gradients.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_weight_backward.h"
#include "test_harness.h"

namespace test {

namespace {

// The four gradients share one phase-1 signature; the forward has no gradOutput.
using PlanGradient = aclnnStatus (*)(const aclTensor *, const aclTensor *, const aclTensor *, const aclTensor *,
                                     const aclTensor *, int64_t, aclTensor *, uint64_t *, aclOpExecutor **);
using Run = aclnnStatus (*)(void *, uint64_t, aclOpExecutor *, aclrtStream);

const PlanGradient kPlanGradient[] = {
    nullptr,
    aclnnBinaryCrossEntropyWithLogitsBackwardGetWorkspaceSize,
    aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize,
    aclnnBinaryCrossEntropyWithLogitsWeightBackwardGetWorkspaceSize,
    aclnnBinaryCrossEntropyWithLogitsPosWeightBackwardGetWorkspaceSize,
};

#define MS_BCEWL_RUN_FUNCTION(name, enumerator, function, ...) function,
const Run kRun[] = {MS_BCEWL_FOR_EACH_OPERATION(MS_BCEWL_RUN_FUNCTION, )};
#undef MS_BCEWL_RUN_FUNCTION

}  // namespace

aclnnStatus PlanOp(Operation op, const OpTensors &t, int64_t reduction, uint64_t *workspace_size,
                   aclOpExecutor **executor) {
  if (op == Operation::kForward) {
    return aclnnBinaryCrossEntropyWithLogitsGetWorkspaceSize(t.self, t.target, t.weight, t.pos_weight, reduction, t.out,
                                                             workspace_size, executor);
  }
  return kPlanGradient[static_cast<int>(op)](t.grad, t.self, t.target, t.weight, t.pos_weight, reduction, t.out,
                                             workspace_size, executor);
}

aclnnStatus ExecuteOp(Operation op, void *workspace, uint64_t workspace_size, aclOpExecutor *executor,
                      aclrtStream stream) {
  return kRun[static_cast<int>(op)](workspace, workspace_size, executor, stream);
}

aclnnStatus RunTwoPhases(const std::function<aclnnStatus(uint64_t *, aclOpExecutor **)> &plan,
                         const std::function<aclnnStatus(void *, uint64_t, aclOpExecutor *)> &run) {
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = nullptr;
  aclnnStatus status = plan(&workspace_size, &executor);
  if (status != ACLNN_SUCCESS) {
    return status;
  }
  void *workspace = nullptr;
  if (workspace_size > 0 && (status = aclrtMalloc(&workspace, workspace_size, ACL_MEM_MALLOC_HUGE_FIRST)) != 0) {
    aclDestroyAclOpExecutor(executor);
    return status;
  }
  status = run(workspace, workspace_size, executor);
  if (workspace != nullptr) {
    aclrtFree(workspace);
  }
  return status;
}

aclnnStatus RunOp(Operation op, const OpTensors &tensors, int64_t reduction) {
  return RunTwoPhases(
      [&](uint64_t *workspace_size, aclOpExecutor **executor) {
        return PlanOp(op, tensors, reduction, workspace_size, executor);
      },
      [&](void *workspace, uint64_t workspace_size, aclOpExecutor *executor) {
        return ExecuteOp(op, workspace, workspace_size, executor);
      });
}

std::string NumberText(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

namespace {

const char *DtypeName(aclDataType dtype) {
  switch (dtype) {
    case ACL_FLOAT16:
      return "f16";
    case ACL_BF16:
      return "bf16";
    default:
      return "f32";
  }
}

}  // namespace

std::string Describe(Operation op, const Scenario &s) {
  const auto name = DtypeName;
  std::string text = std::string(OperationName(op)) + " self" + ShapeText(s.shape) + ":" + name(s.dtypes.x) +
                     " target:" + name(s.dtypes.y);
  if (s.w_shape) {
    text += " weight" + ShapeText(*s.w_shape) + ":" + name(s.dtypes.w);
  }
  if (s.p_shape) {
    text += " pos_weight" + ShapeText(*s.p_shape) + ":" + name(s.dtypes.p);
  }
  if (s.g_shape) {
    text += " grad" + ShapeText(*s.g_shape) + ":" + name(s.dtypes.g);
  }
  static const char *kLayouts[] = {"contiguous", "column-major", "padded"};
  return text + " reduction " + std::to_string(s.reduction) + " " + kLayouts[static_cast<int>(s.layout)];
}

std::unique_ptr<HostTensor> MakeTensor(const Shape &shape, aclDataType dtype, Layout layout) {
  switch (layout) {
    case Layout::kColumnMajor:
      return std::make_unique<HostTensor>(shape, dtype, ColumnMajorStrides(shape), 0);
    case Layout::kPadded: {
      Shape padded = shape;
      if (!padded.empty()) {
        padded.back() += 2;
      }
      return std::make_unique<HostTensor>(shape, dtype, ContiguousStrides(padded), 5);
    }
    case Layout::kContiguous:
      break;
  }
  return std::make_unique<HostTensor>(shape, dtype);
}

std::vector<double> RandomValues(int64_t count, double low, double high, uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::uniform_real_distribution<double> distribution(low, high);
  std::vector<double> values(count);
  for (double &value : values) {
    value = distribution(generator);
  }
  return values;
}

namespace {

// A tensor of random values in [low, high] and its reference array with exactly the stored values.
std::unique_ptr<HostTensor> RandomTensor(const Shape &shape, aclDataType dtype, Layout layout, double low, double high,
                                         uint64_t seed, RefArray *reference) {
  auto tensor = MakeTensor(shape, dtype, layout);
  tensor->Set(RandomValues(NumelOf(shape), low, high, seed));
  *reference = RefArray{shape, tensor->Values()};
  return tensor;
}

Shape GradShape(const Scenario &scenario) {
  if (scenario.g_shape) {
    return *scenario.g_shape;
  }
  return scenario.reduction == 0 ? scenario.shape : Shape{};
}

}  // namespace

ScenarioInputs::ScenarioInputs(const Scenario &s) {
  reference_.reduction = s.reduction;
  x = RandomTensor(s.shape, s.dtypes.x, s.layout, -4.0, 4.0, s.seed, &reference_.x);
  y = RandomTensor(s.shape, s.dtypes.y, s.layout, 0.0, 1.0, s.seed + 1, &reference_.y);
  if (s.w_shape) {
    reference_.w.emplace();
    w = RandomTensor(*s.w_shape, s.dtypes.w, s.layout, 0.1, 2.0, s.seed + 2, &*reference_.w);
  }
  if (s.p_shape) {
    reference_.p.emplace();
    p = RandomTensor(*s.p_shape, s.dtypes.p, s.layout, 0.3, 3.0, s.seed + 3, &*reference_.p);
  }
  reference_.g.emplace();
  g = RandomTensor(GradShape(s), s.dtypes.g, s.layout, 0.25, 2.0, s.seed + 4, &*reference_.g);
}

OpTensors ScenarioInputs::Tensors(aclTensor *out) const {
  auto get = [](const std::unique_ptr<HostTensor> &tensor) { return tensor ? tensor->get() : nullptr; };
  return OpTensors{g->get(), x->get(), y->get(), get(w), get(p), out};
}

std::unique_ptr<HostTensor> MakeOutput(Operation op, const Scenario &s) {
  std::unique_ptr<HostTensor> out;
  switch (op) {
    case Operation::kForward:
      out = MakeTensor(s.reduction == 0 ? s.shape : Shape{}, s.dtypes.y, s.layout);
      break;
    case Operation::kGradSelf:
      out = MakeTensor(s.shape, s.dtypes.x, s.layout);
      break;
    case Operation::kGradTarget:
      out = MakeTensor(s.shape, s.dtypes.y, s.layout);
      break;
    case Operation::kGradWeight:
      out = MakeTensor(*s.w_shape, s.dtypes.w, s.layout);
      break;
    case Operation::kGradPosWeight:
      out = MakeTensor(*s.p_shape, s.dtypes.p, s.layout);
      break;
    case Operation::kGradAll:
    case Operation::kLossAndAllGradients:
      throw std::invalid_argument("MakeOutput makes the output of a single-output operation");
  }
  out->FillStorage(kSentinel);
  return out;
}

std::vector<double> ExpectedOutput(Operation op, const RefResult &reference) {
  switch (op) {
    case Operation::kForward:
      return reference.loss;
    case Operation::kGradSelf:
      return reference.dx;
    case Operation::kGradTarget:
      return reference.dy;
    case Operation::kGradWeight:
      return reference.dw;
    case Operation::kGradPosWeight:
      return reference.dp;
    case Operation::kGradAll:
    case Operation::kLossAndAllGradients:
      break;
  }
  throw std::invalid_argument("ExpectedOutput gives the output of a single-output operation");
}

namespace {

// Relative tolerance: float32 arithmetic for float32 outputs, else about two units in the last place of the
// output format (rounding of the result plus the float32 error before it).
double RelativeTolerance(aclDataType dtype) {
  switch (dtype) {
    case ACL_FLOAT16:
      return 1.5e-3;
    case ACL_BF16:
      return 1e-2;
    default:
      return 1e-5;
  }
}

bool Matches(double actual, double expected, double tolerance) {
  if (std::isnan(expected) || std::isinf(expected)) {
    return std::isnan(expected) ? std::isnan(actual) : actual == expected;
  }
  return std::fabs(actual - expected) <= tolerance;
}

}  // namespace

bool Close(const std::vector<double> &actual, const std::vector<double> &expected, aclDataType dtype,
           std::string *why) {
  if (actual.size() != expected.size()) {
    *why = "got " + std::to_string(actual.size()) + " values, expected " + std::to_string(expected.size());
    return false;
  }
  double largest = 0.0;
  for (double value : expected) {
    largest = std::isfinite(value) ? std::max(largest, std::fabs(value)) : largest;
  }
  const double rtol = RelativeTolerance(dtype);
  for (size_t i = 0; i < actual.size(); ++i) {
    const double tolerance = rtol * std::fabs(expected[i]) + rtol * largest + 1e-30;
    if (!Matches(actual[i], expected[i], tolerance)) {
      *why = "element " + std::to_string(i) + ": got " + NumberText(actual[i]) + ", expected " +
             NumberText(expected[i]) + " (tolerance " + NumberText(tolerance) + ")";
      return false;
    }
  }
  return true;
}

void ExpectScenarioMatchesReference(Operation op, const Scenario &scenario) {
  ScenarioInputs inputs(scenario);
  auto out = MakeOutput(op, scenario);
  const aclnnStatus status = RunOp(op, inputs.Tensors(out->get()), scenario.reduction);
  std::string why;
  if (status != ACLNN_SUCCESS) {
    why = "status " + std::to_string(status) + ": " + aclGetRecentErrMsg();
  } else if (Close(out->Values(), ExpectedOutput(op, Reference(inputs.reference())), out->dtype(), &why)) {
    for (double untouched : out->ValuesOutsideView()) {
      if (untouched != kSentinel) {
        why = "wrote outside the output view";
      }
    }
  }
  EXPECT_MSG(why.empty(), Describe(op, scenario) + ": " + why);
}

namespace {

std::unique_ptr<HostTensor> Float32Tensor(const RefArray &array) {
  auto tensor = std::make_unique<HostTensor>(array.shape, ACL_FLOAT);
  tensor->Set(array.values);
  return tensor;
}

std::unique_ptr<HostTensor> OptionalFloat32Tensor(const std::optional<RefArray> &array) {
  return array ? Float32Tensor(*array) : nullptr;
}

Shape OutputShape(Operation op, const Float32Inputs &inputs, int64_t reduction) {
  switch (op) {
    case Operation::kForward:
      return reduction == 0 ? inputs.x.shape : Shape{};
    case Operation::kGradWeight:
      return inputs.w->shape;
    case Operation::kGradPosWeight:
      return inputs.p->shape;
    default:
      return inputs.x.shape;
  }
}

}  // namespace

std::vector<double> RunFloat32(Operation op, const Float32Inputs &inputs, int64_t reduction, aclnnStatus *status) {
  auto x = Float32Tensor(inputs.x);
  auto y = Float32Tensor(inputs.y);
  auto w = OptionalFloat32Tensor(inputs.w);
  auto p = OptionalFloat32Tensor(inputs.p);
  auto g = inputs.g ? Float32Tensor(*inputs.g) : Float32Tensor(RefArray{{}, {1.0}});
  HostTensor out(OutputShape(op, inputs, reduction), ACL_FLOAT);
  const OpTensors tensors{g->get(), x->get(), y->get(), w ? w->get() : nullptr, p ? p->get() : nullptr, out.get()};
  const aclnnStatus result = RunOp(op, tensors, reduction);
  if (status != nullptr) {
    *status = result;
  }
  return result == ACLNN_SUCCESS ? out.Values() : std::vector<double>{};
}

Float32Inputs MindSporeDocExample() {
  Float32Inputs inputs;
  inputs.x = RefArray{{2, 3}, {-0.8, 1.2, 0.7, -0.1, -0.4, 0.7}};
  inputs.y = RefArray{{2, 3}, {0.3, 0.8, 1.2, -0.6, 0.1, 2.2}};
  inputs.w = RefArray{{3}, {1.0, 1.0, 1.0}};
  inputs.p = RefArray{{3}, {1.0, 1.0, 1.0}};
  return inputs;
}

void ExpectValidCallStillRight() {
  const std::vector<double> mean = RunFloat32(Operation::kForward, MindSporeDocExample(), 1);
  EXPECT_MSG(mean.size() == 1 && std::fabs(mean[0] - kMindSporeDocMean) < 1e-6,
             "a valid call after an error returned " + (mean.empty() ? std::string("an error") : NumberText(mean[0])));
}

}  // namespace test
