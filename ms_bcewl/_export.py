"""The loss in exported files (mindspore.export, mindspore.onnx.export): MindSpore's standard operators.

An exported file cannot carry the AOT primitives. MINDIR stores a primitive's 'file:function' with the library's
absolute path, which MindSpore's kernels resolve with realpath(3) on the loading machine (nothing relative to the
package, no environment variable), so the file would load only where ms_bcewl sits at the exporting machine's
path; ONNX writes the entry point as an operator type no runtime knows. So while MindSpore compiles for an export,
the loss is composed of operators that MINDIR and ONNX both carry and every MindSpore and ONNX runtime has
(docs/contract.md §17 Export). Training and every other compile keep the primitives.
"""
from mindspore import Tensor, ops
from mindspore.common import dtype as mstype
from mindspore.ops import PrimitiveWithInfer

from ms_bcewl._mindspore_internals import exporting

class _InExport(PrimitiveWithInfer):
    """``in_export()`` is True in a graph compiled for an export, which infers this constant primitive's value
    once per compile; a call (PyNative) is never an export."""

    def __init__(self):
        super().__init__("ms_bcewl_in_export")
        self.set_const_prim(True)

    def __infer__(self):
        return {"dtype": None, "shape": None, "value": exporting()}

    def __call__(self):
        return False


in_export = _InExport()

_SOFTPLUS = ops.Softplus()  # ONNX Softplus: log(1 + exp(v)), stable for every finite v
_MEAN = ops.ReduceMean(keep_dims=False)
_SUM = ops.ReduceSum(keep_dims=False)


def standard_loss(input, target, weight, pos_weight, reduction):  # pylint: disable=redefined-builtin
    """docs/contract.md §2's loss from standard operators in float32, reduced, cast to the target's dtype. As the
    kernels do, it is l = w * ((1 - y) * softplus(x) + p * y * softplus(-x)), softplus(v) = -logsig(-v): no
    product as large as (1 + (p - 1) * y) * x, which overflows float32 where the loss fits."""
    x = ops.cast(input, mstype.float32)
    y = ops.cast(target, mstype.float32)
    positive = y if not isinstance(pos_weight, Tensor) else ops.cast(pos_weight, mstype.float32) * y
    loss = (1.0 - y) * _SOFTPLUS(x) + positive * _SOFTPLUS(-x)
    if isinstance(weight, Tensor):
        loss = ops.cast(weight, mstype.float32) * loss
    if reduction == "mean":
        loss = _MEAN(loss)
    elif reduction == "sum":
        loss = _SUM(loss)
    return ops.cast(loss, target.dtype)
