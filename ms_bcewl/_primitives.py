"""The ops.Custom primitives: forward and its gradients side by side, built once per variant and reduction.

Every primitive is created when the package is imported, because graph mode cannot create a primitive while it
compiles; calls only look one up. A primitive calls the entry the library's registry names for its operation,
reduction and variant (aot_entry(); src/mindspore/aot_registry.h), with input and target, then the weights the
caller passed where its row takes them (MindSpore pays per tensor), else both, an absent one as a 0-d 1
(``unit_like``); the entry tells its signatures apart by the count of tensors. A variant, which optional inputs
the caller passed, picks the gradients a bprop computes, so that none is computed for an absent input. Output
dtypes are the dtype of the argument each output belongs to.

Output shapes come from one of two places, hence two tables with the same keys:
- GRAPH_FORWARD, keyed (has_weight, has_pos_weight, reduction): the library's C++ InferShape, so that dynamic
  shapes (-1 dims) work when a graph is compiled;
- PYNATIVE_FORWARD, keyed (..., target dtype): a Python shape function. PyNative infers every call anew, and
  MindSpore's C++ infer path for AOT ops costs about 15 µs a call (docs/performance.md); PyNative shapes are
  always concrete, so the Python function is all it needs.
``in_graph()`` tells the two apart at a call site (bce_with_logits.py); in a graph compiled for an export,
``in_export()`` picks ``standard_loss`` instead, MindSpore's own operators, which an exported file can carry.
"""
import mindspore as ms
from mindspore import Tensor, ops
from mindspore.common import dtype as mstype
from mindspore.ops import CustomRegOp, DataType, PrimitiveWithInfer
from mindspore.ops.primitive import constexpr

from ms_bcewl import _ascend_kernels as ascend_kernels
from ms_bcewl import _loss_formula as formula
from ms_bcewl._library import DTYPE_NAMES, REDUCTIONS, aot_entry, library_path
from ms_bcewl._mindspore_internals import capturing_bytecode, exporting

# The dtypes the primitives compute in (docs/contract.md §5): the library's.
SUPPORTED_DTYPES = tuple(getattr(mstype, name) for name in DTYPE_NAMES)
# The gradient of each input, as the library's operations and these primitives' outputs name it.
GRADIENT_OF = {"input": "grad_self", "target": "grad_target", "weight": "grad_weight", "pos_weight": "grad_pos_weight"}
# The inputs of the loss, in the order a primitive takes those it is passed.
_INPUTS = tuple(GRADIENT_OF)
# The variants, (has_weight, has_pos_weight): which optional inputs the caller passed.
VARIANTS = ((False, False), (True, False), (False, True), (True, True))
# What an absent weight or pos_weight is passed as in PyNative: one 0-d 1 per dtype, made once, not per call.
_UNITS = {dtype: Tensor(1, dtype) for dtype in SUPPORTED_DTYPES}
_ZEROS = {dtype: Tensor(0, dtype) for dtype in SUPPORTED_DTYPES}


def _custom(entry, input_names, output_names, output_dtype, output_shape, bprop, variant):
    """An AOT primitive on the host library. output_dtype: a fixed dtype or a function of the input dtypes;
    output_shape: a function of the input shapes, or None for the library's InferShape (one output only)."""
    reg = CustomRegOp(f"{entry}_of_{len(input_names)}")  # MindSpore keeps one registration per name and arity
    for index, name in enumerate(input_names):
        reg = reg.input(index, name)
    for index, name in enumerate(output_names):
        reg = reg.output(index, name)
    formats = [DataType.None_None] * (len(input_names) + len(output_names))
    reg = reg.dtype_format(*formats).target("CPU")
    primitive = ops.Custom(f"{library_path()}:{entry}", out_shape=output_shape, out_dtype=output_dtype,
                           func_type="aot", bprop=bprop, reg_info=reg.get_op_info())
    # The variants' primitives call one entry: with 0-d weights their calls look alike to MindSpore's PyNative op
    # cache, which keys on the inputs and attributes, not on output shapes or bprops; the attribute tells them apart.
    primitive.add_prim_attr("variant", "{} {}".format(*variant))
    # MindSpore keeps the input names of the first primitive made for a 'file:function', and an entry has two arities.
    for attribute in ("input_names", "pure_input_names"):
        primitive.add_prim_attr(attribute, list(input_names))
    return primitive


def _shape_of(*positions):
    if len(positions) == 1:
        return lambda *shapes: shapes[positions[0]]
    return lambda *shapes: [shapes[position] for position in positions]


def _scalar_shape(*shapes):
    return []


def _dtype_of(*positions):
    if len(positions) == 1:
        return lambda *dtypes: dtypes[positions[0]]
    return lambda *dtypes: [dtypes[position] for position in positions]


class _CompileTimeConstant(PrimitiveWithInfer):
    """A constant primitive: a graph infers its value once per compile (``value_in_graph()``); a call, which is
    PyNative's, returns False."""

    def __init__(self, name, value_in_graph):
        super().__init__(name)
        self.set_const_prim(True)
        self._value_in_graph = value_in_graph

    def __infer__(self):
        return {"dtype": None, "shape": None, "value": self._value_in_graph()}

    def __call__(self):
        return False


# True where MindSpore compiles the call into a graph (GRAPH_MODE, mindspore.jit), False where Python runs it.
in_graph = _CompileTimeConstant("ms_bcewl_in_graph", lambda: True)
# True in a graph compiled for an export (mindspore.export, mindspore.onnx.export).
in_export = _CompileTimeConstant("ms_bcewl_in_export", exporting)
# True where bytecode capture (mindspore.jit(capture_mode="bytecode")) traces the call.
in_bytecode_capture = _CompileTimeConstant("ms_bcewl_in_bytecode_capture", capturing_bytecode)


@constexpr
def _unit_of(dtype):
    """The 0-d 1 of `dtype`, a constant of the graph that calls it (a launched ones() would cost a kernel)."""
    return _UNITS[dtype]


def unit_like(like):
    """What a primitive takes for an absent weight or pos_weight: a 0-d 1 in `like`'s dtype."""
    return _unit_of(like.dtype) if in_graph() else _UNITS[like.dtype]


def _zero_for(absent):
    """A bprop's gradient of the unit passed for an absent input."""
    return ops.zeros_like(absent) if in_graph() else _ZEROS[absent.dtype]


def _entry(operation, reduction, variant):
    """(symbol, input names) of the entry a primitive of `variant` calls."""
    entry, inputs = aot_entry(operation, reduction, [name for name, has in zip(_INPUTS[2:], variant) if has])
    return entry.symbol, inputs


def _gradient_shapes(has_weight, has_pos_weight):
    """grad_all's output shapes: each input's, but (0,) for the gradient of an absent weight or pos_weight, which
    asks the library not to compute it (its 0-d unit's gradient would have shape ())."""
    def shapes(dout, x, y, w, p):
        return [x, y, w if has_weight else [0], p if has_pos_weight else [0]]
    return shapes


def _called_with_every_input(primitive, inputs):
    """`primitive`, which takes dout and `inputs`, as a function of dout, input, target, weight and pos_weight (a
    unit or None where absent) that passes it those it takes."""
    def with_two(dout, x, y, w, p):
        return primitive(dout, x, y)

    def with_weight(dout, x, y, w, p):
        return primitive(dout, x, y, w)

    def with_pos_weight(dout, x, y, w, p):
        return primitive(dout, x, y, p)
    return {2: with_two, 4: primitive}.get(len(inputs), with_weight if "weight" in inputs else with_pos_weight)


def _gradient_primitives(has_weight, has_pos_weight, reduction):
    """Primitives (dx, dy, dw, dp, all), dw and dp None without weights, each as a function of dout and the four
    inputs (_called_with_every_input); ``all`` returns the gradient of every input the entry takes (zeros of a
    unit's shape for those of absent ones), from one pass over the inputs where it can.

    dx, dy, dw and dp infer their shapes with the library's InferShape: graphs need it for dynamic shapes. ``all``
    infers them in Python, so a bprop calls it only where Python runs the bprop (not in_graph()); a graph calls the
    single gradients, which lets it drop those it does not need. Every one of them has a bprop of its own
    (below), so that a gradient of these gradients is real; ``all``'s takes one cotangent per
    output, in one formula with the single ones'."""
    variant = (has_weight, has_pos_weight)

    def grad(of):
        symbol, inputs = _entry(GRADIENT_OF[of], reduction, variant)
        if of not in inputs:
            return None
        names = ["dout", *inputs]
        return _called_with_every_input(_custom(symbol, names, [GRADIENT_OF[of]], _dtype_of(names.index(of)), None,
                                                gradient_bprop(reduction, variant, inputs, of), variant), inputs)

    symbol, inputs = _entry("grad_all", reduction, variant)
    shapes = _gradient_shapes(has_weight, has_pos_weight) if len(inputs) == 4 else _shape_of(*range(1, len(inputs) + 1))
    grad_all = _custom(symbol, ["dout", *inputs], [GRADIENT_OF[name] for name in inputs],
                       _dtype_of(*range(1, len(inputs) + 1)), shapes, gradient_bprop(reduction, variant, inputs),
                       variant)
    return grad("input"), grad("target"), grad("weight"), grad("pos_weight"), _called_with_every_input(grad_all, inputs)


def _bprop(has_weight, has_pos_weight, reduction, forward_inputs):
    """The bprop of a forward taking `forward_inputs`, the inputs its caller passed: their gradients."""
    dx, dy, dw, dp, grad_all = _gradient_primitives(has_weight, has_pos_weight, reduction)

    def gradients(dout, x, y, w, p):
        """The gradients of input, target and the weights passed; w and p are units (or None) where absent. A
        graph computes no other: it may keep what a bprop computes and drops."""
        if in_graph():
            passed = (dx(dout, x, y, w, p), dy(dout, x, y, w, p))
            passed += (dw(dout, x, y, w, p),) if has_weight else ()
            return passed + ((dp(dout, x, y, w, p),) if has_pos_weight else ())
        every = grad_all(dout, x, y, w, p)
        if not has_weight and not has_pos_weight:
            return every
        return every[:2] + ((every[2],) if has_weight else ()) + ((every[3],) if has_pos_weight else ())

    def bprop_of_two(x, y, out, dout):
        return gradients(dout, x, y, None, None)

    def bprop_of_weight(x, y, w, out, dout):
        return gradients(dout, x, y, w, unit_like(x))

    def bprop_of_pos_weight(x, y, p, out, dout):
        return gradients(dout, x, y, unit_like(x), p)

    def bprop(x, y, w, p, out, dout):
        return gradients(dout, x, y, w, p)
    return {2: bprop_of_two, 4: bprop}.get(len(forward_inputs), bprop_of_weight if has_weight else bprop_of_pos_weight)


def _host_forward_table(for_graph):
    """GRAPH_FORWARD (for_graph) or PYNATIVE_FORWARD, whose keys also name the target's dtype: one loss per
    variant and reduction, each calling the forward entry of its variant and reduction."""
    table = {}
    dtype_of_target = _dtype_of(_INPUTS.index("target"))
    for (has_weight, has_pos_weight), reduction in ((variant, r) for variant in VARIANTS for r in REDUCTIONS):
        key = (has_weight, has_pos_weight, reduction)
        symbol, inputs = _entry("forward", reduction, key[:2])
        bprop = _bprop(has_weight, has_pos_weight, reduction, inputs)
        if for_graph:
            table[key] = _custom(symbol, inputs, ["loss"], dtype_of_target, None, bprop, key[:2])
        elif reduction != "none":
            # A 0-d output keeps a dtype function: with a fixed dtype, MindSpore 2.10 fails in a PyNative Cell
            # with dynamic inputs (set_inputs): "The pointer[shape_vector] is null" (CreateGraphOutputKernelTensor).
            loss = _custom(symbol, inputs, ["loss"], dtype_of_target, _scalar_shape, bprop, key[:2])
            table.update({key + (dtype,): loss for dtype in SUPPORTED_DTYPES})
        else:
            # A fixed dtype also spares each call the Python dtype function.
            table.update({key + (dtype,): _custom(symbol, inputs, ["loss"], dtype, _shape_of(0), bprop, key[:2])
                          for dtype in SUPPORTED_DTYPES})
    return table


# ---- Second order: the bprops of the gradient primitives, so that gradients of gradients are real ----
# (docs/contract.md §4)
#
# With g the loss's upstream gradient and s = 1/numel(x) for mean and 1 otherwise, each first-order gradient is a
# term of _loss_formula times w g s (dw: g s), summed to the shapes of w and p for dw and dp. A gradient primitive's
# bprop gets a cotangent c for its output and returns the gradient of sum(c * output) with respect to each of its
# inputs (g, x, y, w, p), from those terms and their derivatives (_loss_formula.second_derivatives), in float32 like
# the loss, so that third and higher orders follow by MindSpore's own autodiff.


def _float32(tensor):
    return None if tensor is None else ops.cast(tensor, ms.float32)


def _times(cotangent, term):
    """cotangent * term, term a tensor or a finite constant; None (a zero) where no cotangent was given."""
    if cotangent is None:
        return None
    return formula.product(cotangent, term) if isinstance(term, Tensor) else cotangent * term


def _weighted(factor, term):
    """factor * term, where an absent factor (a weight not passed, None) is 1 and an absent term stays absent."""
    return term if factor is None or term is None else formula.product(factor, term)


def _total(*terms):
    """The sum of the terms present; None if none is."""
    total = None
    for term in terms:
        if term is not None:
            total = term if total is None else total + term
    return total


_SUM_KEEPING_DIMS = ops.ReduceSum(keep_dims=True, skip_mode=True)  # an empty list of axes sums nothing


def _sum_to(tensor, like):
    """The gradient of a tensor broadcast from `like`'s shape: summed over the broadcast dimensions (None stays)."""
    if tensor is None:
        return tensor
    if not in_graph():
        return tensor if tensor.shape == like.shape else tensor.sum_to_size(like.shape)
    return sum_to_shape_of(tensor, like)


def sum_to_shape_of(tensor, like):
    """`tensor`, broadcast from `like`'s shape, summed over the broadcast dimensions in any mode. No branch:
    MindSpore 2.10 cannot compile a graph that reaches a branching function from both a forward and a bprop."""
    # A graph may know neither shape (mindspore.jit(dynamic=1), set_inputs), where Tensor.sum_to_size cannot
    # compile: the axes to sum are computed as a tensor from both shapes, also tensors, when the graph runs.
    shape, like_shape = ops.dyn_shape(tensor), ops.dyn_shape(like)
    axes = ops.cumsum(ops.ones_like(shape), 0) - 1
    # like's shape aligned right on tensor's and padded with 1 on the left: item 0 of [1] + like_shape there
    leading = ops.ones_like(shape).sum() - ops.ones_like(like_shape).sum()
    aligned = ops.gather(ops.concat((ops.ones_like(shape[:1]), like_shape)), ops.relu(axes - leading + 1), 0)
    return ops.reshape(_SUM_KEEPING_DIMS(tensor, ops.masked_select(axes, aligned == 1)), like_shape)


def _count(x):
    """numel(x), at least 1; in a graph a tensor, since the graph may not know x's shape (mindspore.jit(dynamic=1))."""
    if not in_graph():
        return max(x.size, 1)
    return ops.cast(ops.maximum(ops.dyn_shape(x).prod(), 1), ms.float32)


def second_order(reduction, arguments, cotangents):
    """Gradients of sum_k sum(c_k * d_k), d_k the first-order gradient of argument k of the loss, with respect to
    each input of a gradient primitive.

    arguments: (dout, input, target, weight or None, pos_weight or None) as the primitive takes them;
    cotangents: (c_input, c_target, c_weight, c_pos_weight), None for a gradient not asked for.
    Returns the gradients of dout, input, target, weight and pos_weight, each in its argument's dtype, None for
    an absent weight or pos_weight."""
    dout, x, y, w, p = arguments
    c_x, c_y, c_w, c_p = (_float32(cotangents[0]), _float32(cotangents[1]), _float32(cotangents[2]),
                          _float32(cotangents[3]))
    xf, yf, wf, pf = _float32(x), _float32(y), _float32(w), _float32(p)
    unit_dx, unit_dy, unit_dp, dw_term, sigmoid, sigmoid_of_minus_x, softplus_of_minus_x = \
        formula.first_order_terms(xf, yf, pf)
    scale = 1.0 / _count(x) if reduction == "mean" else 1.0
    gs = _float32(dout) * scale

    # Q = sum_k c_k d_k / (g s), elementwise: d(output)/d(dout) is Q s, summed for a 0-d dout
    weighted = _total(_times(c_x, unit_dx), _times(c_y, unit_dy), _times(c_p, unit_dp))
    q = _total(_weighted(wf, weighted), _times(c_w, dw_term))
    d_dout = q * scale if reduction == "none" else q.sum() * scale

    d_unit_dx_dx, d_unit_dy_dx, d_unit_dp_dx, d_unit_dx_dy = \
        formula.second_derivatives(yf, pf, sigmoid, sigmoid_of_minus_x)  # d_unit_dp_dx is also d(unit_dx)/dp
    along_x = _total(_times(c_x, d_unit_dx_dx), _times(c_y, d_unit_dy_dx), _times(c_p, d_unit_dp_dx))
    d_x = _weighted(gs, _total(_weighted(wf, along_x), _times(c_w, unit_dx)))  # d(dw)/dx = unit_dx

    along_y = _total(_times(c_x, d_unit_dx_dy), _times(c_p, softplus_of_minus_x))
    d_y = _weighted(gs, _total(_weighted(wf, along_y), _times(c_w, unit_dy)))  # d(dw)/dy = unit_dy

    d_w = None if w is None else _as_gradient(_sum_to(_weighted(gs, weighted), w), w)
    d_p = None
    if p is not None:
        along_p = _total(_times(c_x, d_unit_dp_dx), _times(c_y, softplus_of_minus_x))
        d_p = _as_gradient(_sum_to(_weighted(gs, _total(_weighted(wf, along_p), _times(c_w, unit_dp))), p), p)
    return _as_gradient(d_dout, dout), _as_gradient(d_x, x), _as_gradient(d_y, y), d_w, d_p


def _as_gradient(gradient, argument):
    """A gradient in its argument's dtype; None (no cotangent reaches the argument: d(dy)/dy, d(dw)/dw and
    d(dp)/dp are 0) as zeros."""
    return ops.zeros_like(argument) if gradient is None else ops.cast(gradient, argument.dtype)


def _pick(cotangent, position):
    """A bprop's cotangent for one output: None (not an output), the whole cotangent (-1) or its item `position`."""
    if position is None:
        return None
    return cotangent if position == -1 else cotangent[position]


def gradient_bprop(reduction, variant, inputs, of=None):
    """The bprop of the gradient primitive of `variant` that takes dout and `inputs`, whose output is the gradient of
    argument `of` ("input", "target", "weight", "pos_weight"), or, for of None, grad_all's tuple of the gradients of
    every input it takes, those of absent ones empty and without a cotangent. The units passed for absent inputs
    take no part: zero gradients."""
    has_weight, has_pos_weight = variant
    present = (True, True, has_weight, has_pos_weight)
    positions = tuple((inputs.index(name) if has else None) if of is None else (-1 if name == of else None)
                      for name, has in zip(_INPUTS, present))

    def picked(cotangent):  # the cotangent of each input's gradient, None where the primitive gives none
        return (_pick(cotangent, positions[0]), _pick(cotangent, positions[1]), _pick(cotangent, positions[2]),
                _pick(cotangent, positions[3]))

    def bprop_of_two(dout, x, y, out, cotangent):
        return second_order(reduction, (dout, x, y, None, None), picked(cotangent))[:3]

    def bprop(dout, x, y, w, p, out, cotangent):
        d_dout, d_x, d_y, d_w, d_p = second_order(reduction, (dout, x, y, w if has_weight else None,
                                                              p if has_pos_weight else None), picked(cotangent))
        return d_dout, d_x, d_y, _zero_for(w) if d_w is None else d_w, _zero_for(p) if d_p is None else d_p

    def bprop_of_three(dout, x, y, third, out, cotangent):
        w, p = (third, None) if inputs[2] == "weight" else (None, third)
        d_dout, d_x, d_y, d_w, d_p = second_order(reduction, (dout, x, y, w, p), picked(cotangent))
        return d_dout, d_x, d_y, d_w if inputs[2] == "weight" else d_p
    return {2: bprop_of_two, 3: bprop_of_three, 4: bprop}[len(inputs)]


# ---- Exports: the loss from standard operators ----
# An exported file cannot carry the AOT primitives: MINDIR stores a primitive's 'file:function' with the library's
# absolute path, which the loading machine resolves with realpath(3), and ONNX writes the entry point as an operator
# type no runtime knows. So a graph compiled for an export takes operators that MINDIR and ONNX both carry
# (docs/contract.md §17 Export); training and every other compile keep the primitives.
# The operators are those of _loss_formula with its Log-only log1p (ONNX opset 11 has no Log1p), whose NaN and ±inf
# give the same results in MindSpore's CPU kernels and in onnxruntime.
_MEAN = ops.ReduceMean(keep_dims=False)
_SUM = ops.ReduceSum(keep_dims=False)


def standard_loss(input, target, weight, pos_weight, reduction):  # pylint: disable=redefined-builtin
    """docs/contract.md §2's loss from standard operators (_loss_formula.loss) in float32, reduced, cast to the
    target's dtype."""
    loss = formula.loss(_float32(input), _float32(target), _float32_if_passed(weight), _float32_if_passed(pos_weight),
                        log1p=formula.exportable_log1p)
    if reduction == "mean":
        loss = _MEAN(loss)
    elif reduction == "sum":
        loss = _SUM(loss)
    return ops.cast(loss, target.dtype)


def _float32_if_passed(optional):
    """An optional input in float32; None where the caller passed none."""
    return _float32(optional) if isinstance(optional, Tensor) else None


# ---- Backend choice, made once at import (everything above is the host backend) ----
# With device_target "Ascend" both tables hold ms_bcewl/_ascend_kernels.py's losses over the CANN op package's
# kernels instead (one loss for every dtype of a PyNative key); same keys and call signatures.
def _with_units(loss, has_weight, has_pos_weight):
    """An Ascend loss, which takes all four inputs, called as the host primitive of its variant is: with input,
    target and the weights passed."""
    def no_weight(input, target):  # pylint: disable=redefined-builtin
        return loss(input, target, unit_like(input), unit_like(input))

    def weight_alone(input, target, weight):  # pylint: disable=redefined-builtin
        return loss(input, target, weight, unit_like(input))

    def pos_weight_alone(input, target, pos_weight):  # pylint: disable=redefined-builtin
        return loss(input, target, unit_like(input), pos_weight)
    return {(False, False): no_weight, (True, False): weight_alone, (False, True): pos_weight_alone,
            (True, True): loss}[(has_weight, has_pos_weight)]


if ascend_kernels.runs_on_ascend():
    GRAPH_FORWARD = {key: _with_units(loss, *key[:2])
                     for key, loss in ascend_kernels.forward_table(ascend_kernels.aclnn_kernels()).items()}
    PYNATIVE_FORWARD = {key + (dtype,): loss for key, loss in GRAPH_FORWARD.items() for dtype in SUPPORTED_DTYPES}
else:
    GRAPH_FORWARD = _host_forward_table(for_graph=True)
    PYNATIVE_FORWARD = _host_forward_table(for_graph=False)
