#include "api/argument_checks.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "ms_bcewl/operations.h"
#include "runtime/host_runtime.h"

namespace ms_bcewl {
namespace {

constexpr const char *kLossName = "out";  // the loss output's name in the C signatures

struct NamedTensor {
  const char *name;
  const aclTensor *tensor;
  bool required;
  bool broadcasts_to_self;
};

// Every tensor argument in the order of the C signature.
std::vector<NamedTensor> NamedTensors(const OpArguments &arguments) {
  std::vector<NamedTensor> named;
  if (TakesGradOutput(arguments.operation)) {
    named.push_back({"gradOutput", arguments.grad_output, true, true});
  }
  const bool weight_required = arguments.operation == Operation::kGradWeight;
  const bool pos_weight_required = arguments.operation == Operation::kGradPosWeight;
  named.push_back({"self", arguments.self, true, false});
  named.push_back({"target", arguments.target, true, false});
  named.push_back({weight_required ? "weight" : "weightOptional", arguments.weight, weight_required, true});
  named.push_back(
      {pos_weight_required ? "posWeight" : "posWeightOptional", arguments.pos_weight, pos_weight_required, true});
  for (const OutputRef &output : Outputs(arguments)) {
    named.push_back({output.name, output.tensor, true, false});
  }
  return named;
}

std::string ShapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    text += (i == 0 ? "" : ",") + std::to_string(shape[i]);
  }
  return text + "]";
}

std::string DtypeText(aclDataType dtype) {
  switch (dtype) {
    case ACL_FLOAT:
      return "FLOAT";
    case ACL_FLOAT16:
      return "FLOAT16";
    case ACL_BF16:
      return "BF16";
    case ACL_DOUBLE:
      return "DOUBLE";
    case ACL_INT32:
      return "INT32";
    case ACL_INT64:
      return "INT64";
    default:
      return "dtype " + std::to_string(static_cast<int>(dtype));
  }
}

std::string Describe(const NamedTensor &named) {
  return std::string(named.name) + " (shape " + ShapeText(named.tensor->view_shape) + ", " +
         DtypeText(named.tensor->dtype) + ")";
}

aclnnStatus CheckNotNull(const OpArguments &arguments, const std::vector<NamedTensor> &named,
                         const uint64_t *workspace_size, aclOpExecutor *const *executor) {
  const char *api = InfoOf(arguments.operation).plan_api;
  for (const NamedTensor &entry : named) {
    if (entry.required && entry.tensor == nullptr) {
      return Fail(api, ACLNN_ERR_PARAM_NULLPTR, std::string(entry.name) + " is null; expected a tensor.");
    }
  }
  if (workspace_size == nullptr || executor == nullptr) {
    return Fail(api, ACLNN_ERR_PARAM_NULLPTR,
                std::string(workspace_size == nullptr ? "workspaceSize" : "executor") +
                    " is null; expected a pointer to receive the result.");
  }
  for (const NamedTensor &entry : named) {
    if (entry.tensor != nullptr && entry.tensor->numel > 0 && entry.tensor->data == nullptr) {
      return Fail(api, ACLNN_ERR_PARAM_NULLPTR, Describe(entry) + " has elements but no data pointer.");
    }
  }
  return ACLNN_SUCCESS;
}

// kGradAll, kLossAndAllGradients: a weight gradient's output is given exactly when its input is (a missing one is a
// null output, which CheckNotNull reports).
aclnnStatus CheckNoGradientWithoutItsInput(const OpArguments &arguments) {
  if (!GivesAllGradients(arguments.operation)) {
    return ACLNN_SUCCESS;
  }
  const struct {
    const aclTensor *input;
    const aclTensor *gradient;
    const char *input_name;
    const char *gradient_name;
  } pairs[] = {{arguments.weight, arguments.outputs.grad_weight, "weightOptional", "gradWeightOptional"},
               {arguments.pos_weight, arguments.outputs.grad_pos_weight, "posWeightOptional", "gradPosWeightOptional"}};
  for (const auto &pair : pairs) {
    if (pair.input == nullptr && pair.gradient != nullptr) {
      return Fail(InfoOf(arguments.operation).plan_api, ACLNN_ERR_PARAM_INVALID,
                  std::string(pair.gradient_name) + " is given but " + pair.input_name +
                      " is null: there is no such input to differentiate; pass null for both.");
    }
  }
  return ACLNN_SUCCESS;
}

bool IsSupportedDtype(aclDataType dtype) {
#define MS_BCEWL_IS_DTYPE(ms_name, type_id, acl_dtype, ...) dtype == acl_dtype ||
  return MS_BCEWL_FOR_EACH_DTYPE(MS_BCEWL_IS_DTYPE, ) false;
#undef MS_BCEWL_IS_DTYPE
}

aclnnStatus CheckDtypeValid(const OpArguments &arguments, const std::vector<NamedTensor> &named) {
  const char *api = InfoOf(arguments.operation).plan_api;
  for (const NamedTensor &entry : named) {
    if (entry.tensor != nullptr && !IsSupportedDtype(entry.tensor->dtype)) {
      return Fail(api, ACLNN_ERR_PARAM_INVALID,
                  Describe(entry) +
                      " has an unsupported dtype; expected FLOAT, "
                      "FLOAT16 or BF16.");
    }
  }
  for (const OutputRef &output : Outputs(arguments)) {
    if (output.tensor->dtype != output.owner->dtype) {
      return Fail(api, ACLNN_ERR_PARAM_INVALID,
                  std::string(output.name) + " has dtype " + DtypeText(output.tensor->dtype) +
                      " but must have the dtype of " + output.owner_name + ", " + DtypeText(output.owner->dtype) + ".");
    }
  }
  return ACLNN_SUCCESS;
}

aclnnStatus CheckReduction(const OpArguments &arguments) {
  if (arguments.reduction < kReductionNone || arguments.reduction > kReductionSum) {
    return Fail(InfoOf(arguments.operation).plan_api, ACLNN_ERR_PARAM_INVALID,
                "reduction " + std::to_string(arguments.reduction) + " is not in [0, 2] (0 none, 1 mean, 2 sum).");
  }
  return ACLNN_SUCCESS;
}

// numpy broadcasting with trailing dims aligned, where the result must be self's shape: no extra dims, and
// each dim equal to self's or 1.
bool BroadcastsWithoutEnlarging(const ShapeOperand &operand, const ShapeOperand &self) {
  if (operand.rank > self.rank) {
    return false;
  }
  const size_t lead = self.rank - operand.rank;
  for (size_t dim = 0; dim < operand.rank; ++dim) {
    if (operand.dims[dim] != 1 && operand.dims[dim] != self.dims[lead + dim]) {
      return false;
    }
  }
  return true;
}

bool SameShape(const ShapeOperand &a, const ShapeOperand &b) {
  return a.rank == b.rank && std::equal(a.dims, a.dims + a.rank, b.dims);
}

bool IsEmpty(const ShapeOperand &operand) {
  return std::find(operand.dims, operand.dims + operand.rank, 0) != operand.dims + operand.rank;
}

// The loss output where it is reduced (mean, sum), else null.
const aclTensor *ReducedLoss(const OpArguments &arguments) {
  return arguments.reduction == kReductionNone ? nullptr : arguments.outputs.loss;
}

// kGradAll's outputs, after the loss for kLossAndAllGradients; a weight gradient where its input is given.
std::vector<OutputRef> AllGradientsOutputs(const OpArguments &arguments) {
  const OpOutputs &out = arguments.outputs;
  std::vector<OutputRef> outputs;
  if (arguments.operation == Operation::kLossAndAllGradients) {
    outputs.push_back({kLossName, out.loss, "target", arguments.target});
  }
  outputs.push_back({"gradSelf", out.grad_self, "self", arguments.self});
  outputs.push_back({"gradTarget", out.grad_target, "target", arguments.target});
  if (arguments.weight != nullptr) {
    outputs.push_back({"gradWeightOptional", out.grad_weight, "weightOptional", arguments.weight});
  }
  if (arguments.pos_weight != nullptr) {
    outputs.push_back({"gradPosWeightOptional", out.grad_pos_weight, "posWeightOptional", arguments.pos_weight});
  }
  return outputs;
}

aclnnStatus CheckOutputShape(const OpArguments &arguments) {
  const char *api = InfoOf(arguments.operation).plan_api;
  const aclTensor *reduced_loss = ReducedLoss(arguments);
  if (reduced_loss != nullptr && !reduced_loss->view_shape.empty() &&
      reduced_loss->view_shape != std::vector<int64_t>{1}) {
    return Fail(api, ACLNN_ERR_PARAM_INVALID,
                std::string(kLossName) + " has shape " + ShapeText(reduced_loss->view_shape) + " but reduction " +
                    (arguments.reduction == kReductionMean ? "mean" : "sum") + " needs shape [] or [1].");
  }
  for (const OutputRef &output : Outputs(arguments)) {
    if (output.tensor == reduced_loss) {
      continue;
    }
    if (output.tensor->view_shape != output.owner->view_shape) {
      return Fail(api, ACLNN_ERR_PARAM_INVALID,
                  std::string(output.name) + " has shape " + ShapeText(output.tensor->view_shape) +
                      " but must have the shape of " + output.owner_name + ", " + ShapeText(output.owner->view_shape) +
                      ".");
    }
  }
  return ACLNN_SUCCESS;
}

// The sentence of a broken shape rule in the words of the C API.
aclnnStatus RefuseShape(const OpArguments &arguments, const BrokenShapeRule &broken, const NamedTensor &named) {
  const char *api = InfoOf(arguments.operation).plan_api;
  const std::vector<int64_t> &self_shape = arguments.self->view_shape;
  const std::vector<int64_t> &shape = named.tensor->view_shape;
  switch (broken.rule) {
    case ShapeRule::kRank:
      return Fail(api, ACLNN_ERR_PARAM_INVALID,
                  Describe(named) + " has " + std::to_string(shape.size()) + " dims; at most " +
                      std::to_string(kMaxRank) + " are supported.");
    case ShapeRule::kSameShape:
      return Fail(api, ACLNN_ERR_PARAM_INVALID,
                  "self shape " + ShapeText(self_shape) + " and target shape " + ShapeText(shape) + " must be equal.");
    case ShapeRule::kBroadcast:
      break;
  }
  return Fail(api, ACLNN_ERR_PARAM_INVALID,
              std::string("the shape of ") + named.name + " " + ShapeText(shape) +
                  " cannot broadcast to the shape of self " + ShapeText(self_shape) +
                  " (trailing dims aligned, each equal or 1, no more dims than self).");
}

// As in CANN, an empty self skips the broadcast checks: nothing is read, and the result is fixed.
aclnnStatus CheckShape(const OpArguments &arguments, const std::vector<NamedTensor> &named) {
  std::array<ShapeOperand, kMaxTensors> operands{};
  std::array<const NamedTensor *, kMaxTensors> of{};
  size_t count = 0;
  for (const NamedTensor &entry : named) {
    if (entry.tensor != nullptr && count < kMaxTensors) {
      const std::vector<int64_t> &shape = entry.tensor->view_shape;
      operands[count] = {shape.data(), shape.size(), entry.broadcasts_to_self};
      of[count++] = &entry;
    }
  }
  const size_t self = TakesGradOutput(arguments.operation) ? 1 : 0;  // the required tensors lead, all present
  const std::optional<BrokenShapeRule> broken = FirstBrokenShapeRule({operands.data(), count, self, self + 1, true});
  return broken ? RefuseShape(arguments, *broken, *of[broken->operand]) : CheckOutputShape(arguments);
}

}  // namespace

std::optional<BrokenShapeRule> FirstBrokenShapeRule(const ShapeCheck &check) {
  for (size_t k = 0; k < check.count; ++k) {
    if (check.operands[k].rank > kMaxRank) {
      return BrokenShapeRule{ShapeRule::kRank, k};
    }
  }
  const ShapeOperand &self = check.operands[check.self];
  if (!SameShape(check.operands[check.target], self)) {
    return BrokenShapeRule{ShapeRule::kSameShape, check.target};
  }
  if (check.empty_self_skips_broadcasts && IsEmpty(self)) {
    return std::nullopt;
  }
  for (size_t k = 0; k < check.count; ++k) {
    if (check.operands[k].broadcasts && !BroadcastsWithoutEnlarging(check.operands[k], self)) {
      return BrokenShapeRule{ShapeRule::kBroadcast, k};
    }
  }
  return std::nullopt;
}

std::vector<OutputRef> Outputs(const OpArguments &arguments) {
  const OpOutputs &out = arguments.outputs;
  switch (arguments.operation) {
    case Operation::kForward:
      return {{kLossName, out.loss, "target", arguments.target}};
    case Operation::kGradSelf:
      return {{"out", out.grad_self, "self", arguments.self}};
    case Operation::kGradTarget:
      return {{"gradTarget", out.grad_target, "target", arguments.target}};
    case Operation::kGradWeight:
      return {{"gradWeight", out.grad_weight, "weight", arguments.weight}};
    case Operation::kGradPosWeight:
      return {{"gradPosWeight", out.grad_pos_weight, "posWeight", arguments.pos_weight}};
    case Operation::kGradAll:
    case Operation::kLossAndAllGradients:
      break;
  }
  return AllGradientsOutputs(arguments);
}

aclnnStatus CheckArguments(const OpArguments &arguments, const uint64_t *workspace_size, aclOpExecutor *const *executor,
                           ShapeRules shape_rules) {
  const std::vector<NamedTensor> named = NamedTensors(arguments);
  aclnnStatus status = CheckNotNull(arguments, named, workspace_size, executor);
  if (status == ACLNN_SUCCESS) {
    status = CheckNoGradientWithoutItsInput(arguments);
  }
  if (status == ACLNN_SUCCESS) {
    status = CheckDtypeValid(arguments, named);
  }
  if (status == ACLNN_SUCCESS) {
    status = CheckReduction(arguments);
  }
  if (status == ACLNN_SUCCESS) {
    status = shape_rules == ShapeRules::kCheck ? CheckShape(arguments, named) : CheckOutputShape(arguments);
  }
  return status;
}

}  // namespace ms_bcewl
