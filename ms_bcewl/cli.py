"""The ms-bcewl command (also `python -m ms_bcewl`).

    ms-bcewl info     versions, the native library and its build, backend, SIMD level, threads, Ascend path,
                      PyNative path and whether its pyboost module is built
    ms-bcewl check    self-test against the formula in MindSpore operators in float64 (float32 on a device
                      without float64 kernels); exit code 0 when every case passes, else 1
    ms-bcewl bench    benchmarks/bench_bce_with_logits.py --quick when the source tree is here, else a short
                      timing of ms_bcewl against mindspore.ops.binary_cross_entropy_with_logits
    ms-bcewl build    compiles the PyNative pyboost module into its cache now, again where the cached one does not
                      load (steps on stderr, the module's path on stdout; exit code 0 or 1), so that no later call
                      runs without it
"""
import argparse
import contextlib
import ctypes
import functools
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import mindspore as ms
import numpy as np
from mindspore import nn

import ms_bcewl
from ms_bcewl import _ascend_kernels as ascend_kernels
from ms_bcewl import _loss_formula as formula
from ms_bcewl import _pyboost as pyboost_path
from ms_bcewl._library import DTYPE_NAMES, LIBRARY_DIR, REDUCTIONS, library_path

MODES = {"pynative": ms.PYNATIVE_MODE, "graph": ms.GRAPH_MODE}
# Largest error allowed, relative to the largest reference value: about twice the unit roundoff of the output
# dtype (inputs are rounded to their dtype before the reference sees them; the op computes in float32).
TOLERANCES = {"float32": 1e-5, "float16": 1e-3, "bfloat16": 8e-3}
# What CMake recorded of the library's build (aclnn_adapter/CMakeLists.txt), shipped beside it by setup.py.
BUILD_RECORD = LIBRARY_DIR / "libms_bcewl.build.json"
# What the built-in timing holds per element at most: two float32 inputs, a float64 draw and the ops' outputs.
BENCH_BYTES_PER_ELEMENT = 32
SOURCE_BENCHMARK = Path(ms_bcewl.__file__).resolve().parent.parent / "benchmarks" / "bench_bce_with_logits.py"


def print_table(header, rows):
    """Plain-text table, columns as wide as their widest cell."""
    cells = [list(map(str, header))] + [list(map(str, row)) for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * width for width in widths))
    print("\n".join(lines))


# ----------------------------------------------------------------------------------------------------------------
# info
# ----------------------------------------------------------------------------------------------------------------


def simd_level(path):
    """The kernels' ISA, asked of the library: the best this CPU supports and the build compiled in, capped by
    MS_BCEWL_ISA as it reads it."""
    library = ctypes.CDLL(path)
    library.msBcewlKernelIsa.restype = ctypes.c_char_p
    isa = library.msBcewlKernelIsa().decode()
    requested = os.environ.get("MS_BCEWL_ISA")
    return f"{isa} (MS_BCEWL_ISA={requested!r})" if requested is not None else \
        f"{isa} (the best this CPU and build allow; MS_BCEWL_ISA unset)"


def threads(path):
    """The kernels' thread count, asked of the library: MS_BCEWL_NUM_THREADS as it reads it, else the cores this
    process may run on."""
    count = ctypes.CDLL(path).msBcewlKernelThreads()
    requested = os.environ.get("MS_BCEWL_NUM_THREADS")
    return f"{count} (MS_BCEWL_NUM_THREADS={requested!r})" if requested is not None else \
        f"{count} (the cores this process may use; MS_BCEWL_NUM_THREADS unset)"


@contextlib.contextmanager
def stderr_silenced():
    """Silences file descriptor 2, where MindSpore's native code reports plugins it cannot load."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "w", encoding="utf-8") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def ascend_path():
    """Available only with CANN's Python module `acl` importable and MindSpore's Ascend device usable."""
    has_acl = importlib.util.find_spec("acl") is not None
    with stderr_silenced():
        has_device = ms.hal.is_available("Ascend")
    if has_acl and has_device:
        return "available (CANN module acl, MindSpore device Ascend)"
    missing = [what for what, present in (("CANN module acl not importable", has_acl),
                                          ("MindSpore device Ascend not available", has_device)) if not present]
    return "not available: " + "; ".join(missing)


def backend():
    """The device target, which ms_bcewl's primitives followed when the package was imported."""
    target = ms.get_context("device_target")
    return f"{target} (host CPU, {platform.machine()})" if target == "CPU" else target


def build_record(path=BUILD_RECORD):
    """What CMake recorded of the library's build ({} where there is no record)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def describe_build(record):
    """A wheel's or a source build, its compiler and the ISA kernels compiled in, from a build record."""
    if not record:
        return "unknown build (no libms_bcewl.build.json beside the library)"
    kernels = ", ".join(record.get("isa_kernels", ())) or "none recorded"
    return f"{record.get('build', 'unknown')} build, {record.get('compiler', 'compiler unknown')}, kernels {kernels}"


def library_build(path, record):
    """The build, when it was configured (a wheel's install gives the file its own time) and the library's size."""
    stat = os.stat(path)
    built = record.get("configured") or datetime.fromtimestamp(stat.st_mtime).isoformat(sep=" ", timespec="seconds")
    return f"{describe_build(record)}; {built}, {stat.st_size:,} bytes"


def info_rows():
    path = library_path()
    record = build_record()
    return [("ms_bcewl", f"{ms_bcewl.__version__} ({Path(ms_bcewl.__file__).resolve().parent})"),
            ("MindSpore", ms.__version__), ("NumPy", np.__version__),
            ("Python", f"{platform.python_version()} ({sys.executable})"),
            ("library", path), ("library build", library_build(path, record)), ("backend", backend()),
            ("SIMD level", simd_level(path)),
            ("threads", threads(path)), ("Ascend path", ascend_path()),
            ("PyNative path", pynative_path(pyboost_path.PYBOOST.choice, os.environ)),
            ("PyNative training", PYNATIVE_TRAINING_ADVICE)]


# What a user can set for fast PyNative gradients; the measurements behind it are in docs/performance.md.
PYNATIVE_TRAINING_ADVICE = (
    "fastest after mindspore.runtime.launch_blocking() called before the first operator (the pyboost path): in the "
    "default asynchronous runtime every "
    "mindspore.grad call also waits on MindSpore's queue threads. Reduce inside the loss (reduction='mean' or "
    "'sum'), not with .sum() of a 'none' loss: MindSpore's CPU ReduceSum and its gradient cost more than the loss "
    "(docs/performance.md)")


def pynative_path(choice, environ):
    """The MS_BCEWL_PYNATIVE_PATH setting, what it does, and whether this machine's pyboost module is built."""
    variable = pyboost_path.PATH_VARIABLE
    if ascend_kernels.runs_on_ascend():
        return "ops.Custom primitives (Ascend backend)"
    if choice not in pyboost_path.CHOICES:
        return f"{variable}={choice!r} is not one of {', '.join(pyboost_path.CHOICES)}: PyNative calls raise ValueError"
    try:
        folder = pyboost_path.BuildFolder.in_cache(environ)
    except OSError as error:  # the shipped source or headers are gone: a library folder not made by pip install
        return (f"{choice}: ops.Custom primitives only: cannot read {error.filename} ({error.strerror}); "
                f"pip install the package again ({variable})")
    meaning = {"auto": "pyboost under launch_blocking(), ops.Custom primitives otherwise",
               "pyboost": "pyboost under launch_blocking(), an error otherwise", "aot": "ops.Custom primitives"}[choice]
    return f"{choice}: {meaning}; {module_status(folder, environ)} ({variable})"


def module_status(folder, environ):
    """Whether the module of `folder` is built and loads, or why not."""
    if folder.verified():
        if folder.load_failure():
            return f"module in {folder.path} does not load ('ms-bcewl build' builds it again)"
        return f"module built in {folder.path}"
    if folder.failure():
        return f"module not built: {folder.failure()} ('ms-bcewl build' tries again)"
    missing = pyboost_path.missing_compiler(environ)
    return f"module not built: {missing}" if missing else "module not built yet ('ms-bcewl build' builds it)"


def info():
    print_table(("item", "value"), info_rows())
    return 0


# ----------------------------------------------------------------------------------------------------------------
# check
# ----------------------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def reference_dtype():
    """float64 where the device computes the formula in it (MindSpore's CPU kernels do), else float32."""
    probe = ms.Tensor(np.ones(1, np.float64))
    try:
        formula.loss(probe, probe, probe, probe).asnumpy()
        formula.input_gradient(probe, probe, probe, probe).asnumpy()
    except (TypeError, RuntimeError):
        return "float32"
    return "float64"


def formula_reference(x, y, w, p, reduction):
    """The loss and d loss / d x of the package's formula in MindSpore operators (_loss_formula), from float64
    values in reference_dtype(), reduced: the host library's kernels are C++ written apart from it."""
    x, y, w, p = (ms.Tensor(np.asarray(value, reference_dtype())) for value in (x, y, w, p))
    loss, dx = formula.loss(x, y, w, p), formula.input_gradient(x, y, w, p)
    if reduction == "sum":
        loss = loss.sum()
    elif reduction == "mean":
        loss, dx = loss.mean(), dx / x.size
    return loss.asnumpy(), dx.asnumpy()


class _LossAndInputGradient(nn.Cell):
    """(loss, d loss / d input) of ms_bcewl with weight and pos_weight; a 'none' loss gets upstream ones."""

    def __init__(self, reduction):
        super().__init__()
        self.reduction = reduction
        self.input_gradient = ms.grad(self.loss, grad_position=0)

    def loss(self, x, y, w, p):
        return ms_bcewl.binary_cross_entropy_with_logits(x, y, w, p, self.reduction)

    def construct(self, x, y, w, p):
        return self.loss(x, y, w, p), self.input_gradient(x, y, w, p)


def check_inputs(dtype, seed=0, shape=(4, 6)):
    """Tensors x, y, w, p of one dtype, and their values as float64 (after rounding to that dtype)."""
    rng = np.random.default_rng(seed)
    values = (rng.normal(0, 3, shape), rng.uniform(0, 1, shape), rng.uniform(0.5, 2, shape[-1:]),
              rng.uniform(0.25, 3, shape[-1:]))
    tensors = [ms.Tensor(v.astype(np.float32)).astype(getattr(ms, dtype)) for v in values]
    return tensors, [t.astype(ms.float32).asnumpy().astype(np.float64) for t in tensors]


def relative_error(got, expected):
    got = got.astype(ms.float32).asnumpy().astype(np.float64)
    return float(np.abs(got - expected).max() / max(np.abs(expected).max(), 1e-30))


def check_case(mode, dtype, reduction):
    """(loss error, dx error) of one case, each relative to the largest reference value."""
    tensors, values = check_inputs(dtype)
    expected_loss, expected_dx = formula_reference(*values, reduction)
    ms.set_context(mode=MODES[mode])
    loss, dx = _LossAndInputGradient(reduction)(*tensors)
    return relative_error(loss, expected_loss), relative_error(dx, expected_dx)


def check(modes=tuple(MODES)):
    """Runs every mode x dtype x reduction, prints the table and returns the exit code (0: all passed)."""
    rows, failures = [], 0
    for mode in modes:
        for dtype in DTYPE_NAMES:
            for reduction in REDUCTIONS:
                loss_error, dx_error = check_case(mode, dtype, reduction)
                passed = max(loss_error, dx_error) <= TOLERANCES[dtype]
                failures += not passed
                rows.append((mode, dtype, reduction, f"{loss_error:.1e}", f"{dx_error:.1e}",
                             f"{TOLERANCES[dtype]:.0e}", "ok" if passed else "FAIL"))
    print(f"ms_bcewl against its formula in MindSpore operators in {reference_dtype()} (input 4x6 with weight and "
          "pos_weight; errors relative to the largest reference value)")
    print_table(("mode", "dtype", "reduction", "loss error", "dx error", "tolerance", "result"), rows)
    print(f"{len(rows) - failures} of {len(rows)} cases passed")
    return 1 if failures else 0


# ----------------------------------------------------------------------------------------------------------------
# bench
# ----------------------------------------------------------------------------------------------------------------


def median_milliseconds(call, repeat, calls_per_sample=20):
    """Median over `repeat` samples of the time per call; each sample ends by reading its last result, which
    waits for every call queued before it."""
    call().asnumpy()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        for _ in range(calls_per_sample):
            result = call()
        result.asnumpy()
        samples.append((time.perf_counter() - started) / calls_per_sample)
    return 1e3 * float(np.median(samples))


def builtin_bench(size, repeat):
    """Forward and forward+backward time of ms_bcewl and MindSpore's op, PyNative mode, float32, mean."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    rng = np.random.default_rng(0)
    x = ms.Tensor(rng.normal(size=size).astype(np.float32))
    y = ms.Tensor(rng.uniform(size=size).astype(np.float32))
    rows = []
    for name, op in (("ms_bcewl", ms_bcewl.binary_cross_entropy_with_logits),
                     ("mindspore.ops", ms.ops.binary_cross_entropy_with_logits)):
        gradient = ms.grad(op, grad_position=0)
        forward = median_milliseconds(functools.partial(op, x, y), repeat)
        backward = median_milliseconds(functools.partial(gradient, x, y), repeat)
        rows.append((name, f"{forward:.4f}", f"{backward:.4f}"))
    print(f"{size:,} float32 elements, reduction mean, PyNative mode, median of {repeat} samples")
    print_table(("op", "forward ms", "forward+backward ms"), rows)
    return 0


def bench(args):
    if SOURCE_BENCHMARK.is_file() and not args.builtin:
        command = [sys.executable, str(SOURCE_BENCHMARK), "--quick", "--out", str(Path(args.out).resolve())]
        print("running", " ".join(command), flush=True)
        source_tree = str(SOURCE_BENCHMARK.parent.parent)
        python_path = os.pathsep.join(filter(None, [source_tree, os.environ.get("PYTHONPATH")]))
        return subprocess.call(command, env=dict(os.environ, PYTHONPATH=python_path))
    return builtin_bench(args.size, args.repeat)


# ----------------------------------------------------------------------------------------------------------------
# build
# ----------------------------------------------------------------------------------------------------------------


def build(background=False):
    """Compiles the pyboost module where no verified build that loads is cached. background: the builder a PyNative
    call starts, at low priority."""
    if background:
        os.nice(10)

    def progress(text):
        print(f"ms_bcewl: {text}", file=sys.stderr, flush=True)

    try:
        path = pyboost_path.BuildFolder.in_cache().build(progress, loadable=True)
    except (RuntimeError, OSError, ImportError) as error:
        progress(f"{pyboost_path.BUILD_FAILED}{pyboost_path.failure_cause(error)}")
        return 1
    print(path)
    return 0


# ----------------------------------------------------------------------------------------------------------------
# command line
# ----------------------------------------------------------------------------------------------------------------


def mode_list(text):
    """'pynative,graph' -> ['pynative', 'graph']; an unknown mode is an argparse error."""
    modes = [mode.strip() for mode in text.split(",") if mode.strip()]
    unknown = [mode for mode in modes if mode not in MODES]
    if unknown or not modes:
        raise argparse.ArgumentTypeError(f"unknown {unknown}; choose from {', '.join(MODES)}")
    return modes


def positive_count(text, parse=int, most=None):
    """`text` parsed as a count from 1 to `most` (any where None); anything else is an argparse error."""
    try:
        count = parse(text)
    except (ValueError, OverflowError) as error:  # int(float('inf')) overflows
        raise argparse.ArgumentTypeError(f"not a finite whole number: {text!r}") from error
    if count < 1:
        raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
    if most is not None and count > most:
        raise argparse.ArgumentTypeError(f"at most {most:,} (this machine's memory), got {text!r}")
    return count


def element_count(text):
    """'1e5' or '100000' -> 100000, at most what this machine's memory holds for the built-in timing."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return positive_count(text, lambda text: int(float(text)), memory // BENCH_BYTES_PER_ELEMENT)


def parse_args(argv):
    # Not the module's docstring: python -OO removes it.
    parser = argparse.ArgumentParser(prog="ms-bcewl", description="ms_bcewl's command: info, check, bench, build.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("info", help="versions, library, backend, SIMD level, threads, Ascend path")
    check_parser = commands.add_parser("check", help="self-test against the formula in float64 (exit code 0/1)")
    check_parser.add_argument("--modes", type=mode_list, default=list(MODES), help="comma list of pynative, graph")
    bench_parser = commands.add_parser("bench", help="benchmark against MindSpore's built-in op")
    bench_parser.add_argument("--out", default="bench_results", help="output folder of the source-tree benchmark")
    bench_parser.add_argument("--builtin", action="store_true", help="the built-in timing even in a source tree")
    bench_parser.add_argument("--size", type=element_count, default=100_000, help="elements for the built-in timing")
    bench_parser.add_argument("--repeat", type=positive_count, default=15, help="samples for the built-in timing")
    build_parser = commands.add_parser("build", help="compile the PyNative pyboost module now")
    build_parser.add_argument("--background", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.command == "info":
        return info()
    if args.command == "check":
        return check(args.modes)
    if args.command == "build":
        return build(args.background)
    return bench(args)
