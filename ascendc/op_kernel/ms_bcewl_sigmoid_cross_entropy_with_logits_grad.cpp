// MsBcewlSigmoidCrossEntropyWithLogitsGrad: dx = w * ((p * y + 1 - y) * sigmoid(x) - p * y) * dout * scale, with
// scale the op's 0-d float32 input (1 / numel for reduction mean, else 1). Computed in float32 and written in the input
// dtype (rounded to nearest even).
#include "bcewl_kernel_common.h"

namespace bcewl {

template <typename T, bool HasWeight, bool HasPosWeight>
class GradKernel : public ElementwiseKernelBase<T, HasWeight, HasPosWeight, T> {
  using Base = ElementwiseKernelBase<T, HasWeight, HasPosWeight, T>;

 public:
  // Positions of weight and pos_weight among Run's GM addresses.
  static constexpr uint32_t kWeightArgument = 4;
  static constexpr uint32_t kPosWeightArgument = 5;

  __aicore__ inline void Run(const GradTilingData &tiling, GM_ADDR predict, GM_ADDR target, GM_ADDR dout, GM_ADDR scale,
                             GM_ADDR weight, GM_ADDR posWeight, GM_ADDR gradient) {
    const typename Base::Inputs gm{predict, target, weight, posWeight, gradient};
    if (!this->InitCommon(tiling.geometry, gm, tiling.weight, tiling.posWeight, kScratchTiles)) {
      return;
    }
    // A 0-d dout (mean, sum) joins scale in one factor, read once: no dout tile at all.
    doutIsSingleValue_ = IsSingleValue(tiling.dout);
    factor_ = ReadScalar<float>(scale);
    if (doutIsSingleValue_) {
      factor_ *= ReadScalar<T>(dout);
    } else {
      dout_.Init(this->pipe_, dout, tiling.dout, tiling.geometry, this->block_);
    }
    Duplicate(Ones(), 1.0f, static_cast<int32_t>(tiling.geometry.tileCapacity));
    this->ProcessTiles(*this, tiling.geometry);
  }

  __aicore__ inline void CopyIn(const TileSpan &tile) {
    this->CopyInCommon(tile);
    if (!doutIsSingleValue_) {
      dout_.CopyIn(tile);
    }
  }

  __aicore__ inline void Compute(const TileSpan &tile) {
    const LocalTensor<float> x = this->predict_.Acquire(tile);
    const LocalTensor<float> y = this->target_.Acquire(tile);
    this->weights_.Acquire(tile);
    const LocalTensor<T> out = this->output_.Alloc();
    const LocalTensor<float> dx = FloatResult(out);
    const int32_t n = static_cast<int32_t>(tile.count);

    // sigmoid(x) = 1 / (1 + exp(-x)): 0 at -inf (exp overflows to inf), 1 at +inf, NaN for NaN.
    Muls(dx, x, -1.0f, n);
    Exp(dx, dx, n);
    Adds(dx, dx, 1.0f, n);
    Div(dx, Ones(), dx, n);
    if constexpr (HasPosWeight) {
      // (p * y + 1 - y) * s - p * y as s + (p * y - y) * s - p * y
      const LocalTensor<float> py = this->Scratch(kPosWeightScratch);
      const LocalTensor<float> term = this->Scratch(kPosWeightScratch + 1);
      Mul(py, this->weights_.posWeight, y, n);
      Sub(term, py, y, n);
      Mul(term, term, dx, n);
      Add(dx, dx, term, n);
      Sub(dx, dx, py, n);
    } else {
      Sub(dx, dx, y, n);
    }
    if constexpr (HasWeight) {
      Mul(dx, dx, this->weights_.weight, n);
    }
    if (!doutIsSingleValue_) {
      Mul(dx, dx, dout_.Acquire(tile), n);
    }
    if (factor_ != 1.0f) {
      Muls(dx, dx, factor_, n);
    }
    if constexpr (!IsSame<T, float>::value) {
      Cast(out, dx, RoundMode::CAST_RINT, tile.count);
    }

    this->output_.Push(out);
    this->ReleaseCommon();
    if (!doutIsSingleValue_) {
      dout_.Release();
    }
  }

 private:
  // Scratch tiles: ones, then a float result for a 16-bit gradient, then the two of pos_weight.
  static constexpr uint32_t kResultScratch = kGradOnesScratchTiles;
  static constexpr uint32_t kPosWeightScratch =
      kResultScratch + (IsSame<T, float>::value ? 0 : kGrad16BitResultScratchTiles);
  static constexpr uint32_t kScratchTiles = kPosWeightScratch + (HasPosWeight ? kGradPosWeightScratchTiles : 0);

  __aicore__ inline LocalTensor<float> Ones() { return this->Scratch(0); }

  __aicore__ inline LocalTensor<float> FloatResult(const LocalTensor<T> &out) {
    if constexpr (IsSame<T, float>::value) {
      return out;
    } else {
      (void)out;
      return this->Scratch(kResultScratch);
    }
  }

  InputOperand<T> dout_;
  bool doutIsSingleValue_ = false;
  float factor_ = 1.0f;  // scale, times dout when dout is one value
};

}  // namespace bcewl

extern "C" __global__ __aicore__ void ms_bcewl_sigmoid_cross_entropy_with_logits_grad(
    GM_ADDR predict, GM_ADDR target, GM_ADDR dout, GM_ADDR scale, GM_ADDR weight, GM_ADDR pos_weight, GM_ADDR gradient,
    GM_ADDR workspace, GM_ADDR tiling) {
  (void)workspace;  // the tiling asks for none
  // The op compiler sizes the launch's tiling by this struct; a static-shape binary carries its bytes itself.
  REGISTER_TILING_DEFAULT(bcewl::GradTilingData);
  GET_TILING_DATA_WITH_STRUCT(bcewl::GradTilingData, tilingData, tiling);
  BCEWL_DISPATCH_BY_TILING_KEY(bcewl::GradKernel, tilingData, predict, target, dout, scale, weight, pos_weight,
                               gradient)
}
