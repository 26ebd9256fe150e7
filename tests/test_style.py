"""The Python sources pass ruff with the project's configuration (pyproject.toml: pycodestyle, pyflakes and
bugbear at 120 columns), so that unused imports, undefined names and late-bound loop variables fail the suite; the
C++ sources are as clang-format (.clang-format; the version pinned in pyproject.toml) writes them."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.source_tree

REPO = Path(__file__).resolve().parents[1]


def test_python_sources_pass_ruff():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", str(REPO)], cwd=REPO,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def _cpp_sources():
    listed = subprocess.run(["git", "ls-files", "*.cpp", "*.h", "*.cc"], cwd=REPO, capture_output=True, text=True,
                            check=False)
    if listed.returncode == 0 and listed.stdout.strip():
        return listed.stdout.split()
    # not a git checkout (an unpacked source archive): every C++ file of the tree
    return [str(path.relative_to(REPO)) for pattern in ("*.cpp", "*.h", "*.cc") for path in REPO.rglob(pattern)]


def test_cpp_sources_are_clang_formatted():
    clang_format = shutil.which("clang-format", path=str(Path(sys.executable).parent)) or shutil.which("clang-format")
    assert clang_format, "clang-format is missing: pip install '.[test]' installs it"
    sources = _cpp_sources()
    assert len(sources) > 50, sources
    done = subprocess.run([clang_format, "--dry-run", "--Werror", *sources], cwd=REPO, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr[-6000:]
