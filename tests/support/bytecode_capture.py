"""Whether MindSpore runs ``jit(capture_mode="bytecode")`` in this interpreter (2.10 refuses it on Python 3.12)."""
import mindspore as ms
from mindspore import Tensor


def _identity(x):
    return x


def bytecode_capture_refusal():
    """MindSpore's own reason for refusing bytecode capture here, or None where it captures: asked of MindSpore with
    a trivial function, not read off version numbers. Call it in PyNative mode."""
    try:
        ms.jit(_identity, capture_mode="bytecode")(Tensor(1.0))
    except RuntimeError as error:
        if type(error).__name__ != "Unsupported":  # MindSpore's refusal, a RuntimeError of its own
            raise
        return str(error)
    return None
