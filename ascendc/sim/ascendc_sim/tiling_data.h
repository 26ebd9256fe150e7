// How a kernel gets its tiling struct, as CANN's op compiler arranges it. REGISTER_TILING_DEFAULT(S) names the
// struct the tiling carries: the op compiler finds it in the preprocessed source and reads sizeof(S) from the
// object's ".ascendc_tiling.S" section, which sizes the tiling buffer of every launch. GET_TILING_DATA_WITH_STRUCT
// then gives the kernel its copy: from the tiling argument for a dynamic-shape binary, from bytes compiled into
// the kernel for a static-shape one, whose launch passes no tiling pointer at all.
#ifndef MS_BCEWL_ASCENDC_SIM_TILING_DATA_H_
#define MS_BCEWL_ASCENDC_SIM_TILING_DATA_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ascendc_sim/context.h"

namespace AscendC {
namespace sim {

// The tiling bytes of a static-shape launch (SimLaunchConfig::staticTiling), or null for a dynamic one.
const std::vector<uint8_t> *StaticTiling();

// Checks that the current block registered the struct `name` of `bytes` bytes and returns where its tiling comes
// from: the static bytes, or `tiling` (which must then be given).
const uint8_t *TilingSource(const char *name, size_t bytes, const uint8_t *tiling);

template <typename TilingStruct>
TilingStruct ReadTiling(const char *name, const uint8_t *tiling) {
  TilingStruct data;
  std::memcpy(&data, TilingSource(name, sizeof(TilingStruct), tiling), sizeof(TilingStruct));
  return data;
}

}  // namespace sim
}  // namespace AscendC

#define BCEWL_SIM_CONCAT_IMPL(a, b) a##b
#define BCEWL_SIM_CONCAT(a, b) BCEWL_SIM_CONCAT_IMPL(a, b)

#ifdef __CHECK_FEATURE_AT_PRECOMPILE
// What the op compiler's preprocessing pass looks for (it never compiles this).
#define REGISTER_TILING_DEFAULT(tiling_struct) auto __enable_custom_tiling tiling_struct = default
#else
#define REGISTER_TILING_DEFAULT(tiling_struct)                                                   \
  static const uint64_t BCEWL_SIM_CONCAT(bcewlSimTilingSize, __COUNTER__)                        \
      __attribute__((used, section(".ascendc_tiling." #tiling_struct))) = sizeof(tiling_struct); \
  ::AscendC::sim::CurrentBlock().RegisterTiling(#tiling_struct, sizeof(tiling_struct))
#endif

#define GET_TILING_DATA_WITH_STRUCT(tiling_struct, tiling_data, tiling_arg) \
  const tiling_struct tiling_data = ::AscendC::sim::ReadTiling<tiling_struct>(#tiling_struct, tiling_arg)

#endif  // MS_BCEWL_ASCENDC_SIM_TILING_DATA_H_
