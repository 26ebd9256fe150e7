// One fuzz case: a random call of one of the five single-output two-phase operations, with random tensor
// descriptors, some of them broken on purpose, and a random way of using phase 2 (drawn by case_builder.h); in
// about one case in five each, also such a call of a fused operation, each drawn from a seed of its own:
// aclnnBinaryCrossEntropyWithLogitsAllBackward (two to four outputs) and
// aclnnBinaryCrossEntropyWithLogitsAndAllGradients (the loss and two to four gradients for a
// gradOutput of 1). The case predicts every status from docs/contract.md §10 Errors (not from the adapter), checks
// each status and error message, checks that no buffer changes except the output views of a successful run, and
// compares the results of valid calls with the float64 reference of tests/native; those of the fused operations
// also bit for bit with separate calls: AllBackward's with the single gradients, the loss with every gradient's with
// the forward and AllBackward with a gradOutput of 1. Each case runs on one ISA kernel of the machine, drawn from its
// seed.
#ifndef MS_BCEWL_TESTS_FUZZ_FUZZ_CASE_H_
#define MS_BCEWL_TESTS_FUZZ_FUZZ_CASE_H_

#include <cstdint>
#include <map>
#include <string>

namespace fuzz {

struct Stats {
  uint64_t cases = 0;
  std::map<std::string, uint64_t> cases_by_isa;  // the random cases by the ISA kernels they ran on
  uint64_t calls = 0;                            // calls of the API under test
  std::map<int, uint64_t> statuses;  // status -> calls (aclCreateTensor: 0 created, else the message's code)
  std::map<std::string, std::map<int, uint64_t>> statuses_by_api;
  uint64_t elements_compared = 0;                               // output elements compared with the reference
  std::map<std::string, uint64_t> elements_compared_by_op;      // by OpApi::name
  std::map<std::string, uint64_t> runs_compared_bitwise_by_op;  // fused operations' runs against separate calls
  uint64_t runs_not_compared = 0;  // successful runs with a non-finite input or an overlapping output
  uint64_t mismatches = 0;         // results off the reference, or writes outside the output view
  uint64_t unexpected = 0;         // a status, message or handle other than the predicted one
};

// Builds case `index` of the campaign `seed` (a pair always gives the same case), runs it and adds its calls and
// findings to stats. Each finding is printed with the case and the command that replays it.
void RunCase(uint64_t seed, uint64_t index, Stats *stats);

}  // namespace fuzz

#endif  // MS_BCEWL_TESTS_FUZZ_FUZZ_CASE_H_
