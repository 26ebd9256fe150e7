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
from support.native_build import HANG_GUARD_SECONDS

STEPS = 5
FEATURES, CLASSES, BATCH = 4, 3, 8
LR = 0.5


def _bytecode_capture_refusal():
    """MindSpore's own reason for refusing jit(capture_mode="bytecode") in this interpreter (2.10 on Python 3.12),
    or None where it captures: asked of MindSpore with a trivial function, not read off version numbers."""
    def identity(x):
        return x

    set_mode("pynative")
    try:
        ms.jit(identity, capture_mode="bytecode")(Tensor(1.0))
    except RuntimeError as error:
        if type(error).__name__ != "Unsupported":  # MindSpore's refusal, a RuntimeError of its own
            raise
        return str(error)
    return None


@pytest.fixture(scope="module", autouse=True)
def bytecode_capture():
    """Every test here runs bytecode capture: where MindSpore refuses it, they are skipped with its reason."""
    refusal = _bytecode_capture_refusal()
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
