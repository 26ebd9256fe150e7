"""Exported files (docs/contract.md §17 Export): a MINDIR or ONNX file of the loss loads where the exporting
package is not, and computes §2's loss.

One child process exports every case of support/export_roundtrip.py from a copy of the package, which the test
then deletes; a second child loads the MINDIR files with MindSpore alone. The ONNX files are checked with onnx's
checker and run with onnxruntime here.
"""
import os
import shutil
import subprocess
from pathlib import Path

import mindspore
import numpy as np
import pytest

import ms_bcewl
from support import reference as R
from support.export_roundtrip import CASES

NUMPY_DTYPES = {"float32": np.float32, "float16": np.float16}


def _run(command, env):
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{' '.join(command[-3:])} failed:\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The folder of the exported files, written by a copy of the package that is gone when they are loaded."""
    out = tmp_path_factory.mktemp("exported")
    elsewhere = tmp_path_factory.mktemp("exporting_machine")
    shutil.copytree(Path(ms_bcewl.__file__).parent, elsewhere / "ms_bcewl",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(elsewhere), "MS_BCEWL_PYNATIVE_PATH": "aot"}
    env.pop("MS_CUSTOM_AOT_WHITE_LIST", None)  # it would refuse the copy's library
    stdout = _run(R.module_command("export_roundtrip", "export", out), R.child_environment(env))
    assert f"ms_bcewl: {elsewhere / 'ms_bcewl'}" in stdout, f"the export did not use the copy:\n{stdout}"
    shutil.rmtree(elsewhere)
    return out


@pytest.fixture(scope="module")
def loaded(exported):
    """The load child's outcome; its folder then holds what each MINDIR file computed."""
    return subprocess.run(R.module_command("export_roundtrip", "load", exported), env=R.child_environment(),
                          capture_output=True, text=True, check=False)


def _check_against_reference(case, got, dtype, what):
    assert dtype == case.out_dtype, f"{what}: dtype {dtype}, expected {case.out_dtype}"
    scale, _ = R.rounding_scales(case)
    R.assert_close(np.asarray(got, dtype=np.float64), case.expected_loss(), case.out_dtype, "loss", scale, what)


@pytest.mark.parametrize("name", CASES)
def test_a_mindir_loads_and_computes_the_loss_where_the_exporting_package_is_gone(exported, loaded, name):
    assert loaded.returncode == 0, f"mindspore.load + nn.GraphCell failed:\n{loaded.stderr[-3000:]}"
    assert b"libms_bcewl" not in (exported / f"{name}.mindir").read_bytes(), "the file names the library"
    got = np.load(exported / f"{name}.mindir_loaded.npy")
    dtype = (exported / f"{name}.mindir_loaded.dtype").read_text()
    _check_against_reference(CASES[name], got, dtype, f"{name}.mindir")


@pytest.mark.parametrize("exporter", ["export", "onnx_export"])
@pytest.mark.parametrize("name", CASES)
def test_an_onnx_file_is_standard_onnx_and_computes_the_loss(exported, name, exporter):
    import onnx
    import onnxruntime as ort

    path = exported / (f"{name}.onnx" if exporter == "export" else f"{name}.onnx_export.onnx")
    if exporter == "onnx_export" and not hasattr(mindspore, "onnx"):
        pytest.skip(f"MindSpore {mindspore.__version__} has no mindspore.onnx.export")
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    case = CASES[name]
    feeds = {arg.name: value.astype(NUMPY_DTYPES[dtype])
             for arg, value, dtype in zip(session.get_inputs(), (case.x, case.y), case.dtypes)}
    (got,) = session.run(None, feeds)
    _check_against_reference(case, got, str(got.dtype), f"{path.name} in onnxruntime")


@pytest.mark.parametrize("name", CASES)
def test_training_graphs_keep_the_library_after_an_export(exported, name):
    """Graphs compiled before and after the exports give the PyNative primitives' bits, as the library's kernels
    do (element [0, 0] of every case is one where MindSpore's standard operators give other bits)."""
    pynative = np.load(exported / f"{name}.pynative.npy")
    for kind in ("graph_before", "graph_after"):
        np.testing.assert_array_equal(np.load(exported / f"{name}.{kind}.npy"), pynative, err_msg=kind)
