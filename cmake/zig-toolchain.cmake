# Cross / retargeting toolchain for the wheels: `zig c++` compiles and links against the stubs of an old glibc and
# links its own libc++ statically, so libms_bcewl.so needs nothing newer than the manylinux policy of that glibc.
#
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/zig-toolchain.cmake -DMS_BCEWL_ZIG=/path/to/zig \
#         -DMS_BCEWL_ZIG_TARGET=aarch64-linux-gnu.2.28 ...
#
# setup.py passes both when MS_BCEWL_WHEEL_TARGET is set (the zig binary of the PyPI package ziglang).
set(MS_BCEWL_ZIG "" CACHE FILEPATH "The zig executable")
set(MS_BCEWL_ZIG_TARGET "x86_64-linux-gnu.2.28" CACHE STRING "zig's target triple with the glibc version")
if(NOT MS_BCEWL_ZIG)
  message(FATAL_ERROR "zig-toolchain.cmake needs -DMS_BCEWL_ZIG=<the zig executable>")
endif()
# try_compile runs this file again in projects of its own: they need the same two settings.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES MS_BCEWL_ZIG MS_BCEWL_ZIG_TARGET)

string(REGEX MATCH "^[^-]+" MS_BCEWL_ZIG_ARCH "${MS_BCEWL_ZIG_TARGET}")
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${MS_BCEWL_ZIG_ARCH})
set(CMAKE_C_COMPILER "${MS_BCEWL_ZIG}" cc)
set(CMAKE_CXX_COMPILER "${MS_BCEWL_ZIG}" c++)
set(CMAKE_C_COMPILER_TARGET ${MS_BCEWL_ZIG_TARGET})
set(CMAKE_CXX_COMPILER_TARGET ${MS_BCEWL_ZIG_TARGET})
# zig's static libc++ and compiler-rt bring about 20 MB of debug information, stripped, and export operator
# delete, kept local by zig-hidden-runtime.map (zig's linker has no --exclude-libs).
set(CMAKE_SHARED_LINKER_FLAGS_INIT
    "-Wl,--strip-debug -Wl,--version-script=${CMAKE_CURRENT_LIST_DIR}/zig-hidden-runtime.map")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--strip-debug")
