"""The binary-wheel build path of setup.py and build_backend/ (docs/wheels.md), the build record CMake writes for
`ms-bcewl info`, and what every artifact carries (the license, its metadata, the classifiers) and the changelog.
setup.py and the backend are imported, not run; the record test configures aclnn_adapter/CMakeLists.txt with the
machine's compiler (about 5 s) and builds nothing; the backend builds one sdist and the wheels' metadata from a copy
of the tree (a few seconds), not a wheel."""
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
from packaging.specifiers import SpecifierSet

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
    expected = ["scalar", "avx2", "avx512", "avx512bf16"] if platform.machine() == "x86_64" else ["scalar", "neon"]
    assert record["isa_kernels"] == expected
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", record["configured"])
    record = configure(tmp_path / "wheel", "-DMS_BCEWL_BUILD_KIND=wheel manylinux_2_28_x86_64")
    assert record["build"] == "wheel manylinux_2_28_x86_64"


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A copy of the source tree without what builds and tests leave in it."""
    copy = tmp_path_factory.mktemp("source") / "tree"
    shutil.copytree(REPO, copy, ignore=shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__",
                                                              ".pytest_cache", ".ruff_cache", "rank_*"))
    return copy


def run_backend_hook(tree, hook, out):
    """Runs a PEP 517 hook of the project's backend in `tree`, writing into `out`; returns its stderr."""
    out.mkdir()
    done = subprocess.run([sys.executable, "-c", f"import sys, ms_bcewl_backend; ms_bcewl_backend.{hook}(sys.argv[1])",
                           str(out)], cwd=tree, env=dict(os.environ, PYTHONPATH=str(tree / "build_backend")),
                          check=False, capture_output=True, text=True)
    assert done.returncode == 0, f"{hook} failed:\n{done.stderr[-3000:]}"
    return done.stderr


@pytest.fixture(scope="module")
def sdist(tree, tmp_path_factory):
    """(the sdist the project's backend builds from `tree`, the backend's stderr)."""
    out = tmp_path_factory.mktemp("sdist") / "dist"
    stderr = run_backend_hook(tree, "build_sdist", out)
    (archive,) = out.glob("*.tar.gz")
    return archive, stderr


def sdist_members(archive):
    """The members of the sdist, without the leading folder."""
    with tarfile.open(archive) as sdist_file:
        return {name.split("/", 1)[1] for name in sdist_file.getnames() if "/" in name}


def test_the_sdist_carries_every_source_the_build_and_the_tests_read(tree, sdist):
    """`python -m build` (an sdist, then a wheel from it) failed: the sdist lacked aclnn_adapter/. Its tests could
    not run either: it carried the test files without conftest.py, support/ and the native test sources."""
    members = sdist_members(sdist[0])
    for folder in ("aclnn_adapter", "ascendc", "cmake", "build_backend", "tests", "examples"):
        sources = {str(path.relative_to(tree)) for path in (tree / folder).rglob("*") if path.is_file()}
        assert sources and sources <= members, sorted(sources - members)[:10]
    assert {"setup.py", "pyproject.toml", "README.md", ".clang-format", "ms_bcewl/bce_with_logits.py"} <= members
    assert not any(name.startswith("ms_bcewl/lib/") for name in members), "a built library went into the sdist"


# ---- The license and the release record ----

LICENSE_TEXT = (REPO / "LICENSE").read_bytes() if (REPO / "LICENSE").is_file() else None


def test_the_repository_carries_the_apache_2_0_text():
    assert LICENSE_TEXT is not None, "no LICENSE file"
    lines = [line.strip() for line in LICENSE_TEXT.decode().splitlines()[:4]]
    assert lines[1:3] == ["Apache License", "Version 2.0, January 2004"], lines
    assert b"END OF TERMS AND CONDITIONS" in LICENSE_TEXT


def metadata_fields(text, name):
    return [line.split(": ", 1)[1] for line in text.splitlines() if line.startswith(f"{name}: ")]


def check_license_metadata(metadata, where):
    assert metadata_fields(metadata, "License-Expression") == ["Apache-2.0"], where
    assert metadata_fields(metadata, "License-File") == ["LICENSE"], where
    assert not metadata_fields(metadata, "License"), f"{where}: a free-text License field beside the SPDX one"


def test_the_sdist_carries_the_license_and_its_build_does_not_warn_about_it(sdist):
    archive, stderr = sdist
    folder = archive.name[:-len(".tar.gz")]
    with tarfile.open(archive) as sdist_file:
        assert sdist_file.extractfile(f"{folder}/LICENSE").read() == LICENSE_TEXT
        check_license_metadata(sdist_file.extractfile(f"{folder}/PKG-INFO").read().decode(), "PKG-INFO")
    assert "project.license" not in stderr and "License classifiers" not in stderr, stderr[-3000:]


def test_the_wheels_carry_the_license_and_their_build_does_not_warn_about_it(tree, tmp_path):
    """The dist-info every wheel gets (the backend's wheel metadata: the same for the source and the manylinux
    wheels, which differ only in their tag and library), without compiling the library."""
    stderr = run_backend_hook(tree, "prepare_metadata_for_build_wheel", tmp_path / "metadata")
    (dist_info,) = (tmp_path / "metadata").glob("*.dist-info")
    assert (dist_info / "licenses" / "LICENSE").read_bytes() == LICENSE_TEXT
    metadata = (dist_info / "METADATA").read_text()
    check_license_metadata(metadata, "METADATA")
    assert "project.license" not in stderr and "License classifiers" not in stderr, stderr[-3000:]
    classifiers = metadata_fields(metadata, "Classifier")
    (requires_python,) = metadata_fields(metadata, "Requires-Python")
    supported = [f"3.{minor}" for minor in range(30) if f"3.{minor}" in SpecifierSet(requires_python)]
    assert supported and [c for c in classifiers if c.startswith("Programming Language :: Python :: 3.")] == \
        [f"Programming Language :: Python :: {version}" for version in supported]
    assert "Operating System :: POSIX :: Linux" in classifiers
    assert any(c.startswith("Topic :: ") for c in classifiers), classifiers


def quoted_assignment(path, name):
    """The string a line `name = "..."` of the file assigns."""
    return re.search(rf'^{name} = "([^"]+)"', path.read_text(), re.MULTILINE).group(1)


def test_the_changelog_opens_with_the_packages_version():
    """A release adds its entry at the top of CHANGELOG.md with the version it sets in both places."""
    headings = [line[3:].split()[0] for line in (REPO / "CHANGELOG.md").read_text().splitlines()
                if line.startswith("## ")]
    versions = {quoted_assignment(REPO / "pyproject.toml", "version"),
                quoted_assignment(REPO / "ms_bcewl" / "__init__.py", "__version__")}
    assert headings and {headings[0]} == versions, (headings[:1], versions)


def _collected(tests, work):
    """The ids of the tests pytest collects from folder `tests`, relative to it, in a child run from `work`."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           str(tests)], cwd=work, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return {line.split("tests/", 1)[1] for line in done.stdout.splitlines() if "::" in line}


def test_the_sdists_tests_run_as_the_source_trees_do(sdist, tmp_path):
    """The suite unpacked from the sdist collects the same tests as the source tree's, and one of them passes there
    (conftest.py, support/ and the float64 reference, against the installed package)."""
    with tarfile.open(sdist[0]) as sdist_file:
        sdist_file.extractall(tmp_path / "unpacked", filter="data")
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    work = tmp_path / "work"
    work.mkdir()
    assert _collected(unpacked / "tests", work) == _collected(REPO / "tests", work)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(unpacked / "tests" / "test_functional.py"), "-k", "test_golden_doc_example"],
                          cwd=work, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and " passed" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
