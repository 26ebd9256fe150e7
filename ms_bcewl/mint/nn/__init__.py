"""``ms_bcewl.mint.nn``: the loss Cell in ``mindspore.mint.nn``'s argument order, and ``functional``."""
from ms_bcewl import bce_with_logits
from ms_bcewl.mint.nn import functional


# A subclass of the ops-order Cell: AMP O1's rewrite, which keeps instances of that Cell out (isinstance), calls this
# one as it is too.
class BCEWithLogitsLoss(bce_with_logits.BCEWithLogitsLoss):
    r"""BCEWithLogits loss as a Cell in ``mindspore.mint.nn.BCEWithLogitsLoss``'s order:
    ``BCEWithLogitsLoss(weight=None, reduction='mean', pos_weight=None)``, called as ``loss(input, target)``.

    The Cell of :class:`ms_bcewl.BCEWithLogitsLoss` with its arguments in that order: ``weight`` and ``pos_weight``
    may be Tensors or Parameters, which receive real gradients and train.
    """

    def __init__(self, weight=None, reduction="mean", pos_weight=None):
        super().__init__(reduction, weight, pos_weight)


__all__ = ["BCEWithLogitsLoss", "functional"]
