"""The loss: ``binary_cross_entropy_with_logits`` and its Cell ``BCEWithLogitsLoss`` side by side, then the checks
of their arguments. A call checks its arguments, picks the primitive of its variant (in PyNative, the pyboost loss
where _pyboost.py chooses it) and calls it.

The checks run before anything is launched; they are pure functions of names, shapes and dtypes. ``check_arguments``
runs them all as one MindSpore ``constexpr`` over a description of each argument (``describe``: is it a Tensor, its
shape and dtype, or the value itself): graph mode evaluates it while compiling (the error is raised at the call that
compiles the graph), PyNative mode calls it as the plain function it wraps, so a PyNative call pays for a few Python
calls and no launched operator. Tensors themselves never enter the constexpr: graph mode would fold a constexpr that
reads the concrete tensors of a call into constants. With dynamic shapes a graph hands the checks None (or -1) for a
dimension it does not know yet, and None (or a shape holding -2) for a tensor of unknown rank: what is known is
checked here, the rest by the native library when the call runs, with the same sentence.
"""
import threading

import mindspore as ms
from mindspore import Tensor, nn, ops
from mindspore.common.initializer import Initializer
from mindspore.ops.primitive import constexpr

from ms_bcewl._library import DTYPE_NAMES, REDUCTION_CODES, REDUCTIONS
from ms_bcewl._mindspore_internals import cast_arguments
from ms_bcewl._primitives import (GRAPH_FORWARD, PYNATIVE_FORWARD, SUPPORTED_DTYPES, in_bytecode_capture, in_export,
                                  in_graph, standard_loss)
from ms_bcewl._pyboost import PYBOOST

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
    # Graphs fold the constant in_graph() and never compile the PyNative branch (whose `with` they could not).
    if not in_graph():
        key = _checked_key(input, target, weight, pos_weight, reduction)
        return _pynative_loss(input, target, weight, pos_weight, key)
    # Bytecode capture mis-traces a branch beside a one-element tensor (a zero weight gradient, a lost top cell
    # for backward), so it gets the loss as one ast-compiled graph before any branch on an argument.
    if in_bytecode_capture():
        return _GRAPH_LOSS_COMPILED_APART(input, target, weight, pos_weight, reduction)
    return _graph_loss(input, target, weight, pos_weight, reduction)


def _checked_key(input, target, weight, pos_weight, reduction):  # pylint: disable=redefined-builtin
    """The call's key of GRAPH_FORWARD, (has_weight, has_pos_weight, reduction in lower case), once every argument
    check passed."""
    reduction = check_arguments(_API, describe(input), describe(target), describe(weight), describe(pos_weight),
                                reduction)
    # isinstance, not `is None`: bytecode capture cannot decide `is None` on a computed tensor.
    return isinstance(weight, Tensor), isinstance(pos_weight, Tensor), reduction


def _graph_loss(input, target, weight, pos_weight, reduction):  # pylint: disable=redefined-builtin
    """The loss in a graph: the primitive of its variant, or standard operators in an export's graph, which its file
    can carry (_primitives.py)."""
    key = _checked_key(input, target, weight, pos_weight, reduction)
    if in_export():
        return standard_loss(input, target, weight, pos_weight, key[2])
    return _call(GRAPH_FORWARD[key], input, target, weight, pos_weight)


_GRAPH_LOSS_COMPILED_APART = ms.jit(_graph_loss)


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


def _pynative_loss(input, target, weight, pos_weight, key):  # pylint: disable=redefined-builtin
    """The pyboost loss where _pyboost.py chooses it, else the PyNative primitive, called once no other
    thread is in a primitive call of the loss."""
    check_initialized(_API, input, target, weight, pos_weight)
    input, target, weight, pos_weight = cast_arguments(input, target, weight, pos_weight)
    pyboost_loss = PYBOOST.loss()
    loss = None if pyboost_loss is None else pyboost_loss(input, target, weight, pos_weight,
                                                          REDUCTION_CODES[key[2]])
    if loss is not None:  # None: inside a higher-order gradient, which only the primitives' bprops give
        return loss
    with _PRIMITIVE_CALLS_IN_TURN:
        return _call(PYNATIVE_FORWARD[key + (target.dtype,)], input, target, weight, pos_weight)


def _call(primitive, input, target, weight, pos_weight):  # pylint: disable=redefined-builtin
    """Calls a forward primitive of the call's variant with input, target and the weights the caller passed."""
    if isinstance(weight, Tensor) and isinstance(pos_weight, Tensor):
        return primitive(input, target, weight, pos_weight)
    if isinstance(weight, Tensor):
        return primitive(input, target, weight)
    if isinstance(pos_weight, Tensor):
        return primitive(input, target, pos_weight)
    return primitive(input, target)


# ----------------------------------------------------------------------------------------------------------------
# Argument checks, run before anything is launched
# ----------------------------------------------------------------------------------------------------------------

MAX_RANK = 8
_UNKNOWN_DIMS = (None, -1)
_DYNAMIC_RANK = -2


def _prefix(api):
    return f"For '{api}', "


def check_is_tensor(api, name, value, optional):
    """TypeError unless ``value`` is a Tensor (or None where the argument is optional)."""
    _check_description(api, name, describe(value), optional)


def describe(value):
    """(is a Tensor, shape, dtype) of a Tensor, (False, type name, None) of anything else, None of None; graph-mode
    safe."""
    if isinstance(value, Tensor):
        return True, ops.shape(value), value.dtype
    if value is None:
        return None
    return False, _type_name(value), None


def _type_name(value):
    """The type's name, also of a graph's non-constant value (ms.mutable(2.0)): a constexpr receives such a value as
    None, but isinstance still tells its type while the graph compiles."""
    for kind in (bool, int, float, str, tuple, list, dict):
        if isinstance(value, kind):
            return kind.__name__
    return type(value).__name__


def _check_description(api, name, description, optional):
    if description is None and optional:
        return
    if description is None or not description[0]:
        got = "None" if description is None else description[1]
        raise TypeError(f"{_prefix(api)}'{name}' must be a Tensor, but got {got}.")


def check_initialized(api, input, target, weight, pos_weight):  # pylint: disable=redefined-builtin
    """RuntimeError for a Tensor made with an initializer whose data was never made (Tensor(shape=..., init=...)
    without init_data()): PyNative would read whatever its memory holds. Graphs initialise such tensors themselves."""
    named = (("input", input), ("target", target), ("weight", weight), ("pos_weight", pos_weight))
    for name, value in named:
        # Only an Initializer is data to come, as MindSpore's own init_data() reads it: libraries that patch
        # Tensor (mindnlp's mindtorch) keep other values, such as a device name, in `init`.
        if isinstance(getattr(value, "init", None), Initializer):
            raise RuntimeError(f"{_prefix(api)}'{name}' (shape {value.shape}, {value.dtype}) is uninitialized: it was "
                               f"made with an initializer whose data was never created. Call {name}.init_data() "
                               f"before passing it.")


def check_reduction(api, reduction):
    """The reduction in lower case: 'none', 'mean' or 'sum' in any ASCII letter case, as MindSpore's own op takes
    it. TypeError for a non-string reduction, ValueError for an unknown one."""
    if not isinstance(reduction, str):
        raise TypeError(f"{_prefix(api)}'reduction' must be a str, but got {type(reduction).__name__} {reduction!r}.")
    canonical = reduction.lower() if reduction.isascii() else reduction
    if canonical not in REDUCTIONS:
        raise ValueError(f"{_prefix(api)}'reduction' must be one of 'none', 'mean', 'sum' (in any letter case), "
                         f"but got {reduction!r}.")
    return canonical


_DTYPES_IN_WORDS = f"{', '.join(DTYPE_NAMES[:-1])} or {DTYPE_NAMES[-1]}"


def _check_dtype(api, name, shape, dtype):
    if dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"{_prefix(api)}'{name}' must have dtype {_DTYPES_IN_WORDS}, but got {dtype} "
                        f"(shape {shape}).")


def _is_dynamic_rank(shape):
    return shape is None or _DYNAMIC_RANK in shape


def _check_rank(api, name, shape):
    if not _is_dynamic_rank(shape) and len(shape) > MAX_RANK:
        raise ValueError(f"{_prefix(api)}'{name}' has rank {len(shape)} (shape {shape}); "
                         f"at most {MAX_RANK} dimensions are supported.")


def _dims_agree(a, b):
    return a == b or a in _UNKNOWN_DIMS or b in _UNKNOWN_DIMS


def _check_same_shape(api, input_shape, target_shape):
    if _is_dynamic_rank(input_shape) or _is_dynamic_rank(target_shape):
        return
    same = len(input_shape) == len(target_shape) and all(map(_dims_agree, input_shape, target_shape))
    if not same:
        raise ValueError(f"{_prefix(api)}'input' and 'target' must have the same shape, but got "
                         f"input {input_shape} and target {target_shape}.")


def _check_broadcasts_to(api, name, shape, input_shape):
    """numpy broadcasting with trailing alignment that must not enlarge input's shape."""
    if _is_dynamic_rank(shape) or _is_dynamic_rank(input_shape):
        return
    fits = len(shape) <= len(input_shape) and all(
        dim == 1 or _dims_agree(dim, target) for dim, target in zip(reversed(shape), reversed(input_shape)))
    if not fits:
        raise ValueError(f"{_prefix(api)}'{name}' of shape {shape} must broadcast to the shape of 'input' "
                         f"{input_shape} without enlarging it.")


def check_tensors(api, input_info, target_info, weight_info, pos_weight_info):
    """Dtypes, ranks and shapes of the tensor arguments; each *_info is (shape, dtype) or None."""
    named = [("input", input_info), ("target", target_info), ("weight", weight_info),
             ("pos_weight", pos_weight_info)]
    present = [(name, info) for name, info in named if info is not None]
    for name, (shape, dtype) in present:
        _check_dtype(api, name, shape, dtype)
    for name, (shape, _) in present:
        _check_rank(api, name, shape)
    input_shape, target_shape = input_info[0], target_info[0]
    _check_same_shape(api, input_shape, target_shape)
    for name, (shape, _) in present[2:]:
        _check_broadcasts_to(api, name, shape, input_shape)


def _check_all(api, input, target, weight, pos_weight, reduction):  # pylint: disable=redefined-builtin
    described = (("input", input, False), ("target", target, False), ("weight", weight, True),
                 ("pos_weight", pos_weight, True))
    for name, description, optional in described:
        _check_description(api, name, description, optional)
    canonical = check_reduction(api, reduction)
    infos = [None if description is None else description[1:] for _, description, _ in described]
    check_tensors(api, *infos)
    return canonical


# Argument descriptions that passed every check, with their reduction in lower case: a training loop repeats the
# same few, and looking one up costs a tenth of checking it again. Bounded, since each entry is a distinct signature.
_PASSED = {}
_PASSED_LIMIT = 4096


def _well_typed(input, target, weight, pos_weight, reduction):  # pylint: disable=redefined-builtin
    """Whether the tensor arguments are Tensors and the reduction a str: only those are looked up in _PASSED (a
    non-Tensor value may be unhashable). No try/except instead: bytecode capture loops forever on one when the checks
    then raise."""
    return (isinstance(reduction, str) and input is not None and input[0] is True and target is not None
            and target[0] is True and (weight is None or weight[0] is True)
            and (pos_weight is None or pos_weight[0] is True))


@constexpr
def check_arguments(api, input, target, weight, pos_weight, reduction):  # pylint: disable=redefined-builtin
    """Every check of the error contract, in order: types, reduction, dtypes, ranks, shapes; each tensor argument
    comes as its ``describe``. Returns the reduction in lower case."""
    arguments = (api, input, target, weight, pos_weight, reduction)
    cacheable = _well_typed(input, target, weight, pos_weight, reduction)
    canonical = _PASSED.get(arguments) if cacheable else None
    if canonical is not None:
        return canonical
    canonical = _check_all(*arguments)
    if cacheable and len(_PASSED) < _PASSED_LIMIT:
        _PASSED[arguments] = canonical
    return canonical
