"""ascendc/op_host and op_kernel build in CANN's generated op project as they are.

MindSpore's custom_compiler and CANN's msopgen generate the "customize" op project, copy the files directly inside
op_host/ and op_kernel/ into it, and its opbuild step (cmake/func.cmake of the template in hicann/asc-tools,
utils/templates/op_project_templates/ascendc/customize) compiles every op_host source in one command:
``g++ -g -fPIC -shared -std=c++11 <op_host/*.cpp> -D_GLIBCXX_USE_CXX11_ABI=0 -I <cann>/include -I ../op_kernel``,
with no flag or define of ours and nothing else on the include path. This test repeats that command on such a
project, with the project's stand-ins for the CANN headers (ascendc/tests/cann_stand_in) as <cann>/include, and
checks that both op definitions are compiled in. The same sources against the vendor's real headers: ascendc/README.md.
"""
import os
import re
import shutil
import subprocess

import pytest

pytestmark = pytest.mark.source_tree

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASCENDC = os.path.join(REPO, "ascendc")
STAND_IN = os.path.join(ASCENDC, "tests", "cann_stand_in")
OP_DIRS = ("op_host", "op_kernel")
OP_TYPES = ("MsBcewlSigmoidCrossEntropyWithLogits", "MsBcewlSigmoidCrossEntropyWithLogitsGrad")
# What the sources may include besides each other: CANN's headers (host) and Ascend C (kernel).
VENDOR_HEADERS = {"register/op_def_registry.h", "tiling/platform/platform_ascendc.h", "kernel_operator.h"}
# Variables through which gcc itself reads include directories or options; the template passes none of ours.
COMPILER_ENVIRONMENT = ("CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH", "GCC_EXEC_PREFIX", "COMPILER_PATH")


def _lay_out_project(root):
    """A project as msopgen leaves it: flat copies of the files directly inside op_host/ and op_kernel/."""
    for name in OP_DIRS:
        os.makedirs(root / name)
        source = os.path.join(ASCENDC, name)
        for entry in sorted(os.listdir(source)):
            if os.path.isfile(os.path.join(source, entry)):
                shutil.copy(os.path.join(source, entry), root / name / entry)
    os.makedirs(root / "build_out" / "autogen")


def _opbuild_compile(root, compiler):
    """opbuild's compile of op_host, run where CMake runs it (op_host/'s CMakeLists directory)."""
    op_host = root / "op_host"
    sources = sorted(str(op_host / name) for name in os.listdir(op_host) if name.endswith(".cpp"))
    library = root / "build_out" / "autogen" / "libascend_all_ops.so"
    command = [compiler, "-g", "-fPIC", "-shared", "-std=c++11", *sources, "-D_GLIBCXX_USE_CXX11_ABI=0",
               "-I", STAND_IN, "-I", str(op_host / ".." / "op_kernel"), "-o", str(library)]
    env = {key: value for key, value in os.environ.items() if key not in COMPILER_ENVIRONMENT}
    result = subprocess.run(command, cwd=str(op_host), capture_output=True, text=True, env=env)
    return result, library


def test_op_host_builds_with_the_op_project_templates_flags_and_registers_both_ops(tmp_path):
    compiler = shutil.which("g++")
    if compiler is None or shutil.which("nm") is None:
        pytest.skip("g++ and nm are needed to compile op_host as CANN's op project does")
    _lay_out_project(tmp_path)
    result, library = _opbuild_compile(tmp_path, compiler)
    assert result.returncode == 0, result.stderr[-6000:]
    symbols = subprocess.run(["nm", "-C", str(library)], capture_output=True, text=True, check=True).stdout
    for op_type in OP_TYPES:  # OP_ADD's registration variable: the OpDef is compiled in
        assert re.search(r"\bg_%s_added\b" % op_type, symbols), f"{op_type} is not registered"


def _includes(path):
    with open(path) as source:
        return re.findall(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', source.read(), re.MULTILINE)


def test_op_sources_include_only_each_other_vendor_headers_and_the_standard_library():
    local = {name for folder in OP_DIRS for name in os.listdir(os.path.join(ASCENDC, folder))}
    for folder in OP_DIRS:
        for name in sorted(os.listdir(os.path.join(ASCENDC, folder))):
            for header in _includes(os.path.join(ASCENDC, folder, name)):
                standard = "/" not in header and "." not in header
                assert header in local or header in VENDOR_HEADERS or standard, f"{folder}/{name}: {header}"


def test_the_stand_ins_declare_only_headers_op_host_includes():
    used = {header for name in os.listdir(os.path.join(ASCENDC, "op_host"))
            for header in _includes(os.path.join(ASCENDC, "op_host", name))}
    stand_ins = {os.path.relpath(os.path.join(directory, name), STAND_IN)
                 for directory, _, names in os.walk(STAND_IN) for name in names if name.endswith(".h")}
    assert stand_ins - {"graph/types.h"} <= used, "a stand-in header nothing in op_host includes"


def test_the_op_package_is_built_for_atlas_a2_and_a3_in_every_opdef_and_the_build():
    """Atlas A2 (ascend910b, the SoC of the vendor's own 910B kernels of this loss) and A3 (ascend910_93), whose
    AI core runs every instruction the kernels use; not ascend950, where Div, Exp, Ln and DataCopyPad GM -> UB
    of the kind the kernels call are documented as unsupported."""
    with open(os.path.join(ASCENDC, "op_host", "bcewl_cann_host.h")) as header:
        socs = re.search(r"kSocVersions\[\] = \{([^}]*)\}", header.read()).group(1)
    assert re.findall(r'"(\w+)"', socs) == ["ascend910b", "ascend910_93"]
    for name in os.listdir(os.path.join(ASCENDC, "op_host")):
        if name.endswith("_def.cpp"):
            with open(os.path.join(ASCENDC, "op_host", name)) as source:
                text = source.read()
            assert "AddSocConfigs(this->AICore()" in text and "AddConfig(" not in text, name
    with open(os.path.join(ASCENDC, "CMakeLists.txt")) as cmake:
        default = re.search(r'set\(MS_BCEWL_OPP_SOC "([^"]*)"', cmake.read()).group(1)
    assert default == "ascend910b;ascend910_93"
