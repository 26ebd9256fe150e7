"""setup.py's choice of what to build: the host library always, the Ascend parts only with MS_BCEWL_BUILD_ASCEND=1
and a CANN toolkit; and where an in-place build puts the library. setup.py is imported (its setup() call runs only
as __main__); nothing is built here."""
import importlib.util
import os

import pytest

pytestmark = pytest.mark.source_tree

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def setup_module():
    spec = importlib.util.spec_from_file_location("ms_bcewl_setup", os.path.join(REPO, "setup.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _toolkit(tmp_path, name, marker="compiler"):
    root = tmp_path / name
    (root / marker).mkdir(parents=True)
    return root


def test_no_ascend_build_without_the_opt_in(setup_module, tmp_path):
    toolkit = _toolkit(tmp_path, "cann")
    for environ in ({}, {"ASCEND_HOME_PATH": str(toolkit)},
                    {"ASCEND_HOME_PATH": str(toolkit), "MS_BCEWL_BUILD_ASCEND": "0"}):
        chosen, reason = setup_module.ascend_build_toolkit(environ)
        assert chosen is None and "MS_BCEWL_BUILD_ASCEND is not 1" in reason


def test_no_ascend_build_without_a_toolkit(setup_module, tmp_path):
    not_a_toolkit = tmp_path / "empty"
    not_a_toolkit.mkdir()
    for environ in ({"MS_BCEWL_BUILD_ASCEND": "1"},
                    {"MS_BCEWL_BUILD_ASCEND": "1", "ASCEND_HOME_PATH": str(not_a_toolkit)},
                    {"MS_BCEWL_BUILD_ASCEND": "1", "ASCEND_TOOLKIT_HOME": str(tmp_path / "missing")}):
        chosen, reason = setup_module.ascend_build_toolkit(environ)
        assert chosen is None and "ASCEND_HOME_PATH nor ASCEND_TOOLKIT_HOME" in reason


@pytest.mark.parametrize("variable", ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"])
@pytest.mark.parametrize("marker", ["compiler", "lib64"])
def test_ascend_build_with_the_opt_in_and_a_toolkit(setup_module, tmp_path, variable, marker):
    toolkit = _toolkit(tmp_path, "cann", marker)
    chosen, _ = setup_module.ascend_build_toolkit({"MS_BCEWL_BUILD_ASCEND": "1", variable: str(toolkit)})
    assert chosen == toolkit


def test_ascend_home_path_wins_and_an_invalid_one_falls_back(setup_module, tmp_path):
    home, toolkit_home = _toolkit(tmp_path, "home"), _toolkit(tmp_path, "toolkit_home")
    environ = {"MS_BCEWL_BUILD_ASCEND": "1", "ASCEND_HOME_PATH": str(home), "ASCEND_TOOLKIT_HOME": str(toolkit_home)}
    assert setup_module.ascend_build_toolkit(environ)[0] == home
    environ["ASCEND_HOME_PATH"] = str(tmp_path / "missing")
    assert setup_module.ascend_build_toolkit(environ)[0] == toolkit_home


def test_native_libraries_and_their_file_names(setup_module, tmp_path):
    from setuptools import Distribution

    command = setup_module.BuildNativeLibrary(Distribution())
    host_only = setup_module.native_libraries({})
    assert [type(ext) for ext in host_only] == [setup_module.NativeLibrary]
    assert command.get_ext_filename(host_only[0].name) == os.path.join("ms_bcewl", "lib", "libms_bcewl.so")

    toolkit = _toolkit(tmp_path, "cann")
    both = setup_module.native_libraries({"MS_BCEWL_BUILD_ASCEND": "1", "ASCEND_HOME_PATH": str(toolkit)})
    assert [type(ext) for ext in both] == [setup_module.NativeLibrary, setup_module.OpPackage]
    assert both[1].toolkit == toolkit
    assert both[1].source_dir == setup_module.ROOT / "ascendc"
    assert command.get_ext_filename(both[1].name) == os.path.join("ms_bcewl", "lib", "ms_bcewl_op_package.run")


def test_find_built_op_package(setup_module, tmp_path):
    with pytest.raises(RuntimeError, match="op package build left no"):
        setup_module.find_built_op_package(tmp_path)
    vendor = (tmp_path / "op_package/CustomProject/build_out/_CPack_Package/Linux/External/"
              "custom_opp_ubuntu_aarch64.run/packages/vendors/ms_bcewl")
    header = vendor / setup_module.OP_PACKAGE_HEADER
    header.parent.mkdir(parents=True)
    header.write_text("")
    installer = tmp_path / "op_package/CustomProject/build_out/custom_opp_ubuntu_aarch64.run"
    installer.write_text("")
    assert setup_module.find_built_op_package(tmp_path) == installer


def test_an_in_place_build_makes_the_library_folder_and_ships_the_pyboost_sources(setup_module, tmp_path):
    """`python setup.py build_ext --inplace` on a fresh clone failed copying the library: "could not create
    'ms_bcewl/lib/libms_bcewl.so': No such file or directory" (git holds no ms_bcewl/lib/)."""
    from setuptools import Distribution  # pylint: disable=import-outside-toplevel
    built = tmp_path / "build" / setup_module.LIBRARY_NAME
    built.parent.mkdir()
    built.write_bytes(b"a built library")
    in_place = tmp_path / "ms_bcewl" / "lib" / setup_module.LIBRARY_NAME
    setup_module.BuildNativeLibrary(Distribution()).copy_file(str(built), str(in_place))
    assert in_place.read_bytes() == b"a built library"
    assert (in_place.parent / "mindspore_entries.cpp").read_bytes() == setup_module.PYBOOST_SOURCE.read_bytes()
    assert (in_place.parent / "include" / "aclnnop").is_dir()

