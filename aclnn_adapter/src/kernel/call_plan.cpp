#include "kernel/call_plan.h"

#include "kernel/element_access.h"
#include "kernel/isa_selection.h"

namespace ms_bcewl::kernel {
namespace {

bool AllDims(const Problem &problem, const int64_t *strides, bool (*fits)(int64_t stride, int64_t contiguous)) {
  int64_t contiguous = 1;
  for (int dim = problem.rank - 1; dim >= 0; --dim) {
    if (problem.shape[dim] != 1 && !fits(strides[dim], contiguous)) {
      return false;
    }
    contiguous *= problem.shape[dim];
  }
  return true;
}

// The period of a view that is broadcast (stride 0) over the outer dims and contiguous over the inner ones: its
// element i is data[i % period]. 0 for any other view.
int64_t PeriodOf(const Problem &problem, const int64_t *strides) {
  int64_t period = 1;
  int dim = problem.rank - 1;
  for (; dim >= 0 && (problem.shape[dim] == 1 || strides[dim] == period); --dim) {
    period *= problem.shape[dim];
  }
  for (; dim >= 0; --dim) {
    if (problem.shape[dim] != 1 && strides[dim] != 0) {
      return 0;
    }
  }
  return period;
}

View Classify(const Problem &problem, const void *data, DType dtype, const int64_t *strides) {
  View view;
  view.data = data;
  view.dtype = dtype;
  if (data == nullptr) {
    view.source = Source::kOnes;
  } else if (AllDims(problem, strides, [](int64_t stride, int64_t) { return stride == 0; })) {
    view.source = Source::kConstant;
    view.constant = LoadElement(data, 0, dtype);
  } else if (AllDims(problem, strides, [](int64_t stride, int64_t contiguous) { return stride == contiguous; })) {
    view.source = Source::kLinear;
  } else {
    view.source = Source::kStrided;
    view.period = PeriodOf(problem, strides);
  }
  return view;
}

// Classifies the inputs and the `out_count` outputs into plan->views; strides[view] = the view's strides over the
// problem dims.
void ClassifyViews(const Problem &problem, const Destination *outs, int out_count, Plan *plan,
                   const int64_t **strides) {
  const Operand *inputs[kInputs] = {&problem.self, &problem.target, &problem.weight, &problem.pos_weight,
                                    &problem.grad_output};
  for (int view = 0; view < kInputs; ++view) {
    plan->views[view] = Classify(problem, inputs[view]->data, inputs[view]->dtype, inputs[view]->strides);
    strides[view] = inputs[view]->strides;
  }
  for (int output = 0; output < kMaxOutputs; ++output) {
    const int view = kFirstOutput + output;
    strides[view] = problem.self.strides;  // unused unless there is such an output
    if (output < out_count) {
      plan->views[view] = Classify(problem, outs[output].data, outs[output].dtype, outs[output].strides);
      if (plan->views[view].source != Source::kLinear) {
        plan->views[view].source = Source::kStrided;  // (a constant output view is written element after element)
      }
      strides[view] = outs[output].strides;
    }
  }
}

// Whether problem dim `dim`, of `size` elements, continues the last merged dim in every strided view.
bool ContinuesLastDim(const Plan &plan, const int64_t *const *strides, int merged, int dim, int64_t size) {
  for (int view = 0; view < kViews; ++view) {
    if (plan.views[view].source == Source::kStrided && plan.strides[view][merged - 1] != strides[view][dim] * size) {
      return false;
    }
  }
  return true;
}

// plan->shape, strides and outer_rank: the problem dims without those of size 1, merged where ContinuesLastDim.
void MergeDims(const Problem &problem, const int64_t *const *strides, Plan *plan) {
  int merged = 0;
  for (int dim = 0; dim < problem.rank; ++dim) {
    const int64_t size = problem.shape[dim];
    if (size == 1) {
      continue;
    }
    if (merged == 0 || !ContinuesLastDim(*plan, strides, merged, dim, size)) {
      plan->shape[merged++] = 1;
    }
    plan->shape[merged - 1] *= size;
    for (int view = 0; view < kViews; ++view) {
      plan->strides[view][merged - 1] = strides[view][dim];
    }
  }
  if (merged == 0) {
    plan->shape[merged++] = 1;
  }
  plan->outer_rank = merged - 1;
}

// The dtype that x, y and the outputs share, where the ISA kernels may convert them in registers: all linear and
// of one 16-bit dtype. float32 otherwise (float32 views are read and written in place anyway).
DType InRegistersDType(const Plan &plan, int out_count) {
  const DType dtype = plan.views[0].dtype;
  const auto shares = [&](int view) {
    return plan.views[view].source == Source::kLinear && plan.views[view].dtype == dtype;
  };
  bool all_share = dtype != DType::kFloat32 && shares(0) && shares(1);
  for (int output = 0; output < out_count; ++output) {
    all_share = all_share && shares(kFirstOutput + output);
  }
  return all_share ? dtype : DType::kFloat32;
}

}  // namespace

Plan MakePlan(const Problem &problem, const Destination *outs, int out_count, bool in_registers) {
  Plan plan;
  plan.kernels = &ActiveKernels();
  const int64_t *strides[kViews] = {};
  ClassifyViews(problem, outs, out_count, &plan, strides);
  MergeDims(problem, strides, &plan);
  plan.xy_dtype = in_registers ? InRegistersDType(plan, out_count) : DType::kFloat32;
  return plan;
}

}  // namespace ms_bcewl::kernel
