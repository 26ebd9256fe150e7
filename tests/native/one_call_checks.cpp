#include "one_call_checks.h"

#include "kernel/kernel_testing.h"
#include "test_harness.h"

namespace test {
namespace {

using ms_bcewl::kernel::Isa;

const ms_bcewl::kernel::KernelTestingHooks &Hooks() { return *msBcewlKernelTestingHooks(); }

std::vector<std::unique_ptr<HostTensor>> OutputsFor(const std::vector<Operation> &ops, const Scenario &scenario) {
  std::vector<std::unique_ptr<HostTensor>> outputs;
  for (Operation op : ops) {
    outputs.push_back(MakeOutput(op, scenario));
  }
  return outputs;
}

}  // namespace

bool UntouchedOutsideView(const HostTensor &out) {
  for (double value : out.ValuesOutsideView()) {
    if (value != kSentinel) {
      return false;
    }
  }
  return true;
}

void ExpectOneCallEqualsSingleOperations(const std::vector<Scenario> &scenarios,
                                         const std::function<std::vector<Operation>(const Scenario &)> &ops_of,
                                         const std::function<void(ScenarioInputs *)> &prepare, const OneCall &call,
                                         const std::string &label) {
  for (Isa isa : ms_bcewl::kernel::kIsas) {
    if (!Hooks().force_isa(isa)) {
      continue;
    }
    for (const Scenario &scenario : scenarios) {
      ScenarioInputs inputs(scenario);
      prepare(&inputs);
      const std::vector<Operation> ops = ops_of(scenario);
      const std::string name =
          Describe(ops[0], scenario) + " " + label + ", isa " + ms_bcewl::kernel::kIsaNames[static_cast<int>(isa)];
      Hooks().set_threads(0);
      const std::vector<std::unique_ptr<HostTensor>> single = OutputsFor(ops, scenario);
      for (size_t k = 0; k < ops.size(); ++k) {
        EXPECT_MSG(RunOp(ops[k], inputs.Tensors(single[k]->get()), scenario.reduction) == ACLNN_SUCCESS,
                   name + ": " + OperationName(ops[k]));
      }
      for (int threads : {1, 2, 4}) {
        Hooks().set_threads(threads);
        const std::string setting = name + ", " + std::to_string(threads) + " threads";
        const std::vector<std::unique_ptr<HostTensor>> together = OutputsFor(ops, scenario);
        EXPECT_MSG(call(scenario, inputs, ops, together) == ACLNN_SUCCESS, setting + ": " + aclGetRecentErrMsg());
        for (size_t k = 0; k < ops.size(); ++k) {
          EXPECT_MSG(together[k]->ViewBytes() == single[k]->ViewBytes(),
                     setting + ": " + OperationName(ops[k]) + " differs from the single operation's");
          EXPECT_MSG(UntouchedOutsideView(*together[k]),
                     setting + ": wrote outside the view of " + OperationName(ops[k]));
        }
      }
    }
  }
  Hooks().set_threads(0);
  Hooks().automatic_isa();
}

}  // namespace test
