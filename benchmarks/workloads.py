"""What is measured: cases, sizes, dtypes, reductions and passes, and the inputs each workload gets.

Every worker process rebuilds the same inputs from the workload alone (fixed seed), so nothing large travels
between processes.
"""
from dataclasses import asdict, dataclass

import numpy as np

COLUMNS = 64  # inputs are (N / 64, 64); pos_weight (C,) is a (64,) vector

CASES = {
    # name: (has weight, pos_weight shape: None, "full" or "channel")
    "no_weights": (False, None),
    "weight_pos_weight": (True, "full"),
    "pos_weight_C": (False, "channel"),
}
DTYPES = ("float32", "float16", "bfloat16")
REDUCTIONS = ("none", "mean", "sum")
DEFAULT_REDUCTIONS = ("none", "mean")
# "grad" is mindspore.grad of the loss with respect to the input, of its sum for reduction none: how a training
# step takes it. "forward+backward" gives the per-element loss of none an implicit gradient of ones instead.
PASSES = ("forward", "forward+backward", "grad")
DEFAULT_PASSES = ("forward", "forward+backward")
DEFAULT_SIZES = tuple(2 ** k for k in range(10, 25)) + (10_000_000,)

# The per-call floor: a do-nothing custom op and ops.add on two inputs of 1e3 elements, timed beside ms_bcewl and
# the built-in op on the same inputs.
FLOOR_CASE = "floor"
FLOOR_SIZE = 1000


@dataclass(frozen=True)
class Workload:
    case: str
    size: int
    dtype: str
    reduction: str
    pass_: str

    @property
    def has_weight(self):
        return CASES[self.case][0]

    @property
    def pos_weight_shape(self):
        return CASES[self.case][1]

    @property
    def is_backward(self):
        return self.pass_ != "forward"

    @property
    def sums_loss(self):
        """Whether the timed call differentiates the sum of a per-element loss."""
        return self.pass_ == "grad" and self.reduction == "none"

    @property
    def is_floor(self):
        return self.case == FLOOR_CASE

    def label(self):
        return f"{self.case} N={self.size} {self.dtype} {self.reduction} {self.pass_}"

    def to_json(self):
        return asdict(self)


def floor_workload():
    return Workload(FLOOR_CASE, FLOOR_SIZE, "float32", "-", "forward")


def parse_size(text):
    """'2^20', '1e7' or '4096'; a multiple of 64."""
    text = text.strip()
    size = 2 ** int(text[2:]) if text.startswith("2^") else int(float(text))
    if size <= 0 or size % COLUMNS:
        raise ValueError(f"size {text} is not a positive multiple of {COLUMNS}")
    return size


def plan(cases, sizes, dtypes, passes=DEFAULT_PASSES, reductions=DEFAULT_REDUCTIONS):
    """Every workload of the sweep, small sizes first so that early lines come quickly. The reductions and the
    dtypes of a pass come one after the other, so that rows compared with each other were measured seconds apart,
    not minutes: the speed of a shared host drifts within a minute (docs/performance.md)."""
    return [Workload(case, size, dtype, reduction, pass_)
            for size in sizes for case in cases for pass_ in passes for reduction in reductions
            for dtype in dtypes]


def make_inputs(workload):
    """float32 numpy arrays: x, y and, when the case has them, weight and pos_weight (None otherwise)."""
    rng = np.random.default_rng(20240601)
    if workload.is_floor:
        return {"x": rng.standard_normal(workload.size, dtype=np.float32),
                "y": rng.random(workload.size, dtype=np.float32)}
    shape = (workload.size // COLUMNS, COLUMNS)
    inputs = {"x": rng.standard_normal(shape, dtype=np.float32),
              "y": rng.random(shape, dtype=np.float32),
              "weight": None, "pos_weight": None}
    if workload.has_weight:
        inputs["weight"] = rng.random(shape, dtype=np.float32)
    if workload.pos_weight_shape:
        pos_shape = shape if workload.pos_weight_shape == "full" else (COLUMNS,)
        inputs["pos_weight"] = 0.5 + rng.random(pos_shape, dtype=np.float32)
    return inputs


def bytes_touched(workload, itemsize):
    """Bytes an ideal implementation reads and writes: the forward, plus the backward pass when timed.

    Forward reads x, y and each full-size weight, and writes the loss for reduction none. The backward (dx only)
    reads them again plus the per-element dout for none, and writes dx. A (C,) pos_weight is negligible. The
    gradient of a summed loss needs neither the per-element loss nor a dout.
    """
    full_inputs = 2 + workload.has_weight + (workload.pos_weight_shape == "full")
    per_element = workload.reduction == "none" and not workload.sums_loss
    arrays = full_inputs + per_element
    if workload.is_backward:
        arrays += full_inputs + per_element + 1
    return arrays * workload.size * itemsize
