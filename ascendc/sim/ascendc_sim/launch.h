// Runs a kernel on the host: the blocks one after another, each with its own UB and its GetBlockIdx().
#ifndef MS_BCEWL_ASCENDC_SIM_LAUNCH_H_
#define MS_BCEWL_ASCENDC_SIM_LAUNCH_H_

#include <cstdint>
#include <vector>

#include "ascendc_sim/context.h"

namespace AscendC {

inline int64_t GetBlockIdx() { return sim::CurrentBlock().BlockIdx(); }
inline int64_t GetBlockNum() { return sim::CurrentBlock().BlockNum(); }

struct SimLaunchConfig {
  uint32_t blockDim = 1;
  uint32_t ubBytes = sim::kAscend910bUbBytes;
  // Set: a static-shape launch, whose binary carries these tiling bytes and whose tiling argument is null.
  const std::vector<uint8_t> *staticTiling = nullptr;
};

// Like ICPU_RUN_KF: runs kernel(args...) for block 0 .. blockDim-1. A broken rule throws SimViolation.
template <typename... Params, typename... Args>
void SimLaunch(const SimLaunchConfig &config, void (*kernel)(Params...), Args... args) {
  sim::BeginLaunch(config.blockDim, config.staticTiling);
  for (uint32_t block = 0; block < config.blockDim; ++block) {
    sim::BlockScope scope(block, config.blockDim, config.ubBytes);
    kernel(args...);
    scope.Finish();
  }
}

template <typename... Params, typename... Args>
void SimLaunch(void (*kernel)(Params...), uint32_t blockDim, Args... args) {
  SimLaunchConfig config;
  config.blockDim = blockDim;
  SimLaunch(config, kernel, args...);
}

}  // namespace AscendC

#endif  // MS_BCEWL_ASCENDC_SIM_LAUNCH_H_
