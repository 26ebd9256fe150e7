// Enum arguments of the C ABI. CANN's headers declare them as enums, and a C caller may pass any int; but in C++,
// loading an enum outside the values it can hold (the smallest bit-field that holds its enumerators) is undefined.
// So an entry point reads such an argument as the int it was passed as, checks the code, and only then converts it.
#ifndef MS_BCEWL_RUNTIME_ABI_ENUM_H_
#define MS_BCEWL_RUNTIME_ABI_ENUM_H_

#include <cstdint>
#include <cstring>

namespace ms_bcewl {

// The int a caller passed as *argument, read without loading it as the enum.
template <typename Enum>
int32_t AbiEnumCode(const Enum *argument) {
  static_assert(sizeof(Enum) == sizeof(int32_t), "the enums of the C ABI are int-sized");
  int32_t code = 0;
  std::memcpy(&code, argument, sizeof(code));
  return code;
}

}  // namespace ms_bcewl

#endif  // MS_BCEWL_RUNTIME_ABI_ENUM_H_
