"""What the examples share: execution mode, the breast-cancer data, the classifier, its training step, metrics
and a progress bar. Not run by itself; the examples import it (`examples/` is put on sys.path by each of them).

Needs scikit-learn for the data and the metrics (`pip install ".[examples]"`); tqdm is used when installed.
"""
import argparse
import sys
from dataclasses import dataclass

import mindspore as ms
import numpy as np
from mindspore import nn


def positive_int(text):
    """argparse type of the examples' counts (steps, epochs, batch sizes, workers)."""
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def set_mode(mode):
    """GRAPH_MODE or PYNATIVE_MODE on MindSpore's default device (the host CPU where there is no accelerator),
    the device ms_bcewl chose its backend for when it was imported."""
    ms.set_context(mode=mode)


@dataclass(frozen=True)
class Split:
    """Standardised float32 features and labels of shape (n, outputs): a training and a held-out part."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def split_and_standardise(x, y, test_fraction, seed):
    """A stratified held-out split; features scaled with the training part's mean and standard deviation."""
    from sklearn.model_selection import train_test_split

    stratify = y if y.ndim == 1 else None
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=test_fraction, random_state=seed,
                                                        stratify=stratify)
    mean, std = x_train.mean(axis=0), x_train.std(axis=0) + 1e-8
    return Split(((x_train - mean) / std).astype(np.float32), label_columns(y_train),
                 ((x_test - mean) / std).astype(np.float32), label_columns(y_test))


def label_columns(labels):
    """Labels as float32 of shape (n, outputs): one column for a binary task."""
    return labels.reshape(len(labels), -1).astype(np.float32)


def breast_cancer(test_fraction=0.25, seed=0):
    """The Wisconsin breast-cancer data bundled in scikit-learn (569 samples, 30 features, label 1 = benign)."""
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    return split_and_standardise(data.data, data.target, test_fraction, seed)


def positive_weight(labels):
    """pos_weight = negatives / positives per output column, as float32 of shape (outputs,)."""
    positives = labels.sum(axis=0)
    return ((len(labels) - positives) / np.maximum(positives, 1)).astype(np.float32)


def make_classifier(features, outputs=1, hidden=16, seed=0):
    """A two-layer perceptron giving logits; the same seed gives the same initial weights in every process."""
    ms.set_seed(seed)
    return nn.SequentialCell(nn.Dense(features, hidden), nn.ReLU(), nn.Dense(hidden, outputs))


def make_train_step(net, loss_fn, optimizer, compile_graph):
    """step(x, y) -> loss: one optimizer update; compiled with mindspore.jit when compile_graph is set."""
    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)

    def train_step(x, y):
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        return loss

    return ms.jit(train_step) if compile_graph else train_step


def batch_indices(samples, batch_size, seed):
    """Shuffled index arrays of full batches (a partial last batch is dropped: graph mode keeps one shape)."""
    order = np.random.default_rng(seed).permutation(samples)
    return [order[start:start + batch_size] for start in range(0, samples - batch_size + 1, batch_size)]


def binary_metrics(logits, labels):
    """accuracy, precision, recall (threshold 0.5) and ROC AUC of one output column."""
    from sklearn.metrics import accuracy_score, precision_score, recall_score, roc_auc_score

    scores, truth = np.ravel(logits), np.ravel(labels).astype(int)
    predicted = (scores > 0).astype(int)
    return {"accuracy": accuracy_score(truth, predicted),
            "precision": precision_score(truth, predicted, zero_division=0),
            "recall": recall_score(truth, predicted, zero_division=0),
            "roc_auc": roc_auc_score(truth, scores)}


class TextBar:
    """The part of tqdm's interface the examples use, drawn as a plain text bar on stderr."""

    def __init__(self, total, desc, width=30):
        self.total, self.desc, self.width, self.done, self.postfix = total, desc, width, 0, ""

    def update(self, count=1):
        self.done += count
        self._draw()

    def set_postfix_str(self, text):
        self.postfix = text

    def close(self):
        sys.stderr.write("\n")

    def _draw(self):
        filled = self.width * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        sys.stderr.write(f"\r{self.desc} [{bar}] {self.done}/{self.total} {self.postfix}")
        sys.stderr.flush()


def progress_bar(total, desc):
    """tqdm when it is installed, else a TextBar."""
    try:
        from tqdm import tqdm
    except ImportError:
        return TextBar(total, desc)
    return tqdm(total=total, desc=desc, leave=False)
