"""The seeded fuzz harness of the aclnn C API (tests/fuzz), from the session's ASan + UBSan build (conftest.py):
the regression cases of the bugs the fuzzer found, a fixed-seed run (the same cases every time), and a campaign of
a fixed number of cases whose seed changes from run to run (MS_BCEWL_FUZZ_SEED fixes it; a failure prints the seed
and case that replay it). Each run must end with the summary line of tests/fuzz/fuzz_main.cpp showing no mismatch and no
unexpected status, exit 0, and print no sanitizer report (LeakSanitizer included).

MS_BCEWL_SLOW_TESTS=1 adds the campaigns of docs/reliability.md that do not fit CI: one of more than 10^6 calls, and
the check over more than 2^31 elements (a Release build; about 9 GB of memory). Without it they are not collected,
so they appear neither as passed nor as skipped.
"""
import os
import random
import re

import pytest

from support.native_build import (FUZZER, HAVE_TOOLCHAIN, HANG_GUARD_SECONDS, LARGE_INDEX, SANITIZER_ENV,
                                  assert_no_sanitizer_report, build_targets, run)

pytestmark = pytest.mark.skipif(not HAVE_TOOLCHAIN, reason="needs cmake and g++")

SLOW_TESTS = os.environ.get("MS_BCEWL_SLOW_TESTS") == "1"
SUMMARY = re.compile(r"^fuzz summary: (.*)$")
FIXED_SEED_CASES = 3000
CAMPAIGN_CASES = 1000  # counted in cases, not seconds: a loaded machine runs the same campaign, only slower


@pytest.fixture
def fuzzer(sanitized_native_build):
    return sanitized_native_build / FUZZER


def run_fuzzer(fuzzer, *arguments, timeout=HANG_GUARD_SECONDS):
    """Runs the fuzzer, checks its exit status, summary and sanitizer output; returns the summary's fields."""
    result = run([fuzzer, *arguments], timeout=timeout, env=dict(os.environ, **SANITIZER_ENV))
    output = result.stdout + result.stderr
    # every failure names the command: a campaign's random seed is what reproduces it
    command = f"$ {fuzzer.name} {' '.join(arguments)}"
    try:
        assert_no_sanitizer_report(output)
    except AssertionError as failure:
        raise AssertionError(f"{command}\n{failure}") from None
    lines = result.stdout.strip().splitlines()
    summary = SUMMARY.fullmatch(lines[-1]) if lines else None
    assert summary, f"{command}: no summary line; exit status {result.returncode}:\n{output[-6000:]}"
    fields = dict(field.split("=", 1) for field in summary.group(1).split())
    assert fields["mismatches"] == "0" and fields["unexpected"] == "0", f"{command}\n{output[-6000:]}"
    assert result.returncode == 0, f"{command}\n{output[-6000:]}"
    return fields


def test_regression_cases_of_the_bugs_found_pass(fuzzer):
    fields = run_fuzzer(fuzzer, "--regressions")
    assert int(fields["cases"]) > 0


def test_fixed_seed_run_is_clean(fuzzer):
    fields = run_fuzzer(fuzzer, "--seed", "1", "--iterations", str(FIXED_SEED_CASES))
    assert int(fields["cases"]) == FIXED_SEED_CASES
    assert int(fields["elements_compared"]) > 0


def test_campaign_with_a_new_seed_is_clean(fuzzer):
    seed = os.environ.get("MS_BCEWL_FUZZ_SEED") or str(random.randrange(2, 2**32))
    fields = run_fuzzer(fuzzer, "--seed", seed, "--iterations", str(CAMPAIGN_CASES))
    assert int(fields["cases"]) == CAMPAIGN_CASES, f"seed {seed}"


if SLOW_TESTS:
    MILLION_CALL_CASES = 70000  # about 15 calls a case

    def test_campaign_of_a_million_calls_is_clean(fuzzer):
        fields = run_fuzzer(fuzzer, "--seed", "1", "--iterations", str(MILLION_CALL_CASES), timeout=3600)
        assert int(fields["calls"]) >= 10**6

    def test_more_than_2_31_elements_match_the_reference(plain_native_build):
        build_targets(plain_native_build, LARGE_INDEX.name)
        result = run([plain_native_build / LARGE_INDEX], timeout=3600)
        assert result.returncode == 0, result.stdout + result.stderr
        assert re.search(r"^large index: \d+ elements, 4 checks, 0 failed", result.stdout, re.MULTILINE), result.stdout
