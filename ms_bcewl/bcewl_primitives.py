"""The ops.Custom primitives: forward and its gradients side by side, built once per variant and reduction.

Every primitive is created when the package is imported, because graph mode cannot create a primitive while it
compiles; calls only look one up. A variant says which optional inputs are passed (absent ones are not passed
at all) and picks the native entry point of that (operation, variant, reduction) from the library's registry
(aot_entries(); aclnn_adapter/src/aot/aot_registry.h). Output dtypes are the dtype of the argument each output
belongs to.

Output shapes come from one of two places, hence two tables with the same keys:
- GRAPH_FORWARD, keyed (has_weight, has_pos_weight, reduction): the library's C++ InferShape, so that dynamic
  shapes (-1 dims) work when a graph is compiled;
- PYNATIVE_FORWARD, keyed (..., target dtype): a Python shape function. PyNative infers every call anew, and
  MindSpore's C++ infer path for AOT ops costs a third of a small call (docs/performance.md); PyNative shapes are
  always concrete, so the Python function is all it needs.
``in_graph()`` tells the two apart at a call site (bcewl_functional.py).
"""
from mindspore import ops
from mindspore.ops import CustomRegOp, DataType, PrimitiveWithInfer

from ms_bcewl import bcewl_ascend_dispatch as ascend_dispatch
from ms_bcewl._bcewl_library import aot_entries, library_path
from ms_bcewl.bcewl_second_order import gradient_bprop
from ms_bcewl.bcewl_validation import SUPPORTED_DTYPES

def _input_names(has_weight, has_pos_weight):
    names = ["input", "target"]
    if has_weight:
        names.append("weight")
    if has_pos_weight:
        names.append("pos_weight")
    return names


def _custom(entry, input_names, output_names, output_dtype, output_shape, bprop=None):
    """An AOT primitive on the host library. output_dtype: a fixed dtype or a function of the input dtypes;
    output_shape: a function of the input shapes, or None for the library's InferShape (one output only)."""
    reg = CustomRegOp(entry)
    for index, name in enumerate(input_names):
        reg = reg.input(index, name)
    for index, name in enumerate(output_names):
        reg = reg.output(index, name)
    formats = [DataType.None_None] * (len(input_names) + len(output_names))
    reg = reg.dtype_format(*formats).target("CPU")
    return ops.Custom(f"{library_path()}:{entry}", out_shape=output_shape, out_dtype=output_dtype,
                      func_type="aot", bprop=bprop, reg_info=reg.get_op_info())


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


class _InGraph(PrimitiveWithInfer):
    """``in_graph()`` is True where MindSpore compiles the call into a graph (GRAPH_MODE, mindspore.jit), which
    infers a constant primitive's value, and False where Python runs it (PyNative), which calls it."""

    def __init__(self):
        super().__init__("ms_bcewl_in_graph")
        self.set_const_prim(True)

    def __infer__(self):
        return {"dtype": None, "shape": None, "value": True}

    def __call__(self):
        return False


in_graph = _InGraph()


def _gradient_primitives(has_weight, has_pos_weight, reduction):
    """Primitives (dx, dy, dw or None, dp or None, all); each takes (dout, input, target, [weight], [pos_weight]);
    ``all`` returns the gradient of every input it takes, from one pass over the inputs where it can.

    dx, dy, dw and dp infer their shapes with the library's InferShape: graphs need it for dynamic shapes. ``all``
    infers them in Python, so a bprop calls it only where Python runs the bprop (not in_graph()); a graph calls the
    single gradients, which lets it drop those it does not need. Every one of them has a bprop of its own
    (ms_bcewl/second_order.py), so that a gradient of these gradients is real; ``all``'s takes one cotangent per
    output, in one formula with the single ones'."""
    names = ["dout"] + _input_names(has_weight, has_pos_weight)
    inputs = names[1:]

    def entry(operation):
        return aot_entries()[(operation, has_weight, has_pos_weight, reduction)].symbol

    def grad(operation, of):
        return _custom(entry(operation), names, [f"d_{of}"],
                       _dtype_of(names.index(of)), None, gradient_bprop(reduction, has_weight, has_pos_weight, of))

    positions = [names.index(name) for name in inputs]
    grad_all = _custom(entry("grad_all"), names, [f"d_{name}" for name in inputs],
                        _dtype_of(*positions), _shape_of(*positions),
                        gradient_bprop(reduction, has_weight, has_pos_weight))
    return (grad("grad_self", "input"), grad("grad_target", "target"),
            grad("grad_weight", "weight") if has_weight else None,
            grad("grad_pos_weight", "pos_weight") if has_pos_weight else None, grad_all)


def _bprop(grads):
    """A bprop with the forward's signature; it returns one gradient per forward input."""
    dx, dy, dw, dp, grad_all = grads
    if dw is not None and dp is not None:
        def bprop_weight_pos_weight(x, y, w, p, out, dout):
            if in_graph():
                return dx(dout, x, y, w, p), dy(dout, x, y, w, p), dw(dout, x, y, w, p), dp(dout, x, y, w, p)
            return grad_all(dout, x, y, w, p)
        return bprop_weight_pos_weight
    da = dw if dw is not None else dp
    if da is not None:
        def bprop_one_weight(x, y, a, out, dout):
            if in_graph():
                return dx(dout, x, y, a), dy(dout, x, y, a), da(dout, x, y, a)
            return grad_all(dout, x, y, a)
        return bprop_one_weight

    def bprop_plain(x, y, out, dout):
        if in_graph():
            return dx(dout, x, y), dy(dout, x, y)
        return grad_all(dout, x, y)
    return bprop_plain


def _host_forward_table(for_graph):
    """GRAPH_FORWARD (for_graph) or PYNATIVE_FORWARD, whose keys also name the target's dtype: one loss per
    forward entry of the library's registry."""
    table = {}
    forward_entries = [entry for entry in aot_entries().values() if entry.operation == "forward"]
    for entry in forward_entries:
        has_weight, has_pos_weight, reduction = entry.has_weight, entry.has_pos_weight, entry.reduction
        names = _input_names(has_weight, has_pos_weight)
        bprop = _bprop(_gradient_primitives(has_weight, has_pos_weight, reduction))
        key = (has_weight, has_pos_weight, reduction)
        dtype_of_target = _dtype_of(names.index("target"))
        if for_graph:
            table[key] = _custom(entry.symbol, names, ["loss"], dtype_of_target, None, bprop)
        elif reduction != "none":
            # A 0-d output keeps a dtype function: with a fixed dtype, MindSpore 2.10 fails in a PyNative Cell
            # with dynamic inputs (set_inputs): "The pointer[shape_vector] is null" (CreateGraphOutputKernelTensor).
            loss = _custom(entry.symbol, names, ["loss"], dtype_of_target, _scalar_shape, bprop)
            table.update({key + (dtype,): loss for dtype in SUPPORTED_DTYPES})
        else:
            # A fixed dtype also spares each call the Python dtype function.
            table.update({key + (dtype,): _custom(entry.symbol, names, ["loss"], dtype, _shape_of(0), bprop)
                          for dtype in SUPPORTED_DTYPES})
    return table


# ---- Backend choice, made once at import (everything above is the host backend) ----
# With device_target "Ascend" both tables hold ms_bcewl/bcewl_ascend_dispatch.py's losses over the CANN op package's
# kernels instead (one loss for every dtype of a PyNative key); same keys and call signatures.
if ascend_dispatch.runs_on_ascend():
    GRAPH_FORWARD = ascend_dispatch.forward_table(ascend_dispatch.aclnn_kernels())
    PYNATIVE_FORWARD = {key + (dtype,): loss for key, loss in GRAPH_FORWARD.items() for dtype in SUPPORTED_DTYPES}
else:
    GRAPH_FORWARD = _host_forward_table(for_graph=True)
    PYNATIVE_FORWARD = _host_forward_table(for_graph=False)
