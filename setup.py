"""Builds libms_bcewl.so with CMake (aclnn_adapter/CMakeLists.txt) and ships it inside the package.

The library is declared as an Extension so that both `pip install .` and `pip install -e .` build it; its
file name is fixed to ms_bcewl/lib/libms_bcewl.so because MindSpore loads it by path, not as a Python module.

With MS_BCEWL_BUILD_ASCEND=1 and a CANN toolkit (ASCEND_HOME_PATH or ASCEND_TOOLKIT_HOME), it also builds the
custom op package with ascendc/CMakeLists.txt and ships its installer as ms_bcewl/lib/ms_bcewl_op_package.run
(ascendc/README.md; never run: no CANN toolkit was available where this was written). The host build never needs
CANN.
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
LIBRARY_NAME = "libms_bcewl.so"
ASCEND_OPT_IN = "MS_BCEWL_BUILD_ASCEND"
TOOLKIT_VARIABLES = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")
# A toolkit root holds the compiler and the libraries (and set_env.sh exports its path as ASCEND_HOME_PATH).
TOOLKIT_MARKERS = ("compiler", "lib64")
OP_PACKAGE_HEADER = "op_api/include/aclnn_ms_bcewl_sigmoid_cross_entropy_with_logits.h"
OP_PACKAGE_STEM = "ms_bcewl_op_package"
PYBOOST_SOURCE = ROOT / "aclnn_adapter" / "src" / "mindspore" / "mindspore_entries.cpp"
PYBOOST_HEADER_FOLDERS = ("acl", "aclnn", "aclnnop", "ms_bcewl")
# What CMake records of the build (aclnn_adapter/CMakeLists.txt), shipped beside the library for `ms-bcewl info`.
BUILD_RECORD_NAME = "libms_bcewl.build.json"
WHEEL_TARGET = "MS_BCEWL_WHEEL_TARGET"
WHEEL_MACHINES = ("x86_64", "aarch64")
# The glibc of the oldest hosts MindSpore supports (CentOS 8 and openEuler 20.03 have 2.28): manylinux_2_28.
WHEEL_GLIBC = "2.28"
ZIG_TOOLCHAIN = ROOT / "cmake" / "zig-toolchain.cmake"


def find_cann_toolkit(environ):
    """The first of ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME that names a CANN toolkit directory, else None."""
    for variable in TOOLKIT_VARIABLES:
        path = environ.get(variable)
        if path and any((Path(path) / marker).is_dir() for marker in TOOLKIT_MARKERS):
            return Path(path)
    return None


def ascend_build_toolkit(environ):
    """(toolkit, reason): the toolkit to build the Ascend parts with, or None and why they are not built."""
    if environ.get(ASCEND_OPT_IN) != "1":
        return None, f"{ASCEND_OPT_IN} is not 1"
    toolkit = find_cann_toolkit(environ)
    if toolkit is None:
        return None, (f"{ASCEND_OPT_IN}=1 but neither {' nor '.join(TOOLKIT_VARIABLES)} names a directory with "
                      f"{' or '.join(name + '/' for name in TOOLKIT_MARKERS)}")
    return toolkit, f"CANN toolkit {toolkit}"


def find_built_op_package(build_dir):
    """The installer of the op package that ascendc's ms_bcewl_op_package target built.

    The paths are those of CANN's op-project template as documented (ascendc/README.md), not verified.
    """
    headers = sorted(Path(build_dir).glob(f"op_package/**/vendors/ms_bcewl/{OP_PACKAGE_HEADER}"))
    installers = sorted(Path(build_dir).glob("op_package/**/build_out/custom_opp_*.run"))
    if not headers or not installers:
        raise RuntimeError(f"ms_bcewl: the op package build left no vendors/ms_bcewl/{OP_PACKAGE_HEADER} or "
                           f"build_out/custom_opp_*.run under {build_dir}/op_package")
    return installers[0]


def wheel_machine(environ):
    """The machine of the manylinux wheel to build (MS_BCEWL_WHEEL_TARGET), or None for a build for this one."""
    machine = environ.get(WHEEL_TARGET)
    if not machine:
        return None
    if machine not in WHEEL_MACHINES:
        raise RuntimeError(f"ms_bcewl: {WHEEL_TARGET}={machine!r}; expected one of {', '.join(WHEEL_MACHINES)}")
    return machine


def wheel_platform_tag(machine):
    return f"manylinux_{WHEEL_GLIBC.replace('.', '_')}_{machine}"


def _zig_executable():
    try:
        import ziglang  # the PyPI package, added to the build requirements by build_backend/
        return str(Path(ziglang.__file__).parent / "zig")
    except ImportError:
        found = shutil.which("zig")
        if found is None:
            raise RuntimeError(f"ms_bcewl: {WHEEL_TARGET} needs zig: pip install ziglang") from None
        return found


def toolchain_arguments(environ):
    """CMake's arguments for the compiler: none (the machine's g++ as CMake finds it), or zig retargeted to the
    wheel's machine and glibc."""
    machine = wheel_machine(environ)
    if machine is None:
        return []
    return [f"-DCMAKE_TOOLCHAIN_FILE={ZIG_TOOLCHAIN}", f"-DMS_BCEWL_ZIG={_zig_executable()}",
            f"-DMS_BCEWL_ZIG_TARGET={machine}-linux-gnu.{WHEEL_GLIBC}",
            f"-DMS_BCEWL_BUILD_KIND=wheel {wheel_platform_tag(machine)}"]


def _cmake_executable():
    try:
        import cmake  # the PyPI package, from the build requirements
        return str(Path(cmake.CMAKE_BIN_DIR) / "cmake")
    except ImportError:
        found = shutil.which("cmake")
        if found is None:
            raise RuntimeError("ms_bcewl needs CMake to build its native library: pip install cmake") from None
        return found


def _build_jobs():
    # CMake's own variable, so that a build beside other work (a CI run, a version matrix) can take fewer cores.
    return os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)


def ship_pyboost_sources(library_dir):
    """The PyNative pyboost module's source and the aclnn headers it includes, beside the library: MindSpore's
    CustomOpBuilder compiles them on the user's machine (ms_bcewl/_pyboost.py)."""
    shutil.copy2(PYBOOST_SOURCE, library_dir / PYBOOST_SOURCE.name)
    for folder in PYBOOST_HEADER_FOLDERS:
        shutil.copytree(ROOT / "aclnn_adapter" / "include" / folder, library_dir / "include" / folder,
                        dirs_exist_ok=True)


class NativeLibrary(Extension):
    """libms_bcewl.so, the host library (aclnn_adapter/CMakeLists.txt, target ms_bcewl)."""

    def __init__(self, name, source_dir):
        super().__init__(name, sources=[])
        self.source_dir = source_dir

    def build_into(self, destination, cmake):
        with tempfile.TemporaryDirectory(prefix="ms_bcewl_build_") as build_dir:
            subprocess.run([cmake, "-S", str(self.source_dir), "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                            *toolchain_arguments(os.environ)], check=True)
            subprocess.run([cmake, "--build", build_dir, "--target", "ms_bcewl", "-j", _build_jobs()], check=True)
            built = next(Path(build_dir).rglob(LIBRARY_NAME))
            shutil.copy2(built, destination)
            shutil.copy2(built.parent / BUILD_RECORD_NAME, destination.parent / BUILD_RECORD_NAME)
        ship_pyboost_sources(destination.parent)


class OpPackage(NativeLibrary):
    """The CANN op package's installer (ascendc/CMakeLists.txt with a CANN toolkit)."""

    def __init__(self, name, source_dir, toolkit):
        super().__init__(name, source_dir)
        self.toolkit = toolkit

    def build_into(self, destination, cmake):
        with tempfile.TemporaryDirectory(prefix="ms_bcewl_ascend_build_") as build_dir:
            subprocess.run([cmake, "-S", str(self.source_dir), "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                            "-DMS_BCEWL_ASCENDC_SIM_TESTS=OFF", f"-DASCEND_HOME_PATH={self.toolkit}",
                            f"-DPython3_EXECUTABLE={sys.executable}"], check=True)
            subprocess.run([cmake, "--build", build_dir, "--target", OP_PACKAGE_STEM], check=True)
            shutil.copy2(find_built_op_package(build_dir), destination)


def native_libraries(environ):
    """The Extensions to build: the host library, and the op package where ascend_build_toolkit chooses it."""
    libraries = [NativeLibrary("ms_bcewl.lib.libms_bcewl", ROOT / "aclnn_adapter")]
    toolkit, reason = ascend_build_toolkit(environ)
    if ASCEND_OPT_IN in environ:
        print(f"ms_bcewl: Ascend parts {'built' if toolkit else 'not built'}: {reason}", file=sys.stderr)
    if toolkit is not None:
        libraries.append(OpPackage(f"ms_bcewl.lib.{OP_PACKAGE_STEM}", ROOT / "ascendc", toolkit))
    return libraries


class BuildNativeLibrary(build_ext):
    def get_ext_filename(self, fullname):
        suffix = ".run" if fullname.endswith(OP_PACKAGE_STEM) else ".so"
        return os.path.join(*fullname.split(".")) + suffix

    def build_extension(self, ext):
        destination = Path(self.get_ext_fullpath(ext.name)).resolve()
        destination.parent.mkdir(parents=True, exist_ok=True)
        ext.build_into(destination, _cmake_executable())

    def copy_file(self, infile, outfile, *args, **kwargs):
        """--inplace copies each built file into the source package, whose lib/ git does not hold: made here. The
        library's pyboost sources go with it, as build_into puts them beside it."""
        Path(outfile).parent.mkdir(parents=True, exist_ok=True)
        copied = super().copy_file(infile, outfile, *args, **kwargs)
        if Path(outfile).name == LIBRARY_NAME:
            ship_pyboost_sources(Path(outfile).parent)
            record = Path(infile).parent / BUILD_RECORD_NAME  # (build_into writes it; ms-bcewl info reads it)
            if record.is_file():
                shutil.copy2(record, Path(outfile).parent / BUILD_RECORD_NAME)
        return copied


def manylinux_wheel_command():
    """setuptools' bdist_wheel (imported here: setuptools has it from 70.1, which the build requires, and the tests
    import this file beside older ones), tagging a wheel built with MS_BCEWL_WHEEL_TARGET for every Python (the
    library is no Python extension: MindSpore and ctypes load it by path) and for the glibc it was linked against."""
    from setuptools.command.bdist_wheel import bdist_wheel

    class ManylinuxWheel(bdist_wheel):
        def get_tag(self):
            machine = wheel_machine(os.environ)
            return ("py3", "none", wheel_platform_tag(machine)) if machine else super().get_tag()

    return ManylinuxWheel


if __name__ == "__main__":  # setuptools' build backend runs this file as __main__; tests import it
    setup(
        ext_modules=native_libraries(os.environ),
        cmdclass={"build_ext": BuildNativeLibrary, "bdist_wheel": manylinux_wheel_command()},
    )
