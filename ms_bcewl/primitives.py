"""The ops.Custom primitives: forward and its gradients side by side, built once per variant and reduction.

Every primitive is created when the package is imported, because graph mode cannot create a primitive while it
compiles; calls only look one up. A variant says which optional inputs are passed (absent ones are not passed
at all) and picks the native entry point ``ms_bcewl_<operation>_<variant>_<reduction>`` (see
aclnn_adapter/src/aot/aot_entries.cpp). Output shapes come from the library's C++ InferShape, so dynamic
shapes work in graph mode; output dtypes are the dtype of the argument each output belongs to.
"""
from mindspore import ops
from mindspore.ops import CustomRegOp, DataType

from ms_bcewl import ascend_dispatch
from ms_bcewl._library import library_path
from ms_bcewl.validation import REDUCTIONS

_VARIANTS = {(False, False): "plain", (True, False): "w", (False, True): "p", (True, True): "wp"}


def _input_names(has_weight, has_pos_weight):
    names = ["input", "target"]
    if has_weight:
        names.append("weight")
    if has_pos_weight:
        names.append("pos_weight")
    return names


def _custom(entry, input_names, output_name, output_dtype_from, bprop=None):
    """An AOT primitive on the host library; its output takes the dtype of input ``output_dtype_from``."""
    reg = CustomRegOp(entry)
    for index, name in enumerate(input_names):
        reg = reg.input(index, name)
    reg = reg.output(0, output_name).dtype_format(*[DataType.None_None] * (len(input_names) + 1)).target("CPU")
    position = input_names.index(output_dtype_from)
    return ops.Custom(f"{library_path()}:{entry}", out_shape=None,
                      out_dtype=lambda *dtypes: dtypes[position],
                      func_type="aot", bprop=bprop, reg_info=reg.get_op_info())


def _gradient_primitives(variant, has_weight, has_pos_weight, reduction):
    """Primitives of (dx, dy, dw or None, dp or None); each takes (dout, input, target, [weight], [pos_weight])."""
    names = ["dout"] + _input_names(has_weight, has_pos_weight)

    def grad(operation, of):
        return _custom(f"ms_bcewl_{operation}_{variant}_{reduction}", names, f"d_{of}", of)

    return (grad("input_grad", "input"), grad("target_grad", "target"),
            grad("weight_grad", "weight") if has_weight else None,
            grad("pos_weight_grad", "pos_weight") if has_pos_weight else None)


def _bprop(grads):
    """A bprop with the forward's signature; it returns one gradient per forward input."""
    dx, dy, dw, dp = grads
    if dw is not None and dp is not None:
        def bprop_weight_pos_weight(x, y, w, p, out, dout):
            return dx(dout, x, y, w, p), dy(dout, x, y, w, p), dw(dout, x, y, w, p), dp(dout, x, y, w, p)
        return bprop_weight_pos_weight
    da = dw if dw is not None else dp
    if da is not None:
        def bprop_one_weight(x, y, a, out, dout):
            return dx(dout, x, y, a), dy(dout, x, y, a), da(dout, x, y, a)
        return bprop_one_weight

    def bprop_plain(x, y, out, dout):
        return dx(dout, x, y), dy(dout, x, y)
    return bprop_plain


def _forward_primitive(has_weight, has_pos_weight, reduction):
    variant = _VARIANTS[(has_weight, has_pos_weight)]
    grads = _gradient_primitives(variant, has_weight, has_pos_weight, reduction)
    return _custom(f"ms_bcewl_forward_{variant}_{reduction}", _input_names(has_weight, has_pos_weight),
                   "loss", "target", bprop=_bprop(grads))


def _host_forward_table():
    return {(has_weight, has_pos_weight, reduction): _forward_primitive(has_weight, has_pos_weight, reduction)
            for has_weight, has_pos_weight in _VARIANTS for reduction in REDUCTIONS}


# ---- Backend choice, made once at import (everything above is the host backend) ----
# With device_target "Ascend" the table holds ms_bcewl/ascend_dispatch.py's losses over the CANN op package's
# kernels instead; same keys and call signatures.
FORWARD = (ascend_dispatch.forward_table(ascend_dispatch.aclnn_kernels()) if ascend_dispatch.runs_on_ascend()
           else _host_forward_table())
