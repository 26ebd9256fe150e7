"""Train a breast-cancer classifier with ms_bcewl in GRAPH_MODE (mindspore.jit) and watch the held-out metrics.

Run:  pip install ".[examples]"        # scikit-learn for the data; matplotlib and tqdm are optional
      python examples/train_graph.py [--epochs 20] [--steps N] [--out train_graph.png]
Smoke run (about 10 s):  python examples/train_graph.py --epochs 5

The data are the Wisconsin breast-cancer samples bundled in scikit-learn (nothing is downloaded), standardised,
with a stratified quarter held out. pos_weight is the class ratio negatives / positives of the training part.
Every epoch prints the training loss and, on the held-out part, the loss, accuracy, precision, recall and ROC AUC;
the last line is `final accuracy A`. A plot of the loss and metrics per epoch is saved to --out (with matplotlib).
"""
import argparse
import os
import sys

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (examples/common.py)

import ms_bcewl  # noqa: E402

METRICS = ("accuracy", "precision", "recall", "roc_auc")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=common.positive_int, default=20)
    parser.add_argument("--steps", type=common.positive_int, default=None, help="at most this many steps per epoch")
    parser.add_argument("--batch-size", type=common.positive_int, default=32)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--out", default="train_graph.png", help="where the PNG plot is saved")
    return parser.parse_args()


def make_evaluate(net, loss_fn):
    """evaluate(x, y) -> (loss, logits), compiled once for the held-out shape."""
    @ms.jit
    def evaluate(x, y):
        logits = net(x)
        return loss_fn(logits, y), logits
    return evaluate


def train_epoch(train_step, split, batch_size, max_steps, epoch):
    """One pass over shuffled full batches (at most max_steps of them); returns the mean training loss."""
    batches = common.batch_indices(len(split.x_train), batch_size, seed=epoch)[:max_steps]
    bar = common.progress_bar(len(batches), f"epoch {epoch}")
    losses = []
    for index in batches:
        losses.append(float(train_step(Tensor(split.x_train[index]), Tensor(split.y_train[index]))))
        bar.set_postfix_str(f"loss {losses[-1]:.4f}")
        bar.update()
    bar.close()
    return float(np.mean(losses))


def held_out_report(evaluate, split):
    loss, logits = evaluate(Tensor(split.x_test), Tensor(split.y_test))
    return {"loss": float(loss), **common.binary_metrics(logits.asnumpy(), split.y_test)}


def save_plot(history, path):
    """Loss (training and held-out) and held-out metrics per epoch, as a PNG; says so when matplotlib is absent."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot saved (pip install matplotlib)")
        return
    epochs = range(1, len(history) + 1)
    figure, (loss_axes, metric_axes) = plt.subplots(1, 2, figsize=(10, 4))
    loss_axes.plot(epochs, [h["train_loss"] for h in history], label="training")
    loss_axes.plot(epochs, [h["loss"] for h in history], label="held-out")
    loss_axes.set(title="BCEWithLogits loss (ms_bcewl)", xlabel="epoch")
    for name in METRICS:
        metric_axes.plot(epochs, [h[name] for h in history], label=name)
    metric_axes.set(title="held-out metrics", xlabel="epoch")
    for axes in (loss_axes, metric_axes):
        axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    print(f"plot saved to {os.path.abspath(path)}")


def main():
    args = parse_args()
    common.set_mode(ms.GRAPH_MODE)
    split = common.breast_cancer()
    pos_weight = common.positive_weight(split.y_train)
    print(f"breast cancer: {len(split.x_train)} training / {len(split.x_test)} held-out samples, "
          f"{split.x_train.shape[1]} features, pos_weight {pos_weight[0]:.3f}")
    net = common.make_classifier(split.x_train.shape[1])
    loss_fn = ms_bcewl.BCEWithLogitsLoss(pos_weight=Tensor(pos_weight))
    train_step = common.make_train_step(net, loss_fn, nn.Adam(net.trainable_params(), args.lr), compile_graph=True)
    evaluate = make_evaluate(net, loss_fn)
    history = []
    for epoch in range(1, args.epochs + 1):
        train_loss = train_epoch(train_step, split, args.batch_size, args.steps, epoch)
        history.append({"train_loss": train_loss, **held_out_report(evaluate, split)})
        print(f"epoch {epoch:3d}  train loss {train_loss:.4f}  held-out "
              + "  ".join(f"{name} {value:.4f}" for name, value in history[-1].items() if name != "train_loss"))
    save_plot(history, args.out)
    print(f"final accuracy {history[-1]['accuracy']:.4f}")


if __name__ == "__main__":
    main()
