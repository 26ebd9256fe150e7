// The per-call floor of a pyboost operator in PyNative: allocates an output shaped like x and launches nothing.
// Built by benchmarks/mindspore_providers.py with MindSpore's CustomOpBuilder, like ms_bcewl's PyNative path
// (aclnn_adapter/src/mindspore/mindspore_entries.cpp), so that the two differ only by the work done.
#include <memory>

#include "ms_extension/api.h"

namespace {

class NoopRunner : public ms::pynative::PyboostRunner {
 public:
  using PyboostRunner::PyboostRunner;
  void LaunchKernel() override {}
};

ms::Tensor Noop(const ms::Tensor &x, const ms::Tensor &y) {
  ms::Tensor out(x.data_type(), x.shape());
  std::make_shared<NoopRunner>("Noop")->Run({x, y}, {out});
  return out;
}

py::object PyNoop(const ms::Tensor &x, const ms::Tensor &y) { return ms::pynative::PyboostRunner::Call<1>(Noop, x, y); }

}  // namespace

PYBIND11_MODULE(MS_EXTENSION_NAME, m) {
  m.def("noop", &PyNoop, "does nothing", pybind11::arg("x"), pybind11::arg("y"));
}
