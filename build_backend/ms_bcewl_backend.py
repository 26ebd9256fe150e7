"""setuptools' build backend (setup.py builds everything), plus the compiler a wheel build needs.

With MS_BCEWL_WHEEL_TARGET set, `pip wheel .` or `python -m build --wheel` gets PyPI's ziglang in the isolated build
environment, whose `zig c++` setup.py compiles the library with; a plain `pip install .` asks for nothing more than
pyproject.toml's build requirements and compiles with the machine's g++.
"""
import os

from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F401,F403 (the hooks this backend does not change)

# The version the wheels of docs/wheels.md were built and checked with.
ZIG_REQUIREMENT = "ziglang==0.17.1"


def get_requires_for_build_wheel(config_settings=None):
    requirements = build_meta.get_requires_for_build_wheel(config_settings)
    return requirements + [ZIG_REQUIREMENT] if os.environ.get("MS_BCEWL_WHEEL_TARGET") else requirements
