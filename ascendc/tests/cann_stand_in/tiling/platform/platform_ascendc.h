// Stand-in for CANN's tiling/platform/platform_ascendc.h: the platform queries op_host makes.
#ifndef MS_BCEWL_CANN_STAND_IN_TILING_PLATFORM_PLATFORM_ASCENDC_H_
#define MS_BCEWL_CANN_STAND_IN_TILING_PLATFORM_PLATFORM_ASCENDC_H_

#include <cstdint>

namespace fe {
class PlatFormInfos;
}  // namespace fe

namespace platform_ascendc {

enum class CoreMemType { UB = 5 };

class PlatformAscendC {
 public:
  explicit PlatformAscendC(fe::PlatFormInfos *platformInfo) : platformInfo_(platformInfo) {}
  uint32_t GetCoreNumAiv() const;
  void GetCoreMemSize(const CoreMemType &memType, uint64_t &size) const;

 private:
  fe::PlatFormInfos *platformInfo_;
};

}  // namespace platform_ascendc

#endif  // MS_BCEWL_CANN_STAND_IN_TILING_PLATFORM_PLATFORM_ASCENDC_H_
