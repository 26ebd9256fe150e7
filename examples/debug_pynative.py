"""Debug the breast-cancer classifier of train_graph.py in PYNATIVE_MODE, where every call runs at once.

Run:  pip install ".[examples]"        # scikit-learn for the data
      python examples/debug_pynative.py [--steps 20]
Smoke run (about 10 s):  python examples/debug_pynative.py --steps 3

It trains --steps steps, then walks through what one looks at when a loss misbehaves:
  1. the per-element loss (reduction 'none') and the samples with the largest loss;
  2. the gradients of the input (logits), the target, and the learnable weight and pos_weight Parameters
     (mindspore.grad with grad_position and weights), the logit gradient checked against its formula;
  3. two deliberately bad calls (a target of the wrong shape, a float64 input): ms_bcewl raises at the call,
     naming the argument, and the message is printed;
after which training continues for --steps more steps.
"""
import argparse
import os
import sys

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (examples/common.py)

import ms_bcewl  # noqa: E402


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=common.positive_int, default=20,
                        help="training steps before and after the inspection")
    parser.add_argument("--worst", type=common.positive_int, default=5, help="how many of the largest losses to show")
    return parser.parse_args()


def train(train_step, x, y, steps, label):
    for _ in range(steps):
        loss = train_step(x, y)
    print(f"{label}: {steps} steps, training loss {float(loss):.5f}")


def show_largest_losses(loss_fn, logits, y, count):
    """Per-element loss (reduction 'none', the same weights) and the samples where it is largest."""
    per_element = ms_bcewl.binary_cross_entropy_with_logits(logits, y, loss_fn.weight, loss_fn.pos_weight,
                                                            reduction="none").asnumpy().ravel()
    print(f"\n1. per-element loss: shape {per_element.shape}, mean {per_element.mean():.5f} (= the 'mean' loss); "
          f"largest {count}:")
    print("   sample  label   logit   P(label=1)  loss")
    probabilities = 1 / (1 + np.exp(-logits.asnumpy().ravel()))
    for index in np.argsort(-per_element)[:count]:
        print(f"   {index:6d}  {int(y[int(index), 0])}  {float(logits[int(index), 0]):8.3f}  "
              f"{probabilities[index]:10.4f}  {per_element[index]:.4f}")


def show_gradients(loss_fn, logits, y):
    """d loss / d (input, target) by position and d loss / d (weight, pos_weight) as Parameters."""
    grad_fn = ms.grad(loss_fn, grad_position=(0, 1), weights=loss_fn.trainable_params())
    (dx, dy), (dw, dp) = grad_fn(logits, y)
    print("\n2. gradients of the mean loss:")
    for name, grad in (("input", dx), ("target", dy), ("weight", dw), ("pos_weight", dp)):
        values = grad.asnumpy()
        print(f"   d/d {name:10s} shape {str(values.shape):8s} |max| {np.abs(values).max():.6f}  "
              f"sum {values.sum():+.6f}")
    x, t = logits.asnumpy(), y.asnumpy()
    w, p = loss_fn.weight.asnumpy(), loss_fn.pos_weight.asnumpy()
    expected = w * ((p * t + 1 - t) / (1 + np.exp(-x)) - p * t) / x.size
    print(f"   d/d input against w*((p*y + 1 - y)*sigmoid(x) - p*y)/n: max difference "
          f"{np.abs(dx.asnumpy() - expected).max():.2e}")


def show_bad_calls(loss_fn, logits, y):
    """Mistakes are reported at the offending call with the argument, shapes and dtypes."""
    print("\n3. deliberately bad calls:")
    bad_calls = {"target of shape (n,) for an input of shape (n, 1)": lambda: loss_fn(logits, y[:, 0]),
                 "float64 input": lambda: loss_fn(logits.astype(ms.float64), y)}
    for what, call in bad_calls.items():
        try:
            call()
            print(f"   {what}: no error (unexpected)")
        except (TypeError, ValueError) as error:
            print(f"   {what}: {type(error).__name__}: {error}")


def main():
    args = parse_args()
    common.set_mode(ms.PYNATIVE_MODE)
    split = common.breast_cancer()
    x, y = Tensor(split.x_train), Tensor(split.y_train)
    net = common.make_classifier(split.x_train.shape[1])
    weight = Parameter(Tensor([1.0], ms.float32), name="weight")
    pos_weight = Parameter(Tensor(common.positive_weight(split.y_train)), name="pos_weight")
    loss_fn = ms_bcewl.BCEWithLogitsLoss(weight=weight, pos_weight=pos_weight)
    train_step = common.make_train_step(net, loss_fn, nn.Adam(net.trainable_params(), 0.01), compile_graph=False)
    train(train_step, x, y, args.steps, "training")
    logits = net(x)
    show_largest_losses(loss_fn, logits, y, args.worst)
    show_gradients(loss_fn, logits, y)
    show_bad_calls(loss_fn, logits, y)
    train(train_step, x, y, args.steps, "\ntraining continues")


if __name__ == "__main__":
    main()
