#include "kernel/block_reductions.h"

namespace ms_bcewl::kernel {

void BlockSums::Open(int64_t start, int64_t contributions_per_output, double *destination) {
  std::fill(lanes, lanes + kSumLanes, 0.0);
  filled = 0;
  partials = destination;
  position = start;
  per_output = contributions_per_output;
  length = std::min(kReductionBlockElements, per_output - position);
}

void BlockSums::Close() {
  *partials++ = FoldLanes(lanes, length);
  const int64_t next = position + kReductionBlockElements;
  Open(next >= per_output ? 0 : next, per_output, partials);
}

// Lane j += lane j + h for h = 8, 4, 2, 1. Lanes the block never reached hold +0.0 and are left out (adding +0.0
// changes no lane sum: a sum that starts at +0.0 is never -0.0).
double FoldLanes(double *lanes, int64_t length) {
  int width = kSumLanes;
  while (width / 2 >= length) {
    width /= 2;
  }
  for (int half = width / 2; half > 0; half /= 2) {
    for (int lane = 0; lane < half; ++lane) {
      lanes[lane] += lanes[lane + half];
    }
  }
  return lanes[0];
}

void StoreBlockTotals(const Reduction &reduction, double scale, const double *partials) {
  StoreOutputs(reduction, scale, 0, reduction.outputs, [&](int64_t output) {
    double total = 0.0;
    for (int64_t block = 0; block < reduction.blocks_per_output; ++block) {
      total += partials[output * reduction.blocks_per_output + block];
    }
    return total;
  });
}

double *PartialsOf(const Reduction &reduction, double *workspace, std::vector<double> &own) {
  if (reduction.blocks_per_output > 1 && workspace != nullptr) {
    return workspace;
  }
  own.resize(static_cast<size_t>(reduction.outputs * reduction.blocks_per_output));
  return own.data();
}

}  // namespace ms_bcewl::kernel
