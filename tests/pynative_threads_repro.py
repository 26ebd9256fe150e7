"""Reproducer: MindSpore's PyNative mode with several Python threads running ops at once (docs/reliability.md §6).

Each scenario runs in its own process (some abort) with four Python threads started together by a Barrier, for
MindSpore's built-in SigmoidCrossEntropyWithLogits primitive and for ms_bcewl, so that a failure shared by both
belongs to MindSpore. It prints, per scenario and op, how many runs finished without an error, raised (Python
exceptions in the threads: the first message and how many calls failed), aborted (the exit status and the
std::terminate lines of stderr) or hung.

    python3 -P tests/pynative_threads_repro.py [--runs N]

Not a test (pytest does not collect it): MindSpore's behaviour here is racy, and the tests avoid it
(tests/test_concurrency.py runs each op signature once before its threads start, and no gradient in threads).
"""
import argparse
import collections
import subprocess
import sys
import threading

THREADS = 4
CALLS = 100
HANG_SECONDS = 120  # a run takes about 2 s
SCENARIOS = {
    "same_signature_first_call_in_threads": "the first call of one op signature is made by all threads at once",
    "same_signature_after_one_call": "the same, after one call of that signature on the main thread",
    "first_op_of_the_process_in_threads": "each thread its own signature; no op has run in the process before",
    "gradients_in_threads": "ms.grad in each thread, its own signature, each run once on the main thread first",
}
OPS = ("builtin", "ms_bcewl")


def make_op(op_name):
    """A loss of one input tensor: MindSpore's own (not a pyboost op, so it takes the same dispatch path as an
    ops.Custom) or ms_bcewl's."""
    import mindspore as ms  # pylint: disable=import-outside-toplevel

    if op_name == "builtin":
        primitive = ms.ops.operations.SigmoidCrossEntropyWithLogits()
        return lambda x: primitive(x, x).sum()
    import ms_bcewl  # pylint: disable=import-outside-toplevel

    return lambda x: ms_bcewl.binary_cross_entropy_with_logits(x, x, reduction="sum")


def run_scenario(scenario, op_name):
    import mindspore as ms  # pylint: disable=import-outside-toplevel
    import numpy as np  # pylint: disable=import-outside-toplevel

    ms.set_device("CPU")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    op = make_op(op_name)
    same_signature = scenario.startswith("same_signature")
    inputs = [ms.Tensor(np.full((4, 4) if same_signature else (3 + i, 5), 0.1 * i, np.float32)) for i in range(THREADS)]
    call = ms.grad(op) if scenario == "gradients_in_threads" else op
    if scenario in ("same_signature_after_one_call", "gradients_in_threads"):
        for x in inputs:
            call(x).asnumpy()
    errors = collections.Counter()
    barrier = threading.Barrier(THREADS)

    def caller(index):
        barrier.wait()
        for _ in range(CALLS):
            try:
                out = call(inputs[index]).asnumpy()
                if out.shape != (() if call is op else inputs[index].shape):
                    errors[f"another thread's result, shape {out.shape}"] += 1
            except Exception as error:  # pylint: disable=broad-except
                errors[str(error).splitlines()[0]] += 1

    threads = [threading.Thread(target=caller, args=(index,)) for index in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for message, count in errors.items():
        print(f"raised {count}x: {message}")


def outcome(scenario, op_name):
    """(what happened, the failed calls of a run that raised)."""
    try:
        done = subprocess.run([sys.executable, "-P", __file__, "--child", scenario, op_name], capture_output=True,
                              text=True, timeout=HANG_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        return f"hung (killed after {HANG_SECONDS} s)", 0
    if done.returncode != 0:
        reason = [line.strip() for line in done.stderr.splitlines() if line.startswith(("terminate", "  what()"))]
        return f"aborted (exit {done.returncode}): {' / '.join(reason[:2])[:150]}", 0
    raised = [line.split(": ", 1) for line in done.stdout.splitlines() if line.startswith("raised")]
    if not raised:
        return "ok", 0
    return f"raised: {raised[0][1][:110]}", sum(int(count[len("raised "):-1]) for count, _ in raised)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--child", nargs=2, metavar=("SCENARIO", "OP"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_scenario(*args.child)
        return
    for scenario, description in SCENARIOS.items():
        print(f"{scenario}: {description}")
        for op_name in OPS:
            runs, failed_calls = collections.Counter(), collections.Counter()
            for _ in range(args.runs):
                text, failures = outcome(scenario, op_name)
                runs[text] += 1
                failed_calls[text] += failures
            for text, count in runs.most_common():
                calls = f" ({failed_calls[text]} of {count * THREADS * CALLS} calls)" if failed_calls[text] else ""
                print(f"  {op_name:9} {count}/{args.runs} runs {text}{calls}")


if __name__ == "__main__":
    main()
