"""Builds the Ascend C kernels against the host simulation (ascendc/, no CANN needed) and runs their tests.

The C++ test program checks the kernels against a float64 reference and the simulation's rule checks; these
tests only require that it builds, exits with 0 and reports "N passed, 0 failed" with N > 0.  The second build
adds AddressSanitizer and UndefinedBehaviorSanitizer; it optimises with -Og, which builds and runs it fastest
(the instrumented -O2/-O3 build alone takes minutes on two cores).
"""
import os
import re
import shutil
import subprocess

import pytest

from support.native_build import HANG_GUARD_SECONDS

pytestmark = pytest.mark.source_tree

ASCENDC_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ascendc")
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed$")
SANITIZER_FLAGS = "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"


def build_and_run(build_dir, extra_cmake_args=(), env=None):
    cmake = shutil.which("cmake")
    if cmake is None or (shutil.which("c++") is None and shutil.which("g++") is None):
        pytest.skip("cmake and a C++ compiler are needed to build the Ascend C simulation tests")
    subprocess.run(
        [cmake, "-S", ASCENDC_DIR, "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
         "-DMS_BCEWL_ASCENDC_SIM_TESTS=ON", "-DMS_BCEWL_ASCENDC_NPU=OFF", *extra_cmake_args],
        check=True, capture_output=True, text=True)
    build = subprocess.run([cmake, "--build", str(build_dir), "--parallel", str(os.cpu_count() or 2)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    run = subprocess.run([os.path.join(str(build_dir), "ascendc_sim_tests")], capture_output=True, text=True,
                         env=env, timeout=HANG_GUARD_SECONDS)
    output = run.stdout + run.stderr
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    assert lines, output[-4000:]
    summary = SUMMARY.match(lines[-1])
    assert summary is not None, output[-4000:]
    passed, failed = int(summary.group(1)), int(summary.group(2))
    assert run.returncode == 0, output[-4000:]
    assert failed == 0, output[-4000:]
    assert passed > 0, output[-4000:]
    return passed


def test_ascendc_kernels_in_host_simulation(tmp_path):
    build_and_run(tmp_path / "release")


def test_ascendc_kernels_in_host_simulation_with_sanitizers(tmp_path):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    build_and_run(tmp_path / "sanitized",
                  ["-DCMAKE_CXX_FLAGS=" + SANITIZER_FLAGS, "-DCMAKE_CXX_FLAGS_RELEASE=-Og",
                   "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined"],
                  env=env)
