"""Forward behaviour of ms_bcewl.binary_cross_entropy_with_logits (docs/contract.md).

Expected values come from the float64 reference (tests/support/reference.py), PyTorch in float64, MindSpore's
built-in op and the published golden values; never from the op itself.
"""
import mindspore as ms
import numpy as np
import pytest

from support import reference as R

GOLDEN_LOSS = {
    "mean": 0.34636119,
    "sum": 2.07816714,
    "none": [[0.61110067, 0.50328247, 0.26318605], [0.58439666, 0.55301525, -0.43681395]],
}
# (x, y, w, p, reduction, golden): MindSpore's GPU cases with non-trivial w/p and PyTorch's stability case
# (60.34657 is the mean of [log 2, 120 + log1p(e^-120)]; its sum, 120.69315, is checked in
# test_stability_sum_is_finite against the reference).
GOLDEN_CASES = {
    "gpu_mean": (np.arange(6.0).reshape(2, 3), np.arange(34.0, 40.0).reshape(2, 3), [2, 3, 1], [6, 3, 4], "mean",
                 -113.5540387),
    "gpu_sum": (np.arange(6.0, 12.0).reshape(2, 3), np.arange(6.0).reshape(2, 3), [3, 3, 4], [6, 3, 4], "sum",
                -333.9667604),
    "stability": ([0.0, -120.0], [0.0, 1.0], None, None, "mean", 60.34657),
    "stability_pw": ([0.0, -120.0], [0.0, 1.0], None, [1.0, 1.0], "mean", 60.34657),
}

BROADCAST_RUNS = R.mode_params([("pynative", "none"), ("pynative", "mean"), ("pynative", "sum"), ("graph", "mean")])

EXTREME_X = [20.0, -20.0, 88.0, -88.0, 1e4, -1e4]
EXTREME_Y = [0.0, 1.0, 0.3, 1.0, 0.0, 1.0]
EXTREME_W = [1.0, 2.0, 0.5, 1.5, 1.0, 1.0]
EXTREME_P = [3.0, 2.0, 0.5, 1.5, 1.0, 2.0]


# ---------------------------------------------------------------------------------------------------------------
# The oracles agree with each other
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_reference_matches_goldens(reduction):
    np.testing.assert_allclose(R.golden_case(reduction).expected_loss(), GOLDEN_LOSS[reduction], rtol=0, atol=1e-7)


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_reference_matches_published_cases(name):
    x, y, w, p, reduction, golden = GOLDEN_CASES[name]
    np.testing.assert_allclose(R.loss(x, y, w, p, reduction), golden, rtol=1e-7)


@pytest.mark.parametrize("shapes", R.BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_reference_matches_torch(shapes, reduction):
    case = R.make_case(*shapes, reduction=reduction, seed=7)
    np.testing.assert_allclose(case.expected_loss(), R.torch_oracle(case)[0], rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# Golden values
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_golden_doc_example(mode, reduction):
    got = R.to_f64(R.run_loss(R.golden_case(reduction)))
    np.testing.assert_allclose(got, GOLDEN_LOSS[reduction], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_golden_published_cases(mode, name):
    x, y, w, p, reduction, golden = GOLDEN_CASES[name]
    got = R.to_f64(R.run_loss(R.case_from(x, y, w, p, reduction)))
    assert np.isfinite(got)
    np.testing.assert_allclose(got, golden, rtol=1e-6)


@pytest.mark.parametrize("pos_weight", [None, [1.0, 1.0]], ids=["no_pw", "pw_ones"])
def test_stability_sum_is_finite(mode, pos_weight):
    case = R.case_from([0.0, -120.0], [0.0, 1.0], None, pos_weight, "sum")
    got = R.check_loss(case)
    assert np.isfinite(R.to_f64(got))


# ---------------------------------------------------------------------------------------------------------------
# The full matrix: reduction × variant × dtype combination × mode
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("combo", sorted(R.DTYPE_COMBOS))
@pytest.mark.parametrize("variant", sorted(R.VARIANTS))
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_forward_matrix(mode, reduction, variant, combo):
    case = R.matrix_case(reduction, variant, combo)
    got = R.check_loss(case, msg=f"{mode}/{reduction}/{variant}/{combo}")
    R.assert_close(R.to_f64(got), R.torch_oracle(case)[0], case.out_dtype, "loss", msg="vs torch")


@pytest.mark.parametrize("variant", sorted(R.VARIANTS))
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_matches_mindspore_builtin(pynative, reduction, variant):
    case = R.matrix_case(reduction, variant, "fp32", seed=3)
    x, y, w, p = (None if a is None else R.to_tensor(a) for a in case.args)
    builtin = ms.ops.binary_cross_entropy_with_logits(x, y, w, p, reduction)
    R.assert_close(R.to_f64(R.run_loss(case)), R.to_f64(builtin), "float32", "loss")


@pytest.mark.parametrize("combo", ["fp32", "mixed16"])
def test_output_dtype_is_target_dtype(pynative, combo):
    case = R.matrix_case("none", "both", combo)
    for target in R.DTYPE_NAMES:
        dtypes = (case.dtypes[0], target) + case.dtypes[2:]
        R.check_loss(R.case_from(*case.args, reduction="mean", dtypes=dtypes), msg=f"target {target}")


# ---------------------------------------------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shapes", R.BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("mode, reduction", BROADCAST_RUNS, indirect=["mode"])
def test_broadcast_weight_shapes(mode, reduction, shapes):
    case = R.make_case(*shapes, reduction=reduction, seed=11)
    got = R.check_loss(case, msg=str(shapes))
    full = [None if a is None else np.broadcast_to(a, case.x.shape).copy() for a in (case.w, case.p)]
    materialised = R.to_f64(R.run_loss(case.with_(w=full[0], p=full[1])))
    np.testing.assert_allclose(R.to_f64(got), materialised, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_pos_weight_of_ones_equals_none(mode, reduction):
    case = R.make_case((5, 4), (4,), None, reduction, seed=5)
    without = R.to_f64(R.run_loss(case))
    with_ones = R.to_f64(R.run_loss(case.with_(p=np.ones((5, 4)))))
    np.testing.assert_allclose(with_ones, without, rtol=1e-6, atol=1e-7)
    R.assert_close(without, case.expected_loss(), "float32", "loss")


def test_mean_divides_by_numel_not_by_weight_sum(pynative):
    case = R.make_case((6, 5), (5,), (6, 1), "mean", seed=9)
    weights = np.array([0.1, 0.2, 0.5, 4.0, 8.0])
    case = case.with_(w=weights)
    mean = R.to_f64(R.run_loss(case))
    total = R.to_f64(R.run_loss(case.with_(reduction="sum")))
    np.testing.assert_allclose(mean, total / case.x.size, rtol=1e-6)
    assert abs(mean - total / np.broadcast_to(weights, case.x.shape).sum()) > 1e-3


@pytest.mark.parametrize("variant", ["plain", "both"])
@pytest.mark.parametrize("shape", [(0, 3), (2, 0, 3)], ids=str)
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_empty_input(mode, reduction, shape, variant):
    w_shape, p_shape = {"plain": (None, None), "both": ((3,), (1, 3))}[variant]
    case = R.make_case(shape, w_shape, p_shape, reduction)
    got = R.to_f64(R.check_loss(case))
    expected = {"none": lambda v: v.shape == shape, "mean": np.isnan, "sum": lambda v: v == 0.0}[reduction]
    assert expected(got), f"{reduction} of an empty input gave {got}"


# ---------------------------------------------------------------------------------------------------------------
# Values: extremes, out-of-range targets, infinities, NaN
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", R.DTYPE_NAMES)
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_extreme_logits_with_pos_weight_are_finite(mode, reduction, dtype):
    case = R.case_from(EXTREME_X, EXTREME_Y, EXTREME_W, EXTREME_P, reduction, (dtype,) * 4)
    g = R.upstream(case)
    loss = R.to_f64(R.check_loss(case, msg="extreme"))
    grads = R.check_grads(case, g, msg="extreme")
    assert np.all(np.isfinite(loss))
    for grad in grads:
        assert np.all(np.isfinite(R.to_f64(grad)))


@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_out_of_range_targets_are_accepted(mode, reduction):
    case = R.case_from([[-1.5, 0.3, 2.0], [4.0, -3.0, 0.0]], [[-2.0, 3.0, 1.5], [-0.5, 2.5, 7.0]],
                       [1.0, 0.5, 2.0], [2.0, 1.0, 0.5], reduction)
    got = R.check_loss(case)
    R.assert_close(R.to_f64(got), R.torch_oracle(case)[0], "float32", "loss", msg="vs torch")


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("variant", ["plain", "both"])
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_infinite_logits_give_the_limits(mode, reduction, variant, dtype):
    """x = +inf, y = 1 → 0 and x = -inf, y = 0 → 0 (docs/contract.md §9 Infinities and NaN), for the loss, dx and dw.

    The float64 reference at x = ±1e3 equals these limits exactly, so it serves as the expected value."""
    w, p = {"plain": (None, None), "both": ([1.5, 0.5, 2.0], [2.0, 3.0, 0.5])}[variant]
    y = [1.0, 0.0, 0.25]
    case = R.case_from([np.inf, -np.inf, 0.5], y, w, p, reduction, (dtype,) * 4)
    limit = R.case_from([1e3, -1e3, 0.5], y, w, p, reduction, (dtype,) * 4)
    R.check_loss(limit, got=R.run_loss(case), msg="loss at ±inf")
    g = R.upstream(case)
    grads = R.run_grads(case, g)
    expected = limit.expected_grads(g)
    R.assert_close(R.to_f64(grads[0]), expected[0], dtype, "grad", msg="dx at ±inf")
    if w is not None:
        R.assert_close(R.to_f64(grads[2]), expected[2], dtype, "grad", msg="dw at ±inf")


@pytest.mark.parametrize("arg", ["input", "target", "weight", "pos_weight"])
def test_nan_propagates(mode, arg):
    case = R.make_case((2, 3), (3,), (3,), "none", seed=2)
    k = ("input", "target", "weight", "pos_weight").index(arg)
    values = [a.copy() for a in case.args]
    values[k][(0, 1) if k < 2 else (1,)] = np.nan
    nan_case = case.with_(x=values[0], y=values[1], w=values[2], p=values[3])
    got = R.to_f64(R.check_loss(nan_case, msg=f"NaN {arg}"))
    assert np.isnan(got[0, 1]) and np.isfinite(got[1, 0])
    for reduction in ("mean", "sum"):
        assert np.isnan(R.to_f64(R.run_loss(nan_case.with_(reduction=reduction))))
    R.check_grads(nan_case, R.upstream(nan_case), msg=f"NaN {arg}")


# ---------------------------------------------------------------------------------------------------------------
# Calls that follow each other
# ---------------------------------------------------------------------------------------------------------------


def test_mean_divisor_follows_the_call_shape(mode):
    """One Cell (and one gradient Cell) called on (2, 5), then (5, 5), then (2, 5): each divides by its numel."""
    first = R.make_case((2, 5), (5,), (5,), "mean", seed=1)
    net, gnet = R.loss_net(first), R.grad_net(first)
    for shape, seed in (((2, 5), 1), ((5, 5), 2), ((2, 5), 3)):
        case = R.make_case(shape, (5,), (5,), "mean", seed=seed)
        R.check_loss(case, got=net(*R.tensors(case)), msg=f"loss {shape}")
        g = R.upstream(case)
        R.check_grads(case, g, got=R.run_grads(case, g, net=gnet), msg=f"grads {shape}")


def test_two_runs_are_bitwise_equal(mode):
    case = R.make_case((64, 4096), (4096,), (64, 1), "mean", seed=4)
    g = R.upstream(case)
    runs = [[R.run_loss(case)] + list(R.run_grads(case, g)) for _ in range(2)]
    for a, b in zip(*runs):
        assert np.array_equal(a.asnumpy().view(np.uint32), b.asnumpy().view(np.uint32))
    R.check_loss(case, got=runs[0][0])
