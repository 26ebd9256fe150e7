"""Leak and memory-error checks under valgrind, on the session's plain (Release, non-sanitized) native build.

Two programs run under `valgrind --leak-check=full`: CANN's documented aclnn example (examples/aclnn) and a
fixed-seed fuzz run (tests/fuzz). Each must exit 0 with valgrind reporting no error and no definitely, indirectly or
possibly lost block (those kinds make valgrind exit with LEAK_EXIT_STATUS). The sanitized builds of test_fuzz.py and
test_aclnn_native.py cover the same code with LeakSanitizer.
"""
import os
import re
import shutil

import pytest

from support.native_build import CMAKE_EXAMPLE, FUZZER, HAVE_TOOLCHAIN, run

pytestmark = pytest.mark.skipif(not HAVE_TOOLCHAIN or shutil.which("valgrind") is None,
                                reason="needs cmake, g++ and valgrind")

LEAK_EXIT_STATUS = 99
VALGRIND = ["valgrind", "--leak-check=full", "--errors-for-leak-kinds=definite,indirect,possible",
            f"--error-exitcode={LEAK_EXIT_STATUS}"]
FUZZ_CASES = 600  # about 10 s under valgrind
NO_LEAK = re.compile(r"All heap blocks were freed -- no leaks are possible|definitely lost: 0 bytes in 0 blocks")
NO_ERROR = re.compile(r"ERROR SUMMARY: 0 errors from 0 contexts")
# The kernels' pool threads are detached and live until exit by design (src/kernel/driver/plan.cpp), so valgrind
# would count their thread-local blocks as possibly lost: the runs here keep the kernels on the calling thread.
# LeakSanitizer in the sanitized runs, which knows live threads, covers the pool.
SERIAL_KERNELS = dict(os.environ, MS_BCEWL_NUM_THREADS="1")


def assert_clean_under_valgrind(command):
    result = run(VALGRIND + command, env=SERIAL_KERNELS)
    report = result.stderr
    assert result.returncode == 0, f"exit status {result.returncode}:\n{result.stdout[-3000:]}\n{report[-6000:]}"
    assert NO_LEAK.search(report) and NO_ERROR.search(report), report[-6000:]
    return result.stdout


def test_aclnn_example_has_no_leak_or_memory_error(plain_native_build):
    output = assert_clean_under_valgrind([plain_native_build / CMAKE_EXAMPLE])
    assert len(re.findall(r"^result\[\d+\] is: ", output, flags=re.MULTILINE)) == 8, output


def test_fixed_seed_fuzz_run_has_no_leak_or_memory_error(plain_native_build):
    output = assert_clean_under_valgrind([plain_native_build / FUZZER, "--seed", "1", "--iterations",
                                          str(FUZZ_CASES)])
    assert re.search(r"^fuzz summary: .* mismatches=0 unexpected=0 ", output, flags=re.MULTILINE), output[-3000:]
