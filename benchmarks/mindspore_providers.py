"""ms_bcewl and MindSpore's built-in op in one execution mode, plus the per-call floor of that mode.

Each provider is a factory returning a call that runs one loss (or loss and dx) to completion: ``.asnumpy()`` on
every output waits for the asynchronous runtime (``mindspore.runtime.synchronize`` is not supported on the CPU
device) and costs no copy on the CPU.
"""
from datetime import datetime
from pathlib import Path

import mindspore as ms
from mindspore import Tensor, ops

import ms_bcewl
from ms_bcewl._library import library_path
from ms_bcewl._pyboost import PYBOOST

from machine import PATH_PREFIX

NOOP_PYBOOST = Path(__file__).resolve().parent / "native" / "noop_pyboost.cpp"

BCE_PROVIDERS = {"ms_bcewl": ms_bcewl.binary_cross_entropy_with_logits,
                 "mindspore": ops.binary_cross_entropy_with_logits}


def bce_loss(loss_fn, has_weight, has_pos_weight, reduction):
    """loss(x, y, *weights): weights are passed as arguments, not captured, so graph mode keeps them inputs."""
    def loss(x, y, *weights):
        weight = weights[0] if has_weight else None
        pos_weight = weights[-1] if has_pos_weight else None
        return loss_fn(x, y, weight, pos_weight, reduction)
    return loss


def pyboost_noop():
    """The do-nothing pyboost operator, built like ms_bcewl's module (this tree's builder: imported here, since a
    baseline tree's ms_bcewl may have another)."""
    from ms_bcewl._pyboost import BuildFolder  # pylint: disable=import-outside-toplevel
    return BuildFolder.in_cache(name="ms_bcewl_bench_noop", source=NOOP_PYBOOST).load().noop


def on_path(path, loss_fn):
    """loss_fn with MS_BCEWL_PYNATIVE_PATH=path, which each PyNative call reads: the paths of one process, after
    auto decided (at the group's start) which path it takes."""
    def loss(*arguments):
        PYBOOST.choice = path
        return loss_fn(*arguments)
    return loss


class MindSporeGroup:
    """mode: 'pynative' or 'graph' (a mindspore.jit function); runtime: 'async' (default) or 'blocking'; paths:
    the MS_BCEWL_PYNATIVE_PATH settings to time ms_bcewl with (providers ms_bcewl@<path>), else the environment's."""

    def __init__(self, mode, runtime, noop_library, paths=None):
        if runtime == "blocking":
            ms.runtime.launch_blocking()
        ms.set_context(mode=ms.PYNATIVE_MODE)
        self.mode, self.runtime, self._paths = mode, runtime, paths or ()
        # Builds (or loads) the pyboost module now, untimed, where PyNative calls will take it.
        if runtime == "blocking":
            PYBOOST.wait()
        self._pynative_path = "pyboost" if PYBOOST.loss() is not None else "ops.Custom primitives"
        self._noop = self._pyboost_noop = None  # no floor without a no-op library: a baseline tree's worker
        if noop_library:
            self._noop = ops.Custom(f"{noop_library}:Noop", out_shape=lambda *shapes: shapes[0],
                                    out_dtype=lambda *dtypes: dtypes[0], func_type="aot")
            self._pyboost_noop = pyboost_noop() if mode == "pynative" else None

    def info(self):
        """Versions; the library's build time too, since a rebuilt kernel keeps the package version; the path
        ms_bcewl's calls take in this mode."""
        library = Path(library_path())
        built = datetime.fromtimestamp(library.stat().st_mtime).isoformat(" ", "seconds")
        path = "graph: ops.Custom primitives" if self.mode == "graph" else self._pynative_path
        setting = f" {PYBOOST.choice}" if self.mode == "pynative" else ""
        return {"mindspore": ms.__version__, "ms_bcewl": f"{ms_bcewl.__version__}, {library} built {built}",
                f"{PATH_PREFIX}{self.mode}/{self.runtime}{setting})": path}

    def providers(self, workload, inputs):
        if workload.is_floor:
            return self._floor_providers(inputs)
        dtype = getattr(ms, workload.dtype)
        tensors = [Tensor(inputs[name]).astype(dtype) for name in ("x", "y", "weight", "pos_weight")
                   if inputs[name] is not None]
        functions = dict(BCE_PROVIDERS)
        if self._paths:
            ours = functions.pop("ms_bcewl")
            functions = {**{f"ms_bcewl@{path}": on_path(path, ours) for path in self._paths}, **functions}
        return {name: self._factory(bce_loss(loss_fn, workload.has_weight, bool(workload.pos_weight_shape),
                                             workload.reduction), differentiation(workload), tensors)
                for name, loss_fn in functions.items()}

    def _floor_providers(self, inputs):
        """The floor on the two inputs of the smallest loss call, and the forward of both losses beside it."""
        tensors = [Tensor(inputs["x"]), Tensor(inputs["y"])]
        noop = self._noop

        def custom_noop(x, y):
            return noop(x, y)

        providers = {"floor_custom_noop": self._factory(custom_noop, forward_only, tensors),
                     "floor_ops_add": self._factory(ops.add, forward_only, tensors)}
        if self._pyboost_noop is not None:  # a pyboost operator runs in PyNative only
            providers["floor_pyboost_noop"] = self._factory(self._pyboost_noop, forward_only, tensors)
        for reduction in ("none", "mean"):
            for name, loss_fn in BCE_PROVIDERS.items():
                providers[f"{name}_{reduction}"] = self._factory(bce_loss(loss_fn, False, False, reduction),
                                                                 forward_only, tensors)
        return providers

    def _factory(self, function, differentiate, arguments):
        def make_call():
            step = differentiate(function)
            if self.mode == "graph":
                step = ms.jit(step)
            return lambda: wait_for(step(*arguments))
        return make_call


def forward_only(function):
    return function


def value_and_dx(function):
    """value_and_grad, not grad: graph mode would prune a forward whose loss nobody reads, and training reads it."""
    return ms.value_and_grad(function, grad_position=0)


def dx_of_sum(function):
    def summed(*arguments):  # a def, not a lambda: graph mode parses a lambda only on a line of its own
        return function(*arguments).sum()
    return ms.grad(summed, grad_position=0)


def dx(function):
    return ms.grad(function, grad_position=0)


def differentiation(workload):
    """What the timed call makes of the loss function in the workload's pass."""
    if not workload.is_backward:
        return forward_only
    if workload.pass_ == "forward+backward":
        return value_and_dx
    return dx_of_sum if workload.sums_loss else dx


def wait_for(outputs):
    for output in outputs if isinstance(outputs, tuple) else (outputs,):
        output.asnumpy()
