"""Benchmark of ms_bcewl's BCEWithLogits against MindSpore's built-in op, PyTorch and two roofs, with ms_bcewl's
kernels also timed without MindSpore (the aclnn C API), so that what the framework adds can be read off.

Each provider group runs in its own process (one per MindSpore mode, one for the bare kernels, one for torch, one for
the roofs); for every
workload the parent asks each process for one timed sample in turn, rotating the order every round, so drift on a
noisy machine hits all providers alike. Nothing here asserts speed. See docs/performance.md.

    PYTHONPATH=. python benchmarks/bench_bce_with_logits.py --quick
"""
import argparse
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

from machine import machine_info
from native import build_formula_roof, build_noop_kernel
from plotting import write_plots
from reporting import progress_line, write_csv, write_markdown
from results_model import Result
from worker_pool import WorkerDied, WorkerProcess
from workloads import (CASES, DEFAULT_PASSES, DEFAULT_REDUCTIONS, DEFAULT_SIZES, DTYPES, PASSES, REDUCTIONS,
                       floor_workload, parse_size, plan)

DEFAULT_OUT = Path(__file__).resolve().parent / "results"
# A pause before each sample: OpenMP threads (torch's, the formula roof's) spin for milliseconds after their work
# before they sleep, and would otherwise take a core from the next sample, whichever process it belongs to.
SETTLE_SECONDS = 0.02
MODES = ("pynative", "pynative-blocking", "graph", "graph-blocking")
DEFAULT_MODES = ("pynative", "pynative-blocking", "graph")
# MS_BCEWL_PYNATIVE_PATH values a PyNative mode can be run with, all in one process (see mindspore_workers).
PYNATIVE_PATHS = ("auto", "aot", "pyboost")
SAMPLINGS = ("interleaved", "steady")
PRESETS = {
    "full": {"sizes": DEFAULT_SIZES, "cases": tuple(CASES), "dtypes": DTYPES, "repeat": 10, "sample_seconds": 0.02},
    "quick": {"sizes": (2 ** 10, 2 ** 14, 2 ** 18), "cases": ("no_weights",), "dtypes": ("float32",), "repeat": 5,
              "sample_seconds": 0.005},
}
# The provider names each group answers for, by workload kind.
PROVIDERS = {
    "mindspore": {"bce": ("ms_bcewl", "mindspore"),
                  "floor": ("floor_custom_noop", "floor_pyboost_noop", "floor_ops_add", "ms_bcewl_none",
                            "mindspore_none", "ms_bcewl_mean", "mindspore_mean")},
    "kernel": {"bce": ("ms_bcewl_kernel",), "floor": ()},
    "torch": {"bce": ("torch",), "floor": ()},
    "roof": {"bce": ("roof_stream", "roof_formula"), "floor": ()},
}

# A baseline tree's worker times its ms_bcewl only, reported as provider "baseline".
BASELINE_PROVIDERS = {"bce": ("ms_bcewl",), "floor": ()}


def comma_list(choices):
    def parse(text):
        items = [item.strip() for item in text.split(",") if item.strip()]
        unknown = [item for item in items if item not in choices]
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown {unknown}; choose from {', '.join(choices)}")
        return items
    return parse


def sizes_list(text):
    try:
        return [parse_size(item) for item in text.split(",")]
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: N = 2^10, 2^14, 2^18, no_weights, float32, 5 repetitions (~2 min)")
    parser.add_argument("--sizes", type=sizes_list, help="comma list of 2^k, 1e7 or integers, multiples of 64 "
                                                         "(default 2^10 ... 2^24 and 1e7)")
    parser.add_argument("--dtypes", type=comma_list(DTYPES), help=f"default {','.join(DTYPES)}")
    parser.add_argument("--cases", type=comma_list(tuple(CASES)), help=f"default {','.join(CASES)}")
    parser.add_argument("--modes", type=comma_list(MODES), default=list(DEFAULT_MODES),
                        help="MindSpore execution modes, '-blocking' = mindspore.runtime.launch_blocking() "
                             f"(default {','.join(DEFAULT_MODES)})")
    parser.add_argument("--passes", type=comma_list(PASSES), default=list(DEFAULT_PASSES),
                        help="forward, forward+backward (value_and_grad, dx), grad (mindspore.grad of the loss, of "
                             f"its sum for reduction none) (default {','.join(DEFAULT_PASSES)})")
    parser.add_argument("--reductions", type=comma_list(REDUCTIONS), default=list(DEFAULT_REDUCTIONS),
                        help=f"default {','.join(DEFAULT_REDUCTIONS)}")
    parser.add_argument("--paths", type=comma_list(PYNATIVE_PATHS),
                        help="MS_BCEWL_PYNATIVE_PATH settings to run each PyNative mode with, in one process, their "
                             "samples interleaved (default: the environment's setting)")
    parser.add_argument("--baseline", type=Path,
                        help="another source tree, built in place, whose ms_bcewl runs beside this one in each "
                             "MindSpore mode (a process each, samples interleaved); the report adds this ÷ baseline")
    parser.add_argument("--groups", type=comma_list(tuple(PROVIDERS)), default=list(PROVIDERS),
                        help="provider groups to start, each a process (mindspore: one per mode) "
                             f"(default {','.join(PROVIDERS)})")
    parser.add_argument("--repeat", type=int, help="timed samples per measurement (default 10, quick 5)")
    parser.add_argument("--sampling", choices=SAMPLINGS, default="interleaved",
                        help="interleaved (default): one sample per provider in turn, every process idle while the "
                             "others sample, as between the steps of a pipeline; steady: each provider's samples back "
                             "to back after one untimed sample, as in a training loop's steady state")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default benchmarks/results)")
    args = parser.parse_args(argv)
    preset = PRESETS["quick" if args.quick else "full"]
    for key in ("sizes", "cases", "dtypes", "repeat"):
        if getattr(args, key) is None:
            setattr(args, key, preset[key])
    args.sample_seconds = preset["sample_seconds"]
    return args


def mindspore_workers(args, scratch, common):
    noop_library = build_noop_kernel(scratch)
    workers = []
    for token in args.modes:
        mode, _, blocking = token.partition("-")
        runtime = "blocking" if blocking else "async"
        spec = {**common, "group": "mindspore", "mode": mode, "runtime": runtime, "noop_library": noop_library}
        paths = args.paths if mode == "pynative" else None
        workers.append(WorkerProcess(f"mindspore-{token}", {**spec, "paths": paths}, path_providers(paths), mode,
                                     runtime, scratch, path_labels(paths, runtime)))
        if args.baseline:
            baseline = {**spec, "package_root": str(args.baseline.resolve()), "noop_library": None}
            workers.append(WorkerProcess(f"baseline-{token}", baseline, BASELINE_PROVIDERS, mode, runtime, scratch,
                                         {"ms_bcewl": ("baseline", runtime)}))
    return workers


def path_providers(paths):
    """The mindspore group's providers, ms_bcewl once per pinned path where paths are given."""
    if not paths:
        return PROVIDERS["mindspore"]
    bce = tuple(f"ms_bcewl@{path}" for path in paths) + PROVIDERS["mindspore"]["bce"][1:]
    return {**PROVIDERS["mindspore"], "bce": bce}


def path_labels(paths, runtime):
    """A pinned path's results are ms_bcewl's, its path named in the runtime column: "blocking aot" beside
    "blocking auto". The paths share one process, so that a busy machine treats them alike: in processes of their
    own, the scheduler's placement of each process swung the medians of the same code by up to 1.4x."""
    return {f"ms_bcewl@{path}": ("ms_bcewl", f"{runtime} {path}") for path in paths or ()}


def kernel_workers(args, scratch, common):  # pylint: disable=unused-argument
    return [WorkerProcess("kernel", {**common, "group": "kernel"}, PROVIDERS["kernel"], "-", "-", scratch)]


def torch_workers(args, scratch, common):  # pylint: disable=unused-argument
    return [WorkerProcess("torch", {**common, "group": "torch"}, PROVIDERS["torch"], "eager", "sync", scratch)]


def roof_workers(args, scratch, common):  # pylint: disable=unused-argument
    formula_library, formula_build = build_formula_roof(scratch)
    roof_spec = {**common, "group": "roof", "formula_library": formula_library, "formula_build": formula_build}
    return [WorkerProcess("roof", roof_spec, PROVIDERS["roof"], "-", "-", scratch)]


# One maker per provider group; each compiles only what its own processes load.
WORKER_MAKERS = {"mindspore": mindspore_workers, "kernel": kernel_workers, "torch": torch_workers,
                 "roof": roof_workers}


def make_workers(args, scratch):
    common = {"sample_seconds": args.sample_seconds}
    workers = [worker for group in PROVIDERS if group in args.groups
               for worker in WORKER_MAKERS[group](args, scratch, common)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.greet()
    return workers


def prepare_all(workers, workload, kind):
    """Asks every live worker to prepare at once (their compiles overlap; nothing is timed yet), then collects
    {worker name: answer or WorkerDied}."""
    asked, answers = [], {}
    for worker in workers:
        worker.restart_if_dead()
        if not (worker.alive and worker.providers[kind]):
            continue
        try:
            worker.send({"op": "prepare", "workload": workload.to_json()})
            asked.append(worker)
        except WorkerDied as death:
            answers[worker.name] = death
    for worker in asked:
        try:
            answers[worker.name] = worker.receive()
        except WorkerDied as death:
            answers[worker.name] = death
    return answers


def calibrate(worker, answer):
    """{provider: calls per sample} of a worker that prepared; it calibrates while the others wait, since the
    calls per sample come from the time of a single call, which a compile elsewhere would inflate."""
    if not (isinstance(answer, dict) and answer["ready"]):
        return {}
    try:
        return worker.request({"op": "calibrate"})["calls_per_sample"]
    except WorkerDied as death:
        answer["failed"].update({name: str(death) for name in answer["ready"]})
        return {}


def why_not_ready(worker, answer, name):
    if worker.unavailable:
        return worker.unavailable
    if isinstance(answer, WorkerDied):
        return str(answer)
    return answer["failed"].get(name, "not built by its worker")


def run_workload(workers, workload, repeat, sampling, number):
    kind = "floor" if workload.is_floor else "bce"
    results = {(worker.name, name): empty_result(worker, name, workload)
               for worker in workers for name in worker.providers[kind]}
    answers = prepare_all(workers, workload, kind)
    slots = []
    for worker in workers:
        answer = answers.get(worker.name)
        counts = calibrate(worker, answer)
        for name in worker.providers[kind]:
            if name in counts:
                results[(worker.name, name)].calls_per_sample = counts[name]
                slots.append((worker, name))
            else:
                results[(worker.name, name)].note = why_not_ready(worker, answer, name)
    if sampling == "steady":
        sample_blocks(rotated(slots, number), results, repeat)
    else:
        sample_rounds(slots, results, repeat)
    return list(results.values())


def empty_result(worker, name, workload):
    provider, runtime = worker.labels.get(name, (name, worker.runtime))
    return Result(provider, worker.mode, runtime, workload)


def rotated(items, shift):
    shift %= max(len(items), 1)
    return items[shift:] + items[:shift]


def take_sample(worker, name, results):
    """One sample of `name` into its result; False (and every result of the worker marked) if the worker died."""
    try:
        seconds = worker.request({"op": "sample", "provider": name})["seconds"]
    except WorkerDied as death:
        for (owner, _), other in results.items():
            if owner == worker.name and not other.note:
                other.note = str(death)
        return False
    results[(worker.name, name)].seconds.append(seconds)
    return True


def sample_rounds(slots, results, repeat):
    """One sample per (worker, provider) slot per round; each round starts one slot later than the last."""
    for round_index in range(repeat):
        for worker, name in rotated(slots, round_index):
            if not results[(worker.name, name)].note:
                time.sleep(SETTLE_SECONDS)
                take_sample(worker, name, results)


def sample_blocks(slots, results, repeat):
    """Each slot's samples back to back, after one untimed sample that wakes its process from the others' turns."""
    for worker, name in slots:
        result = results[(worker.name, name)]
        if result.note:
            continue
        time.sleep(SETTLE_SECONDS)
        if not take_sample(worker, name, results):
            continue
        result.seconds.clear()
        for _ in range(repeat):
            if not take_sample(worker, name, results):
                break


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    command = "python " + shlex.join(sys.argv if argv is None else [__file__, *argv])
    floor = [floor_workload()] if "mindspore" in args.groups else []
    workloads = floor + plan(args.cases, args.sizes, args.dtypes, args.passes, args.reductions)
    args.out.mkdir(parents=True, exist_ok=True)
    started, load_at_start = time.monotonic(), os.getloadavg()[0]
    print(f"{len(workloads)} workloads, modes {', '.join(args.modes)}, {args.repeat} samples each, "
          f"{args.sampling} sampling", flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="bench_bcewl_") as scratch:
        workers = make_workers(args, scratch)
        try:
            for number, workload in enumerate(workloads, 1):
                for result in run_workload(workers, workload, args.repeat, args.sampling, number):
                    print(f"[{number}/{len(workloads)}] {progress_line(result)}", flush=True)
                    results.append(result)
            machine = {**machine_info(workers, load_at_start), "sampling": args.sampling}
        finally:
            for worker in workers:
                worker.close()
    print(f"done in {time.monotonic() - started:.0f} s")
    print(f"wrote {write_csv(results, machine, args.out)}")
    print(f"wrote {write_markdown(results, machine, command, args.out)}")
    plots = write_plots(results, args.out)
    if plots is None:
        print("matplotlib is not installed: no plot (the CSV and Markdown are complete); pip install matplotlib")
    for path in plots or ():
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
