"""The two roofs: a STREAM-like copy over the bytes the op touches, and the bare vectorised formula in C++."""
import ctypes
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from workloads import bytes_touched

THREADS = 2
# Below this many bytes per thread, handing work to a second thread costs more than the copy it saves.
MIN_BYTES_PER_THREAD = 1 << 20
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2}


def stored(array, dtype):
    """The array as the C++ roof stores that dtype; bfloat16 as its bits (truncated, a valid bfloat16)."""
    if array is None:
        return None
    if dtype == "bfloat16":
        return (array.view(np.uint32) >> 16).astype(np.uint16)
    return np.ascontiguousarray(array, dtype=dtype)


def pointer(array):
    return None if array is None else array.ctypes.data


def reference_loss_sum(x, y, pos_weight):
    x, y, p = (np.asarray(a, np.float64) for a in (x, y, pos_weight))
    log_sigmoid = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    return float(np.sum((1 - y) * x - (1 + (p - 1) * y) * log_sigmoid))


def check_loss_sum(loss_sum):
    """A provider that computed something else would time nothing worth comparing: loss_sum(x, y, pos_weight) of
    (64, 64) float32 inputs and a (64,) pos_weight, against numpy's float64 formula, as a verdict line."""
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((64, 64), np.float32), rng.random((64, 64), np.float32)
    pos_weight = 0.5 + rng.random(64, np.float32)
    got, want = loss_sum(x, y, pos_weight), reference_loss_sum(x, y, pos_weight)
    verdict = "matches" if abs(got - want) <= 1e-4 * abs(want) else "DIFFERS FROM"
    return f"sum {got:.6g} {verdict} numpy's float64 {want:.6g}"


class RoofGroup:
    def __init__(self, formula_library, formula_build):
        self._library = ctypes.CDLL(formula_library)
        for dtype in ITEMSIZE:
            entry = getattr(self._library, f"formula_roof_{dtype}")
            entry.restype = ctypes.c_double
            entry.argtypes = ([ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64] + [ctypes.c_void_p] * 4
                              + [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p])
        self._pool = ThreadPoolExecutor(THREADS)
        self._build = formula_build

    def info(self):
        return {"formula_roof": f"{self._build}; {check_loss_sum(self._formula_loss_sum)}"}

    def _formula_loss_sum(self, x, y, pos_weight):
        return self._library.formula_roof_float32(0, 0, *x.shape, pointer(x), pointer(y), None, pointer(pos_weight),
                                                  0, None, None)

    def providers(self, workload, inputs):
        if workload.is_floor:
            return {}
        return {"roof_stream": lambda: self._stream_call(bytes_touched(workload, ITEMSIZE[workload.dtype])),
                "roof_formula": lambda: self._formula_call(workload, inputs)}

    def _stream_call(self, total_bytes):
        """np.copyto of total/2 bytes (read once, written once), split over 2 threads when large enough."""
        source = np.ones(total_bytes // 2, np.uint8)
        target = np.empty_like(source)
        chunks = THREADS if source.nbytes >= THREADS * MIN_BYTES_PER_THREAD else 1
        pairs = list(zip(np.array_split(target, chunks), np.array_split(source, chunks)))

        def copy():
            if chunks == 1:
                np.copyto(target, source)
            else:
                list(self._pool.map(lambda pair: np.copyto(*pair), pairs))
        return copy

    def _formula_call(self, workload, inputs):
        entry = getattr(self._library, f"formula_roof_{workload.dtype}")
        x, y, weight, pos_weight = (stored(inputs[name], workload.dtype)
                                    for name in ("x", "y", "weight", "pos_weight"))
        rows, cols = x.shape
        pos_weight_row_stride = cols if workload.pos_weight_shape == "full" else 0
        per_element = workload.reduction == "none"
        loss = np.empty_like(x) if per_element else None
        dout = stored(np.ones_like(inputs["x"]) if per_element else np.full(1, 1.0 / x.size, np.float32),
                      workload.dtype)
        dx = np.empty_like(x)
        # Pointers are taken once: numpy's .ctypes costs microseconds, more than the formula on 1e3 elements.
        operands = (rows, cols, pointer(x), pointer(y), pointer(weight), pointer(pos_weight), pos_weight_row_stride)
        loss_pointer, dout_pointer, dx_pointer = pointer(loss), pointer(dout), pointer(dx)

        def forward():
            entry(0, per_element, *operands, None, loss_pointer)

        def forward_and_backward():
            forward()
            entry(1, per_element, *operands, dout_pointer, dx_pointer)
        call = forward_and_backward if workload.is_backward else forward
        call.keep_alive = (x, y, weight, pos_weight, loss, dout, dx)  # the pointers are valid while these live
        return call
