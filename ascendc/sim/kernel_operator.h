// Host simulation of the subset of the Ascend C API (CANN's kernel_operator.h, namespace AscendC) that the
// ms_bcewl kernels use. Same names and signatures; every rule the NPU would punish silently or with a hang
// (DataCopy sizes, UB capacity and alignment, queue protocol, tensor bounds) throws AscendC::SimViolation.
#ifndef MS_BCEWL_ASCENDC_SIM_KERNEL_OPERATOR_H_
#define MS_BCEWL_ASCENDC_SIM_KERNEL_OPERATOR_H_

#include <cstdint>

#define __global__
#define __aicore__
#define __gm__
#define GM_ADDR __gm__ uint8_t *

#include "ascendc_sim/context.h"
#include "ascendc_sim/data_copy.h"
#include "ascendc_sim/launch.h"
#include "ascendc_sim/pipe.h"
#include "ascendc_sim/sync.h"
#include "ascendc_sim/tensor.h"
#include "ascendc_sim/tiling_data.h"
#include "ascendc_sim/tiling_key.h"
#include "ascendc_sim/types.h"
#include "ascendc_sim/vector_math.h"

#endif  // MS_BCEWL_ASCENDC_SIM_KERNEL_OPERATOR_H_
