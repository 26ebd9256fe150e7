"""PyNative mixed precision (``Cell.to_float``, hence ``mindspore.amp.auto_mixed_precision`` O2 and O3), applied by
ms_bcewl to its own arguments, the same way on both PyNative paths.

MindSpore's rule for a primitive: a Cell that has a mixed-precision type (``to_float`` sets it on the Cell and every
Cell inside it) pushes that type on the PyNative executor's stack when it is called and pops it on return; while the
top of that stack is FP16, FP32 or BF16, the executor casts every floating-point tensor argument of an ops.Custom
primitive (Parameters included) to that dtype, recording the Cast for autograd. A pyboost operator (the C++
``PyboostRunner`` call of pyboost_entries.cpp) never passes through that step, and the primitives pick their output
dtype from the target before the executor casts it; so ms_bcewl casts first, by the same rule, and the executor then
finds nothing left to cast.

MindSpore offers no getter for the stack. Its top is the type of the innermost Cell being called whose type is set
(``Cell._complex_call`` pushes it), which the calling thread's frames show.
"""
import sys

from mindspore import nn, ops
from mindspore._c_expression import MixedPrecisionType  # pylint: disable=no-name-in-module
from mindspore.common import dtype as mstype

_CELL_CALL = nn.Cell._complex_call.__code__  # pylint: disable=protected-access
_DTYPES = {MixedPrecisionType.FP16: mstype.float16, MixedPrecisionType.FP32: mstype.float32,
           MixedPrecisionType.BF16: mstype.bfloat16}
_FLOAT_DTYPES = (mstype.float16, mstype.float32, mstype.float64, mstype.bfloat16)


def current_dtype():
    """The dtype MindSpore casts a primitive's floating-point arguments to at this point of PyNative, or None."""
    frame = sys._getframe(1)  # pylint: disable=protected-access
    while frame is not None:
        if frame.f_code is _CELL_CALL:
            mixed = getattr(frame.f_locals.get("self"), "mixed_precision_type", None)
            if mixed is not None:  # the innermost Cell that pushed a type; NOTSET turns the casts off
                return _DTYPES.get(mixed)
        frame = frame.f_back
    return None


def cast_arguments(*tensors):
    """The tensors (None passes through) as a primitive called here would receive them."""
    dtype = current_dtype()
    if dtype is None:
        return tensors
    return tuple(ops.cast(tensor, dtype) if _is_cast(tensor, dtype) else tensor for tensor in tensors)


def _is_cast(tensor, dtype):
    return tensor is not None and tensor.dtype != dtype and tensor.dtype in _FLOAT_DTYPES
