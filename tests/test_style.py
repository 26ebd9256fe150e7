"""The Python sources pass ruff with the project's configuration (pyproject.toml: pycodestyle, pyflakes and
bugbear at 120 columns), so that unused imports, undefined names and late-bound loop variables fail the suite."""
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_python_sources_pass_ruff():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", str(REPO)], cwd=REPO,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
