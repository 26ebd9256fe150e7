"""``ms_bcewl.mint.nn.functional``: the loss function in ``mindspore.mint.nn.functional``'s argument order."""
from ms_bcewl import bce_with_logits


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean", pos_weight=None):  # pylint: disable=redefined-builtin
    r"""Binary cross-entropy on logits in ``mindspore.mint.nn.functional.binary_cross_entropy_with_logits``'s order:
    ``(input, target, weight=None, reduction='mean', pos_weight=None)``.

    :func:`ms_bcewl.binary_cross_entropy_with_logits` with its arguments in that order: the same formula, dtypes,
    shapes, gradients and errors.
    """
    return bce_with_logits.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


__all__ = ["binary_cross_entropy_with_logits"]
