// The registry of MindSpore AOT entry points, one row each: ROW(entry, operation, third input). A row has one entry
// per reduction, ms_bcewl_<entry>_<reduction> (docs/architecture.md, "The registry"), which takes input and target,
// then the weights its caller passed: none, the row's third input alone (weight or pos_weight; none: the row takes
// no call with one weight) or both. Its caller passes a 0-d 1 for an absent weight or pos_weight where the row takes
// no call of its own variant. graph_entries.cpp defines the entries of every row and exports the same list as the
// table Python reads (ms_bcewl_aot_registry); a row that names no operation of MS_BCEWL_FOR_EACH_OPERATION fails the
// build. A new operation is a row here and its case in InferShape there.
// ENTRY_WITH_INFER_SHAPE rows also define each entry's InferShape, its name followed by InferShape as MindSpore looks
// it up; ENTRY rows are the multi-output entries, whose shapes their primitives infer in Python (an AOT InferShape
// gives one output).
// Each tensor costs a call about 10 microseconds in MindSpore (PyNative and graph alike), about the host kernel's time
// at 1e3 elements, so a call passes no unit where a row takes its weights alone. The forward has two rows, since a
// count of three tensors cannot tell which weight a call holds; the gradients of input and target take pos_weight
// alone, the more common single weight (more rows would pass the 40 exported symbols the library allows itself).
#ifndef MS_BCEWL_MINDSPORE_AOT_REGISTRY_H_
#define MS_BCEWL_MINDSPORE_AOT_REGISTRY_H_

#define MS_BCEWL_AOT_OPERATIONS(ENTRY, ENTRY_WITH_INFER_SHAPE)      \
  ENTRY_WITH_INFER_SHAPE(forward, forward, weight)                  \
  ENTRY_WITH_INFER_SHAPE(forward_pos_weighted, forward, pos_weight) \
  ENTRY_WITH_INFER_SHAPE(grad_self, grad_self, pos_weight)          \
  ENTRY_WITH_INFER_SHAPE(grad_target, grad_target, pos_weight)      \
  ENTRY_WITH_INFER_SHAPE(grad_weight, grad_weight, none)            \
  ENTRY_WITH_INFER_SHAPE(grad_pos_weight, grad_pos_weight, none)    \
  ENTRY(grad_all, grad_all, none)

#endif  // MS_BCEWL_MINDSPORE_AOT_REGISTRY_H_
