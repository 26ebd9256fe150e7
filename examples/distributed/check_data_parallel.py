"""Check data-parallel training: msrun workers on shards must end with the single-process weights.

Run:  pip install ".[examples]"        # scikit-learn for the data
      python examples/distributed/check_data_parallel.py [--workers 2] [--steps 10]
(about 40 s with two workers on two cores)

It launches train_data_parallel.py with msrun (MindSpore's launcher) on the CPU backend, master 127.0.0.1 on a
free port, then trains the same classifier in this process, without communication, on the whole global batches.
With gradients_mean the averaged shard gradients equal the whole-batch gradient, so every worker's trained
weights must equal the single-process ones: it prints the largest difference and `PASS` (within 1e-5) or
`FAIL`, and exits with 0 or 1. msrun's and the workers' logs are printed when msrun fails.
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import mindspore as ms
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402  (examples/common.py)

WORKER_SCRIPT = Path(__file__).resolve().parent / "train_data_parallel.py"
sys.path.insert(0, str(WORKER_SCRIPT.parent))
import train_data_parallel  # noqa: E402

TOLERANCE = 1e-5


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=common.positive_int, default=2)
    parser.add_argument("--steps", type=common.positive_int, default=10)
    parser.add_argument("--global-batch", type=common.positive_int, default=64)
    parser.add_argument("--timeout", type=int, default=300, help="seconds msrun may take")
    return parser.parse_args()


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def launch_workers(args, out_dir):
    """msrun with `workers` local workers; they run with this interpreter (msrun starts them as `python`)."""
    command = [sys.executable, "-m", "mindspore.parallel.cluster.run", f"--worker_num={args.workers}",
               f"--local_worker_num={args.workers}", "--master_addr=127.0.0.1", f"--master_port={free_port()}",
               "--join=True", "--cluster_time_out=60", f"--log_dir={out_dir / 'logs'}", str(WORKER_SCRIPT),
               f"--steps={args.steps}", f"--global-batch={args.global_batch}", f"--out-dir={out_dir}"]
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    print("launching:", " ".join(command[2:]), flush=True)
    returncode, output = run_process_group(command, out_dir, env, args.timeout)
    if returncode != 0:
        print(output[-4000:])
        for log in sorted((out_dir / "logs").glob("*.log")):
            print(f"--- {log.name} (end) ---\n{log.read_text(errors='replace')[-3000:]}")
        raise SystemExit(f"FAIL: msrun {'timed out' if returncode is None else f'exited with {returncode}'}")
    print("\n".join(line for line in output.splitlines() if line.startswith("rank ")))


def run_process_group(command, cwd, env, timeout):
    """(exit code or None on timeout, output) of command run in its own process group, which is killed whole
    (msrun, its scheduler and workers) when it outlives the timeout."""
    with subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          start_new_session=True) as process:
        try:
            output = process.communicate(timeout=timeout)[0]
            return process.returncode, output
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            return None, process.communicate()[0]


def largest_difference(worker_weights, reference):
    return max(float(np.abs(worker_weights[name] - value).max()) for name, value in reference.items())


def main():
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="ms_bcewl_dp_") as temporary:
        out_dir = Path(temporary)
        launch_workers(args, out_dir)
        workers = [dict(np.load(out_dir / f"weights_rank{rank}.npz")) for rank in range(args.workers)]
    common.set_mode(ms.GRAPH_MODE)
    reference = train_data_parallel.train(args.steps, args.global_batch)
    differences = [largest_difference(weights, reference) for weights in workers]
    moved = max(float(np.abs(value).max()) for value in reference.values())
    print(f"largest |worker - single-process| per rank: {', '.join(f'{d:.3e}' for d in differences)} "
          f"(weights up to {moved:.3f})")
    passed = max(differences) <= TOLERANCE
    print(f"{'PASS' if passed else 'FAIL'}: {args.workers} data-parallel workers vs single process, "
          f"tolerance {TOLERANCE:g}")
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
