"""ms_bcewl in every way a user calls it (direct, nn.Cell, BCEWithLogitsLoss, ms.jit, dynamic batch) and in
training: step for step against MindSpore's built-in BCEWithLogitsLoss, through value_and_grad + an optimizer and
through mindspore.train.Model, plus a learnable pos_weight.
"""
import mindspore as ms
import numpy as np
import pytest
from mindspore import nn

import ms_bcewl
from support import reference as R

STYLES = ("direct", "cell", "loss_cell", "jit")
LR = 0.1
W_CLASS = np.array([0.5, 1.0, 2.0])
P_CLASS = np.array([2.0, 0.5, 1.5])


class _FunctionalCell(nn.Cell):
    def __init__(self, reduction):
        super().__init__()
        self.reduction = reduction

    def construct(self, x, y, w, p):
        return ms_bcewl.binary_cross_entropy_with_logits(x, y, w, p, self.reduction)


def style_function(style, reduction, w, p):
    """(forward f(x, y, w, p), the grad positions it supports) for one calling style."""

    def direct(x, y, w_, p_):
        return ms_bcewl.binary_cross_entropy_with_logits(x, y, w_, p_, reduction)

    if style == "direct":
        return direct, (0, 1, 2, 3)
    if style == "jit":
        return ms.jit(direct), (0, 1, 2, 3)
    if style == "cell":
        return _FunctionalCell(reduction), (0, 1, 2, 3)
    cell = ms_bcewl.BCEWithLogitsLoss(reduction, w, p)

    def loss_cell(x, y, w_, p_):  # pylint: disable=unused-argument
        return cell(x, y)

    return loss_cell, (0, 1)


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_call_styles_forward_and_gradients(mode, reduction, style):
    case = R.make_case((3, 4), (4,), (3, 1), reduction, R.DTYPE_COMBOS["mixed16"], seed=41)
    x, y, w, p, _ = R.tensors(case)
    fn, pos = style_function(style, reduction, w, p)
    R.check_loss(case, got=fn(x, y, w, p), msg=style)

    def scaled(*args):
        return fn(*args).astype(ms.float32).sum() * 2.5

    grad_fn = ms.grad(scaled, grad_position=pos)
    if style == "jit":
        grad_fn = ms.jit(grad_fn)
    got = grad_fn(x, y, w, p)
    expected = case.expected_grads(np.full(case.out_shape, 2.5))
    for k, grad in zip(pos, got):
        assert R.dtype_name(grad.dtype) == case.dtypes[k]
        R.assert_close(R.to_f64(grad), expected[k], case.dtypes[k], "grad", msg=f"{style} d{'xywp'[k]}")


def test_in_graph_tells_a_compiled_call_from_a_python_call(pynative):
    """bce_with_logits.py picks GRAPH_FORWARD or PYNATIVE_FORWARD by in_graph(); a wrong answer either way would put
    primitives without C++ shape inference into graphs with dynamic shapes, or slow every PyNative call."""
    from ms_bcewl._primitives import in_graph

    def which(x):
        return x * 2 if in_graph() else x * 3

    x = ms.Tensor([1.0], ms.float32)
    assert in_graph() is False
    assert which(x).asnumpy()[0] == 3.0
    assert ms.jit(which)(x).asnumpy()[0] == 2.0


# ---------------------------------------------------------------------------------------------------------------
# Dynamic batch
# ---------------------------------------------------------------------------------------------------------------


def dynamic_spec(case, g_shape):
    """set_inputs placeholders for (x, y, w, p, g) with a None batch; an absent w/p's stand-in is x itself."""
    def spec(name, dims):
        return ms.Tensor(shape=list(dims), dtype=R.ms_dtype(name))

    dyn = [None] + list(case.x.shape[1:])
    x, y = spec(case.dtypes[0], dyn), spec(case.dtypes[1], dyn)
    w = x if case.w is None else spec(case.dtypes[2], case.w.shape)
    p = x if case.p is None else spec(case.dtypes[3], case.p.shape)
    return x, y, w, p, spec("float32", g_shape)


@pytest.mark.parametrize("variant, combo", [("plain", "fp32"), ("both", "fp32"), ("both", "mixed16")])
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_dynamic_batch(mode, reduction, variant, combo):
    """One Cell with set_inputs(Tensor(shape=[None, C])) called with two batch sizes: forward and every grad."""
    w_shape, p_shape = {"plain": (None, None), "both": ((4,), (1, 4))}[variant]
    cases = [R.make_case((b, 4), w_shape, p_shape, reduction, R.DTYPE_COMBOS[combo], seed=b) for b in (2, 5, 3)]
    net, gnet = R.loss_net(cases[0]), R.grad_net(cases[0])
    net.set_inputs(*dynamic_spec(cases[0], ()))
    gnet.set_inputs(*dynamic_spec(cases[0], [None, 4] if reduction == "none" else ()))
    for case in cases:
        R.check_loss(case, got=net(*R.tensors(case)), msg=f"batch {case.x.shape[0]}")
        g = R.upstream(case)
        R.check_grads(case, g, got=R.run_grads(case, g, net=gnet), msg=f"batch {case.x.shape[0]}")


# ---------------------------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------------------------


def data(seed=0, n=16):
    rng = np.random.default_rng(seed)
    return rng.normal(0, 1, (n, 8)).astype(np.float32), rng.uniform(0, 1, (n, 3)).astype(np.float32)


def make_dense(seed=1):
    rng = np.random.default_rng(seed)
    return nn.Dense(8, 3, weight_init=ms.Tensor(rng.normal(0, 0.5, (3, 8)).astype(np.float32)),
                    bias_init=ms.Tensor(rng.normal(0, 0.1, (3,)).astype(np.float32)))


def loss_fns():
    w, p = R.to_tensor(W_CLASS), R.to_tensor(P_CLASS)
    return {"ours": ms_bcewl.BCEWithLogitsLoss("mean", w, p), "builtin": nn.BCEWithLogitsLoss("mean", w, p)}


def make_train_step(mode, forward, opt):
    """One optimiser step of `forward` (value_and_grad); compiled with ms.jit in GRAPH mode."""
    grad_fn = ms.value_and_grad(forward, None, opt.parameters)

    def step(a, b):
        loss, grads = grad_fn(a, b)
        opt(grads)
        return loss

    return ms.jit(step) if mode == "graph" else step


def train_with_value_and_grad(mode, loss_fn, steps=20):
    x, y = data()
    net = make_dense()
    opt = nn.SGD(net.trainable_params(), learning_rate=LR, momentum=0.9)

    def forward(a, b):
        return loss_fn(net(a), b)

    step = make_train_step(mode, forward, opt)
    losses = []
    for i in range(steps):
        batch = slice(4 * (i % 4), 4 * (i % 4) + 4)
        losses.append(float(step(ms.Tensor(x[batch]), ms.Tensor(y[batch])).asnumpy()))
    return np.array(losses), [q.asnumpy().copy() for q in net.trainable_params()]


class _LossRecorder(ms.train.Callback):
    def __init__(self):
        super().__init__()
        self.losses = []

    def on_train_step_end(self, run_context):
        out = run_context.original_args().net_outputs
        self.losses.append(float((out[0] if isinstance(out, (tuple, list)) else out).asnumpy()))


def train_with_model(mode, loss_fn, epochs=3):
    x, y = data(seed=2)
    net = make_dense(seed=3)
    dataset = ms.dataset.NumpySlicesDataset({"data": x, "label": y}, shuffle=False).batch(4)
    model = ms.train.Model(net, loss_fn=loss_fn, optimizer=nn.Momentum(net.trainable_params(), LR, 0.9))
    recorder = _LossRecorder()
    model.train(epochs, dataset, callbacks=[recorder], dataset_sink_mode=False)
    return np.array(recorder.losses), [q.asnumpy().copy() for q in net.trainable_params()]


@pytest.mark.parametrize("trainer", [train_with_value_and_grad, train_with_model], ids=["value_and_grad", "model"])
def test_training_matches_builtin_loss(mode, trainer):
    runs = {name: trainer(mode, fn) for name, fn in loss_fns().items()}
    (ours, ours_params), (builtin, builtin_params) = runs["ours"], runs["builtin"]
    assert len(ours) == len(builtin) >= 12
    np.testing.assert_allclose(ours, builtin, rtol=1e-5, atol=1e-5, err_msg="loss step for step")
    for a, b in zip(ours_params, builtin_params):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg="final Dense parameters")
    assert builtin[-4:].mean() < builtin[:4].mean(), "the reference training must learn something"


class _PosWeightModel(nn.Cell):
    """A linear layer and a BCEWithLogitsLoss whose pos_weight is a learnable Parameter."""

    def __init__(self):
        super().__init__()
        self.pos_weight = ms.Parameter(R.to_tensor(P_CLASS), name="pos_weight")
        self.loss = ms_bcewl.BCEWithLogitsLoss("mean", R.to_tensor(W_CLASS), self.pos_weight)

    def construct(self, logits, y):
        return self.loss(logits, y)


def test_learnable_pos_weight_gets_the_reference_gradient_and_trains(mode):
    x, y = data(seed=4)
    logits = x[:, :3] * 2.0
    net = _PosWeightModel()
    assert [id(q) for q in net.trainable_params()] == [id(net.pos_weight)]
    grad = ms.grad(net, grad_position=None, weights=net.trainable_params())(ms.Tensor(logits), ms.Tensor(y))[0]
    expected = R.grads(logits, y, W_CLASS, P_CLASS, "mean")[3]
    assert np.all(np.abs(expected) > 1e-3)
    R.assert_close(R.to_f64(grad), expected, "float32", "grad", msg="dp of the Parameter")

    step = make_train_step(mode, net, nn.SGD([net.pos_weight], learning_rate=0.5))
    step(ms.Tensor(logits), ms.Tensor(y))
    R.assert_close(net.pos_weight.asnumpy(), P_CLASS - 0.5 * expected, "float32", "grad", msg="pos_weight after SGD")
