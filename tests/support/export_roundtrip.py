"""Child process of tests/test_export.py: export the loss on one "machine", load it on another.

    python -m support.export_roundtrip export DIR   exports each loss of FILES as MINDIR and ONNX into DIR, with
                                                    the losses of graph calls before and after the exports and of
                                                    a PyNative call on the ordinary inputs (.npy files)
    python -m support.export_roundtrip load DIR     loads each MINDIR of DIR with mindspore.load + nn.GraphCell
                                                    and saves what it computes on each set of INPUTS, and its dtype

The test runs `export` on a copy of the package that it then deletes, so `load` sees what a deployment machine
sees: no library at the exporting machine's path.
"""
import sys
from pathlib import Path

import numpy as np

from support import reference as R

SHAPE = (3, 4)


def _file(reduction, w_shape, p_shape, dtypes=("float32",) * 4, seed=0, zero_weight_in_column_3=False):
    """An exported loss: its reduction, dtypes and the values of its weight and pos_weight Parameters (x and y of
    the case are not used: the file runs on INPUTS). A zero weight in column 3 meets an infinite or NaN logit there."""
    case = R.make_case(SHAPE, w_shape, p_shape, reduction, dtypes, seed)
    if zero_weight_in_column_3:
        w = case.w.copy()
        w[..., 3] = 0.0
        case = case.with_(w=w)
    return case


# Every reduction without weights and with both (weight broadcast along rows, pos_weight along columns), a
# pos_weight alone, and half-precision inputs.
FILES = {
    "none_plain": _file("none", None, None, seed=1),
    "none_weight_pos_weight": _file("none", (4,), (3, 1), seed=2, zero_weight_in_column_3=True),
    "mean_plain": _file("mean", None, None, seed=3),
    "mean_weight_pos_weight": _file("mean", (3, 4), (1, 4), seed=4),
    "sum_plain": _file("sum", None, None, seed=5),
    "sum_weight_pos_weight": _file("sum", (1, 4), (4,), seed=6, zero_weight_in_column_3=True),
    "sum_pos_weight": _file("sum", None, (3, 1), seed=7),
    "mean_float16": _file("mean", (3, 4), None, ("float16", "float16", "float32", "float32"), seed=8),
}


def _inputs():
    """(x, y) by name, float64. `ordinary`: logits ~ N(0, 2²) with, at [0, 0], x = 20, y = 1, whose loss
    softplus(-20) = 2.06e-9 a float32 log(1 + exp(-20)) rounds to 0. `large`: the same with x = ±1e4.
    `zero_limits`: with x = +inf, y = 1 and x = -inf, y = 0, whose losses are 0 (every reduction stays finite).
    `diverging`: x = ±inf with y = 0.5, whose losses are +inf (0 with a zero weight). `nan`: a NaN logit.
    `nan_at_zero_factors`: NaN logits where 1 - y = 0 and where p·y = 0, factors that must not turn NaN into 0."""
    rng = np.random.default_rng(0)
    x, y = rng.normal(0.0, 2.0, SHAPE), rng.uniform(-0.25, 1.25, SHAPE)
    x[0, 0], y[0, 0] = 20.0, 1.0
    sets = {"ordinary": (x, y)}
    for name, changes in (("large", [((1, 1), 1e4, y[1, 1]), ((2, 2), -1e4, y[2, 2])]),
                          ("zero_limits", [((0, 1), np.inf, 1.0), ((1, 2), -np.inf, 0.0)]),
                          ("diverging", [((2, 0), np.inf, 0.5), ((0, 2), -np.inf, 0.5), ((1, 3), np.inf, 0.5)]),
                          ("nan", [((1, 3), np.nan, 0.25)]),
                          ("nan_at_zero_factors", [((2, 1), np.nan, 1.0), ((0, 3), np.nan, 0.0)])):
        changed_x, changed_y = x.copy(), y.copy()
        for index, x_value, y_value in changes:
            changed_x[index], changed_y[index] = x_value, y_value
        sets[name] = (changed_x, changed_y)
    return sets


INPUTS = _inputs()


def case_of(file, inputs):
    """The call a loaded file computes: the file's reduction, weights and dtypes on a set of INPUTS, rounded to the
    dtypes."""
    return R.case_from(*INPUTS[inputs], FILES[file].w, FILES[file].p, FILES[file].reduction, FILES[file].dtypes)


def _loss_cell(case):
    """The loss Cell of a case, weight and pos_weight as Parameters (exported as the file's weights)."""
    import mindspore as ms

    import ms_bcewl

    def parameter(values, dtype, name):
        return None if values is None else ms.Parameter(R.to_tensor(values, dtype), name=name)

    return ms_bcewl.BCEWithLogitsLoss(case.reduction, parameter(case.w, case.dtypes[2], "weight"),
                                      parameter(case.p, case.dtypes[3], "pos_weight"))


def _tensors(case):
    return R.to_tensor(case.x, case.dtypes[0]), R.to_tensor(case.y, case.dtypes[1])


def export(out):
    import mindspore as ms

    import ms_bcewl

    print(f"ms_bcewl: {ms_bcewl.__file__}")
    for name in FILES:
        case = case_of(name, "ordinary")
        inputs = _tensors(case)
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
    for name in FILES:
        loaded = ms.nn.GraphCell(ms.load(str(out / f"{name}.mindir")))
        for inputs in INPUTS:
            loss = loaded(*_tensors(case_of(name, inputs)))
            np.save(out / f"{name}.{inputs}.mindir_loaded.npy", R.to_f64(loss))
            (out / f"{name}.{inputs}.mindir_loaded.dtype").write_text(R.dtype_name(loss.dtype))


if __name__ == "__main__":
    {"export": export, "load": load}[sys.argv[1]](Path(sys.argv[2]))
