"""Launching local msrun jobs (MindSpore's launcher) on 127.0.0.1, for the distributed checks and the tests.

Not run by itself: check_data_parallel.py, check_class_split.py and tests/test_distributed.py import it.
"""
import os
import signal
import socket
import subprocess
import sys

import numpy as np


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def msrun_command(workers, log_dir, script, *script_args):
    """msrun with `workers` local workers, master 127.0.0.1 on a free port; the workers run this interpreter."""
    return [sys.executable, "-m", "mindspore.parallel.cluster.run", f"--worker_num={workers}",
            f"--local_worker_num={workers}", "--master_addr=127.0.0.1", f"--master_port={free_port()}",
            "--join=True", "--cluster_time_out=120", f"--log_dir={log_dir}", str(script), *map(str, script_args)]


def run_process_group(command, cwd, timeout):
    """(exit code or None on timeout, output) of command run in its own process group, which is killed whole
    (msrun, its scheduler and workers) when it outlives the timeout. msrun starts the workers as `python`, so this
    interpreter's folder goes first on PATH."""
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    with subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          start_new_session=True) as process:
        try:
            output = process.communicate(timeout=timeout)[0]
            return process.returncode, output
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            return None, process.communicate()[0]


def failure_report(returncode, output, log_dir):
    """msrun's output and the end of every worker's log, to show why a job failed."""
    logs = [f"--- {log.name} (end) ---\n{log.read_text(errors='replace')[-3000:]}"
            for log in sorted(log_dir.glob("*.log"))]
    state = "timed out" if returncode is None else f"exited with {returncode}"
    return "\n".join([f"msrun {state}", output[-4000:], *logs])


def run_workers(workers, out_dir, timeout, script, *script_args, shown_prefix):
    """Runs `script` on `workers` msrun workers and returns their saved <out_dir>/weights_rank<r>.npz as
    dicts; prints the output lines that start with shown_prefix, or the failure report and exits on failure."""
    command = msrun_command(workers, out_dir / "logs", script, *script_args)
    print("launching:", " ".join(command[2:]), flush=True)
    returncode, output = run_process_group(command, out_dir, timeout)
    if returncode != 0:
        print(failure_report(returncode, output, out_dir / "logs"))
        raise SystemExit("FAIL: msrun did not finish")
    print("\n".join(line for line in output.splitlines() if line.startswith(shown_prefix)))
    return [dict(np.load(out_dir / f"weights_rank{rank}.npz")) for rank in range(workers)]


def exit_with_verdict(differences, tolerance, what, note=""):
    """Prints each worker's largest difference from one process and PASS or FAIL; exits with 0 or 1."""
    print(f"largest |worker - single-process| per rank: {', '.join(f'{d:.3e}' for d in differences)}{note}")
    passed = max(differences) <= tolerance
    print(f"{'PASS' if passed else 'FAIL'}: {what} vs single process, tolerance {tolerance:g}")
    sys.exit(0 if passed else 1)
