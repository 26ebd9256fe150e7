"""Reproducer: MindSpore's PyNative mode with several Python threads running ops at once (docs/reliability.md §6).

Each scenario runs in its own process (some abort) with four Python threads started together by a Barrier, for
MindSpore's built-in SigmoidCrossEntropyWithLogits primitive and for ms_bcewl, both as the summed loss of the same
logits and targets, so that a failure of the built-in op belongs to MindSpore. Every result is checked against the
float64 reference. It prints, per scenario and op, how many runs finished right, gave wrong values (how many calls),
raised (the first message and how many calls), aborted (the exit status and the std::terminate lines of stderr) or
hung.

    PYTHONPATH=tests python3 -P -m support.pynative_threads_repro [--runs N]

Not a test (pytest does not collect it): the built-in op's failures are MindSpore's, and racy.
tests/test_concurrency.py tests ms_bcewl in the scenario new_signatures_every_round.
"""
import argparse
import collections
import subprocess
import threading

from support import reference as R

THREADS = 4
CALLS = 100
ROUNDS = 40
HANG_SECONDS = 300  # a run takes about 2 s
SCENARIOS = {
    "same_signature_first_call_in_threads": "the first call of one op signature is made by all threads at once",
    "same_signature_after_one_call": "the same, after one call of that signature on the main thread",
    "first_op_of_the_process_in_threads": "each thread its own signature; no op has run in the process before",
    "new_signatures_every_round": f"{ROUNDS} rounds; in each, all threads make the first call of a new signature",
    "gradients_in_threads": "ms.grad in each thread, its own signature, each run once on the main thread first",
}
OPS = ("builtin", "ms_bcewl")


def run_in_threads(caller, count):
    """Runs caller(index) in `count` threads, index 0 to count - 1, and waits for them all."""
    threads = [threading.Thread(target=caller, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def make_op(op_name):
    """The summed loss of logits x and targets y: MindSpore's own (not a pyboost op, so it takes the same dispatch
    path as an ops.Custom) or ms_bcewl's."""
    import mindspore as ms  # pylint: disable=import-outside-toplevel

    if op_name == "builtin":
        primitive = ms.ops.operations.SigmoidCrossEntropyWithLogits()
        return lambda x, y: primitive(x, y).sum()
    import ms_bcewl  # pylint: disable=import-outside-toplevel

    return lambda x, y: ms_bcewl.binary_cross_entropy_with_logits(x, y, reduction="sum")


def thread_inputs(scenario, index, round_):
    """(x, y) of one thread: values of its own; the shape is shared by every thread where the scenario says so."""
    import mindspore as ms  # pylint: disable=import-outside-toplevel
    import numpy as np  # pylint: disable=import-outside-toplevel

    if scenario == "new_signatures_every_round":
        shape = (2 + round_, 5)
    else:
        shape = (4, 4) if scenario.startswith("same_signature") else (3 + index, 5)
    x = np.linspace(-3, 3, np.prod(shape), dtype=np.float32).reshape(shape) + np.float32(0.25 * index)
    y = np.full(shape, 0.2 + 0.15 * index, np.float32)
    return ms.Tensor(x), ms.Tensor(y)


def expected(gradients, x, y):
    """The float64 reference: the summed loss, or its gradient with respect to x."""
    x, y = x.asnumpy(), y.asnumpy()
    return R.grads(x, y, reduction="sum")[0] if gradients else R.loss(x, y, reduction="sum")


def run_scenario(scenario, op_name):
    import mindspore as ms  # pylint: disable=import-outside-toplevel
    import numpy as np  # pylint: disable=import-outside-toplevel

    ms.set_device("CPU")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    op = make_op(op_name)
    gradients = scenario == "gradients_in_threads"
    call = ms.grad(op) if gradients else op
    rounds = ROUNDS if scenario == "new_signatures_every_round" else 1
    inputs = [[thread_inputs(scenario, index, round_) for round_ in range(rounds)] for index in range(THREADS)]
    references = [[expected(gradients, *pair) for pair in thread] for thread in inputs]
    if scenario in ("same_signature_after_one_call", "gradients_in_threads"):
        for thread in inputs:
            call(*thread[0]).asnumpy()
    outcomes = collections.Counter()
    barrier = threading.Barrier(THREADS)

    def caller(index):
        for round_ in range(rounds):
            barrier.wait()
            for _ in range(CALLS if rounds == 1 else 1):
                try:
                    got = call(*inputs[index][round_]).asnumpy()
                    right = got.shape == np.shape(references[index][round_]) and np.allclose(
                        got, references[index][round_], rtol=1e-4, atol=1e-5)
                    outcomes["ok" if right else "wrong value"] += 1
                except Exception as error:  # pylint: disable=broad-except
                    outcomes[f"raised: {str(error).splitlines()[0]}"] += 1

    run_in_threads(caller, THREADS)
    for what, count in outcomes.items():
        print(f"{count}x {what}")


def outcome(scenario, op_name):
    """(what happened, the failed calls of the run, all its calls)."""
    try:
        done = subprocess.run(R.module_command("pynative_threads_repro", "--child", scenario, op_name),
                              env=R.child_environment(), capture_output=True, text=True, timeout=HANG_SECONDS,
                              check=False)
    except subprocess.TimeoutExpired:
        return f"hung (killed after {HANG_SECONDS} s)", 0, 0
    if done.returncode != 0:
        reason = [line.strip() for line in done.stderr.splitlines() if line.startswith(("terminate", "  what()"))]
        return f"aborted (exit {done.returncode}): {' / '.join(reason[:2])[:150]}", 0, 0
    counts = [line.split("x ", 1) for line in done.stdout.splitlines() if "x " in line]
    failed = [(int(count), what) for count, what in counts if what != "ok"]
    calls = sum(int(count) for count, _ in counts)
    if not failed:
        return "ok", 0, calls
    return max(failed)[1][:110], sum(count for count, _ in failed), calls


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
            runs, failed_calls, all_calls = collections.Counter(), collections.Counter(), collections.Counter()
            for _ in range(args.runs):
                text, failed, calls = outcome(scenario, op_name)
                runs[text] += 1
                failed_calls[text] += failed
                all_calls[text] += calls
            for text, count in runs.most_common():
                calls = f" ({failed_calls[text]} of {all_calls[text]} calls)" if failed_calls[text] else ""
                print(f"  {op_name:9} {count}/{args.runs} runs {text}{calls}")


if __name__ == "__main__":
    main()
