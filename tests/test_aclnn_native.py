"""The aclnn adapter's native checks, driven from pytest.

Runs the native test program (tests/native, its last line "N passed, M failed") from the session's plain build and
its ASan + UBSan build (conftest.py), builds and runs CANN's documented C++ example and checks its printed losses
against a float64 NumPy reference, and checks the exported symbols against the headers.
"""
import os
import re
import shutil

import numpy as np
import pytest

from support.native_build import (ADAPTER, CMAKE_EXAMPLE, HAVE_TOOLCHAIN, REPO, assert_no_sanitizer_report, run,
                                  run_build_step)

EXAMPLE_DIR = REPO / "examples" / "aclnn"

pytestmark = pytest.mark.skipif(not HAVE_TOOLCHAIN, reason="needs cmake and g++")

SUMMARY_LINE = re.compile(r"(\d+) passed, (\d+) failed")


def assert_native_tests_pass(result):
    """`result`: the native test program's CompletedProcess."""
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    lines = result.stdout.strip().splitlines()
    summary = SUMMARY_LINE.fullmatch(lines[-1]) if lines else None
    assert summary, f"last line is not 'N passed, M failed': {lines[-1:]}"
    assert int(summary.group(1)) > 0 and int(summary.group(2)) == 0, lines[-1]
    return output


def test_native_program_passes(plain_native_tests_run):
    assert_native_tests_pass(plain_native_tests_run)


def test_native_program_passes_under_asan_and_ubsan(sanitized_native_tests_run):
    assert_no_sanitizer_report(assert_native_tests_pass(sanitized_native_tests_run))


def bce_with_logits_reference(x, y, w, p):
    x, y, w, p = (np.asarray(v, dtype=np.float32).astype(np.float64) for v in (x, y, w, p))
    log_sigmoid = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    return w * ((1 - y) * x - (1 + (p - 1) * y) * log_sigmoid)


def example_binaries(plain_native_build, tmp_path):
    """The example built by build.sh (g++ against the built library) and by the CMake target."""
    environment = dict(os.environ, MS_BCEWL_LIB_DIR=str(plain_native_build), OUT=str(tmp_path / "example"))
    script = run_build_step(["bash", EXAMPLE_DIR / "build.sh"], env=environment)
    assert script.returncode == 0, script.stdout + script.stderr
    return [tmp_path / "example", plain_native_build / CMAKE_EXAMPLE]


def test_seed_example_prints_the_float64_reference(plain_native_build, tmp_path):
    x = [0.1, 0.1, 0.2, 0.2, 0.3, 0.3, 0.4, 0.4]
    y = [0.2, 0.2, 0.1, 0.1, 0.2, 0.2, 0.1, 0.1]
    expected = bce_with_logits_reference(x, y, [0.5] * 8, [0.5] * 8)
    for binary in example_binaries(plain_native_build, tmp_path):
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
def test_library_exports_every_declared_function_and_no_internals(plain_native_build):
    symbols = run(["nm", "-D", "--defined-only", plain_native_build / "libms_bcewl.so"]).stdout.split()
    missing = declared_functions() - set(symbols)
    assert not missing, f"declared but not exported: {sorted(missing)}"
    internal = [symbol for symbol in symbols if symbol.startswith("_ZN8ms_bcewl")]
    assert not internal, f"internal symbols exported: {internal[:10]}"
