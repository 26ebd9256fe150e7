#!/usr/bin/env bash
# Builds the aclnn example with g++ against aclnn_adapter/include and libms_bcewl.so.
#   MS_BCEWL_LIB_DIR=<dir with libms_bcewl.so>  use an existing library (otherwise it is built with CMake)
#   OUT=<path of the executable>                default: ./build/bce_with_logits_example next to this script
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
adapter="${here}/../../aclnn_adapter"
out="${OUT:-${here}/build/bce_with_logits_example}"
lib_dir="${MS_BCEWL_LIB_DIR:-}"
if [[ -z "${lib_dir}" ]]; then
  lib_dir="${here}/build/lib"
  cmake -S "${adapter}" -B "${lib_dir}" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "${lib_dir}" >/dev/null
fi
mkdir -p "$(dirname "${out}")"
g++ -std=c++17 -O2 -Wall -Wextra -I "${adapter}/include" "${here}/bce_with_logits_example.cpp" \
  -L "${lib_dir}" -lms_bcewl -Wl,-rpath,"${lib_dir}" -o "${out}"
echo "built ${out}; run it with: ${out}"
