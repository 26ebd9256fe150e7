// The registry of MindSpore AOT entry points: the operations MindSpore calls, one row each. Each row has one entry
// per reduction, ms_bcewl_<operation>_<reduction> (docs/architecture.md, "The registry"), which takes input and target
// alone or all four inputs, a 0-d 1 in place of an absent weight or pos_weight. graph_entries.cpp defines the entries
// of every row and exports the same list as the table Python reads (ms_bcewl_aot_registry); a row that names no
// operation of MS_BCEWL_FOR_EACH_OPERATION fails the build. A new operation is a row here and its case in InferShape
// there.
// ENTRY_WITH_INFER_SHAPE rows also define each entry's InferShape, its name followed by InferShape as MindSpore looks
// it up; ENTRY rows are the multi-output entries, whose shapes their primitives infer in Python (an AOT InferShape
// gives one output).
#ifndef MS_BCEWL_MINDSPORE_AOT_REGISTRY_H_
#define MS_BCEWL_MINDSPORE_AOT_REGISTRY_H_

#define MS_BCEWL_AOT_OPERATIONS(ENTRY, ENTRY_WITH_INFER_SHAPE) \
  ENTRY_WITH_INFER_SHAPE(forward)                              \
  ENTRY_WITH_INFER_SHAPE(grad_self)                            \
  ENTRY_WITH_INFER_SHAPE(grad_target)                          \
  ENTRY_WITH_INFER_SHAPE(grad_weight)                          \
  ENTRY_WITH_INFER_SHAPE(grad_pos_weight)                      \
  ENTRY(grad_all)

#endif  // MS_BCEWL_MINDSPORE_AOT_REGISTRY_H_
