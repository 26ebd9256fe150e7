"""docs/contract.md §10 Errors, in PyNative (direct calls) and GRAPH mode (compiled Cells and ms.jit).

Each error must be raised at the offending call with the right type and a message that names the argument and the
shape or dtype; the next valid call must then return the right value.
"""
import re

import mindspore as ms
import numpy as np
import pytest

import ms_bcewl
from support import reference as R

ARGS = ("input", "target", "weight", "pos_weight")
VALID_SHAPES = ((4, 3), (4, 3), (3,), (1, 3))


def valid_tensors():
    case = R.make_case((4, 3), (3,), (1, 3), "mean", seed=31)
    return case, [R.to_tensor(a) for a in case.args]


def bad_dtype_tensor(shape, dtype):
    return ms.Tensor(np.ones(shape, dtype=dtype))


class _CallNet(ms.nn.Cell):
    """Calls the functional with Tensor arguments as graph inputs and anything else as a compile-time constant."""

    def __init__(self, values, reduction):
        super().__init__()
        self.is_tensor = tuple(isinstance(v, ms.Tensor) for v in values)
        self.c0, self.c1, self.c2, self.c3 = (None if isinstance(v, ms.Tensor) else v for v in values)
        self.reduction = reduction

    def construct(self, x, y, w, p):
        return ms_bcewl.binary_cross_entropy_with_logits(x if self.is_tensor[0] else self.c0,
                                                         y if self.is_tensor[1] else self.c1,
                                                         w if self.is_tensor[2] else self.c2,
                                                         p if self.is_tensor[3] else self.c3,
                                                         self.reduction)


def call(mode, values, reduction="mean"):
    """PyNative: a direct call; GRAPH: a compiled Cell (the error comes from compiling it at this call)."""
    if mode == "pynative":
        return ms_bcewl.binary_cross_entropy_with_logits(*values, reduction=reduction)
    dummy = ms.Tensor(np.zeros(1, np.float32))
    inputs = [v if isinstance(v, ms.Tensor) else dummy for v in values]
    return _CallNet(values, reduction)(*inputs)


def shape_pattern(shape):
    """The shape as a tuple or a list, whitespace ignored."""
    return {str(tuple(shape)).replace(" ", ""), str(list(shape)).replace(" ", "")}


def assert_message(excinfo, *fragments, shapes=()):
    msg = str(excinfo.value)
    flat = re.sub(r"\s", "", msg)
    for fragment in fragments:
        assert re.search(rf"(?<![A-Za-z0-9_]){re.escape(fragment)}(?![A-Za-z0-9_])", msg, re.IGNORECASE), \
            f"{fragment!r} not named in: {msg}"
    for shape in shapes:
        assert any(s in flat for s in shape_pattern(shape)), f"shape {shape} not in: {msg}"


def assert_next_call_is_right(mode):
    case, tensors = valid_tensors()
    R.check_loss(case, got=call(mode, tensors), msg="valid call after an error")


# ---------------------------------------------------------------------------------------------------------------
# TypeError
# ---------------------------------------------------------------------------------------------------------------

NOT_TENSORS = {
    "list": [[0.5, 1.0, 2.0]] * 4,
    "float": [0.5] * 4,
    "tuple": [(1.0, 2.0, 3.0)] * 4,
}


@pytest.mark.parametrize("kind", sorted(NOT_TENSORS))
@pytest.mark.parametrize("arg", ARGS)
def test_non_tensor_argument(mode, arg, kind):
    _, values = valid_tensors()
    k = ARGS.index(arg)
    values[k] = NOT_TENSORS[kind][k]
    with pytest.raises(TypeError) as excinfo:
        call(mode, values)
    assert_message(excinfo, arg)
    assert_next_call_is_right(mode)


@pytest.mark.parametrize("arg", ARGS)
def test_numpy_array_is_not_a_tensor(pynative, arg):
    _, values = valid_tensors()
    k = ARGS.index(arg)
    values[k] = np.ones(VALID_SHAPES[k], np.float32)
    with pytest.raises(TypeError) as excinfo:
        call("pynative", values)
    assert_message(excinfo, arg)
    assert_next_call_is_right("pynative")


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64, np.bool_], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("arg", ARGS)
def test_unsupported_dtype(mode, arg, dtype):
    _, values = valid_tensors()
    k = ARGS.index(arg)
    values[k] = bad_dtype_tensor(VALID_SHAPES[k], dtype)
    with pytest.raises(TypeError) as excinfo:
        call(mode, values)
    assert_message(excinfo, arg, {"float64": "float64", "int32": "int32", "int64": "int64",
                                  "bool": "bool"}[np.dtype(dtype).name], "float16, float32 or bfloat16",
                   shapes=[VALID_SHAPES[k]])
    assert_next_call_is_right(mode)


@pytest.mark.parametrize("reduction", [1, None, 0.5, ("mean",)], ids=repr)
def test_reduction_not_a_string(mode, reduction):
    _, values = valid_tensors()
    with pytest.raises(TypeError) as excinfo:
        call(mode, values, reduction)
    assert_message(excinfo, "reduction")
    assert_next_call_is_right(mode)


# ---------------------------------------------------------------------------------------------------------------
# ValueError
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["avg", "mean ", "", "batchmean", "\u017fum"])
def test_unknown_reduction(mode, reduction):
    _, values = valid_tensors()
    with pytest.raises(ValueError) as excinfo:
        call(mode, values, reduction)
    assert_message(excinfo, "reduction")
    assert repr(reduction) in str(excinfo.value) or (reduction and reduction in str(excinfo.value))
    assert_next_call_is_right(mode)


@pytest.mark.parametrize("reduction", ["MEAN", "Sum", "nOnE"])
def test_reduction_in_any_letter_case(mode, reduction):
    """MindSpore's op takes 'MEAN' or 'Sum' (not ' mean', not the non-ASCII '\u017fum'); so do the functional and
    the Cell, with the values of the lower-case reduction."""
    case, values = valid_tensors()
    case = case.with_(reduction=reduction.lower())
    R.check_loss(case, got=call(mode, values, reduction), msg="functional")
    cell = ms_bcewl.BCEWithLogitsLoss(reduction, values[2], values[3])
    R.check_loss(case, got=cell(*values[:2]), msg="Cell")
    builtin = ms.ops.binary_cross_entropy_with_logits(*values, reduction=reduction)
    R.check_loss(case, got=builtin, msg="MindSpore's own op")


@pytest.mark.parametrize("reduction", ["mean ", "", "\u017fum", "elementwise_mean"])
def test_builtin_refuses_the_reductions_refused_here(pynative, reduction):
    """The other side of the drop-in rule: each reduction refused above is refused by MindSpore's op too."""
    _, values = valid_tensors()
    with pytest.raises(ValueError):
        ms.ops.binary_cross_entropy_with_logits(*values, reduction=reduction)


# (input shape, target shape, weight shape, pos_weight shape, the argument to name, the shapes to name)
SHAPE_ERRORS = {
    "target_5_vs_5x1": ((5, 1), (5,), None, None, "target", ((5, 1), (5,))),
    "target_5x1_vs_5": ((5,), (5, 1), None, None, "target", ((5,), (5, 1))),
    "target_3x4_vs_4x3": ((3, 4), (4, 3), None, None, "target", ((3, 4), (4, 3))),
    "weight_not_broadcastable": ((5, 3), (5, 3), (4,), None, "weight", ((4,), (5, 3))),
    "weight_enlarges": ((5, 5), (5, 5), (1, 5, 5), None, "weight", ((1, 5, 5), (5, 5))),
    "weight_leading_mismatch": ((4, 3), (4, 3), (2, 3), None, "weight", ((2, 3), (4, 3))),
    "pos_weight_not_broadcastable": ((3, 3), (3, 3), None, (2, 3), "pos_weight", ((2, 3), (3, 3))),
    "pos_weight_enlarges": ((4, 3), (4, 3), (3,), (2, 4, 3), "pos_weight", ((2, 4, 3), (4, 3))),
    "pos_weight_column": ((4, 3), (4, 3), None, (3, 1), "pos_weight", ((3, 1), (4, 3))),
    "input_rank_9": ((1,) * 7 + (2, 2), (1,) * 7 + (2, 2), None, None, "input", ((1,) * 7 + (2, 2),)),
    "weight_rank_9": ((2, 2), (2, 2), (1,) * 7 + (2, 2), None, "weight", ((1,) * 7 + (2, 2),)),
}


@pytest.mark.parametrize("name", sorted(SHAPE_ERRORS))
def test_shape_errors(mode, name):
    *shapes, arg, named_shapes = SHAPE_ERRORS[name]
    values = [None if s is None else R.to_tensor(np.full(s, 0.5)) for s in shapes]
    with pytest.raises(ValueError) as excinfo:
        call(mode, values)
    assert_message(excinfo, arg, shapes=named_shapes)
    assert_next_call_is_right(mode)


# ---------------------------------------------------------------------------------------------------------------
# The Cell and ms.jit
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("arg, value, error", [
    ("weight", [1.0, 2.0, 3.0], TypeError),
    ("pos_weight", np.ones(3, np.float32), TypeError),
    ("reduction", "avg", ValueError),
    ("reduction", 2, TypeError),
])
def test_loss_cell_constructor_errors(pynative, arg, value, error):
    with pytest.raises(error) as excinfo:
        ms_bcewl.BCEWithLogitsLoss(**{arg: value})
    assert_message(excinfo, arg)


@pytest.mark.parametrize("bad", ["target_shape", "weight_shape", "input_dtype", "input_list"])
def test_loss_cell_call_errors(mode, bad):
    case, (x, y, w, p) = valid_tensors()
    cell = ms_bcewl.BCEWithLogitsLoss("mean", R.to_tensor(np.ones((2, 3))) if bad == "weight_shape" else w, p)
    inputs = {"target_shape": (x, R.to_tensor(np.ones((4, 1)))), "weight_shape": (x, y),
              "input_dtype": (bad_dtype_tensor((4, 3), np.float64), y), "input_list": ([[0.5] * 3] * 4, y)}[bad]
    error, arg = {"target_shape": (ValueError, "target"), "weight_shape": (ValueError, "weight"),
                  "input_dtype": (TypeError, "input"), "input_list": (TypeError, "input")}[bad]
    with pytest.raises(error) as excinfo:
        cell(*inputs)
    assert_message(excinfo, arg)
    good = ms_bcewl.BCEWithLogitsLoss("mean", w, p)
    R.check_loss(case, got=good(x, y), msg="valid Cell call after an error")


@pytest.mark.parametrize("bad", ["target_shape", "weight_dtype", "reduction"])
def test_jit_errors(pynative, bad):
    case, (x, y, w, p) = valid_tensors()

    def make(reduction):
        @ms.jit
        def fn(a, b, c, d):
            return ms_bcewl.binary_cross_entropy_with_logits(a, b, c, d, reduction)
        return fn

    args = {"target_shape": (x, R.to_tensor(np.ones((3, 4))), w, p),
            "weight_dtype": (x, y, bad_dtype_tensor((3,), np.float64), p), "reduction": (x, y, w, p)}[bad]
    error, fragments = {"target_shape": (ValueError, ("target",)), "weight_dtype": (TypeError, ("weight", "float64")),
                        "reduction": (ValueError, ("reduction",))}[bad]
    with pytest.raises(error) as excinfo:
        make("avg" if bad == "reduction" else "mean")(*args)
    assert_message(excinfo, *fragments)
    R.check_loss(case, got=make("mean")(x, y, w, p), msg="valid jit call after an error")


@pytest.mark.parametrize("mutable, kind", [(ms.mutable(2.0), "float"), (ms.mutable(3), "int"),
                                           (ms.mutable((1.0, 2.0)), "tuple")], ids=["float", "int", "tuple"])
@pytest.mark.parametrize("arg", ["weight", "pos_weight"])
def test_a_mutable_non_tensor_in_a_graph_is_named_by_its_type(pynative, arg, mutable, kind):
    """A graph hands the checks a non-constant value as None: the message said 'got NoneType'."""
    _, (x, y, _, _) = valid_tensors()

    @ms.jit
    def fn(a, b, value):
        return ms_bcewl.binary_cross_entropy_with_logits(a, b, **{arg: value})

    with pytest.raises(TypeError) as excinfo:
        fn(x, y, mutable)
    assert_message(excinfo, arg, f"got {kind}")
    assert "NoneType" not in str(excinfo.value)


# ---------------------------------------------------------------------------------------------------------------
# Uninitialised tensors
# ---------------------------------------------------------------------------------------------------------------

def uninitialized(array):
    """A Tensor made with an initializer and never given its data (init_data() not called)."""
    return ms.Tensor(shape=array.shape, dtype=ms.float32, init=ms.common.initializer.Constant(float(array.flat[0])))


@pytest.mark.parametrize("arg", ARGS)
def test_an_uninitialized_tensor_is_refused_in_pynative(pynative, arg):
    """PyNative read such a tensor's memory as it was: any number came out, or 0."""
    k = ARGS.index(arg)
    arrays = [np.full(shape, value, np.float32) for shape, value in zip(VALID_SHAPES, (0.75, 0.25, 2.0, 3.0))]
    values = [R.to_tensor(a) for a in arrays]
    values[k] = uninitialized(arrays[k])
    with pytest.raises(RuntimeError) as excinfo:
        ms_bcewl.binary_cross_entropy_with_logits(*values)
    assert_message(excinfo, arg, "uninitialized", "init_data", shapes=[VALID_SHAPES[k]])
    values[k] = values[k].init_data()
    expected = R.loss(*[a.astype(np.float64) for a in arrays])
    np.testing.assert_allclose(ms_bcewl.binary_cross_entropy_with_logits(*values).asnumpy(), expected, rtol=1e-6)


class _DeviceNamedTensor(ms.Tensor):
    """A Tensor whose `init` holds a device name, as mindnlp's mindtorch sets it on every Tensor it makes."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.init = "cpu"


@pytest.mark.parametrize("arg", ARGS)
def test_a_tensor_with_another_init_value_is_computed(pynative, arg):
    """Only an Initializer in `init` is data to come; anything else there is a library's own (a device name). PyNative
    only: a graph hands any `init` to Tensor.init_data(), for MindSpore's own op too."""
    k = ARGS.index(arg)
    arrays = [np.full(shape, value, np.float32) for shape, value in zip(VALID_SHAPES, (0.75, 0.25, 2.0, 3.0))]
    values = [R.to_tensor(a) for a in arrays]
    values[k] = _DeviceNamedTensor(arrays[k])
    assert values[k].init == "cpu"
    expected = R.loss(*[a.astype(np.float64) for a in arrays])
    np.testing.assert_allclose(call(pynative, values).asnumpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("mode", ["graph"], indirect=True)
def test_an_uninitialized_tensor_is_initialised_by_a_graph(mode):
    """Graphs create the data of such a tensor themselves, as for MindSpore's own op."""
    x, y = np.full((2, 3), 0.5, np.float32), np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
    got = call(mode, [uninitialized(x), R.to_tensor(y), None, None])
    np.testing.assert_allclose(got.asnumpy(), R.loss(x.astype(np.float64), y.astype(np.float64)), rtol=1e-6)
