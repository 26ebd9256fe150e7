"""Lets ``mindspore.jit(capture_mode="bytecode")`` trace into ms_bcewl instead of breaking its graph at each call.

MindSpore's bytecode capture inlines only functions of its allowed modules (``mindspore`` and the module of the
jitted function); a call into any other package is a graph break, and a graph break inside a function that
``value_and_grad`` differentiates within the jitted function gives zero gradients. Adding this package to the
allowed modules makes its calls part of the captured graph, as the built-in op's are.
"""
from mindspore import _c_expression


def allow_bytecode_capture_to_inline(package):
    """Adds ``package`` to the modules bytecode capture inlines (an addition: MindSpore's own stay)."""
    _c_expression.update_pijit_default_config(allowed_inline_modules=[package])
