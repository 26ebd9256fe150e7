"""ms_bcewl.mint (docs/contract.md §19 mindspore.mint order): the loss in ``mindspore.mint``'s argument order, where
``mindspore.mint`` has it, in PyNative and GRAPH mode.

Expected values: MindSpore's own mint op in the same mode (the loss, dx and dy; its weight and pos_weight gradients
are zero on the CPU backend) and the float64 reference (every gradient); its exception types for bad calls.
"""
import inspect
import subprocess
import textwrap

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, mint, nn

import ms_bcewl
from ms_bcewl.mint.nn import BCEWithLogitsLoss
from ms_bcewl.mint.nn.functional import binary_cross_entropy_with_logits
from support import reference as R

# (reduction, variant) pairs: every reduction without weights and with both, each weight alone once.
CALLS = [(reduction, variant) for reduction in R.REDUCTIONS for variant in ("plain", "both")] + \
    [("mean", "weight"), ("sum", "pos_weight")]


def test_the_names_and_signatures_are_mindspore_mints():
    assert ms_bcewl.mint.nn.functional.binary_cross_entropy_with_logits is binary_cross_entropy_with_logits
    assert ms_bcewl.mint.nn.BCEWithLogitsLoss is BCEWithLogitsLoss
    assert inspect.signature(binary_cross_entropy_with_logits) == \
        inspect.signature(mint.nn.functional.binary_cross_entropy_with_logits)
    assert inspect.signature(BCEWithLogitsLoss.__init__) == inspect.signature(mint.nn.BCEWithLogitsLoss.__init__)


class MintOrderNet(nn.Cell):
    """ms_bcewl's or MindSpore's mint function called positionally in mint's order, absent weights as None; with
    `with_sens`, Σ(float32(loss) · g), whose gradient feeds the loss the upstream g."""

    def __init__(self, builtin, case, with_sens=False):
        super().__init__()
        self.builtin = builtin
        self.reduction = case.reduction
        self.has_w, self.has_p = case.w is not None, case.p is not None
        self.with_sens = with_sens

    def construct(self, x, y, w, p, g):
        weight = w if self.has_w else None
        pos_weight = p if self.has_p else None
        if self.builtin:
            loss = mint.nn.functional.binary_cross_entropy_with_logits(x, y, weight, self.reduction, pos_weight)
        else:
            loss = binary_cross_entropy_with_logits(x, y, weight, self.reduction, pos_weight)
        if self.with_sens:
            return (loss.astype(ms.float32) * g).sum()
        return loss


def gradients(builtin, case, g):
    _, GradNet = R.cells()
    return R.run_grads(case, g, net=GradNet(MintOrderNet(builtin, case, with_sens=True), R.positions(case)))


@pytest.mark.parametrize("reduction, variant", CALLS)
def test_the_function_matches_mindspore_mints_op_and_the_reference(mode, reduction, variant):
    case = R.matrix_case(reduction, variant, "fp32", seed=13)
    loss = R.check_loss(case, got=MintOrderNet(False, case)(*R.tensors(case)), msg=f"{mode} loss")
    builtin_loss = MintOrderNet(True, case)(*R.tensors(case))
    R.assert_close(R.to_f64(loss), R.to_f64(builtin_loss), "float32", "loss", msg="vs mint")
    g = R.upstream(case)
    grads = R.check_grads(case, g, got=gradients(False, case, g), msg=f"{mode} grads")
    for name, got, builtin in zip(("dx", "dy"), grads, gradients(True, case, g)):
        R.assert_close(R.to_f64(got), R.to_f64(builtin), "float32", "grad", msg=f"{name} vs mint")


def test_the_function_is_the_same_op_as_ms_bcewls(mode):
    """Mixed dtypes, mint's order against ms_bcewl's own: the same bits for the loss and every gradient."""
    case = R.matrix_case("sum", "both", "mixed16", seed=17)
    g = R.upstream(case)
    _, GradNet = R.cells()
    mint_order = [MintOrderNet(False, case)(*R.tensors(case))] + list(gradients(False, case, g))
    ops_order = [R.run_loss(case)] + list(R.run_grads(case, g, net=GradNet(R.loss_net(case, True), R.positions(case))))
    for got, same in zip(mint_order, ops_order):
        assert got.dtype == same.dtype
        np.testing.assert_array_equal(got.asnumpy(), same.asnumpy())
    R.check_loss(case, got=mint_order[0])


def parameter(values, name):
    return None if values is None else Parameter(R.to_tensor(values), name=name)


@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_the_cell_trains_parameter_weights(mode, reduction):
    """BCEWithLogitsLoss(weight, reduction, pos_weight) positionally, both weights Parameters: the loss of
    MindSpore's mint Cell and the reference's gradients of the Parameters (MindSpore's are zero)."""
    case = R.matrix_case(reduction, "both", "fp32", seed=19)
    x, y = R.to_tensor(case.x), R.to_tensor(case.y)
    loss_fn = BCEWithLogitsLoss(parameter(case.w, "weight"), reduction, parameter(case.p, "pos_weight"))
    assert [p.name for p in loss_fn.trainable_params()] == ["weight", "pos_weight"]
    loss = R.check_loss(case, got=loss_fn(x, y), msg=mode)
    builtin = mint.nn.BCEWithLogitsLoss(R.to_tensor(case.w), reduction, R.to_tensor(case.p))
    R.assert_close(R.to_f64(loss), R.to_f64(builtin(x, y)), "float32", "loss", msg="vs mint")

    def scaled(a, b):
        return (loss_fn(a, b) * 1.5).sum()

    dw, dp = ms.grad(scaled, grad_position=None, weights=loss_fn.trainable_params())(x, y)
    _, _, expected_dw, expected_dp = case.expected_grads(np.full(case.out_shape, 1.5))
    assert np.all(np.abs(expected_dw) > 1e-3) and np.all(np.abs(expected_dp) > 1e-3)
    R.assert_close(R.to_f64(dw), expected_dw, "float32", "grad", msg="d weight")
    R.assert_close(R.to_f64(dp), expected_dp, "float32", "grad", msg="d pos_weight")


def test_bytecode_capture_gives_the_parameters_their_gradients(pynative):
    """A step under jit(capture_mode="bytecode") that takes value_and_grad of the mint Cell: the reference's
    gradients of both Parameters, not the zeros of a broken graph."""
    case = R.matrix_case("mean", "both", "fp32", seed=23)
    loss_fn = BCEWithLogitsLoss(parameter(case.w, "weight"), "mean", parameter(case.p, "pos_weight"))

    @ms.jit(capture_mode="bytecode")
    def step(x, y):
        return ms.value_and_grad(loss_fn, None, loss_fn.trainable_params())(x, y)

    loss, (dw, dp) = step(R.to_tensor(case.x), R.to_tensor(case.y))
    R.check_loss(case, got=loss)
    _, _, expected_dw, expected_dp = case.expected_grads()
    R.assert_close(R.to_f64(dw), expected_dw, "float32", "grad", msg="d weight")
    R.assert_close(R.to_f64(dp), expected_dp, "float32", "grad", msg="d pos_weight")


# Calls of the wrong order or value, made with (function or Cell class, x, y, w, p): swapping mindspore.mint for
# ms_bcewl.mint keeps each error type, and a call written in ops' or nn's order is refused, naming the argument.
BAD_CALLS = {
    "ops_order": (lambda f, x, y, w, p: f(x, y, w, p), TypeError,
                  r"For 'binary_cross_entropy_with_logits', 'reduction' must be a str, but got Tensor"),
    "unknown_reduction": (lambda f, x, y, w, p: f(x, y, w, "bogus"), ValueError,
                          r"For 'binary_cross_entropy_with_logits', 'reduction' must be one of 'none', 'mean', 'sum'"),
    "reduction_as_weight": (lambda f, x, y, w, p: f(x, y, "sum"), TypeError,
                            r"For 'binary_cross_entropy_with_logits', 'weight' must be a Tensor, but got str"),
}
BAD_CELLS = {
    "nn_order": (lambda cell, x, y, w, p: cell("sum")(x, y), TypeError,
                 r"For 'BCEWithLogitsLoss', 'weight' must be a Tensor, but got str"),
    "unknown_reduction": (lambda cell, x, y, w, p: cell(w, "bogus")(x, y), ValueError,
                          r"For 'BCEWithLogitsLoss', 'reduction' must be one of 'none', 'mean', 'sum'"),
}


def check_bad_call(call, error, pattern, builtin, ours):
    tensors = [R.to_tensor(a) for a in R.matrix_case("mean", "both", "fp32").args]
    with pytest.raises(error):
        call(builtin, *tensors)
    with pytest.raises(error, match=pattern):
        call(ours, *tensors)


@pytest.mark.parametrize("name", BAD_CALLS)
def test_a_bad_function_call_raises_mindspore_mints_error_type_naming_the_argument(pynative, name):
    check_bad_call(*BAD_CALLS[name], mint.nn.functional.binary_cross_entropy_with_logits,
                   binary_cross_entropy_with_logits)


@pytest.mark.parametrize("name", BAD_CELLS)
def test_a_bad_cell_raises_mindspore_mints_error_type_naming_the_argument(pynative, name):
    check_bad_call(*BAD_CELLS[name], mint.nn.BCEWithLogitsLoss, BCEWithLogitsLoss)


# AMP O1 over a network with the mint Cell, then one with MindSpore's loss (whose rewrite imports by bare module names
# that a folder of ms_bcewl on sys.path would shadow: tests/test_amp_rewrite.py).
O1_PROGRAM = textwrap.dedent("""
    import numpy as np
    import mindspore as ms
    from mindspore import amp, nn
    from ms_bcewl.mint.nn import BCEWithLogitsLoss

    x = ms.Tensor(np.linspace(-2, 2, 8, dtype=np.float32).reshape(2, 4))
    y = ms.Tensor(np.array([[1, 0, 1], [0, 1, 0]], np.float32))
    for name, loss in (("ms_bcewl.mint", BCEWithLogitsLoss(None, "sum")), ("mindspore", nn.BCEWithLogitsLoss("sum"))):
        ms.set_seed(0)
        network = amp.auto_mixed_precision(nn.WithLossCell(nn.Dense(4, 3), loss), "O1")
        print(name, float(network(x, y).asnumpy()))
""")


def test_amp_o1_calls_the_mint_cell_as_it_is(tmp_path):
    result = subprocess.run([*R.PYTHON, "-c", O1_PROGRAM], cwd=tmp_path, env=R.child_environment(),
                            capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    losses = dict(line.split() for line in result.stdout.splitlines())
    assert list(losses) == ["ms_bcewl.mint", "mindspore"], result.stdout
    assert abs(float(losses["ms_bcewl.mint"]) - float(losses["mindspore"])) < 1e-3, result.stdout
