"""Model-zoo style multi-label recipe: config.yaml, mindspore.train.Model with callbacks, checkpoint, evaluation.

Run:  pip install ".[examples]"        # scikit-learn for the data; PyYAML is optional
      python examples/recipes/multilabel/train.py [--config config.yaml] [--set key=value ...] [--compare]
Smoke run (about 10 s):  python examples/recipes/multilabel/train.py --compare --set epochs=2

The loss is chosen by one line of config.yaml: `loss: ms_bcewl` (ms_bcewl.BCEWithLogitsLoss) or
`loss: mindspore` (mindspore.nn.BCEWithLogitsLoss); `--set loss=mindspore` does the same from the command line.
Data are synthetic (sklearn.datasets.make_multilabel_classification with a fixed seed), standardised, a part held
out. Model.train reports through LossMonitor and a StepTimer callback; the trained net is saved with
mindspore.save_checkpoint, loaded with mindspore.load_checkpoint into a freshly built net, and both are evaluated
(micro-averaged F1 and loss): the script says whether the reloaded net gives the same metric. --compare trains
once with each loss and prints them side by side (final metric, time per step).
"""
import argparse
import os
import sys
import time
from pathlib import Path

import mindspore as ms
import mindspore.dataset as ds
import numpy as np
from mindspore import Tensor, nn
from mindspore.train import Callback, Loss, LossMonitor, Metric, Model

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[1])]
import common  # noqa: E402  (examples/common.py)
from config import apply_overrides, load_config  # noqa: E402  (config.py beside this file)

import ms_bcewl  # noqa: E402

LOSSES = {"ms_bcewl": ms_bcewl.BCEWithLogitsLoss, "mindspore": nn.BCEWithLogitsLoss}
MODES = {"graph": ms.GRAPH_MODE, "pynative": ms.PYNATIVE_MODE}
DEFAULT_CONFIG = HERE / "config.yaml"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(DEFAULT_CONFIG))
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config value")
    parser.add_argument("--compare", action="store_true", help="train with both losses and compare them")
    return parser.parse_args()


class MicroF1(Metric):
    """Micro-averaged F1 of multi-label logits, a label predicted present when its logit is above 0."""

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        self.true_positives = self.false_positives = self.false_negatives = 0

    def update(self, *inputs):
        logits, labels = inputs
        predicted, present = self._convert_data(logits) > 0, self._convert_data(labels) > 0.5
        self.true_positives += int(np.sum(predicted & present))
        self.false_positives += int(np.sum(predicted & ~present))
        self.false_negatives += int(np.sum(~predicted & present))

    def eval(self):
        counted = 2 * self.true_positives + self.false_positives + self.false_negatives
        return 2 * self.true_positives / counted if counted else 0.0


class StepTimer(Callback):
    """Wall time of every training step; `seconds_per_step` is the median without the first (compiling) step."""

    def __init__(self):
        super().__init__()
        self.durations, self.started = [], None

    def on_train_step_begin(self, run_context):
        self.started = time.perf_counter()

    def on_train_step_end(self, run_context):
        self.durations.append(time.perf_counter() - self.started)

    def on_train_epoch_end(self, run_context):
        epoch = run_context.original_args().cur_epoch_num
        print(f"epoch {epoch}: median step so far {1e3 * self.seconds_per_step:.3f} ms", flush=True)

    @property
    def seconds_per_step(self):
        return float(np.median(self.durations[1:] or self.durations))


def make_data(config):
    from sklearn.datasets import make_multilabel_classification

    x, y = make_multilabel_classification(n_samples=config["samples"], n_features=config["features"],
                                          n_classes=config["labels"], n_labels=config["labels_per_sample"],
                                          random_state=config["seed"])
    return common.split_and_standardise(x, y, config["test_fraction"], config["seed"])


def make_datasets(split, config):
    """A shuffled training dataset of full batches and the held-out part as one batch."""
    train = ds.NumpySlicesDataset({"features": split.x_train, "labels": split.y_train}, shuffle=True)
    held_out = ds.NumpySlicesDataset({"features": split.x_test, "labels": split.y_test}, shuffle=False)
    return train.batch(config["batch_size"], drop_remainder=True), held_out.batch(len(split.x_test))


def make_loss(config, split):
    if config["loss"] not in LOSSES:
        raise ValueError(f"config 'loss' must be one of {', '.join(LOSSES)}, got {config['loss']!r}")
    pos_weight = Tensor(common.positive_weight(split.y_train)) if config["pos_weight"] else None
    return LOSSES[config["loss"]](reduction="mean", pos_weight=pos_weight)


def make_model(net, loss_fn, config):
    optimizer = nn.Adam(net.trainable_params(), learning_rate=config["learning_rate"])
    return Model(net, loss_fn=loss_fn, optimizer=optimizer, metrics={"micro_f1": MicroF1(), "loss": Loss()})


def reload_and_evaluate(checkpoint, split, loss_fn, held_out, config):
    """Evaluation of a fresh net (other initial weights) after load_checkpoint."""
    fresh = common.make_classifier(split.x_train.shape[1], config["labels"], config["hidden"], config["seed"] + 1)
    ms.load_checkpoint(checkpoint, net=fresh)
    return make_model(fresh, loss_fn, config).eval(held_out)


def run_recipe(config):
    """Train, evaluate, save, reload and re-evaluate; returns what the comparison table shows."""
    ms.set_seed(config["seed"])
    ds.config.set_seed(config["seed"])
    split = make_data(config)
    train, held_out = make_datasets(split, config)
    net = common.make_classifier(split.x_train.shape[1], config["labels"], config["hidden"], config["seed"])
    loss_fn = make_loss(config, split)
    model = make_model(net, loss_fn, config)
    timer = StepTimer()
    print(f"--- loss: {config['loss']} ({type(loss_fn).__module__}.{type(loss_fn).__name__}), mode {config['mode']}, "
          f"{len(split.x_train)} training / {len(split.x_test)} held-out samples, {config['labels']} labels")
    model.train(config["epochs"], train, callbacks=[LossMonitor(train.get_dataset_size()), timer])
    trained = model.eval(held_out)
    checkpoint = os.path.join(config["checkpoint_dir"], f"multilabel_{config['loss']}.ckpt")
    os.makedirs(config["checkpoint_dir"], exist_ok=True)
    ms.save_checkpoint(net, checkpoint)
    reloaded = reload_and_evaluate(checkpoint, split, loss_fn, held_out, config)
    print(f"evaluation: micro_f1 {trained['micro_f1']:.6f}, loss {trained['loss']:.6f}")
    print(f"checkpoint {checkpoint} reloaded into a fresh net: micro_f1 {reloaded['micro_f1']:.6f} "
          f"({'same' if reloaded == trained else 'DIFFERENT'} metric)")
    return {"loss": config["loss"], "micro_f1": trained["micro_f1"], "eval_loss": trained["loss"],
            "ms_per_step": 1e3 * timer.seconds_per_step, "reload": "same" if reloaded == trained else "DIFFERENT"}


def print_comparison(rows):
    print(f"\n{'loss':10s} {'micro_f1':>9s} {'eval loss':>10s} {'ms/step':>8s}  reloaded checkpoint")
    for row in rows:
        print(f"{row['loss']:10s} {row['micro_f1']:9.5f} {row['eval_loss']:10.6f} {row['ms_per_step']:8.3f}  "
              f"{row['reload']}")


def main():
    args = parse_args()
    config = apply_overrides(load_config(args.config), args.set)
    common.set_mode(MODES[config["mode"]])
    if args.compare:
        print_comparison([run_recipe(dict(config, loss=name)) for name in ("mindspore", "ms_bcewl")])
    else:
        run_recipe(config)


if __name__ == "__main__":
    main()
