"""Quick start: train a small classifier with ms_bcewl in GRAPH mode, then inspect it in PyNative mode.

Run:  python examples/quickstart.py [--steps 50]

It prints the loss every 10 steps, then, in PyNative mode, the per-sample loss and the gradient that a learnable
pos_weight receives. Data are synthetic (made here), so nothing is downloaded.
"""
import argparse

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn

import ms_bcewl


def make_data(samples=256, features=8, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(samples, features)).astype(np.float32)
    true_w = rng.normal(size=(features, 1)).astype(np.float32)
    y = (x @ true_w + 0.3 * rng.normal(size=(samples, 1)) > 0.8).astype(np.float32)
    return Tensor(x), Tensor(y)


def train(steps):
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    x, y = make_data()
    positives = float(y.asnumpy().mean())
    net = nn.Dense(x.shape[1], 1)
    loss_fn = ms_bcewl.BCEWithLogitsLoss(pos_weight=Tensor([(1 - positives) / positives], ms.float32))
    optimizer = nn.Adam(net.trainable_params(), learning_rate=0.05)

    def forward(a, b):
        return loss_fn(net(a), b)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)

    @ms.jit
    def step(a, b):
        loss, grads = grad_fn(a, b)
        optimizer(grads)
        return loss

    for i in range(1, steps + 1):
        loss = step(x, y)
        if i % 10 == 0 or i == steps:
            print(f"graph step {i:4d}  loss {float(loss):.5f}")
    return net, x, y


def inspect(net, x, y):
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    per_sample = ms_bcewl.binary_cross_entropy_with_logits(net(x), y, reduction="none")
    worst = np.argsort(-per_sample.asnumpy().ravel())[:3]
    print("largest per-sample losses:", {int(i): round(float(per_sample[int(i), 0]), 4) for i in worst})
    pos_weight = Parameter(Tensor([2.0], ms.float32), name="pos_weight")
    loss_fn = ms_bcewl.BCEWithLogitsLoss(pos_weight=pos_weight)
    grad = ms.grad(loss_fn, grad_position=None, weights=[pos_weight])(net(x), y)
    print("gradient of a learnable pos_weight:", grad[0].asnumpy())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    net, x, y = train(args.steps)
    inspect(net, x, y)


if __name__ == "__main__":
    main()
