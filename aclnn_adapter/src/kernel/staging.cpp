#include "kernel/staging.h"

namespace ms_bcewl::kernel {

Stager::Stager(const Plan &plan, int64_t elements) : plan_(plan) {
  const int64_t used = std::min(kChunk, elements);
  for (int view = 0; view < kInputs; ++view) {
    const View &input = plan.views[view];
    if (input.source == Source::kConstant) {
      std::fill(buffers_[view], buffers_[view] + used, input.constant);
    } else if (input.period > 0 && input.period <= kMaxTiledPeriod) {
      Tile(input, input.period + used, &tiled_[view]);
    }
  }
}

void Stager::Tile(const View &input, int64_t length, std::vector<float> *tiled) const {
  tiled->resize(static_cast<size_t>(length));
  float *values = tiled->data();
  if (input.dtype == DType::kFloat32) {
    std::memcpy(values, input.data, static_cast<size_t>(input.period) * sizeof(float));
  } else {
    plan_.kernels->widen(input.dtype, static_cast<const uint16_t *>(input.data), input.period, values);
  }
  for (int64_t filled = input.period; filled < length;) {
    const int64_t copied = std::min(filled, length - filled);
    std::memcpy(values + filled, values, static_cast<size_t>(copied) * sizeof(float));
    filled += copied;
  }
}

}  // namespace ms_bcewl::kernel
