"""Every use of MindSpore's private APIs and internals, in one place: what ms_bcewl needs that MindSpore offers no
public way to do. A MindSpore release that changes one of them breaks only this module (and the tests of what
depends on it).

- AMP O1's rewrite: ms_bcewl's Cells on its black list (``keep_out_of_rewrite``).
- Bytecode capture: ms_bcewl among the modules it inlines (``allow_bytecode_capture_to_inline``).
- PyNative mixed precision: the dtype a Cell's ``to_float`` casts a primitive's arguments to (``cast_arguments``).
- The runtime: whether ``mindspore.runtime.launch_blocking()`` was called (``launch_blocking``); the PyNative
  executor set to it (``settle_pynative_executor``), or queueing operators all the same (``pynative_queues_operators``).
- Export: whether the graph being compiled is for ``mindspore.export`` (``exporting``).
- Bytecode capture: whether it is tracing the caller (``capturing_bytecode``).
"""
import os
import sys
from pathlib import Path

from mindspore import Tensor, _c_expression, nn, ops
from mindspore._c_expression import MixedPrecisionType  # pylint: disable=no-name-in-module
from mindspore.common import dtype as mstype

try:
    from mindspore.rewrite.common import namespace as _rewrite_namespace
    from mindspore.rewrite.parsers import assign_parser as _rewrite_parser
except ImportError:  # a MindSpore without the rewrite has nothing to keep out of
    _rewrite_namespace = _rewrite_parser = None


# ---- AMP O1's rewrite ----
# The rewrite turns every Cell it meets into generated source, with the functions it calls from a package outside
# site-packages; the copies lose their module's names (NameError). Cells on its black list are called as they are,
# and so are the functions it takes for a third-party package's.

def keep_out_of_rewrite(package, *cells):
    """Adds the Cell classes to the rewrite's list of Cells it does not convert, and makes it call the functions of
    ``package`` as it calls a third-party package's, wherever the package is (an editable install, a checkout)."""
    black_list = getattr(_rewrite_namespace, "_subtree_black_list", None)
    if black_list is not None:
        black_list.extend(cell for cell in cells if cell not in black_list)
    is_third_party = getattr(_rewrite_parser, "is_third_party", None)
    if is_third_party is not None and getattr(is_third_party, "package_kept_out", None) != package:
        _rewrite_parser.is_third_party = _also_third_party(package, is_third_party)


def _also_third_party(package, is_third_party):
    """The rewrite's is_third_party, also true for a function of ``package``."""
    def is_third_party_or_in_package(func_obj):
        module = getattr(func_obj, "__module__", None) or ""
        return module == package or module.startswith(package + ".") or is_third_party(func_obj)
    is_third_party_or_in_package.package_kept_out = package
    return is_third_party_or_in_package


# ---- Bytecode capture ----
# It inlines only functions of its allowed modules; a call into another package breaks the graph, and a break inside
# a differentiated function gives zero gradients.

def allow_bytecode_capture_to_inline(package):
    """Adds ``package`` to the modules bytecode capture inlines (an addition: MindSpore's own stay)."""
    _c_expression.update_pijit_default_config(allowed_inline_modules=[package])


# The module of the wrapper that runs a function under bytecode capture (mindspore.graph._utils.pijit_context in
# 2.10; the name's end is the same in older releases).
_CAPTURE_CONTEXT_SUFFIX = "pijit_context"


def capturing_bytecode():
    """True while bytecode capture traces the calling code, False in an ast compile (which may be nested in a
    capture: the innermost of the two on the stack decides)."""
    frame = sys._getframe(1)  # pylint: disable=protected-access
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if frame.f_code.co_name == "compile" and module.startswith("mindspore."):
            return False
        if module.endswith(_CAPTURE_CONTEXT_SUFFIX):
            return True
        frame = frame.f_back
    return False


# ---- PyNative mixed precision ----
# Under a Cell's to_float (AMP O2, O3) MindSpore casts an ops.Custom primitive's floating-point arguments to the
# innermost Cell's type; a pyboost call skips that step, so ms_bcewl casts first, by the same rule. MindSpore has no
# getter for that type: the frames of Cell._complex_call, which pushes it, show it.

_CELL_CALL = nn.Cell._complex_call.__code__  # pylint: disable=protected-access
_DTYPES = {MixedPrecisionType.FP16: mstype.float16, MixedPrecisionType.FP32: mstype.float32,
           MixedPrecisionType.BF16: mstype.bfloat16}
_FLOAT_DTYPES = (mstype.float16, mstype.float32, mstype.float64, mstype.bfloat16)


def current_dtype():
    """The dtype MindSpore casts a primitive's floating-point arguments to at this point of PyNative, or None."""
    frame = sys._getframe(1)  # pylint: disable=protected-access
    while frame is not None:
        if frame.f_code is _CELL_CALL:
            mixed = getattr(frame.f_locals.get("self"), "mixed_precision_type", None)
            if mixed is not None:  # the innermost Cell that pushed a type; NOTSET turns the casts off
                return _DTYPES.get(mixed)
        frame = frame.f_back
    return None


def cast_arguments(*tensors):
    """The tensors (None passes through) as a primitive called here would receive them."""
    dtype = current_dtype()
    if dtype is None:
        return tensors
    return tuple(ops.cast(tensor, dtype) if _is_cast(tensor, dtype) else tensor for tensor in tensors)


def _is_cast(tensor, dtype):
    return tensor is not None and tensor.dtype != dtype and tensor.dtype in _FLOAT_DTYPES


# ---- The runtime ----
try:
    from mindspore._c_expression import RuntimeConf  # MindSpore has no public getter for launch_blocking()
    _RUNTIME_CONF = RuntimeConf.get_instance()
except (ImportError, AttributeError):
    _RUNTIME_CONF = None


def launch_blocking():
    """Whether mindspore.runtime.launch_blocking() was called (False where MindSpore cannot say)."""
    return _RUNTIME_CONF is not None and _RUNTIME_CONF.is_launch_blocking()


def settle_pynative_executor():
    """Runs one tiny operator. MindSpore's PyNative forward executor reads the runtime setting when it runs its first
    operator, and a pyboost operator does not start it: until then an autograd Function records its gradient on
    MindSpore's asynchronous bprop queue even under launch_blocking(), a hand-over to its threads at every call."""
    ops.add(Tensor(0.0, mstype.float32), 0.0).asnumpy()


def pynative_queues_operators():
    """Whether MindSpore's PyNative executor queues operators to its threads: it started its frontend_queue thread,
    as it does when operators ran before launch_blocking() was called, which it then keeps ignoring."""
    names = set()
    for task in os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else ():
        try:
            names.add(Path(f"/proc/self/task/{task}/comm").read_text(encoding="utf-8").strip())
        except OSError:  # the thread ended meanwhile
            continue
    return "frontend_queue" in names


# ---- Export ----
# The phase of every compile that mindspore.export ('export.mindir', 'export.onnx', 'export.air') and
# mindspore.onnx.export ('export.onnx') start, as they pass it to the graph executor's compile.
_EXPORT_PHASE_PREFIX = "export."


def exporting():
    """True while the calling thread is inside a MindSpore compile for an export.

    MindSpore passes no phase to what it infers, but its Python compile function (the Cell executor's or
    mindspore.jit's, in mindspore.graph.api or older releases' mindspore.common.api) is on the stack, with its
    `phase` argument, while the graph's constants are inferred."""
    frame = sys._getframe(1)  # pylint: disable=protected-access
    while frame is not None:
        if frame.f_code.co_name == "compile" and frame.f_globals.get("__name__", "").startswith("mindspore."):
            phase = frame.f_locals.get("phase")
            if isinstance(phase, str) and phase.startswith(_EXPORT_PHASE_PREFIX):
                return True
        frame = frame.f_back
    return False
