"""The programs of examples/ as the tests use them: run as a user runs them, or loaded as a module from their file."""
import importlib.util
import subprocess
import sys
from pathlib import Path

from support.native_build import HANG_GUARD_SECONDS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(script, *args, cwd, timeout=HANG_GUARD_SECONDS):
    """stdout of `python examples/<script> args...` run in cwd; fails the test with its output if it fails."""
    finished = subprocess.run([sys.executable, str(EXAMPLES / script), *args], cwd=cwd, capture_output=True,
                              text=True, timeout=timeout, check=False)
    assert finished.returncode == 0, (f"{script} exited with {finished.returncode}\n--- stdout\n"
                                      f"{finished.stdout[-4000:]}\n--- stderr\n{finished.stderr[-4000:]}")
    return finished.stdout


def load_module(relative_path):
    """examples/<relative_path> as a module. Loaded from its file because examples/ is no package, and putting
    its folders on sys.path would let their modules shadow others."""
    path = EXAMPLES / relative_path
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
