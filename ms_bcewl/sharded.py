"""The BCEWithLogits loss of a batch or a class range split over workers: each worker passes its shard and gets the
loss of the whole, with the gradients of one process's loss for its shard.

Written against MindSpore's public communication API (``mindspore.communication``, ``ops.AllReduce``), so it runs
wherever MindSpore's collectives do; it has been run only on the CPU backend with ``msrun`` (docs/distributed.md).
Importing this module initialises no communication: the collectives are made at the first call.
"""
from mindspore import ops
from mindspore.common import dtype as mstype
from mindspore.communication import GlobalComm

from ms_bcewl import BCEWithLogitsLoss, binary_cross_entropy_with_logits
from ms_bcewl.bce_with_logits import check_arguments, describe

_API = "sharded_binary_cross_entropy_with_logits"


def _sum_over_workers(group):
    """The collective of a group. Without mindspore.communication.init() MindSpore's AllReduce kills the process
    (SIGSEGV) when it runs, so that is refused here, at the call."""
    if not GlobalComm.INITED:
        raise RuntimeError(f"For '{_API}', reduction 'mean' and 'sum' add the workers' sums with an AllReduce, which "
                           "needs mindspore.communication.init() first: call it in every worker (started with "
                           "msrun, docs/distributed.md). For the loss of one process, use "
                           "ms_bcewl.BCEWithLogitsLoss or binary_cross_entropy_with_logits.")
    # Made per call: a cache (functools.lru_cache) is a call bytecode capture cannot trace, and a graph break inside
    # a differentiated function gives zero gradients.
    return ops.AllReduce(ops.ReduceOp.SUM, GlobalComm.WORLD_COMM_GROUP if group is None else group)


def _with_the_gradient_of(local_sum, total):
    """total, differentiated as local_sum. Every worker's shard is one term of the global loss, so each term's
    gradient is the upstream gradient itself; AllReduce's own backward would all-reduce it again and multiply every
    gradient by the number of workers. stop_gradient, not a Cell with a bprop, which bytecode capture loses."""
    return local_sum + ops.stop_gradient(total - local_sum)


def _global_sum(local_sum, group):
    return _with_the_gradient_of(local_sum, _sum_over_workers(group)(local_sum))


def _global_mean(local_sum, count, group):
    """sum / count over all workers, from one collective, which no gradient passes back through."""
    totals = ops.stop_gradient(_sum_over_workers(group)(ops.stack((local_sum, count))))
    return _with_the_gradient_of(local_sum, totals[0]) / totals[1]


def sharded_binary_cross_entropy_with_logits(  # pylint: disable=redefined-builtin
        input, target, weight=None, pos_weight=None, reduction="mean", group=None):
    r"""BCEWithLogits loss of a tensor split over the workers of ``group``, called by every worker with its shard.

    Split the batch (rows) or the classes (columns) any way, even unevenly or with empty shards; slice ``weight``
    and ``pos_weight`` along with ``input`` where they have the split dimension and pass them whole where they
    broadcast along it. Every worker must call it, with the same ``reduction``, at the same point of its step.

    - ``'mean'``: the loss of the whole tensor, sum over all workers / the number of elements over all workers (not
      the mean of per-worker means, which differs when shards differ in size), the same on every worker.
    - ``'sum'``: the sum over all workers, the same on every worker.
    - ``'none'``: this worker's elementwise loss; no communication.

    Values, dtypes, broadcasting and errors are those of :func:`ms_bcewl.binary_cross_entropy_with_logits` on the
    shard, and the gradients of input, target, weight and pos_weight are this shard's part of the single-process
    gradients (not multiplied by the number of workers). The gradient of a tensor replicated on every worker, such
    as a weight kept whole in a batch split or the parameters of the layers before the loss, is this worker's part
    of a sum: add the parts over the workers (all-reduce with SUM, never a mean); docs/distributed.md shows how.
    The local sums and element counts pass between workers in float32 (the only wide dtype of the CPU backend's
    AllReduce), so mean and sum agree with one process within a few float32 roundings; a float16 or bfloat16 loss
    is rounded to its dtype once, at the end, as in one process.

    Runs in GRAPH_MODE (compiled train steps) and PyNative mode. Run only on MindSpore's CPU backend with msrun;
    written against the public communication API for every backend whose collectives MindSpore runs.

    Args:
        input, target, weight, pos_weight: this worker's shards, as for
            :func:`ms_bcewl.binary_cross_entropy_with_logits`.
        reduction (str): ``'none'``, ``'mean'`` or ``'sum'``, in any letter case.
        group (str, optional): the communication group of the workers sharing the tensor; the world group if None.

    Returns:
        Tensor of target's dtype: this shard's shape for ``'none'``, 0-d otherwise.

    Raises:
        TypeError, ValueError: as :func:`ms_bcewl.binary_cross_entropy_with_logits`, for this worker's shards.
    """
    reduction = check_arguments(_API, describe(input), describe(target), describe(weight), describe(pos_weight),
                                reduction)
    if reduction == "none":
        return binary_cross_entropy_with_logits(input, target, weight, pos_weight, "none")
    # float32 sums: a float16 shard's sum could overflow where the whole mean does not.
    local_sum = binary_cross_entropy_with_logits(input, ops.cast(target, mstype.float32), weight, pos_weight, "sum")
    if reduction == "sum":
        total = _global_sum(local_sum, group)
    else:
        total = _global_mean(local_sum, ops.scalar_to_tensor(ops.size(input), mstype.float32), group)
    return ops.cast(total, target.dtype)


class ShardedBCEWithLogitsLoss(BCEWithLogitsLoss):
    r"""The Cell of :func:`sharded_binary_cross_entropy_with_logits`:
    ``ShardedBCEWithLogitsLoss(reduction='mean', weight=None, pos_weight=None, group=None)``, called as
    ``loss(input, target)`` with this worker's shards; its arguments are checked as those of
    :class:`ms_bcewl.BCEWithLogitsLoss`.

    ``weight`` and ``pos_weight`` are this worker's slices (or whole tensors where they broadcast along the split
    dimension), Tensors or Parameters. A Parameter slice owned by this worker alone gets its own gradient: create
    it with ``layerwise_parallel=True`` so that MindSpore's data-parallel gradient reduction leaves it alone
    (docs/distributed.md). Run only on MindSpore's CPU backend with msrun.
    """

    def __init__(self, reduction="mean", weight=None, pos_weight=None, group=None):
        super().__init__(reduction, weight, pos_weight)
        self.group = group

    def construct(self, input, target):  # pylint: disable=redefined-builtin
        return sharded_binary_cross_entropy_with_logits(input, target, self.weight, self.pos_weight, self.reduction,
                                                        self.group)
