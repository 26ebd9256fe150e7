"""PyNative's pyboost path (ms_bcewl/_pyboost.py, aclnn_adapter/src/mindspore/mindspore_entries.cpp).

The path must give what the ops.Custom primitives give, bit for bit (both run libms_bcewl.so's aclnn API), and
match the float64 reference; it must be chosen where documented and fall back, or fail, as documented. This
process runs MindSpore's default asynchronous runtime, where the automatic choice is the primitives, so the
fixture `through` forces one path or the other; the automatic choice under launch_blocking() is checked in a
process of its own.
"""
import fcntl
import json
import os
import re
import shutil
import subprocess
import textwrap
import time
import warnings
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn

import ms_bcewl
from ms_bcewl import _pyboost as pyboost_path
from ms_bcewl import cli
from ms_bcewl._pyboost import PYBOOST, PyboostPath
from support import blocking_gradients, blocking_mixed_precision
from support import reference as R
from support.native_build import HANG_GUARD_SECONDS

DTYPE_SETS = {
    "float16": ("float16",) * 4,
    "bfloat16": ("bfloat16",) * 4,
    "mixed": ("float16", "bfloat16", "float32", "float16"),
}


def force_pyboost(monkeypatch):
    """The pyboost path for this test's calls, as under launch_blocking(), which this process cannot undo. The
    inputs of these tests are tensors made before the call, which the asynchronous runtime hands the module
    correctly; support/blocking_gradients.py runs the same under a real launch_blocking()."""
    monkeypatch.setattr(PYBOOST, "choice", "pyboost")
    monkeypatch.setattr(PYBOOST, "_blocking", True)


@pytest.fixture
def through(pynative, monkeypatch):
    """through(path, function, *args): function's result with PyNative calls forced through 'pyboost' or 'aot'."""
    def run(path, function, *args):
        if path == "pyboost":
            force_pyboost(monkeypatch)
        else:
            monkeypatch.setattr(PYBOOST, "choice", path)
        return function(*args)
    yield run


def run_support_module(module, timeout=900):
    """support.<module> in a process of its own, with the automatic choice of path."""
    environment = {key: value for key, value in os.environ.items() if key != pyboost_path.PATH_VARIABLE}
    done = subprocess.run(R.module_command(module), capture_output=True, text=True, timeout=timeout,
                          env=R.child_environment(environment), check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


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
    force_pyboost(monkeypatch)
    assert callable(PYBOOST.loss())


def test_pyboost_in_the_asynchronous_runtime_is_refused_at_the_call(pynative, monkeypatch):
    """MS_BCEWL_PYNATIVE_PATH=pyboost without launch_blocking(): `ms.grad(lambda x: loss(x * 2, y))(x)` gave zero
    gradients in 35 of 40 calls (the Function did not see x * 2 as tracked); now the call says what to do."""
    monkeypatch.setattr(PYBOOST, "choice", "pyboost")
    x = Tensor(np.array([[0.5, -1.0, 2.0]], np.float32))
    y = Tensor(np.array([[1.0, 0.0, 1.0]], np.float32))
    with pytest.raises(RuntimeError, match=r"MS_BCEWL_PYNATIVE_PATH=pyboost needs mindspore.runtime.launch_blocking"):
        ms.grad(lambda x: ms_bcewl.binary_cross_entropy_with_logits(x * 2, y))(x)


@pytest.mark.parametrize("shapes", R.BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_float32_matches_the_primitives_bitwise(through, reduction, shapes):
    case = R.make_case(*shapes, reduction=reduction, seed=61)
    check_both_paths(through, case, R.upstream(case))


@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_every_variant_on_0d_tensors_gets_the_gradients_of_what_it_passed(through, reduction):
    """One autograd Function serves every variant, an absent weight or pos_weight passed to it as a 0-d 1: the
    variants alternate on 0-d tensors, and a passed weight or pos_weight of exactly 1 still gets its gradient, an
    absent one none, with the primitives' bits."""
    for weights in [(None, None), (1.0, 1.0), (None, 1.0), (1.0, None), (1.7, 0.25)] * 2:
        w, p = (None if value is None else np.array(value) for value in weights)
        case = R.case_from(np.array(0.125), np.array(1.0), w, p, reduction)
        check_both_paths(through, case, R.upstream(case))
        check_both_paths(through, case)  # a gradOutput of 1: the gradients the forward computed with the loss


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
# Mixed precision: MindSpore casts a primitive's arguments inside a Cell with to_float; both paths must match it
# ---------------------------------------------------------------------------------------------------------------


def test_mixed_precision_gives_mindsporess_dtypes_and_the_same_bits_on_both_paths():
    """Cell.to_float(float16) and auto_mixed_precision O2 / O3 on a net whose loss is ms_bcewl's Cell, under
    launch_blocking() (tests/support/blocking_mixed_precision.py, its own process). The pyboost path ignored
    to_float: a float32 loss 0.3047358 where the primitives and MindSpore's op gave float16 0.3047 (O2: 1.06089
    against 1.06055); the primitives failed for reduction 'none'. Each case: the dtype of MindSpore's op on both
    paths, the same bits on both, the loss of the arguments rounded to that dtype (a Parameter pos_weight too)."""
    done = run_support_module("blocking_mixed_precision")
    cases = {case["case"]: case for case in map(json.loads, filter(lambda line: line.startswith("{"),
                                                                     done.stdout.splitlines()))}
    assert len(cases) == 15, done.stdout[-2000:]
    assert [name for name, case in cases.items() if not case["same_bits"]] == []
    for name, case in cases.items():
        assert case["dtypes"][0] == case["dtypes"][1] == case["dtypes"][2], name
    x, y, weight, pos_weight = blocking_mixed_precision.input_arrays()
    for dtype in blocking_mixed_precision.AMP_DTYPES:
        for reduction in R.REDUCTIONS:
            assert cases[f"to_float {dtype} {reduction}"]["dtypes"][0] == str(R.ms_dtype(dtype))
            rounded = [R.round_to(a.astype(np.float64), dtype) for a in (x, y, weight, pos_weight)]
            R.assert_close(cases[f"to_float {dtype} {reduction}"]["loss"], R.loss(*rounded, reduction), dtype, "loss",
                           4.0)
            R.assert_close(cases[f"to_float {dtype} {reduction} functional"]["loss"],
                           R.loss(*rounded[:2], reduction=reduction), dtype, "loss", 4.0)
    for level in blocking_mixed_precision.AMP_LEVELS:
        np.testing.assert_allclose(cases[f"amp {level}"]["loss"], cases[f"amp {level}"]["builtin_loss"], rtol=2e-3)


# ---------------------------------------------------------------------------------------------------------------
# The choice of path
# ---------------------------------------------------------------------------------------------------------------


# What MindSpore's builder raises where g++ is missing: kilobytes of compiler command lines, the cause near the end.
NO_COMPILER = ("Error building extension 'ms_bcewl_pyboost': [1/2] g++ -MMD -MF ms_bcewl_pyboost.o.d "
               + " ".join(f"-I/site-packages/mindspore/include/path{i}" for i in range(80))
               + " -c mindspore_entries.cpp -o ms_bcewl_pyboost.o\nFAILED: ms_bcewl_pyboost.o\n"
               + "g++ -MMD " + "-DFLAG " * 60 + "\n/bin/sh: 1: g++: not found\nninja: build stopped: subcommand "
               "failed.\n")


def failing_prepare(folder, wait_for_compile):
    raise RuntimeError(NO_COMPILER)


def test_an_empty_setting_is_unset():
    """MS_BCEWL_PYNATIVE_PATH='' failed the import; empty reads as unset, like MS_BCEWL_CACHE_DIR."""
    assert pyboost_path.setting({}) == "auto"
    assert pyboost_path.setting({"MS_BCEWL_PYNATIVE_PATH": ""}) == "auto"


def test_an_unknown_setting_raises_at_the_first_pynative_call_not_at_import():
    """Importing with MS_BCEWL_PYNATIVE_PATH=fast raised, so `ms-bcewl info` could not even show the setting."""
    assert pyboost_path.setting({"MS_BCEWL_PYNATIVE_PATH": "fast"}) == "fast"
    with pytest.raises(ValueError, match="MS_BCEWL_PYNATIVE_PATH='fast' is not one of auto, pyboost, aot"):
        PyboostPath("fast", prepare=failing_prepare).loss()


def test_aot_never_builds_and_auto_keeps_the_primitives_in_the_async_runtime(monkeypatch):
    monkeypatch.setattr(pyboost_path, "launch_blocking", lambda: False)
    for choice in ("aot", "auto"):
        path = PyboostPath(choice, prepare=failing_prepare)
        assert path.loss() is None
        assert not path._prepared, choice  # pylint: disable=protected-access


def test_auto_keeps_the_primitives_in_the_async_runtime_though_wait_loaded_the_module(monkeypatch):
    """wait() loads the module whatever the runtime (tests and benchmarks settle the path with it); auto must still
    answer None in the asynchronous runtime, where the pyboost autograd can miss an input."""
    monkeypatch.setattr(pyboost_path, "launch_blocking", lambda: False)
    monkeypatch.setattr(pyboost_path, "pynative_queues_operators", lambda: False)  # as where no operator ran yet
    path = PyboostPath("auto", prepare=lambda folder, wait_for_compile: "the module's loss", locate=lambda: None)
    assert path.wait() == "the module's loss"
    assert path.loss() is None


def test_auto_without_a_built_module_keeps_the_primitives_for_the_process(monkeypatch):
    """The first call under launch_blocking() compiled the module for about 60 s before returning. Now it asks for
    the module without waiting for a compile (prepare_module then starts a builder process for later processes) and
    this process keeps the primitives; it asks once."""
    monkeypatch.setattr(pyboost_path, "launch_blocking", lambda: True)
    asked = []

    def not_built_yet(folder, wait_for_compile):
        asked.append(wait_for_compile)

    path = PyboostPath("auto", prepare=not_built_yet, locate=lambda: None)
    assert [path.loss() for _ in range(3)] == [None] * 3
    assert asked == [False]


FIRST_CALL_SCRIPT = """
import os
import mindspore as ms, numpy as np
ms.runtime.launch_blocking()
ms.set_context(mode=ms.PYNATIVE_MODE)
import ms_bcewl
from ms_bcewl._pyboost import PYBOOST
x, y = ms.Tensor(np.array([[-1.5, 0.25, 3.0]], np.float32)), ms.Tensor(np.array([[0.0, 1.0, 0.5]], np.float32))
loss = float(ms_bcewl.binary_cross_entropy_with_logits(x, y, reduction="sum").asnumpy())
open(os.environ["FIRST_CALL_RETURNED"], "w").close()  # lets the compiler finish
print(repr(loss), PYBOOST.wait() is None)
"""


@pytest.mark.rebuilds_pyboost
def test_the_first_blocking_call_in_an_empty_cache_does_not_wait_for_the_compile(tmp_path):
    """The first PyNative call under launch_blocking() blocked about 60 s while the module compiled, silently.
    Here the compiler fails only once the first call has returned, so a first call that waited for it would never
    return (the run's timeout): it returns from the primitives, and the process then learns in one warning line why
    the module could not be built."""
    returned = tmp_path / "first-call-returned"
    compiler = tmp_path / "slow-g++"
    # waits at most 600 s, the run's timeout, so that no compiler outlives a failed run
    compiler.write_text(f"#!/bin/sh\ni=0\nwhile [ ! -e '{returned}' ] && [ $i -lt 6000 ]; do\n  sleep 0.1\n"
                        "  i=$((i+1))\ndone\necho 'slow-g++: error: no compiler here' >&2\nexit 1\n")
    compiler.chmod(0o755)
    environment = {key: value for key, value in os.environ.items() if key != pyboost_path.PATH_VARIABLE}
    environment.update(CXX=str(compiler), MS_BCEWL_CACHE_DIR=str(tmp_path / "cache"), FIRST_CALL_RETURNED=str(returned))
    done = subprocess.run([*R.PYTHON, "-c", FIRST_CALL_SCRIPT], capture_output=True, text=True,
                          timeout=600, env=environment, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    loss, fell_back = done.stdout.split()[-2:]
    x, y = np.array([-1.5, 0.25, 3.0]), np.array([0.0, 1.0, 0.5])
    np.testing.assert_allclose(float(loss), R.loss(x, y, reduction="sum"), rtol=1e-6)
    assert fell_back == "True"
    warned = [line for line in done.stderr.splitlines() if "could not build the pyboost module" in line]
    assert len(warned) == 1 and "slow-g++: error: no compiler here" in warned[0], done.stderr[-3000:]


NEXT_PROCESS_SCRIPT = """
import mindspore as ms, numpy as np
ms.runtime.launch_blocking()
ms.set_context(mode=ms.PYNATIVE_MODE)
import ms_bcewl
from ms_bcewl._pyboost import PYBOOST
x, y = ms.Tensor(np.array([[-1.5, 0.25, 3.0]], np.float32)), ms.Tensor(np.array([[0.0, 1.0, 0.5]], np.float32))
loss = float(ms_bcewl.binary_cross_entropy_with_logits(x, y, reduction="sum").asnumpy())
print(PYBOOST.loss() is not None, repr(loss))
"""


def run_next_process_script(environment, cwd):
    """(whether the process took the pyboost path, its loss) for NEXT_PROCESS_SCRIPT, checked against float64."""
    done = subprocess.run([*R.PYTHON, "-c", NEXT_PROCESS_SCRIPT], capture_output=True, text=True, env=environment,
                          cwd=cwd, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    took_pyboost, loss = done.stdout.split()[-2:]
    x, y = np.array([-1.5, 0.25, 3.0]), np.array([0.0, 1.0, 0.5])
    np.testing.assert_allclose(float(loss), R.loss(x, y, reduction="sum"), rtol=1e-6)
    return took_pyboost == "True"


@pytest.mark.rebuilds_pyboost
def test_the_build_a_first_call_starts_serves_the_next_process(tmp_path):
    """auto in an empty cache: the first process keeps the primitives and leaves a builder behind; once it is done,
    the next process takes the pyboost path from its first call. The cache is named relative to the processes'
    working directory: the builder, which runs in the package's folder, built into the package's folder instead."""
    environment = {key: value for key, value in os.environ.items() if key != pyboost_path.PATH_VARIABLE}
    environment.update(MS_BCEWL_CACHE_DIR="cache")
    assert not run_next_process_script(environment, tmp_path)
    folder = pyboost_path.BuildFolder.in_cache({"MS_BCEWL_CACHE_DIR": str(tmp_path / "cache")})
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while not (folder.verified() or folder.failure()) and time.monotonic() < deadline:
        time.sleep(1)
    assert folder.verified(), folder.failure()
    assert run_next_process_script(environment, tmp_path)


def builders_started(monkeypatch):
    """The (arguments, keywords) of each process _pyboost.py starts from now on, none of which runs."""
    started = []
    monkeypatch.setattr(pyboost_path.subprocess, "Popen", lambda *args, **kwargs: started.append((args, kwargs)))
    return started


@pytest.mark.parametrize("variable, root", [("MS_BCEWL_CACHE_DIR", "rel/cache"),
                                            ("XDG_CACHE_HOME", "rel/cache/ms_bcewl")])
def test_a_relative_cache_folder_is_the_users_for_the_builder_too(tmp_path, monkeypatch, variable, root):
    """The builder runs in the package's folder: handed a relative cache folder, it built where no user process
    looks. The folder is taken from the working directory of the process that starts the builder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MS_BCEWL_CACHE_DIR", raising=False)
    monkeypatch.setenv(variable, "rel/cache")
    monkeypatch.setattr(pyboost_path, "launch_blocking", lambda: True)
    started = builders_started(monkeypatch)
    assert PyboostPath("auto").loss() is None
    (_, keywords), = started
    assert keywords["env"]["MS_BCEWL_CACHE_DIR"] == str(tmp_path / root)
    assert pyboost_path.BuildFolder.in_cache().path.parent == tmp_path / root


def test_an_unwritable_cache_warns_once_and_starts_no_builder(tmp_path, monkeypatch):
    """A cache that cannot be written (a read-only root file system; here a folder under a regular file, which
    stops root too) gave no warning, and every process started a builder that failed."""
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv("MS_BCEWL_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(pyboost_path, "launch_blocking", lambda: True)
    started = builders_started(monkeypatch)
    path = PyboostPath("auto")
    with pytest.warns(RuntimeWarning) as warned:
        assert path.loss() is None
    assert len(warned) == 1, [str(warning.message) for warning in warned]
    assert str(warned[0].message).startswith(
        f"ms_bcewl: could not build the pyboost module: cannot write to the cache {blocker}/cache (Not a directory; "
        "MS_BCEWL_CACHE_DIR names another)")
    assert started == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert path.loss() is None


def test_info_names_a_missing_compiler(tmp_path):
    """Without a compiler (a wheel's install) info said 'module not built yet' as if 'ms-bcewl build' could."""
    environment = {"MS_BCEWL_CACHE_DIR": str(tmp_path), "CXX": str(tmp_path / "no-such-g++")}
    assert cli.pynative_path("auto", environment).endswith(
        f"module not built: no C++ compiler found ({tmp_path}/no-such-g++ is not on PATH; CXX names another) "
        "(MS_BCEWL_PYNATIVE_PATH)")


def test_auto_warns_once_with_the_cause_first_in_one_line_and_keeps_the_primitives(monkeypatch):
    """Without g++ the warning was 3.7 KB, the cause at character 3,589, and suggested MS_BCEWL_PYNATIVE_PATH=aot."""
    monkeypatch.setattr(pyboost_path, "launch_blocking", lambda: True)
    path = PyboostPath("auto", prepare=failing_prepare, locate=lambda: None)
    with pytest.warns(RuntimeWarning) as warned:
        assert path.loss() is None
    message = str(warned[0].message)
    assert len(warned) == 1
    assert message.startswith("ms_bcewl: could not build the pyboost module: /bin/sh: 1: g++: not found")
    assert "\n" not in message and len(message) < 300, message
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert path.loss() is None and path.wait() is None


def test_an_explicit_pyboost_setting_fails_at_the_call_when_the_module_cannot_be_built():
    path = PyboostPath("pyboost", prepare=failing_prepare)
    path._blocking = True  # as under launch_blocking()  # pylint: disable=protected-access
    for _ in range(2):
        with pytest.raises(RuntimeError, match=r"^ms_bcewl: could not build the pyboost module: /bin/sh: 1: g\+\+: "
                                               r"not found \(MS_BCEWL_PYNATIVE_PATH=pyboost asks for it\)$"):
            path.loss()


def test_info_names_a_missing_shipped_source_instead_of_failing(monkeypatch):
    """A library folder without mindspore_entries.cpp (an old in-place build) made `ms-bcewl info` fail with a
    FileNotFoundError traceback from hashing the source."""
    def missing_source(environ):
        raise FileNotFoundError(2, "No such file or directory", "/pkg/ms_bcewl/lib/mindspore_entries.cpp")
    monkeypatch.setattr(pyboost_path.BuildFolder, "in_cache", missing_source)
    assert cli.pynative_path("auto", {}) == (
        "auto: ops.Custom primitives only: cannot read /pkg/ms_bcewl/lib/mindspore_entries.cpp (No such file or "
        "directory); pip install the package again (MS_BCEWL_PYNATIVE_PATH)")


# ---------------------------------------------------------------------------------------------------------------
# The cache: damaged and read-only
# ---------------------------------------------------------------------------------------------------------------

LOSS_SCRIPT = """
import mindspore as ms, numpy as np
ms.set_context(mode=ms.PYNATIVE_MODE)
ms.runtime.launch_blocking()
import ms_bcewl
print(ms_bcewl.__file__)
x, y = ms.Tensor(np.array([[-1.5, 0.25, 3.0]], np.float32)), ms.Tensor(np.array([[0.0, 1.0, 0.5]], np.float32))
print(repr(float(ms_bcewl.binary_cross_entropy_with_logits(x, y, reduction="sum").asnumpy())))
"""


def copy_of_the_built_module(tmp_path):
    """The BuildFolder of a cache root in tmp_path holding a copy of this machine's verified build (compiled into
    the usual cache first where needed)."""
    module = pyboost_path.BuildFolder.in_cache().build()
    copy = tmp_path / "cache" / module.parent.name
    shutil.copytree(module.parent, copy, ignore=shutil.ignore_patterns(".lock", "build.lock"))
    return pyboost_path.BuildFolder(copy)


def pyboost_loss_in_a_process(root, tmp_path, prefix=()):
    """The summed loss of LOSS_SCRIPT's inputs, computed with MS_BCEWL_PYNATIVE_PATH=pyboost and the cache root
    `root`, in a process of its own started under the command `prefix`; returns the process's output."""
    environment = dict(os.environ, MS_BCEWL_CACHE_DIR=str(root), MS_BCEWL_PYNATIVE_PATH="pyboost")
    done = subprocess.run([*prefix, *R.PYTHON, "-c", LOSS_SCRIPT], capture_output=True, text=True,
                          timeout=900, env=environment, cwd=tmp_path, check=False)
    assert done.returncode == 0, f"exit code {done.returncode}: {done.stderr[-3000:]}"
    x, y = np.array([-1.5, 0.25, 3.0]), np.array([0.0, 1.0, 0.5])
    np.testing.assert_allclose(float(done.stdout.split()[-1]), R.loss(x, y, reduction="sum"), rtol=1e-6)
    return done.stdout


@pytest.mark.rebuilds_pyboost
def test_a_damaged_cached_module_is_built_again_not_loaded(tmp_path):
    """A truncated module in the cache killed every later process with SIGBUS (ninja took it for up to date), an
    empty one disabled pyboost for good; a module that does not match the record of its build is built again. Both
    fail the check against the record, which is all that tells them apart from a good build, so one process rebuilds."""
    folder = copy_of_the_built_module(tmp_path)
    whole = folder.module.read_bytes()
    for damaged in (b"", whole[:len(whole) // 2]):
        folder.module.write_bytes(damaged)
        assert folder.verified() is None, f"a module of {len(damaged)} of {len(whole)} bytes"
    pyboost_loss_in_a_process(folder.path.parent, tmp_path)
    assert folder.verified() == folder.module


def test_only_a_module_matching_its_record_is_verified(tmp_path):
    folder = pyboost_path.BuildFolder(tmp_path)
    folder.module.write_bytes(b"\x7fELF" + bytes(range(256)) * 8)
    assert folder.verified() is None  # no record: a build that did not finish
    folder.record.write_text(folder.fingerprint())
    assert folder.verified() == folder.module
    folder.module.write_bytes(b"\x7fELF" + bytes(range(255, -1, -1)) * 8)  # same size, other bytes
    assert folder.verified() is None


@pytest.mark.rebuilds_pyboost
def test_a_package_under_a_path_with_spaces_and_dollars_builds_its_module(tmp_path, monkeypatch):
    """The linker flags naming the package's library were not quoted: under a folder like '~/My Projects' the
    module never linked ('ld: cannot find with'). The paths of the source and the headers reached MindSpore's
    build.ninja without ninja's escape of '$': under 'env$ollar dir' the source was 'missing'."""
    parent = tmp_path / "env$ollar dir"
    shutil.copytree(Path(ms_bcewl.__file__).parent, parent / "ms_bcewl", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("PYTHONPATH", str(parent))
    output = pyboost_loss_in_a_process(tmp_path / "cache", tmp_path)
    assert str(parent / "ms_bcewl") in output, f"the copy was not the package imported: {output}"
    assert len(list((tmp_path / "cache").glob("*/ms_bcewl_pyboost.so"))) == 1


def test_a_cache_folder_ninja_cannot_name_is_refused_before_the_build(tmp_path):
    """MindSpore's builder writes the compiled source's path into build.ninja unescaped but for spaces."""
    for name in ("cache$1", "c:d"):
        with pytest.raises(RuntimeError, match=rf"cannot build in {re.escape(str(tmp_path / name))}: "
                                               r"MindSpore's builder"):
            pyboost_path.BuildFolder(tmp_path / name, "module").compile(lambda text: None)


@pytest.mark.rebuilds_pyboost
def test_a_cached_module_that_does_not_load_is_built_again(tmp_path):
    """A module matching its record that does not load (here: not a shared object at all) made each process warn
    that 'ms-bcewl build' tries again; build found it verified and compiled nothing, and info said 'module built'."""
    folder = copy_of_the_built_module(tmp_path)
    folder.module.write_bytes(b"not a shared object")
    folder.record.write_text(folder.fingerprint())
    assert folder.verified() == folder.module
    described = cli.pynative_path("auto", {"MS_BCEWL_CACHE_DIR": str(folder.path.parent)})
    assert f"module in {folder.path} does not load ('ms-bcewl build' builds it again)" in described, described
    done = subprocess.run([*R.PYTHON, "-m", "ms_bcewl", "build"], capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, MS_BCEWL_CACHE_DIR=str(folder.path.parent)), cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "does not load" in done.stderr and "compiling" in done.stderr, done.stderr[-3000:]
    assert folder.verified() == folder.module and folder.module.read_bytes().startswith(b"\x7fELF")
    assert "module built in" in cli.pynative_path("auto", {"MS_BCEWL_CACHE_DIR": str(folder.path.parent)})


def test_a_failed_build_reports_its_own_error_and_drops_its_objects(tmp_path, monkeypatch):
    """A second try in the same process cannot compile (MindSpore's builder skips a module it has built once) and
    reported only the module missing, hiding the compiler's error."""

    def failing_compile(folder, progress):
        (folder.path / "mindspore_entries.o").write_bytes(b"object")
        raise RuntimeError("ld: cannot find with: No such file or directory")

    monkeypatch.setattr(pyboost_path.BuildFolder, "compile", failing_compile)
    folder = pyboost_path.BuildFolder(tmp_path, "module")
    with pytest.raises(RuntimeError, match="cannot find with"):
        folder.rebuild(lambda text: None)
    assert not list(tmp_path.glob("*.o")), "the objects of a failed build would be linked again by the next one"
    assert folder.failure() == "ld: cannot find with: No such file or directory"


def read_only_prefix(root):
    """A command prefix that runs its command with `root` read-only: a read-only bind mount in a mount namespace of
    its own for root (whom file modes do not stop), the modes otherwise."""
    if os.geteuid() != 0:
        for path in [root, *root.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
        return ()
    script = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"'
    return ("unshare", "--mount", "sh", "-c", script, str(root))


def test_a_read_only_cache_holding_a_verified_build_is_used(tmp_path):
    """A cache this process may not write to (shared, or shipped in an image) disabled pyboost: loading took the
    build folder's lock for writing first."""
    root = copy_of_the_built_module(tmp_path).path.parent
    try:
        pyboost_loss_in_a_process(root, tmp_path, read_only_prefix(root))
    finally:
        for path in [root, *root.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)


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
        pyboost_path.BuildFolder(kept, "ms_x").remove_stale_builds(now=now)
    assert not stale.exists()
    assert all(folder.exists() for folder in (recent, kept, held, other_module, not_a_build))


def test_the_build_key_follows_the_source(tmp_path):
    include = tmp_path / "include"
    include.mkdir()
    (include / "api.h").write_text("int f();\n")
    source = tmp_path / "entries.cpp"
    source.write_text("int f() { return 1; }\n")
    def folder_name():
        return pyboost_path.BuildFolder.in_cache({}, "module", source, include).path.name

    first = folder_name()
    source.write_text("int f() { return 2; }\n")
    second = folder_name()
    (include / "api.h").write_text("int f(int);\n")
    assert len({first, second, folder_name()}) == 3


def test_launch_blocking_chooses_pyboost_and_matches_the_reference():
    """In a process of its own: launch_blocking() cannot be undone."""
    script = textwrap.dedent("""
        import mindspore as ms
        import numpy as np
        ms.runtime.launch_blocking()
        ms.set_context(mode=ms.PYNATIVE_MODE)
        import ms_bcewl
        from ms_bcewl._pyboost import PYBOOST
        x, y = np.array([[-1.5, 0.25, 3.0]], np.float32), np.array([[0.0, 1.0, 0.5]], np.float32)
        PYBOOST.wait()  # the first calls take the primitives while the module loads
        loss = ms_bcewl.binary_cross_entropy_with_logits(ms.Tensor(x), ms.Tensor(y), reduction="sum")
        print(PYBOOST.loss() is not None, repr(float(loss.asnumpy())))
    """)
    environment = {key: value for key, value in os.environ.items() if key != pyboost_path.PATH_VARIABLE}
    done = subprocess.run([*R.PYTHON, "-c", script], capture_output=True, text=True, timeout=600,
                          env=environment, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    chosen, loss = done.stdout.split()[-2:]
    x, y = np.array([-1.5, 0.25, 3.0]), np.array([0.0, 1.0, 0.5])
    assert chosen == "True"
    np.testing.assert_allclose(float(loss), R.loss(x, y, reduction="sum"), rtol=1e-6)


def output_with_auto(script, tmp_path):
    """The output of `script` run with MS_BCEWL_PYNATIVE_PATH unset, in a process of its own, its cache holding a copy
    of this machine's built module."""
    environment = {key: value for key, value in os.environ.items() if key != pyboost_path.PATH_VARIABLE}
    environment["MS_BCEWL_CACHE_DIR"] = str(copy_of_the_built_module(tmp_path).path.parent)
    done = subprocess.run([*R.PYTHON, "-c", script], capture_output=True, text=True, timeout=600, env=environment,
                          cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


CALL_KINDS_SCRIPT = """
import json, os
import mindspore as ms, numpy as np
ms.runtime.launch_blocking()
ms.set_context(mode=ms.PYNATIVE_MODE)
import ms_bcewl
from ms_bcewl._pyboost import PYBOOST
rng = np.random.default_rng(5)
x, y = (ms.Tensor(rng.normal(size=(8, 4)).astype(np.float32)) for _ in range(2))
weight = ms.Parameter(ms.Tensor(rng.uniform(size=(4,)).astype(np.float32)), name="weight")
module_calls, prepare = [], PYBOOST._prepare

def counting_prepare(folder, wait_for_compile):
    module_loss = prepare(folder, wait_for_compile)
    return lambda *arguments: module_calls.append(1) or module_loss(*arguments)

PYBOOST._prepare = counting_prepare

def loss(x, y, reduction):
    return ms_bcewl.binary_cross_entropy_with_logits(x, y, weight, None, reduction)

def flat(value):
    if isinstance(value, (tuple, list)):
        return b"".join(flat(item) for item in value)
    return value.asnumpy().tobytes()

kinds = {"grad mean": lambda: ms.grad(lambda x: loss(x, y, "mean"))(x),
         "grad none + sum": lambda: ms.grad(lambda x: loss(x, y, "none").sum())(x),
         "value_and_grad of a weight": lambda: ms.value_and_grad(lambda x: loss(x, y, "sum"), None, [weight])(x),
         "forward": lambda: loss(x, y, "mean")}
results = {}
for kind, call in kinds.items():  # the process's first loss is inside a gradient, no operator run before it
    calls_before = len(module_calls)
    got = flat(call())
    PYBOOST.choice = "aot"
    results[kind] = {"pyboost": len(module_calls) > calls_before, "same_bits": got == flat(call())}
    PYBOOST.choice = "auto"
threads = sorted(open(f"/proc/self/task/{task}/comm").read().strip() for task in os.listdir("/proc/self/task"))
print(json.dumps({"results": results, "threads": threads}))
"""


def test_auto_takes_pyboost_for_every_call_kind_without_mindsporess_bprop_queue(tmp_path):
    """Under launch_blocking() auto takes the pyboost module for forwards and gradients (mean, none + sum, a weight
    Parameter's), with the primitives' bits. Before, in a process whose first operator was the pyboost loss (inputs
    made from numpy arrays), MindSpore's PyNative executor was never set to launch_blocking(): each gradient went
    through its asynchronous bprop queue and threads, at 1e3 elements 3-30 ms against 0.2 ms. Which threads
    MindSpore started shows it: bprop_queue and backend_queue are started only for that hand-over."""
    report = json.loads(output_with_auto(CALL_KINDS_SCRIPT, tmp_path).splitlines()[-1])
    assert report["results"] == {kind: {"pyboost": True, "same_bits": True} for kind in report["results"]}
    assert len(report["results"]) == 4
    assert not {"bprop_queue", "backend_queue"} & set(report["threads"]), report["threads"]


LATE_BLOCKING_SCRIPT = """
import mindspore as ms, numpy as np
ms.set_context(mode=ms.PYNATIVE_MODE)
x, y = ms.Tensor(np.array([[-1.5, 0.25, 3.0]], np.float32)), ms.Tensor(np.array([[0.0, 1.0, 0.5]], np.float32))
(x + 1).asnumpy()  # an operator before launch_blocking()
ms.runtime.launch_blocking()
import ms_bcewl
from ms_bcewl._pyboost import PYBOOST
dx = ms.grad(lambda x: ms_bcewl.binary_cross_entropy_with_logits(x, y, reduction="sum"))(x)
print(PYBOOST.loss() is not None, " ".join(map(repr, dx.asnumpy().ravel().tolist())))
"""


def test_auto_keeps_the_primitives_where_launch_blocking_came_after_an_operator(tmp_path):
    """MindSpore's PyNative executor then keeps queueing operators to its threads, where a pyboost call cost 1.6 ms
    against the primitives' 0.08 ms forward (1e3 elements) and 3.4 against 1.8 ms for ms.grad: auto takes the
    primitives for the process, though its module is built."""
    took_pyboost, *dx = output_with_auto(LATE_BLOCKING_SCRIPT, tmp_path).split()
    assert took_pyboost == "False", dx
    x, y = np.array([-1.5, 0.25, 3.0]), np.array([0.0, 1.0, 0.5])
    np.testing.assert_allclose([float(value) for value in dx], R.grads(x, y, reduction="sum")[0], rtol=1e-6)


def test_gradients_given_with_a_reduced_loss_under_launch_blocking_match_the_primitives():
    """Under launch_blocking() the forward of a mean or summed loss whose input is tracked also computes the
    gradients for a gradOutput of 1, which the backward hands over when its gradOutput is exactly 1: value_and_grad
    of the loss and of 3 x the loss (the other path) for mean, sum and none, three dtypes, no weights, a per-class
    pos_weight, a mask weight with it; a sum of two losses; two calls in a row; SGD of a Dense layer and of a
    weight Parameter alone. Every case gives the primitives' bits (tests/support/blocking_gradients.py, its own
    process)."""
    done = run_support_module("blocking_gradients")
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
