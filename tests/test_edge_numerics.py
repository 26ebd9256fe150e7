"""Numerics at the edges, through the Python API (docs/contract.md), in PyNative and GRAPH mode.

What the contract implies at the edges, and so what is tested here:

- Finite inputs give finite results wherever the exact result fits the output dtype: |x| <= 1e4 with pos_weight
  from 0 to 1e3 and targets outside [0, 1] (float32 outputs, float32 or half-precision inputs); float16 logits up to
  65504 and bfloat16 logits up to its maximum 3.39e38 with w, p, y in [0, 1] and |g| <= 1, where every output is
  bounded by |x|; and results that fit although products of the textbook formula at |x| near 3e38 do not.
- "Computed in float32 and cast once": a result beyond the output dtype's maximum is ±inf (never NaN, never clamped),
  while a mean whose sum would overflow stays finite (the sum is never rounded to the output dtype). A float16 sum of
  two losses of 65504 is inf, the same sum with a float32 target is 131008; float16/bfloat16 dy = -w·x·g overflows
  at x = max for |w·g| > 1. The expected values are the float64 reference rounded to the output dtype.
- Infinite logits give the limits of every output (x = +inf, y = 1 → 0; x = -inf, y = 0 → 0; ±inf where the output
  diverges) and NaN where no limit exists: a sum of limits +inf and -inf (loss sum / mean, dw and dp summed over
  broadcast dims). Expected: the float64 reference at x = ±1e300, each elementwise term read as its limit, then
  reduced in IEEE arithmetic (`LimitCase`). Infinite y, w, p or g follow plain IEEE arithmetic (the kernel's own
  documentation) and are no part of this contract.
- NaN propagates to every output it affects, also through the zero factors of the limit rules (1 - y = 0, w = 0,
  p·y = 0), which must not turn NaN into 0. NaN in each argument at finite logits: tests/test_functional.py.
- dy keeps the digits of small logits: within a few float32 roundings of itself, also where it is -w·x·g (p = 1).
- A mean over 1e7 elements is within 1e-6 relative of a float64 reference; over 1e8 with MS_BCEWL_SLOW_TESTS=1
  (not collected otherwise, so it shows up neither as passed nor as skipped).
"""
import os

import mindspore as ms
import numpy as np
import pytest

import ms_bcewl
from support import reference as R

SLOW_TESTS = os.environ.get("MS_BCEWL_SLOW_TESTS") == "1"
DTYPE_MAX = {"float16": 65504.0, "bfloat16": float(R.round_to(3.3895313892515355e38, "bfloat16"))}
# float64 logits whose terms are beyond every float dtype: the reference there gives each output's limit
STAND_IN_FOR_INF = 1e300
MEAN_RTOL = 1e-6  # docs/contract.md §3 Reductions, for a mean over up to 1e8 elements


def check_case(case, g, msg=""):
    """Loss and the four gradients against the reference (tolerances widened for float32 cancellation), all finite."""
    loss_scale, grad_scales = R.rounding_scales(case, g)
    outputs = [R.check_loss(case, scale=loss_scale, msg=msg)]
    outputs += R.check_grads(case, g, scale=grad_scales, msg=msg)
    for output in outputs:
        assert np.all(np.isfinite(R.to_f64(output))), f"{msg}: non-finite output {output}"


def grid(*axes):
    """Every combination of the given values, each axis broadcast to the full grid shape."""
    return [np.array(a, dtype=np.float64) for a in np.meshgrid(*axes, indexing="ij")]


# ---------------------------------------------------------------------------------------------------------------
# Large finite values
# ---------------------------------------------------------------------------------------------------------------

LARGE_X = [0.0, 1e-3, -1e-3, 1.0, -1.0, 17.0, -17.0, 88.7, -88.7, 1e3, -1e3, 1e4, -1e4]
WIDE_Y = [-2.0, 0.0, 0.5, 1.0, 3.0]
POS_WEIGHTS = [0.0, 1e-3, 1.0, 1e3]
WEIGHTS = [[0.5], [2.0], [0.0], [1.0], [1.5]]  # one per target, broadcast along pos_weight's axis
FLOAT32_OUTPUTS = {"fp32": ("float32",) * 4, "fp16_input": ("float16",) + ("float32",) * 3,
                   "bf16_input": ("bfloat16",) + ("float32",) * 3}


@pytest.mark.parametrize("combo", sorted(FLOAT32_OUTPUTS))
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_large_logits_pos_weights_and_targets_give_finite_results(mode, reduction, combo):
    """|x| <= 1e4, pos_weight 0 … 1e3 (shape (4,): dp sums over the grid), targets -2 … 3, weight 0 … 2."""
    x, y, _ = grid(LARGE_X, WIDE_Y, POS_WEIGHTS)
    case = R.case_from(x, y, WEIGHTS, POS_WEIGHTS, reduction, FLOAT32_OUTPUTS[combo])
    check_case(case, R.upstream(case), msg=f"{mode}/{reduction}/{combo}")


@pytest.mark.parametrize("reduction", ["none", "mean"])
@pytest.mark.parametrize("dtype", sorted(DTYPE_MAX))
def test_half_precision_logits_up_to_the_dtype_max_give_finite_results(mode, dtype, reduction):
    """x up to ±max of float16 / bfloat16 with w, p, y in [0, 1] and |g| <= 1: |loss|, |dy|, |dw|, |dp| <= |x|
    and |dx| <= 1, so every output fits the dtype (the sum does not: see the overflow test)."""
    big = DTYPE_MAX[dtype]
    x, y = grid(big * np.array([1.0, -1.0, 0.5, -0.5, 2.0**-8, -(2.0**-8)]), [0.0, 0.5, 1.0])
    rng = np.random.default_rng(3)
    w, p = rng.uniform(0.0, 1.0, x.shape), rng.uniform(0.0, 1.0, x.shape)
    case = R.case_from(x, y, w, p, reduction, (dtype,) * 4)
    g = R.round_to(rng.uniform(-1.0, 1.0, case.out_shape), dtype)
    check_case(case, g, msg=f"{mode}/{dtype}/{reduction}")


SUM_OF_TWO_MAXIMA = {
    # combo: (dtypes, whether twice the input dtype's max overflows the output dtypes)
    "fp16": (("float16",) * 4, True),
    "fp16_input_fp32_outputs": (("float16",) + ("float32",) * 3, False),
    "bf16": (("bfloat16",) * 4, True),
}


@pytest.mark.parametrize("combo", sorted(SUM_OF_TWO_MAXIMA))
def test_results_beyond_the_output_dtype_max_are_inf_and_the_mean_is_not(mode, combo):
    """Two losses of the input dtype's max (x = max, y = 0, w = 1). With the sum and g = 2, the loss (2·max),
    dy = -w·x·g and dw = loss·g (2·max each) are inf in a 16-bit output and exact in a float32 one; with the mean
    and g = 1 the loss is max, dy and dw are ±max / 2: all fit. (The mean with g = 2, whose float32 product max·g
    overflows before the division by numel, is a finding: see the next test.)"""
    dtypes, overflows = SUM_OF_TWO_MAXIMA[combo]
    big = DTYPE_MAX[dtypes[0]]
    for reduction, g in (("sum", 2.0), ("mean", 1.0)):
        case = R.case_from([big, big], [0.0, 0.0], [1.0, 1.0], None, reduction, dtypes)
        msg = f"{combo} {reduction}"
        loss = R.to_f64(R.check_loss(case, msg=msg))
        dx, dy, dw = (R.to_f64(t) for t in R.check_grads(case, np.float64(g), msg=msg))
        overflow_expected = overflows and reduction == "sum"
        for name, value in (("loss", loss), ("dy", dy), ("dw", dw)):
            assert np.all(np.isinf(value) == overflow_expected) and not np.any(np.isnan(value)), f"{msg} {name}"
        assert np.all(np.isfinite(dx)), msg


FLOAT32_INTERMEDIATE_OVERFLOWS = {
    # name: (x, y, w, p, reduction, g)
    # the loss -p·y·x = 2.25e38 fits, (1 + (p - 1)·y)·logsig(x) = 1.25·x does not; the loss -1e38 fits, (1 - y)·x
    # = 2·x does not
    "loss_terms": ([-3e38, -2e38], [0.5, -1.0], None, [1.5, 0.5], "none", np.ones(2)),
    # the mean of two elements with g = 2: dy = -x·g / 2 = -3e38 and dw = 3e38 fit, x·g does not
    "mean_gradients_times_g": ([3e38, 3e38], [0.0, 0.0], [1.0, 1.0], None, "mean", np.float64(2.0)),
}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("name", sorted(FLOAT32_INTERMEDIATE_OVERFLOWS))
def test_outputs_that_fit_the_dtype_are_finite_even_when_float32_intermediates_are_not(pynative, name, dtype):
    """Above about 1.7e38 (float32 and bfloat16 inputs only) an exact result that fits its dtype is finite although
    products of the textbook formula overflow float32 (the kernel uses the loss form without them and lets a
    mean's 1/numel enter through g: docs/contract.md §2 Loss and gradients)."""
    *values, reduction, g = FLOAT32_INTERMEDIATE_OVERFLOWS[name]
    case = R.case_from(*values, reduction, (dtype,) * 4)
    with np.errstate(over="ignore"):
        R.check_loss(case, msg=name)
        R.check_grads(case, g, msg=name)


# ---------------------------------------------------------------------------------------------------------------
# Infinite logits and NaN
# ---------------------------------------------------------------------------------------------------------------


def saturate(a):
    """Terms of the size of STAND_IN_FOR_INF read as the infinities they stand for."""
    a = np.asarray(a, dtype=np.float64)
    return np.where(np.abs(a) > STAND_IN_FOR_INF * 1e-100, np.sign(a) * np.inf, a)


class LimitCase(R.Case):
    """A case whose expected values are the limits at its infinite logits: every elementwise term from the float64
    reference at x = ±STAND_IN_FOR_INF, read as ±inf when it diverges, then reduced and summed to the shapes of w and
    p in IEEE arithmetic, so that limits +inf and -inf summed give NaN (no limit)."""

    def _finite_stand_in(self):
        x = np.where(np.isinf(self.x), np.sign(self.x) * STAND_IN_FOR_INF, self.x)
        full = [None if a is None else np.broadcast_to(a, self.x.shape) for a in (self.w, self.p)]
        return x, full

    def expected_loss(self):
        x, (w, p) = self._finite_stand_in()
        with np.errstate(invalid="ignore"):
            return R.reduce(saturate(R.elementwise_loss(x, self.y, w, p)), self.reduction)

    def expected_grads(self, g=None):
        x, (w, p) = self._finite_stand_in()
        with np.errstate(invalid="ignore"):
            dx, dy, dw, dp = (None if d is None else saturate(d) for d in R.grads(x, self.y, w, p, self.reduction, g))
            return (dx, dy, None if dw is None else R.sum_to_shape(dw, self.w.shape),
                    None if dp is None else R.sum_to_shape(dp, self.p.shape))


def limit_case(x, y, w, p, reduction, dtypes=("float32",) * 4):
    return LimitCase(*R.case_from(x, y, w, p, reduction, dtypes).args, reduction=reduction, dtypes=tuple(dtypes))


def check_limits(case, g, msg):
    with np.errstate(over="ignore"):  # expected values beyond a dtype round to inf
        loss = R.check_loss(case, msg=msg)
        return [loss] + list(R.check_grads(case, g, msg=msg))


@pytest.mark.parametrize("dtype", R.DTYPE_NAMES)
def test_infinite_logits_give_the_limits_of_every_output(mode, dtype):
    """x = ±inf against y in and out of [0, 1], w and p of 0 or not, g of both signs, elementwise (reduction none):
    finite limits (x = +inf, y = 1 → 0; x = -inf, y = 0 → 0; dx), ±inf where an output diverges (dy at every
    infinite x with w·g ≠ 0, dp at x = -inf with w·y·g ≠ 0, the loss and dw away from those two zeros)."""
    x, y, w, p = grid([np.inf, -np.inf], [-0.5, 0.0, 0.25, 1.0, 1.5], [0.0, 2.0], [0.0, 3.0])
    case = limit_case(x, y, w, p, "none", (dtype,) * 4)
    g = R.upstream(case)
    outputs = check_limits(case, g, msg=f"{mode}/{dtype}")
    assert all(np.any(np.isinf(R.to_f64(o))) for o in outputs[:1] + outputs[2:]), "a divergent limit is missing"


SUMMED_LIMITS = {
    # name: (x, y, w, p, the outputs whose limit does not exist)
    "same_sign": ([np.inf, -np.inf, 0.5], [0.25, 0.5, 0.5], [1.5], [2.0], ()),
    "loss_and_dw_of_opposite_signs": ([np.inf, np.inf], [0.0, 2.0], [1.0], None, ("loss", "dw")),
    "loss_and_dp_of_opposite_signs": ([-np.inf, -np.inf], [1.0, -1.0], None, [1.0], ("loss", "dp")),
}
OUTPUT_NAMES = ("loss", "dx", "dy", "dw", "dp")


@pytest.mark.parametrize("reduction", ["sum", "mean"])
@pytest.mark.parametrize("name", sorted(SUMMED_LIMITS))
def test_sums_of_infinite_limits_are_inf_or_nan_where_no_limit_exists(mode, name, reduction):
    """The loss (sum, mean) and dw, dp (summed to the shape (1,) of w and p) add up elementwise limits: ±inf when
    they share a sign, NaN when +inf meets -inf."""
    x, y, w, p, no_limit = SUMMED_LIMITS[name]
    case = limit_case(x, y, w, p, reduction)
    expected = dict(zip(OUTPUT_NAMES, [case.expected_loss(), *case.expected_grads()]))
    for output, value in expected.items():
        if value is not None:
            assert np.any(np.isnan(value)) == (output in no_limit), f"oracle: {output} = {value}"
    check_limits(case, np.float64(1.0), msg=f"{mode}/{name}/{reduction}")


def test_nan_survives_the_zero_factors_of_the_limit_rules(mode):
    """Each row puts a NaN next to a factor that is exactly 0 where x = ±inf (or x itself is NaN): the outputs that
    depend on the NaN are NaN, the others keep their limit (e.g. dw does not depend on w)."""
    nan, inf = np.nan, np.inf
    rows = [  # x, y, w, p, g
        (nan, 1.0, 0.0, 0.0, 1.0),   # NaN logit with 1 - y = 0, w = 0, p = 0
        (inf, 1.0, nan, 2.0, 1.0),   # NaN weight times the zero limit at +inf, y = 1
        (-inf, 0.0, 1.0, nan, 1.0),  # NaN pos_weight where p·y = 0 at -inf
        (inf, nan, 1.0, 2.0, 1.0),   # NaN target at +inf
        (inf, 1.0, 1.0, 2.0, nan),   # NaN upstream gradient where the loss is 0
        (-inf, 0.0, 0.0, 2.0, -1.0),  # no NaN: every output has its limit (w = 0)
    ]
    x, y, w, p, g = (np.array(column) for column in zip(*rows))
    case = limit_case(x, y, w, p, "none")
    outputs = check_limits(case, g, msg=mode)
    assert np.isnan(R.to_f64(outputs[0])[:4]).all(), "the loss of a NaN argument must be NaN"


# ---------------------------------------------------------------------------------------------------------------
# Small logits in dy
# ---------------------------------------------------------------------------------------------------------------

SMALL_TO_LARGE_X = [s * m for s in (1.0, -1.0) for m in (1e-7, 3e-5, 1e-3, 0.05, 1.0, 7.0, 40.0)]
DY_RTOL = 4 * 2.0 ** -24  # a few float32 roundings of dy itself


@pytest.mark.parametrize("pos_weight", [None, 1.0, 3.0])
def test_dy_keeps_the_digits_of_small_logits(mode, pos_weight):
    """dy = w·(logsig(-x) - p·logsig(x))·g is -w·x·g for p = 1, however small x is: the two logsig terms share
    log1p(exp(-|x|)) ≈ log(2), which must not be computed twice and subtracted (that keeps ~1e-7 absolute, so
    x = 1e-7 would lose every digit). With p = 3 the result is not small, and also within a few roundings."""
    x, y = grid(SMALL_TO_LARGE_X, [0.0, 0.3, 1.0])
    w = np.full(x.shape, 1.5)
    p = None if pos_weight is None else np.full(x.shape, pos_weight)
    case = R.case_from(x, y, w, p, "none")
    g = np.full(x.shape, 0.75)
    dy = R.to_f64(R.run_grads(case, g)[1])
    expected = R.round_to(case.expected_grads(g)[1], "float32")
    np.testing.assert_allclose(dy, expected, rtol=DY_RTOL, atol=0, err_msg=f"{mode}, pos_weight {pos_weight}")


# ---------------------------------------------------------------------------------------------------------------
# Long means
# ---------------------------------------------------------------------------------------------------------------


def reference_mean(x, y, w, p, rows_per_chunk=2000):
    """The float64 reference mean, a chunk of rows at a time (the loss is elementwise; w, p broadcast over rows)."""
    total = 0.0
    for start in range(0, x.shape[0], rows_per_chunk):
        chunk = slice(start, start + rows_per_chunk)
        total += float(np.sum(R.elementwise_loss(x[chunk], y[chunk], w, p)))
    return total / x.size


def check_long_mean(numel, columns=1000):
    """Logits ~ N(0, 3²), targets in [0, 1], weight per column and a scalar pos_weight, all float32: losses of one
    sign, so that the relative error of the mean is the accumulation's, not a cancellation's."""
    rng = np.random.default_rng(numel)
    shape = (numel // columns, columns)
    x = rng.standard_normal(shape, dtype=np.float32)
    x *= 3.0
    y = rng.random(shape, dtype=np.float32)
    w = rng.uniform(0.5, 2.0, columns).astype(np.float32)
    p = np.array([1.5], dtype=np.float32)
    got = ms_bcewl.binary_cross_entropy_with_logits(ms.Tensor(x), ms.Tensor(y), ms.Tensor(w), ms.Tensor(p), "mean")
    got, expected = float(got.asnumpy()), reference_mean(x, y, w, p)
    relative = abs(got - expected) / abs(expected)
    print(f"mean over {numel} elements: {got!r}, float64 reference {expected!r}, relative difference {relative:.2e}")
    assert relative <= MEAN_RTOL, f"mean over {numel} elements: {got} vs {expected} ({relative:.2e})"


def test_mean_of_1e7_elements_is_within_1e_6_of_float64(pynative):
    check_long_mean(10**7)


if SLOW_TESTS:

    def test_mean_of_1e8_elements_is_within_1e_6_of_float64(pynative):
        check_long_mean(10**8)
