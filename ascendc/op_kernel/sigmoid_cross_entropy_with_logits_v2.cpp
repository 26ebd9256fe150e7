// SigmoidCrossEntropyWithLogitsV2 forward, reduction none: loss = w * ((1 - y) * x - (1 + (p - 1) * y) * logsig(x)),
// computed in float32 and written as float32 whatever the input dtype (the adapter reduces and casts).
#include "bcewl_kernel_common.h"

namespace bcewl {

template <typename T, bool HasWeight, bool HasPosWeight>
class SigmoidCrossEntropyWithLogitsV2Kernel : public ElementwiseKernelBase<T, HasWeight, HasPosWeight, float> {
  using Base = ElementwiseKernelBase<T, HasWeight, HasPosWeight, float>;

 public:
  __aicore__ inline void Run(const SigmoidCrossEntropyWithLogitsV2TilingData& tiling, GM_ADDR predict, GM_ADDR target,
                             GM_ADDR weight, GM_ADDR posWeight, GM_ADDR loss) {
    const typename Base::Inputs gm{predict, target, weight, posWeight, loss};
    if (this->InitCommon(tiling.geometry, gm, tiling.weight, tiling.posWeight, kScratchTiles)) {
      this->ProcessTiles(*this, tiling.geometry);
    }
  }

  __aicore__ inline void CopyIn(const TileSpan& tile) { this->CopyInCommon(tile); }

  // With c = 1 + (p - 1) * y the loss is written as (1 - y) * max(x, 0) - p * y * min(x, 0) + c * softplus(-|x|),
  // the same value as the formula above for finite x, but x = -inf with y = 1 and x = +inf with y = 0 give +inf
  // instead of 0 * inf = NaN.
  __aicore__ inline void Compute(const TileSpan& tile) {
    const LocalTensor<float> x = this->predict_.Acquire(tile);
    const LocalTensor<float> y = this->target_.Acquire(tile);
    this->weights_.Acquire(tile);
    const LocalTensor<float> softplus = this->Scratch(0);
    const LocalTensor<float> temp = this->Scratch(1);
    const LocalTensor<float> out = this->output_.Alloc();
    const int32_t n = static_cast<int32_t>(tile.count);

    SoftplusOfNegAbs(softplus, x, n);
    if constexpr (HasPosWeight) {
      PosWeightFactor(temp, this->weights_.posWeight, y, n);
      Mul(softplus, softplus, temp, n);
    }
    Maxs(out, x, 0.0f, n);
    Muls(temp, y, -1.0f, n);
    Adds(temp, temp, 1.0f, n);
    Mul(out, out, temp, n);
    Mins(temp, x, 0.0f, n);
    Mul(temp, temp, y, n);
    if constexpr (HasPosWeight) {
      Mul(temp, temp, this->weights_.posWeight, n);
    }
    Sub(out, out, temp, n);
    Add(out, out, softplus, n);
    if constexpr (HasWeight) {
      Mul(out, out, this->weights_.weight, n);
    }

    this->output_.Push(out);
    this->ReleaseCommon();
  }

 private:
  static constexpr uint32_t kScratchTiles = 2;
};

}  // namespace bcewl

extern "C" __global__ __aicore__ void sigmoid_cross_entropy_with_logits_v2(GM_ADDR predict, GM_ADDR target,
                                                                           GM_ADDR weight, GM_ADDR pos_weight,
                                                                           GM_ADDR loss, GM_ADDR workspace,
                                                                           GM_ADDR tiling) {
  (void)workspace;
  bcewl::SigmoidCrossEntropyWithLogitsV2TilingData tilingData;
  bcewl::LoadTiling(tiling, &tilingData);
  bcewl::DispatchByTilingKey<bcewl::SigmoidCrossEntropyWithLogitsV2Kernel>(tilingData, predict, target, weight,
                                                                             pos_weight, loss);
}
