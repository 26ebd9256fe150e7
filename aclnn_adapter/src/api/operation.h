// The seven two-phase operations (forward loss; the gradients with respect to self, target, weight and pos_weight;
// those of every input together; the loss with those of every input for a gradOutput of 1) share one argument
// record (OpArguments, include/ms_bcewl/operations.h), one check sequence (argument_checks.cpp) and one executor
// (operation.cpp); the exported entry points (bcewl_entry_points.cpp) only name their Operation and outputs.
#ifndef MS_BCEWL_API_OPERATION_H_
#define MS_BCEWL_API_OPERATION_H_

#include <cstdint>

#include "aclnn/acl_meta.h"
#include "kernel/bcewl_kernel.h"
#include "ms_bcewl/operations.h"
#include "ms_bcewl/reductions.h"

namespace ms_bcewl {

// Who checks the shape rules of argument_checks.h: phase 1 (kCheck), or its caller inside the library, which has
// checked them already over every input and grad_output, without CANN's exemption for an empty self (the GRAPH
// entries, which word a refusal as the Python API does), so that the rules run once per call.
enum class ShapeRules { kCheck, kCheckedByCaller };

// Phase 1: checks every argument in CANN's order (docs/contract.md §10 Errors), then plans the work into an executor.
aclnnStatus PlanOperation(const OpArguments &arguments, uint64_t *workspace_size, aclOpExecutor **executor,
                          ShapeRules shape_rules = ShapeRules::kCheck);

// Phase 2: consumes a live executor planned for operation, whatever the outcome, and runs it.
aclnnStatus RunOperation(Operation operation, void *workspace, uint64_t workspace_size, aclOpExecutor *executor,
                         aclrtStream stream);

}  // namespace ms_bcewl

#endif  // MS_BCEWL_API_OPERATION_H_
