"""The loss in ``mindspore.mint``'s argument order, where ``mindspore.mint`` has it:
``ms_bcewl.mint.nn.functional.binary_cross_entropy_with_logits(input, target, weight=None, reduction='mean',
pos_weight=None)`` and ``ms_bcewl.mint.nn.BCEWithLogitsLoss(weight=None, reduction='mean', pos_weight=None)``.

Code written against ``mindspore.mint`` swaps ``mindspore.mint`` for ``ms_bcewl.mint`` in the import or the call.
Both call ``ms_bcewl.binary_cross_entropy_with_logits``: the same checks, errors, values and gradients.
"""
from ms_bcewl.mint import nn

__all__ = ["nn"]
