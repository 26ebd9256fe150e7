"""One msrun worker of tests/test_distributed.py: runs every case of the sharded loss on its shard and the same case
in one process on the whole tensors, and writes both to <out-dir>/rank<r>.json for the test to compare.

    msrun --worker_num=2 --local_worker_num=2 --master_addr=127.0.0.1 --master_port=<port> --join=True \\
        tests/support/distributed_worker.py <out-dir>

Loss cases: a (8, 6) tensor split by rows (4/4, 5/3, and 8/0: an empty shard) or by classes (4/2); weight of
shape (8, 1) and pos_weight of shape (6,), each sliced with the logits where it has the split dimension and passed
whole where it broadcasts; every reduction; the loss and the gradients of all four tensors for a fixed upstream
gradient; GRAPH_MODE (one jitted function) and PyNative, and PyNative under jit(capture_mode="bytecode") for the
class split 5/1 (a one-element pos_weight shard) unless MindSpore refuses that capture here. Training cases: 5 SGD
steps of a small Dense network, batch split 5/3 and class split 3/3 (a head and a pos_weight split by class), through
nn.TrainOneStepCell under DATA_PARALLEL and, for the class split, through a step written with
nn.DistributedGradReducer. Negative controls: the per-worker mean with averaged gradients, a plain ops.AllReduce, a
class-split parameter that is not marked layerwise_parallel.
"""
import json
import sys
from pathlib import Path

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops
from mindspore.communication import get_group_size, get_rank, init

import ms_bcewl
from bytecode_capture import bytecode_capture_refusal  # this script's folder is first on sys.path

ROWS, CLASSES = 8, 6
LOSS_SPLITS = {"batch_4_4": (0, (4, 4)), "batch_5_3": (0, (5, 3)), "batch_8_0": (0, (8, 0)),
               "class_4_2": (1, (4, 2))}
WEIGHTINGS = {"plain": (False, False), "weight": (True, False), "pos_weight": (False, True), "both": (True, True)}
MODES = {"graph": ms.GRAPH_MODE, "pynative": ms.PYNATIVE_MODE}
BYTECODE_SPLITS = {"class_5_1": (1, (5, 1))}
CASE_KINDS = ("loss", "plain_all_reduce", "training")
FEATURES, HIDDEN, STEPS, LEARNING_RATE = 5, 4, 5, 0.5


def whole_tensors(dtype=np.float32):
    """input, target, weight (8, 1), pos_weight (6,), an upstream gradient for none and one for mean / sum."""
    rng = np.random.default_rng(7)
    return {"input": (rng.normal(size=(ROWS, CLASSES)) * 2).astype(dtype),
            "target": rng.uniform(size=(ROWS, CLASSES)).astype(dtype),
            "weight": rng.uniform(0.5, 1.5, size=(ROWS, 1)).astype(np.float32),
            "pos_weight": rng.uniform(0.5, 3.0, size=(CLASSES,)).astype(np.float32),
            "g_none": rng.normal(size=(ROWS, CLASSES)).astype(np.float32),
            "g_reduced": np.float32(0.7)}


def shard_bounds(sizes, rank):
    start = sum(sizes[:rank])
    return start, start + sizes[rank]


def split_axis_of(array, axis, rank_of_input=2):
    """The axis of `array` aligned with the input's split axis when it has that dimension in full, else None."""
    aligned = axis - (rank_of_input - array.ndim)
    full = ROWS if axis == 0 else CLASSES
    return aligned if aligned >= 0 and array.shape[aligned] == full else None


def take_shard(array, axis, bounds):
    if array.ndim == 0 or split_axis_of(array, axis) is None:
        return array
    index = [slice(None)] * array.ndim
    index[split_axis_of(array, axis)] = slice(*bounds)
    return array[tuple(index)]


def loss_and_gradients(loss_fn, reduction, use_weight, use_pos_weight, mode_name):
    """f(x, y, w, p, g) -> (loss, (dx, dy, dw, dp)) of sum(loss * g); jitted in graph mode and bytecode capture."""
    def objective(x, y, w, p, g):
        loss = loss_fn(x, y, w if use_weight else None, p if use_pos_weight else None, reduction)
        return (loss * g).sum(), loss

    grad_fn = ms.value_and_grad(objective, grad_position=(0, 1, 2, 3), has_aux=True)

    def run(x, y, w, p, g):
        (_, loss), grads = grad_fn(x, y, w, p, g)
        return loss, grads

    if mode_name == "bytecode":
        return ms.jit(run, capture_mode="bytecode")
    return ms.jit(run) if mode_name == "graph" else run


def evaluate(loss_fn, tensors, reduction, weighting, mode_name):
    g = tensors["g_none"] if reduction == "none" else tensors["g_reduced"]
    run = loss_and_gradients(loss_fn, reduction, *WEIGHTINGS[weighting], mode_name)
    loss, grads = run(*(Tensor(tensors[name]) for name in ("input", "target", "weight", "pos_weight")), Tensor(g))
    return {"loss": loss.float().asnumpy().tolist(), "dtype": str(loss.dtype),
            **{name: grad.float().asnumpy().tolist() for name, grad in zip(("dx", "dy", "dw", "dp"), grads)}}


def sliced_axes(axis):
    """{gradient: axis along which its shards are concatenated, or None where the parts are summed}."""
    tensors = whole_tensors()
    return {grad: split_axis_of(tensors[name], axis) for grad, name in
            (("dx", "input"), ("dy", "target"), ("dw", "weight"), ("dp", "pos_weight"))}


def loss_cases(rank, mode_name, dtype=np.float32, splits=LOSS_SPLITS, weightings=WEIGHTINGS,
               reductions=("none", "mean", "sum")):
    """Every split x weighting x reduction: this shard's results and the single-process results on the whole."""
    ms.set_context(mode=MODES.get(mode_name, ms.PYNATIVE_MODE))
    whole = whole_tensors(dtype)
    cases = []
    for weighting in weightings:
        for reduction in reductions:
            reference = evaluate(ms_bcewl.binary_cross_entropy_with_logits, whole, reduction, weighting, mode_name)
            for split, (axis, sizes) in splits.items():
                bounds = shard_bounds(sizes, rank)
                shard = {name: take_shard(value, axis, bounds) for name, value in whole.items()}
                local = evaluate(ms_bcewl.sharded_binary_cross_entropy_with_logits, shard, reduction, weighting,
                                 mode_name)
                cases.append({"split": split, "weighting": weighting, "reduction": reduction, "mode": mode_name,
                              "dtype": np.dtype(dtype).name, "axes": sliced_axes(axis), "local": local,
                              "reference": reference})
    return cases


def plain_all_reduce_mean(x, y, w, p, _reduction):
    """The negative control: the sharded mean with ops.AllReduce's own backward."""
    all_reduce = ops.AllReduce()
    local_sum = ms_bcewl.binary_cross_entropy_with_logits(x, y, w, p, "sum")
    count = ops.scalar_to_tensor(ops.size(x), ms.float32)
    return all_reduce(local_sum) / all_reduce(count)


def plain_all_reduce_cases(rank, mode_name):
    ms.set_context(mode=MODES[mode_name])
    axis, sizes = LOSS_SPLITS["batch_5_3"]
    whole = whole_tensors()
    shard = {name: take_shard(value, axis, shard_bounds(sizes, rank)) for name, value in whole.items()}
    return [{"split": "batch_5_3", "weighting": "both", "reduction": "mean", "mode": mode_name,
             "axes": sliced_axes(axis), "local": evaluate(plain_all_reduce_mean, shard, "mean", "both", mode_name),
             "reference": evaluate(ms_bcewl.binary_cross_entropy_with_logits, whole, "mean", "both", mode_name)}]


def training_data():
    rng = np.random.default_rng(11)
    return (rng.normal(size=(STEPS, ROWS, FEATURES)).astype(np.float32),
            (rng.uniform(size=(STEPS, ROWS, CLASSES)) < 0.3).astype(np.float32))


def initial_weights():
    """Dense(5, 4) + ReLU + Dense(4, 6) and a pos_weight: the same initial values in every process."""
    rng = np.random.default_rng(3)
    shapes = {"body.weight": (HIDDEN, FEATURES), "body.bias": (HIDDEN,), "head.weight": (CLASSES, HIDDEN),
              "head.bias": (CLASSES,)}
    weights = {name: rng.normal(size=shape).astype(np.float32) for name, shape in shapes.items()}
    weights["loss_fn.pos_weight"] = rng.uniform(1.0, 3.0, size=(CLASSES,)).astype(np.float32)
    return weights


class NetWithLoss(nn.Cell):
    """body, head and loss; the loss's pos_weight is a Parameter the optimizer trains."""

    def __init__(self, weights, loss_class, layerwise_parallel):
        super().__init__()
        self.body = nn.Dense(FEATURES, HIDDEN, Tensor(weights["body.weight"]), Tensor(weights["body.bias"]))
        self.head = nn.Dense(HIDDEN, len(weights["head.bias"]), Tensor(weights["head.weight"]),
                             Tensor(weights["head.bias"]))
        self.loss_fn = loss_class(pos_weight=Parameter(Tensor(weights["loss_fn.pos_weight"]), name="pos_weight"))
        for parameter in (*self.head.get_parameters(), self.loss_fn.pos_weight):
            parameter.layerwise_parallel = layerwise_parallel
        self.relu = nn.ReLU()

    def construct(self, x, y):
        return self.loss_fn(self.head(self.relu(self.body(x))), y)


def train(net, batches):
    """STEPS SGD steps of nn.TrainOneStepCell, which reduces gradients as the parallel context says."""
    step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), LEARNING_RATE))
    for x, y in batches:
        step(Tensor(x), Tensor(y))
    return {name: parameter.asnumpy() for name, parameter in net.parameters_and_names()}


def train_with_grad_reducer(net, batches):
    """The same steps written out: value_and_grad, nn.DistributedGradReducer(mean=False), SGD; jitted in graph
    mode. The reducer sums the gradients of all parameters but those marked layerwise_parallel."""
    optimizer = nn.SGD(net.trainable_params(), LEARNING_RATE)
    grad_fn = ms.value_and_grad(net, None, optimizer.parameters)
    reducer = nn.DistributedGradReducer(optimizer.parameters, mean=False)

    def step(x, y):
        loss, grads = grad_fn(x, y)
        optimizer(reducer(grads))
        return loss

    run = ms.jit(step) if ms.get_context("mode") == ms.GRAPH_MODE else step
    for x, y in batches:
        run(Tensor(x), Tensor(y))
    return {name: parameter.asnumpy() for name, parameter in net.parameters_and_names()}


def single_process_training():
    ms.reset_auto_parallel_context()
    x, y = training_data()
    return train(NetWithLoss(initial_weights(), ms_bcewl.BCEWithLogitsLoss, False), zip(x, y))


def data_parallel_training(split, rank, loss_class, gradients_mean, layerwise_parallel, trainer):
    """batch split: rows [0, 5) or [5, 8) of every batch, the whole network; class split: classes [3r, 3r + 3) of
    the head, pos_weight and labels, every row. Returns the trained weights and the indices of the classes."""
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=gradients_mean)
    x, y = training_data()
    weights = initial_weights()
    classes = slice(None)
    if split == "batch_5_3":
        rows = slice(*shard_bounds((5, 3), rank))
        x, y = x[:, rows], y[:, rows]
    else:
        classes = slice(*shard_bounds((3, 3), rank))
        y = y[:, :, classes]
        weights.update({name: weights[name][classes] for name in CLASS_SHARDED})
    trained = trainer(NetWithLoss(weights, loss_class, layerwise_parallel), zip(x, y))
    ms.reset_auto_parallel_context()
    return trained, classes


CLASS_SHARDED = ("head.weight", "head.bias", "loss_fn.pos_weight")
TRAININGS = {  # name: split, loss, gradients_mean, layerwise_parallel, training loop
    "batch_5_3": ("batch_5_3", ms_bcewl.ShardedBCEWithLogitsLoss, False, False, train),
    "class_3_3": ("class_3_3", ms_bcewl.ShardedBCEWithLogitsLoss, False, True, train),
    "class_3_3_grad_reducer": ("class_3_3", ms_bcewl.ShardedBCEWithLogitsLoss, False, True, train_with_grad_reducer),
    "control_per_worker_mean": ("batch_5_3", ms_bcewl.BCEWithLogitsLoss, True, False, train),
    "control_class_split_not_layerwise": ("class_3_3", ms_bcewl.ShardedBCEWithLogitsLoss, False, False, train),
}


def training_cases(rank, mode_name):
    """Each training's weights after STEPS steps beside one process's (its class slice where sharded)."""
    ms.set_context(mode=MODES[mode_name])
    reference = single_process_training()
    cases = []
    for name, arguments in TRAININGS.items():
        trained, classes = data_parallel_training(arguments[0], rank, *arguments[1:])
        expected = {key: value[classes] if key in CLASS_SHARDED else value for key, value in reference.items()}
        cases.append({"training": name, "mode": mode_name,
                      "trained": {key: value.tolist() for key, value in trained.items()},
                      "reference": {key: value.tolist() for key, value in expected.items()}})
    return cases


def main():
    out_dir = Path(sys.argv[1])
    init()
    rank = get_rank()
    assert get_group_size() == 2, "the cases are written for 2 workers"
    ms.set_context(mode=ms.PYNATIVE_MODE)
    results = {**{kind: [] for kind in CASE_KINDS}, "bytecode_refused": bytecode_capture_refusal()}
    for mode_name in MODES:
        results["loss"] += loss_cases(rank, mode_name)
        results["loss"] += loss_cases(rank, mode_name, np.float16, {"batch_5_3": LOSS_SPLITS["batch_5_3"]},
                                      {"both": WEIGHTINGS["both"]})
        results["plain_all_reduce"] += plain_all_reduce_cases(rank, mode_name)
        results["training"] += training_cases(rank, mode_name)
    if not results["bytecode_refused"]:
        results["loss"] += loss_cases(rank, "bytecode", splits=BYTECODE_SPLITS)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"rank{rank}.json").write_text(json.dumps(results))
    print(f"rank {rank}: {sum(len(results[kind]) for kind in CASE_KINDS)} cases written", flush=True)


if __name__ == "__main__":
    main()
