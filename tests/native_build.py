"""Building the native CMake projects from pytest, and reading what their programs print.

Shared by test_fuzz.py and test_leaks.py, which build tests/fuzz (a standalone CMake project over aclnn_adapter/ that
holds the fuzzer, the >2^31-element check and the seed document's example); test_aclnn_native.py could use it too.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RELIABILITY_PROJECT = REPO / "tests" / "fuzz"

HAVE_TOOLCHAIN = shutil.which("cmake") is not None and shutil.which("g++") is not None

SANITIZER_REPORT = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|UndefinedBehaviorSanitizer")
# LeakSanitizer runs at exit; UBSan stops at the first report, so that it cannot scroll by unnoticed.
SANITIZER_ENV = {"ASAN_OPTIONS": "detect_leaks=1", "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}


def run(command, timeout=600, **kwargs):
    return subprocess.run([str(part) for part in command], capture_output=True, text=True, timeout=timeout, **kwargs)


def cmake_build(source: Path, build_dir: Path, targets, sanitize: bool) -> Path:
    """Configures and builds `targets`: Debug with ASan + UBSan, or Release; returns the build directory."""
    configure = run(
        ["cmake", "-S", source, "-B", build_dir, f"-DCMAKE_BUILD_TYPE={'Debug' if sanitize else 'Release'}",
         f"-DMS_BCEWL_SANITIZE={'ON' if sanitize else 'OFF'}"]
    )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    build = run(["cmake", "--build", build_dir, "--target", *targets, "-j", str(os.cpu_count() or 2)])
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    return build_dir


def assert_no_sanitizer_report(output: str):
    report = SANITIZER_REPORT.search(output)
    assert report is None, output[max(0, report.start() - 2000):report.start() + 4000]
