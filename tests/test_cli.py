"""The ms-bcewl command through `python -m ms_bcewl`, run as a subprocess of this interpreter in a temporary
directory, so that it is the installed package (CI: `python3 -P -m pytest`) that answers. About 25 s.
"""
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

INSTALLED_PACKAGE = Path(importlib.util.find_spec("ms_bcewl").origin).resolve().parent

# cli.check of a library gone wrong, the loss function replaced by one of these.
WRONG_LIBRARY = """
import sys
import ms_bcewl
from mindspore import ops
from ms_bcewl import cli

right = ms_bcewl.binary_cross_entropy_with_logits

def without_pos_weight(x, y, w, p, reduction):
    return right(x, y, w, None, reduction)

def gradient_doubled(x, y, w, p, reduction):
    loss = right(x, y, w, p, reduction)
    return loss + (loss - ops.stop_gradient(loss))

ms_bcewl.binary_cross_entropy_with_logits = {wrong}
sys.exit(cli.check(["pynative"]))
"""


def run_python(args, cwd, env=None, timeout=180):
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def ms_bcewl_command(*args, cwd, env=None):
    return run_python(["-m", "ms_bcewl", *args], cwd, env)


def table_rows(stdout, first_cells):
    return [line.split() for line in stdout.splitlines() if line.split()[:1] and line.split()[0] in first_cells]


def test_info_reports_versions_library_backend_and_ascend_path(tmp_path):
    import mindspore
    import numpy

    done = ms_bcewl_command("info", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in done.stdout.splitlines()[2:])
    assert set(rows) == {"ms_bcewl", "MindSpore", "NumPy", "Python", "library", "library build", "backend",
                         "SIMD level", "threads", "Ascend path", "PyNative path", "PyNative training"}
    assert rows["NumPy"] == numpy.__version__
    assert rows["MindSpore"] == mindspore.__version__
    assert Path(rows["library"]) == INSTALLED_PACKAGE / "lib" / "libms_bcewl.so"
    assert re.fullmatch(r"(source|wheel manylinux_2_28_\w+) build, (GNU|Clang) [\d.]+ \(.+\), kernels scalar(, \w+)*; "
                        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d( UTC)?, [\d,]+ bytes", rows["library build"])
    assert rows["backend"].startswith("CPU")
    assert re.fullmatch(r"(scalar|avx2|avx512|avx512bf16|neon) \(the best this CPU and build allow; MS_BCEWL_ISA "
                        r"unset\)", rows["SIMD level"])
    assert int(rows["threads"].split()[0]) == min(os.cpu_count(), len(os.sched_getaffinity(0)))
    assert rows["Ascend path"].startswith(("available", "not available"))
    assert re.fullmatch(r"auto: pyboost under launch_blocking\(\), ops.Custom primitives otherwise; module "
                        r"(built in \S+|not built yet \('ms-bcewl build' builds it\)) \(MS_BCEWL_PYNATIVE_PATH\)",
                        rows["PyNative path"])
    assert "mindspore.runtime.launch_blocking()" in rows["PyNative training"]
    assert "reduction='mean' or 'sum'" in rows["PyNative training"]


def info_row(name, stdout):
    return re.search(rf"^{name}\s+(.*)$", stdout, re.MULTILINE).group(1)


@pytest.mark.parametrize("value, threads", [("3", 3), (" 3", 3), ("+4", 4)])
def test_info_reports_the_threads_the_library_uses(tmp_path, value, threads):
    """The library reads MS_BCEWL_NUM_THREADS with strtol (" 3" and "+4" are 3 and 4); info read it with
    str.isdigit and reported the cores instead."""
    env = dict(os.environ, MS_BCEWL_NUM_THREADS=value, MS_BCEWL_ISA="scalar", MS_BCEWL_PYNATIVE_PATH="aot")
    done = ms_bcewl_command("info", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert info_row("threads", done.stdout).startswith(f"{threads} (MS_BCEWL_NUM_THREADS={value!r})")
    assert re.match(r"aot: ops.Custom primitives; module", info_row("PyNative path", done.stdout))
    assert info_row("SIMD level", done.stdout) == "scalar (MS_BCEWL_ISA='scalar')"


def test_info_shows_an_unknown_pynative_setting_instead_of_failing(tmp_path):
    """`import ms_bcewl` raised for MS_BCEWL_PYNATIVE_PATH=fast, so info could not run; an empty value failed too."""
    done = ms_bcewl_command("info", cwd=tmp_path, env=dict(os.environ, MS_BCEWL_PYNATIVE_PATH="fast"))
    assert done.returncode == 0, done.stderr
    assert info_row("PyNative path", done.stdout) == ("MS_BCEWL_PYNATIVE_PATH='fast' is not one of auto, pyboost, "
                                                      "aot: PyNative calls raise ValueError")
    done = ms_bcewl_command("info", cwd=tmp_path, env=dict(os.environ, MS_BCEWL_PYNATIVE_PATH=""))
    assert done.returncode == 0, done.stderr
    assert info_row("PyNative path", done.stdout).startswith("auto: ")


def test_the_command_runs_without_docstrings(tmp_path):
    """python -OO (or PYTHONOPTIMIZE=2, which the background builder inherits) drops docstrings; the argument parser
    read its description from the module's and died with an AttributeError."""
    done = run_python(["-OO", "-m", "ms_bcewl", "info"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert info_row("library", done.stdout).endswith("libms_bcewl.so")


def test_build_without_a_compiler_says_so_and_nothing_else(tmp_path):
    """`ms-bcewl build` with no g++ on PATH and no CXX: exit code 1 and one line naming the missing compiler. It
    printed about 4 KB of MindSpore's [ERROR] text with the compiler's command line twice before its last line."""
    env = {key: value for key, value in os.environ.items() if key != "CXX"}
    env.update(PATH=str(tmp_path), MS_BCEWL_CACHE_DIR=str(tmp_path / "cache"))
    done = ms_bcewl_command("build", cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip() == ("ms_bcewl: could not build the pyboost module: no C++ compiler found (g++ is not "
                                   "on PATH; CXX names another)"), done.stderr[-3000:]
    assert not list((tmp_path / "cache").rglob("build_failed.txt")), "a compiler installed later would not be tried"


@pytest.mark.parametrize("option, value", [("--size", "inf"), ("--size", "1e30"), ("--size", "nan"),
                                           ("--repeat", "0"), ("--repeat", "-3"), ("--repeat", "2.5")])
def test_bench_refuses_sizes_and_repeats_it_cannot_run(option, value, capsys):
    """--size inf ended in an OverflowError traceback, 1e30 in NumPy's; --repeat 0 printed NaN timings and exit 0."""
    from ms_bcewl import cli

    with pytest.raises(SystemExit) as exited:
        cli.parse_args(["bench", "--builtin", option, value])
    assert exited.value.code == 2
    assert f"argument {option}: " in capsys.readouterr().err


def test_check_passes_every_mode_dtype_and_reduction(tmp_path):
    done = ms_bcewl_command("check", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = table_rows(done.stdout, ("pynative", "graph"))
    cases = {(mode, dtype, reduction) for mode, dtype, reduction, *_ in rows}
    assert cases == {(m, d, r) for m in ("pynative", "graph") for d in ("float32", "float16", "bfloat16")
                     for r in ("none", "mean", "sum")}
    assert all(row[-1] == "ok" for row in rows)
    assert "18 of 18 cases passed" in done.stdout


@pytest.mark.parametrize("wrong, wrong_columns", [("without_pos_weight", ("loss error", "dx error")),
                                                   ("gradient_doubled", ("dx error",))])
def test_check_fails_with_exit_code_1_for_a_wrong_library(tmp_path, wrong, wrong_columns):
    """check is the user's self-test: a library whose loss or gradient is wrong fails every case, in the columns
    that are wrong (the errors are about 0.3 and 1, far above every tolerance)."""
    done = run_python(["-c", WRONG_LIBRARY.format(wrong=wrong)], tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    rows = table_rows(done.stdout, ("pynative",))
    assert len(rows) == 9 and all(row[-1] == "FAIL" for row in rows)
    assert "0 of 9 cases passed" in done.stdout
    for column, index in (("loss error", 3), ("dx error", 4)):
        for row in rows:
            wrong_by_far, within_tolerance = float(row[index]) > 0.1, float(row[index]) <= float(row[5])
            assert (wrong_by_far if column in wrong_columns else within_tolerance), (column, row)


def test_check_computes_its_reference_in_float32_where_the_device_has_no_float64(monkeypatch):
    """On a device whose kernels refuse float64 (an NPU may), check falls back to a float32 reference instead of
    failing; the float32 values are those of the float64 reference within float32's rounding."""
    import numpy as np
    from ms_bcewl import cli

    _, values = cli.check_inputs("float32")
    expected = cli.formula_reference(*values, "mean")
    assert cli.reference_dtype() == "float64"
    right = cli.formula.loss

    def refusing_float64(x, *args):
        if x.dtype == cli.ms.float64:
            raise TypeError("no float64 kernel")
        return right(x, *args)

    monkeypatch.setattr(cli.formula, "loss", refusing_float64)
    cli.reference_dtype.cache_clear()
    try:
        assert cli.reference_dtype() == "float32"
        got = cli.formula_reference(*values, "mean")
    finally:
        cli.reference_dtype.cache_clear()
    assert [value.dtype for value in got] == [np.float32, np.float32]
    for value, reference in zip(got, expected):
        np.testing.assert_allclose(value, reference, rtol=1e-6, atol=1e-7)


def test_check_rejects_an_unknown_mode(tmp_path):
    done = ms_bcewl_command("check", "--modes", "eager", cwd=tmp_path)
    assert done.returncode == 2
    assert "unknown ['eager']" in done.stderr


def test_builtin_bench_prints_both_ops(tmp_path):
    done = ms_bcewl_command("bench", "--builtin", "--size", "1e4", "--repeat", "3", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = table_rows(done.stdout, ("ms_bcewl", "mindspore.ops"))
    assert [row[0] for row in rows] == ["ms_bcewl", "mindspore.ops"]
    assert all(float(cell) > 0 for row in rows for cell in row[1:])


def test_info_describes_a_wheel_a_source_build_and_a_missing_record(tmp_path):
    from ms_bcewl import cli

    record = tmp_path / "libms_bcewl.build.json"
    record.write_text('{"build": "wheel manylinux_2_28_aarch64", "compiler": "Clang 22.1.8 (zig, target '
                      'aarch64-linux-gnu.2.28)", "machine": "aarch64", "isa_kernels": ["scalar"]}\n')
    assert cli.describe_build(cli.build_record(record)) == (
        "wheel manylinux_2_28_aarch64 build, Clang 22.1.8 (zig, target aarch64-linux-gnu.2.28), kernels scalar")
    library = tmp_path / "libms_bcewl.so"
    library.write_bytes(b"1234")
    assert cli.library_build(library, {"configured": "2026-12-07 01:50:00 UTC"}).endswith(
        "; 2026-12-07 01:50:00 UTC, 4 bytes")
    assert cli.describe_build(cli.build_record(tmp_path / "missing.json")).startswith("unknown build (no ")
    record.write_text("not json")
    assert cli.build_record(record) == {}
