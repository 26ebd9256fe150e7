"""The PNG plots: Melem/s against N per provider, one figure per case."""
from collections import defaultdict
from pathlib import Path

from reporting import STEM


def write_plots(results, directory):
    """One PNG per case: Melem/s against N (log-log), a panel per pass x reduction (rows) and dtype (columns).
    Returns the paths, or None when matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    measured = [r for r in results if r.ok and not r.workload.is_floor]
    cases = dict.fromkeys(r.workload.case for r in measured)
    return [_plot_case(plt, case, [r for r in measured if r.workload.case == case], directory) for case in cases]


def _plot_case(plt, case, in_case, directory):
    """The figure of one case, written under directory; returns its path."""
    panels = list(dict.fromkeys((r.workload.pass_, r.workload.reduction) for r in in_case))
    dtypes = list(dict.fromkeys(r.workload.dtype for r in in_case))
    figure, axes = plt.subplots(len(panels), len(dtypes), figsize=(6 * len(dtypes), 4 * len(panels)), squeeze=False)
    for row, (pass_, reduction) in enumerate(panels):
        for column, dtype in enumerate(dtypes):
            in_panel = [r for r in in_case if (r.workload.pass_, r.workload.reduction, r.workload.dtype)
                        == (pass_, reduction, dtype)]
            _plot_panel(axes[row][column], in_panel, f"{pass_}, {reduction}, {dtype}")
    figure.suptitle(f"BCEWithLogits, {case}: Melem/s against N (higher is better)")
    figure.tight_layout()
    path = Path(directory) / f"{STEM}_{case}.png"
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path


# ms_bcewl and the built-in op of one mode share a colour; the line style tells the provider.
LINE_STYLES = {"ms_bcewl": "-", "mindspore": ":", "ms_bcewl_kernel": "-", "torch": "-.", "roof_stream": "--",
               "roof_formula": "--"}
FIXED_COLOURS = {"ms_bcewl_kernel": "magenta", "torch": "black", "roof_stream": "grey", "roof_formula": "darkgoldenrod"}
MODE_COLOURS = ("tab:blue", "tab:red", "tab:green", "tab:purple")


def _style(result, modes):
    colour = FIXED_COLOURS.get(result.provider)
    if colour is None:
        mode = (result.mode, result.runtime)
        modes.setdefault(mode, MODE_COLOURS[len(modes) % len(MODE_COLOURS)])
        colour = modes[mode]
    return {"linestyle": LINE_STYLES.get(result.provider, "-"), "color": colour}


def _plot_panel(axis, results, title):
    by_series, styles, modes = defaultdict(list), {}, {}
    for result in results:
        by_series[result.series].append((result.workload.size, result.melem_per_s))
        styles.setdefault(result.series, _style(result, modes))
    for series, points in by_series.items():
        sizes, rates = zip(*sorted(points))
        axis.plot(sizes, rates, marker="o", markersize=3, label=series, **styles[series])
    axis.set(xscale="log", yscale="log", xlabel="N (elements)", ylabel="Melem/s", title=title)
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=7)
