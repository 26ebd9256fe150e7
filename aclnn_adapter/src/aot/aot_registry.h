// The registry of MindSpore AOT entry points: one row per (operation, variant), exported once per reduction as
// ms_bcewl_<operation>_<variant>_<reduction>, with an InferShape companion where the row's shape is `library`.
// aot_entries.cpp generates the entries and the table Python reads (ms_bcewl_aot_registry) from this list alone,
// so a new variant is one row here; a new operation also needs its case in aot_entries.cpp. Variant: which of weight
// and pos_weight the entry takes (plain, w, p, wp); the weight gradients exist only where their input does. Shapes:
// `python` marks the multi-output entry, whose shapes its primitive infers in Python (an AOT InferShape gives one
// output).
#ifndef MS_BCEWL_AOT_AOT_REGISTRY_H_
#define MS_BCEWL_AOT_AOT_REGISTRY_H_

// X(operation, variant, has_weight, has_pos_weight, shapes); operation is a name of MS_BCEWL_FOR_EACH_OPERATION.
#define MS_BCEWL_AOT_ENTRIES(X)                \
  X(forward, plain, false, false, library)     \
  X(forward, w, true, false, library)          \
  X(forward, p, false, true, library)          \
  X(forward, wp, true, true, library)          \
  X(grad_self, plain, false, false, library)   \
  X(grad_self, w, true, false, library)        \
  X(grad_self, p, false, true, library)        \
  X(grad_self, wp, true, true, library)        \
  X(grad_target, plain, false, false, library) \
  X(grad_target, w, true, false, library)      \
  X(grad_target, p, false, true, library)      \
  X(grad_target, wp, true, true, library)      \
  X(grad_weight, w, true, false, library)      \
  X(grad_weight, wp, true, true, library)      \
  X(grad_pos_weight, p, false, true, library)  \
  X(grad_pos_weight, wp, true, true, library)  \
  X(grad_all, plain, false, false, python)     \
  X(grad_all, w, true, false, python)          \
  X(grad_all, p, false, true, python)          \
  X(grad_all, wp, true, true, python)

#endif  // MS_BCEWL_AOT_AOT_REGISTRY_H_
