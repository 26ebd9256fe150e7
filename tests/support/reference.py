"""Float64 NumPy reference of docs/contract.md §2 Loss and gradients, §3 Reductions, and the shared test harness.

The first half is NumPy in float64: the loss for each reduction and the four gradients (dx, dy, dw summed to w's
shape, dp summed to p's shape), straight from docs/contract.md §2 Loss and gradients.  It is checked against the
published golden values and against PyTorch (float64) in the test suite, so that it can be trusted as the
oracle for everything PyTorch does not cover (dw, dp, mixed dtypes, bf16).  `torch_oracle` runs PyTorch itself
(float64) on a case, for the loss, dx and dy.

The second half is the harness the tests share: dtype helpers (values are rounded to the tensor dtype before the
reference sees them, so the only error left is the op's own), tolerances, and the Cells that call ms_bcewl in
either execution mode and take its gradients. Ahead of both: how a test starts a child process (`PYTHON`,
`child_environment`, `module_command`).
"""
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Tuple

import numpy as np

from ms_bcewl._library import REDUCTIONS  # noqa: F401 (the tests parametrize over R.REDUCTIONS)

# The interpreter for a test's child process. -P (3.11+) keeps the script's folder or the working directory off
# sys.path, so that a source checkout never shadows the installed package; Python 3.10 has no -P, and there the
# suite runs from a folder outside the source tree (README), which the children inherit.
PYTHON = (sys.executable, "-P") if sys.version_info >= (3, 11) else (sys.executable,)
# The folder whose `support` package this is: what pyproject.toml's pytest pythonpath puts on sys.path.
TESTS = Path(__file__).resolve().parents[1]


def child_environment(env=None):
    """`env` (default: this process's environment) with tests/ first on PYTHONPATH, so that a child process imports
    `support` as the tests do; the rest of PYTHONPATH stays, and with it where the child finds ms_bcewl."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH")]))
    return env


def module_command(module, *args):
    """The command running support.<module> with `args` in a child process (with child_environment())."""
    return [*PYTHON, "-m", f"support.{module}", *map(str, args)]


# --------------------------------------------------------------------------------------------------------------
# Float64 reference
# --------------------------------------------------------------------------------------------------------------


def log_sigmoid(x):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for every finite x."""
    x = np.asarray(x, dtype=np.float64)
    return np.minimum(x, 0.0) - np.log1p(np.exp(-np.abs(x)))


def sigmoid(x):
    return np.exp(log_sigmoid(x))


def _ones_if_none(a):
    return np.float64(1.0) if a is None else np.asarray(a, dtype=np.float64)


def unweighted_loss(x, y, p=None):
    """(1 - y) * x - (1 + (p - 1) * y) * logsig(x), broadcast to x's shape."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    p = _ones_if_none(p)
    return np.broadcast_to((1.0 - y) * x - (1.0 + (p - 1.0) * y) * log_sigmoid(x), x.shape)


def elementwise_loss(x, y, w=None, p=None):
    return _ones_if_none(w) * unweighted_loss(x, y, p)


def reduce(loss, reduction):
    """none keeps the shape; sum = Σl (0 for empty); mean = Σl / numel (NaN for empty)."""
    loss = np.asarray(loss, dtype=np.float64)
    if reduction == "none":
        return loss
    total = np.sum(loss)
    if reduction == "sum":
        return np.float64(total)
    return np.float64(total / loss.size) if loss.size else np.float64(np.nan)


def loss(x, y, w=None, p=None, reduction="mean"):
    return reduce(elementwise_loss(x, y, w, p), reduction)


def sum_to_shape(a, shape):
    """Sum a broadcast array down to `shape` (the adjoint of numpy broadcasting)."""
    a = np.asarray(a, dtype=np.float64)
    shape = tuple(shape)
    lead = a.ndim - len(shape)
    if lead:
        a = a.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and a.shape[i] != 1)
    if axes:
        a = a.sum(axis=axes, keepdims=True)
    return a.reshape(shape)


def upstream_scale(x_shape, reduction, g):
    """The factor each elementwise gradient is multiplied by: g (broadcast), divided by numel for mean."""
    g = np.float64(1.0) if g is None else np.asarray(g, dtype=np.float64)
    if reduction == "none":
        return np.broadcast_to(g, x_shape)
    n = int(np.prod(x_shape))
    return np.broadcast_to(g / n if reduction == "mean" else g, x_shape)


def grads(x, y, w=None, p=None, reduction="mean", g=None):
    """Gradients of docs/contract.md §2 Loss and gradients with upstream gradient g (the loss's shape; default 1).

    Returns dx, dy (x's shape), dw (w's shape or None), dp (p's shape or None).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    wv, pv = _ones_if_none(w), _ones_if_none(p)
    gs = upstream_scale(x.shape, reduction, g)
    ls = log_sigmoid(x)
    dx = wv * ((pv * y + 1.0 - y) * sigmoid(x) - pv * y) * gs
    dy = wv * (log_sigmoid(-x) - pv * ls) * gs
    dw = None if w is None else sum_to_shape(unweighted_loss(x, y, p) * gs, np.shape(w))
    dp = None if p is None else sum_to_shape(-wv * y * ls * gs, np.shape(p))
    return (np.broadcast_to(dx, x.shape), np.broadcast_to(dy, x.shape), dw, dp)


def numeric_grads(x, y, w=None, p=None, reduction="mean", g=None, eps=1e-6):
    """Central differences of Σ(g · loss) in float64, for every element of every present argument."""

    def objective(args):
        out = loss(*args, reduction=reduction)
        return np.sum(out * (1.0 if g is None else g))

    base = [None if a is None else np.array(a, dtype=np.float64) for a in (x, y, w, p)]
    result = []
    for k, a in enumerate(base):
        if a is None:
            result.append(None)
            continue
        d = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus = [b if b is None else b.copy() for b in base]
            minus = [b if b is None else b.copy() for b in base]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            d[idx] = (objective(plus) - objective(minus)) / (2 * eps)
        result.append(d)
    return tuple(result)


# --------------------------------------------------------------------------------------------------------------
# Dtypes, rounding and tolerances
# --------------------------------------------------------------------------------------------------------------

DTYPE_NAMES = ("float32", "float16", "bfloat16")


def round_to(a, name):
    """Round float64 values to the dtype `name` (round to nearest even), returned as float64."""
    a = np.asarray(a, dtype=np.float64)
    if name == "float32":
        return a.astype(np.float32).astype(np.float64)
    if name == "float16":
        return a.astype(np.float16).astype(np.float64)
    if name == "bfloat16":
        f = np.ascontiguousarray(a, dtype=np.float32)
        bits = f.view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
        out = rounded.view(np.float32).astype(np.float64)
        return np.where(np.isnan(f), np.nan, out).reshape(a.shape)
    raise ValueError(name)


# (rtol, atol) per dtype and kind.  The op computes in float32 and casts once, and the expected values are
# rounded to the output dtype first, so fp16/bf16 differ by at most about one unit in the last place.
TOLERANCES = {
    ("float32", "loss"): (1e-5, 1e-6),
    ("float32", "grad"): (1e-4, 1e-6),
    ("float16", "loss"): (2e-3, 1e-3),
    ("float16", "grad"): (2e-3, 1e-3),
    ("bfloat16", "loss"): (1e-2, 1e-2),
    ("bfloat16", "grad"): (1e-2, 1e-2),
}


def ms_dtype(name):
    import mindspore as ms

    return {"float32": ms.float32, "float16": ms.float16, "bfloat16": ms.bfloat16}[name]


def dtype_name(ms_type):
    import mindspore as ms

    return {ms.float32: "float32", ms.float16: "float16", ms.bfloat16: "bfloat16"}.get(ms_type, str(ms_type))


def to_tensor(a, name="float32"):
    """A MindSpore tensor of dtype `name` holding `a` (which should already be representable in it)."""
    import mindspore as ms

    t = ms.Tensor(np.asarray(a, dtype=np.float32))
    return t if name == "float32" else t.astype(ms_dtype(name))


def to_f64(t):
    """The values of a MindSpore tensor as float64 NumPy."""
    import mindspore as ms

    return t.astype(ms.float32).asnumpy().astype(np.float64)


def assert_close(got, expected, name, kind, scale=1.0, msg=""):
    """Compare float64 `got` with the float64 reference rounded to dtype `name`.

    `scale` widens atol for inputs whose terms are large (cancellation in float32 is relative to the terms).
    """
    rtol, atol = TOLERANCES[(name, kind)]
    expected = np.asarray(expected, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == expected.shape, f"{msg}: shape {got.shape} != expected {expected.shape}"
    np.testing.assert_allclose(got, round_to(expected, name), rtol=rtol, atol=atol * scale, equal_nan=True,
                               err_msg=msg)


def rounding_scales(case, g=None):
    """`scale` arguments for check_loss and check_grads that allow 16 float32 roundings of the terms of each output.

    The op evaluates docs/contract.md §2 Loss and gradients in float32, so its absolute error is a few roundings of
    the largest term (|(1 - y)·x|, |(1 + (p - 1)·y)·logsig(x)|, ...) whatever value the terms cancel to; 1e-6 = 16
    float32 roundings.
    Returns (loss scale, (dx, dy, dw, dp) scales), each 1 + that allowance in units of the output dtype's atol.
    """
    x, y = case.x, case.y
    w, p = np.abs(_ones_if_none(case.w)), _ones_if_none(case.p)
    gs = np.abs(upstream_scale(x.shape, case.reduction, g))
    ls = np.abs(log_sigmoid(x))
    unweighted = np.abs((1.0 - y) * x) + np.abs(1.0 + (p - 1.0) * y) * ls
    # dy's terms as the op forms it: p·max(-x, 0), max(x, 0) and (p - 1)·log1p(exp(-|x|))
    dy_terms = np.abs(p) * np.maximum(-x, 0.0) + np.maximum(x, 0.0) + np.abs(p - 1.0) * np.log1p(np.exp(-np.abs(x)))
    terms = (reduce(np.broadcast_to(w * unweighted, x.shape), case.reduction),
             w * (np.abs(p * y + 1.0 - y) * sigmoid(x) + np.abs(p * y)) * gs,
             w * dy_terms * gs,
             None if case.w is None else sum_to_shape(unweighted * gs, case.w.shape),
             None if case.p is None else sum_to_shape(w * np.abs(y) * ls * gs, case.p.shape))
    kinds_and_dtypes = [("loss", case.out_dtype)] + [("grad", d) for d in case.dtypes]
    scales = [1.0 + _largest_finite(t) * TOLERANCES[("float32", kind)][1] / TOLERANCES[(dtype, kind)][1]
              for t, (kind, dtype) in zip(terms, kinds_and_dtypes)]
    return scales[0], tuple(scales[1:])


def _largest_finite(a):
    """The largest finite value of `a` (0 if none): an infinite or NaN output is compared by position, not by atol."""
    if a is None:
        return 0.0
    a = np.asarray(a, dtype=np.float64)
    finite = a[np.isfinite(a)]
    return float(finite.max()) if finite.size else 0.0


# --------------------------------------------------------------------------------------------------------------
# Test cases
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One call of the op: float64 values (already rounded to their dtypes), dtypes and reduction."""

    x: np.ndarray
    y: np.ndarray
    w: Optional[np.ndarray]
    p: Optional[np.ndarray]
    reduction: str = "mean"
    dtypes: Tuple[str, str, str, str] = ("float32",) * 4  # input, target, weight, pos_weight

    @property
    def args(self):
        return (self.x, self.y, self.w, self.p)

    @property
    def out_shape(self):
        return self.x.shape if self.reduction == "none" else ()

    @property
    def out_dtype(self):
        return self.dtypes[1]

    def expected_loss(self):
        return loss(*self.args, reduction=self.reduction)

    def expected_grads(self, g=None):
        return grads(*self.args, reduction=self.reduction, g=g)

    def with_(self, **kw):
        return replace(self, **kw)


def make_case(shape=(2, 3), w_shape=None, p_shape=None, reduction="mean", dtypes=("float32",) * 4, seed=0,
              x_scale=2.0, y_range=(-0.25, 1.25)):
    """Random logits ~ N(0, x_scale²), targets uniform in y_range (out of [0, 1] on purpose), w in [0.5, 2],
    p in [0.25, 3]; each rounded to its dtype.  w_shape / p_shape None means the argument is absent."""
    rng = np.random.default_rng(seed)
    x = round_to(rng.normal(0.0, x_scale, shape), dtypes[0])
    y = round_to(rng.uniform(*y_range, shape), dtypes[1])
    w = None if w_shape is None else round_to(rng.uniform(0.5, 2.0, w_shape), dtypes[2])
    p = None if p_shape is None else round_to(rng.uniform(0.25, 3.0, p_shape), dtypes[3])
    return Case(x, y, w, p, reduction, tuple(dtypes))


# The shared parametrisation: (w_shape, p_shape) per variant on an input of shape MATRIX_SHAPE, and dtype combos
# (input, target, weight, pos_weight), mixed ones included.
MATRIX_SHAPE = (3, 4)
VARIANTS = {
    "plain": (None, None),
    "weight": ((4,), None),
    "pos_weight": (None, (3, 1)),
    "both": ((3, 4), (1, 4)),
}
DTYPE_COMBOS = {
    "fp32": ("float32",) * 4,
    "fp16": ("float16",) * 4,
    "bf16": ("bfloat16",) * 4,
    "mixed16": ("float16", "float32", "bfloat16", "float32"),
    "mixedbf": ("bfloat16", "float16", "float32", "bfloat16"),
}


def matrix_case(reduction, variant, combo, seed=0, shape=MATRIX_SHAPE):
    w_shape, p_shape = VARIANTS[variant]
    return make_case(shape, w_shape, p_shape, reduction, DTYPE_COMBOS[combo], seed)


def case_from(x, y, w=None, p=None, reduction="mean", dtypes=("float32",) * 4):
    """A case from given values (rounded to the dtypes)."""
    r = [None if a is None else round_to(a, d) for a, d in zip((x, y, w, p), dtypes)]
    return Case(*r, reduction=reduction, dtypes=tuple(dtypes))


# The MindSpore documentation example (golden values in the tests).
GOLDEN_X = [[-0.8, 1.2, 0.7], [-0.1, -0.4, 0.7]]
GOLDEN_Y = [[0.3, 0.8, 1.2], [-0.6, 0.1, 2.2]]


def golden_case(reduction, dtypes=("float32",) * 4):
    return case_from(GOLDEN_X, GOLDEN_Y, np.ones(3), np.ones(3), reduction, dtypes)


# (x_shape, w_shape, p_shape): trailing-aligned numpy broadcasting, scalar-like, 0-d and rank-8 shapes.
BROADCAST_SHAPES = [
    ((4, 3), (3,), None), ((4, 3), (1, 3), None), ((4, 3), (4, 1), None), ((4, 3), (1,), None),
    ((4, 3), (), None), ((4, 3), (4, 3), None),
    ((4, 3), None, (3,)), ((4, 3), None, (1, 3)), ((4, 3), None, (4, 1)), ((4, 3), None, (1,)),
    ((2, 3, 4, 5), (3, 1, 1), (3, 1, 1)), ((2, 3, 4, 5), (5,), (4, 5)), ((2, 3, 4, 5), (1, 3, 1, 1), (2, 3, 4, 5)),
    ((2, 3, 4, 5), (2, 1, 1, 1), (1,)),
    ((), (), ()), ((1,), (1,), None), ((9,), None, (9,)), ((2, 1, 2, 1, 2, 1, 2, 1), (1, 2, 1), (2, 1)),
]


def mode_params(pairs):
    """pytest params of (mode, reduction) pairs, for a matrix that is smaller in GRAPH mode (indirect "mode")."""
    import pytest

    return [pytest.param(m, red, id=f"{m}-{red}") for m, red in pairs]


def upstream(case, seed=1):
    """A random non-unit upstream gradient of the loss's shape, representable in the output dtype."""
    rng = np.random.default_rng(seed)
    return round_to(rng.uniform(0.5, 2.0, case.out_shape) * rng.choice([-1.0, 1.0], case.out_shape),
                    case.out_dtype)


def torch_oracle(case, g=None):
    """PyTorch float64 on the case's values: (loss, dx, dy) as NumPy."""
    # Imported here: the version matrix's venvs (.ci/version_matrix) run tests/test_versions.py without PyTorch.
    import torch  # pylint: disable=import-outside-toplevel
    import torch.nn.functional as torch_f  # pylint: disable=import-outside-toplevel

    x = torch.tensor(case.x, dtype=torch.float64, requires_grad=True)
    y = torch.tensor(case.y, dtype=torch.float64, requires_grad=True)
    w = None if case.w is None else torch.tensor(case.w, dtype=torch.float64)
    p = None if case.p is None else torch.tensor(case.p, dtype=torch.float64)
    out = torch_f.binary_cross_entropy_with_logits(x, y, w, reduction=case.reduction, pos_weight=p)
    gt = torch.ones_like(out) if g is None else torch.tensor(g, dtype=torch.float64)
    dx, dy = torch.autograd.grad(out, (x, y), gt)
    return out.detach().numpy(), dx.numpy(), dy.numpy()


# --------------------------------------------------------------------------------------------------------------
# Running the op (ms_bcewl is imported lazily so that the reference works without the package)
# --------------------------------------------------------------------------------------------------------------


def _make_cells():
    import mindspore as ms
    from mindspore import nn

    import ms_bcewl

    class LossNet(nn.Cell):
        """ms_bcewl.binary_cross_entropy_with_logits(x, y, w, p, reduction); absent w/p are passed as None.

        With `with_sens`, returns Σ(float32(loss) · g) so that its gradient feeds the op the upstream g.
        """

        def __init__(self, reduction="mean", has_w=True, has_p=True, with_sens=False):
            super().__init__()
            self.reduction = reduction
            self.has_w = has_w
            self.has_p = has_p
            self.with_sens = with_sens

        def construct(self, x, y, w, p, g):
            out = ms_bcewl.binary_cross_entropy_with_logits(x, y, w if self.has_w else None,
                                                            p if self.has_p else None, self.reduction)
            if self.with_sens:
                return (out.astype(ms.float32) * g).sum()
            return out

    class GradNet(nn.Cell):
        """Gradients of a LossNet with respect to the given input positions."""

        def __init__(self, net, positions):
            super().__init__()
            self.net = net
            self.positions = positions

        def construct(self, x, y, w, p, g):
            return ms.grad(self.net, grad_position=self.positions)(x, y, w, p, g)

    return LossNet, GradNet


_CELLS = []


def cells():
    """(LossNet, GradNet), built once ms_bcewl is importable."""
    if not _CELLS:
        _CELLS.extend(_make_cells())
    return tuple(_CELLS)


def tensors(case, g=None):
    """The five Cell inputs of a case; an absent w/p is replaced by a dummy tensor the Cell ignores."""
    x, y, w, p = (None if a is None else to_tensor(a, d) for a, d in zip(case.args, case.dtypes))
    gt = to_tensor(np.float64(1.0) if g is None else g, "float32")
    return (x, y, x if w is None else w, x if p is None else p, gt)


def positions(case):
    """Grad positions of the present tensors among (x, y, w, p)."""
    return tuple(i for i, a in enumerate(case.args) if a is not None)


def loss_net(case, with_sens=False):
    LossNet, _ = cells()
    return LossNet(case.reduction, case.w is not None, case.p is not None, with_sens)


def grad_net(case):
    _, GradNet = cells()
    return GradNet(loss_net(case, with_sens=True), positions(case))


def run_loss(case, net=None):
    """The op's loss for a case, as a MindSpore tensor."""
    return (net or loss_net(case))(*tensors(case))


def run_grads(case, g=None, net=None):
    """The op's gradients of Σ(g · loss) for the present arguments, as a tuple of MindSpore tensors."""
    out = (net or grad_net(case))(*tensors(case, g))
    return out if isinstance(out, tuple) else (out,)


def check_loss(case, got=None, scale=1.0, msg=""):
    """The op's loss has the output dtype and shape and matches the reference."""
    got = run_loss(case) if got is None else got
    assert dtype_name(got.dtype) == case.out_dtype, f"{msg}: loss dtype {got.dtype}, expected {case.out_dtype}"
    assert tuple(got.shape) == case.out_shape, f"{msg}: loss shape {got.shape}, expected {case.out_shape}"
    assert_close(to_f64(got), case.expected_loss(), case.out_dtype, "loss", scale, f"{msg} loss")
    return got


def check_grads(case, g=None, got=None, scale=1.0, msg=""):
    """Each gradient has the dtype and shape of its argument and matches the reference.

    `scale`: one factor for every gradient, or one per argument (x, y, w, p) as rounding_scales returns them."""
    scales = tuple(scale) if isinstance(scale, (tuple, list)) else (scale,) * 4
    got = run_grads(case, g) if got is None else got
    expected = [e for e, a in zip(case.expected_grads(g), case.args) if a is not None]
    pos = positions(case)
    assert len(got) == len(pos), f"{msg}: {len(got)} gradients for positions {pos}"
    for i, gt, ex in zip(pos, got, expected):
        label = f"{msg} d{'xywp'[i]}"
        assert dtype_name(gt.dtype) == case.dtypes[i], f"{label}: dtype {gt.dtype}, expected {case.dtypes[i]}"
        assert tuple(gt.shape) == case.args[i].shape, f"{label}: shape {gt.shape}, expected {case.args[i].shape}"
        assert_close(to_f64(gt), ex, case.dtypes[i], "grad", scales[i], label)
    return got
