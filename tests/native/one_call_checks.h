// Checks of the operations that give several outputs from one call (the fused backwards; the loss with every
// gradient) against the single operations that give each of those outputs.
#ifndef MS_BCEWL_TESTS_NATIVE_ONE_CALL_CHECKS_H_
#define MS_BCEWL_TESTS_NATIVE_ONE_CALL_CHECKS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "op_runner.h"

namespace test {

// Whether every storage element outside out's view still holds kSentinel.
bool UntouchedOutsideView(const HostTensor &out);

// The call under test on a scenario's inputs: outputs[k] takes the output of ops[k].
using OneCall =
    std::function<aclnnStatus(const Scenario &scenario, const ScenarioInputs &inputs, const std::vector<Operation> &ops,
                              const std::vector<std::unique_ptr<HostTensor>> &outputs)>;

// For every ISA the machine has and every scenario: the single operations ops_of(scenario) once, on the scenario's
// inputs after prepare(&inputs), and the call with 1, 2 and 4 threads: each of its outputs must have the bytes of
// the single operation's, with nothing written outside its view. label names the call in failures.
void ExpectOneCallEqualsSingleOperations(const std::vector<Scenario> &scenarios,
                                         const std::function<std::vector<Operation>(const Scenario &)> &ops_of,
                                         const std::function<void(ScenarioInputs *)> &prepare, const OneCall &call,
                                         const std::string &label);

}  // namespace test

#endif  // MS_BCEWL_TESTS_NATIVE_ONE_CALL_CHECKS_H_
