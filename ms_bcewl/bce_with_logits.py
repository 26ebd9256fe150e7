"""The loss: ``binary_cross_entropy_with_logits`` (validate, pick the primitive of the variant or, in PyNative, the
pyboost loss where _pyboost.py chooses it, call it) and its Cell ``BCEWithLogitsLoss``, side by side."""
import threading

from mindspore import Tensor, nn

from ms_bcewl._mindspore_internals import cast_arguments
from ms_bcewl._primitives import GRAPH_FORWARD, PYNATIVE_FORWARD, in_export, in_graph, standard_loss
from ms_bcewl._pyboost import PYBOOST
from ms_bcewl._checks import (REDUCTION_CODES, check_arguments, check_initialized, check_is_tensor, check_reduction,
                             describe)

_API = "binary_cross_entropy_with_logits"
_CELL_API = "BCEWithLogitsLoss"
# MindSpore's PyNative runtime compiles the first call of a primitive's signature into a cache it does not guard
# against other threads: concurrent calls got other threads' values, raised or crashed. So primitive calls reach
# MindSpore one at a time, as from a single thread; their kernels still run asynchronously.
_PRIMITIVE_CALLS_IN_TURN = threading.Lock()


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction="mean"):  # pylint: disable=redefined-builtin
    r"""Binary cross-entropy on logits with the sigmoid fused in; a drop-in for
    ``mindspore.ops.binary_cross_entropy_with_logits`` (same arguments, same order).

    .. math::
        \ell = w \cdot \big((1 - y)\,x - (1 + (p - 1)\,y)\,\log\sigma(x)\big)

    computed in float32 with a log-sigmoid that is stable for every finite x, then reduced.

    Args:
        input (Tensor): logits x; float16, float32 or bfloat16, rank at most 8.
        target (Tensor): y, same shape as ``input``; values outside [0, 1] are accepted.
        weight (Tensor, optional): w, broadcast to ``input`` (numpy rules, never enlarging it).
        pos_weight (Tensor, optional): p, the weight of positive examples, broadcast like ``weight``.
        reduction (str): ``'none'``, ``'mean'`` (sum / numel(input)) or ``'sum'``, in any letter case.

    Returns:
        Tensor of target's dtype: input's shape for ``'none'``, 0-d otherwise. Empty input gives an empty
        tensor, NaN (mean) or 0 (sum). Gradients exist for all four tensors (a weight Parameter trains).

    Raises:
        TypeError: an argument is not a Tensor, has an unsupported dtype, or reduction is not a str.
        ValueError: shapes do not match or broadcast, rank above 8, or an unknown reduction.
    """
    reduction = check_arguments(_API, describe(input), describe(target), describe(weight), describe(pos_weight),
                                reduction)
    # isinstance, not `is None`: bytecode capture (jit(capture_mode="bytecode")) cannot decide `is None` on a
    # computed tensor and breaks the graph there, and a break inside a differentiated function loses gradients.
    has_weight, has_pos_weight = isinstance(weight, Tensor), isinstance(pos_weight, Tensor)
    variant = (has_weight, has_pos_weight, reduction)
    # Graphs fold the constant in_graph() and never compile the PyNative branch (whose `with` they could not).
    # An export's graph takes standard operators, which its file can carry (_primitives.py).
    if in_graph():
        if in_export():
            loss = standard_loss(input, target, weight, pos_weight, reduction)
        else:
            loss = _call(GRAPH_FORWARD[variant], input, target, weight, pos_weight)
    else:
        loss = _pynative_loss(input, target, weight, pos_weight, variant, reduction)
    return loss


class BCEWithLogitsLoss(nn.Cell):
    r"""BCEWithLogits loss as a Cell: ``BCEWithLogitsLoss(reduction='mean', weight=None, pos_weight=None)``,
    called as ``loss(input, target)``.

    Same arguments and order as ``mindspore.nn.BCEWithLogitsLoss``. ``weight`` and ``pos_weight`` may be Tensors
    (constants) or Parameters, which receive real gradients and train. See
    :func:`ms_bcewl.binary_cross_entropy_with_logits` for the formula, dtypes, shapes and errors.
    """

    def __init__(self, reduction="mean", weight=None, pos_weight=None):
        super().__init__()
        check_reduction(_CELL_API, reduction)
        check_is_tensor(_CELL_API, "weight", weight, True)
        check_is_tensor(_CELL_API, "pos_weight", pos_weight, True)
        self.reduction = reduction
        self.weight = weight
        self.pos_weight = pos_weight

    def construct(self, input, target):  # pylint: disable=redefined-builtin
        return binary_cross_entropy_with_logits(input, target, self.weight, self.pos_weight, self.reduction)


def _pynative_loss(input, target, weight, pos_weight, variant, reduction):  # pylint: disable=redefined-builtin
    """The pyboost loss where _pyboost.py chooses it, else the PyNative primitive, called once no other
    thread is in a primitive call of the loss."""
    check_initialized(_API, input, target, weight, pos_weight)
    input, target, weight, pos_weight = cast_arguments(input, target, weight, pos_weight)
    pyboost_loss = PYBOOST.loss()
    loss = None if pyboost_loss is None else pyboost_loss(input, target, weight, pos_weight,
                                                          REDUCTION_CODES[reduction])
    if loss is not None:  # None: inside a higher-order gradient, which only the primitives' bprops give
        return loss
    with _PRIMITIVE_CALLS_IN_TURN:
        return _call(PYNATIVE_FORWARD[variant + (target.dtype,)], input, target, weight, pos_weight)


def _call(primitive, input, target, weight, pos_weight):  # pylint: disable=redefined-builtin
    """Calls a forward primitive with the optional inputs that are present (absent ones are not passed)."""
    has_weight, has_pos_weight = isinstance(weight, Tensor), isinstance(pos_weight, Tensor)
    if not has_weight and not has_pos_weight:
        return primitive(input, target)
    if not has_pos_weight:
        return primitive(input, target, weight)
    if not has_weight:
        return primitive(input, target, pos_weight)
    return primitive(input, target, weight, pos_weight)
