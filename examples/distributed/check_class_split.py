"""Check a multi-label head split by class: msrun workers, each owning some of the labels, must end with the
single-process weights.

Run:  pip install ".[examples]"        # scikit-learn for the data
      python examples/distributed/check_class_split.py [--workers 2] [--steps 20]

The data are scikit-learn's bundled handwritten digits (1797 images of 8 x 8 pixels) with one binary label per
digit, predicted by ten independent sigmoid outputs. The network is a replicated body, Dense(64, 32) + ReLU, and a
head Dense(32, 10) whose outputs are split by class over the workers (worker r owns digits
[r*10 // workers, (r+1)*10 // workers)), together with a trainable pos_weight slice of those labels. Every worker
sees every row of each batch; ms_bcewl.ShardedBCEWithLogitsLoss makes each worker's loss the mean over all rows and
all ten labels. Under DATA_PARALLEL with gradients_mean=False, nn.TrainOneStepCell sums the body's gradient parts
over the workers and leaves the head and pos_weight slices, marked layerwise_parallel, with their own.

This script launches itself with msrun (`--out-dir`, CPU backend, master 127.0.0.1 on a free port), then trains the
whole network in this process without communication and compares: it prints each worker's largest difference from
the single-process weights of its classes and the body, and `PASS` (within 1e-5) or `FAIL`; exit code 0 or 1.
"""
import argparse
import os
import sys
import tempfile
from pathlib import Path

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402  (examples/common.py)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import msrun  # noqa: E402

import ms_bcewl  # noqa: E402

DIGITS, HIDDEN, BATCH, LEARNING_RATE, TOLERANCE = 10, 32, 128, 0.5, 1e-5
CLASS_SHARDED = ("head.weight", "head.bias", "loss_fn.pos_weight")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=common.positive_int, default=2)
    parser.add_argument("--steps", type=common.positive_int, default=20)
    parser.add_argument("--timeout", type=int, default=300, help="seconds msrun may take")
    parser.add_argument("--out-dir", help="run as an msrun worker, saving its weights there")
    return parser.parse_args()


def digits():
    """Standardised training features and one binary label column per digit."""
    from sklearn.datasets import load_digits

    data = load_digits()
    split = common.split_and_standardise(data.data, data.target, 0.25, 0)
    return split.x_train, (split.y_train == np.arange(DIGITS)).astype(np.float32)


def class_range(rank, workers):
    return slice(rank * DIGITS // workers, (rank + 1) * DIGITS // workers)


def initial_weights(x, labels):
    """The seeded initial weights of the whole network and pos_weight = negatives / positives per digit."""
    rng = np.random.default_rng(0)
    shapes = {"body.weight": (HIDDEN, x.shape[1]), "body.bias": (HIDDEN,), "head.weight": (DIGITS, HIDDEN),
              "head.bias": (DIGITS,)}
    weights = {name: (rng.normal(size=shape) * 0.1).astype(np.float32) for name, shape in shapes.items()}
    weights["loss_fn.pos_weight"] = common.positive_weight(labels)
    return weights


class DigitsHead(nn.Cell):
    """body -> ReLU -> head -> loss; the head and pos_weight hold the classes given to this process."""

    def __init__(self, weights, loss_class, sharded):
        super().__init__()
        self.body = nn.Dense(weights["body.weight"].shape[1], HIDDEN, Tensor(weights["body.weight"]),
                             Tensor(weights["body.bias"]))
        self.head = nn.Dense(HIDDEN, len(weights["head.bias"]), Tensor(weights["head.weight"]),
                             Tensor(weights["head.bias"]))
        pos_weight = Parameter(Tensor(weights["loss_fn.pos_weight"]), name="pos_weight", layerwise_parallel=sharded)
        self.loss_fn = loss_class(pos_weight=pos_weight)
        for parameter in self.head.get_parameters():
            parameter.layerwise_parallel = sharded  # owned by this worker: no gradient all-reduce
        self.relu = nn.ReLU()

    def construct(self, x, y):
        return self.loss_fn(self.head(self.relu(self.body(x))), y)


def train(steps, classes=slice(None), loss_class=ms_bcewl.BCEWithLogitsLoss, sharded=False):
    """`steps` SGD steps on batches of BATCH rows (every row, the labels of `classes`); {name: weights}."""
    x, labels = digits()
    weights = initial_weights(x, labels)
    weights.update({name: weights[name][classes] for name in CLASS_SHARDED})
    net = DigitsHead(weights, loss_class, sharded)
    step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), LEARNING_RATE))
    batches = len(x) // BATCH
    for index in range(steps):
        rows = slice((index % batches) * BATCH, (index % batches + 1) * BATCH)
        loss = step(Tensor(x[rows]), Tensor(labels[rows, classes]))
    owned = "all digits" if classes.stop is None else f"digits {classes.start} to {classes.stop - 1}"
    print(f"{owned}: {steps} steps, last loss {float(loss):.6f}", flush=True)
    return {name: parameter.asnumpy() for name, parameter in net.parameters_and_names()}


def run_worker(steps, out_dir):
    from mindspore.communication import get_group_size, get_rank, init

    init()
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=False)
    rank = get_rank()
    classes = class_range(rank, get_group_size())
    weights = train(steps, classes, ms_bcewl.ShardedBCEWithLogitsLoss, sharded=True)
    np.savez(Path(out_dir) / f"weights_rank{rank}.npz", **weights)


def largest_difference(worker, reference, classes):
    return max(float(np.abs(worker[name] - (value[classes] if name in CLASS_SHARDED else value)).max())
               for name, value in reference.items())


def main():
    args = parse_args()
    common.set_mode(ms.GRAPH_MODE)
    if args.out_dir:
        run_worker(args.steps, args.out_dir)
        return
    with tempfile.TemporaryDirectory(prefix="ms_bcewl_classes_") as temporary:
        out_dir = Path(temporary)
        workers = msrun.run_workers(args.workers, out_dir, args.timeout, Path(__file__).resolve(),
                                    f"--steps={args.steps}", f"--out-dir={out_dir}", shown_prefix="digits ")
    reference = train(args.steps)
    differences = [largest_difference(weights, reference, class_range(rank, args.workers))
                   for rank, weights in enumerate(workers)]
    msrun.exit_with_verdict(differences, TOLERANCE, f"{args.workers} workers splitting the 10 digit labels")


if __name__ == "__main__":
    main()
