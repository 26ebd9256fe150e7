// MsBcewlSigmoidCrossEntropyWithLogitsGrad: dx = w * ((p * y + 1 - y) * sigmoid(x) - p * y) * dout * scale, with
// scale the op's 0-d float32 input (1 / numel for reduction mean, else 1). Computed in float32 and written in the input
// dtype (rounded to nearest even).
#include "bcewl_kernel_common.h"

namespace bcewl {

template <typename T, bool HasWeight, bool HasPosWeight>
class GradKernel : public ElementwiseKernelBase<T, HasWeight, HasPosWeight, T> {
  using Base = ElementwiseKernelBase<T, HasWeight, HasPosWeight, T>;

 public:
  __aicore__ inline void Run(const GradTilingData &tiling, GM_ADDR predict, GM_ADDR target, GM_ADDR dout, GM_ADDR scale,
                             GM_ADDR weight, GM_ADDR posWeight, GM_ADDR gradient) {
    const typename Base::Inputs gm{predict, target, weight, posWeight, gradient};
    if (!this->InitCommon(tiling.geometry, gm, tiling.weight, tiling.posWeight, kScratchTiles)) {
      return;
    }
    dout_.Init(this->pipe_, dout, tiling.dout, tiling.geometry, this->block_);
    GlobalTensor<float> scaleGm;
    scaleGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(scale), 1);
    scale_ = scaleGm.GetValue(0);
    this->ProcessTiles(*this, tiling.geometry);
  }

  __aicore__ inline void CopyIn(const TileSpan &tile) {
    this->CopyInCommon(tile);
    dout_.CopyIn(tile);
  }

  __aicore__ inline void Compute(const TileSpan &tile) {
    const LocalTensor<float> x = this->predict_.Acquire(tile);
    const LocalTensor<float> y = this->target_.Acquire(tile);
    const LocalTensor<float> g = dout_.Acquire(tile);
    this->weights_.Acquire(tile);
    const LocalTensor<T> out = this->output_.Alloc();
    const LocalTensor<float> temp = this->Scratch(0);
    const LocalTensor<float> dx = FloatResult(out);
    const int32_t n = static_cast<int32_t>(tile.count);

    // sigmoid(x) = exp(logsig(x)), logsig(x) = min(x, 0) - softplus(-|x|): no overflow for any x.
    SoftplusOfNegAbs(dx, x, n);
    Mins(temp, x, 0.0f, n);
    Sub(dx, temp, dx, n);
    Exp(dx, dx, n);
    if constexpr (HasPosWeight) {
      PosWeightFactor(temp, this->weights_.posWeight, y, n);
      Mul(dx, dx, temp, n);
      Mul(temp, this->weights_.posWeight, y, n);
      Sub(dx, dx, temp, n);
    } else {
      Sub(dx, dx, y, n);
    }
    if constexpr (HasWeight) {
      Mul(dx, dx, this->weights_.weight, n);
    }
    Mul(dx, dx, g, n);
    Muls(dx, dx, scale_, n);
    if constexpr (!IsSame<T, float>::value) {
      Cast(out, dx, RoundMode::CAST_RINT, tile.count);
    }

    this->output_.Push(out);
    this->ReleaseCommon();
    dout_.Release();
  }

 private:
  static constexpr uint32_t kScratchTiles = IsSame<T, float>::value ? kGradFloat32ScratchTiles : kGrad16BitScratchTiles;

  __aicore__ inline LocalTensor<float> FloatResult(const LocalTensor<T> &out) {
    if constexpr (IsSame<T, float>::value) {
      return out;
    } else {
      (void)out;
      return this->Scratch(1);
    }
  }

  InputOperand<T> dout_;
  float scale_ = 1.0f;
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
