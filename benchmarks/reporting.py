"""Writes the results: a CSV of every measurement, a Markdown table of medians and ratios, a PNG plot."""
import csv
from collections import defaultdict
from pathlib import Path

from results_model import ROOFS, median_in
from targets import TARGETS_GUIDE, target_rows

STEM = "bce_with_logits"
MACHINE_FIELDS = ("cpu_model", "cores", "load_average", "sampling", "python", "numpy", "mindspore", "ms_bcewl",
                  "baseline", "ms_bcewl_paths", "torch", "gxx", "formula_roof", "kernel_alone")
CSV_FIELDS = ("provider", "mode", "runtime", "case", "size", "dtype", "reduction", "pass", "status", "median_s",
              "p20_s", "p80_s", "melem_per_s", "samples", "calls_per_sample", "note") + MACHINE_FIELDS


def format_seconds(seconds):
    if seconds is None:
        return "n/a"
    for unit, scale in (("s", 1.0), ("ms", 1e-3)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-6:.3g} µs"


def format_ratio(numerator, denominator):
    return "n/a" if numerator is None or denominator is None else f"{numerator / denominator:.2f}×"


def progress_line(result):
    where = f"{result.workload.label():<52} {result.series:<28}"
    if not result.ok:
        return f"{where} n/a: {result.note}"
    return (f"{where} median {format_seconds(result.median)} (p20 {format_seconds(result.quantile(0.2))}, "
            f"p80 {format_seconds(result.quantile(0.8))}) {result.melem_per_s:.1f} Melem/s")


def _csv_row(result, machine):
    workload = result.workload
    row = {"provider": result.provider, "mode": result.mode, "runtime": result.runtime, "case": workload.case,
           "size": workload.size, "dtype": workload.dtype, "reduction": workload.reduction,
           "pass": workload.pass_, "status": "ok" if result.ok else "n/a", "samples": len(result.seconds),
           "calls_per_sample": result.calls_per_sample, "note": result.note}
    if result.ok:
        row.update(median_s=f"{result.median:.6e}", p20_s=f"{result.quantile(0.2):.6e}",
                   p80_s=f"{result.quantile(0.8):.6e}", melem_per_s=f"{result.melem_per_s:.3f}")
    row.update({name: machine.get(name, "") for name in MACHINE_FIELDS})
    return row


def write_csv(results, machine, directory):
    path = Path(directory) / f"{STEM}.csv"
    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(_csv_row(result, machine) for result in results)
    return path


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows] + [""]


def _index(results):
    """{workload: {(provider, mode, runtime): result}}, workloads in the order they ran."""
    index = defaultdict(dict)
    for result in results:
        index[result.workload][(result.provider, result.mode, result.runtime)] = result
    return index


def _mindspore_modes(results):
    return list(dict.fromkeys((r.mode, r.runtime) for r in results if r.provider == "ms_bcewl"))


def _comparison_rows(index, mode_runtime):
    for workload, row in index.items():
        if workload.is_floor:
            continue
        ours = median_in(row, "ms_bcewl", mode_runtime)
        builtin = median_in(row, "mindspore", mode_runtime)
        kernel = median_in(row, "ms_bcewl_kernel")
        torch = median_in(row, "torch")
        roofs = [median_in(row, name) for name in ROOFS]
        # The op can be no faster than the slower of its two bounds.
        roof = max((r for r in roofs if r is not None), default=None)
        yield ([workload.case, workload.size, workload.dtype, workload.reduction, workload.pass_]
               + [format_seconds(t) for t in (ours, builtin, kernel, torch, *roofs)]
               + [format_ratio(builtin, ours), format_ratio(torch, ours), format_ratio(roof, ours),
                  format_ratio(kernel, ours), format_ratio(torch, kernel), format_ratio(roof, kernel)])


FLOOR_COLUMNS = ("floor_custom_noop", "floor_pyboost_noop", "floor_ops_add", "ms_bcewl_none", "mindspore_none",
                 "ms_bcewl_mean", "mindspore_mean")


def _floor_rows(index, modes):
    for workload, row in index.items():
        if workload.is_floor:
            for mode_runtime in modes:
                times = {name: median_in(row, name, mode_runtime) for name in FLOOR_COLUMNS}
                yield (["/".join(mode_runtime)] + [format_seconds(times[name]) for name in FLOOR_COLUMNS]
                       + [format_ratio(times[f"ms_bcewl_{reduction}"], times[peer])
                          for reduction in ("none", "mean")
                          for peer in (f"mindspore_{reduction}", "floor_custom_noop", "floor_pyboost_noop")])


PATH_COLUMNS = ("auto", "aot", "pyboost")


def _path_runtimes(results):
    """The PyNative runtimes run with several pinned paths (runtime labels "<runtime> <path>")."""
    labels = [r.runtime for r in results if r.mode == "pynative" and r.provider == "ms_bcewl"]
    return list(dict.fromkeys(label.split()[0] for label in labels if " " in label))


def _path_rows(index, runtimes):
    """Per workload: ms_bcewl's time with each MS_BCEWL_PYNATIVE_PATH and auto ÷ the faster pinned path."""
    for workload, row in index.items():
        for runtime in runtimes:
            times = [median_in(row, "ms_bcewl", ("pynative", f"{runtime} {path}")) for path in PATH_COLUMNS]
            if workload.is_floor or times[0] is None:
                continue
            best = min((t for t in times[1:] if t is not None), default=None)
            yield ([runtime, workload.case, workload.size, workload.dtype, workload.reduction, workload.pass_]
                   + [format_seconds(t) for t in times] + [format_ratio(times[0], best)])


PATHS_GUIDE = """ms_bcewl in PyNative with `MS_BCEWL_PYNATIVE_PATH` unset (auto), `aot` (the ops.Custom primitives) and
`pyboost`, in one process, their samples interleaved; the ratio is auto's time ÷ the faster of the
other two (1 or below: auto took the faster path)."""


BASELINE_GUIDE = """ms_bcewl of this tree and of the baseline tree (`--baseline`), each mode's two in processes of their
own, their samples interleaved; the ratio is this tree's time ÷ the baseline's (below 1: this tree is faster)."""


def _baseline_rows(index, results):
    """Per workload and mode: this tree's ms_bcewl (on auto's path where --paths pinned others) and the baseline's."""
    modes = list(dict.fromkeys((r.mode, r.runtime) for r in results if r.provider == "baseline"))
    for workload, row in index.items():
        for mode, runtime in modes:
            ours = median_in(row, "ms_bcewl", (mode, runtime)) or median_in(row, "ms_bcewl", (mode, f"{runtime} auto"))
            baseline = median_in(row, "baseline", (mode, runtime))
            if baseline is not None:
                yield ([f"{mode}/{runtime}", workload.case, workload.size, workload.dtype, workload.reduction,
                        workload.pass_, format_seconds(ours), format_seconds(baseline), format_ratio(ours, baseline)])


def _unmeasured_rows(results):
    counts = defaultdict(int)
    for result in results:
        if not result.ok:
            counts[(result.series, result.note)] += 1
    return [[series, count, note] for (series, note), count in counts.items()]


FLOOR_GUIDE = """## Per-call cost (N = 1000, forward)

A do-nothing custom AOT op, a do-nothing pyboost op (PyNative only) and ops.add on the two inputs of the smallest
loss call (x, y of 1000 float32 each), timed beside ms_bcewl and the built-in op on the same inputs, without
weights. ms_bcewl's PyNative calls take the pyboost path under launch_blocking() and the AOT primitives in the
asynchronous runtime (the machine table says which path each mode took). The ratios here are *ms_bcewl time
÷ peer time*: 1 means as cheap as the peer, above 1 dearer."""

READING_GUIDE = """Times are medians of the per-call time over the samples (each sample is a batch of calls, every call
run to completion). A ratio is *peer time ÷ ms_bcewl time*: above 1 ms_bcewl is faster. The roof is the slower
of roof_stream (a 2-thread numpy copy of the bytes an ideal kernel reads and writes) and roof_formula (the bare
formula, vectorised C++ on 2 threads); roof ÷ ms_bcewl is the fraction of the roof that ms_bcewl reaches.
*kernel alone* is ms_bcewl's library called through its aclnn C API without MindSpore (both phases per call; the
backward computes dx only): kernel alone ÷ ms_bcewl is the share of ms_bcewl's time spent in its kernels, the rest
is what the MindSpore mode adds. torch, the kernel alone and the roofs do not depend on the MindSpore mode: they are
repeated in every table."""


def markdown(results, machine, command):
    modes = _mindspore_modes(results)
    index = _index(results)
    lines = ["# BCEWithLogits benchmark", "", f"Command: `{command}`", ""]
    lines += _table(["machine", ""], [[name, machine.get(name, "")] for name in MACHINE_FIELDS])
    lines += [READING_GUIDE, "", FLOOR_GUIDE, ""]
    ratios = [f"{reduction}: ms_bcewl ÷ {peer}" for reduction in ("none", "mean")
              for peer in ("built-in", "AOT no-op", "pyboost no-op")]
    lines += _table(["mode/runtime", "custom AOT no-op", "pyboost no-op", "ops.add", "ms_bcewl none",
                     "built-in none", "ms_bcewl mean", "built-in mean", *ratios], _floor_rows(index, modes))
    lines += ["## Performance targets", "", TARGETS_GUIDE, ""]
    lines += _table(["target", "mode/runtime", "workload", "measured", "needed", "met"], target_rows(index, modes))
    header = ["case", "N", "dtype", "reduction", "pass", "ms_bcewl", "built-in", "kernel alone", "torch", *ROOFS,
              "built-in ÷ ms_bcewl", "torch ÷ ms_bcewl", "roof ÷ ms_bcewl", "kernel alone ÷ ms_bcewl",
              "torch ÷ kernel alone", "roof ÷ kernel alone"]
    path_runtimes = _path_runtimes(results)
    if path_runtimes:
        lines += ["## PyNative paths", "", PATHS_GUIDE, ""]
        lines += _table(["runtime", "case", "N", "dtype", "reduction", "pass", *PATH_COLUMNS, "auto ÷ best"],
                        _path_rows(index, path_runtimes))
    if any(result.provider == "baseline" for result in results):
        lines += ["## Against the baseline tree", "", BASELINE_GUIDE, ""]
        lines += _table(["mode/runtime", "case", "N", "dtype", "reduction", "pass", "ms_bcewl", "baseline",
                         "ms_bcewl ÷ baseline"], _baseline_rows(index, results))
    for mode_runtime in modes:
        lines += [f"## MindSpore {'/'.join(mode_runtime)}", ""]
        lines += _table(header, _comparison_rows(index, mode_runtime))
    unmeasured = _unmeasured_rows(results)
    if unmeasured:
        lines += ["## Not measured (n/a in the CSV)", ""] + _table(["provider", "measurements", "reason"],
                                                                   unmeasured)
    return "\n".join(lines)


def write_markdown(results, machine, command, directory):
    path = Path(directory) / f"{STEM}.md"
    path.write_text(markdown(results, machine, command), encoding="utf-8")
    return path
