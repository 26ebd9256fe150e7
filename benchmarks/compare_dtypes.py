"""float16 and bfloat16 against float32 for ms_bcewl's kernels alone, measured in the same rounds.

The main benchmark times each dtype as a workload of its own, minutes apart on a long run, so its
"Melem/s ÷ float32's" ratios carry the machine's drift. Here every round times each dtype of one workload in turn
(rotating the order), in one process and without MindSpore, so the ratio compares like with like. Nothing here
asserts speed.

    python benchmarks/compare_dtypes.py --size 1e6 --cases no_weights,pos_weight_C
"""
import argparse
import gc
import statistics
from dataclasses import replace

from bench_bce_with_logits import rotated
from kernel_providers import KernelGroup
from workloads import CASES, DTYPES, make_inputs, parse_size, plan
from worker import seconds_per_call

CALLS_PER_SAMPLE = 20


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=parse_size, default=parse_size("1e6"), help="elements (default 1e6)")
    parser.add_argument("--cases", default="no_weights", help=f"comma list of {', '.join(CASES)}")
    parser.add_argument("--rounds", type=int, default=9, help="samples per dtype (default 9)")
    return parser.parse_args(argv)


def measure(calls, rounds):
    """{dtype: median seconds per call}, sampling the dtypes of one workload in turn every round."""
    samples = {dtype: [] for dtype in calls}
    for round_index in range(rounds):
        for dtype in rotated(list(calls), round_index):
            calls[dtype]()  # one untimed call after the other dtypes' turns
            samples[dtype].append(seconds_per_call(calls[dtype], CALLS_PER_SAMPLE))
    return {dtype: statistics.median(values) for dtype, values in samples.items()}


def main(argv=None):
    args = parse_args(argv)
    group = KernelGroup()
    print(f"{group.info()['kernel_alone']}\nN = {args.size}; per call: median of {args.rounds} samples of "
          f"{CALLS_PER_SAMPLE} calls; ratio = float32 time ÷ dtype time (above 1: more elements per second)")
    gc.disable()
    for work in plan(args.cases.split(","), (args.size,), ("float32",)):
        same_work = [replace(work, dtype=dtype) for dtype in DTYPES]
        calls = {w.dtype: group.providers(w, make_inputs(w))["ms_bcewl_kernel"]() for w in same_work}
        medians = measure(calls, args.rounds)
        label = work.label().replace(" float32", "")
        ratios = "  ".join(f"{dtype} {medians[dtype] * 1e3:.3f} ms ({medians['float32'] / medians[dtype]:.2f})"
                           for dtype in DTYPES)
        print(f"{label:<50} {ratios}", flush=True)


if __name__ == "__main__":
    main()
