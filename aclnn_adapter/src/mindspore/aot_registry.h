// The registry of MindSpore AOT entry points: every exported entry written out once, one row each, for
// ms_bcewl_<operation>_<variant>_<reduction> (docs/architecture.md, "The registry"). The GRAPH section of
// mindspore_entries.cpp defines each entry from its row, reading its operation, variant and reduction from its name at
// compile time (a name that is not one fails the build), and exports the same list as the table Python reads
// (ms_bcewl_aot_registry). A new variant or reduction of an existing operation is one row here; a new operation also
// needs its case in InferShape there.
// ENTRY_WITH_INFER_SHAPE rows also name the entry's InferShape, its name followed by InferShape as MindSpore looks it
// up; ENTRY rows are the multi-output entries, whose shapes their primitives infer in Python (an AOT InferShape gives
// one output). The weight gradients exist only where their input does.
#ifndef MS_BCEWL_MINDSPORE_AOT_REGISTRY_H_
#define MS_BCEWL_MINDSPORE_AOT_REGISTRY_H_

#define MS_BCEWL_AOT_ENTRIES(ENTRY, ENTRY_WITH_INFER_SHAPE)                                            \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_forward_plain_none, ms_bcewl_forward_plain_noneInferShape)           \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_forward_plain_mean, ms_bcewl_forward_plain_meanInferShape)           \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_forward_plain_sum, ms_bcewl_forward_plain_sumInferShape)             \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_forward_w_none, ms_bcewl_forward_w_noneInferShape)                   \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_forward_w_mean, ms_bcewl_forward_w_meanInferShape)                   \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_forward_w_sum, ms_bcewl_forward_w_sumInferShape)                     \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_forward_p_none, ms_bcewl_forward_p_noneInferShape)                   \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_forward_p_mean, ms_bcewl_forward_p_meanInferShape)                   \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_forward_p_sum, ms_bcewl_forward_p_sumInferShape)                     \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_forward_wp_none, ms_bcewl_forward_wp_noneInferShape)                 \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_forward_wp_mean, ms_bcewl_forward_wp_meanInferShape)                 \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_forward_wp_sum, ms_bcewl_forward_wp_sumInferShape)                   \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_self_plain_none, ms_bcewl_grad_self_plain_noneInferShape)       \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_self_plain_mean, ms_bcewl_grad_self_plain_meanInferShape)       \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_self_plain_sum, ms_bcewl_grad_self_plain_sumInferShape)         \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_self_w_none, ms_bcewl_grad_self_w_noneInferShape)               \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_self_w_mean, ms_bcewl_grad_self_w_meanInferShape)               \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_self_w_sum, ms_bcewl_grad_self_w_sumInferShape)                 \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_self_p_none, ms_bcewl_grad_self_p_noneInferShape)               \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_self_p_mean, ms_bcewl_grad_self_p_meanInferShape)               \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_self_p_sum, ms_bcewl_grad_self_p_sumInferShape)                 \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_self_wp_none, ms_bcewl_grad_self_wp_noneInferShape)             \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_self_wp_mean, ms_bcewl_grad_self_wp_meanInferShape)             \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_self_wp_sum, ms_bcewl_grad_self_wp_sumInferShape)               \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_target_plain_none, ms_bcewl_grad_target_plain_noneInferShape)   \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_target_plain_mean, ms_bcewl_grad_target_plain_meanInferShape)   \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_target_plain_sum, ms_bcewl_grad_target_plain_sumInferShape)     \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_target_w_none, ms_bcewl_grad_target_w_noneInferShape)           \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_target_w_mean, ms_bcewl_grad_target_w_meanInferShape)           \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_target_w_sum, ms_bcewl_grad_target_w_sumInferShape)             \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_target_p_none, ms_bcewl_grad_target_p_noneInferShape)           \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_target_p_mean, ms_bcewl_grad_target_p_meanInferShape)           \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_target_p_sum, ms_bcewl_grad_target_p_sumInferShape)             \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_target_wp_none, ms_bcewl_grad_target_wp_noneInferShape)         \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_target_wp_mean, ms_bcewl_grad_target_wp_meanInferShape)         \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_target_wp_sum, ms_bcewl_grad_target_wp_sumInferShape)           \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_weight_w_none, ms_bcewl_grad_weight_w_noneInferShape)           \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_weight_w_mean, ms_bcewl_grad_weight_w_meanInferShape)           \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_weight_w_sum, ms_bcewl_grad_weight_w_sumInferShape)             \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_weight_wp_none, ms_bcewl_grad_weight_wp_noneInferShape)         \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_weight_wp_mean, ms_bcewl_grad_weight_wp_meanInferShape)         \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_weight_wp_sum, ms_bcewl_grad_weight_wp_sumInferShape)           \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_pos_weight_p_none, ms_bcewl_grad_pos_weight_p_noneInferShape)   \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_pos_weight_p_mean, ms_bcewl_grad_pos_weight_p_meanInferShape)   \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_pos_weight_p_sum, ms_bcewl_grad_pos_weight_p_sumInferShape)     \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_pos_weight_wp_none, ms_bcewl_grad_pos_weight_wp_noneInferShape) \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_pos_weight_wp_mean, ms_bcewl_grad_pos_weight_wp_meanInferShape) \
  ENTRY_WITH_INFER_SHAPE(ms_bcewl_grad_pos_weight_wp_sum, ms_bcewl_grad_pos_weight_wp_sumInferShape)   \
  ENTRY(ms_bcewl_grad_all_plain_none)                                                                  \
  ENTRY(ms_bcewl_grad_all_plain_mean)                                                                  \
  ENTRY(ms_bcewl_grad_all_plain_sum)                                                                   \
  ENTRY(ms_bcewl_grad_all_w_none)                                                                      \
  ENTRY(ms_bcewl_grad_all_w_mean)                                                                      \
  ENTRY(ms_bcewl_grad_all_w_sum)                                                                       \
  ENTRY(ms_bcewl_grad_all_p_none)                                                                      \
  ENTRY(ms_bcewl_grad_all_p_mean)                                                                      \
  ENTRY(ms_bcewl_grad_all_p_sum)                                                                       \
  ENTRY(ms_bcewl_grad_all_wp_none)                                                                     \
  ENTRY(ms_bcewl_grad_all_wp_mean)                                                                     \
  ENTRY(ms_bcewl_grad_all_wp_sum)

#endif  // MS_BCEWL_MINDSPORE_AOT_REGISTRY_H_
