"""Shared pytest configuration for the Python test suites.

MindSpore is imported lazily, only by the tests that ask for an execution mode, so that the native suites in this
folder do not pay for it.  Every MindSpore test runs in one process and switches the mode through the `mode`
fixture (parametrised over PyNative and GRAPH) or the `pynative` fixture.
"""
import os
import sys

import pytest

# tests/reference.py is imported as `reference` whatever the import mode or packaging of this folder.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

MODES = ("pynative", "graph")


_DEVICE_SET = []


def set_mode(name):
    """Switch MindSpore (on CPU) to PyNative or GRAPH mode."""
    import mindspore as ms

    if not _DEVICE_SET:
        if hasattr(ms, "set_device"):  # MindSpore 2.5+: set_context(device_target=...) is deprecated
            ms.set_device("CPU")
        else:
            ms.set_context(device_target="CPU")
        _DEVICE_SET.append(True)
    ms.set_context(mode=ms.PYNATIVE_MODE if name == "pynative" else ms.GRAPH_MODE)
    return name


@pytest.fixture(params=MODES)
def mode(request):
    """Runs the test once in PyNative and once in GRAPH mode (override with parametrize(..., indirect=True))."""
    yield set_mode(request.param)
    set_mode("pynative")


@pytest.fixture
def pynative():
    return set_mode("pynative")
