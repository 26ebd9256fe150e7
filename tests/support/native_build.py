"""Building aclnn_adapter/ with its native programs from pytest, and reading what they print.

One CMake project holds every native program: the library, the native tests (tests/native), CANN's documented
example (examples/aclnn) and the reliability programs (tests/fuzz: the fuzzer and the >2^31-element check). The
suite builds it twice per session (conftest.py's `plain_native_build` and `sanitized_native_build`), and
test_aclnn_native.py, test_fuzz.py and test_leaks.py run their programs from those two builds.
"""
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ADAPTER = REPO / "aclnn_adapter"

HAVE_TOOLCHAIN = shutil.which("cmake") is not None and shutil.which("g++") is not None

# Paths of the programs inside a build directory.
NATIVE_TESTS = Path("tests_native") / "ms_bcewl_native_tests"
CMAKE_EXAMPLE = Path("examples_aclnn") / "bce_with_logits_example"
FUZZER = Path("tests_fuzz") / "ms_bcewl_fuzz"
LARGE_INDEX = Path("tests_fuzz") / "ms_bcewl_large_index"

SANITIZER_REPORT = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|UndefinedBehaviorSanitizer")
# LeakSanitizer runs at exit; UBSan stops at the first report, so that it cannot scroll by unnoticed.
SANITIZER_ENV = {"ASAN_OPTIONS": "detect_leaks=1", "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}


# A guard against a hung program, not a speed limit: a loaded 2-core machine runs many times slower than a quiet one.
# Builds get no limit at all.
HANG_GUARD_SECONDS = 3600


def run(command, timeout=HANG_GUARD_SECONDS, **kwargs):
    return subprocess.run([str(part) for part in command], capture_output=True, text=True, timeout=timeout, **kwargs)


def run_build_step(command, low_priority=False, **kwargs):
    """A configure or build command: it takes as long as the machine needs. At low priority (nice 19, inherited by
    the compilers) it takes only the CPU that other work leaves idle. `nice`, not a preexec_fn: the test process
    has MindSpore's threads, and a preexec_fn may deadlock a child forked beside threads."""
    prefix = ["nice", "-n", "19"] if low_priority and shutil.which("nice") else []
    return run([*prefix, *command], timeout=None, **kwargs)


def build_native(build_dir: Path, sanitize: bool) -> Path:
    """Configures and builds the library and every native program at low priority; returns the build directory.

    The sanitized build is a Debug build, at -O1 under ASan + UBSan (aclnn_adapter/CMakeLists.txt): its reports
    carry line numbers.
    """
    configure = run_build_step(
        ["cmake", "-S", ADAPTER, "-B", build_dir, f"-DCMAKE_BUILD_TYPE={'Debug' if sanitize else 'Release'}",
         "-DMS_BCEWL_BUILD_TESTS=ON", f"-DMS_BCEWL_SANITIZE={'ON' if sanitize else 'OFF'}"], low_priority=True
    )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    build_targets(build_dir, low_priority=True)
    return build_dir


def build_targets(build_dir: Path, *targets, low_priority=False):
    """Builds `targets` of a configured build directory (all by default; LARGE_INDEX is not in all)."""
    target_options = ["--target", *targets] if targets else []
    build = run_build_step(["cmake", "--build", build_dir, *target_options, "-j", str(os.cpu_count() or 2)],
                           low_priority)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]


class BackgroundBuild:
    """build_native in a thread of its own, started at once; result() waits for the build and raises what it raised.
    With `run_native_tests`, the same thread then runs the native test program from the build, at normal priority,
    so that this long run (about two minutes under the sanitizers) overlaps the other tests instead of running
    alone at the end, one core idle; native_tests_run() waits for it."""

    def __init__(self, build_dir: Path, sanitize: bool, run_native_tests: bool = False):
        self._outcome = {}
        self._built = threading.Event()
        # taken now, at the session's start: tests change os.environ (MS_BCEWL_ISA, ...) while the thread runs
        environment = dict(os.environ, **(SANITIZER_ENV if sanitize else {})) if run_native_tests else None
        self._thread = threading.Thread(target=self._build, args=(build_dir, sanitize, environment), daemon=True)
        self._thread.start()

    def _build(self, build_dir, sanitize, environment):
        try:
            self._outcome["built"] = build_native(build_dir, sanitize)
        except BaseException as error:  # pylint: disable=broad-except  # handed to the test that waits for it
            self._outcome["error"] = error
        finally:
            self._built.set()
        if environment is not None and "built" in self._outcome:
            try:
                self._outcome["native tests"] = run([build_dir / NATIVE_TESTS], env=environment)
            except BaseException as error:  # pylint: disable=broad-except  # handed to the test that waits for it
                self._outcome["native tests error"] = error

    def result(self) -> Path:
        self._built.wait()
        if "error" in self._outcome:
            raise self._outcome["error"]
        return self._outcome["built"]

    def native_tests_run(self) -> subprocess.CompletedProcess:
        self.result()
        self._thread.join()
        if "native tests error" in self._outcome:
            raise self._outcome["native tests error"]
        return self._outcome["native tests"]


def assert_no_sanitizer_report(output: str):
    report = SANITIZER_REPORT.search(output)
    assert report is None, output[max(0, report.start() - 2000):report.start() + 4000]
