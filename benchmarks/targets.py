"""The performance targets (TARGETS_GUIDE), evaluated on one run's medians: each row says what was measured, what is
needed, and whether it is met. Only workloads the run measured are judged; the rest are absent, not passed."""
from results_model import ROOFS, median_in

TARGET_SIZES = (10 ** 6, 10 ** 7)
PEER_TARGETS = (("built-in ÷ ms_bcewl", "mindspore", 10.0), ("torch ÷ ms_bcewl", "torch", 1.5))
ROOF_TARGET = 0.7
PER_CALL_TARGETS = (("ms_bcewl ÷ built-in (1e3)", "mindspore", 1.2),
                    ("ms_bcewl ÷ AOT no-op (1e3)", "floor_custom_noop", 1.1),
                    ("ms_bcewl ÷ pyboost no-op (1e3)", "floor_pyboost_noop", 1.1))
SIXTEEN_BIT = ("float16", "bfloat16")

TARGETS_GUIDE = """Sizes 1e6 and 1e7 in float32: built-in ÷ ms_bcewl ≥ 10, torch ÷ ms_bcewl ≥ 1.5 and
roof ÷ ms_bcewl ≥ 0.7 (the roof: the slower of the two roofs); float16 and bfloat16 at 1e6 and 1e7: at least the
Melem/s of float32 in the same workload; per call at N = 1000 in PyNative: ms_bcewl within 1.2× of the built-in
op and 1.1× of a no-op (the AOT one and the pyboost one: the floors of ms_bcewl's two PyNative paths)."""


def _row(target, mode_runtime, workload, measured, needed, at_least):
    if measured is None:
        return None
    met = measured >= needed if at_least else measured <= needed
    return [target, "/".join(mode_runtime), workload, f"{measured:.2f}", f"{'≥' if at_least else '≤'} {needed}",
            "yes" if met else "**no**"]


def _fp32_rows(index, mode_runtime):
    for workload, row in index.items():
        ours = median_in(row, "ms_bcewl", mode_runtime)
        if _is_fp32_target(workload) and ours is not None:
            yield from _fp32_workload_rows(workload.label(), row, ours, mode_runtime)


def _is_fp32_target(workload):
    return not workload.is_floor and workload.dtype == "float32" and workload.size in TARGET_SIZES


def _fp32_workload_rows(label, row, ours, mode_runtime):
    for target, peer, needed in PEER_TARGETS:
        peer_time = median_in(row, peer, None if peer == "torch" else mode_runtime)
        yield _row(target, mode_runtime, label, peer_time and peer_time / ours, needed, True)
    roofs = [t for t in (median_in(row, name) for name in ROOFS) if t is not None]
    yield _row("roof ÷ ms_bcewl", mode_runtime, label, max(roofs) / ours if roofs else None, ROOF_TARGET, True)


def _sixteen_bit_rows(index, mode_runtime):
    float32 = {(w.case, w.size, w.reduction, w.pass_): median_in(row, "ms_bcewl", mode_runtime)
               for w, row in index.items() if not w.is_floor and w.dtype == "float32"}
    for workload, row in index.items():
        if workload.is_floor or workload.dtype not in SIXTEEN_BIT or workload.size not in TARGET_SIZES:
            continue
        ours = median_in(row, "ms_bcewl", mode_runtime)
        reference = float32.get((workload.case, workload.size, workload.reduction, workload.pass_))
        if ours is not None and reference is not None:
            yield _row("Melem/s ÷ float32's", mode_runtime, workload.label(), reference / ours, 1.0, True)


def _per_call_rows(index, mode_runtime):
    if mode_runtime[0] != "pynative":
        return
    for workload, row in index.items():
        if not workload.is_floor:
            continue
        for reduction in ("none", "mean"):
            ours = median_in(row, f"ms_bcewl_{reduction}", mode_runtime)
            for target, peer, needed in PER_CALL_TARGETS:
                peer_name = peer if peer.startswith("floor") else f"{peer}_{reduction}"
                peer_time = median_in(row, peer_name, mode_runtime)
                measured = ours / peer_time if ours is not None and peer_time else None
                yield _row(target, mode_runtime, f"{reduction} forward", measured, needed, False)


def target_rows(index, modes):
    """index: {workload: {(provider, mode, runtime): result}}; modes: the (mode, runtime) pairs of the run."""
    rows = []
    for mode_runtime in modes:
        for rows_of in (_fp32_rows, _sixteen_bit_rows, _per_call_rows):
            rows += [row for row in rows_of(index, mode_runtime) if row is not None]
    return rows
