"""Dynamic shapes in graphs: unknown dimensions and unknown rank on any mix of the four tensor arguments.

``Cell.set_inputs`` with ``Tensor(shape=[None, None])`` (unknown dims) or ``Tensor(shape=None)`` (unknown rank) on
some arguments only, and ``mindspore.jit(dynamic=1)``, which generalises a signature after a few calls. What the
compiled graph knows is checked when it compiles; the rest when it runs, by the native library, with the sentence
of the compile-time check. Values are compared with the float64 reference and with MindSpore's built-in op under
the same dynamic inputs (its weight and pos_weight gradients are zeros, so those are compared with the reference
only).
"""
import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops

import ms_bcewl
from conftest import set_mode
from support import reference as R

SHAPE, W_SHAPE, P_SHAPE = (4, 3), (3,), (1, 3)

# One letter per argument (input, target, weight, pos_weight): s static, d unknown dims, r unknown rank.
MIXES = {"dsss": "mean", "rsss": "none", "sdrd": "sum", "srsr": "mean", "dddd": "none", "rrrr": "mean"}


@pytest.fixture
def graph_mode():
    yield set_mode("graph")
    set_mode("pynative")


def _spec(letter, shape):
    if letter == "s":
        return Tensor(shape=shape, dtype=ms.float32)
    if letter == "d":
        return Tensor(shape=[None] * len(shape), dtype=ms.float32)
    return Tensor(shape=None, dtype=ms.float32)


def _set_dynamic_inputs(net, mix, case):
    """net(x, y, w, p, g) with each of x, y, w, p static or dynamic as ``mix`` says; g has the loss's shape (for
    'none', as dynamic as the input: MindSpore 2.10 crashes on a static unused input beside a dynamic output)."""
    g_spec = _spec(mix[0], case.x.shape) if case.reduction == "none" else _spec("s", ())
    # an absent weight's place holds the input, which the Cell ignores (R.tensors)
    net.set_inputs(*(_spec(letter, (case.x if a is None else a).shape) for letter, a in zip(mix, case.args)), g_spec)
    return net


class _BuiltinLoss(nn.Cell):
    """MindSpore's own op, with the LossNet signature (x, y, w, p, g) and Σ(loss · g) for its gradients."""

    def __init__(self, reduction, with_sens):
        super().__init__()
        self.reduction = reduction
        self.with_sens = with_sens

    def construct(self, x, y, w, p, g):
        out = ops.binary_cross_entropy_with_logits(x, y, w, p, self.reduction)
        return (out * g).sum() if self.with_sens else out


def _builtin_values(case, g):
    """The built-in op's loss, dx and dy on the same values with static shapes (it refuses an input of unknown
    rank beside a target of known shape when compiling, which ms_bcewl accepts)."""
    _, grad_net = R.cells()
    tensors = R.tensors(case, g)
    loss = _BuiltinLoss(case.reduction, with_sens=False)(*tensors)
    return (loss,) + grad_net(_BuiltinLoss(case.reduction, with_sens=True), (0, 1))(*tensors)


@pytest.mark.parametrize("mix", sorted(MIXES))
def test_graph_mode_dynamic_inputs(graph_mode, mix):
    """Cell.set_inputs with unknown dims or rank on some arguments: the forward and all four gradients against
    the float64 reference and the built-in op (input (None, None) with a static target was refused)."""
    case = R.make_case(SHAPE, W_SHAPE, P_SHAPE, MIXES[mix], seed=5)
    g = R.upstream(case)
    loss = R.check_loss(case, got=_set_dynamic_inputs(R.loss_net(case), mix, case)(*R.tensors(case)), msg=mix)
    grads = R.check_grads(case, g, got=_set_dynamic_inputs(R.grad_net(case), mix, case)(*R.tensors(case, g)),
                          msg=mix)
    for ours, builtin in zip((loss,) + tuple(grads[:2]), _builtin_values(case, g)):
        np.testing.assert_allclose(ours.asnumpy(), builtin.asnumpy(), rtol=1e-5, atol=1e-6)


def _python_sentence(values):
    """The ValueError sentence PyNative's compile-free check gives for these concrete values."""
    with pytest.raises(ValueError) as excinfo:
        ms_bcewl.binary_cross_entropy_with_logits(*values)
    return str(excinfo.value)


# (mix, shapes of input, target, weight, pos_weight at run time, None for an absent one, reduction) that only the run
# reveals as wrong.
RUN_TIME_MISMATCHES = {
    "target": ("ddss", ((4, 3), (4, 2), (3,), (1, 3)), "mean"),
    "weight": ("ssrs", ((4, 3), (4, 3), (4,), (1, 3)), "mean"),
    "pos_weight_rank": ("rrsr", ((4, 3), (4, 3), (3,), (1, 1, 3)), "mean"),
    # the entry's third input is then pos_weight, which the sentence names
    "pos_weight_alone": ("rrsr", ((4, 3), (4, 3), None, (1, 1, 3)), "mean"),
    # the aclnn API skips the broadcast checks for an empty input (contract §8); the Python API does not
    "empty_input_weight": ("ddds", ((0, 3), (0, 3), (2,), (1, 3)), "mean"),
    # refused by the library's InferShape, which gives the output the input's shape, before the kernel runs
    "input_rank_none": ("rrrr", ((1,) * 9, (1,) * 9, (1,), (1,)), "none"),
}


@pytest.mark.parametrize("name", sorted(RUN_TIME_MISMATCHES))
def test_run_time_mismatch_says_what_python_says(graph_mode, name):
    """Shapes known only when the graph runs: the native library raises a RuntimeError holding the very sentence
    of the compile-time check (a binary wheel's library too, which carries a C++ runtime of its own)."""
    mix, shapes, reduction = RUN_TIME_MISMATCHES[name]
    values = [None if shape is None else Tensor(np.full(shape, 0.5, np.float32)) for shape in shapes]
    case = R.make_case(SHAPE, W_SHAPE if shapes[2] else None, P_SHAPE, reduction)
    net = _set_dynamic_inputs(R.loss_net(case), mix, case)
    with pytest.raises(RuntimeError) as excinfo:
        net(*(values[0] if value is None else value for value in values), Tensor(np.float32(1.0)))
    set_mode("pynative")
    assert _python_sentence(values) in str(excinfo.value)


def _jit_dynamic_loss(reduction):
    @ms.jit(dynamic=1)
    def loss(x, y, w, p):
        return ms_bcewl.binary_cross_entropy_with_logits(x, y, w, p, reduction)
    return loss


# Shapes of (input, weight, pos_weight) in call order: the signature is generalised, then changes rank.
JIT_DYNAMIC_CALLS = (((2, 3), (3,), (1, 3)), ((4, 5), (5,), (1, 5)), ((2, 4, 5), (5,), (4, 1)), ((6,), (1,), (6,)))


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_jit_dynamic_keeps_valid_calls_valid(pynative, reduction):
    """mindspore.jit(dynamic=1) through shape and rank changes: every call's loss and four gradients against the
    reference, the loss against the built-in op (a rank change raised TypeError from the validation)."""
    loss = _jit_dynamic_loss(reduction)
    grads = ms.grad(loss, grad_position=(0, 1, 2, 3))
    for seed, (shape, w_shape, p_shape) in enumerate(JIT_DYNAMIC_CALLS):
        case = R.make_case(shape, w_shape, p_shape, reduction, seed=seed)
        tensors = [R.to_tensor(a) for a in case.args]
        got = R.check_loss(case, got=loss(*tensors), msg=str(shape))
        builtin = ops.binary_cross_entropy_with_logits(*tensors, reduction=reduction)
        np.testing.assert_allclose(got.asnumpy(), builtin.asnumpy(), rtol=1e-5, atol=1e-6)
        R.check_grads(case, got=grads(*tensors), msg=str(shape))


def test_jit_dynamic_error_stays_at_its_call(pynative):
    """A bad call after the signature is generalised raises the Python sentence at that call (it used to name
    (None, None) and fail later valid calls); a valid call after it is right."""
    loss = _jit_dynamic_loss("mean")
    for seed, (shape, w_shape, p_shape) in enumerate(JIT_DYNAMIC_CALLS[:2]):
        case = R.make_case(shape, w_shape, p_shape, "mean", seed=seed)
        R.check_loss(case, got=loss(*(R.to_tensor(a) for a in case.args)))
    bad = [Tensor(np.full(s, 0.5, np.float32)) for s in ((4, 5), (4, 6), (5,), (1, 5))]
    with pytest.raises(RuntimeError) as excinfo:
        loss(*bad)
    assert _python_sentence(bad) in str(excinfo.value)
    case = R.make_case((3, 7), (7,), (1, 7), "mean", seed=9)
    R.check_loss(case, got=loss(*(R.to_tensor(a) for a in case.args)), msg="valid call after the error")
