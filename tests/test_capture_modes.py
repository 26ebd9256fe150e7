"""Training under every ``mindspore.jit`` capture mode: the bytecode capture trains as the ast capture does.

A step that builds ``value_and_grad`` inside ``jit(capture_mode="bytecode")`` loses its gradients (exactly zero)
wherever the captured graph breaks inside the differentiated function; the loss value stays right. ms_bcewl must
break no graph there: each loop is compared step by step with the same loop under ast capture and with MindSpore's
built-in op, whose calls the bytecode capture traces.
"""
import contextlib
import faulthandler

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn, ops

import ms_bcewl
from conftest import set_mode
from support import reference as R
from support.bytecode_capture import bytecode_capture_refusal
from support.native_build import HANG_GUARD_SECONDS

STEPS = 5
FEATURES, CLASSES, BATCH = 4, 3, 8
LR = 0.5


@pytest.fixture(scope="module", autouse=True)
def bytecode_capture():
    """Every test here runs bytecode capture: where MindSpore refuses it, they are skipped with its reason."""
    set_mode("pynative")
    refusal = bytecode_capture_refusal()
    if refusal is not None:
        pytest.skip(f"MindSpore refuses bytecode capture here: {refusal}")


def _data():
    rng = np.random.default_rng(7)
    x = Tensor(rng.standard_normal((BATCH, FEATURES)).astype(np.float32))
    y = Tensor((rng.random((BATCH, CLASSES)) > 0.5).astype(np.float32))
    return x, y


def _functional_loss(loss_fn):
    """A loss whose weight and pos_weight are computed in the graph (from the target: the built-in op's weight
    gradients are zero, so no gradient may flow through them for the comparison)."""
    def loss(logits, target):
        return loss_fn(logits, target, weight=target * 0.5 + 0.75, pos_weight=target + 1.0)
    return loss


def _train(capture_mode, make_loss, fullgraph=False):
    """(losses, gradient sums, final parameters) of STEPS SGD steps of a Dense layer; ``make_loss()`` gives
    (loss function of (logits, target), its own trainable Parameters)."""
    ms.set_seed(0)
    net = nn.Dense(FEATURES, CLASSES, weight_init="normal", bias_init="zeros")
    loss, loss_params = make_loss()
    params = net.trainable_params() + loss_params
    optimizer = nn.SGD(params, LR)

    def forward(x, y):
        return loss(net(x), y)

    def step(x, y):
        value, grads = ms.value_and_grad(forward, None, params)(x, y)
        optimizer(grads)
        return value, grads

    step = ms.jit(step, capture_mode=capture_mode, fullgraph=fullgraph)
    x, y = _data()
    losses, grad_sums = [], []
    for _ in range(STEPS):
        value, grads = step(x, y)
        losses.append(float(value.asnumpy()))
        grad_sums.append([float(np.abs(g.asnumpy()).sum()) for g in grads])
    return np.array(losses), np.array(grad_sums), [p.asnumpy() for p in params]


def _functional(builtin):
    fn = ops.binary_cross_entropy_with_logits if builtin else ms_bcewl.binary_cross_entropy_with_logits
    return lambda: (_functional_loss(fn), [])


def _cell(builtin):
    pos_weight = Tensor(np.full(CLASSES, 1.5, np.float32))
    return lambda: ((nn.BCEWithLogitsLoss if builtin else ms_bcewl.BCEWithLogitsLoss)(pos_weight=pos_weight), [])


def _cell_training_pos_weight(builtin):
    """ms_bcewl's Cell with a Parameter pos_weight that trains (the built-in Cell refuses a Parameter)."""
    assert not builtin

    def make():
        pos_weight = Parameter(Tensor(np.full(CLASSES, 1.5, np.float32)), name="pos_weight")
        return ms_bcewl.BCEWithLogitsLoss(pos_weight=pos_weight), [pos_weight]
    return make


def _assert_same_training(got, expected):
    for got_part, expected_part, name in zip(got, expected, ("losses", "gradient sums")):
        np.testing.assert_allclose(got_part, expected_part, rtol=2e-5, atol=1e-6, err_msg=name)
    for got_param, expected_param in zip(got[2], expected[2]):
        np.testing.assert_allclose(got_param, expected_param, rtol=2e-5, atol=1e-6, err_msg="parameters")


@pytest.mark.parametrize("make_loss", [_functional, _cell_training_pos_weight], ids=["functional", "cell"])
def test_bytecode_capture_trains_as_ast_capture_does(pynative, make_loss):
    """jit(capture_mode="bytecode") around value_and_grad + SGD: the same losses, nonzero gradients and parameters
    as under ast capture (the gradients were all zero when ms_bcewl broke the bytecode graph)."""
    bytecode = _train("bytecode", make_loss(builtin=False))
    assert np.all(bytecode[1] > 0), f"zero gradients under bytecode capture: {bytecode[1]}"
    _assert_same_training(bytecode, _train("ast", make_loss(builtin=False)))


@pytest.mark.parametrize("make_loss", [_functional, _cell], ids=["functional", "cell"])
def test_bytecode_capture_matches_the_builtin_op(pynative, make_loss):
    """The same bytecode-captured loop through MindSpore's built-in op."""
    _assert_same_training(_train("bytecode", make_loss(builtin=False)), _train("bytecode", make_loss(builtin=True)))


def test_bytecode_capture_breaks_no_graph(pynative):
    """fullgraph=True makes any graph break an error: ms_bcewl's calls are captured whole."""
    losses, grad_sums, _ = _train("bytecode", _functional(builtin=False), fullgraph=True)
    assert np.all(grad_sums > 0) and np.all(np.diff(losses) < 0), (losses, grad_sums)


@contextlib.contextmanager
def _exit_with_tracebacks_if_hung(seconds):
    """Ends the test process with every thread's traceback after ``seconds``: a hang fails the run it is in."""
    faulthandler.dump_traceback_later(seconds, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def test_bytecode_capture_reports_bad_arguments(pynative):
    """A shape mismatch under bytecode capture is the ValueError of every other mode, not a graph break (nor the
    endless loop bytecode capture fell into on a try/except ahead of the raise)."""
    x, y = _data()

    @ms.jit(capture_mode="bytecode")
    def loss(logits, target):
        return ms_bcewl.binary_cross_entropy_with_logits(logits, target)

    with _exit_with_tracebacks_if_hung(HANG_GUARD_SECONDS // 3), \
            pytest.raises(ValueError, match=r"'input' and 'target' must have the same shape"):
        loss(x[:, :CLASSES], y[:, :2])


# ---------------------------------------------------------------------------------------------------------------
# One-element tensors: bytecode capture mis-traced any branch beside them (a weight Parameter's gradient of exactly
# 0, "Can not find top cell for backward" for one-element inputs); the expectations are the float64 reference's.
# ---------------------------------------------------------------------------------------------------------------

ONE_ELEMENT_SHAPES = [(), (1,), (1, 1)]
_X = np.array([[-0.8, 1.2, 0.7], [-0.1, -0.4, 0.7]], np.float32)
_Y = np.array([[0.3, 0.8, 1.2], [-0.6, 0.1, 2.2]], np.float32)


def _reference_weight_gradient(name, value, reduction):
    w, p = (value, None) if name == "weight" else (None, value)
    _, _, dw, dp = R.grads(_X, _Y, w, p, reduction)
    return dw if name == "weight" else dp


def _one_element_cell(name, shape, reduction):
    weight = Parameter(Tensor(np.full(shape, 2.0, np.float32)), name=name)
    return ms_bcewl.BCEWithLogitsLoss(reduction=reduction, **{name: weight}), weight


class _CapturedConstruct(ms_bcewl.BCEWithLogitsLoss):
    """The Cell with its construct decorated for bytecode capture, as model code writes it."""

    @ms.jit(capture_mode="bytecode")
    def construct(self, input, target):  # pylint: disable=redefined-builtin
        return ms_bcewl.binary_cross_entropy_with_logits(input, target, self.weight, self.pos_weight, self.reduction)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("shape", ONE_ELEMENT_SHAPES, ids=str)
@pytest.mark.parametrize("name", ["weight", "pos_weight"])
def test_bytecode_capture_gives_a_one_element_weight_its_gradient(pynative, name, shape, reduction):
    """ms.grad of ms.jit(cell, capture_mode="bytecode") by the cell's Parameter, on a first and a later call."""
    cell, weight = _one_element_cell(name, shape, reduction)
    grad = ms.grad(ms.jit(cell, capture_mode="bytecode"), grad_position=None, weights=[weight])
    expected = _reference_weight_gradient(name, np.full(shape, 2.0), reduction)
    for call in ("first", "later"):
        got = grad(Tensor(_X), Tensor(_Y))[0].asnumpy()
        np.testing.assert_allclose(got, expected, rtol=1e-5, err_msg=f"{call} call")


@pytest.mark.parametrize("shape", ONE_ELEMENT_SHAPES, ids=str)
def test_a_construct_decorated_for_bytecode_capture_trains_one_element_weights(pynative, shape):
    weight = Parameter(Tensor(np.full(shape, 2.0, np.float32)), name="pos_weight")
    cell = _CapturedConstruct(reduction="sum", pos_weight=weight)
    got = ms.grad(cell, grad_position=None, weights=[weight])(Tensor(_X), Tensor(_Y))[0].asnumpy()
    np.testing.assert_allclose(got, _reference_weight_gradient("pos_weight", np.full(shape, 2.0), "sum"), rtol=1e-5)


@pytest.mark.parametrize("shape", [(), (1,), (2,)], ids=str)
def test_bytecode_capture_differentiates_one_element_inputs(pynative, shape):
    """ms.grad(ms.jit(f, capture_mode="bytecode")) of a loss on inputs of one element (and of two)."""
    x, y = np.full(shape, 0.3, np.float32), np.full(shape, 0.7, np.float32)

    def loss(logits, target):
        return ms_bcewl.binary_cross_entropy_with_logits(logits, target)

    dx, dy = ms.grad(ms.jit(loss, capture_mode="bytecode"), grad_position=(0, 1))(Tensor(x), Tensor(y))
    expected_dx, expected_dy, _, _ = R.grads(x, y)
    np.testing.assert_allclose(dx.asnumpy(), expected_dx, rtol=1e-5)
    np.testing.assert_allclose(dy.asnumpy(), expected_dy, rtol=1e-5)


def test_model_trains_a_one_element_pos_weight_under_bytecode_capture(pynative):
    """mindspore.train.Model, one SGD step of a (1,) pos_weight Parameter whose loss Cell is bytecode-captured."""
    pos_weight = Parameter(Tensor(np.full((1,), 2.0, np.float32)), name="pos_weight")
    loss_fn = _CapturedConstruct(reduction="mean", pos_weight=pos_weight)
    optimizer = nn.SGD([pos_weight], learning_rate=LR)
    dataset = ms.dataset.NumpySlicesDataset({"x": _X[None], "y": _Y[None]}, shuffle=False)
    ms.train.Model(nn.Identity(), loss_fn=loss_fn, optimizer=optimizer).train(1, dataset)
    expected = 2.0 - LR * _reference_weight_gradient("pos_weight", np.full((1,), 2.0), "mean")
    np.testing.assert_allclose(pos_weight.asnumpy(), expected, rtol=1e-5)
