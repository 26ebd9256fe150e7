// SetFlag / WaitFlag, the synchronisation of two pipes of one core (basic_api/kernel_operator_block_sync_intf.h).
#ifndef MS_BCEWL_ASCENDC_SIM_SYNC_H_
#define MS_BCEWL_ASCENDC_SIM_SYNC_H_

#include <cstdint>

#include "ascendc_sim/context.h"

namespace AscendC {

template <HardEvent event>
void SetFlag(int32_t eventID) {
  sim::CurrentBlock().SetFlag(event, eventID);
}

template <HardEvent event>
void WaitFlag(int32_t eventID) {
  sim::CurrentBlock().WaitFlag(event, eventID);
}

}  // namespace AscendC

#endif  // MS_BCEWL_ASCENDC_SIM_SYNC_H_
