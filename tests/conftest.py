"""Shared pytest configuration for the Python test suites.

MindSpore is imported lazily, only by the tests that ask for an execution mode, so that the native suites in this
folder do not pay for it.  Every MindSpore test runs in one process and switches the mode through the `mode`
fixture (parametrised over PyNative and GRAPH) or the `pynative` fixture. The native programs are built once per
session, plainly and with sanitizers (`plain_native_build`, `sanitized_native_build`), for every module that runs
them. Both builds start with the session's first test, at low priority beside the other tests (most of which keep
one of the two cores busy), and the tests that need them run last; the native test program runs from each build as
soon as it is done (`plain_native_tests_run`, `sanitized_native_tests_run`).
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


# The session's native builds: fixture name -> whether it is the sanitized one.
NATIVE_BUILDS = {"plain_native_build": False, "sanitized_native_build": True}
# Runs of the native test program started by the build they run from: fixture name -> the build's fixture name.
NATIVE_TESTS_RUNS = {"plain_native_tests_run": "plain_native_build",
                     "sanitized_native_tests_run": "sanitized_native_build"}


def native_builds_of(item):
    wanted = {NATIVE_TESTS_RUNS.get(name, name) for name in item.fixturenames}
    return [name for name in NATIVE_BUILDS if name in wanted]


def pytest_collection_modifyitems(items):
    """The tests of the native programs go last (a stable sort), so that their builds run beside the others; they
    build the source tree, so they are `source_tree` tests (pyproject.toml's markers)."""
    for item in items:
        if native_builds_of(item):
            item.add_marker(pytest.mark.source_tree)
    items.sort(key=lambda item: bool(native_builds_of(item)))


@pytest.fixture(scope="session", autouse=True)
def native_builds(request, tmp_path_factory):
    """Starts, with the first test, the builds that the collected tests need (tests/support/native_build.py)."""
    from support.native_build import BackgroundBuild  # pylint: disable=import-outside-toplevel
    needed = sorted({name for item in request.session.items for name in native_builds_of(item)})
    runs = {NATIVE_TESTS_RUNS[name] for item in request.session.items for name in item.fixturenames
            if name in NATIVE_TESTS_RUNS}
    return {name: BackgroundBuild(tmp_path_factory.mktemp(name), NATIVE_BUILDS[name], name in runs) for name in needed}


@pytest.fixture(scope="session")
def plain_native_build(native_builds):
    """aclnn_adapter/ with every native program, Release; built once per session."""
    return native_builds["plain_native_build"].result()


@pytest.fixture(scope="session")
def sanitized_native_build(native_builds):
    """The same with ASan + UBSan (Debug); built once per session."""
    return native_builds["sanitized_native_build"].result()


@pytest.fixture(scope="session")
def plain_native_tests_run(native_builds):
    """The native test program's run from the plain build (a CompletedProcess), started as soon as it was built."""
    return native_builds["plain_native_build"].native_tests_run()


@pytest.fixture(scope="session")
def sanitized_native_tests_run(native_builds):
    """The same from the sanitized build, under ASan + UBSan."""
    return native_builds["sanitized_native_build"].native_tests_run()
