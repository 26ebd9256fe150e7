"""The Ascend backend of ms_bcewl._primitives: the CANN op package's two kernels, composed with MindSpore ops.

primitives.GRAPH_FORWARD and PYNATIVE_FORWARD hold these losses instead of the host library's AOT primitives when
``mindspore.get_context("device_target") == "Ascend"`` at import time (same keys, same call signatures).

Why the pipeline is composed here and not by one aclnn call per loss: MindSpore's custom aclnn kernel hands the
executor that phase 1 returns to CANN itself (``aclSetAclOpExecutorRepeatable``, ``aclDestroyAclOpExecutor``,
tensor address updates for its executor cache). Only aclnn functions that CANN generated return such
executors, so the ``ops.Custom`` primitives are the op package's generated functions (the kernel of reduction
none, with the ±inf limits, and the dx kernel, ascendc/README.md), and CANN's pipeline around them -- cast of
every input to one promoted dtype, the kernel, mean / sum over all dims, a cast to the output dtype -- is made of
MindSpore ops, which run as CANN's own aclnn ops on Ascend.

Each loss is a Cell with its own bprop: dx comes from the grad kernel, which takes a 0-d dout for mean and sum and
the reduction's factor as a 0-d float32 tensor `scale` (1/numel for mean, else 1), applied in float32 inside the
kernel; dy, dw and dp are composed in float32. The kernels' own ops.Custom bprops (forward_kernel_bprop,
grad_kernel_bprop) are MindSpore operations, so that second and higher orders can differentiate those bprops. An
absent weight is passed as a 0-d one, which the kernels skip. The kernels take tensors only: MindSpore 2.10 sends
every Ascend C ``ops.Custom`` call in PyNative through ``pyboost_custom_ext``, which converts each argument as a
tensor, and in graph mode may turn a constant scalar input into an attribute (``CustomOpConstInputToAttr``).

An Ascend device without the op package fails at import with OpPackageNotFound (``find_op_package``), which names
ASCEND_CUSTOM_OPP_PATH and the install step, instead of MindSpore's aclop fallback for an op called ``aclnnMsBcewl...``;
one MindSpore could not use (ASCEND_OPP_PATH unset, a library that does not load or lacks an aclnn function, no
kernels for the device's SoC) fails with OpPackageUnusable saying what to do (``op_package_problem``).

Nothing here has run on an NPU. The pure functions (names, reg_info, argument order, reduction codes, shape and
dtype rules) and the composition, driven by stand-in kernels on CPU, are tested in tests/test_ascend_dispatch.py.
"""
import ctypes
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import mindspore as ms
from mindspore import nn, ops
from mindspore.common import dtype as mstype
from mindspore.ops import CustomRegOp
from mindspore.ops.primitive import constexpr

from ms_bcewl import _loss_formula as formula
from ms_bcewl import _primitives as primitives
from ms_bcewl._library import DTYPE_NAMES, REDUCTIONS

_FLOAT32 = mstype.float32
# Primitives rather than ops.zeros_like / ops.ones_like: those branch on a None argument, which breaks the
# graph-mode compilation of a bprop that shares the function with the forward (MindSpore 2.10).
_zeros_like = ops.ZerosLike()
_ones_like = ops.OnesLike()


@dataclass(frozen=True)
class KernelSpec:
    """What a kernel's aclnn function takes, in its argument order: tensors, then the output (no scalars)."""

    func: str
    inputs: Tuple[Tuple[str, str], ...]  # (name, "required" | "optional"), as in the OpDef
    output: str
    output_dtype: Optional[str]           # fixed, or None for the dtype of the first input
    float32_inputs: Tuple[str, ...] = ()  # inputs that are float32 whatever the kernel dtype


def forward_kernel_spec():
    """aclnnMsBcewlSigmoidCrossEntropyWithLogits: the loss with reduction none, always float32."""
    return KernelSpec("aclnnMsBcewlSigmoidCrossEntropyWithLogits",
                      (("predict", "required"), ("target", "required"), ("weight", "optional"),
                       ("pos_weight", "optional")),
                      "loss", "float32")


def grad_kernel_spec():
    """aclnnMsBcewlSigmoidCrossEntropyWithLogitsGrad: dx in predict's dtype; scale is 0-d float32."""
    return KernelSpec("aclnnMsBcewlSigmoidCrossEntropyWithLogitsGrad",
                      (("predict", "required"), ("target", "required"), ("dout", "required"),
                       ("scale", "required"), ("weight", "optional"), ("pos_weight", "optional")),
                      "gradient", None, float32_inputs=("scale",))


def dtype_rows(spec):
    """One dtype_format row per supported dtype: every input shares it (the kernel needs one dtype) but the
    float32 ones."""
    return [tuple("float32" if name in spec.float32_inputs else dtype for name, _ in spec.inputs)
            + (spec.output_dtype or dtype,) for dtype in DTYPE_NAMES]


def reg_info(spec):
    """The CustomRegOp info of a kernel: op name == func, names and order as in the aclnn signature."""
    reg = CustomRegOp(spec.func)
    for index, (name, param_type) in enumerate(spec.inputs):
        reg = reg.input(index, name, param_type)
    reg = reg.output(0, spec.output, "required")
    for row in dtype_rows(spec):
        reg = reg.dtype_format(*[_in_default_format(dtype) for dtype in row])
    return reg.target("Ascend").get_op_info()


def _in_default_format(dtype):
    """A dtype_format item of `dtype` in the default format, as DataType spells one (DataType.F16_Default is
    ("float16", "DefaultFormat"))."""
    return dtype, "DefaultFormat"


def kernel_output_shape(predict_shape, *_):
    """Both kernels write one value per element of predict."""
    return predict_shape


def kernel_output_dtype(spec):
    """The out_dtype function of a kernel's ops.Custom."""
    if spec.output_dtype is not None:
        fixed = getattr(mstype, spec.output_dtype)
        return lambda *_: fixed
    return lambda predict_dtype, *_: predict_dtype


def promoted_dtype(*dtypes):
    """The one dtype the kernels get: the common dtype if all agree, float32 for any mix (as CANN promotes)."""
    return dtypes[0] if all(dtype == dtypes[0] for dtype in dtypes) else _FLOAT32


def shape_is_known(shape):
    """Whether a graph knows every dim of `shape` when it compiles: an unknown rank is None, an unknown dim None
    (or -1)."""
    return shape is not None and all(dim is not None and dim >= 0 for dim in shape)


def kernel_follows_broadcast(shape, input_shape):
    """Whether the kernel's tiling takes an operand of `shape` on `input_shape` as it is.

    The rule of bcewl::DescribeBroadcast (ascendc/op_host/bcewl_tiling.cpp): after trailing alignment the dims the
    operand keeps (equal to the input's and > 1) form one block, with broadcast dims only before or after it
    (dims where the input has size 1 do not count). Anything else, and any unknown dim or rank, is expanded first.
    """
    if not (shape_is_known(shape) and shape_is_known(input_shape)) or len(shape) > len(input_shape):
        return False
    aligned = (1,) * (len(input_shape) - len(shape)) + tuple(shape)
    kinds = "".join(_dim_kind(dim, full) for dim, full in zip(aligned, input_shape) if full != 1)
    return re.fullmatch("b*k*b*", kinds) is not None


def _dim_kind(dim, full):
    """k: kept, b: broadcast, ?: neither (not broadcastable; validation rejects it before)."""
    if dim == full:
        return "k"
    return "b" if dim == 1 else "?"


def runs_on_ascend():
    """The backend choice of ms_bcewl._primitives, made once when the package is imported."""
    return ms.get_context("device_target") == "Ascend"


OP_PACKAGE_LIBRARY = os.path.join("op_api", "lib", "libcust_opapi.so")
# The SoCs the op package is built for (ascendc/op_host/bcewl_cann_host.h, kSocVersions).
SOC_VERSIONS = ("ascend910b", "ascend910_93")
COMPILER_CACHE_VARIABLE = "MS_COMPILER_CACHE_PATH"
INSTALL_STEP = "ascendc/README.md, 'Build and install on a machine with CANN and an NPU'"


class OpPackageNotFound(ImportError):
    """The device is Ascend but no vendor directory holds ms_bcewl's op package."""


class OpPackageUnusable(ImportError):
    """The op package is found, but MindSpore could not run its kernels on this device."""


def aclnn_header(func):
    """The header CANN generates for an aclnn function and MindSpore reads its parameter types from:
    op_api/include/aclnn_<op type in snake case>.h (MindSpore's CustomInfoGenerator._get_aclnn_api_file_name)."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", func)
    return os.path.join("op_api", "include", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower() + ".h")


def op_package_search_path(environ):
    """The vendor directories MindSpore 2.10 looks in, in its order: ASCEND_CUSTOM_OPP_PATH's entries, then
    $ASCEND_OPP_PATH/vendors/<v> for each v of vendors/config.ini's load_priority (where the package's .run
    installs and registers itself)."""
    directories = [entry for entry in environ.get("ASCEND_CUSTOM_OPP_PATH", "").split(":") if entry]
    opp = environ.get("ASCEND_OPP_PATH")
    config = os.path.join(opp, "vendors", "config.ini") if opp else None
    if config and os.path.isfile(config):
        with open(config, encoding="utf-8") as lines:
            for line in lines:
                key, _, value = line.strip().partition("=")
                if key.strip() == "load_priority":
                    directories += [os.path.join(opp, "vendors", vendor.strip())
                                    for vendor in value.split(",") if vendor.strip()]
    return directories


def find_op_package(environ):
    """The first vendor directory with the op package's library and both generated headers, or None."""
    needed = [OP_PACKAGE_LIBRARY] + [aclnn_header(spec.func) for spec in (forward_kernel_spec(), grad_kernel_spec())]
    for directory in op_package_search_path(environ):
        if all(os.path.isfile(os.path.join(directory, path)) for path in needed):
            return directory
    return None


def require_op_package(environ):
    """The op package's vendor directory; OpPackageNotFound naming what was searched and how to install it."""
    directory = find_op_package(environ)
    if directory is not None:
        return directory
    searched = op_package_search_path(environ)
    raise OpPackageNotFound(
        "ms_bcewl runs on Ascend through its CANN op package (ops MsBcewlSigmoidCrossEntropyWithLogits[Grad]), "
        f"and no vendor directory holds it: none of {searched or '(nothing: ASCEND_CUSTOM_OPP_PATH is unset)'} "
        f"has {OP_PACKAGE_LIBRARY} and {aclnn_header(forward_kernel_spec().func)}. Build and install the op "
        "package (MS_BCEWL_BUILD_ASCEND=1 pip install . builds ms_bcewl/lib/ms_bcewl_op_package.run; run it), "
        "then export ASCEND_CUSTOM_OPP_PATH=$ASCEND_OPP_PATH/vendors/ms_bcewl:$ASCEND_CUSTOM_OPP_PATH before "
        f"importing ms_bcewl; see {INSTALL_STEP}.")



def aclnn_functions():
    """The functions MindSpore looks up in the op package's library: each kernel's two aclnn phases."""
    return [name for spec in (forward_kernel_spec(), grad_kernel_spec())
            for name in (spec.func + "GetWorkspaceSize", spec.func)]


def op_package_socs(directory):
    """The SoCs (compute units such as ascend910b) the op package in `directory` holds kernels for: one
    op_impl/ai_core/tbe/config/<soc>/aic-<soc>-ops-info.json each, as CANN's op project installs them."""
    config = os.path.join(directory, "op_impl", "ai_core", "tbe", "config")
    socs = os.listdir(config) if os.path.isdir(config) else []
    return sorted(soc for soc in socs if os.path.isfile(os.path.join(config, soc, f"aic-{soc}-ops-info.json")))


def op_package_problem(directory, environ, soc):
    """Why MindSpore could not run the op package in `directory` on a device of SoC `soc` ("" if unknown), in
    ms_bcewl's words, or None. Checked: what MindSpore's ops.Custom needs from the environment, that the library
    loads and has every aclnn function, and that the package holds kernels for the SoC."""
    library = os.path.join(directory, OP_PACKAGE_LIBRARY)
    if not environ.get("ASCEND_OPP_PATH"):
        return ("ASCEND_OPP_PATH is unset: MindSpore's ops.Custom reads CANN's headers through it. Source the "
                "toolkit's set_env.sh (e.g. /usr/local/Ascend/ascend-toolkit/set_env.sh) before importing ms_bcewl.")
    try:
        loaded = ctypes.CDLL(library)
    except OSError as error:
        return (f"{library} does not load ({error}). Source the toolkit's set_env.sh, which puts CANN's libraries "
                "on LD_LIBRARY_PATH; a package built for another CANN version or machine must be rebuilt here.")
    missing = [name for name in aclnn_functions() if not hasattr(loaded, name)]
    if missing:
        return (f"{library} lacks {', '.join(missing)}: it was not built from this ms_bcewl's ascendc/. Rebuild "
                "and reinstall the op package.")
    built_for = op_package_socs(directory)
    if soc and soc not in built_for:
        return (f"the op package in {directory} holds kernels for {', '.join(built_for) or 'no SoC'}, and this "
                f"device is {soc}. ms_bcewl's kernels are built for {', '.join(SOC_VERSIONS)}.")
    return None


def current_soc():
    """The compute unit of the Ascend device MindSpore runs on (e.g. ascend910b), or "" when it cannot tell."""
    try:
        from mindspore._c_expression import MSContext  # pylint: disable=import-outside-toplevel

        return MSContext.get_instance().get_ascend_soc_version() or ""
    except (ImportError, AttributeError, RuntimeError):
        return ""


def require_usable_op_package(environ, soc):
    """The op package's vendor directory, checked; OpPackageNotFound or OpPackageUnusable saying what to do."""
    directory = require_op_package(environ)
    problem = op_package_problem(directory, environ, soc)
    if problem is not None:
        raise OpPackageUnusable(f"ms_bcewl cannot use its CANN op package: {problem} See {INSTALL_STEP}.")
    return directory


@contextmanager
def callbacks_compiled_to_an_absolute_path(environ):
    """MindSpore compiles a callback for each Ascend C ops.Custom into $MS_COMPILER_CACHE_PATH, by default
    ./custom_kernel_meta, and records the library's path as given: a relative one breaks graph launches after a
    chdir. Within this block the same directory is given as an absolute path."""
    previous = environ.get(COMPILER_CACHE_VARIABLE)
    environ[COMPILER_CACHE_VARIABLE] = os.path.abspath(previous or "custom_kernel_meta")
    try:
        yield
    finally:
        if previous is None:
            del environ[COMPILER_CACHE_VARIABLE]
        else:
            environ[COMPILER_CACHE_VARIABLE] = previous


@dataclass(frozen=True)
class Kernels:
    """The two kernels, called with every tensor in the promoted dtype (weights may be broadcast shapes).

    forward(predict, target, weight, pos_weight) -> float32 loss of predict's shape (reduction none), with the
    limits at infinite logits (0 where a zero factor meets the infinite term) and NaN propagating;
    grad(predict, target, dout, scale, weight, pos_weight) -> dx in predict's dtype, times dout (predict's shape
    for reduction none, 0-d otherwise) and the 0-d float32 scale (1 / numel for mean, else 1).
    """

    forward: Callable
    grad: Callable


def aclnn_kernels():
    """The op package's kernels as ops.Custom primitives (only constructible where they run: Ascend); raises
    OpPackageNotFound or OpPackageUnusable when MindSpore would not find or could not use the op package."""
    require_usable_op_package(os.environ, current_soc())
    with callbacks_compiled_to_an_absolute_path(os.environ):
        return Kernels(_aclnn_primitive(forward_kernel_spec(), forward_kernel_bprop),
                       _aclnn_primitive(grad_kernel_spec(), grad_kernel_bprop))


def _aclnn_primitive(spec, bprop):
    return ops.Custom(spec.func, out_shape=kernel_output_shape, out_dtype=kernel_output_dtype(spec),
                      func_type="aot", bprop=bprop, reg_info=reg_info(spec))


# The kernels' own gradients, which a second-order gradient differentiates through: composed of MindSpore operations
# in float32 from the formula's terms (ms_bcewl._loss_formula, and _primitives.second_order, shared with the host
# backend), so that third and higher orders follow by MindSpore's autodiff.


def forward_kernel_bprop(x, y, w, p, out, dout):
    """The gradients of sum(dout * loss) for the forward kernel's predict, target, weight and pos_weight."""
    xf, yf, wf, pf, g = (ops.cast(t, _FLOAT32) for t in (x, y, w, p, dout))
    unit_dx, unit_dy, unit_dp, unweighted = formula.first_order_terms(xf, yf, pf)[:4]
    weighted_g = formula.product(wf, g)
    return (ops.cast(formula.product(weighted_g, unit_dx), x.dtype),
            ops.cast(formula.product(weighted_g, unit_dy), y.dtype),
            _sum_to_in_kernel_bprops(formula.product(g, unweighted), w),
            _sum_to_in_kernel_bprops(formula.product(weighted_g, unit_dp), p))


def grad_kernel_bprop(x, y, dout, scale, w, p, out, cotangent):
    """The gradients of sum(cotangent * dx) for the gradient kernel's inputs: _primitives.second_order with the
    upstream gradient dout * scale spread over x's shape, then split into dout's and scale's share."""
    upstream = ops.cast(dout, _FLOAT32) * scale * _ones_like(ops.cast(x, _FLOAT32))
    d_upstream, d_x, d_y, d_w, d_p = primitives.second_order("none", (upstream, x, y, w, p),
                                                             (cotangent, None, None, None))
    d_scale = ops.reshape(ops.sum(d_upstream * ops.cast(dout, _FLOAT32)), ops.shape(scale))
    return d_x, d_y, _sum_to_in_kernel_bprops(d_upstream * scale, dout), d_scale, d_w, d_p


@constexpr
def _follows_broadcast(shape, input_shape):
    return kernel_follows_broadcast(shape, input_shape)


@constexpr
def _shapes_are_known(*shapes):
    return all(shape_is_known(shape) for shape in shapes)


@constexpr
def _broadcast_axes(shape, input_shape):
    """Axes of input_shape that an operand of `shape` is broadcast along."""
    lead = len(input_shape) - len(shape)
    return tuple(axis for axis, full in enumerate(input_shape)
                 if axis < lead or (shape[axis - lead] == 1 and full != 1))


@constexpr
def _is_empty(shape):
    """Known to be empty when the graph compiles. An empty input of unknown shape goes through the kernels: their
    tiling plans nothing for it, and CANN's generated aclnn code asks to launch an op with an empty output only when
    its OpDef sets LaunchWithZeroEleOutputTensors, which these do not."""
    return shape_is_known(shape) and 0 in shape


@constexpr
def _promoted(*dtypes):
    return promoted_dtype(*dtypes)


class _Loss(nn.Cell):
    """binary_cross_entropy_with_logits for one variant and reduction, called as the host's primitives are: with
    all four inputs, an absent weight or pos_weight as a 0-d 1 in x's dtype (neutral for the promotion).

    Every branch tests has_weight / has_pos_weight, never `is None`: in graph mode, a function that branches on a
    None argument and is called from both construct and bprop fails to compile (MindSpore 2.10, "The func graph is
    empty").
    """

    def __init__(self, kernels, has_weight, has_pos_weight, reduction):
        super().__init__()
        self.forward_kernel = kernels.forward
        self.grad_kernel = kernels.grad
        self.has_weight = has_weight
        self.has_pos_weight = has_pos_weight
        self.reduction = reduction

    def construct(self, x, y, w, p):
        if _is_empty(ops.shape(x)):
            return _empty_input_loss(x, y, self.reduction)
        loss = self._elementwise_loss(x, y, w, p, _promoted(x.dtype, y.dtype, w.dtype, p.dtype))
        if self.reduction == "mean":
            loss = ops.mean(loss)
        elif self.reduction == "sum":
            loss = ops.sum(loss)
        if self.reduction != "none" and not _shapes_are_known(ops.shape(x)):
            loss = _where_empty(x, ops.full((), _EMPTY_REDUCTIONS[self.reduction], dtype=_FLOAT32), loss)
        return ops.cast(loss, y.dtype)

    def _elementwise_loss(self, x, y, w, p, dtype):
        """The float32 loss of reduction none (the kernel gives the limits at infinite logits)."""
        return self.forward_kernel(ops.cast(x, dtype), ops.cast(y, dtype), _kernel_operand(w, x, dtype),
                                   _kernel_operand(p, x, dtype))

    def bprop(self, x, y, w, p, out, dout):
        """(dx, dy, dw, dp), each in the dtype of its argument; zeros for an absent weight's or pos_weight's unit."""
        if _is_empty(ops.shape(x)):  # nothing contributes: empty dx and dy, zero dw and dp
            return _zeros_like(x), _zeros_like(y), _zeros_like(w), _zeros_like(p)
        dtype = _promoted(x.dtype, y.dtype, w.dtype, p.dtype)
        scale = ops.ones((), _FLOAT32)
        if self.reduction == "mean":
            scale = scale / ops.size(x)
        dx = self.grad_kernel(ops.cast(x, dtype), ops.cast(y, dtype), ops.cast(dout, dtype), scale,
                              _kernel_operand(w, x, dtype), _kernel_operand(p, x, dtype))
        g = ops.cast(dout, _FLOAT32)
        if self.reduction == "mean":
            g = g / ops.size(x)
        x32, y32, w32, p32 = (ops.cast(a, _FLOAT32) for a in (x, y, w, p))
        softplus_x, softplus_minus_x = formula.softplus_pair(x32)
        weight_g = formula.product(w32, g)
        dy = formula.product(weight_g, formula.target_term(p32, softplus_x, softplus_minus_x))
        if self.has_weight:
            dw = _sum_to(self._elementwise_loss(x, y, ops.ones((), x.dtype), p, dtype) * g, w)
        else:
            dw = _zeros_like(w)  # of the unit passed for an absent weight
        if self.has_pos_weight:
            dp = _sum_to(formula.product(weight_g, formula.pos_weight_term(y32, softplus_minus_x)), p)
        else:
            dp = _zeros_like(p)
        if not _shapes_are_known(ops.shape(x)):
            dw, dp = _where_empty(x, _zeros_like(dw), dw), _where_empty(x, _zeros_like(dp), dp)
        return ops.cast(dx, x.dtype), ops.cast(dy, y.dtype), dw, dp


def forward_table(kernels):
    """GRAPH_FORWARD of ms_bcewl._primitives: {(has_weight, has_pos_weight, reduction): loss}, built once."""
    return {(has_weight, has_pos_weight, reduction): _Loss(kernels, has_weight, has_pos_weight, reduction)
            for has_weight, has_pos_weight in primitives.VARIANTS for reduction in REDUCTIONS}


def _kernel_operand(operand, x, dtype):
    """weight / pos_weight as the kernel gets it: in the promoted dtype, and expanded where its tiling cannot
    follow the broadcast. An absent one arrives as a 0-d one, which the kernel reads once per run; None is not
    passed because how MindSpore hands None to an optional aclnn input is unconfirmed."""
    operand = ops.cast(operand, dtype)
    if _follows_broadcast(ops.shape(operand), ops.shape(x)):
        return operand
    return operand * _ones_like(ops.cast(x, dtype))


def _sum_to_function():
    """A function summing a float32 gradient on the input's shape down to `operand`'s shape, cast to its dtype; shapes
    a graph does not know when it compiles are summed with axes computed when it runs. One per context: MindSpore
    2.10 cannot compile a graph that reaches one branching function from a forward and from a bprop."""

    def sum_to(gradient, operand):
        if _shapes_are_known(ops.shape(gradient), ops.shape(operand)):
            axes = _broadcast_axes(ops.shape(operand), ops.shape(gradient))
            if axes:
                gradient = ops.sum(gradient, axes, keepdim=True)
            return ops.cast(ops.reshape(gradient, ops.shape(operand)), operand.dtype)
        return ops.cast(primitives.sum_to_shape_of(gradient, operand), operand.dtype)

    return sum_to


_sum_to = _sum_to_function()  # the losses' bprops
_sum_to_in_kernel_bprops = _sum_to_function()  # the kernels' bprops, which a second-order gradient reaches


# What mean and sum give for an empty input (docs/contract.md §8).
_EMPTY_REDUCTIONS = {"mean": float("nan"), "sum": 0.0}


def _where_empty(x, value, otherwise):
    """`value` where x turns out to be empty when the graph runs, else `otherwise`: a reduction over an empty tensor of
    unknown shape is not relied on (MindSpore's CPU kernels return leftover memory). No branch, as _sum_to_function
    explains."""
    return ops.where(ops.dyn_shape(x).prod() == 0, value, otherwise)


def _empty_input_loss(x, y, reduction):
    """Nothing to launch: none gives an empty loss, mean NaN, sum 0 (a reduction over nothing is not relied on)."""
    if reduction == "none":
        return ops.zeros(ops.shape(x), y.dtype)
    return ops.full((), _EMPTY_REDUCTIONS[reduction], dtype=y.dtype)
