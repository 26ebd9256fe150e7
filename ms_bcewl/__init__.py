"""ms_bcewl: BCEWithLogits loss for MindSpore as an AOT custom operator (aclnn-style adapter + kernels)."""
from ms_bcewl._mindspore_internals import allow_bytecode_capture_to_inline, keep_out_of_rewrite
from ms_bcewl.bce_with_logits import BCEWithLogitsLoss, binary_cross_entropy_with_logits
from ms_bcewl.sharded import ShardedBCEWithLogitsLoss, sharded_binary_cross_entropy_with_logits
from ms_bcewl import mint

allow_bytecode_capture_to_inline(__name__)
keep_out_of_rewrite(__name__, BCEWithLogitsLoss, ShardedBCEWithLogitsLoss)

__version__ = "0.1.0"
__all__ = ["binary_cross_entropy_with_logits", "BCEWithLogitsLoss", "sharded_binary_cross_entropy_with_logits",
           "ShardedBCEWithLogitsLoss", "mint", "__version__"]
