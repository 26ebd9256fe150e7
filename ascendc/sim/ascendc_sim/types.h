// The two 16-bit float types of Ascend C, as bit containers with round-to-nearest-even conversion from float.
#ifndef MS_BCEWL_ASCENDC_SIM_TYPES_H_
#define MS_BCEWL_ASCENDC_SIM_TYPES_H_

#include <cstdint>

namespace AscendC {
namespace sim {

uint16_t FloatToHalfBits(float value);
float HalfBitsToFloat(uint16_t bits);
uint16_t FloatToBFloat16Bits(float value);
float BFloat16BitsToFloat(uint16_t bits);

}  // namespace sim
}  // namespace AscendC

// On the NPU `half` is a compiler type and `bfloat16_t` a typedef of one; both live in the global namespace.
struct half {
  uint16_t bits = 0;
  half() = default;
  explicit half(float value) : bits(AscendC::sim::FloatToHalfBits(value)) {}
  explicit operator float() const { return AscendC::sim::HalfBitsToFloat(bits); }
};

struct bfloat16_t {
  uint16_t bits = 0;
  bfloat16_t() = default;
  explicit bfloat16_t(float value) : bits(AscendC::sim::FloatToBFloat16Bits(value)) {}
  explicit operator float() const { return AscendC::sim::BFloat16BitsToFloat(bits); }
};

static_assert(sizeof(half) == 2 && sizeof(bfloat16_t) == 2, "16-bit float types must be 2 bytes");

namespace AscendC {

inline float ToFloat(const bfloat16_t &value) { return static_cast<float>(value); }

}  // namespace AscendC

#endif  // MS_BCEWL_ASCENDC_SIM_TYPES_H_
