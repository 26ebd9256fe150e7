"""Second and higher-order gradients: a gradient of ms_bcewl's gradients is real in every mode, or a clear error.

The gradient primitives' bprops (ms_bcewl/_primitives.py) are checked against float64 finite differences of the
first-order gradients (tests/support/reference.py) for input, target, weight, pos_weight and the upstream gradient,
every variant and reduction, and against torch's double and triple backward of F.binary_cross_entropy_with_logits in
a WGAN-GP-style gradient penalty and a MAML-style inner step. PyNative in the default runtime and GRAPH mode run
here; PyNative under launch_blocking() (the pyboost path, which hands a call inside a higher-order gradient to the
primitives) runs in a process of its own, which prints one JSON line per case:

    PYTHONPATH=tests python3 -P -c "import test_second_order as t; t.blocking_cases()"
"""
import json
import os
import subprocess
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
import torch
import torch.nn.functional as torch_f
from mindspore import nn, ops

import ms_bcewl
from ms_bcewl._pyboost import PYBOOST
from support import reference as R

pytestmark = pytest.mark.same_for_every_build

VARIANT_NAMES = tuple(R.VARIANTS)
LEARNING_RATE = 0.5


# ---- the contraction of the first-order gradients, differentiated once more ----

class FirstOrder(nn.Cell):
    """ms_bcewl's gradients of sum(g * loss) with respect to the present arguments among (x, y, w, p)."""

    def __init__(self, case):
        super().__init__()
        self.loss = R.loss_net(case, with_sens=True)
        self.positions = R.positions(case)

    def construct(self, x, y, w, p, g):
        return ms.grad(self.loss, grad_position=self.positions)(x, y, w, p, g)


class Contracted(nn.Cell):
    """sum_k sum(c_k * d_k) over the first-order gradients d_k: its gradient is the second-order one."""

    def __init__(self, case):
        super().__init__()
        self.first = FirstOrder(case)
        self.count = len(R.positions(case))

    def construct(self, x, y, w, p, g, cotangents):
        grads = self.first(x, y, w, p, g)
        total = 0.0
        for k in range(self.count):
            total = total + (grads[k].astype(ms.float32) * cotangents[k]).sum()
        return total


def cotangents_for(case, seed=7):
    """One random cotangent per present argument, of its shape, representable in float32."""
    rng = np.random.default_rng(seed)
    return [R.round_to(rng.uniform(-1.0, 1.0, np.shape(a)), "float32") for a in case.args if a is not None]


def run_second_order(case, g, cotangents):
    """ms_bcewl's gradient of the contraction with respect to the present arguments and g (tensors)."""
    x, y, w, p = (R.to_tensor(np.zeros(1) if a is None else a, d) for a, d in zip(case.args, case.dtypes))
    grad = ms.grad(Contracted(case), grad_position=(0, 1, 2, 3, 4))
    out = grad(x, y, w, p, R.to_tensor(g, case.out_dtype), tuple(R.to_tensor(c) for c in cotangents))
    return [t for t, a in zip(out, case.args + (g,)) if a is not None]


def contraction(case, cotangents):
    """The contraction in float64 as a function of (x, y, w, p, g): sum_k sum(c_k * d_k) by
    tests/support/reference.py."""
    def value(x, y, w, p, g):
        grads = [d for d in R.grads(x, y, w, p, case.reduction, g) if d is not None]
        return sum(float(np.sum(c * d)) for c, d in zip(cotangents, grads))
    return value


def finite_differences(function, arguments, eps=1e-6):
    """Central differences of function(*arguments) in float64, for every element of every argument not None."""
    base = [None if a is None else np.array(a, dtype=np.float64) for a in arguments]
    result = []
    for k, a in enumerate(base):
        if a is None:
            continue
        d = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            shifted = []
            for sign in (1.0, -1.0):
                moved = [b if b is None else b.copy() for b in base]
                moved[k][idx] += sign * eps
                shifted.append(function(*moved))
            d[idx] = (shifted[0] - shifted[1]) / (2 * eps)
        result.append(d)
    return result


def assert_second_order(got, expected, rtol, atol, what):
    for name, got_k, expected_k in zip(("x", "y", "w", "p", "g"), got, expected):
        scale = max(1.0, float(np.max(np.abs(expected_k), initial=0.0)))
        np.testing.assert_allclose(got_k, expected_k, rtol=rtol, atol=atol * scale, err_msg=f"{what}: d/d{name}")


def second_order_case(variant, reduction, combo="fp32"):
    """A 3 x 4 case of the variant and dtypes (tests/support/reference.py), a random upstream gradient and
    cotangents."""
    case = R.matrix_case(reduction, variant, combo)
    return case, R.upstream(case), cotangents_for(case)


def check_against_finite_differences(variant, reduction, got=None, combo="fp32", rtol=2e-4, atol=2e-6):
    case, g, cotangents = second_order_case(variant, reduction, combo)
    got = [R.to_f64(t) for t in run_second_order(case, g, cotangents)] if got is None else got
    expected = finite_differences(contraction(case, cotangents), list(case.args) + [g])
    assert len(got) == len(cotangents) + 1
    assert_second_order(got, expected, rtol, atol, f"{variant}/{reduction}/{combo}")


@pytest.mark.parametrize("reduction", R.REDUCTIONS)
@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_second_order_gradients_match_finite_differences(mode, variant, reduction):
    """The gradient of sum_k c_k * d_k (d_k ms_bcewl's gradients of sum(g * loss)) with respect to x, y, w, p and g
    is the central difference of the float64 first-order gradients. On main: "bprop not defined"."""
    check_against_finite_differences(variant, reduction)


def test_second_order_gradients_are_finite_and_right_for_extreme_logits(mode):
    """Logits of +-100, +-30, +-1e-3 and 0: no overflow or cancellation in the second-order gradients."""
    x = np.array([[-100.0, -30.0, -1e-3, 0.0], [1e-3, 30.0, 100.0, 2.0]])
    case = R.case_from(R.round_to(x, "float32"), [[0.0, 1.0, 0.5, 1.0], [0.0, 1.0, 0.0, 0.25]], [1.5, 0.5, 2.0, 1.0],
                       [[3.0], [0.5]], "sum")
    g, cotangents = np.float64(1.0), cotangents_for(case)
    got = [R.to_f64(t) for t in run_second_order(case, g, cotangents)]
    assert all(np.all(np.isfinite(v)) for v in got)
    assert_second_order(got, finite_differences(contraction(case, cotangents), list(case.args) + [g]), 2e-4, 2e-6,
                        "extreme logits")


def test_second_order_gradients_take_their_limits_at_infinite_logits(mode):
    """x = +inf with y = 1 and x = -inf with y = 0 (a loss of 0): where a zero factor meets an infinite term the
    product is 0, so no gradient is NaN, and d/dx is its limit, -w (at +inf) and -w p (at -inf), for unit
    cotangents and g."""
    w, p = np.array([1.5, 0.5]), np.array([[2.0]])
    case = R.case_from(np.array([[np.inf, -np.inf]]), [[1.0, 0.0]], w, p, "none")
    got = [R.to_f64(t) for t in run_second_order(case, np.ones((1, 2)), [np.ones_like(a) for a in case.args])]
    assert not any(np.any(np.isnan(v)) for v in got)
    np.testing.assert_array_equal(got[0], [[-w[0], -w[1] * p[0, 0]]])


@pytest.mark.parametrize("combo, tolerances", [("fp16", (1e-2, 2e-3)), ("bf16", (2e-2, 1e-2))])
def test_second_order_gradients_in_16_bit_dtypes(pynative, combo, tolerances):
    """float16 and bfloat16 arguments: second-order gradients in their dtypes, within their rounding of the float64
    ones. (GRAPH mode on CPU refuses bfloat16 here: MindSpore's AddN, which sums the gradients of a tensor used
    twice, has no bfloat16 CPU kernel, a TypeError when the graph compiles.)"""
    case, g, cotangents = second_order_case("both", "mean", combo)
    got = run_second_order(case, g, cotangents)
    assert [t.dtype for t in got] == [R.ms_dtype(case.dtypes[0])] * 5
    check_against_finite_differences("both", "mean", [R.to_f64(t) for t in got], combo, *tolerances)


# ---- a WGAN-GP-style gradient penalty and a MAML-style inner step, against torch ----

def _weights_of(variant):
    """The variant's weight and pos_weight for 6 x 4 logits (per class, or per element and per class)."""
    w_shape, p_shape = {"plain": (None, None), "weight": ((4,), None), "pos_weight": (None, (4,)),
                        "both": ((6, 4), (1, 4))}[variant]
    rng = np.random.default_rng(11)
    w = None if w_shape is None else R.round_to(rng.uniform(0.5, 2.0, w_shape), "float32")
    p = None if p_shape is None else R.round_to(rng.uniform(0.25, 3.0, p_shape), "float32")
    return w, p


def scenario_arrays(variant):
    """Data (6 x 3 features), a 3 x 4 linear model theta, targets, validation data, and the variant's weights."""
    rng = np.random.default_rng(5)
    arrays = {name: R.round_to(rng.normal(size=shape), "float32")
              for name, shape in (("inputs", (6, 3)), ("theta", (3, 4)), ("inputs_val", (6, 3)))}
    arrays["y"] = R.round_to(rng.uniform(size=(6, 4)), "float32")
    arrays["y_val"] = R.round_to((rng.uniform(size=(6, 4)) > 0.5).astype(np.float64), "float32")
    arrays["w"], arrays["p"] = _weights_of(variant)
    return arrays


class Loss(nn.Cell):
    """ms_bcewl's loss of the variant (summed where the reduction is none)."""

    def __init__(self, reduction, has_w, has_p):
        super().__init__()
        self.reduction, self.has_w, self.has_p = reduction, has_w, has_p

    def construct(self, logits, y, w, p):
        loss = ms_bcewl.binary_cross_entropy_with_logits(logits, y, w if self.has_w else None,
                                                         p if self.has_p else None, self.reduction)
        return loss.sum()


class GradientPenalty(nn.Cell):
    """mean over rows of (|d loss / d logits| - 1)^2 for the logits inputs @ theta, as WGAN-GP penalises a
    critic's input gradient. (The gradient is taken at the logits: MindSpore 2.10's PyNative drops the direct
    theta term of matmul's bprop in a second-order gradient, with its own operations too.)"""

    def __init__(self, loss):
        super().__init__()
        self.loss = loss

    def construct(self, inputs, theta, y, w, p):
        d_logits = ms.grad(self.loss, grad_position=0)(ops.matmul(inputs, theta), y, w, p)
        norms = ops.sqrt((d_logits * d_logits).sum(axis=1) + 1e-12)
        return ((norms - 1.0) * (norms - 1.0)).mean()


class LinearLoss(nn.Cell):
    """The loss of the logits inputs @ theta."""

    def __init__(self, loss):
        super().__init__()
        self.loss = loss

    def construct(self, inputs, theta, y, w, p):
        return self.loss(ops.matmul(inputs, theta), y, w, p)


class InnerStep(nn.Cell):
    """The validation loss after one SGD step of theta on the training loss (MAML's inner step)."""

    def __init__(self, loss):
        super().__init__()
        self.loss = LinearLoss(loss)

    def construct(self, theta, inputs, y, inputs_val, y_val, w, p):
        step = ms.grad(self.loss, grad_position=1)(inputs, theta, y, w, p)
        return self.loss(inputs_val, theta - LEARNING_RATE * step, y_val, w, p)


def ms_scenarios(variant, reduction):
    """(penalty's gradient for theta and y, MAML's outer gradient for theta) by ms_bcewl, as float64 arrays."""
    a = scenario_arrays(variant)
    t = {name: R.to_tensor(np.zeros(1) if value is None else value) for name, value in a.items()}
    loss = Loss(reduction, a["w"] is not None, a["p"] is not None)
    penalty = ms.grad(GradientPenalty(loss), grad_position=(1, 2))(t["inputs"], t["theta"], t["y"], t["w"], t["p"])
    maml = ms.grad(InnerStep(loss), grad_position=0)(t["theta"], t["inputs"], t["y"], t["inputs_val"],
                                                     t["y_val"], t["w"], t["p"])
    return [R.to_f64(v) for v in penalty] + [R.to_f64(maml)]


def torch_scenarios(variant, reduction):
    """The same by torch in float64 (its double backward of F.binary_cross_entropy_with_logits)."""
    a = {name: None if value is None else torch.tensor(value, dtype=torch.float64)
         for name, value in scenario_arrays(variant).items()}
    inputs, theta, y = a["inputs"], a["theta"].clone().requires_grad_(True), a["y"].clone().requires_grad_(True)

    def loss(inputs_, theta_, y_):
        return torch_f.binary_cross_entropy_with_logits(inputs_ @ theta_, y_, a["w"], reduction=reduction,
                                                        pos_weight=a["p"]).sum()

    logits = inputs @ theta
    (d_logits,) = torch.autograd.grad(torch_f.binary_cross_entropy_with_logits(
        logits, y, a["w"], reduction=reduction, pos_weight=a["p"]).sum(), logits, create_graph=True)
    norms = torch.sqrt((d_logits * d_logits).sum(dim=1) + 1e-12)
    penalty = torch.autograd.grad(((norms - 1.0) ** 2).mean(), (theta, y))
    (step,) = torch.autograd.grad(loss(a["inputs"], theta, a["y"]), theta, create_graph=True)
    (maml,) = torch.autograd.grad(loss(a["inputs_val"], theta - LEARNING_RATE * step, a["y_val"]), theta)
    return [v.numpy() for v in penalty] + [maml.numpy()]


def assert_scenarios_match_torch(got, variant, reduction):
    for name, got_k, expected_k in zip(("penalty d theta", "penalty d y", "MAML d theta"), got,
                                       torch_scenarios(variant, reduction)):
        assert np.any(expected_k != 0)
        np.testing.assert_allclose(got_k, expected_k, rtol=1e-4, atol=1e-6, err_msg=f"{variant}/{reduction} {name}")


@pytest.mark.parametrize("reduction", R.REDUCTIONS)
@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_gradient_penalty_and_maml_step_match_torch(mode, variant, reduction):
    """WGAN-GP: the gradient, for the model and the targets, of a penalty on the loss's input gradient; MAML: the
    gradient of the validation loss after one SGD step on the training loss. Both equal torch's (float64)."""
    assert_scenarios_match_torch(ms_scenarios(variant, reduction), variant, reduction)


class ThirdOrder(nn.Cell):
    """sum(dx^2) + sum(dy * x) over ms_bcewl's first-order gradients dx, dy: its x-gradient h is second order."""

    def __init__(self, case):
        super().__init__()
        self.first = FirstOrder(case)

    def construct(self, x, y, w, p, g):
        grads = self.first(x, y, w, p, g)
        return (grads[0] * grads[0]).sum() + (grads[1] * x).sum()


class ThirdOrderObjective(nn.Cell):
    """sum(h * h) of ThirdOrder's h: its gradient is the third order."""

    def __init__(self, case):
        super().__init__()
        self.second = ThirdOrder(case)

    def construct(self, x, y, w, p, g):
        h = ms.grad(self.second, grad_position=0)(x, y, w, p, g)
        return (h * h).sum()


def test_third_order_gradients_match_torch(mode):
    """Third order through the bprops' own MindSpore operations, for x and y, weight and pos_weight given."""
    case = R.matrix_case("mean", "both", "fp32")
    g = np.float64(1.0)
    x, y, w, p = (R.to_tensor(a) for a in case.args)
    got = ms.grad(ThirdOrderObjective(case), grad_position=(0, 1))(x, y, w, p, R.to_tensor(g))
    xt, yt = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (case.x, case.y))
    loss = torch_f.binary_cross_entropy_with_logits(xt, yt, torch.tensor(case.w), pos_weight=torch.tensor(case.p))
    dx, dy = torch.autograd.grad(loss, (xt, yt), create_graph=True)
    (h,) = torch.autograd.grad((dx * dx).sum() + (dy * xt).sum(), xt, create_graph=True)
    expected = torch.autograd.grad((h * h).sum(), (xt, yt))
    for name, got_k, expected_k in zip("xy", got, expected):
        np.testing.assert_allclose(R.to_f64(got_k), expected_k.numpy(), rtol=1e-3, atol=1e-7, err_msg=f"d/d{name}")


# Shapes of (input, weight, pos_weight) in call order: mindspore.jit(dynamic=1) makes the dims unknown, then the rank.
JIT_DYNAMIC_CALLS = (((2, 3), (3,), (1, 3)), ((4, 5), (5,), (1, 5)), ((2, 4, 5), (5,), (4, 1)), ((6,), (1,), (6,)))


def _torch_penalty_gradients(case):
    """The gradients of sum(dx^2) + sum(dy * x) + sum(dw^2) + sum(dp^2) in torch (float64), the loss written out
    (torch's own does not differentiate weight)."""
    xt, yt, wt, pt = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in case.args)
    loss = wt * ((1.0 - yt) * xt - (1.0 + (pt - 1.0) * yt) * torch_f.logsigmoid(xt))
    loss = loss.mean() if case.reduction == "mean" else loss
    dx, dy, dw, dp = torch.autograd.grad(loss.sum(), (xt, yt, wt, pt), create_graph=True)
    penalty = (dx * dx).sum() + (dy * xt).sum() + (dw * dw).sum() + (dp * dp).sum()
    return torch.autograd.grad(penalty, (xt, yt, wt, pt))


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_second_order_of_a_jit_dynamic_loss(pynative, reduction):
    """A gradient of the gradients of a mindspore.jit(dynamic=1) loss through dim and rank changes, weight and
    pos_weight broadcast: the gradient primitives' bprops compile without known shapes (Tensor.sum_to_size and
    the shape comparison before it did not), against torch (float64)."""
    @ms.jit(dynamic=1)
    def loss(x, y, w, p):
        return ms_bcewl.binary_cross_entropy_with_logits(x, y, w, p, reduction)

    def penalty(x, y, w, p):
        dx, dy, dw, dp = ms.grad(loss, grad_position=(0, 1, 2, 3))(x, y, w, p)
        return (dx * dx).sum() + (dy * x).sum() + (dw * dw).sum() + (dp * dp).sum()

    grads = ms.grad(penalty, grad_position=(0, 1, 2, 3))
    for seed, shapes in enumerate(JIT_DYNAMIC_CALLS):
        case = R.make_case(*shapes, reduction=reduction, seed=seed)
        got = grads(*(R.to_tensor(a) for a in case.args))
        for name, got_k, expected_k in zip("xywp", got, _torch_penalty_gradients(case)):
            np.testing.assert_allclose(R.to_f64(got_k), expected_k.numpy(), rtol=1e-4, atol=1e-6,
                                       err_msg=f"d/d{name} at {shapes}")


# ---- the pyboost path: forced here, in MindSpore's default runtime; under a real launch_blocking()
# (where it is the default) in a process of its own ----

@pytest.mark.parametrize("variant, reduction", [("both", "mean"), ("pos_weight", "none"), ("weight", "sum")])
def test_pyboost_path_in_the_default_runtime(pynative, monkeypatch, variant, reduction):
    """The pyboost path in this process (its choice forced as under launch_blocking()): the same second-order
    gradients."""
    monkeypatch.setattr(PYBOOST, "choice", "pyboost")
    monkeypatch.setattr(PYBOOST, "_blocking", True)  # as under launch_blocking(), which this process cannot undo
    assert PYBOOST.loss() is not None
    check_against_finite_differences(variant, reduction)
    assert_scenarios_match_torch(ms_scenarios(variant, reduction), variant, reduction)


def blocking_cases():
    """Under launch_blocking(): every case of this file through the pyboost path, one JSON line each."""
    ms.runtime.launch_blocking()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    pyboost_loss = PYBOOST.wait()
    x, y = R.to_tensor([[0.5, -1.0, 2.0]]), R.to_tensor([[1.0, 0.0, 1.0]])

    print(json.dumps({"case": "routing", "pyboost": pyboost_loss is not None,
                      "first order": _handed_over(pyboost_loss, x, y, nested=False),
                      "in a second-order gradient": _handed_over(pyboost_loss, x, y, nested=True)}))
    for variant in VARIANT_NAMES:
        for reduction in R.REDUCTIONS:
            case, g, cotangents = second_order_case(variant, reduction)
            got = run_second_order(case, g, cotangents)
            print(json.dumps({"case": f"contraction {variant}/{reduction}", "got": [v.tolist() for v in got]}))
            got = ms_scenarios(variant, reduction)
            print(json.dumps({"case": f"scenarios {variant}/{reduction}", "got": [v.tolist() for v in got]}))
    for reduction in ("mean", "sum"):
        print(json.dumps({"case": f"penalty {reduction}", "got": _penalty_gradient(x, y, reduction).tolist()}))
    print(json.dumps({"case": "loss made outside the inner gradient", "error": _outside_error(x, y)}), flush=True)


def _penalty_gradient(x, y, reduction):
    """d/dx of sum(dx^2), dx = ms.grad(loss, grad_position=0)(x, y)."""
    def loss(x_, y_):
        return ms_bcewl.binary_cross_entropy_with_logits(x_, y_, reduction=reduction)

    def penalty(x_, y_):
        dx = ms.grad(loss, grad_position=0)(x_, y_)
        return (dx * dx).sum()
    return ms.grad(penalty, grad_position=0)(x, y).asnumpy()


def _handed_over(pyboost_loss, x, y, nested):
    """Whether the pyboost loss hands a call to the primitives (returns None) inside the function of a grad, taken
    within another grad (nested) or not."""
    seen = []

    def inner(x_):
        seen.append(pyboost_loss(x_, y, None, None, 1) is None)
        return (x_ * x_).sum()
    if nested:
        ms.grad(lambda x_: ms.grad(inner)(x_).sum())(x)
    else:
        ms.grad(inner)(x)
    return seen[0]


def _outside_error(x, y):
    """A loss computed in the outer function, differentiated by an inner grad whose result is differentiated
    again: its pyboost backward would be recorded, which it cannot be; the message of the error it raises."""
    def outer(x_):
        loss = ms_bcewl.binary_cross_entropy_with_logits(x_, y)
        d = ms.grad(lambda z: loss * (z * 0.0 + 1.0).sum())(x_)
        return (d * d).sum()
    try:
        ms.grad(outer)(x)
    except RuntimeError as error:
        return str(error)
    return None


@pytest.fixture(scope="module")
def blocking_results():
    environment = {key: value for key, value in os.environ.items() if key != "MS_BCEWL_PYNATIVE_PATH"}
    script = f"import {Path(__file__).stem} as t; t.blocking_cases()"  # tests/ is on the child's PYTHONPATH
    done = subprocess.run([*R.PYTHON, "-c", script], capture_output=True, text=True, timeout=1800,
                          env=R.child_environment(environment), check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return {case["case"]: case for case in map(json.loads, (line for line in done.stdout.splitlines()
                                                             if line.startswith("{")))}


def test_pyboost_path_hands_calls_inside_a_higher_order_gradient_to_the_primitives(blocking_results):
    """Under launch_blocking() a first-order call stays on the pyboost path; a call inside a gradient that is
    differentiated again goes to the primitives, whose bprops give real second-order gradients."""
    routing = blocking_results["routing"]
    assert routing["pyboost"] and not routing["first order"] and routing["in a second-order gradient"]


@pytest.mark.parametrize("reduction", R.REDUCTIONS)
@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_pyboost_path_second_order_gradients_are_real(blocking_results, variant, reduction):
    """x=[[0.5,-1,2]], y=[[1,0,1]]: the gradient of sum(dx^2) under launch_blocking() was exactly 0 on main."""
    contraction_got = [np.array(v) for v in blocking_results[f"contraction {variant}/{reduction}"]["got"]]
    check_against_finite_differences(variant, reduction, contraction_got)
    scenarios_got = [np.array(v) for v in blocking_results[f"scenarios {variant}/{reduction}"]["got"]]
    assert_scenarios_match_torch(scenarios_got, variant, reduction)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_pyboost_path_gradient_penalty_of_the_report(blocking_results, reduction):
    """x=[[0.5,-1,2]], y=[[1,0,1]], d/dx sum(dx^2) under launch_blocking(): exactly 0 on main; torch's value
    ([[-0.177, 0.106, -0.025]] for sum)."""
    x = torch.tensor([[0.5, -1.0, 2.0]], dtype=torch.float64, requires_grad=True)
    loss = torch_f.binary_cross_entropy_with_logits(x, torch.tensor([[1.0, 0.0, 1.0]], dtype=torch.float64),
                                                    reduction=reduction)
    (dx,) = torch.autograd.grad(loss, x, create_graph=True)
    (expected,) = torch.autograd.grad((dx * dx).sum(), x)
    np.testing.assert_allclose(blocking_results[f"penalty {reduction}"]["got"], expected.numpy(), rtol=1e-5)


def test_pyboost_loss_differentiated_twice_from_outside_raises(blocking_results):
    """A pyboost loss computed before the inner grad that differentiates it cannot give a second order: an error
    that says what to do, never zeros."""
    error = blocking_results["loss made outside the inner gradient"]["error"]
    assert error is not None and "higher-order gradient" in error and "MS_BCEWL_PYNATIVE_PATH=aot" in error

