"""Gradients of ms_bcewl with respect to input, target, weight and pos_weight (docs/contract.md §2 Loss and gradients).

The tests feed a non-unit upstream gradient g (the gradient of Σ g · loss), except the published goldens that
are defined for g = 1.  Expected values: the float64 analytic reference, checked here against central differences
and against PyTorch; PyTorch for dx and dy; central differences of the float64 loss for all four gradients.
"""
import mindspore as ms
import numpy as np
import pytest

from support import reference as R

GOLDEN_DX_MEAN = [[0.00167092, -0.00524587, -0.08863537], [0.17917014, 0.05021872, -0.25530204]]
FD_CASES = {
    "plain": ((3, 4), None, None),
    "both": ((3, 4), (4,), (3, 1)),
    "broadcast4d": ((2, 3, 2, 2), (3, 1, 1), (2,)),
}
BROADCAST_RUNS = R.mode_params([("pynative", "none"), ("pynative", "mean"), ("graph", "sum")])


# ---------------------------------------------------------------------------------------------------------------
# The reference's gradients are right
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FD_CASES))
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_reference_gradients_match_finite_differences(reduction, name):
    case = R.make_case(*FD_CASES[name], reduction=reduction, seed=21)
    g = R.upstream(case)
    for analytic, numeric in zip(case.expected_grads(g), R.numeric_grads(*case.args, reduction=reduction, g=g)):
        if numeric is not None:
            np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("shapes", R.BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_reference_dx_dy_match_torch(reduction, shapes):
    case = R.make_case(*shapes, reduction=reduction, seed=22)
    g = R.upstream(case)
    dx, dy = case.expected_grads(g)[:2]
    _, tdx, tdy = R.torch_oracle(case, g)
    np.testing.assert_allclose(dx, tdx, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(dy, tdy, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------------------------------------------
# Golden values
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_golden_dx_dy(mode, reduction):
    """The published dx (mean; sum = 6 × mean) and dy = -x / numel (w = p = 1)."""
    case = R.golden_case(reduction)
    factor = 1.0 if reduction == "mean" else 6.0
    dx, dy, _, _ = R.run_grads(case)
    np.testing.assert_allclose(R.to_f64(dx), np.array(GOLDEN_DX_MEAN) * factor, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(R.to_f64(dy), -case.x / 6.0 * factor, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("pos_weight", [None, np.ones((3, 1))], ids=["no_pw", "pw_ones"])
def test_gradient_at_zero_is_one_half(mode, pos_weight):
    case = R.case_from(np.zeros((3, 1)), np.zeros((3, 1)), None, pos_weight, "sum")
    np.testing.assert_array_equal(R.to_f64(R.run_grads(case)[0]), np.full((3, 1), 0.5))


@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_a_passed_weight_and_pos_weight_equal_to_one_get_their_gradients(mode, reduction):
    """0-d weight and pos_weight of exactly 1, passed: an absent one reaches the library as the same 0-d 1, so
    their gradients depend on knowing what the caller passed, not on the value."""
    base = R.matrix_case(reduction, "plain", "fp32")
    case = R.case_from(base.x, base.y, np.ones(()), np.ones(()), reduction)
    R.check_grads(case, R.upstream(case), msg=f"{mode}/{reduction}")


@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_every_variant_on_0d_tensors_keeps_its_own_gradients(pynative, reduction):
    """The four variants one after the other on 0-d tensors: their primitives call one entry with one input
    signature (an absent weight is a 0-d 1 too), so MindSpore's PyNative op cache must still tell them apart."""
    for weights in [(None, None), (1.7, 0.25), (None, 0.25), (1.7, None)] * 2:
        w, p = (None if value is None else np.array(value) for value in weights)
        case = R.case_from(np.array(0.125), np.array(1.0), w, p, reduction)
        R.check_grads(case, R.upstream(case), msg=f"{reduction} weight {weights[0]} pos_weight {weights[1]}")


# ---------------------------------------------------------------------------------------------------------------
# The full matrix: reduction × variant × dtype combination × mode, with a random upstream gradient
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("combo", sorted(R.DTYPE_COMBOS))
@pytest.mark.parametrize("variant", sorted(R.VARIANTS))
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_gradient_matrix(mode, reduction, variant, combo):
    case = R.matrix_case(reduction, variant, combo)
    g = R.upstream(case)
    got = R.check_grads(case, g, msg=f"{mode}/{reduction}/{variant}/{combo}")
    _, tdx, tdy = R.torch_oracle(case, g)
    R.assert_close(R.to_f64(got[0]), tdx, case.dtypes[0], "grad", msg="dx vs torch")
    R.assert_close(R.to_f64(got[1]), tdy, case.dtypes[1], "grad", msg="dy vs torch")


@pytest.mark.parametrize("name", sorted(FD_CASES))
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_gradients_match_finite_differences(mode, reduction, name):
    """The op's four gradients against central differences of the float64 loss (no analytic formula involved)."""
    case = R.make_case(*FD_CASES[name], reduction=reduction, seed=23)
    g = R.upstream(case)
    numeric = [n for n in R.numeric_grads(*case.args, reduction=reduction, g=g) if n is not None]
    for k, (got, expected) in enumerate(zip(R.run_grads(case, g), numeric)):
        np.testing.assert_allclose(R.to_f64(got), expected, rtol=1e-4, atol=1e-6, err_msg=f"gradient {k}")


@pytest.mark.parametrize("shapes", R.BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("mode, reduction", BROADCAST_RUNS, indirect=["mode"])
def test_broadcast_gradients_are_summed_to_shape(mode, reduction, shapes):
    case = R.make_case(*shapes, reduction=reduction, seed=24)
    R.check_grads(case, R.upstream(case), msg=str(shapes))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_target_gradient_is_stable_at_large_logits(mode, dtype):
    """dy = w·(logsig(-x) - p·logsig(x)) stays finite where log(1 - sigmoid(x)) would give -inf."""
    case = R.case_from([[30.0, -30.0, 17.0], [-17.0, 9.0, -9.0]], np.full((2, 3), 0.5), [1.0, 2.0, 0.5],
                       [2.0, 0.5, 3.0], "none", (dtype,) * 4)
    g = R.upstream(case)
    dy = R.check_grads(case, g, msg="stable dy")[1]
    assert np.all(np.isfinite(R.to_f64(dy)))


@pytest.mark.parametrize("reduction", ["none", "sum"])
@pytest.mark.parametrize("shape", [(0, 3), (2, 0, 3)], ids=str)
def test_empty_input_gradients(mode, reduction, shape):
    """dx, dy are empty of x's shape; dw, dp are zeros of their own shapes."""
    case = R.make_case(shape, (3,), (1, 3), reduction)
    R.check_grads(case)


# ---------------------------------------------------------------------------------------------------------------
# weight and pos_weight as Parameters (they train)
# ---------------------------------------------------------------------------------------------------------------


def _parameter_cells():
    import ms_bcewl

    class FunctionalWithParameters(ms.nn.Cell):
        def __init__(self, w, p, reduction):
            super().__init__()
            self.w = w
            self.p = p
            self.reduction = reduction

        def construct(self, x, y):
            return ms_bcewl.binary_cross_entropy_with_logits(x, y, self.w, self.p, self.reduction)

    def loss_cell(w, p, reduction):
        return ms_bcewl.BCEWithLogitsLoss(reduction, w, p)

    return {"functional": FunctionalWithParameters, "cell": loss_cell}


class _Scaled(ms.nn.Cell):
    """2.5 × Σ loss, so that the upstream gradient of the op is not one."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def construct(self, x, y):
        return self.net(x, y).astype(ms.float32).sum() * 2.5


@pytest.mark.parametrize("combo", ["fp32", "mixed16"])
@pytest.mark.parametrize("api", ["functional", "cell"])
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_parameter_weight_and_pos_weight_gradients(mode, reduction, api, combo):
    case = R.make_case((4, 3), (3,), (1, 3), reduction, R.DTYPE_COMBOS[combo], seed=25)
    x, y, w, p, _ = R.tensors(case)
    w, p = ms.Parameter(w, name="w"), ms.Parameter(p, name="p")
    net = _Scaled(_parameter_cells()[api](w, p, reduction))
    assert {id(q) for q in net.trainable_params()} == {id(w), id(p)}, "both Parameters must be trainable"
    (dx, dy), (dw, dp) = ms.grad(net, grad_position=(0, 1), weights=(w, p))(x, y)
    R.check_grads(case, np.full(case.out_shape, 2.5), got=(dx, dy, dw, dp), msg=f"{api} parameters")
    assert np.any(R.to_f64(dp) != 0) and np.any(R.to_f64(dw) != 0)
    expected = 2.5 * np.sum(R.round_to(case.expected_loss(), case.out_dtype))
    np.testing.assert_allclose(R.to_f64(net(x, y)), expected, rtol=1e-5)
