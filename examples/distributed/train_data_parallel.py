"""Data-parallel training with ms_bcewl's loss: one worker process per shard of every global batch.

Run through MindSpore's launcher (CPU backend, everything on 127.0.0.1):
    msrun --worker_num=2 --local_worker_num=2 --master_addr=127.0.0.1 --master_port=8118 --join=True \\
        examples/distributed/train_data_parallel.py --out-dir /tmp/dp
To also train single-process on the whole batches and compare (prints PASS or FAIL), run the driver:
    python examples/distributed/check_data_parallel.py

Each worker calls mindspore.communication.init(), sets ParallelMode.DATA_PARALLEL with gradients_mean=False, and
trains the breast-cancer classifier of examples/common.py with ms_bcewl.ShardedBCEWithLogitsLoss and
nn.TrainOneStepCell. The loss is the mean over the whole global batch on every worker, and each worker's gradient
is its shard's part of the whole batch's gradient, so TrainOneStepCell must sum the parts (not average them).
Global batch k is rows [k*B, (k+1)*B) of the training part (k cycles over the full batches); worker r takes rows
[r*B // workers, (r+1)*B // workers) of it: shards differ by a row when B is not a multiple of the workers
(the default 61 rows give 31 and 30). A per-worker mean with averaged gradients would weigh the rows of the smaller
shard more. Each worker saves its trained weights to <out-dir>/weights_rank<r>.npz.
"""
import argparse
import os
import sys

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn
from mindspore.communication import get_group_size, get_rank, init

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402  (examples/common.py)

import ms_bcewl  # noqa: E402

LEARNING_RATE = 0.1


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=common.positive_int, default=10)
    parser.add_argument("--global-batch", type=common.positive_int, default=61, help="rows per step over all workers")
    parser.add_argument("--out-dir", required=True, help="where weights_rank<r>.npz is written")
    return parser.parse_args()


def shard_rows(global_batch, rank, workers):
    """[first, last) of this worker's rows in a global batch: sizes differ by at most one."""
    return rank * global_batch // workers, (rank + 1) * global_batch // workers


def shard_batches(x, y, steps, global_batch, rank, workers):
    """This worker's slice of global batch k = step mod (rows // global_batch), for each of `steps` steps."""
    first, last = shard_rows(global_batch, rank, workers)
    batches = len(x) // global_batch
    for step in range(steps):
        start = (step % batches) * global_batch
        yield Tensor(x[start + first:start + last]), Tensor(y[start + first:start + last])


def train(steps, global_batch, rank=0, workers=1, loss_class=ms_bcewl.BCEWithLogitsLoss):
    """Trains from the seeded initial weights on this process's shards; returns {parameter name: array}."""
    split = common.breast_cancer()
    if global_batch < workers or global_batch > len(split.x_train):
        raise ValueError(f"the global batch ({global_batch}) must be at least the {workers} workers and at most "
                         f"the {len(split.x_train)} training rows")
    net = common.make_classifier(split.x_train.shape[1])
    loss_fn = loss_class(pos_weight=Tensor(common.positive_weight(split.y_train)))
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), nn.SGD(net.trainable_params(), LEARNING_RATE))
    for x, y in shard_batches(split.x_train, split.y_train, steps, global_batch, rank, workers):
        loss = step(x, y)
    first, last = shard_rows(global_batch, rank, workers)
    print(f"rank {rank}/{workers}: {steps} steps on {last - first} of {global_batch} rows each, last loss "
          f"{float(loss):.6f}", flush=True)
    return {parameter.name: parameter.asnumpy() for parameter in net.trainable_params()}


def main():
    args = parse_args()
    common.set_mode(ms.GRAPH_MODE)
    init()
    # Every worker's loss is the whole batch's: the gradient parts are summed, not averaged.
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=False)
    rank, workers = get_rank(), get_group_size()
    weights = train(args.steps, args.global_batch, rank, workers, ms_bcewl.ShardedBCEWithLogitsLoss)
    os.makedirs(args.out_dir, exist_ok=True)
    np.savez(os.path.join(args.out_dir, f"weights_rank{rank}.npz"), **weights)


if __name__ == "__main__":
    main()
