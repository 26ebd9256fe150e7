// MsBcewlSigmoidCrossEntropyWithLogits, the forward with reduction none:
// loss = w * ((1 - y) * x - (1 + (p - 1) * y) * logsig(x)), computed in float32 and written as float32 whatever the
// input dtype (the adapter reduces and casts).
#include "bcewl_kernel_common.h"

namespace bcewl {

constexpr float kFloatMax = 3.40282347e+38f;
constexpr uint32_t kFloatsPerRepeat = 256 / sizeof(float);

// CompareScalar counts must fill whole 256-byte repeats; the tiling makes every tile buffer a multiple of them.
__aicore__ inline uint32_t WholeFloatRepeats(uint32_t count) {
  return static_cast<uint32_t>(CeilDiv(count, kFloatsPerRepeat) * kFloatsPerRepeat);
}

// dst = c * v, except that c == 0 times v = +-inf gives 0 (the limit the loss terms tend to) instead of NaN; NaN
// stays NaN. dst may be v, never c; temp is scratch. Relies on comparisons being false for NaN.
__aicore__ inline void ProductWithZeroLimit(const LocalTensor<float> &dst, const LocalTensor<float> &c,
                                            const LocalTensor<float> &v, const LocalTensor<float> &temp,
                                            const LocalTensor<uint8_t> &mask, uint32_t count) {
  const int32_t n = static_cast<int32_t>(count);
  Abs(temp, v, n);
  CompareScalar(mask, temp, kFloatMax, CMPMODE::GT, count);              // v is infinite
  Select(temp, mask, c, 1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, count);  // c there, 1 elsewhere
  CompareScalar(mask, temp, 0.0f, CMPMODE::EQ, count);                   // c == 0 and v infinite
  Mul(temp, c, v, n);
  Select(dst, mask, c, temp, SELMODE::VSEL_TENSOR_TENSOR_MODE, count);  // there c itself, a zero
}

template <typename T, bool HasWeight, bool HasPosWeight>
class ForwardKernel : public ElementwiseKernelBase<T, HasWeight, HasPosWeight, float> {
  using Base = ElementwiseKernelBase<T, HasWeight, HasPosWeight, float>;

 public:
  // Positions of weight and pos_weight among Run's GM addresses.
  static constexpr uint32_t kWeightArgument = 2;
  static constexpr uint32_t kPosWeightArgument = 3;

  __aicore__ inline void Run(const ForwardTilingData &tiling, GM_ADDR predict, GM_ADDR target, GM_ADDR weight,
                             GM_ADDR posWeight, GM_ADDR loss) {
    const typename Base::Inputs gm{predict, target, weight, posWeight, loss};
    if (this->InitCommon(tiling.geometry, gm, tiling.weight, tiling.posWeight, kForwardScratchTiles)) {
      this->pipe_.InitBuffer(mask_, tiling.geometry.tileCapacity / 8);
      Duplicate(Ones(), 1.0f, static_cast<int32_t>(tiling.geometry.tileCapacity));
      this->ProcessTiles(*this, tiling.geometry);
    }
  }

  __aicore__ inline void CopyIn(const TileSpan &tile) { this->CopyInCommon(tile); }

  // The loss as (1 - y) * max(x, 0) - p * y * min(x, 0) + (1 + (p - 1) * y) * softplus(-|x|), times w: the same
  // value as the formula above for finite x. A tile is first computed with plain products; only if that leaves a
  // lane infinite or NaN is it computed again with the limits at x = +-inf.
  __aicore__ inline void Compute(const TileSpan &tile) {
    const LocalTensor<float> x = this->predict_.Acquire(tile);
    const LocalTensor<float> y = this->target_.Acquire(tile);
    this->weights_.Acquire(tile);
    const LocalTensor<float> out = this->output_.Alloc();
    const int32_t n = static_cast<int32_t>(tile.count);

    ComputeWithoutLimits(out, x, y, n);
    if (!AllFinite(out, n)) {
      ComputeWithLimits(out, x, y, tile);
    }

    this->output_.Push(out);
    this->ReleaseCommon();
  }

 private:
  // The loss with plain products. Every lane it leaves finite equals ComputeWithLimits' bit for bit: the limits
  // only act where a zero factor meets an infinite term, which leaves NaN here, and the roundings are the same
  // (min(x, 0) and -|x| are exact either way).
  __aicore__ inline void ComputeWithoutLimits(const LocalTensor<float> &out, const LocalTensor<float> &x,
                                              const LocalTensor<float> &y, int32_t n) {
    const LocalTensor<float> term = this->Scratch(0);
    const LocalTensor<float> factor = this->Scratch(1);
    const LocalTensor<float> softplus = this->Scratch(2);
    Maxs(out, x, 0.0f, n);
    Sub(term, x, out, n);         // min(x, 0), exact; NaN stays NaN whatever Maxs does with it
    Sub(softplus, term, out, n);  // -|x|, up to the sign of a zero, which Exp maps to 1 alike
    SoftplusInPlace(softplus, n);
    Sub(factor, Ones(), y, n);  // 1 - y rounded once, as -y + 1 is
    Mul(out, factor, out, n);
    if constexpr (HasPosWeight) {
      Mul(factor, this->weights_.posWeight, y, n);
      Mul(term, factor, term, n);
    } else {
      Mul(term, y, term, n);
    }
    Sub(out, out, term, n);
    if constexpr (HasPosWeight) {
      PosWeightFactor(factor, this->weights_.posWeight, y, n);
      Mul(softplus, softplus, factor, n);
    }
    Add(out, out, softplus, n);
    if constexpr (HasWeight) {
      Mul(out, this->weights_.weight, out, n);
    }
  }

  // True when no lane of the loss is infinite or NaN: their sum is finite only then. An overflowing sum, or
  // non-finite garbage in the UB lanes between the rows of a tile, only sends the tile to the limits.
  __aicore__ inline bool AllFinite(const LocalTensor<float> &loss, int32_t n) {
    const LocalTensor<float> sum = this->Scratch(0);
    ReduceSum(sum, loss, this->Scratch(1), n);
    // The scalar unit reads the sum from UB: it must wait until the vector pipe has written it.
    const int32_t event = static_cast<int32_t>(this->pipe_.FetchEventID(HardEvent::V_S));
    SetFlag<HardEvent::V_S>(event);
    WaitFlag<HardEvent::V_S>(event);
    const float total = sum.GetValue(0);
    return total >= -kFloatMax && total <= kFloatMax;
  }

  // At x = +-inf one term is infinite; where its factor is 0 (y = 1 at +inf, p * y = 0 at -inf, w = 0) the product
  // is the limit 0, as on the host backend.
  __aicore__ inline void ComputeWithLimits(const LocalTensor<float> &out, const LocalTensor<float> &x,
                                           const LocalTensor<float> &y, const TileSpan &tile) {
    const LocalTensor<float> term = this->Scratch(0);
    const LocalTensor<float> factor = this->Scratch(1);
    const LocalTensor<float> spare = this->Scratch(2);
    const LocalTensor<uint8_t> mask = mask_.Get<uint8_t>();
    const int32_t n = static_cast<int32_t>(tile.count);
    const uint32_t repeats = WholeFloatRepeats(tile.count);

    Maxs(out, x, 0.0f, n);
    Sub(factor, Ones(), y, n);
    ProductWithZeroLimit(out, factor, out, spare, mask, repeats);
    Mins(term, x, 0.0f, n);
    if constexpr (HasPosWeight) {
      Mul(factor, this->weights_.posWeight, y, n);
      ProductWithZeroLimit(term, factor, term, spare, mask, repeats);
    } else {
      ProductWithZeroLimit(term, y, term, spare, mask, repeats);
    }
    Sub(out, out, term, n);
    SoftplusOfNegAbs(term, x, n);  // finite: no limit needed
    if constexpr (HasPosWeight) {
      PosWeightFactor(factor, this->weights_.posWeight, y, n);
      Mul(term, term, factor, n);
    }
    Add(out, out, term, n);
    if constexpr (HasWeight) {
      ProductWithZeroLimit(out, this->weights_.weight, out, spare, mask, repeats);
    }
  }

  // Scratch tiles 0-2 hold a tile's terms; the last holds ones, written once per launch.
  __aicore__ inline LocalTensor<float> Ones() { return this->Scratch(kForwardScratchTiles - 1); }

  TBuf<QuePosition::VECCALC> mask_;  // one bit per element of a tile
};

}  // namespace bcewl

extern "C" __global__ __aicore__ void ms_bcewl_sigmoid_cross_entropy_with_logits(GM_ADDR predict, GM_ADDR target,
                                                                                 GM_ADDR weight, GM_ADDR pos_weight,
                                                                                 GM_ADDR loss, GM_ADDR workspace,
                                                                                 GM_ADDR tiling) {
  (void)workspace;  // the tiling asks for none
  // The op compiler sizes the launch's tiling by this struct; a static-shape binary carries its bytes itself.
  REGISTER_TILING_DEFAULT(bcewl::ForwardTilingData);
  GET_TILING_DATA_WITH_STRUCT(bcewl::ForwardTilingData, tilingData, tiling);
  BCEWL_DISPATCH_BY_TILING_KEY(bcewl::ForwardKernel, tilingData, predict, target, weight, pos_weight, loss)
}
