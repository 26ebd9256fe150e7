"""Python-API determinism and concurrency (docs/contract.md §11 Determinism, §12 Threads; docs/reliability.md §6).

- Bitwise determinism: loss, dx, dy, dw and dp are bitwise the same on every run and for 1, 2 and 4 kernel
  threads, in both modes, on inputs large enough for the kernels to split the work over threads (they run serially
  below 65,536 elements; reductions are summed in blocks of 8,192 elements). The thread count is set in this
  process through the library's test hooks (tests/support/kernel_threads.py); one subprocess checks that the hooks and
  MS_BCEWL_NUM_THREADS really change how many threads run the kernels.
- Concurrency: four Python threads call the op at once in PyNative mode, each with its own shapes, dtypes,
  weight/pos_weight and reduction, and each must get its own float64-reference answer and no exception.
- First calls from threads: with 4 and then 8 threads, round after round, every thread makes the first call of a
  signature at the same moment as another thread, and each must get its own answer, no exception and no crash.
"""
import os
import subprocess
import threading
import traceback

import mindspore as ms
import pytest

import ms_bcewl
from support import reference as R
from support.kernel_threads import hooks, kernel_threads, library_copies_mapped

THREAD_COUNTS = (1, 2, 4)
RUNS_PER_THREAD_COUNT = 2
FP32 = R.DTYPE_COMBOS["fp32"]
# (input shape, weight shape, pos_weight shape, dtypes of input, target, weight, pos_weight); each has at least
# 4 x 32,768 elements, so that the kernels use 4 tasks, and sizes that are not multiples of a chunk or a block.
LARGE_CASES = {
    "rows_and_columns": ((256, 1024), (1024,), (256, 1), FP32),
    "odd_sizes_mixed_dtypes": ((333, 517), (333, 1), (517,), R.DTYPE_COMBOS["mixed16"]),
    "rank3_scalar_pos_weight": ((3, 97, 1001), (97, 1), (1,), FP32),
}
OUTPUT_NAMES = ("loss", "dx", "dy", "dw", "dp")


def large_case(name, reduction):
    shape, w_shape, p_shape, dtypes = LARGE_CASES[name]
    return R.make_case(shape, w_shape, p_shape, reduction, dtypes, seed=61)


def loss_and_gradients(case, g, nets):
    loss_net, grad_net = nets
    return (R.run_loss(case, loss_net),) + R.run_grads(case, g, grad_net)


def bits(tensor):
    """The values as float32 bytes (widening float16 / bfloat16 is exact, so equal bytes mean equal bits); reading
    them waits for the kernels, which PyNative runs asynchronously."""
    return tensor.astype(ms.float32).asnumpy().tobytes()


def runs_per_thread_count(case, g):
    """{thread count: [(loss and gradients, their bits) of each run]}, with one Cell per kind for every run."""
    nets = (R.loss_net(case), R.grad_net(case))
    runs = {}
    for count in THREAD_COUNTS:
        with kernel_threads(count):
            assert hooks().threads() == count
            outputs = [loss_and_gradients(case, g, nets) for _ in range(RUNS_PER_THREAD_COUNT)]
            runs[count] = [(tensors, [bits(tensor) for tensor in tensors]) for tensors in outputs]
    return runs


@pytest.mark.parametrize("name", sorted(LARGE_CASES))
@pytest.mark.parametrize("reduction", R.REDUCTIONS)
def test_loss_and_gradients_are_bitwise_equal_for_every_run_and_thread_count(mode, reduction, name):
    case = large_case(name, reduction)
    g = R.upstream(case)
    runs = runs_per_thread_count(case, g)
    first, expected_bits = runs[THREAD_COUNTS[0]][0]
    loss_scale, grad_scales = R.rounding_scales(case, g)
    R.check_loss(case, got=first[0], scale=loss_scale, msg=name)
    R.check_grads(case, g, got=first[1:], scale=grad_scales, msg=name)
    for count, count_runs in runs.items():
        for run, (_, run_bits) in enumerate(count_runs):
            for output, got, expected in zip(OUTPUT_NAMES, run_bits, expected_bits):
                assert got == expected, f"{name}: {output} of run {run} with {count} threads differs from run 0 with 1"


def test_the_hooks_drive_the_library_that_mindspore_runs(pynative):
    R.check_loss(large_case("rows_and_columns", "sum"))  # MindSpore has dlopen'ed the library by now
    with kernel_threads(3):
        assert hooks().threads() == 3
    assert library_copies_mapped() == 1


# In a fresh process, the pool's workers are the threads that appear at the first call that needs them, one fewer
# than the call's tasks; every call then splits its work into as many tasks as the thread count allows. Both are
# the kernels' decisions, so neither depends on how busy the machine is (which worker then runs a task does).
THREAD_COUNT_PROBE = """
import mindspore as ms
import numpy as np
ms.set_device("CPU")
ms.set_context(mode=ms.PYNATIVE_MODE)
import ms_bcewl
from support.kernel_threads import hooks, thread_ids

rng = np.random.default_rng(0)
def inputs(n):
    return ms.Tensor(rng.normal(size=n).astype(np.float32)), ms.Tensor(rng.uniform(size=n).astype(np.float32))
def run(x, y):
    ms_bcewl.binary_cross_entropy_with_logits(x, y, reduction="none").asnumpy()

run(*inputs(1000))  # MindSpore starts its own threads at the first op; the kernels run serially here
print("threads", hooks().threads(), "tasks", hooks().latest_loop_tasks())
large = inputs(1 << 20)  # enough elements for 4 tasks
threads_before = thread_ids()
run(*large)
print("threads", hooks().threads(), "workers started", len(thread_ids() - threads_before))
hooks().set_threads(4)
run(*large)
print("threads", hooks().threads(), "workers started", len(thread_ids() - threads_before))
for count in (1, 2, 3, 4):
    hooks().set_threads(count)
    run(*large)
    print("threads", count, "tasks", hooks().latest_loop_tasks())
"""


def test_the_thread_count_from_the_environment_and_the_hooks_takes_effect(tmp_path):
    env = R.child_environment(dict(os.environ, MS_BCEWL_NUM_THREADS="3"))
    done = subprocess.run([*R.PYTHON, "-c", THREAD_COUNT_PROBE], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "threads 3 tasks 1", "threads 3 workers started 2", "threads 4 workers started 3", "threads 1 tasks 1",
        "threads 2 tasks 2", "threads 3 tasks 3", "threads 4 tasks 4"], done.stdout


# One call per Python thread: its own shape (one of them large enough for the kernels' own threads), weight and
# pos_weight (absent or broadcast), reduction and dtypes.
THREAD_CALLS = [
    ((5, 7), (7,), (5, 1), "mean", "fp32"),
    ((4, 3, 6), (3, 1), None, "sum", "fp16"),
    ((9, 2), None, (2,), "none", "mixedbf"),
    ((300, 400), (1, 400), (300, 400), "mean", "bf16"),
]
ITERATIONS = 150


def call_op(case, inputs):
    x, y, w, p, _ = inputs
    return ms_bcewl.binary_cross_entropy_with_logits(x, y, w if case.w is not None else None,
                                                   p if case.p is not None else None, case.reduction)


def test_four_python_threads_calling_at_once_each_get_their_own_answer(pynative):
    cases = [R.make_case(shape, w, p, reduction, R.DTYPE_COMBOS[combo], seed=70 + index)
             for index, (shape, w, p, reduction, combo) in enumerate(THREAD_CALLS)]
    inputs = [R.tensors(case) for case in cases]
    failures = [None] * len(cases)
    barrier = threading.Barrier(len(cases))

    def caller(index):
        barrier.wait()
        try:
            for iteration in range(ITERATIONS):
                R.check_loss(cases[index], got=call_op(cases[index], inputs[index]),
                             msg=f"thread {index} iteration {iteration}")
        except BaseException:  # pylint: disable=broad-except  (reported below, from the test's thread)
            failures[index] = traceback.format_exc()

    threads = [threading.Thread(target=caller, args=(index,)) for index in range(len(cases))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == [None] * len(cases), "\n".join(filter(None, failures))


# Round after round, each thread makes the first call of a signature that no earlier call used (the shape is new),
# released together with the others; the two threads of a pair share the signature (dtypes, weight, pos_weight,
# reduction), each has values of its own.
FIRST_CALLS_PROGRAM = """
import collections
import sys
import threading

import mindspore as ms
ms.set_device("CPU")
ms.set_context(mode=ms.PYNATIVE_MODE)
import ms_bcewl
from support import reference as R
from support.pynative_threads_repro import run_in_threads

ROUNDS = int(sys.argv[1])
COMBOS = ("fp32", "fp16", "mixedbf")


def pair_case(threads, round_, pair, thread):
    shape = (threads, 2 + round_, 2 + pair)
    weight = (2 + pair,) if pair & 1 else None
    pos_weight = (2 + round_, 1) if pair & 2 else None
    reduction = R.REDUCTIONS[(round_ + pair) % 3]
    dtypes = R.DTYPE_COMBOS[COMBOS[(round_ + pair) % 3]]
    return R.make_case(shape, weight, pos_weight, reduction, dtypes, seed=1000 * threads + 10 * round_ + thread)


def call(case, x, y, w, p, _):
    return ms_bcewl.binary_cross_entropy_with_logits(x, y, w if case.w is not None else None,
                                                   p if case.p is not None else None, case.reduction)


def first_calls_in_threads(threads):
    cases = [[pair_case(threads, round_, thread % (threads // 2), thread) for round_ in range(ROUNDS)]
             for thread in range(threads)]
    inputs = [[R.tensors(case) for case in thread_cases] for thread_cases in cases]
    failures = collections.Counter()
    barrier = threading.Barrier(threads)

    def caller(thread):
        for round_, case in enumerate(cases[thread]):
            barrier.wait()
            try:
                R.check_loss(case, got=call(case, *inputs[thread][round_]), msg=f"round {round_}")
            except Exception as error:  # pylint: disable=broad-except  (counted and printed below)
                failures[f"{type(error).__name__}: {' '.join(str(error).split())[:300]}"] += 1

    run_in_threads(caller, threads)
    print(f"{threads} threads: {sum(failures.values())} of {threads * ROUNDS} first calls failed", flush=True)
    for message, count in failures.most_common(3):
        print(f"  {count}x {message}", flush=True)


for count in (4, 8):
    first_calls_in_threads(count)
"""
FIRST_CALLS_ROUNDS = 40


def test_first_calls_from_4_and_8_threads_each_get_their_own_answer(tmp_path):
    """Threads making the first call of one signature at once got another thread's value, raised or crashed the
    process: tests/support/pynative_threads_repro.py (scenario new_signatures_every_round)."""
    done = subprocess.run([*R.PYTHON, "-c", FIRST_CALLS_PROGRAM, str(FIRST_CALLS_ROUNDS)], cwd=tmp_path,
                          env=R.child_environment(), capture_output=True, text=True, timeout=900, check=False)
    report = done.stdout + done.stderr[-3000:]
    assert done.returncode == 0, f"exit status {done.returncode}\n{report}"
    assert done.stdout.splitlines() == [f"{threads} threads: 0 of {threads * FIRST_CALLS_ROUNDS} first calls failed"
                                        for threads in (4, 8)], report
