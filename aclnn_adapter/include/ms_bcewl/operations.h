// The op's vocabulary, each list once: the operations of the aclnn API (docs/contract.md §15) and their names, the
// variants (which optional inputs a call passes), the dtypes computed in, and the arguments of one call with its two
// phases. The api, the MindSpore entries and their Python table, the native tests and the fuzzer all read them.
#ifndef MS_BCEWL_OPERATIONS_H_
#define MS_BCEWL_OPERATIONS_H_

#include <cstdint>

#include "aclnn/acl_meta.h"

// X(name, enumerator, aclnn function, takes gradOutput, gives every gradient, ...) for each operation; arguments
// after X pass through to every X. The aclnn function's phase 1 is its name followed by GetWorkspaceSize.
#define MS_BCEWL_FOR_EACH_OPERATION(X, ...)                                                                        \
  X(forward, kForward, aclnnBinaryCrossEntropyWithLogits, false, false, __VA_ARGS__)                               \
  X(grad_self, kGradSelf, aclnnBinaryCrossEntropyWithLogitsBackward, true, false, __VA_ARGS__)                     \
  X(grad_target, kGradTarget, aclnnBinaryCrossEntropyWithLogitsTargetBackward, true, false, __VA_ARGS__)           \
  X(grad_weight, kGradWeight, aclnnBinaryCrossEntropyWithLogitsWeightBackward, true, false, __VA_ARGS__)           \
  X(grad_pos_weight, kGradPosWeight, aclnnBinaryCrossEntropyWithLogitsPosWeightBackward, true, false, __VA_ARGS__) \
  X(grad_all, kGradAll, aclnnBinaryCrossEntropyWithLogitsAllBackward, true, true, __VA_ARGS__)                     \
  X(loss_and_all_gradients, kLossAndAllGradients, aclnnBinaryCrossEntropyWithLogitsAndAllGradients, false, true,   \
    __VA_ARGS__)

namespace ms_bcewl {

#define MS_BCEWL_OPERATION_ENUMERATOR(name, enumerator, ...) enumerator,
enum class Operation { MS_BCEWL_FOR_EACH_OPERATION(MS_BCEWL_OPERATION_ENUMERATOR, ) };
#undef MS_BCEWL_OPERATION_ENUMERATOR

#define MS_BCEWL_OPERATION_ONE(...) +1
constexpr int kOperationCount = 0 MS_BCEWL_FOR_EACH_OPERATION(MS_BCEWL_OPERATION_ONE, );
#undef MS_BCEWL_OPERATION_ONE

struct OperationInfo {
  const char *name;        // as in the MindSpore entry names: forward, grad_self, ...
  const char *plan_api;    // aclnn phase 1
  const char *run_api;     // aclnn phase 2
  bool takes_grad_output;  // the forward and the loss with every gradient (for a gradOutput of 1) take none
  bool gives_all_gradients;
};

#define MS_BCEWL_OPERATION_INFO(name, enumerator, function, takes_grad_output, gives_all_gradients, ...) \
  {#name, #function "GetWorkspaceSize", #function, takes_grad_output, gives_all_gradients},
inline constexpr OperationInfo kOperationInfo[] = {MS_BCEWL_FOR_EACH_OPERATION(MS_BCEWL_OPERATION_INFO, )};
#undef MS_BCEWL_OPERATION_INFO

constexpr const OperationInfo &InfoOf(Operation operation) { return kOperationInfo[static_cast<int>(operation)]; }
constexpr const char *OperationName(Operation operation) { return InfoOf(operation).name; }
constexpr bool TakesGradOutput(Operation operation) { return InfoOf(operation).takes_grad_output; }
constexpr bool GivesAllGradients(Operation operation) { return InfoOf(operation).gives_all_gradients; }

// X(name, enumerator, has weight, has pos_weight, ...) for each variant; arguments after X pass through to every X.
#define MS_BCEWL_FOR_EACH_VARIANT(X, ...)     \
  X(plain, kPlain, false, false, __VA_ARGS__) \
  X(w, kW, true, false, __VA_ARGS__)          \
  X(p, kP, false, true, __VA_ARGS__)          \
  X(wp, kWp, true, true, __VA_ARGS__)

#define MS_BCEWL_VARIANT_ENUMERATOR(name, enumerator, ...) enumerator,
enum class Variant { MS_BCEWL_FOR_EACH_VARIANT(MS_BCEWL_VARIANT_ENUMERATOR, ) };
#undef MS_BCEWL_VARIANT_ENUMERATOR

struct VariantInfo {
  const char *name;  // as in the MindSpore entry names: plain, w, p, wp
  bool has_weight;
  bool has_pos_weight;
};

#define MS_BCEWL_VARIANT_INFO(name, enumerator, has_weight, has_pos_weight, ...) {#name, has_weight, has_pos_weight},
inline constexpr VariantInfo kVariantInfo[] = {MS_BCEWL_FOR_EACH_VARIANT(MS_BCEWL_VARIANT_INFO, )};
#undef MS_BCEWL_VARIANT_INFO

constexpr const VariantInfo &InfoOf(Variant variant) { return kVariantInfo[static_cast<int>(variant)]; }
constexpr bool HasWeight(Variant variant) { return InfoOf(variant).has_weight; }
constexpr bool HasPosWeight(Variant variant) { return InfoOf(variant).has_pos_weight; }

constexpr Variant VariantWith(bool has_weight, bool has_pos_weight) {
  for (const VariantInfo &info : kVariantInfo) {
    if (info.has_weight == has_weight && info.has_pos_weight == has_pos_weight) {
      return static_cast<Variant>(&info - kVariantInfo);
    }
  }
  throw "every pair of has_weight and has_pos_weight is a variant";
}

// The dtypes computed in (docs/contract.md §5) as each layer names them: X(MindSpore name, MindSpore TypeId
// enumerator, aclDataType, kernel::DType enumerator, ...) for each; arguments after X pass through to every X.
#define MS_BCEWL_FOR_EACH_DTYPE(X, ...)                              \
  X(float16, kNumberTypeFloat16, ACL_FLOAT16, kFloat16, __VA_ARGS__) \
  X(float32, kNumberTypeFloat32, ACL_FLOAT, kFloat32, __VA_ARGS__)   \
  X(bfloat16, kNumberTypeBFloat16, ACL_BF16, kBFloat16, __VA_ARGS__)

// The outputs of an operation by what they hold. A single-output operation sets its one; kGradAll sets grad_self,
// grad_target and the weight gradients whose inputs are given; kLossAndAllGradients also sets loss.
struct OpOutputs {
  aclTensor *loss = nullptr;
  aclTensor *grad_self = nullptr;
  aclTensor *grad_target = nullptr;
  aclTensor *grad_weight = nullptr;
  aclTensor *grad_pos_weight = nullptr;
};

// The arguments of one call of any operation, as its phase 1 takes them; grad_output is null where !TakesGradOutput.
struct OpArguments {
  Operation operation;
  const aclTensor *grad_output;
  const aclTensor *self;
  const aclTensor *target;
  const aclTensor *weight;
  const aclTensor *pos_weight;
  int64_t reduction;
  OpOutputs outputs;
};

// The outputs of an operation in the order of its C signature (docs/contract.md §15): its one output, or the loss
// (kLossAndAllGradients), grad_self, grad_target, then grad_weight and grad_pos_weight where the variant has their
// inputs.
struct OutputOrder {
  aclTensor *OpOutputs::*slots[5];
  int count;
};

constexpr OutputOrder OutputOrderOf(Operation operation, Variant variant) {
  switch (operation) {
    case Operation::kForward:
      return {{&OpOutputs::loss}, 1};
    case Operation::kGradSelf:
      return {{&OpOutputs::grad_self}, 1};
    case Operation::kGradTarget:
      return {{&OpOutputs::grad_target}, 1};
    case Operation::kGradWeight:
      return {{&OpOutputs::grad_weight}, 1};
    case Operation::kGradPosWeight:
      return {{&OpOutputs::grad_pos_weight}, 1};
    case Operation::kGradAll:
    case Operation::kLossAndAllGradients:
      break;
  }
  OutputOrder order{{}, 0};
  if (operation == Operation::kLossAndAllGradients) order.slots[order.count++] = &OpOutputs::loss;
  order.slots[order.count++] = &OpOutputs::grad_self;
  order.slots[order.count++] = &OpOutputs::grad_target;
  if (HasWeight(variant)) order.slots[order.count++] = &OpOutputs::grad_weight;
  if (HasPosWeight(variant)) order.slots[order.count++] = &OpOutputs::grad_pos_weight;
  return order;
}

// The tensors of one call: [grad_output,] self, target, [weight,] [pos_weight], then the outputs.
constexpr int TensorCount(Operation operation, Variant variant) {
  return (TakesGradOutput(operation) ? 1 : 0) + 2 + (HasWeight(variant) ? 1 : 0) + (HasPosWeight(variant) ? 1 : 0) +
         OutputOrderOf(operation, variant).count;
}

constexpr int MostTensors() {
  int most = 0;
  for (int operation = 0; operation < kOperationCount; ++operation) {
    for (const VariantInfo &variant : kVariantInfo) {
      const int count = TensorCount(static_cast<Operation>(operation), static_cast<Variant>(&variant - kVariantInfo));
      most = count > most ? count : most;
    }
  }
  return most;
}

// The most tensors one call passes, inputs and outputs.
inline constexpr int kMaxTensors = MostTensors();

}  // namespace ms_bcewl

extern "C" {

// The two phases of any operation (docs/contract.md §15), for the package's own MindSpore entries: phase 1 checks
// every argument in CANN's order and plans the call; phase 2 consumes the executor and runs it. Private to the
// package, like the AOT entries. C names: the library exports no C++ symbol, and the pyboost module, compiled apart,
// links these by name.
ACL_FUNC_VISIBILITY aclnnStatus msBcewlPlanOperation(const ms_bcewl::OpArguments *arguments, uint64_t *workspaceSize,
                                                     aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus msBcewlRunOperation(ms_bcewl::Operation operation, void *workspace,
                                                    uint64_t workspaceSize, aclOpExecutor *executor,
                                                    aclrtStream stream);
}

#endif  // MS_BCEWL_OPERATIONS_H_
