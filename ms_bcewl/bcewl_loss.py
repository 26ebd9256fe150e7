"""ms_bcewl.BCEWithLogitsLoss: the nn.Cell, a drop-in for mindspore.nn.BCEWithLogitsLoss."""
from mindspore import nn

from ms_bcewl.bcewl_functional import binary_cross_entropy_with_logits
from ms_bcewl.bcewl_validation import check_is_tensor, check_reduction

_API = "BCEWithLogitsLoss"


class BCEWithLogitsLoss(nn.Cell):
    r"""BCEWithLogits loss as a Cell: ``BCEWithLogitsLoss(reduction='mean', weight=None, pos_weight=None)``,
    called as ``loss(input, target)``.

    Same arguments and order as ``mindspore.nn.BCEWithLogitsLoss``. ``weight`` and ``pos_weight`` may be Tensors
    (constants) or Parameters, which receive real gradients and train. See
    :func:`ms_bcewl.binary_cross_entropy_with_logits` for the formula, dtypes, shapes and errors.
    """

    def __init__(self, reduction="mean", weight=None, pos_weight=None):
        super().__init__()
        check_reduction(_API, reduction)
        check_is_tensor(_API, "weight", weight, True)
        check_is_tensor(_API, "pos_weight", pos_weight, True)
        self.reduction = reduction
        self.weight = weight
        self.pos_weight = pos_weight

    def construct(self, input, target):  # pylint: disable=redefined-builtin
        return binary_cross_entropy_with_logits(input, target, self.weight, self.pos_weight, self.reduction)
