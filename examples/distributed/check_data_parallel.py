"""Check data-parallel training: msrun workers on shards must end with the single-process weights.

Run:  pip install ".[examples]"        # scikit-learn for the data
      python examples/distributed/check_data_parallel.py [--workers 2] [--steps 10]
(about 40 s with two workers on two cores)

It launches train_data_parallel.py with msrun (MindSpore's launcher) on the CPU backend, master 127.0.0.1 on a
free port, then trains the same classifier in this process, without communication, on the whole global batches.
The workers' sharded loss is the whole batch's mean and their summed gradients are the whole batch's gradient,
even with shards of different sizes (the default global batch of 61 rows), so every worker's trained weights
must equal the single-process ones: it prints the largest difference and `PASS` (within 1e-5) or `FAIL`, and
exits with 0 or 1. msrun's and the workers' logs are printed when msrun fails.
"""
import argparse
import os
import sys
import tempfile
from pathlib import Path

import mindspore as ms
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402  (examples/common.py)

WORKER_SCRIPT = Path(__file__).resolve().parent / "train_data_parallel.py"
sys.path.insert(0, str(WORKER_SCRIPT.parent))
import msrun  # noqa: E402
import train_data_parallel  # noqa: E402

TOLERANCE = 1e-5


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=common.positive_int, default=2)
    parser.add_argument("--steps", type=common.positive_int, default=10)
    parser.add_argument("--global-batch", type=common.positive_int, default=61)
    parser.add_argument("--timeout", type=int, default=300, help="seconds msrun may take")
    return parser.parse_args()


def largest_difference(worker_weights, reference):
    return max(float(np.abs(worker_weights[name] - value).max()) for name, value in reference.items())


def main():
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="ms_bcewl_dp_") as temporary:
        out_dir = Path(temporary)
        workers = msrun.run_workers(args.workers, out_dir, args.timeout, WORKER_SCRIPT, f"--steps={args.steps}",
                                    f"--global-batch={args.global_batch}", f"--out-dir={out_dir}",
                                    shown_prefix="rank ")
    common.set_mode(ms.GRAPH_MODE)
    reference = train_data_parallel.train(args.steps, args.global_batch)
    moved = max(float(np.abs(value).max()) for value in reference.values())
    msrun.exit_with_verdict([largest_difference(weights, reference) for weights in workers], TOLERANCE,
                            f"{args.workers} data-parallel workers", f" (weights up to {moved:.3f})")


if __name__ == "__main__":
    main()
