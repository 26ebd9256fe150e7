"""ms_bcewl: BCEWithLogits loss for MindSpore as an AOT custom operator (aclnn-style adapter + kernels)."""
from ms_bcewl.bcewl_amp_rewrite import keep_out_of_rewrite
from ms_bcewl.bcewl_bytecode_capture import allow_bytecode_capture_to_inline
from ms_bcewl.bcewl_functional import binary_cross_entropy_with_logits
from ms_bcewl.bcewl_loss import BCEWithLogitsLoss
from ms_bcewl.bcewl_distributed import ShardedBCEWithLogitsLoss, sharded_binary_cross_entropy_with_logits

allow_bytecode_capture_to_inline(__name__)
keep_out_of_rewrite(BCEWithLogitsLoss, ShardedBCEWithLogitsLoss)

__version__ = "0.1.0"
__all__ = ["binary_cross_entropy_with_logits", "BCEWithLogitsLoss", "sharded_binary_cross_entropy_with_logits",
           "ShardedBCEWithLogitsLoss", "__version__"]
