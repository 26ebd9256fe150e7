// Walks a shape in row-major order from any linear index, keeping the element offset of several strided views.
#ifndef MS_BCEWL_KERNEL_STRIDED_CURSOR_H_
#define MS_BCEWL_KERNEL_STRIDED_CURSOR_H_

#include <array>
#include <cstdint>

#include "kernel/bcewl_kernel.h"

namespace ms_bcewl::kernel {

template <int kViews>
class StridedCursor {
 public:
  StridedCursor(int rank, const int64_t *shape, const std::array<const int64_t *, kViews> &strides, int64_t start)
      : rank_(rank), strides_(strides) {
    offsets_.fill(0);
    int64_t rest = start;
    for (int dim = rank - 1; dim >= 0; --dim) {
      shape_[dim] = shape[dim];
      index_[dim] = shape[dim] > 0 ? rest % shape[dim] : 0;
      rest = shape[dim] > 0 ? rest / shape[dim] : 0;
      for (int view = 0; view < kViews; ++view) {
        offsets_[view] += index_[dim] * strides_[view][dim];
      }
    }
  }

  int64_t Offset(int view) const { return offsets_[view]; }

  void Next() {
    for (int dim = rank_ - 1; dim >= 0; --dim) {
      if (++index_[dim] < shape_[dim]) {
        for (int view = 0; view < kViews; ++view) {
          offsets_[view] += strides_[view][dim];
        }
        return;
      }
      index_[dim] = 0;
      for (int view = 0; view < kViews; ++view) {
        offsets_[view] -= (shape_[dim] - 1) * strides_[view][dim];
      }
    }
  }

 private:
  int rank_;
  int64_t shape_[kMaxRank] = {};
  int64_t index_[kMaxRank] = {};
  std::array<const int64_t *, kViews> strides_;
  std::array<int64_t, kViews> offsets_;
};

}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_STRIDED_CURSOR_H_
