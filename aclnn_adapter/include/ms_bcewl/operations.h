// The operations of the aclnn API (docs/contract.md §15) and their names: the one list. The api's traits, the
// MindSpore entries and their Python table, the native tests and the fuzzer all take their operations from it.
#ifndef MS_BCEWL_OPERATIONS_H_
#define MS_BCEWL_OPERATIONS_H_

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

// The operation of a name in the list; evaluated at compile time where the name is a literal.
constexpr Operation OperationNamed(const char *name) {
  for (int index = 0; index < kOperationCount; ++index) {
    const char *known = kOperationInfo[index].name;
    int at = 0;
    while (known[at] != '\0' && known[at] == name[at]) ++at;
    if (known[at] == name[at]) return static_cast<Operation>(index);
  }
  throw "not an operation of MS_BCEWL_FOR_EACH_OPERATION";
}

}  // namespace ms_bcewl

#endif  // MS_BCEWL_OPERATIONS_H_
