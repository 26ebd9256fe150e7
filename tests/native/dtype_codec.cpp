// The tests' own float16 / bfloat16 codecs, independent of the library's bit manipulation: decoding evaluates
// the IEEE formula with ldexp; encoding looks the value up in a sorted table of every finite 16-bit pattern.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <utility>
#include <vector>

#include "host_tensor.h"

namespace test {
namespace {

// A 16-bit IEEE-style binary format: sign, then 15 - mantissa_bits exponent bits, then the mantissa.
double DecodeBinary16(uint16_t bits, int mantissa_bits) {
  const int exponent_bits = 15 - mantissa_bits;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const int sign = (bits >> 15) ? -1 : 1;
  const int exponent = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1);
  const int mantissa = bits & ((1 << mantissa_bits) - 1);
  if (exponent == (1 << exponent_bits) - 1) {
    return mantissa == 0 ? sign * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  }
  if (exponent == 0) {
    return sign * std::ldexp(mantissa, 1 - bias - mantissa_bits);
  }
  return sign * std::ldexp((1 << mantissa_bits) + mantissa, exponent - bias - mantissa_bits);
}

double DecodeHalf(uint16_t bits) { return DecodeBinary16(bits, 10); }

double DecodeBFloat16(uint16_t bits) { return DecodeBinary16(bits, 7); }

using Decoder = double (*)(uint16_t);

// Every finite non-negative value of a 16-bit format with its bits, sorted by value.
class EncodingTable {
 public:
  EncodingTable(Decoder decode, uint16_t infinity_bits, uint16_t quiet_nan_bits)
      : infinity_bits_(infinity_bits), quiet_nan_bits_(quiet_nan_bits) {
    for (uint32_t bits = 0; bits < 0x8000u; ++bits) {
      const double value = decode(static_cast<uint16_t>(bits));
      if (std::isfinite(value)) {
        entries_.emplace_back(value, static_cast<uint16_t>(bits));
      }
    }
    std::sort(entries_.begin(), entries_.end());
  }

  uint16_t Encode(double value) const {
    if (std::isnan(value)) {
      return quiet_nan_bits_;
    }
    const uint16_t sign = std::signbit(value) ? 0x8000u : 0;
    return static_cast<uint16_t>(sign | EncodeMagnitude(std::fabs(value)));
  }

 private:
  uint16_t EncodeMagnitude(double magnitude) const {
    const auto above = std::lower_bound(entries_.begin(), entries_.end(), std::make_pair(magnitude, uint16_t{0}));
    if (above == entries_.begin()) {
      return above->second;
    }
    const auto below = std::prev(above);
    if (above == entries_.end()) {
      // Beyond the largest finite value: the rounding boundary is half a step above it.
      const double step = below->first - std::prev(below)->first;
      return magnitude < below->first + step / 2 ? below->second : infinity_bits_;
    }
    const double to_below = magnitude - below->first;
    const double to_above = above->first - magnitude;
    if (to_below != to_above) {
      return to_below < to_above ? below->second : above->second;
    }
    return (below->second & 1u) == 0 ? below->second : above->second;
  }

  std::vector<std::pair<double, uint16_t>> entries_;
  uint16_t infinity_bits_;
  uint16_t quiet_nan_bits_;
};

const EncodingTable &HalfTable() {
  static const EncodingTable table(DecodeHalf, 0x7C00, 0x7E00);
  return table;
}

const EncodingTable &BFloat16Table() {
  static const EncodingTable table(DecodeBFloat16, 0x7F80, 0x7FC0);
  return table;
}

}  // namespace

size_t DtypeBytes(aclDataType dtype) {
  switch (dtype) {
    case ACL_FLOAT16:
    case ACL_BF16:
      return 2;
    case ACL_DOUBLE:
    case ACL_INT64:
      return 8;
    default:
      return 4;
  }
}

double DecodeElement(const void *data, int64_t index, aclDataType dtype) {
  if (dtype == ACL_FLOAT) {
    float value;
    std::memcpy(&value, static_cast<const char *>(data) + index * 4, 4);
    return value;
  }
  uint16_t bits;
  std::memcpy(&bits, static_cast<const char *>(data) + index * 2, 2);
  return dtype == ACL_FLOAT16 ? DecodeHalf(bits) : DecodeBFloat16(bits);
}

void EncodeElement(void *data, int64_t index, aclDataType dtype, double value) {
  if (dtype == ACL_FLOAT) {
    const float narrowed = static_cast<float>(value);
    std::memcpy(static_cast<char *>(data) + index * 4, &narrowed, 4);
    return;
  }
  const uint16_t bits = (dtype == ACL_FLOAT16 ? HalfTable() : BFloat16Table()).Encode(value);
  std::memcpy(static_cast<char *>(data) + index * 2, &bits, 2);
}

double RoundToDtype(double value, aclDataType dtype) {
  uint64_t word = 0;
  EncodeElement(&word, 0, dtype, value);
  return DecodeElement(&word, 0, dtype);
}

}  // namespace test
