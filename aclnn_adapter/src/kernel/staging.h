// Staging: one task's buffers through which each chunk's inputs reach the ISA kernels as contiguous float32, and
// through which its values reach outputs that the kernels cannot write in place.
#ifndef MS_BCEWL_KERNEL_STAGING_H_
#define MS_BCEWL_KERNEL_STAGING_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernel/call_plan.h"
#include "kernel/host_driver.h"
#include "kernel/isa_kernels.h"
#include "kernel/strided_cursor.h"

namespace ms_bcewl::kernel {

// Calls run(offset, stride, done, length) for the runs of elements [first, first + count) of a strided view:
// `length` elements at view offsets offset + i * stride, which are elements first + done + i.
template <class Run>
void ForEachRun(const Plan &plan, int view, int64_t first, int64_t count, Run &&run) {
  const int64_t row_length = plan.shape[plan.outer_rank];
  const int64_t stride = plan.strides[view][plan.outer_rank];
  StridedCursor<1> rows(plan.outer_rank, plan.shape, {plan.strides[view]}, first / row_length);
  int64_t column = first % row_length;
  for (int64_t done = 0; done < count; rows.Next()) {
    const int64_t length = std::min(row_length - column, count - done);
    run(rows.Offset(0) + column * stride, stride, done, length);
    done += length;
    column = 0;
  }
}

template <typename T>
void CopyRun(T *destination, int64_t destination_stride, const T *source, int64_t source_stride, int64_t length) {
  if (destination_stride == 1 && source_stride == 1) {
    std::memcpy(destination, source, static_cast<size_t>(length) * sizeof(T));
    return;
  }
  for (int64_t i = 0; i < length; ++i) {
    std::memcpy(destination + i * destination_stride, source + i * source_stride, sizeof(T));
  }
}

template <typename T>
void Gather(const Plan &plan, int view, int64_t first, int64_t count, T *packed) {
  const T *data = static_cast<const T *>(plan.views[view].data);
  ForEachRun(plan, view, first, count, [&](int64_t offset, int64_t stride, int64_t done, int64_t length) {
    CopyRun(packed + done, 1, data + offset, stride, length);
  });
}

template <typename T>
void Scatter(const Plan &plan, int view, int64_t first, int64_t count, const T *packed) {
  T *data = static_cast<T *>(const_cast<void *>(plan.views[view].data));
  ForEachRun(plan, view, first, count, [&](int64_t offset, int64_t stride, int64_t done, int64_t length) {
    CopyRun(data + offset, stride, packed + done, 1, length);
  });
}

// What an absent input reads: a chunk of ones, shared, so that no call fills one (g++ -O2 fills with scalar
// stores).
constexpr std::array<float, kChunk> OnesChunk() {
  std::array<float, kChunk> ones{};
  for (size_t i = 0; i < ones.size(); ++i) {
    ones[i] = 1.0f;
  }
  return ones;
}
alignas(64) inline constexpr std::array<float, kChunk> kOnesChunk = OnesChunk();

// Whether an input is 1 everywhere.
inline bool IsOne(const View &input) {
  return input.source == Source::kOnes || (input.source == Source::kConstant && input.constant == 1.0f);
}

// One task's staging buffers: each chunk's inputs as contiguous float32, and its output values. The per-chunk
// members are defined here, to inline into the loops of the passes.
class Stager {
 public:
  // `elements` bounds the chunk sizes the task will stage (so that a small call fills only what it uses).
  Stager(const Plan &plan, int64_t elements);

  RowInputs Inputs(int64_t first, int64_t count) {
    const bool in_registers = plan_.xy_dtype != DType::kFloat32;  // x and y are then read where they are
    RowInputs in{in_registers ? nullptr : Input(0, first, count), in_registers ? nullptr : Input(1, first, count),
                 Input(2, first, count), Input(3, first, count), Input(4, first, count)};
    in.unit_weight = IsOne(plan_.views[2]);
    in.unit_pos_weight = IsOne(plan_.views[3]);
    if (in_registers) {
      in.xy_dtype = plan_.xy_dtype;
      in.x16 = static_cast<const uint16_t *>(plan_.views[0].data) + first;
      in.y16 = static_cast<const uint16_t *>(plan_.views[1].data) + first;
    }
    return in;
  }

  // Where the values of elements [first, first + count) of output `output` go: the output itself when it is
  // linear float32 or the plan converts it in registers, else float32 staging.
  void *OutputValues(int output, int64_t first) {
    const int view = kFirstOutput + output;
    const View &out = plan_.views[view];
    if (plan_.xy_dtype != DType::kFloat32) {
      return static_cast<uint16_t *>(const_cast<void *>(out.data)) + first;
    }
    if (out.source == Source::kLinear && out.dtype == DType::kFloat32) {
      return static_cast<float *>(const_cast<void *>(out.data)) + first;
    }
    return buffers_[view];
  }

  // Writes the values of OutputValues(output, first) to the output.
  void StoreOutput(int output, int64_t first, int64_t count) {
    if (plan_.xy_dtype != DType::kFloat32) {
      return;  // the ISA kernels wrote the output in place
    }
    const int view = kFirstOutput + output;
    const View &out = plan_.views[view];
    if (out.dtype == DType::kFloat32) {
      if (out.source == Source::kStrided) {
        Scatter(plan_, view, first, count, buffers_[view]);
      }
      return;
    }
    if (out.source == Source::kLinear) {
      plan_.kernels->narrow(out.dtype, buffers_[view], count,
                            static_cast<uint16_t *>(const_cast<void *>(out.data)) + first);
      return;
    }
    plan_.kernels->narrow(out.dtype, buffers_[view], count, sixteen_bits_);
    Scatter(plan_, view, first, count, sixteen_bits_);
  }

  // float32 room for a chunk's values of summed quantity `sum` (0 or 1), which go to lane sums, not to an output.
  float *SumValues(int sum) { return sum_values_[sum]; }

 private:
  const float *Input(int view, int64_t first, int64_t count) {
    const View &input = plan_.views[view];
    float *buffer = buffers_[view];
    switch (input.source) {
      case Source::kOnes:
        return kOnesChunk.data();
      case Source::kConstant:
        return buffer;
      case Source::kLinear:
        if (input.dtype == DType::kFloat32) {
          return static_cast<const float *>(input.data) + first;
        }
        plan_.kernels->widen(input.dtype, static_cast<const uint16_t *>(input.data) + first, count, buffer);
        return buffer;
      case Source::kStrided:
        if (const float *values = PeriodicValues(view, first, count)) {
          return values;
        }
        if (input.dtype == DType::kFloat32) {
          Gather(plan_, view, first, count, buffer);
        } else {
          Gather(plan_, view, first, count, sixteen_bits_);
          plan_.kernels->widen(input.dtype, sixteen_bits_, count, buffer);
        }
        return buffer;
    }
    return buffer;
  }

  // The values of elements [first, first + count) of a periodic input where they lie in one run: in its tiled copy,
  // or, float32, in the input itself when they do not wrap around the period. Null otherwise.
  const float *PeriodicValues(int view, int64_t first, int64_t count) const {
    const View &input = plan_.views[view];
    if (input.period == 0) {
      return nullptr;
    }
    const int64_t phase = first % input.period;
    if (!tiled_[view].empty()) {
      return tiled_[view].data() + phase;
    }
    if (input.dtype == DType::kFloat32 && phase + count <= input.period) {
      return static_cast<const float *>(input.data) + phase;
    }
    return nullptr;
  }

  // *tiled = `length` values of the periodic input: its period, repeated, as float32.
  void Tile(const View &input, int64_t length, std::vector<float> *tiled) const;

  const Plan &plan_;
  std::vector<float> tiled_[kInputs];  // periodic inputs (period <= kMaxTiledPeriod): the period, repeated
  alignas(64) float buffers_[kViews][kChunk];
  alignas(64) float sum_values_[2][kChunk];
  alignas(64) uint16_t sixteen_bits_[kChunk];
};

}  // namespace ms_bcewl::kernel

#endif  // MS_BCEWL_KERNEL_STAGING_H_
