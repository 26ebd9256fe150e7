"""AMP O1 (MindSpore's rewrite) on networks with ms_bcewl's Cell and with MindSpore's own loss, in one process.

ms_bcewl's Cells are on the rewrite's black list (ms_bcewl/_mindspore_internals.py): it calls them as they are.

The rewrite copies the imports of each Cell it rewrites together with ``sys.path.insert(0, <the Cell's folder>)``
and imports the base classes of MindSpore's cells by bare module name from the longest ``sys.path`` entry holding
them (``from loss import LossBase`` once ``mindspore/nn/loss`` is on the path). With ms_bcewl's folder ahead of it,
a module of ms_bcewl named like one of MindSpore's was taken for it:
``ImportError: cannot import name 'LossBase' from 'loss' (.../ms_bcewl/loss.py)``.
"""
import os
import shutil
import subprocess
import textwrap

import pytest

import ms_bcewl
from support import reference as R

# Built-in loss, ms_bcewl's, built-in again: each an O1 network that is built and run.
PROGRAM = textwrap.dedent("""
    import numpy as np
    import mindspore as ms
    from mindspore import amp, nn
    import ms_bcewl

    x = ms.Tensor(np.linspace(-2, 2, 8, dtype=np.float32).reshape(2, 4))
    y = ms.Tensor(np.array([[1, 0, 1], [0, 1, 0]], np.float32))
    for name, loss in (("mindspore", nn.BCEWithLogitsLoss()), ("ms_bcewl", ms_bcewl.BCEWithLogitsLoss()),
                       ("mindspore", nn.BCEWithLogitsLoss())):
        ms.set_seed(0)
        network = amp.auto_mixed_precision(nn.WithLossCell(nn.Dense(4, 3), loss), "O1")
        print(name, float(network(x, y).asnumpy()))

    class CallsTheFunction(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(4, 3)

        def construct(self, x, y):
            return ms_bcewl.binary_cross_entropy_with_logits(self.dense(x), y)

    ms.set_seed(0)
    print("ms_bcewl_function", float(amp.auto_mixed_precision(CallsTheFunction(), "O1")(x, y).asnumpy()))
""")


@pytest.mark.parametrize("package_folder", ["site-packages", "checkout"])
def test_o1_networks_of_both_losses_build_in_one_process(tmp_path, package_folder):
    """ms_bcewl installed (under site-packages, which the rewrite treats as a third-party package) or in a source
    checkout on PYTHONPATH (an editable install), and a program run from its own folder, as a user runs one. From a
    checkout the rewrite copied ms_bcewl's functions into its generated network, for the Cell and for a network
    that calls the function: NameError: name '_API' is not defined."""
    packages = tmp_path / package_folder
    shutil.copytree(os.path.dirname(ms_bcewl.__file__), packages / "ms_bcewl",
                    ignore=shutil.ignore_patterns("__pycache__"))
    workdir = tmp_path / "work"
    workdir.mkdir()
    env = dict(os.environ, PYTHONPATH=str(packages))
    (workdir / "program.py").write_text(PROGRAM)  # the rewrite reads the source of the Cells it converts
    result = subprocess.run([*R.PYTHON, "program.py"], cwd=workdir, env=env, capture_output=True,
                            text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    losses = [line.split() for line in result.stdout.splitlines()]
    assert [name for name, _ in losses] == ["mindspore", "ms_bcewl", "mindspore", "ms_bcewl_function"], result.stdout
    assert abs(float(losses[0][1]) - float(losses[1][1])) < 1e-3, result.stdout
    assert abs(float(losses[0][1]) - float(losses[3][1])) < 1e-3, result.stdout
