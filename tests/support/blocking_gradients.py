"""Gradients through the pyboost path under launch_blocking(), where the forward of a reduced loss computes the
gradients for a gradOutput of 1 and the backward hands them over (aclnn_adapter/src/mindspore/mindspore_entries.cpp).

Run by tests/test_pyboost_path.py in a process of its own (launch_blocking() cannot be undone): each case runs once
through the pyboost path and once through the ops.Custom primitives, and prints one JSON line per case with the
loss and gradients of both (as float64 lists) and whether they are the same bits.

    PYTHONPATH=tests python3 -P -m support.blocking_gradients
"""
import json

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn

import ms_bcewl
from ms_bcewl._pyboost import PYBOOST

SHAPE = (96, 64)  # 6144 elements: one thread, one reduction block


def input_arrays(weights, seed=0):
    """float64 arrays x, y and the weights named in `weights` (a mask weight, a per-class pos_weight)."""
    rng = np.random.default_rng(seed)
    arrays = {"x": rng.normal(scale=3.0, size=SHAPE), "y": rng.uniform(size=SHAPE)}
    if "weight" in weights:
        arrays["weight"] = (rng.uniform(size=SHAPE) > 0.3).astype(np.float64)  # a mask
    if "pos_weight" in weights:
        arrays["pos_weight"] = rng.uniform(0.5, 3.0, size=SHAPE[-1:])
    return arrays


def inputs(dtype, weights, seed=0):
    return {name: Tensor(array.astype(np.float32)).astype(getattr(ms, dtype))
            for name, array in input_arrays(weights, seed).items()}


def loss_of(reduction, names, scale):
    """The loss over positional tensors named `names`, times `scale` (None: the loss itself)."""
    def loss(*tensors):
        named = dict(zip(names, tensors))
        value = ms_bcewl.binary_cross_entropy_with_logits(named["x"], named["y"], named.get("weight"),
                                                         named.get("pos_weight"), reduction)
        # Scaled in float32: MindSpore's CPU backend has no bfloat16 Mul before 2.9. The backward casts the
        # gradOutput of 3 back to the loss's dtype, where it is exact.
        return value if scale is None else value.astype(ms.float32) * scale
    return loss


def as_lists(outputs):
    flat = []
    for output in outputs:
        flat.extend(as_lists(output) if isinstance(output, tuple) else [output])
    return flat


def through(path, step, *arguments):
    PYBOOST.choice = path
    try:
        return [output.astype(ms.float32).asnumpy().astype(np.float64) for output in as_lists(step(*arguments))]
    finally:
        PYBOOST.choice = "auto"


def report(name, step, *arguments):
    pyboost, primitives = through("pyboost", step, *arguments), through("aot", step, *arguments)
    same = len(pyboost) == len(primitives) and all(
        np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a), np.signbit(b))
        for a, b in zip(pyboost, primitives))
    print(json.dumps({"case": name, "same_bits": same, "pyboost": [a.tolist() for a in pyboost]}), flush=True)


def value_and_grad_cases():
    for reduction in ("mean", "sum", "none"):
        for dtype in ("float32", "float16", "bfloat16"):
            for weights in ((), ("pos_weight",), ("weight", "pos_weight")):
                tensors = inputs(dtype, weights)
                names = list(tensors)
                for scale in (None, 3.0):  # a gradOutput of 1 and one of 3
                    step = ms.value_and_grad(loss_of(reduction, names, scale), grad_position=tuple(range(len(names))))
                    report(f"{reduction}/{dtype}/{'+'.join(weights) or 'plain'}/scale {scale}", step,
                           *tensors.values())


def sum_of_two_losses_case():
    tensors = inputs("float32", ())
    first, second = loss_of("mean", ["x", "y"], None), loss_of("sum", ["x", "y"], None)
    step = ms.value_and_grad(lambda x, y: first(x, y) + second(y, x), grad_position=(0, 1))
    report("mean(x, y) + sum(y, x)", step, tensors["x"], tensors["y"])


def second_call_case():
    """The same value_and_grad twice: each call's forward gives its own gradients."""
    tensors = inputs("float32", ("pos_weight",), seed=1)
    step = ms.value_and_grad(loss_of("mean", list(tensors), None), grad_position=(0, 1, 2))

    def twice(*arguments):
        return step(*arguments), step(*arguments)
    report("value_and_grad twice", twice, *tensors.values())


def training_case(parameter_input):
    """Two SGD steps of a Dense layer and a per-class weight; parameter_input: x is plain and only the weight
    Parameter is differentiated (the forward then gives no gradients)."""
    rng = np.random.default_rng(3)
    x = Tensor(rng.normal(size=(40, 4)).astype(np.float32))
    y = Tensor((rng.uniform(size=(40, 3)) > 0.5).astype(np.float32))

    def train():
        ms.set_seed(5)
        dense = nn.Dense(4, 3)
        weight = Parameter(Tensor(np.array([0.5, 1.0, 2.0], np.float32)), name="class_weight")
        parameters = [weight] if parameter_input else dense.trainable_params() + [weight]
        optimizer = nn.SGD(parameters, learning_rate=0.5)

        def step_loss(inputs_, targets):
            logits = inputs_[:, :3] if parameter_input else dense(inputs_)
            return ms_bcewl.binary_cross_entropy_with_logits(logits, targets, weight, None, "mean")

        step = ms.value_and_grad(step_loss, None, optimizer.parameters)
        for _ in range(2):
            _, grads = step(x, y)
            optimizer(grads)
        return tuple(parameter.value() for parameter in optimizer.parameters)
    report("SGD, the weight alone" if parameter_input else "SGD, Dense and weight", train)


if __name__ == "__main__":
    ms.runtime.launch_blocking()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    value_and_grad_cases()
    sum_of_two_losses_case()
    second_call_case()
    training_case(parameter_input=False)
    training_case(parameter_input=True)
