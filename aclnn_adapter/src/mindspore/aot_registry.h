// The registry of MindSpore AOT entry points: every exported entry written out once, one row each, for
// ms_bcewl_<operation>_<reduction> (docs/architecture.md, "The registry"). Each entry takes all four inputs, a 0-d
// unit in place of an absent weight or pos_weight. The GRAPH section of mindspore_entries.cpp defines each entry from
// its row, reading its operation and reduction from its name at compile time (a name that is not one fails the
// build), and exports the same list as the table Python reads (ms_bcewl_aot_registry). A new reduction of an
// existing operation is one row here; a new operation also needs its case in InferShape there.
// ENTRY_WITH_INFER_SHAPE rows also name the entry's InferShape, its name followed by InferShape as MindSpore looks it
// up; ENTRY rows are the multi-output entries, whose shapes their primitives infer in Python (an AOT InferShape gives
// one output).
#ifndef MS_BCEWL_MINDSPORE_AOT_REGISTRY_H_
#define MS_BCEWL_MINDSPORE_AOT_REGISTRY_H_

#define MS_BCEWL_AOT_ENTRIES(ENTRY, ENTRY_WITH_INFER_SHAPE)                                      \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_forward_none, ms_bcewl_forward_noneInferShape)                 \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_forward_mean, ms_bcewl_forward_meanInferShape)                 \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_forward_sum, ms_bcewl_forward_sumInferShape)                   \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_self_none, ms_bcewl_grad_self_noneInferShape)             \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_self_mean, ms_bcewl_grad_self_meanInferShape)             \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_self_sum, ms_bcewl_grad_self_sumInferShape)               \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_target_none, ms_bcewl_grad_target_noneInferShape)         \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_target_mean, ms_bcewl_grad_target_meanInferShape)         \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_target_sum, ms_bcewl_grad_target_sumInferShape)           \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_weight_none, ms_bcewl_grad_weight_noneInferShape)         \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_weight_mean, ms_bcewl_grad_weight_meanInferShape)         \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_weight_sum, ms_bcewl_grad_weight_sumInferShape)           \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_pos_weight_none, ms_bcewl_grad_pos_weight_noneInferShape) \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_pos_weight_mean, ms_bcewl_grad_pos_weight_meanInferShape) \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_pos_weight_sum, ms_bcewl_grad_pos_weight_sumInferShape)   \
  ENTRY(ms_bcewl_grad_all_none)                                                                  \
  ENTRY(ms_bcewl_grad_all_mean)                                                                  \
  ENTRY(ms_bcewl_grad_all_sum)

#endif  // MS_BCEWL_MINDSPORE_AOT_REGISTRY_H_
