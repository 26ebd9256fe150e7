"""The binary-wheel build path of setup.py and build_backend/ (docs/wheels.md), and the build record CMake writes
for `ms-bcewl info`. setup.py and the backend are imported, not run; the record test configures
aclnn_adapter/CMakeLists.txt with the machine's compiler (about 5 s) and builds nothing."""
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.source_tree

REPO = Path(__file__).resolve().parent.parent


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def setup_module():
    return load("ms_bcewl_setup_for_wheels", REPO / "setup.py")


@pytest.fixture(scope="module")
def backend():
    return load("ms_bcewl_backend_for_wheels", REPO / "build_backend" / "ms_bcewl_backend.py")


def test_a_plain_build_keeps_cmakes_own_compiler(setup_module):
    for environ in ({}, {"MS_BCEWL_WHEEL_TARGET": ""}):
        assert setup_module.toolchain_arguments(environ) == []
        assert setup_module.wheel_machine(environ) is None


def test_a_wheel_build_retargets_zig_to_the_wheels_machine_and_glibc(setup_module, monkeypatch, tmp_path):
    zig = tmp_path / "zig"
    zig.write_text("#!/bin/sh\n")
    monkeypatch.setattr(setup_module, "_zig_executable", lambda: str(zig))
    arguments = setup_module.toolchain_arguments({"MS_BCEWL_WHEEL_TARGET": "aarch64"})
    assert arguments == [f"-DCMAKE_TOOLCHAIN_FILE={REPO / 'cmake' / 'zig-toolchain.cmake'}", f"-DMS_BCEWL_ZIG={zig}",
                         "-DMS_BCEWL_ZIG_TARGET=aarch64-linux-gnu.2.28",
                         "-DMS_BCEWL_BUILD_KIND=wheel manylinux_2_28_aarch64"]
    assert (REPO / "cmake" / "zig-toolchain.cmake").is_file()


def test_an_unknown_wheel_machine_is_refused_by_name(setup_module):
    with pytest.raises(RuntimeError, match="MS_BCEWL_WHEEL_TARGET='riscv64'; expected one of x86_64, aarch64"):
        setup_module.wheel_machine({"MS_BCEWL_WHEEL_TARGET": "riscv64"})


def test_a_wheel_is_tagged_for_every_python_and_glibc_2_28(setup_module, monkeypatch):
    from setuptools.dist import Distribution

    command = setup_module.manylinux_wheel_command()(Distribution({"name": "ms_bcewl", "ext_modules": []}))
    command.ensure_finalized()
    monkeypatch.setenv("MS_BCEWL_WHEEL_TARGET", "x86_64")
    assert command.get_tag() == ("py3", "none", "manylinux_2_28_x86_64")


def test_the_backend_asks_for_zig_only_for_a_wheel(backend, monkeypatch):
    monkeypatch.delenv("MS_BCEWL_WHEEL_TARGET", raising=False)
    monkeypatch.setattr(backend.build_meta, "get_requires_for_build_wheel", lambda config_settings=None: ["wheel"])
    assert backend.get_requires_for_build_wheel() == ["wheel"]
    monkeypatch.setenv("MS_BCEWL_WHEEL_TARGET", "x86_64")
    assert backend.get_requires_for_build_wheel() == ["wheel", backend.ZIG_REQUIREMENT]


def cmake_executable():
    try:
        import cmake  # PyPI's, as setup.py builds with it
        return str(Path(cmake.CMAKE_BIN_DIR) / "cmake")
    except ImportError:
        return shutil.which("cmake")


def configure(build_dir, *arguments):
    done = subprocess.run([cmake_executable(), "-S", str(REPO / "aclnn_adapter"), "-B",
                           str(build_dir), *arguments], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads((build_dir / "libms_bcewl.build.json").read_text())


def test_cmake_records_the_build_kind_compiler_machine_and_kernels(tmp_path):
    record = configure(tmp_path / "source")
    assert record["build"] == "source"
    assert record["machine"] == platform.machine()
    assert record["compiler"].split()[0] in ("GNU", "Clang")
    expected = ["scalar", "avx2", "avx512", "avx512bf16"] if platform.machine() == "x86_64" else ["scalar"]
    assert record["isa_kernels"] == expected
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", record["configured"])
    record = configure(tmp_path / "wheel", "-DMS_BCEWL_BUILD_KIND=wheel manylinux_2_28_x86_64")
    assert record["build"] == "wheel manylinux_2_28_x86_64"


def _sdist_members(tree, out):
    """The members of the sdist that the project's backend builds from `tree`, without the leading folder."""
    subprocess.run([sys.executable, "-c", "import sys, ms_bcewl_backend; ms_bcewl_backend.build_sdist(sys.argv[1])",
                    str(out)], cwd=tree, env=dict(os.environ, PYTHONPATH=str(tree / "build_backend")), check=True,
                   capture_output=True)
    (archive,) = out.glob("*.tar.gz")
    with tarfile.open(archive) as sdist:
        return {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}


def _copy_of_the_tree(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(REPO, tree, ignore=shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__",
                                                              ".pytest_cache", ".ruff_cache", "rank_*"))
    return tree


def test_the_sdist_carries_every_source_the_build_and_the_tests_read(tmp_path):
    """`python -m build` (an sdist, then a wheel from it) failed: the sdist lacked aclnn_adapter/. Its tests could
    not run either: it carried the test files without conftest.py, support/ and the native test sources."""
    tree = _copy_of_the_tree(tmp_path)
    members = _sdist_members(tree, tmp_path / "dist")
    for folder in ("aclnn_adapter", "ascendc", "cmake", "build_backend", "tests", "examples"):
        sources = {str(path.relative_to(tree)) for path in (tree / folder).rglob("*") if path.is_file()}
        assert sources and sources <= members, sorted(sources - members)[:10]
    assert {"setup.py", "pyproject.toml", "README.md", ".clang-format", "ms_bcewl/bce_with_logits.py"} <= members
    assert not any(name.startswith("ms_bcewl/lib/") for name in members), "a built library went into the sdist"


def _collected(tests, work):
    """The ids of the tests pytest collects from folder `tests`, relative to it, in a child run from `work`."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           str(tests)], cwd=work, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return {line.split("tests/", 1)[1] for line in done.stdout.splitlines() if "::" in line}


def test_the_sdists_tests_run_as_the_source_trees_do(tmp_path):
    """The suite unpacked from the sdist collects the same tests as the source tree's, and one of them passes there
    (conftest.py, support/ and the float64 reference, against the installed package)."""
    tree = _copy_of_the_tree(tmp_path)
    _sdist_members(tree, tmp_path / "dist")
    (archive,) = (tmp_path / "dist").glob("*.tar.gz")
    with tarfile.open(archive) as sdist:
        sdist.extractall(tmp_path / "unpacked", filter="data")
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    work = tmp_path / "work"
    work.mkdir()
    assert _collected(unpacked / "tests", work) == _collected(REPO / "tests", work)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(unpacked / "tests" / "test_functional.py"), "-k", "test_golden_doc_example"],
                          cwd=work, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and " passed" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
