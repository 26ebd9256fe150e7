"""Shared pytest configuration for the Python test suites.

MindSpore is imported lazily, only by the tests that ask for an execution mode, so that the native suites in this
folder do not pay for it.  Every MindSpore test runs in one process and switches the mode through the `mode`
fixture (parametrised over PyNative and GRAPH) or the `pynative` fixture. The native programs are built once per
session, plainly and with sanitizers (`plain_native_build`, `sanitized_native_build`), for every module that runs
them.
"""
import pytest

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


@pytest.fixture(scope="session")
def plain_native_build(tmp_path_factory):
    """aclnn_adapter/ with every native program, Release (tests/support/native_build.py); built once per session."""
    from support.native_build import build_native  # pylint: disable=import-outside-toplevel
    return build_native(tmp_path_factory.mktemp("native_plain"), sanitize=False)


@pytest.fixture(scope="session")
def sanitized_native_build(tmp_path_factory):
    """The same with ASan + UBSan (Debug); built once per session."""
    from support.native_build import build_native  # pylint: disable=import-outside-toplevel
    return build_native(tmp_path_factory.mktemp("native_sanitized"), sanitize=True)
