"""Every example in examples/ run in its smoke mode, as a subprocess of this interpreter in a temporary directory,
checked on what it prints and saves.

The examples are found beside tests/ (tests/support/examples.py) and import ms_bcewl as any user program does:
the installed package when the suite runs as CI runs it (`pip install ".[test]"`,
`python3 -P -m pytest -q tests`). They need scikit-learn, matplotlib and PyYAML (the test extra). About two
minutes in all on two cores, most of it the two-worker msrun jobs.
"""
import re

import pytest

from support.examples import EXAMPLES, load_module, run_example
from support.native_build import HANG_GUARD_SECONDS

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def number_after(label, text):
    found = re.findall(rf"{label}\s+([-+0-9.e]+)", text)
    assert found, f"no '{label} <number>' in:\n{text}"
    return float(found[-1])


def test_train_graph_learns_breast_cancer_and_saves_a_png(tmp_path):
    plot = tmp_path / "metrics.png"
    out = run_example("train_graph.py", "--epochs", "5", "--out", str(plot), cwd=tmp_path)
    epochs = [line for line in out.splitlines() if line.startswith("epoch ")]
    assert len(epochs) == 5
    for name in ("loss", "accuracy", "precision", "recall", "roc_auc"):
        assert name in epochs[-1]
    assert number_after("final accuracy", out) > 0.9
    assert number_after("roc_auc", out) > 0.95
    assert plot.read_bytes()[:8] == PNG_SIGNATURE


def test_debug_pynative_shows_losses_gradients_and_errors_then_trains_on(tmp_path):
    out = run_example("debug_pynative.py", "--steps", "3", cwd=tmp_path)
    assert "largest 5" in out
    for name in ("input", "target", "weight", "pos_weight"):
        assert re.search(rf"d/d {name}\s+shape", out), name
    assert number_after("max difference", out) < 1e-6
    assert re.search(r"ValueError: .*target.*\(426,\)", out)
    assert re.search(r"TypeError: .*input.*[Ff]loat64", out)
    assert "training continues: 3 steps" in out
    assert "unexpected" not in out


def test_recipe_compares_both_losses_and_reloads_the_checkpoint(tmp_path):
    out = run_example("recipes/multilabel/train.py", "--compare", "--set", "epochs=2", cwd=tmp_path)
    table = {line.split()[0]: line.split() for line in out.splitlines()
             if line.startswith(("mindspore ", "ms_bcewl "))}
    assert set(table) == {"mindspore", "ms_bcewl"}
    for row in table.values():
        assert row[-1] == "same", row
    assert abs(float(table["mindspore"][1]) - float(table["ms_bcewl"][1])) < 0.02
    assert abs(float(table["mindspore"][2]) - float(table["ms_bcewl"][2])) < 1e-3
    assert "ms_bcewl.bce_with_logits.BCEWithLogitsLoss" in out and "mindspore.nn.loss.loss.BCEWithLogitsLoss" in out
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["multilabel_mindspore.ckpt",
                                                                           "multilabel_ms_bcewl.ckpt"]


def test_recipe_config_reads_the_same_without_pyyaml():
    import yaml

    config = load_module("recipes/multilabel/config.py")
    text = (EXAMPLES / "recipes" / "multilabel" / "config.yaml").read_text()
    assert config.parse_flat_yaml(text) == yaml.safe_load(text)
    changed = config.apply_overrides(yaml.safe_load(text), ["loss=mindspore", "epochs=3", "pos_weight=false"])
    assert (changed["loss"], changed["epochs"], changed["pos_weight"]) == ("mindspore", 3, False)
    with pytest.raises(ValueError, match="no_such_key"):
        config.apply_overrides(changed, ["no_such_key=1"])


@pytest.mark.same_for_every_build
def test_distributed_data_parallel_matches_single_process(tmp_path):
    out = run_example("distributed/check_data_parallel.py", "--workers", "2", "--steps", "5", "--timeout",
                      str(HANG_GUARD_SECONDS // 2), cwd=tmp_path)
    assert re.search(r"^PASS: 2 data-parallel workers", out, re.MULTILINE), out
    assert number_after("per rank:", out) <= 1e-5


@pytest.mark.same_for_every_build
def test_distributed_class_split_matches_single_process(tmp_path):
    out = run_example("distributed/check_class_split.py", "--workers", "2", "--steps", "5", "--timeout",
                      str(HANG_GUARD_SECONDS // 2), cwd=tmp_path)
    assert re.search(r"^PASS: 2 workers splitting the 10 digit labels", out, re.MULTILINE), out
    assert number_after("per rank:", out) <= 1e-5
