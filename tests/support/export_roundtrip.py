"""Child process of tests/test_export.py: export the loss on one "machine", load it on another.

    python -m support.export_roundtrip export DIR   exports each case of CASES as MINDIR and ONNX into DIR, with
                                                    the losses of graph calls before and after the exports and of
                                                    a PyNative call (.npy files)
    python -m support.export_roundtrip load DIR     loads each MINDIR of DIR with mindspore.load + nn.GraphCell,
                                                    without importing ms_bcewl, and saves what it computes and
                                                    its dtype

The test runs `export` on a copy of the package that it then deletes, so `load` sees what a deployment machine
sees: no library at the exporting machine's path.
"""
import sys
from pathlib import Path

import numpy as np

from support import reference as R


def _case(reduction, w_shape, p_shape, dtypes, seed):
    """A case whose element [0, 0] is x = 20, y = 1: the loss there, softplus(-20) = 2.06e-9, is one that
    MindSpore's Softplus rounds to 0, so that only the library's kernels give it (the training graphs' check)."""
    case = R.make_case((3, 4), w_shape, p_shape, reduction, dtypes, seed, x_scale=4.0)
    x, y = case.x.copy(), case.y.copy()
    x[0, 0], y[0, 0] = 20.0, 1.0
    x[1, 1], x[2, 2] = 1e4, -1e4  # where (1 + (p - 1) * y) * x would be large
    return R.case_from(x, y, case.w, case.p, reduction, dtypes)


CASES = {
    "none_weight_pos_weight": _case("none", (4,), (1, 4), ("float32",) * 4, 1),
    "mean_plain": _case("mean", None, None, ("float32",) * 4, 2),
    "sum_pos_weight": _case("sum", None, (3, 1), ("float32",) * 4, 3),
    "mean_float16": _case("mean", (3, 4), None, ("float16", "float16", "float32", "float32"), 4),
}


def _loss_cell(case):
    """The loss Cell of a case, weight and pos_weight as Parameters (exported as the file's weights)."""
    import mindspore as ms

    import ms_bcewl

    def parameter(values, dtype, name):
        return None if values is None else ms.Parameter(R.to_tensor(values, dtype), name=name)

    return ms_bcewl.BCEWithLogitsLoss(case.reduction, parameter(case.w, case.dtypes[2], "weight"),
                                      parameter(case.p, case.dtypes[3], "pos_weight"))


def _inputs(case):
    return R.to_tensor(case.x, case.dtypes[0]), R.to_tensor(case.y, case.dtypes[1])


def export(out):
    import mindspore as ms

    import ms_bcewl

    print(f"ms_bcewl: {ms_bcewl.__file__}")
    for name, case in CASES.items():
        inputs = _inputs(case)
        ms.set_context(mode=ms.GRAPH_MODE)
        before = _loss_cell(case)(*inputs)
        ms.export(_loss_cell(case), *inputs, file_name=str(out / name), file_format="MINDIR")
        ms.export(_loss_cell(case), *inputs, file_name=str(out / name), file_format="ONNX")
        if hasattr(ms, "onnx"):  # mindspore.onnx.export, beside mindspore.export's ONNX, in recent releases
            ms.onnx.export(_loss_cell(case), *inputs, file_name=str(out / f"{name}.onnx_export.onnx"))
        after = _loss_cell(case)(*inputs)  # a new Cell: compiled after the exports
        ms.set_context(mode=ms.PYNATIVE_MODE)
        pynative = _loss_cell(case)(*inputs)
        for kind, loss in (("graph_before", before), ("graph_after", after), ("pynative", pynative)):
            np.save(out / f"{name}.{kind}.npy", R.to_f64(loss))


def load(out):
    import mindspore as ms

    ms.set_context(mode=ms.GRAPH_MODE)
    for name, case in CASES.items():
        loss = ms.nn.GraphCell(ms.load(str(out / f"{name}.mindir")))(*_inputs(case))
        np.save(out / f"{name}.mindir_loaded.npy", R.to_f64(loss))
        (out / f"{name}.mindir_loaded.dtype").write_text(R.dtype_name(loss.dtype))


if __name__ == "__main__":
    {"export": export, "load": load}[sys.argv[1]](Path(sys.argv[2]))
