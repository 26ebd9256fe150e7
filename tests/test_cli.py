"""The ms-bcewl command through `python -m ms_bcewl`, run as a subprocess of this interpreter in a temporary
directory, so that it is the installed package (CI: `python3 -P -m pytest`) that answers. About 25 s.
"""
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

INSTALLED_PACKAGE = Path(importlib.util.find_spec("ms_bcewl").origin).resolve().parent

# cli.check with a reference that forgets pos_weight: every case must fail.
WRONG_REFERENCE = """
import sys
from ms_bcewl import bcewl_cli as cli

def reference_without_pos_weight(x, y, w, p, reduction):
    return cli.numpy_reference(x, y, w, 1.0, reduction)

sys.exit(cli.check(["pynative"], reference=reference_without_pos_weight))
"""


def run_python(args, cwd, env=None, timeout=180):
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def ms_bcewl_command(*args, cwd, env=None):
    return run_python(["-m", "ms_bcewl", *args], cwd, env)


def table_rows(stdout, first_cells):
    return [line.split() for line in stdout.splitlines() if line.split()[:1] and line.split()[0] in first_cells]


def test_info_reports_versions_library_backend_and_ascend_path(tmp_path):
    import numpy

    done = ms_bcewl_command("info", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in done.stdout.splitlines()[2:])
    assert set(rows) == {"ms_bcewl", "MindSpore", "NumPy", "Python", "library", "library build", "backend",
                         "SIMD level", "threads", "Ascend path", "PyNative path"}
    assert rows["NumPy"] == numpy.__version__
    assert rows["MindSpore"].startswith("2.")
    assert Path(rows["library"]) == INSTALLED_PACKAGE / "lib" / "libms_bcewl.so"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d, [\d,]+ bytes", rows["library build"])
    assert rows["backend"].startswith("CPU")
    assert re.match(r"(scalar|avx2|avx512|avx512bf16|unknown) \(", rows["SIMD level"])
    assert re.match(r"\d+ ", rows["threads"])
    assert rows["Ascend path"].startswith(("available", "not available"))
    assert re.fullmatch(r"auto: pyboost under launch_blocking\(\), ops.Custom primitives otherwise; module "
                        r"(built in \S+|not built yet) \(MS_BCEWL_PYNATIVE_PATH\)", rows["PyNative path"])


def test_info_takes_threads_and_isa_from_the_environment(tmp_path):
    env = dict(os.environ, MS_BCEWL_NUM_THREADS="3", MS_BCEWL_ISA="scalar", MS_BCEWL_PYNATIVE_PATH="aot")
    done = ms_bcewl_command("info", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^PyNative path\s+aot: ops.Custom primitives; module", done.stdout, re.MULTILINE)
    assert re.search(r"^threads\s+3 \(MS_BCEWL_NUM_THREADS\)", done.stdout, re.MULTILINE)
    assert re.search(r"^SIMD level\s+scalar \(.*MS_BCEWL_ISA=scalar\)", done.stdout, re.MULTILINE)


def test_check_passes_every_mode_dtype_and_reduction(tmp_path):
    done = ms_bcewl_command("check", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = table_rows(done.stdout, ("pynative", "graph"))
    cases = {(mode, dtype, reduction) for mode, dtype, reduction, *_ in rows}
    assert cases == {(m, d, r) for m in ("pynative", "graph") for d in ("float32", "float16", "bfloat16")
                     for r in ("none", "mean", "sum")}
    assert all(row[-1] == "ok" for row in rows)
    assert "18 of 18 cases passed" in done.stdout


def test_check_fails_with_exit_code_1_when_the_reference_disagrees(tmp_path):
    done = run_python(["-c", WRONG_REFERENCE], tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    rows = table_rows(done.stdout, ("pynative",))
    assert len(rows) == 9 and all(row[-1] == "FAIL" for row in rows)
    assert "0 of 9 cases passed" in done.stdout


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
