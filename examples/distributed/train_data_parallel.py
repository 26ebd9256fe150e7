"""Data-parallel training with ms_bcewl's loss: one worker process per shard of every global batch.

Run through MindSpore's launcher (CPU backend, everything on 127.0.0.1):
    msrun --worker_num=2 --local_worker_num=2 --master_addr=127.0.0.1 --master_port=8118 --join=True \\
        examples/distributed/train_data_parallel.py --out-dir /tmp/dp
To also train single-process on the whole batches and compare (prints PASS or FAIL), run the driver:
    python examples/distributed/check_data_parallel.py

Each worker calls mindspore.communication.init(), sets ParallelMode.DATA_PARALLEL with gradients_mean, and
trains the breast-cancer classifier of examples/common.py with nn.TrainOneStepCell, which all-reduces
(averages) the gradients. Global batch k is rows [k*B, (k+1)*B) of the training part (k cycles over the full
batches); worker r takes its r-th slice of B / workers rows. Each worker saves its trained weights to
<out-dir>/weights_rank<r>.npz.
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
    parser.add_argument("--global-batch", type=common.positive_int, default=64, help="rows per step over all workers")
    parser.add_argument("--out-dir", required=True, help="where weights_rank<r>.npz is written")
    return parser.parse_args()


def shard_batches(x, y, steps, global_batch, rank, workers):
    """This worker's slice of global batch k = step mod (rows // global_batch), for each of `steps` steps."""
    shard, batches = global_batch // workers, len(x) // global_batch
    for step in range(steps):
        start = (step % batches) * global_batch + rank * shard
        yield Tensor(x[start:start + shard]), Tensor(y[start:start + shard])


def train(steps, global_batch, rank=0, workers=1):
    """Trains from the seeded initial weights on this process's shards; returns {parameter name: array}."""
    split = common.breast_cancer()
    if global_batch % workers or global_batch > len(split.x_train):
        raise ValueError(f"the global batch ({global_batch}) must be a multiple of the {workers} workers and at most "
                         f"the {len(split.x_train)} training rows")
    net = common.make_classifier(split.x_train.shape[1])
    loss_fn = ms_bcewl.BCEWithLogitsLoss(pos_weight=Tensor(common.positive_weight(split.y_train)))
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), nn.SGD(net.trainable_params(), LEARNING_RATE))
    for x, y in shard_batches(split.x_train, split.y_train, steps, global_batch, rank, workers):
        loss = step(x, y)
    print(f"rank {rank}/{workers}: {steps} steps on {global_batch // workers} rows each, last loss {float(loss):.6f}",
          flush=True)
    return {parameter.name: parameter.asnumpy() for parameter in net.trainable_params()}


def main():
    args = parse_args()
    common.set_mode(ms.GRAPH_MODE)
    init()
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    rank, workers = get_rank(), get_group_size()
    weights = train(args.steps, args.global_batch, rank, workers)
    os.makedirs(args.out_dir, exist_ok=True)
    np.savez(os.path.join(args.out_dir, f"weights_rank{rank}.npz"), **weights)


if __name__ == "__main__":
    main()
