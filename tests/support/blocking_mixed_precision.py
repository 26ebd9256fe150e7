"""Mixed precision on both PyNative paths under launch_blocking(), where the automatic choice is pyboost.

Run by tests/test_pyboost_path.py in a process of its own (launch_blocking() cannot be undone): each case runs
through the pyboost path, through the ops.Custom primitives and with MindSpore's op, and prints one JSON line: the
three output dtypes, whether the two paths gave the same bits (loss and every gradient), and the losses.

    PYTHONPATH=tests python3 -P -m support.blocking_mixed_precision
"""
import json

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn

import ms_bcewl
from ms_bcewl._pyboost import PYBOOST

AMP_DTYPES = ("float16", "bfloat16")
AMP_LEVELS = ("O2", "O3", "auto")


def input_arrays():
    """float32 x, y, weight and pos_weight."""
    rng = np.random.default_rng(68)
    return (rng.normal(0, 2, (4, 3)).astype(np.float32), rng.uniform(size=(4, 3)).astype(np.float32),
            np.array([0.3, 1.7, 2.1], np.float32), np.array([1.3, 0.7001, 2.2], np.float32))


class DenseWithLoss(nn.Cell):
    def __init__(self, loss):
        super().__init__()
        self.dense = nn.Dense(3, 3)
        self.loss = loss

    def construct(self, x, y):
        return self.loss(self.dense(x), y)


class FunctionalLoss(nn.Cell):
    """A user's Cell calling the functional form: to_float on it reaches ms_bcewl's call too."""

    def __init__(self, reduction):
        super().__init__()
        self.reduction = reduction

    def construct(self, x, y):
        return ms_bcewl.binary_cross_entropy_with_logits(x, y, reduction=self.reduction)


def to_float_run(make_loss, dtype, loss_only=False):
    """[loss, dx, dy, gradients of the Cell's Parameters] of make_loss().to_float(dtype) on float32 inputs."""
    x, y, _, _ = (Tensor(a) for a in input_arrays())
    cell = make_loss().to_float(getattr(ms, dtype))
    if loss_only:
        return [cell(x, y)]
    (dx, dy), parameter_grads = ms.grad(cell, grad_position=(0, 1), weights=cell.trainable_params())(x, y)
    return [cell(x, y), dx, dy, *parameter_grads]


def amp_run(make_loss, level, loss_only=False):
    """[loss, gradients of the network's Parameters] of auto_mixed_precision(Dense + loss, level)."""
    x, y, _, _ = (Tensor(a) for a in input_arrays())
    ms.set_seed(5)
    net = ms.amp.auto_mixed_precision(DenseWithLoss(make_loss()), level)
    if loss_only:
        return [net(x, y)]
    value, grads = ms.value_and_grad(net, None, net.trainable_params())(x, y)
    return [value, *grads]


def through(path, run, *arguments):
    PYBOOST.choice = path
    try:
        return run(*arguments)
    finally:
        PYBOOST.choice = "auto"


def as_f64(tensor):
    return tensor.astype(ms.float32).asnumpy().astype(np.float64)


def report(name, run, ms_bcewl_loss, builtin_loss, *arguments):
    pyboost, primitives = through("pyboost", run, ms_bcewl_loss, *arguments), through("aot", run, ms_bcewl_loss,
                                                                                       *arguments)
    builtin = run(builtin_loss, *arguments, loss_only=True)  # MindSpore has no bfloat16 gradient kernel on CPU
    same = len(pyboost) == len(primitives) and all(
        a.dtype == b.dtype and np.array_equal(as_f64(a), as_f64(b), equal_nan=True)
        and np.array_equal(np.signbit(as_f64(a)), np.signbit(as_f64(b))) for a, b in zip(pyboost, primitives))
    print(json.dumps({"case": name, "same_bits": bool(same),
                      "dtypes": [str(t[0].dtype) for t in (pyboost, primitives, builtin)],
                      "loss": as_f64(pyboost[0]).tolist(), "builtin_loss": as_f64(builtin[0]).tolist()}), flush=True)


def to_float_cases():
    _, _, weight, pos_weight = input_arrays()
    for dtype in AMP_DTYPES:
        for reduction in ("none", "mean", "sum"):
            parameter = Parameter(Tensor(pos_weight), name="amp_pos_weight")
            report(f"to_float {dtype} {reduction}", to_float_run,
                   lambda r=reduction, p=parameter: ms_bcewl.BCEWithLogitsLoss(r, Tensor(weight), p),
                   lambda r=reduction: nn.BCEWithLogitsLoss(r, Tensor(weight), Tensor(pos_weight)), dtype)
            report(f"to_float {dtype} {reduction} functional", to_float_run,
                   lambda r=reduction: FunctionalLoss(r), lambda r=reduction: nn.BCEWithLogitsLoss(r), dtype)


def amp_cases():
    for level in AMP_LEVELS:
        report(f"amp {level}", amp_run, ms_bcewl.BCEWithLogitsLoss, nn.BCEWithLogitsLoss, level)


if __name__ == "__main__":
    ms.runtime.launch_blocking()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    PYBOOST.wait()
    to_float_cases()
    amp_cases()
