"""Builds libms_bcewl.so with CMake (aclnn_adapter/CMakeLists.txt) and ships it inside the package.

The library is declared as an Extension so that both `pip install .` and `pip install -e .` build it; its
file name is fixed to ms_bcewl/lib/libms_bcewl.so because MindSpore loads it by path, not as a Python module.
"""
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
LIBRARY_NAME = "libms_bcewl.so"


def _cmake_executable():
    try:
        import cmake  # the PyPI package, from the build requirements
        return str(Path(cmake.CMAKE_BIN_DIR) / "cmake")
    except ImportError:
        found = shutil.which("cmake")
        if found is None:
            raise RuntimeError("ms_bcewl needs CMake to build its native library: pip install cmake")
        return found


class NativeLibrary(Extension):
    def __init__(self, name, source_dir):
        super().__init__(name, sources=[])
        self.source_dir = source_dir


class BuildNativeLibrary(build_ext):
    def get_ext_filename(self, fullname):
        return os.path.join(*fullname.split(".")[:-1], LIBRARY_NAME)

    def build_extension(self, ext):
        destination = Path(self.get_ext_fullpath(ext.name)).resolve()
        destination.parent.mkdir(parents=True, exist_ok=True)
        cmake = _cmake_executable()
        jobs = str(os.cpu_count() or 2)
        with tempfile.TemporaryDirectory(prefix="ms_bcewl_build_") as build_dir:
            subprocess.run([cmake, "-S", str(ext.source_dir), "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release"],
                           check=True)
            subprocess.run([cmake, "--build", build_dir, "--target", "ms_bcewl", "-j", jobs], check=True)
            built = next(Path(build_dir).rglob(LIBRARY_NAME))
            shutil.copy2(built, destination)


setup(
    ext_modules=[NativeLibrary("ms_bcewl.lib.libms_bcewl", ROOT / "aclnn_adapter")],
    cmdclass={"build_ext": BuildNativeLibrary},
)
