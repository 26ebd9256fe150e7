"""Hypothesis property tests of the Python API against the float64 reference (docs/contract.md).

Each example is one call of ms_bcewl.binary_cross_entropy_with_logits drawn at random: a shape of rank 0 to 8
(at most MAX_NUMEL elements), weight and pos_weight each absent or of a shape that broadcasts to the input without
enlarging it (0-d, shorter and trailing-aligned, size-1 dims), a dtype per tensor among float32, float16 and
bfloat16, a reduction, logits ~ N(0, s²) for a scale s from 1 to 1e4 (clipped to ±1e4), targets in {0, 1},
[0, 1] or [-0.5, 1.5], and a random upstream gradient. The loss and all four gradients must match the float64
reference of tests/support/reference.py within the per-dtype tolerances, widened by R.rounding_scales for the float32
cancellation between large terms. A float16 result beyond 65504 must be inf, as the reference rounded to float16
is (docs/contract.md §5 Dtypes: computed in float32, cast once). Invalid weight / pos_weight shapes raise ValueError
naming both shapes.

Settings live in `property_settings`: derandomized (every run draws the same examples) and without an example
database, so that CI is reproducible. GRAPH mode compiles two graphs per example, hence fewer examples there.
MS_BCEWL_HYPOTHESIS_EXAMPLES=N raises every property's count to N for a longer campaign (docs/reliability.md §4).
"""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from support import reference as R

MAX_RANK = 8
MAX_DIM = 6
MAX_NUMEL = 512  # keeps each GRAPH-mode compile and the reference cheap
X_SCALES = (1.0, 10.0, 100.0, 1e3, 1e4)
X_LIMIT = 1e4
TARGET_RANGES = {"binary": None, "unit": (0.0, 1.0), "out_of_range": (-0.5, 1.5)}

# Examples per property in CI, sized so that this file runs in about a minute on two cores (a GRAPH-mode example
# compiles a forward and a gradient graph: about 0.4 s).
CI_EXAMPLES = {
    ("values", "pynative"): 300,
    ("values", "graph"): 75,
    ("errors", "pynative"): 200,
    ("errors", "graph"): 40,
}
CAMPAIGN_EXAMPLES = int(os.environ.get("MS_BCEWL_HYPOTHESIS_EXAMPLES", "0"))


def property_settings(kind, mode):
    """The hypothesis settings of every property of this file."""
    return settings(max_examples=max(CI_EXAMPLES[(kind, mode)], CAMPAIGN_EXAMPLES), deadline=None,
                    derandomize=True, database=None, print_blob=False,
                    # the mode fixtures only switch MindSpore's global mode, the same for every example
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------------------------


@st.composite
def input_shapes(draw, max_rank=MAX_RANK):
    """Shapes of rank 0..max_rank with dims >= 1 and at most MAX_NUMEL elements."""
    shape, room = [], MAX_NUMEL
    for _ in range(draw(st.integers(0, max_rank))):
        dim = draw(st.integers(1, min(MAX_DIM, room)))
        shape.append(dim)
        room //= dim
    return tuple(shape)


def trailing(shape, length):
    return tuple(shape[len(shape) - length:])


@st.composite
def dims_or_ones(draw, dims):
    return tuple(draw(st.sampled_from((dim, 1))) for dim in dims)


@st.composite
def broadcast_shapes(draw, shape):
    """A shape that broadcasts to `shape` without enlarging it: a trailing part of it (0-d included), each dim
    kept or replaced by 1."""
    return draw(dims_or_ones(trailing(shape, draw(st.integers(0, len(shape))))))


def optional_broadcast_shapes(shape):
    return st.none() | broadcast_shapes(shape)


def random_targets(rng, kind, shape):
    if TARGET_RANGES[kind] is None:
        return rng.integers(0, 2, shape).astype(np.float64)
    return rng.uniform(*TARGET_RANGES[kind], shape)


@st.composite
def cases_with_upstream(draw):
    """(case, upstream gradient): shapes, dtypes, reduction and value scales from hypothesis, values from a seed."""
    shape = draw(input_shapes())
    w_shape, p_shape = draw(optional_broadcast_shapes(shape)), draw(optional_broadcast_shapes(shape))
    dtypes = tuple(draw(st.sampled_from(R.DTYPE_NAMES)) for _ in range(4))
    reduction = draw(st.sampled_from(R.REDUCTIONS))
    x_scale = draw(st.sampled_from(X_SCALES))
    target_kind = draw(st.sampled_from(sorted(TARGET_RANGES)))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    x = np.clip(rng.normal(0.0, x_scale, shape), -X_LIMIT, X_LIMIT)
    y = random_targets(rng, target_kind, shape)
    w = None if w_shape is None else rng.uniform(0.0, 2.0, w_shape)
    p = None if p_shape is None else rng.uniform(0.0, 4.0, p_shape)
    case = R.case_from(x, y, w, p, reduction, dtypes)
    return case, R.upstream(case, seed=seed + 1)


@st.composite
def enlarging_shapes(draw, shape):
    """`shape` (dims kept or 1) behind 1 or 2 leading dims: a rank above the input's (a (1, 5, 5) weight on (5, 5))."""
    lead = draw(st.lists(st.integers(1, 3), min_size=1, max_size=min(2, MAX_RANK - len(shape))))
    return tuple(lead) + draw(dims_or_ones(shape))


@st.composite
def mismatched_shapes(draw, shape):
    """A trailing-aligned shape no longer than `shape` with one dim that is neither 1 nor the input's dim."""
    tail = trailing(shape, draw(st.integers(1, len(shape))))
    dims = list(draw(dims_or_ones(tail)))
    position = draw(st.integers(0, len(tail) - 1))
    dims[position] = tail[position] + draw(st.integers(1, 3))
    return tuple(dims)


@st.composite
def invalid_broadcast_cases(draw):
    """(case, name of the bad argument, its shape): one of weight / pos_weight cannot broadcast to the input."""
    shape = draw(input_shapes(max_rank=MAX_RANK - 1))
    bad_shapes = enlarging_shapes(shape) | mismatched_shapes(shape) if shape else enlarging_shapes(shape)
    bad_shape = draw(bad_shapes)
    other_shape = draw(optional_broadcast_shapes(shape))
    bad = draw(st.sampled_from(("weight", "pos_weight")))
    w_shape, p_shape = (bad_shape, other_shape) if bad == "weight" else (other_shape, bad_shape)
    return R.make_case(shape, w_shape, p_shape, draw(st.sampled_from(R.REDUCTIONS))), bad, bad_shape


# Run first in both modes: at x ≈ -1e4 and p·y = 3e-4 the float32 terms (1 - y)·x and (1 + (p - 1)·y)·logsig(x)
# cancel to a loss of 4.5 that is 1e-4 off in relative terms, beyond the float32 rtol; R.rounding_scales allows it.
CANCELLATION = R.case_from([-1e4, -9999.0, -5e3, 7e3], [1e-3, 3e-4, 2e-3, 0.9995], [1.0, 1.5, 2.0, 1.0], [1.0], "none")
CANCELLATION_EXAMPLE = (CANCELLATION, R.upstream(CANCELLATION))

# ---------------------------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------------------------


def describe(case):
    shapes = ", ".join(f"{n}{None if a is None else a.shape}" for n, a in zip("xywp", case.args))
    return f"{case.reduction} {'/'.join(case.dtypes)} {shapes}"


def check_against_reference(drawn):
    case, g = drawn
    loss_scale, grad_scales = R.rounding_scales(case, g)
    msg = describe(case)
    R.check_loss(case, scale=loss_scale, msg=msg)
    R.check_grads(case, g, scale=grad_scales, msg=msg)


def names_shape(message, shape):
    """The message shows `shape` as a tuple or a list (whitespace ignored)."""
    flat = "".join(message.split())
    return any(form.replace(" ", "") in flat for form in (str(tuple(shape)), str(list(shape))))


def check_invalid_broadcast_raises(drawn):
    case, bad, bad_shape = drawn
    with pytest.raises(ValueError) as info:
        R.run_loss(case)
    message = str(info.value)
    assert bad in message, f"'{bad}' not named in: {message}"
    for shape in (bad_shape, case.x.shape):
        assert names_shape(message, shape), f"shape {shape} not named in: {message}"


@property_settings("values", "pynative")
@given(drawn=cases_with_upstream())
@example(drawn=CANCELLATION_EXAMPLE)
def test_loss_and_gradients_match_reference_pynative(pynative, drawn):
    check_against_reference(drawn)


@pytest.mark.parametrize("mode", ["graph"], indirect=True)
@property_settings("values", "graph")
@given(drawn=cases_with_upstream())
@example(drawn=CANCELLATION_EXAMPLE)
def test_loss_and_gradients_match_reference_graph(mode, drawn):
    check_against_reference(drawn)


@property_settings("errors", "pynative")
@given(drawn=invalid_broadcast_cases())
def test_invalid_broadcast_raises_value_error_naming_the_shapes_pynative(pynative, drawn):
    check_invalid_broadcast_raises(drawn)


@pytest.mark.parametrize("mode", ["graph"], indirect=True)
@property_settings("errors", "graph")
@given(drawn=invalid_broadcast_cases())
def test_invalid_broadcast_raises_value_error_naming_the_shapes_graph(mode, drawn):
    check_invalid_broadcast_raises(drawn)
