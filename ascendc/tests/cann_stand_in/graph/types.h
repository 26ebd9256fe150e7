// Stand-in for CANN's graph/types.h and graph/error_codes.h: the types op_host names (values as in CANN).
#ifndef MS_BCEWL_CANN_STAND_IN_GRAPH_TYPES_H_
#define MS_BCEWL_CANN_STAND_IN_GRAPH_TYPES_H_

#include <cstdint>

namespace ge {

using graphStatus = uint32_t;
const graphStatus GRAPH_SUCCESS = 0;
const graphStatus GRAPH_FAILED = 0xFFFFFFFF;

enum DataType { DT_FLOAT = 0, DT_FLOAT16 = 1, DT_BF16 = 27 };
enum Format { FORMAT_ND = 2 };

}  // namespace ge

#endif  // MS_BCEWL_CANN_STAND_IN_GRAPH_TYPES_H_
