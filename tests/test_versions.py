"""Smoke tests of ms_bcewl on the installed MindSpore release: what .ci/version_matrix runs in a fresh venv per
release (docs/versions.md), and part of the full suite.

The forward and all four gradients in both modes, a dynamic batch (Cell.set_inputs), which PyNative path the
release gets and that its gradients are the primitives' over 40 calls in both runtimes, and a short training run
against MindSpore's own loss. Only NumPy, MindSpore and pytest are needed (no PyTorch).
"""
import json
import os
import subprocess

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn

import ms_bcewl
from ms_bcewl import _pyboost as pyboost_path
from support import reference as R


@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_forward_and_all_four_gradients(mode, reduction):
    case = R.make_case((3, 4), (4,), (3, 1), reduction, seed=11)
    g = R.upstream(case)
    loss_scale, grad_scales = R.rounding_scales(case, g)
    R.check_loss(case, scale=loss_scale, msg=mode)
    grads = R.check_grads(case, g, scale=grad_scales, msg=mode)
    assert len(grads) == 4 and all(grad.asnumpy().any() for grad in grads)


def test_dynamic_batch_through_set_inputs(mode):
    """One compiled Cell for batches of 2, 5 and 3 rows: mean divides by each call's element count."""
    class Loss(nn.Cell):
        def construct(self, x, y):
            return ms_bcewl.binary_cross_entropy_with_logits(x, y, reduction="mean")

    net = Loss()
    net.set_inputs(Tensor(shape=[None, 4], dtype=ms.float32), Tensor(shape=[None, 4], dtype=ms.float32))
    grad_net = ms.grad(net, grad_position=(0, 1))
    for rows in (2, 5, 3):
        case = R.make_case((rows, 4), seed=rows)
        x, y = Tensor(case.x.astype(np.float32)), Tensor(case.y.astype(np.float32))
        np.testing.assert_allclose(net(x, y).asnumpy(), R.loss(case.x, case.y), rtol=1e-5, err_msg=f"{rows} rows")
        expected_dx, expected_dy, _, _ = R.grads(case.x, case.y)
        dx, dy = grad_net(x, y)
        np.testing.assert_allclose(dx.asnumpy(), expected_dx, rtol=1e-4, atol=1e-7, err_msg=f"dx, {rows} rows")
        np.testing.assert_allclose(dy.asnumpy(), expected_dy, rtol=1e-4, atol=1e-7, err_msg=f"dy, {rows} rows")


def run_repeated_grads(runtime, path):
    """tests/support/pyboost_repeated_grads.py in a process of its own (launch_blocking() cannot be undone)."""
    environment = {key: value for key, value in os.environ.items() if key != pyboost_path.PATH_VARIABLE}
    return subprocess.run(R.module_command("pyboost_repeated_grads", runtime, path), capture_output=True,
                          text=True, env=R.child_environment(environment), check=False)


def repeated_grads(runtime, path):
    done = run_repeated_grads(runtime, path)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("runtime", ["blocking", "async"])
def test_the_automatic_path_gives_the_primitives_gradients_over_40_calls(runtime):
    """`ms.grad(lambda x: loss(x * 2, y))(x)`, 40 times: the pyboost path gives zero gradients in the asynchronous
    runtime on every release (so auto keeps the primitives there); under launch_blocking() auto takes pyboost,
    with the primitives' gradients."""
    result = repeated_grads(runtime, "auto")
    assert result["mindspore"] == ms.__version__
    assert result["expected_nonzero"]
    assert (result["zero"], result["differ"]) == (0, 0), result
    assert result["pyboost"] == (runtime == "blocking"), result


def test_an_explicit_pyboost_setting_gives_the_primitives_gradients():
    """MS_BCEWL_PYNATIVE_PATH=pyboost under launch_blocking(): the pyboost path, with the primitives' gradients in
    all 40 calls."""
    result = repeated_grads("blocking", "pyboost")
    assert result["pyboost"] and (result["zero"], result["differ"]) == (0, 0), result


def train(loss_fn, steps=6):
    """The Dense layer's parameters and the losses after `steps` SGD steps on fixed data."""
    ms.set_seed(1)
    rng = np.random.default_rng(2)
    x = Tensor(rng.normal(size=(16, 5)).astype(np.float32))
    y = Tensor((rng.uniform(size=(16, 3)) > 0.4).astype(np.float32))
    dense = nn.Dense(5, 3)
    step = nn.TrainOneStepCell(nn.WithLossCell(dense, loss_fn), nn.SGD(dense.trainable_params(), learning_rate=0.5))
    losses = [float(step(x, y).asnumpy()) for _ in range(steps)]
    return losses, [parameter.asnumpy() for parameter in dense.trainable_params()]


def test_training_matches_mindsporess_own_loss(mode):
    """Six SGD steps of a Dense layer with a weight and a pos_weight: the same losses and parameters as with
    mindspore.nn.BCEWithLogitsLoss (float32 roundings apart)."""
    weight = Tensor(np.array([1.0, 0.5, 2.0], np.float32))
    pos_weight = Tensor(np.array([3.0, 1.0, 0.5], np.float32))
    ours = train(ms_bcewl.BCEWithLogitsLoss("mean", weight, pos_weight))
    theirs = train(nn.BCEWithLogitsLoss("mean", weight, pos_weight))
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    assert ours[0][-1] < ours[0][0]
    for got, expected in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
