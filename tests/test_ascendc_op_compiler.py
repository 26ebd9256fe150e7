"""The kernels' tiling struct, as CANN's op compiler finds and sizes it.

The op compiler (asc-devkit, tools/build/asc_op_compile_base/asc_op_compiler) preprocesses each kernel with
``-D__CHECK_FEATURE_AT_PRECOMPILE``, where ``REGISTER_TILING_DEFAULT(S)`` reads ``__enable_custom_tiling S =
default;``, takes S as the kernel's tiling struct (kernel_info_infer.py), and then reads sizeof(S) from the compiled
object's section ``.ascendc_tiling.S`` (compile_op.py); the kernel's json gets that size plus 8 as opParaSize, which
bounds the tiling buffer GE gives the TilingFunc. A kernel that registers nothing gets a tiling size of 0 and its
TilingFunc no room for the struct. These tests repeat both steps on the kernels compiled against the project's
simulation of kernel_operator.h (ascendc/sim), whose REGISTER_TILING_DEFAULT expands as CANN's does in both passes.
"""
import os
import re
import shutil
import struct
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASCENDC = os.path.join(REPO, "ascendc")
KERNELS = {"ms_bcewl_sigmoid_cross_entropy_with_logits.cpp": "bcewl::ForwardTilingData",
           "ms_bcewl_sigmoid_cross_entropy_with_logits_grad.cpp": "bcewl::GradTilingData"}
# The op compiler's pattern for a default tiling struct in the preprocessed source.
DEFAULT_TILING = re.compile(r"__enable_custom_tiling\s*([0-9a-zA-Z_:<>]{1,})\s*=\s*default;")


def _compiler():
    compiler = shutil.which("g++")
    if compiler is None or shutil.which("objcopy") is None:
        pytest.skip("g++ and objcopy are needed to compile the kernels")
    return compiler


def _compile(compiler, source, *args):
    command = [compiler, "-std=c++17", "-O0", "-I", os.path.join(ASCENDC, "sim"), "-I",
               os.path.join(ASCENDC, "op_kernel"), os.path.join(ASCENDC, "op_kernel", source), *args]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-4000:]
    return result.stdout


def _struct_sizes(compiler, tmp_path):
    """sizeof of each tiling struct, as the host tiling (which includes the same header) sees it."""
    program = tmp_path / "sizes.cpp"
    program.write_text('#include <cstdio>\n#include "bcewl_tiling_data.h"\nint main() {\n' + "".join(
        f'  std::printf("%zu\\n", sizeof({name}));\n' for name in KERNELS.values()) + "}\n")
    binary = tmp_path / "sizes"
    subprocess.run([compiler, "-std=c++11", "-I", os.path.join(ASCENDC, "op_kernel"), str(program), "-o", str(binary)],
                   check=True)
    sizes = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout.split()
    return dict(zip(KERNELS.values(), map(int, sizes)))


@pytest.mark.parametrize("source", sorted(KERNELS))
def test_the_preprocessing_pass_finds_one_default_tiling_struct(source):
    preprocessed = _compile(_compiler(), source, "-E", "-D__CHECK_FEATURE_AT_PRECOMPILE")
    assert DEFAULT_TILING.findall(preprocessed) == [KERNELS[source]]


@pytest.mark.parametrize("source", sorted(KERNELS))
def test_the_object_records_the_size_of_the_struct_the_host_tiling_writes(source, tmp_path):
    compiler = _compiler()
    obj = tmp_path / "kernel.o"
    _compile(compiler, source, "-c", "-o", str(obj))
    section = ".ascendc_tiling." + KERNELS[source]
    dump = tmp_path / "section.bin"
    subprocess.run(["objcopy", "-O", "binary", "--only-section=" + section, str(obj), str(dump)], check=True)
    recorded = dump.read_bytes()
    assert len(recorded) == 8, f"{section}: {len(recorded)} bytes"
    assert struct.unpack("<Q", recorded)[0] == _struct_sizes(compiler, tmp_path)[KERNELS[source]]
