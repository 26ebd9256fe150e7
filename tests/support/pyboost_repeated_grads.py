"""`ms.grad(lambda x: loss(x * 2, y))(x)` called 40 times in PyNative mode, on the path a setting picks, against the
ops.Custom primitives. The input of the loss is made by an operation just before it, which is where the pyboost
operator's autograd has missed a tracked input (its gradient then came out zero) in MindSpore's asynchronous
runtime, and on some MindSpore versions under launch_blocking() too.

Run by tests/test_versions.py in a process of its own (launch_blocking() cannot be undone); prints one JSON line:
the MindSpore version, whether the calls took the pyboost path, how many of the 40 gradients were all zero and how
many differed in any bit from the primitives' gradient.

    PYTHONPATH=tests python3 -P -m support.pyboost_repeated_grads {blocking|async} {auto|pyboost|pyboost-unchecked}

`pyboost-unchecked` takes the pyboost path even where ms_bcewl refuses it (the asynchronous runtime, a MindSpore
version whose pyboost gradients are wrong): that measures what the refusal protects from.
"""
import json
import sys

import mindspore as ms
import numpy as np
from mindspore import Tensor

CALLS = 40

if __name__ == "__main__":
    runtime, path = sys.argv[1], sys.argv[2]
    if runtime == "blocking":
        ms.runtime.launch_blocking()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    import ms_bcewl  # pylint: disable=wrong-import-position
    from ms_bcewl._pyboost import PYBOOST  # pylint: disable=wrong-import-position

    if path == "pyboost-unchecked":
        PYBOOST.choice, PYBOOST._blocking = "pyboost", True  # pylint: disable=protected-access
        PYBOOST.wait(explicit=True)
    elif runtime == "blocking":
        PYBOOST.choice = path
        PYBOOST.wait(explicit=path == "pyboost")  # settles the choice: the module is ready or known unavailable
    rng = np.random.default_rng(7)
    x = Tensor(rng.normal(size=(8, 5)).astype(np.float32))
    y = Tensor(rng.uniform(size=(8, 5)).astype(np.float32))

    def step():
        return ms.grad(lambda x: ms_bcewl.binary_cross_entropy_with_logits(x * 2, y))(x).asnumpy()

    took_pyboost = PYBOOST.loss() is not None
    grads = [step() for _ in range(CALLS)]
    PYBOOST.choice = "aot"
    expected = step()
    print(json.dumps({"mindspore": ms.__version__, "pyboost": took_pyboost,
                      "zero": sum(int(not grad.any()) for grad in grads),
                      "differ": sum(int(not np.array_equal(grad, expected)) for grad in grads),
                      "expected_nonzero": bool(expected.any())}), flush=True)
