"""Exported files (docs/contract.md §17 Export): a MINDIR or ONNX file of the loss loads where the exporting
package is not, and computes §2's loss, with §9's limits at infinite logits and NaN where a logit is NaN.

One child process exports every loss of support/export_roundtrip.py from a copy of the package, which the test
then deletes; a second child loads the MINDIR files with MindSpore alone and runs each on every set of inputs. The
ONNX files are checked with onnx's checker and run with onnxruntime here. Expected values: the float64 reference,
with the limits at infinite logits as tests/test_edge_numerics.py takes them (`limit_case`).
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
from support.export_roundtrip import FILES, INPUTS, case_of
from test_edge_numerics import limit_case

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


def _expected(file, inputs):
    case = case_of(file, inputs)
    return limit_case(*case.args, case.reduction, case.dtypes)


def _check_against_reference(file, inputs, got, dtype, what):
    case = _expected(file, inputs)
    assert dtype == case.out_dtype, f"{what}: dtype {dtype}, expected {case.out_dtype}"
    with np.errstate(invalid="ignore"):  # the reference's terms at infinite logits
        scale, _ = R.rounding_scales(case)
        R.assert_close(np.asarray(got, dtype=np.float64), case.expected_loss(), case.out_dtype, "loss", scale, what)


def _mindir_loss(exported, loaded, file, inputs):
    assert loaded.returncode == 0, f"mindspore.load + nn.GraphCell failed:\n{loaded.stderr[-3000:]}"
    stem = exported / f"{file}.{inputs}.mindir_loaded"
    return np.load(f"{stem}.npy"), Path(f"{stem}.dtype").read_text()


def _onnx_loss(exported, file, inputs, exporter="export"):
    import onnx
    import onnxruntime as ort

    path = exported / (f"{file}.onnx" if exporter == "export" else f"{file}.onnx_export.onnx")
    if exporter == "onnx_export" and not hasattr(mindspore, "onnx"):
        pytest.skip(f"MindSpore {mindspore.__version__} has no mindspore.onnx.export")
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    case = case_of(file, inputs)
    feeds = {arg.name: value.astype(NUMPY_DTYPES[dtype])
             for arg, value, dtype in zip(session.get_inputs(), (case.x, case.y), case.dtypes)}
    (got,) = session.run(None, feeds)
    return got, str(got.dtype)


@pytest.mark.parametrize("inputs", INPUTS)
@pytest.mark.parametrize("file", FILES)
def test_a_mindir_loads_and_computes_the_loss_where_the_exporting_package_is_gone(exported, loaded, file, inputs):
    assert b"libms_bcewl" not in (exported / f"{file}.mindir").read_bytes(), "the file names the library"
    got, dtype = _mindir_loss(exported, loaded, file, inputs)
    _check_against_reference(file, inputs, got, dtype, f"{file}.mindir on {inputs}")


@pytest.mark.parametrize("exporter", ["export", "onnx_export"])
@pytest.mark.parametrize("inputs", INPUTS)
@pytest.mark.parametrize("file", FILES)
def test_an_onnx_file_is_standard_onnx_and_computes_the_loss(exported, file, inputs, exporter):
    got, dtype = _onnx_loss(exported, file, inputs, exporter)
    _check_against_reference(file, inputs, got, dtype, f"{file} ({exporter}) on {inputs} in onnxruntime")


SMALL_LOSS_RTOL = 1e-4


@pytest.mark.parametrize("runtime", ["mindir", "onnx"])
@pytest.mark.parametrize("file", [name for name, case in FILES.items() if case.reduction == "none"])
def test_a_loss_far_below_one_keeps_its_digits(exported, loaded, file, runtime):
    """Element [0, 0] of the ordinary inputs is softplus(-20) = 2.06e-9 times the weights: log(1 + exp(-20)) in
    float32 is 0, and MindSpore's Softplus gives 0 as well."""
    got = _mindir_loss(exported, loaded, file, "ordinary")[0] if runtime == "mindir" else \
        _onnx_loss(exported, file, "ordinary")[0]
    expected = _expected(file, "ordinary").expected_loss()[0, 0]
    assert 0 < expected < 1e-8
    np.testing.assert_allclose(got[0, 0], expected, rtol=SMALL_LOSS_RTOL, atol=0, err_msg=f"{file} {runtime}")


@pytest.mark.parametrize("file", [name for name, case in FILES.items() if case.out_dtype == "float32"])
def test_training_graphs_keep_the_library_after_an_export(exported, loaded, file):
    """Graphs compiled before and after the exports give the PyNative primitives' bits, as the library's kernels
    do, where the exported file's standard operators give other bits (float32 losses: a 16-bit one rounds both to
    the same bits)."""
    pynative = np.load(exported / f"{file}.pynative.npy")
    for kind in ("graph_before", "graph_after"):
        np.testing.assert_array_equal(np.load(exported / f"{file}.{kind}.npy"), pynative, err_msg=kind)
    assert not np.array_equal(_mindir_loss(exported, loaded, file, "ordinary")[0], pynative), \
        "the standard operators give the library's bits here: the test could not tell them apart"
