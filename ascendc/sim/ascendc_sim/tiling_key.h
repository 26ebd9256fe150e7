// The tiling key of a launch. On the NPU each key is a separately compiled kernel (TILING_KEY_VAR defined to the
// key); here, as in CANN's CPU debug mode (ICPU_SET_TILING_KEY), one binary reads the key the launch was given.
#ifndef MS_BCEWL_ASCENDC_SIM_TILING_KEY_H_
#define MS_BCEWL_ASCENDC_SIM_TILING_KEY_H_

#include <cstdint>

namespace AscendC {

inline uint64_t g_simTilingKey = 0;

// What TilingFunc's SetTilingKey gives the runtime: the key of every launch that follows.
inline void SimSetTilingKey(uint64_t key) { g_simTilingKey = key; }

}  // namespace AscendC

#define TILING_KEY_VAR ::AscendC::g_simTilingKey
#define TILING_KEY_IS(k) (TILING_KEY_VAR == (k))

#endif  // MS_BCEWL_ASCENDC_SIM_TILING_KEY_H_
