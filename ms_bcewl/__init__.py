"""ms_bcewl: BCEWithLogits loss for MindSpore as an AOT custom operator (aclnn-style adapter + kernels)."""
from ms_bcewl.functional import binary_cross_entropy_with_logits
from ms_bcewl.loss import BCEWithLogitsLoss
from ms_bcewl.distributed import ShardedBCEWithLogitsLoss, sharded_binary_cross_entropy_with_logits

__version__ = "0.1.0"
__all__ = ["binary_cross_entropy_with_logits", "BCEWithLogitsLoss", "sharded_binary_cross_entropy_with_logits",
           "ShardedBCEWithLogitsLoss", "__version__"]
