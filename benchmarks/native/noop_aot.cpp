// A do-nothing ops.Custom AOT kernel: its call time is MindSpore's per-call floor for a custom operator.
#include <stdint.h>

extern "C" int Noop(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes, void *stream,
                    void *extra) {
  return 0;
}
