"""The aclnn adapter's native checks, driven from pytest.

Builds aclnn_adapter/ with CMake into temporary directories (once plainly, once with ASan + UBSan), runs the native
test program (tests/native, its last line "N passed, M failed"), builds and runs the seed document's C++ example and
checks its printed losses against a float64 NumPy reference, and checks the exported symbols against the headers.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
ADAPTER = REPO / "aclnn_adapter"
EXAMPLE_DIR = REPO / "examples" / "aclnn"
NATIVE_TESTS = Path("tests_native") / "ms_bcewl_native_tests"
CMAKE_EXAMPLE = Path("examples_aclnn") / "bce_with_logits_example"

pytestmark = pytest.mark.skipif(
    shutil.which("cmake") is None or shutil.which("g++") is None, reason="needs cmake and g++"
)

SANITIZER_REPORT = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|UndefinedBehaviorSanitizer")
SUMMARY_LINE = re.compile(r"(\d+) passed, (\d+) failed")


def run(command, timeout=600, **kwargs):
    return subprocess.run([str(part) for part in command], capture_output=True, text=True, timeout=timeout, **kwargs)


def build_adapter(build_dir: Path, sanitize: bool) -> Path:
    """Configures and builds the library, the native tests and the example; returns the build directory.

    The sanitized build is a Debug build (-O0 -g): under ASan + UBSan it compiles about three times faster than -O2,
    keeps every memory access that an optimiser might remove, and its reports carry line numbers.
    """
    configure = run(
        ["cmake", "-S", ADAPTER, "-B", build_dir, f"-DCMAKE_BUILD_TYPE={'Debug' if sanitize else 'Release'}",
         "-DMS_BCEWL_BUILD_TESTS=ON", f"-DMS_BCEWL_SANITIZE={'ON' if sanitize else 'OFF'}"]
    )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    build = run(["cmake", "--build", build_dir, "-j", str(os.cpu_count() or 2)])
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    return build_dir


@pytest.fixture(scope="module")
def plain_build(tmp_path_factory):
    return build_adapter(tmp_path_factory.mktemp("aclnn_plain"), sanitize=False)


@pytest.fixture(scope="module")
def sanitized_build(tmp_path_factory):
    return build_adapter(tmp_path_factory.mktemp("aclnn_sanitized"), sanitize=True)


def assert_native_tests_pass(build_dir: Path, env=None):
    result = run([build_dir / NATIVE_TESTS], env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    lines = result.stdout.strip().splitlines()
    summary = SUMMARY_LINE.fullmatch(lines[-1]) if lines else None
    assert summary, f"last line is not 'N passed, M failed': {lines[-1:]}"
    assert int(summary.group(1)) > 0 and int(summary.group(2)) == 0, lines[-1]
    return output


def test_native_program_passes(plain_build):
    assert_native_tests_pass(plain_build)


def test_native_program_passes_under_asan_and_ubsan(sanitized_build):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1", UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    output = assert_native_tests_pass(sanitized_build, env=env)
    report = SANITIZER_REPORT.search(output)
    assert report is None, output[max(0, report.start() - 2000):report.start() + 4000]


def bce_with_logits_reference(x, y, w, p):
    x, y, w, p = (np.asarray(v, dtype=np.float32).astype(np.float64) for v in (x, y, w, p))
    log_sigmoid = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    return w * ((1 - y) * x - (1 + (p - 1) * y) * log_sigmoid)


def example_binaries(plain_build, tmp_path):
    """The example built by build.sh (g++ against the built library) and by the CMake target."""
    script = run(["bash", EXAMPLE_DIR / "build.sh"],
                 env=dict(os.environ, MS_BCEWL_LIB_DIR=str(plain_build), OUT=str(tmp_path / "example")))
    assert script.returncode == 0, script.stdout + script.stderr
    return [tmp_path / "example", plain_build / CMAKE_EXAMPLE]


def test_seed_example_prints_the_float64_reference(plain_build, tmp_path):
    x = [0.1, 0.1, 0.2, 0.2, 0.3, 0.3, 0.4, 0.4]
    y = [0.2, 0.2, 0.1, 0.1, 0.2, 0.2, 0.1, 0.1]
    expected = bce_with_logits_reference(x, y, [0.5] * 8, [0.5] * 8)
    for binary in example_binaries(plain_build, tmp_path):
        result = run([binary])
        assert result.returncode == 0, result.stdout + result.stderr
        printed = re.findall(r"^result\[(\d+)\] is: (\S+)$", result.stdout, flags=re.MULTILINE)
        assert [int(index) for index, _ in printed] == list(range(8)), result.stdout
        values = np.array([float(value) for _, value in printed])
        np.testing.assert_allclose(values, expected, rtol=0, atol=1.5e-6)  # printed with %f: 6 decimals


def declared_functions():
    declaration = re.compile(r"^(?:ACLNN_API|ACL_FUNC_VISIBILITY)\s+[\w\s*]*?\b(\w+)\s*\(", re.MULTILINE)
    names = set()
    for header in (ADAPTER / "include").rglob("*.h"):
        names.update(declaration.findall(header.read_text()))
    return names


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs nm")
def test_library_exports_every_declared_function_and_no_internals(plain_build):
    symbols = run(["nm", "-D", "--defined-only", plain_build / "libms_bcewl.so"]).stdout.split()
    missing = declared_functions() - set(symbols)
    assert not missing, f"declared but not exported: {sorted(missing)}"
    internal = [symbol for symbol in symbols if symbol.startswith("_ZN8ms_bcewl")]
    assert not internal, f"internal symbols exported: {internal[:10]}"
