// The registry of MindSpore AOT entry points: one row per (operation, variant), exported once per reduction as
// ms_bcewl_<operation>_<variant>_<reduction>, with an InferShape companion where the row's shape is `library`.
// aot_entries.cpp generates the entries and the table Python reads (ms_bcewl_aot_registry) from this list alone,
// so a new operation or variant is one row here plus its Operation case. Variant: which of weight and pos_weight
// the entry takes (plain, w, p, wp); the weight gradients exist only where their input does. Shapes: `python`
// marks the multi-output entry, whose shapes its primitive infers in Python (an AOT InferShape gives one output).
#ifndef MS_BCEWL_AOT_AOT_REGISTRY_H_
#define MS_BCEWL_AOT_AOT_REGISTRY_H_

// X(operation, Operation enumerator, variant, has_weight, has_pos_weight, shapes)
#define MS_BCEWL_AOT_ENTRIES(X)                               \
  X(forward, kForward, plain, false, false, library)          \
  X(forward, kForward, w, true, false, library)               \
  X(forward, kForward, p, false, true, library)               \
  X(forward, kForward, wp, true, true, library)               \
  X(input_grad, kInputGrad, plain, false, false, library)     \
  X(input_grad, kInputGrad, w, true, false, library)          \
  X(input_grad, kInputGrad, p, false, true, library)          \
  X(input_grad, kInputGrad, wp, true, true, library)          \
  X(target_grad, kTargetGrad, plain, false, false, library)   \
  X(target_grad, kTargetGrad, w, true, false, library)        \
  X(target_grad, kTargetGrad, p, false, true, library)        \
  X(target_grad, kTargetGrad, wp, true, true, library)        \
  X(weight_grad, kWeightGrad, w, true, false, library)        \
  X(weight_grad, kWeightGrad, wp, true, true, library)        \
  X(pos_weight_grad, kPosWeightGrad, p, false, true, library) \
  X(pos_weight_grad, kPosWeightGrad, wp, true, true, library) \
  X(all_grad, kAllGrad, plain, false, false, python)          \
  X(all_grad, kAllGrad, w, true, false, python)               \
  X(all_grad, kAllGrad, p, false, true, python)               \
  X(all_grad, kAllGrad, wp, true, true, python)

#endif  // MS_BCEWL_AOT_AOT_REGISTRY_H_
