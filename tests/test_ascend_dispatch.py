"""The Ascend dispatch (ms_bcewl/_ascend_kernels.py), tested on CPU without constructing any Ascend-only object.

Part one checks the plain data that the ops.Custom primitives are built from: aclnn names, reg_info, argument
order, reduction codes, output shape and dtype functions, dtype promotion and the broadcast rule (against the C++
tiling it mirrors). Part two runs the composed losses with stand-in kernels: MindSpore CPU ops that
honour the kernel contract of ascend_dispatch.Kernels (one input dtype, float32 loss with the limits at infinite
logits, dx scaled inside for mean), and compares losses and all four gradients with the float64 reference. What
part two cannot show: that the real kernels honour that contract on an NPU (the host simulation,
tests/test_ascendc_sim.py, runs the kernels' own source).
"""
import ctypes
import itertools
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from support import reference as ref

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OP_HOST = os.path.join(REPO, "ascendc", "op_host")
OP_KERNEL = os.path.join(REPO, "ascendc", "op_kernel")


@pytest.fixture(scope="module")
def dispatch():
    from ms_bcewl import _ascend_kernels as ascend_dispatch

    return ascend_dispatch


# ---- Part one: the plain data -------------------------------------------------------------------------------


def test_aclnn_names_are_the_op_packages_and_not_canns(dispatch):
    forward, grad = dispatch.forward_kernel_spec(), dispatch.grad_kernel_spec()
    assert forward.func == "aclnnMsBcewlSigmoidCrossEntropyWithLogits"
    assert grad.func == "aclnnMsBcewlSigmoidCrossEntropyWithLogitsGrad"
    for builtin in ("aclnnSigmoidCrossEntropyWithLogitsV2", "aclnnBinaryCrossEntropyWithLogits"):
        assert builtin not in (forward.func, grad.func)


def _op_types_and_sources():
    """{op type: OpDef source} of the op package (the OP_ADD(...) of each ascendc/op_host/*_def.cpp)."""
    sources = {}
    for name in sorted(os.listdir(OP_HOST)):
        if name.endswith("_def.cpp"):
            with open(os.path.join(OP_HOST, name)) as source:
                text = source.read()
            sources[re.search(r"OP_ADD\((\w+)\)", text).group(1)] = text
    return sources


def _snake_case(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def test_the_op_packages_op_types_are_ms_bcewls_own_and_match_the_aclnn_names(dispatch):
    op_types = _op_types_and_sources()
    assert sorted(op_types) == ["MsBcewlSigmoidCrossEntropyWithLogits", "MsBcewlSigmoidCrossEntropyWithLogitsGrad"]
    assert {dispatch.forward_kernel_spec().func, dispatch.grad_kernel_spec().func} == {
        "aclnn" + op_type for op_type in op_types}
    for op_type in op_types:  # the op project compiles op_kernel/<op type in snake case>.cpp, entry of that name
        entry = _snake_case(op_type)
        with open(os.path.join(OP_KERNEL, entry + ".cpp")) as kernel:
            assert re.search(r"void\s+%s\(" % entry, kernel.read())


def _opdef_inputs(source):
    """[(name, REQUIRED | OPTIONAL, dtype list)] of an OpDef source, in order."""
    return re.findall(r'NdTensor\(this->Input\("(\w+)"\), (\w+), ([^)]*)\)', source)


def test_the_opdefs_inputs_are_the_specs_and_take_no_attribute(dispatch):
    sources = _op_types_and_sources()
    for spec in (dispatch.forward_kernel_spec(), dispatch.grad_kernel_spec()):
        source = sources[spec.func[len("aclnn"):]]
        inputs = _opdef_inputs(source)
        assert [(name, presence.lower()) for name, presence, _ in inputs] == list(spec.inputs)
        assert "Attr(" not in source
        float32_inputs = tuple(name for name, _, dtypes in inputs
                               if re.fullmatch(r"\{ge::DT_FLOAT(, ge::DT_FLOAT)*\}", dtypes))
        assert float32_inputs == spec.float32_inputs


def test_reg_info_op_name_is_the_func_and_targets_ascend(dispatch):
    for spec in (dispatch.forward_kernel_spec(), dispatch.grad_kernel_spec()):
        info = dispatch.reg_info(spec)
        assert info["op_name"] == spec.func
        assert info["target"] == "Ascend"


def test_forward_inputs_follow_the_aclnn_tensor_argument_order(dispatch):
    info = dispatch.reg_info(dispatch.forward_kernel_spec())
    assert [(i["index"], i["name"], i["paramType"]) for i in info["inputs"]] == [
        (0, "predict", "required"), (1, "target", "required"), (2, "weight", "optional"),
        (3, "pos_weight", "optional")]
    assert [(o["index"], o["name"]) for o in info["outputs"]] == [(0, "loss")]
    assert info["attr"] == []


def test_grad_inputs_follow_the_kernel_order_and_take_no_scalar(dispatch):
    info = dispatch.reg_info(dispatch.grad_kernel_spec())
    assert [i["name"] for i in info["inputs"]] == ["predict", "target", "dout", "scale", "weight", "pos_weight"]
    assert [i["index"] for i in info["inputs"]] == [0, 1, 2, 3, 4, 5]
    assert info["attr"] == []
    assert [o["name"] for o in info["outputs"]] == ["gradient"]


def test_dtype_formats_give_every_input_one_dtype(dispatch):
    forward = dispatch.reg_info(dispatch.forward_kernel_spec())["dtype_format"]
    grad = dispatch.reg_info(dispatch.grad_kernel_spec())["dtype_format"]
    assert [[d for d, _ in row] for row in forward] == [
        ["float16"] * 4 + ["float32"], ["float32"] * 5, ["bfloat16"] * 4 + ["float32"]]
    assert [[d for d, _ in row] for row in grad] == [
        ["float16"] * 3 + ["float32"] + ["float16"] * 3, ["float32"] * 7,
        ["bfloat16"] * 3 + ["float32"] + ["bfloat16"] * 3]
    assert {f for row in forward + grad for _, f in row} == {"DefaultFormat"}


def test_output_shape_and_dtype_functions(dispatch):
    import mindspore as ms

    assert dispatch.kernel_output_shape([4, 3], [4, 3], [3], []) == [4, 3]
    assert dispatch.kernel_output_shape([4, 3], [4, 3], [], [4, 3], [], 1) == [4, 3]
    forward_dtype = dispatch.kernel_output_dtype(dispatch.forward_kernel_spec())
    grad_dtype = dispatch.kernel_output_dtype(dispatch.grad_kernel_spec())
    assert forward_dtype(ms.float16, ms.float16, ms.float16, ms.float16) == ms.float32
    assert grad_dtype(ms.bfloat16, ms.bfloat16, ms.bfloat16, ms.float32, ms.bfloat16, ms.bfloat16) == ms.bfloat16


def test_promoted_dtype(dispatch):
    import mindspore as ms

    assert dispatch.promoted_dtype(ms.float16, ms.float16, ms.float16, ms.float16) == ms.float16
    assert dispatch.promoted_dtype(ms.bfloat16, ms.bfloat16, ms.bfloat16, ms.bfloat16) == ms.bfloat16
    assert dispatch.promoted_dtype(ms.float16, ms.bfloat16, ms.float16, ms.float16) == ms.float32
    assert dispatch.promoted_dtype(ms.float16, ms.float16, ms.float32, ms.float16) == ms.float32


@pytest.mark.parametrize("shape, input_shape, follows", [
    ((4, 3), (4, 3), True), ((3,), (4, 3), True), ((1, 3), (4, 3), True), ((4, 1), (4, 3), True),
    ((), (4, 3), True), ((1,), (4, 3), True), ((3, 1, 1), (2, 3, 4, 5), True), ((4, 5), (2, 3, 4, 5), True),
    ((1, 3, 1, 5), (2, 3, 4, 5), False), ((3, 1, 5), (2, 3, 4, 5), False), ((2, 1, 1, 5), (2, 3, 4, 5), False),
    ((2, 1, 3), (2, 1, 3), True), ((2, 1, 1), (2, 1, 3), True), ((1, 2, 1), (2, 1, 2, 1, 2, 1, 2, 1), True),
    ((3,), (-1, 3), False), ((3,), (None, 3), False), ((None,), (4, 3), False), ((3,), None, False),
    (None, (4, 3), False)])
def test_kernel_follows_broadcast(dispatch, shape, input_shape, follows):
    assert dispatch.kernel_follows_broadcast(shape, input_shape) is follows


def _describe_broadcast_library(tmp_path):
    """bcewl::DescribeBroadcast of ascendc/op_host, compiled with a C wrapper, or None without a compiler."""
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        return None
    wrapper = tmp_path / "describe.cpp"
    wrapper.write_text(
        '#include "bcewl_tiling.h"\n'
        'extern "C" int describe(const long long* out, int out_rank, const long long* op, int op_rank) {\n'
        '  bcewl::OperandRequest request;\n'
        '  return bcewl::DescribeBroadcast(std::vector<int64_t>(out, out + out_rank),\n'
        '                                  std::vector<int64_t>(op, op + op_rank), &request);\n'
        '}\n')
    library = tmp_path / "libdescribe.so"
    subprocess.run([compiler, "-std=c++17", "-O0", "-shared", "-fPIC", f"-I{OP_HOST}", f"-I{OP_KERNEL}", str(wrapper),
                    os.path.join(OP_HOST, "bcewl_tiling.cpp"), "-o",
                    str(library)], check=True)
    return ctypes.CDLL(str(library))


def _broadcastable_operand_shapes(input_shape):
    """Every shape that broadcasts to input_shape without enlarging it (each dim kept or 1, leading dims dropped)."""
    for lead in range(len(input_shape) + 1):
        tail = input_shape[lead:]
        for keep in itertools.product((True, False), repeat=len(tail)):
            yield tuple(dim if kept else 1 for dim, kept in zip(tail, keep))


def test_kernel_follows_broadcast_agrees_with_the_cpp_tiling(dispatch, tmp_path):
    library = _describe_broadcast_library(tmp_path)
    if library is None:
        pytest.skip("a C++ compiler is needed to build bcewl::DescribeBroadcast")
    def array(dims):
        return (ctypes.c_longlong * max(len(dims), 1))(*dims)
    for input_shape in [(2, 3, 4, 5), (3, 1, 4), (1, 2, 1, 3, 1), (6,), ()]:
        for shape in _broadcastable_operand_shapes(input_shape):
            expected = bool(library.describe(array(input_shape), len(input_shape), array(shape), len(shape)))
            assert dispatch.kernel_follows_broadcast(shape, input_shape) is expected, (shape, input_shape)


def _vendor(root, files):
    """A vendor directory holding `files` (paths relative to it), empty files."""
    for path in files:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("")
    return root


def _op_package_files(dispatch):
    return [dispatch.OP_PACKAGE_LIBRARY] + [dispatch.aclnn_header(spec.func) for spec in
                                            (dispatch.forward_kernel_spec(), dispatch.grad_kernel_spec())]


def test_aclnn_header_names_are_the_ones_mindspore_reads(dispatch):
    from mindspore.ops.operations._custom_ops_utils import CustomInfoGenerator

    for spec in (dispatch.forward_kernel_spec(), dispatch.grad_kernel_spec()):
        expected = CustomInfoGenerator._get_aclnn_api_file_name(spec.func)  # pylint: disable=protected-access
        assert dispatch.aclnn_header(spec.func) == os.path.join("op_api", "include", expected)
    assert dispatch.aclnn_header(dispatch.forward_kernel_spec().func).endswith(
        "aclnn_ms_bcewl_sigmoid_cross_entropy_with_logits.h")


def test_op_package_is_found_on_the_custom_opp_path(dispatch, tmp_path):
    other = _vendor(tmp_path / "other", [dispatch.OP_PACKAGE_LIBRARY])  # someone else's package comes first
    ours = _vendor(tmp_path / "ms_bcewl", _op_package_files(dispatch))
    environ = {"ASCEND_CUSTOM_OPP_PATH": f"{other}:{ours}:"}
    assert dispatch.find_op_package(environ) == str(ours)
    assert dispatch.require_op_package(environ) == str(ours)


def test_op_package_is_found_among_the_installed_vendors(dispatch, tmp_path):
    opp = tmp_path / "opp"
    ours = _vendor(opp / "vendors" / "ms_bcewl", _op_package_files(dispatch))
    (opp / "vendors" / "config.ini").write_text("load_priority=customize, ms_bcewl\n")
    assert dispatch.find_op_package({"ASCEND_OPP_PATH": str(opp)}) == str(ours)


@pytest.mark.parametrize("missing", [0, 1, 2])
def test_an_incomplete_op_package_is_not_found(dispatch, tmp_path, missing):
    files = _op_package_files(dispatch)
    vendor = _vendor(tmp_path / "ms_bcewl", files[:missing] + files[missing + 1:])
    assert dispatch.find_op_package({"ASCEND_CUSTOM_OPP_PATH": str(vendor)}) is None


def test_a_missing_op_package_names_the_variable_and_the_install_step(dispatch, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ImportError) as error:
        dispatch.require_op_package({"ASCEND_CUSTOM_OPP_PATH": str(empty)})
    message = str(error.value)
    assert isinstance(error.value, dispatch.OpPackageNotFound)
    for needed in ("ASCEND_CUSTOM_OPP_PATH", str(empty), "ms_bcewl_op_package.run", "MS_BCEWL_BUILD_ASCEND=1",
                   "ascendc/README.md", "libcust_opapi.so"):
        assert needed in message


def test_aclnn_kernels_refuse_to_build_without_the_op_package(dispatch, monkeypatch):
    monkeypatch.delenv("ASCEND_CUSTOM_OPP_PATH", raising=False)
    monkeypatch.delenv("ASCEND_OPP_PATH", raising=False)
    with pytest.raises(dispatch.OpPackageNotFound, match="ASCEND_CUSTOM_OPP_PATH is unset"):
        dispatch.aclnn_kernels()


def _library_with(tmp_path, functions):
    """A shared library exporting `functions` (C, no arguments), or None without a compiler."""
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("a C++ compiler is needed to build a stand-in op package library")
    source = tmp_path / "opapi.cpp"
    source.write_text("".join(f'extern "C" int {name}() {{ return 0; }}\n' for name in functions))
    library = tmp_path / "libcust_opapi.so"
    subprocess.run([compiler, "-shared", "-fPIC", str(source), "-o", str(library)], check=True)
    return library


def _usable_vendor(dispatch, tmp_path, functions, socs=("ascend910b",)):
    """A vendor directory whose library exports `functions` and whose op info covers `socs`."""
    vendor = _vendor(tmp_path / "ms_bcewl", _op_package_files(dispatch) + [
        os.path.join("op_impl", "ai_core", "tbe", "config", soc, f"aic-{soc}-ops-info.json") for soc in socs])
    shutil.copy(_library_with(tmp_path, functions), vendor / dispatch.OP_PACKAGE_LIBRARY)
    return vendor


OPP = {"ASCEND_OPP_PATH": "/usr/local/Ascend/ascend-toolkit/latest/opp"}


def test_a_complete_op_package_for_the_devices_soc_is_usable(dispatch, tmp_path):
    vendor = _usable_vendor(dispatch, tmp_path, dispatch.aclnn_functions(), socs=("ascend910b", "ascend910_93"))
    assert dispatch.op_package_socs(str(vendor)) == ["ascend910_93", "ascend910b"]
    for soc in ("ascend910b", "ascend910_93", ""):
        assert dispatch.op_package_problem(str(vendor), OPP, soc) is None
    environ = dict(OPP, ASCEND_CUSTOM_OPP_PATH=str(vendor))
    assert dispatch.require_usable_op_package(environ, "ascend910b") == str(vendor)


def test_an_op_package_mindspore_could_not_use_is_refused_with_what_to_do(dispatch, tmp_path):
    functions = dispatch.aclnn_functions()
    assert functions == ["aclnnMsBcewlSigmoidCrossEntropyWithLogitsGetWorkspaceSize",
                         "aclnnMsBcewlSigmoidCrossEntropyWithLogits",
                         "aclnnMsBcewlSigmoidCrossEntropyWithLogitsGradGetWorkspaceSize",
                         "aclnnMsBcewlSigmoidCrossEntropyWithLogitsGrad"]
    vendor = str(_usable_vendor(dispatch, tmp_path, functions[:1]))
    assert "ASCEND_OPP_PATH is unset" in dispatch.op_package_problem(vendor, {}, "ascend910b")
    problem = dispatch.op_package_problem(vendor, OPP, "ascend910b")
    assert problem.startswith(os.path.join(vendor, dispatch.OP_PACKAGE_LIBRARY) + " lacks")
    assert ", ".join(functions[1:]) in problem and "Rebuild" in problem
    with pytest.raises(dispatch.OpPackageUnusable, match="ms_bcewl cannot use its CANN op package") as error:
        dispatch.require_usable_op_package(dict(OPP, ASCEND_CUSTOM_OPP_PATH=vendor), "ascend910b")
    assert isinstance(error.value, ImportError)

    (tmp_path / "other").mkdir()
    other = _usable_vendor(dispatch, tmp_path / "other", functions)
    assert "holds kernels for ascend910b, and this device is ascend310p" in dispatch.op_package_problem(
        str(other), OPP, "ascend310p")
    broken = _vendor(tmp_path / "broken", _op_package_files(dispatch))  # an empty file as the library
    assert "does not load" in dispatch.op_package_problem(str(broken), OPP, "ascend910b")


def test_the_socs_the_dispatch_names_are_the_op_packages(dispatch):
    with open(os.path.join(OP_HOST, "bcewl_cann_host.h")) as header:
        socs = re.search(r"kSocVersions\[\] = \{([^}]*)\}", header.read()).group(1)
    assert tuple(re.findall(r'"(\w+)"', socs)) == dispatch.SOC_VERSIONS


@pytest.mark.parametrize("previous", [None, "relative_cache", "/an/absolute/cache"])
def test_callbacks_are_compiled_to_an_absolute_path(dispatch, tmp_path, monkeypatch, previous):
    from mindspore.ops.operations import custom_ops

    monkeypatch.chdir(tmp_path)
    if previous is None:
        monkeypatch.delenv(dispatch.COMPILER_CACHE_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(dispatch.COMPILER_CACHE_VARIABLE, previous)
    with dispatch.callbacks_compiled_to_an_absolute_path(os.environ):
        path = custom_ops._get_cache_path()  # pylint: disable=protected-access
    expected = os.path.join(str(tmp_path), previous or "custom_kernel_meta") if previous != "/an/absolute/cache" \
        else previous
    assert os.path.isabs(path) and os.path.normpath(path) == os.path.normpath(expected)
    assert os.environ.get(dispatch.COMPILER_CACHE_VARIABLE) == previous


# ---- Part two: the composition, with stand-in kernels ---------------------------------------------------------


def _stand_in_kernels(dispatch, calls=None):
    """Kernels.forward / grad as MindSpore CPU ops. Given a list (PyNative only), each call records
    (name, dtypes, shapes, attrs) in it."""
    import mindspore as ms
    from mindspore import nn, ops

    f32 = ms.float32
    recording = calls is not None

    def record(name, tensors):
        calls.append((name, tuple(t.dtype for t in tensors), tuple(tuple(t.shape) for t in tensors),
                      tuple(t.asnumpy() for t in tensors)))

    zeros_like = ops.ZerosLike()  # a primitive: ops.zeros_like does not compile in graph mode here

    def zero_limit_product(c, v):
        """c * v, but 0 where c == 0 meets an infinite v (the kernel's ProductWithZeroLimit)."""
        return ops.select(ops.logical_and(c == 0, ops.isinf(v)), zeros_like(v), c * v)

    class Forward(nn.Cell):
        """The kernel's own formula and limits (ascendc/op_kernel/ms_bcewl_sigmoid_cross_entropy_with_logits.cpp)."""

        def construct(self, x, y, w, p):
            x, y, w, p = ops.cast(x, f32), ops.cast(y, f32), ops.cast(w, f32), ops.cast(p, f32)
            softplus = ops.log1p(ops.exp(-ops.abs(x)))
            loss = (zero_limit_product(1 - y, ops.maximum(x, 0.0)) - zero_limit_product(p * y, ops.minimum(x, 0.0))
                    + (1 + (p - 1) * y) * softplus)
            return zero_limit_product(w, loss)

    class Grad(nn.Cell):
        def construct(self, x, y, dout, scale, w, p):
            x32, y32, g, w32, p32 = (ops.cast(t, f32) for t in (x, y, dout, w, p))
            dx = w32 * ((p32 * y32 + 1 - y32) * ops.sigmoid(x32) - p32 * y32) * g * scale
            return ops.cast(dx, x.dtype)

    if not recording:
        return dispatch.Kernels(Forward(), Grad())

    # Recording in subclasses, and Forward's casts written out: MindSpore 2.7.0's graph compiler failed ("The
    # pointer[input] is null") on Forward with an untaken branch to a Python function or a cast comprehension.
    class RecordingForward(Forward):
        def construct(self, x, y, w, p):
            record("forward", (x, y, w, p))
            return super().construct(x, y, w, p)

    class RecordingGrad(Grad):
        def construct(self, x, y, dout, scale, w, p):
            record("grad", (x, y, dout, scale, w, p))
            return super().construct(x, y, dout, scale, w, p)

    return dispatch.Kernels(RecordingForward(), RecordingGrad())


@pytest.fixture
def losses(dispatch, pynative):
    calls = []
    return dispatch.forward_table(_stand_in_kernels(dispatch, calls)), calls


def _inputs(case):
    """The four inputs as the dispatch takes them: a 0-d 1 in x's dtype for an absent weight or pos_weight."""
    return [ref.to_tensor(np.ones(()) if a is None else a, case.dtypes[0] if a is None else d)
            for a, d in zip(case.args, case.dtypes)]


def _run(table, case, g):
    """(loss, gradients of Σ(g · loss) for the present arguments) from the Ascend composition."""
    import mindspore as ms

    loss_fn = table[(case.w is not None, case.p is not None, case.reduction)]
    inputs = _inputs(case)
    gt = ref.to_tensor(g, "float32")

    def objective(*args):
        return (loss_fn(*args).astype(ms.float32) * gt).sum()

    grads = ms.grad(objective, grad_position=ref.positions(case))(*inputs)
    return loss_fn(*inputs), grads if isinstance(grads, tuple) else (grads,)


@pytest.mark.parametrize("reduction", ref.REDUCTIONS)
@pytest.mark.parametrize("variant", sorted(ref.VARIANTS))
@pytest.mark.parametrize("combo", ["fp32", "fp16", "mixed16", "mixedbf"])
def test_loss_and_gradients_match_the_reference(losses, reduction, variant, combo):
    table, _ = losses
    case = ref.matrix_case(reduction, variant, combo)
    g = ref.upstream(case)
    loss, grads = _run(table, case, g)
    ref.check_loss(case, loss, msg=f"{variant}/{combo}/{reduction}")
    ref.check_grads(case, g, grads, msg=f"{variant}/{combo}/{reduction}")


def test_kernels_get_one_promoted_dtype_and_a_float32_scale_of_one_over_numel_for_mean(losses):
    import mindspore as ms

    table, calls = losses
    case = ref.matrix_case("mean", "both", "mixed16")
    _run(table, case, ref.upstream(case))
    forward = [c for c in calls if c[0] == "forward"]
    grad = [c for c in calls if c[0] == "grad"]
    assert forward and all(set(dtypes) == {ms.float32} for _, dtypes, _, _ in forward)
    assert len(grad) == 1
    _, dtypes, shapes, values = grad[0]
    assert set(dtypes) == {ms.float32}
    assert shapes[2] == () and shapes[3] == ()  # a 0-d dout and scale; the kernel applies the scale
    assert values[3] == np.float32(1.0 / case.x.size)


@pytest.mark.parametrize("reduction", ["none", "sum"])
def test_grad_kernel_scale_is_one_and_dout_has_the_reductions_shape(losses, reduction):
    import mindspore as ms

    table, calls = losses
    case = ref.matrix_case(reduction, "plain", "fp16")
    _run(table, case, ref.upstream(case))
    (_, dtypes, shapes, values), = [c for c in calls if c[0] == "grad"]
    assert dtypes[3] == ms.float32 and shapes[3] == () and values[3] == 1.0
    assert shapes[2] == (case.x.shape if reduction == "none" else ())


def test_absent_weights_reach_the_kernel_as_0d_ones(losses):
    table, calls = losses
    case = ref.matrix_case("sum", "plain", "fp16")
    _run(table, case, ref.upstream(case))
    _, _, shapes, _ = [c for c in calls if c[0] == "forward"][0]
    assert shapes[2:] == ((), ())


@pytest.mark.parametrize("w_shape, kernel_shape", [((3, 1, 1), (3, 1, 1)), ((5,), (5,)),
                                                    ((1, 3, 1, 5), (2, 3, 4, 5))])
def test_weights_are_expanded_only_where_the_tiling_cannot_follow(losses, w_shape, kernel_shape):
    table, calls = losses
    case = ref.make_case((2, 3, 4, 5), w_shape, None, "mean")
    loss, grads = _run(table, case, ref.upstream(case))
    ref.check_loss(case, loss)
    ref.check_grads(case, ref.upstream(case), grads)
    _, _, shapes, _ = [c for c in calls if c[0] == "forward"][0]
    assert shapes[2] == kernel_shape


def test_infinite_logits_give_the_limits(losses):
    table, _ = losses
    inf, nan = np.inf, np.nan
    case = ref.case_from([inf, -inf, inf, -inf, nan, 1.0], [1.0, 0.0, 0.0, 1.0, 0.5, nan], reduction="none")
    loss, _ = _run(table, case, np.ones(6))
    np.testing.assert_array_equal(ref.to_f64(loss), [0.0, 0.0, inf, inf, nan, nan])


def test_a_nan_weight_at_an_infinite_limit_stays_nan(losses):
    table, _ = losses
    case = ref.case_from([np.inf, np.inf], [1.0, 1.0], w=[np.nan, 2.0], reduction="none")
    loss, _ = _run(table, case, np.ones(2))
    np.testing.assert_array_equal(ref.to_f64(loss), [np.nan, 0.0])


def test_gradients_at_infinite_logits_take_the_limits_where_a_weight_is_zero(losses):
    """dy and dp where an infinite logit meets a zero weight or pos_weight: 0 * inf has the limit 0 (contract §9),
    as the host library gives; the composition gave NaN."""
    table, _ = losses
    case = ref.case_from([-np.inf, np.inf, -np.inf], [0.5, 0.5, 0.5], w=[1.0, 0.0, 0.0], p=[0.0, 1.0, 1.0],
                         reduction="none")
    _, grads = _run(table, case, np.ones(3))
    np.testing.assert_array_equal(ref.to_f64(grads[1]), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(ref.to_f64(grads[3]), [np.inf, 0.0, 0.0])  # w y sp(-x)
    host = ref.run_grads(case, np.ones(3))
    for got, expected in ((grads[1], host[1]), (grads[3], host[3])):
        np.testing.assert_array_equal(ref.to_f64(got), ref.to_f64(expected))


@pytest.mark.parametrize("reduction, expected", [("none", np.zeros((0, 3))), ("mean", np.nan), ("sum", 0.0)])
def test_empty_input_launches_nothing(losses, reduction, expected):
    table, calls = losses
    case = ref.make_case((0, 3), (3,), (3,), reduction)
    loss, grads = _run(table, case, ref.upstream(case))
    assert not calls
    np.testing.assert_array_equal(ref.to_f64(loss), expected)
    assert [tuple(t.shape) for t in grads] == [(0, 3), (0, 3), (3,), (3,)]
    np.testing.assert_array_equal(ref.to_f64(grads[2]), np.zeros(3))


@pytest.mark.parametrize("mode", ["graph"], indirect=True)
def test_the_composition_compiles_in_graph_mode(dispatch, mode):
    import mindspore as ms

    table = dispatch.forward_table(_stand_in_kernels(dispatch))
    case = ref.matrix_case("mean", "both", "fp32")
    loss_fn = table[(True, True, "mean")]

    class Net(ms.nn.Cell):
        def construct(self, x, y, w, p):
            return loss_fn(x, y, w, p)

    inputs = _inputs(case)
    ref.check_loss(case, Net()(*inputs))
    ref.check_grads(case, None, ms.grad(Net(), grad_position=(0, 1, 2, 3))(*inputs))


def _dynamic_spec(letter, shape):
    """A set_inputs placeholder: d unknown dims, r unknown rank."""
    import mindspore as ms

    return ms.Tensor(shape=[None] * len(shape) if letter == "d" else None, dtype=ms.float32)


# (variant, reduction, letters of x, y, w, p): unknown dims and unknown rank on every argument and in mixes.
DYNAMIC_CASES = [("plain", "mean", "dd"), ("plain", "none", "rr"), ("weight", "sum", "ddd"),
                 ("pos_weight", "mean", "rdr"), ("both", "none", "dddd"), ("both", "mean", "rrrr"),
                 ("both", "sum", "drdr")]


@pytest.mark.parametrize("mode", ["graph"], indirect=True)
@pytest.mark.parametrize("variant, reduction, letters", DYNAMIC_CASES)
def test_the_composition_compiles_and_runs_with_unknown_dims_and_rank(dispatch, mode, variant, reduction, letters):
    import mindspore as ms

    has_weight, has_pos_weight = variant in ("weight", "both"), variant in ("pos_weight", "both")
    loss_fn = dispatch.forward_table(_stand_in_kernels(dispatch))[(has_weight, has_pos_weight, reduction)]
    case = ref.matrix_case(reduction, variant, "fp32")
    inputs = _inputs(case)

    class Net(ms.nn.Cell):
        def construct(self, *args):
            return loss_fn(*args)

    net = Net()
    letters = iter(letters)  # those of the present arguments; the unit of an absent one stays 0-d
    net.set_inputs(*(_dynamic_spec(next(letters), tuple(t.shape)) if a is not None else t
                     for a, t in zip(case.args, inputs)))
    ref.check_loss(case, net(*inputs))
    grad_net = ms.grad(net, grad_position=ref.positions(case))
    grads = grad_net(*inputs)
    ref.check_grads(case, None, grads if isinstance(grads, tuple) else (grads,))


@pytest.mark.parametrize("mode", ["graph"], indirect=True)
@pytest.mark.parametrize("reduction, expected", [("none", np.zeros((0, 3))), ("mean", np.nan), ("sum", 0.0)])
def test_an_empty_input_of_unknown_shape_goes_through_the_kernels(dispatch, mode, reduction, expected):
    import mindspore as ms

    loss_fn = dispatch.forward_table(_stand_in_kernels(dispatch))[(True, True, reduction)]
    case = ref.make_case((0, 3), (3,), (3,), reduction)
    inputs = _inputs(case)

    class Net(ms.nn.Cell):
        def construct(self, *args):
            return loss_fn(*args)

    net = Net()
    net.set_inputs(*(_dynamic_spec("d", tuple(t.shape)) for t in inputs))
    np.testing.assert_array_equal(ref.to_f64(net(*inputs)), expected)
    grads = ms.grad(net, grad_position=(0, 1, 2, 3))(*inputs)
    assert [tuple(t.shape) for t in grads] == [(0, 3), (0, 3), (3,), (3,)]
    np.testing.assert_array_equal(ref.to_f64(grads[2]), np.zeros(3))


# ---- Part three: second order, through opaque kernels with the dispatch's bprops ---------------------------------


def _numpy_forward(x, y, w, p):
    """The forward kernel's contract in numpy: float32 loss with the limits at infinite logits."""
    x, y, w, p = (np.asarray(a, np.float32) for a in (x, y, w, p))

    def zero_limit_product(c, v):
        return np.where((c == 0) & np.isinf(v), np.float32(0.0), c * v)

    with np.errstate(all="ignore"):
        softplus = np.log1p(np.exp(-np.abs(x)))
        loss = (zero_limit_product(1 - y, np.maximum(x, 0)) - zero_limit_product(p * y, np.minimum(x, 0))
                + (1 + (p - 1) * y) * softplus)
        return np.broadcast_to(zero_limit_product(w, loss), x.shape).astype(np.float32)


def _numpy_grad(x, y, dout, scale, w, p):
    """The gradient kernel's contract in numpy: dx in x's dtype."""
    xf, yf, g, wf, pf = (np.asarray(a, np.float32) for a in (x, y, dout, w, p))
    with np.errstate(all="ignore"):
        sigmoid = 1 / (1 + np.exp(-xf))
        dx = wf * ((pf * yf + 1 - yf) * sigmoid - pf * yf) * g * np.float32(scale)
    return np.broadcast_to(dx, xf.shape).astype(x.dtype)


def _opaque_kernels(dispatch):
    """The kernels as pyfunc ops.Custom primitives, which MindSpore differentiates only through the bprops the
    dispatch gives the op package's kernels."""
    from mindspore import ops

    forward_spec, grad_spec = dispatch.forward_kernel_spec(), dispatch.grad_kernel_spec()
    forward = ops.Custom(_numpy_forward, out_shape=dispatch.kernel_output_shape,
                         out_dtype=dispatch.kernel_output_dtype(forward_spec), func_type="pyfunc",
                         bprop=dispatch.forward_kernel_bprop)
    grad = ops.Custom(_numpy_grad, out_shape=dispatch.kernel_output_shape,
                      out_dtype=dispatch.kernel_output_dtype(grad_spec), func_type="pyfunc",
                      bprop=dispatch.grad_kernel_bprop)
    return dispatch.Kernels(forward, grad)


def _ascend_second_order(dispatch, case, g, cotangents):
    """The gradient of sum_k sum(c_k * d_k), d_k the Ascend composition's gradients of sum(g * loss), with respect
    to the present arguments and g (as tests/test_second_order.py's run_second_order, on the composition)."""
    import mindspore as ms
    from mindspore import nn

    loss_fn = dispatch.forward_table(_opaque_kernels(dispatch))[(case.w is not None, case.p is not None,
                                                                 case.reduction)]
    positions = ref.positions(case)

    class LossWithSens(nn.Cell):
        def construct(self, x, y, w, p, gt):
            return (loss_fn(x, y, w, p).astype(ms.float32) * gt).sum()

    class Contracted(nn.Cell):
        def __init__(self):
            super().__init__()
            self.loss = LossWithSens()

        def construct(self, x, y, w, p, gt, cotangent_tensors):
            grads = ms.grad(self.loss, grad_position=positions)(x, y, w, p, gt)
            grads = grads if isinstance(grads, tuple) else (grads,)
            total = 0.0
            for k in range(len(positions)):
                total = total + (grads[k].astype(ms.float32) * cotangent_tensors[k]).sum()
            return total

    x, y, w, p = _inputs(case)
    out = ms.grad(Contracted(), grad_position=(0, 1, 2, 3, 4))(
        x, y, w, p, ref.to_tensor(g, case.out_dtype), tuple(ref.to_tensor(c) for c in cotangents))
    return [ref.to_f64(t) for t, a in zip(out, case.args + (g,)) if a is not None]


@pytest.mark.parametrize("reduction", ref.REDUCTIONS)
@pytest.mark.parametrize("variant", sorted(ref.VARIANTS))
def test_second_order_gradients_go_through_the_kernels_bprops(dispatch, pynative, variant, reduction):
    """The contract's second-order gradients (§4), here where the kernels are opaque: the dispatch's bprops of the
    forward and gradient kernels, checked against float64 finite differences of the first-order gradients."""
    import test_second_order as second

    case, g, cotangents = second.second_order_case(variant, reduction)
    got = _ascend_second_order(dispatch, case, g, cotangents)
    expected = second.finite_differences(second.contraction(case, cotangents), list(case.args) + [g])
    assert len(got) == len(expected)
    second.assert_second_order(got, expected, 2e-4, 2e-6, f"{variant}/{reduction}")


@pytest.mark.parametrize("mode", ["graph"], indirect=True)
def test_second_order_gradients_through_the_kernels_compile_in_graph_mode(dispatch, mode):
    import test_second_order as second

    case, g, cotangents = second.second_order_case("both", "mean")
    got = _ascend_second_order(dispatch, case, g, cotangents)
    expected = second.finite_differences(second.contraction(case, cotangents), list(case.args) + [g])
    second.assert_second_order(got, expected, 2e-4, 2e-6, "both/mean in graph mode")
