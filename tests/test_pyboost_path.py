"""PyNative's pyboost path (ms_bcewl/bcewl_pyboost_path.py, aclnn_adapter/src/pyboost/pyboost_entries.cpp).

The path must give what the ops.Custom primitives give, bit for bit (both run libms_bcewl.so's aclnn API), and
match the float64 reference; it must be chosen where documented and fall back, or fail, as documented. This
process runs MindSpore's default asynchronous runtime, where the automatic choice is the primitives, so the
fixture `through` forces one path or the other; the automatic choice under launch_blocking() is checked in a
process of its own.
"""
import fcntl
import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn

import blocking_gradients
import ms_bcewl
import reference as R
from ms_bcewl import bcewl_pyboost_path as pyboost_path
from ms_bcewl.bcewl_pyboost_path import PYBOOST, PyboostPath

DTYPE_SETS = {
    "float16": ("float16",) * 4,
    "bfloat16": ("bfloat16",) * 4,
    "mixed": ("float16", "bfloat16", "float32", "float16"),
}


@pytest.fixture
def through(pynative, monkeypatch):
    """through(path, function, *args): function's result with PyNative calls forced through 'pyboost' or 'aot'."""
    def run(path, function, *args):
        monkeypatch.setattr(PYBOOST, "choice", path)
        return function(*args)
    yield run


def assert_same_bits(got, expected, what):
    """Same values, NaN positions and zero signs (float16/bfloat16 widen to float64 exactly)."""
    got, expected = R.to_f64(got), R.to_f64(expected)
    np.testing.assert_array_equal(got, expected, err_msg=what)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expected), err_msg=f"{what}: signs of zeros")


def check_both_paths(through, case, g=None):
    """The pyboost loss and gradients equal the primitives' bit for bit, and the reference within tolerance."""
    loss = through("pyboost", R.run_loss, case)
    grads = through("pyboost", R.run_grads, case, g)
    assert_same_bits(loss, through("aot", R.run_loss, case), "loss")
    for index, (got, expected) in enumerate(zip(grads, through("aot", R.run_grads, case, g))):
        assert_same_bits(got, expected, f"gradient {index}")
    loss_scale, grad_scales = R.rounding_scales(case, g)
    R.check_loss(case, loss, loss_scale, "pyboost")
    R.check_grads(case, g, grads, grad_scales, "pyboost")


def test_the_module_builds_and_loads(pynative, monkeypatch):
    monkeypatch.setattr(PYBOOST, "choice", "pyboost")
    assert callable(PYBOOST.loss())


@pytest.mark.parametrize("shapes", R.BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_float32_matches_the_primitives_bitwise(through, reduction, shapes):
    case = R.make_case(*shapes, reduction=reduction, seed=61)
    check_both_paths(through, case, R.upstream(case))


@pytest.mark.parametrize("dtypes", sorted(DTYPE_SETS))
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_16_bit_and_mixed_dtypes_match_the_primitives_bitwise(through, reduction, dtypes):
    case = R.make_case((6, 5), (5,), (6, 1), reduction=reduction, dtypes=DTYPE_SETS[dtypes], seed=62)
    check_both_paths(through, case, R.upstream(case))


@pytest.mark.parametrize("shapes", [((6, 5), None, None), ((6, 5), (5,), None), ((6, 5), None, (6, 1)),
                                    ((6, 5), (1, 5), (5,))], ids=str)
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_the_input_gradient_alone_matches_the_primitives_bitwise(through, reduction, shapes):
    """grad_position 0 alone, a training step's usual question."""
    case = R.make_case(*shapes, reduction=reduction, seed=67)
    g = R.upstream(case)
    net = R.cells()[1](R.loss_net(case, with_sens=True), 0)
    dx = through("pyboost", net, *R.tensors(case, g))
    assert_same_bits(dx, through("aot", net, *R.tensors(case, g)), "dx")
    R.assert_close(R.to_f64(dx), case.expected_grads(g)[0], "float32", "grad", R.rounding_scales(case, g)[1][0])


@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_large_input_uses_the_kernel_threads_and_matches(through, reduction):
    """Above the kernels' one-thread threshold, with a per-class pos_weight whose gradient joins the fused pass."""
    case = R.make_case((9000, 8), None, (8,), reduction=reduction, seed=63)
    check_both_paths(through, case, R.upstream(case))


@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_empty_input(through, reduction):
    case = R.make_case((0, 3), (3,), None, reduction=reduction, seed=64)
    loss = through("pyboost", R.run_loss, case)
    expected = {"none": np.zeros((0, 3)), "mean": np.float64("nan"), "sum": np.float64(0.0)}[reduction]
    np.testing.assert_array_equal(R.to_f64(loss), expected)
    dx, dy, dw = through("pyboost", R.run_grads, case, R.upstream(case))
    assert (dx.shape, dy.shape) == ((0, 3), (0, 3))
    np.testing.assert_array_equal(R.to_f64(dw), np.zeros(3))


def test_views_are_read_through_their_strides(through):
    rng = np.random.default_rng(65)
    x, y = rng.normal(size=(7, 5)).astype(np.float32), rng.uniform(size=(7, 5)).astype(np.float32)
    transposed = through("pyboost", ms_bcewl.binary_cross_entropy_with_logits, Tensor(x).T, Tensor(y).T, None,
                         None, "none")
    assert not Tensor(x).T.is_contiguous()
    R.assert_close(R.to_f64(transposed), R.loss(x.T.astype(np.float64), y.T.astype(np.float64), reduction="none"),
                   "float32", "loss")


def test_argument_errors_are_raised_before_the_call(through):
    x = Tensor(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"'input' and 'target' must have the same shape"):
        through("pyboost", ms_bcewl.binary_cross_entropy_with_logits, x, Tensor(np.zeros((2, 4), np.float32)))
    with pytest.raises(TypeError, match="'weight' must have dtype"):
        through("pyboost", ms_bcewl.binary_cross_entropy_with_logits, x, x, Tensor(np.zeros(3, np.int32)))


def test_a_native_error_is_a_runtime_error_and_the_next_call_works(through):
    """What the Python checks would have caught, passed straight to the module: the library's message."""
    loss = through("pyboost", PYBOOST.loss)
    x = Tensor(np.zeros((2, 3), np.float32))
    with pytest.raises(RuntimeError, match=r"ms_bcewl: .*shape.*aclnn status 161002"):
        loss(x, Tensor(np.zeros((2, 4), np.float32)), None, None, 1).asnumpy()
    np.testing.assert_allclose(loss(x, x, None, None, 1).asnumpy(), np.log(2.0), rtol=1e-6)


def test_a_weight_parameter_trains_as_with_the_primitives(through):
    """Two SGD steps on a Dense layer and a trainable per-class weight: the same parameters either way."""
    rng = np.random.default_rng(66)
    x = Tensor(rng.normal(size=(32, 4)).astype(np.float32))
    y = Tensor((rng.uniform(size=(32, 3)) > 0.5).astype(np.float32))

    def train(path):
        ms.set_seed(7)
        dense = nn.Dense(4, 3)
        weight = Parameter(Tensor(np.array([0.5, 1.0, 2.0], np.float32)), name="class_weight")
        optimizer = nn.SGD(dense.trainable_params() + [weight], learning_rate=0.5)

        def step_loss(inputs, targets):
            return ms_bcewl.binary_cross_entropy_with_logits(dense(inputs), targets, weight, None, "mean")

        step = ms.value_and_grad(step_loss, None, optimizer.parameters)
        for _ in range(2):
            _, grads = through(path, step, x, y)
            optimizer(grads)
        return [p.asnumpy() for p in optimizer.parameters]

    trained = train("pyboost")
    assert not np.array_equal(trained[-1], [0.5, 1.0, 2.0]), "the weight did not move"
    for got, expected in zip(trained, train("aot")):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("argument", ["weight", "pos_weight"])
def test_a_parameter_alone_is_differentiated_as_with_the_primitives(through, argument):
    """value_and_grad for a Parameter passed as weight or pos_weight, x and y plain tensors: the Parameter is the
    one argument autograd tracks, and the pyboost path, which skips the autograd Function where no argument is
    tracked, must still see it."""
    rng = np.random.default_rng(67)
    x = Tensor(rng.normal(size=(16, 3)).astype(np.float32))
    y = Tensor(rng.uniform(size=(16, 3)).astype(np.float32))
    parameter = Parameter(Tensor(np.array([0.5, 1.0, 2.0], np.float32)), name=f"class_{argument}")

    def loss(inputs, targets):
        weights = {"weight": None, "pos_weight": None, argument: parameter}
        return ms_bcewl.binary_cross_entropy_with_logits(inputs, targets, reduction="sum", **weights)

    step = ms.value_and_grad(loss, None, [parameter])
    (value, (grad,)), (expected_value, (expected_grad,)) = (through(path, step, x, y) for path in ("pyboost", "aot"))
    assert_same_bits(value, expected_value, "loss")
    assert_same_bits(grad, expected_grad, f"gradient of {argument}")
    assert np.all(grad.asnumpy() != 0), f"no gradient reached {argument}: {grad}"


# ---------------------------------------------------------------------------------------------------------------
# The choice of path
# ---------------------------------------------------------------------------------------------------------------


def failing_build():
    raise RuntimeError("Error building extension 'ms_bcewl_pyboost': g++ not found")


def test_unknown_setting_is_refused():
    with pytest.raises(ValueError, match="MS_BCEWL_PYNATIVE_PATH='fast' is not one of auto, pyboost, aot"):
        pyboost_path.choice_from({"MS_BCEWL_PYNATIVE_PATH": "fast"})
    assert pyboost_path.choice_from({}) == "auto"


def test_aot_never_builds_and_auto_keeps_the_primitives_in_the_async_runtime(monkeypatch):
    monkeypatch.setattr(pyboost_path, "launch_blocking", lambda: False)
    assert PyboostPath("aot", build=failing_build).loss() is None
    assert PyboostPath("auto", build=failing_build).loss() is None


def test_auto_warns_once_and_falls_back_when_the_module_cannot_be_built(monkeypatch):
    monkeypatch.setattr(pyboost_path, "launch_blocking", lambda: True)
    path = PyboostPath("auto", build=failing_build)
    with pytest.warns(RuntimeWarning, match="could not be built .*g\\+\\+ not found"):
        assert path.loss() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert path.loss() is None


def test_an_explicit_pyboost_setting_fails_at_the_call_when_the_module_cannot_be_built():
    path = PyboostPath("pyboost", build=failing_build)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="MS_BCEWL_PYNATIVE_PATH=pyboost, but .* g\\+\\+ not found"):
            path.loss()


def test_builds_unused_for_30_days_are_removed_unless_held(tmp_path):
    """A load removes the other builds of its module whose .lock is older than STALE_AFTER_DAYS, except one another
    process holds; recent builds, other modules' and other folders stay."""
    now = 1.0e9
    old = now - (pyboost_path.STALE_AFTER_DAYS + 1) * 86400

    def build(folder_name, mtime):
        folder = tmp_path / folder_name
        folder.mkdir()
        (folder / "module.so").write_text("")
        (folder / ".lock").write_text("")
        os.utime(folder / ".lock", (mtime, mtime))
        return folder

    stale = build("ms_x-0123456789abcdef", old)
    recent = build("ms_x-1111111111111111", now - 86400)
    kept = build("ms_x-2222222222222222", old)
    held = build("ms_x-3333333333333333", old)
    other_module = build("ms_y-4444444444444444", old)
    not_a_build = build("ms_x-notes", old)
    with open(held / ".lock", "a", encoding="utf-8") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        pyboost_path.remove_stale_builds(tmp_path, "ms_x", kept, now=now)
    assert not stale.exists()
    assert all(folder.exists() for folder in (recent, kept, held, other_module, not_a_build))


def test_the_build_key_follows_the_source(tmp_path):
    include = tmp_path / "include"
    include.mkdir()
    (include / "api.h").write_text("int f();\n")
    source = tmp_path / "entries.cpp"
    source.write_text("int f() { return 1; }\n")
    first = pyboost_path.build_key(source, include)
    source.write_text("int f() { return 2; }\n")
    second = pyboost_path.build_key(source, include)
    (include / "api.h").write_text("int f(int);\n")
    assert len({first, second, pyboost_path.build_key(source, include)}) == 3


def test_launch_blocking_chooses_pyboost_and_matches_the_reference():
    """In a process of its own: launch_blocking() cannot be undone."""
    script = textwrap.dedent("""
        import mindspore as ms
        import numpy as np
        ms.runtime.launch_blocking()
        ms.set_context(mode=ms.PYNATIVE_MODE)
        import ms_bcewl
        from ms_bcewl.bcewl_pyboost_path import PYBOOST
        x, y = np.array([[-1.5, 0.25, 3.0]], np.float32), np.array([[0.0, 1.0, 0.5]], np.float32)
        loss = ms_bcewl.binary_cross_entropy_with_logits(ms.Tensor(x), ms.Tensor(y), reduction="sum")
        print(PYBOOST.loss() is not None, repr(float(loss.asnumpy())))
    """)
    environment = {key: value for key, value in os.environ.items() if key != pyboost_path.PATH_VARIABLE}
    done = subprocess.run([sys.executable, "-P", "-c", script], capture_output=True, text=True, timeout=600,
                          env=environment, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    chosen, loss = done.stdout.split()[-2:]
    x, y = np.array([-1.5, 0.25, 3.0]), np.array([0.0, 1.0, 0.5])
    assert chosen == "True"
    np.testing.assert_allclose(float(loss), R.loss(x, y, reduction="sum"), rtol=1e-6)


def test_gradients_given_with_a_reduced_loss_under_launch_blocking_match_the_primitives():
    """Under launch_blocking() the forward of a mean or summed loss whose input is tracked also computes the
    gradients for a gradOutput of 1, which the backward hands over when its gradOutput is exactly 1: value_and_grad
    of the loss and of 3 x the loss (the other path) for mean, sum and none, three dtypes, no weights, a per-class
    pos_weight, a mask weight with it; a sum of two losses; two calls in a row; SGD of a Dense layer and of a
    weight Parameter alone. Every case gives the primitives' bits (tests/blocking_gradients.py, its own process)."""
    environment = {key: value for key, value in os.environ.items() if key != pyboost_path.PATH_VARIABLE}
    done = subprocess.run([sys.executable, "-P", str(Path(__file__).with_name("blocking_gradients.py"))],
                          capture_output=True, text=True, timeout=900, env=environment, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    cases = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(cases) == 58, f"{len(cases)} cases ran:\n{done.stdout[-2000:]}"
    assert [case["case"] for case in cases if not case["same_bits"]] == []
    plain = next(case for case in cases if case["case"] == "mean/float32/plain/scale None")
    arrays = blocking_gradients.input_arrays(())
    x, y = (arrays[name].astype(np.float32).astype(np.float64) for name in ("x", "y"))
    loss, dx, dy = (np.array(value) for value in plain["pyboost"])
    np.testing.assert_allclose(loss, R.loss(x, y, reduction="mean"), rtol=1e-5)
    expected_dx, expected_dy, _, _ = R.grads(x, y, reduction="mean")
    np.testing.assert_allclose(dx, expected_dx, rtol=1e-4, atol=1e-9)
    np.testing.assert_allclose(dy, expected_dy, rtol=1e-4, atol=1e-9)
