"""Loading safety (docs/reliability.md §7): ms_bcewl names only its own library, by absolute path, checks it before
MindSpore sees it, and works under MindSpore's MS_CUSTOM_AOT_WHITE_LIST.

The checks of ms_bcewl/_library.py run here on crafted files in a temporary directory (ELF headers of other
machines, classes, byte orders and types, files that are not ELF) and crafted environments; one subprocess imports
the package under MS_CUSTOM_AOT_WHITE_LIST, first naming another directory, then ms_bcewl/lib, and computes losses.
"""
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ms_bcewl import _library as _library

INSTALLED_LIBRARY = _library.LIBRARY_PATH
X86_64, AARCH64 = 62, 183  # ELF e_machine codes


def elf_header(machine=X86_64, elf_class=2, byte_order=1, e_type=3):
    """The first 20 bytes of an ELF file (the rest of its header does not matter to the check)."""
    order = "little" if byte_order == 1 else "big"
    ident = b"\x7fELF" + bytes([elf_class, byte_order, 1]) + bytes(9)
    return ident + e_type.to_bytes(2, order) + machine.to_bytes(2, order)


def write(tmp_path, content, name="libms_bcewl.so"):
    path = tmp_path / name
    path.write_bytes(content + bytes(64))
    return path


# ---------------------------------------------------------------------------------------------------------------
# The path MindSpore is given
# ---------------------------------------------------------------------------------------------------------------


def test_the_library_is_named_by_the_absolute_path_inside_the_installed_package():
    import ms_bcewl
    from ms_bcewl import _primitives as primitives

    package_dir = Path(ms_bcewl.__file__).resolve().parent
    assert _library.library_path() == str(package_dir / "lib" / "libms_bcewl.so")
    assert os.path.isabs(_library.library_path())
    names = {primitive.func.rsplit(":", 1)[0] for primitive in primitives.GRAPH_FORWARD.values()}
    assert names == {_library.library_path()}


def test_a_loss_hands_mindspore_the_inputs_its_caller_passed_and_no_unit():
    """Each tensor a PyNative call hands MindSpore costs it microseconds: a loss passes no 0-d unit for an absent
    weight. The input names are MindSpore's record of what each primitive takes."""
    from ms_bcewl import _primitives as primitives

    tables = {**primitives.GRAPH_FORWARD, **primitives.PYNATIVE_FORWARD}
    for key, primitive in tables.items():
        has_weight, has_pos_weight = key[:2]
        expected = ["input", "target"] + ["weight"] * has_weight + ["pos_weight"] * has_pos_weight
        assert primitive.attrs["input_names"] == expected, key


def test_the_installed_library_passes_the_checks():
    _library.check_library(INSTALLED_LIBRARY)
    assert _library.elf_problem(INSTALLED_LIBRARY.read_bytes()[:20], platform.machine()) is None


# ---------------------------------------------------------------------------------------------------------------
# check_library on crafted files
# ---------------------------------------------------------------------------------------------------------------


def test_a_missing_library_says_how_to_build_it(tmp_path):
    with pytest.raises(ImportError, match=r"libms_bcewl\.so is missing\. Reinstall ms_bcewl .*'pip install \.'"):
        _library.check_library(tmp_path / "libms_bcewl.so")


def test_an_unbuilt_source_tree_is_named_as_shadowing_the_installed_package(tmp_path):
    """`python -m ms_bcewl info` in the source tree: its ms_bcewl, which has no built library, is the one Python
    imports; the error said to reinstall, which changes nothing."""
    (tmp_path / "setup.py").write_text("")
    (tmp_path / "aclnn_adapter").mkdir()
    library = tmp_path / "ms_bcewl" / "lib" / "libms_bcewl.so"
    with pytest.raises(ImportError, match=rf"imported from its source tree {tmp_path} \(the current directory or "
                                          r"PYTHONPATH puts it ahead of an installed ms_bcewl\).*python -P"):
        _library.check_library(library)


def test_a_shared_library_for_this_machine_passes(tmp_path):
    _library.check_library(write(tmp_path, elf_header(X86_64)), machine="x86_64")
    _library.check_library(write(tmp_path, elf_header(AARCH64)), machine="aarch64")


def test_a_library_built_for_another_isa_is_named_with_both_machines(tmp_path):
    with pytest.raises(ImportError, match=r"was built for aarch64 \(ELF e_machine 183\), but this machine is "
                                          r"x86_64\. Reinstall ms_bcewl .*'pip install \.'"):
        _library.check_library(write(tmp_path, elf_header(AARCH64)), machine="x86_64")
    with pytest.raises(ImportError, match=r"was built for x86_64 \(ELF e_machine 62\), but this machine is arm64"):
        _library.check_library(write(tmp_path, elf_header(X86_64)), machine="arm64")


def test_an_unknown_e_machine_is_reported_by_its_code(tmp_path):
    with pytest.raises(ImportError, match=r"built for another machine \(ELF e_machine 9999\)"):
        _library.check_library(write(tmp_path, elf_header(9999)), machine="x86_64")


@pytest.mark.parametrize("content, found", [
    (b"", r"is not an ELF file \(it starts with b''\)"),
    (b"#!/bin/sh\necho not a library\n", r"is not an ELF file \(it starts with b'#!/bin/s'\)"),
    (b"\x7fEL", r"is not an ELF file"),
    (b"MZ\x90\x00" + bytes(16), r"is not an ELF file \(it starts with b'MZ\\x90"),
    (elf_header(elf_class=1), r"is a 32-bit little-endian ELF file, but this Python is 64-bit little-endian"),
    (elf_header(byte_order=2), r"is a 64-bit big-endian ELF file, but this Python is 64-bit little-endian"),
    (elf_header(elf_class=7), r"is a class-7 little-endian ELF file"),
    (elf_header(byte_order=3), r"is a 64-bit byte order 3 ELF file"),
    (elf_header(e_type=2), r"is an ELF file of type 2, not a shared library \(type 3\)"),
    (elf_header(e_type=1), r"is an ELF file of type 1, not a shared library"),
], ids=["empty", "script", "truncated_magic", "pe_dll", "elf32", "big_endian", "bad_class", "bad_byte_order",
        "executable", "object_file"])
def test_a_file_that_is_not_a_shared_library_for_this_python_is_refused(tmp_path, content, found):
    if sys.maxsize <= 2**32 or sys.byteorder != "little":
        pytest.fail("the expected messages assume a 64-bit little-endian Python")
    path = tmp_path / "libms_bcewl.so"
    path.write_bytes(content)  # exactly these bytes: a short file must be refused too
    with pytest.raises(ImportError, match=found):
        _library.check_library(path, machine="x86_64")


def test_a_path_with_a_colon_is_refused_before_mindspore_splits_it(tmp_path):
    folder = tmp_path / "a:b"
    folder.mkdir()
    with pytest.raises(ImportError, match=r"contains ':', which MindSpore's 'file:function' name"):
        _library.check_library(write(folder, elf_header()), machine="x86_64")


def test_the_check_reads_only_the_head_of_the_file(tmp_path):
    path = write(tmp_path, elf_header(X86_64))
    with open(path, "r+b") as sparse:
        sparse.truncate(50_000_000)  # 50 MB: reading it all would show in the time
    before = os.times()
    for _ in range(200):
        _library.check_library(path, machine="x86_64")
    spent = os.times().user - before.user + os.times().system - before.system
    assert spent < 0.5, f"200 checks took {spent:.2f} s of CPU"


# ---------------------------------------------------------------------------------------------------------------
# MS_CUSTOM_AOT_WHITE_LIST
# ---------------------------------------------------------------------------------------------------------------


def white_list(value):
    return {} if value is None else {_library.AOT_WHITE_LIST: str(value)}


@pytest.fixture
def library_in_lib(tmp_path):
    """tmp/lib/libms_bcewl.so, next to tmp/lib2 and tmp/link -> tmp/lib."""
    for folder in ("lib", "lib2", "lib/deeper"):
        (tmp_path / folder).mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "lib")
    return write(tmp_path / "lib", elf_header())


@pytest.mark.parametrize("value", [None, "lib", ".", "link", "lib/"],
                         ids=["unset", "library_dir", "ancestor", "symlink_to_library_dir", "trailing_slash"])
def test_the_white_list_allows_the_library_where_mindspore_does(library_in_lib, value):
    root = library_in_lib.parent.parent
    _library.check_aot_white_list(library_in_lib, white_list(None if value is None else f"{root}/{value}"))


@pytest.mark.parametrize("value", ["lib2", "li", "nowhere", "lib/deeper"],
                         ids=["other_dir", "sibling_with_common_prefix", "missing_dir", "subdirectory"])
def test_a_white_list_that_excludes_the_library_says_what_to_set(library_in_lib, value):
    value = library_in_lib.parent.parent / value
    message = (rf"only from under MS_CUSTOM_AOT_WHITE_LIST={value} \(.*\), and ms_bcewl's library {library_in_lib} is "
               rf"not there\. Set MS_CUSTOM_AOT_WHITE_LIST to {library_in_lib.parent} \(or a directory above it\), or "
               rf"unset it\.")
    with pytest.raises(ImportError, match=message):
        _library.check_aot_white_list(library_in_lib, white_list(value))


def test_an_empty_white_list_allows_nothing(tmp_path):
    library = write(tmp_path, elf_header())
    with pytest.raises(ImportError, match=r"MS_CUSTOM_AOT_WHITE_LIST is set but empty.* Set MS_CUSTOM_AOT_WHITE_LIST "
                                          rf"to {tmp_path} \(or a directory above it\), or unset it\."):
        _library.check_aot_white_list(library, white_list(""))


# One process: the import under a white list of another directory must fail with ms_bcewl's ImportError (before
# MindSpore's TypeError); with ms_bcewl/lib it must work in both modes, backward included; switching the variable
# afterwards is caught by MindSpore itself when it next infers or compiles a call.
WHITE_LIST_PROBE = """
import os, sys
import mindspore as ms
import numpy as np
ms.set_device("CPU")
library_dir, other_dir = sys.argv[1:3]

os.environ["MS_CUSTOM_AOT_WHITE_LIST"] = other_dir
try:
    import ms_bcewl
except ImportError as error:
    print("other directory:", error)

os.environ["MS_CUSTOM_AOT_WHITE_LIST"] = library_dir
import ms_bcewl
x = ms.Tensor(np.array([[-0.8, 1.2, 0.7], [-0.1, -0.4, 0.7]], np.float32))
y = ms.Tensor(np.array([[0.3, 0.8, 1.2], [-0.6, 0.1, 2.2]], np.float32))
p = ms.Tensor(np.array([2.0], np.float32))
loss = ms_bcewl.binary_cross_entropy_with_logits
weighted_sum = lambda x, y: loss(x, y, pos_weight=p, reduction="sum")
for mode, name in ((ms.PYNATIVE_MODE, "pynative"), (ms.GRAPH_MODE, "graph")):
    ms.set_context(mode=mode)
    run = ms.jit(loss) if name == "graph" else loss
    dx = ms.grad(weighted_sum)(x, y).asnumpy().ravel()
    print(name, run(x, y).asnumpy(), *dx)

ms.set_context(mode=ms.PYNATIVE_MODE)
os.environ["MS_CUSTOM_AOT_WHITE_LIST"] = other_dir
try:
    loss(x, y, reduction="sum").asnumpy()
except RuntimeError as error:
    print("switched at run time:", str(error).splitlines()[0])
"""


def test_the_package_works_under_a_white_list_of_its_library_directory_only(tmp_path):
    from support import reference as R

    library, library_dir, other_dir = (os.path.realpath(p) for p in (INSTALLED_LIBRARY, INSTALLED_LIBRARY.parent,
                                                                     tmp_path))
    env = {k: v for k, v in os.environ.items() if k != _library.AOT_WHITE_LIST}
    probe = tmp_path / "probe.py"  # graph mode compiles Python source, which it cannot get from `python -c`
    probe.write_text(WHITE_LIST_PROBE)
    done = subprocess.run([*R.PYTHON, str(probe), library_dir, other_dir], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 4, done.stdout
    assert lines[0] == (f"other directory: ms_bcewl: MindSpore loads custom operator libraries only from under "
                        f"MS_CUSTOM_AOT_WHITE_LIST={other_dir} ({other_dir}), and ms_bcewl's library {library} is not "
                        f"there. Set MS_CUSTOM_AOT_WHITE_LIST to {library_dir} (or a directory above it), or unset it.")
    case = R.golden_case("mean")
    expected = [case.expected_loss(), *R.grads(case.x, case.y, None, [2.0], "sum")[0].ravel()]
    for line, mode in zip(lines[1:3], ("pynative", "graph")):
        name, *values = line.split()
        assert name == mode
        assert [float(v) for v in values] == pytest.approx(expected, rel=1e-5, abs=1e-7), line
    assert lines[3].startswith("switched at run time: ") and "MS_CUSTOM_AOT_WHITE_LIST" in lines[3], lines[3]
    assert other_dir in lines[3] and library in lines[3], lines[3]


# ---------------------------------------------------------------------------------------------------------------
# The registry of AOT entry points (aclnn_adapter/src/mindspore/aot_registry.h)
# ---------------------------------------------------------------------------------------------------------------


REDUCTIONS = ("none", "mean", "sum")
# One row per operation, the forward's two (which weight a call with one weight passes), an entry per reduction.
_ROWS = (("forward", "forward", "weight"), ("forward_pos_weighted", "forward", "pos_weight"),
         ("grad_self", "grad_self", "pos_weight"), ("grad_target", "grad_target", "pos_weight"),
         ("grad_weight", "grad_weight", "none"), ("grad_pos_weight", "grad_pos_weight", "none"),
         ("grad_all", "grad_all", "none"))


def test_the_registry_lists_every_exported_entry_with_its_infer_shape():
    import ctypes

    entries = _library.aot_entries()
    expected = {(f"ms_bcewl_{name}_{r}", operation, r, third) for name, operation, third in _ROWS for r in REDUCTIONS}
    assert {(entry.symbol, entry.operation, entry.reduction, entry.third_input) for entry in entries} == expected
    library = ctypes.CDLL(_library.library_path())
    for entry in entries:
        assert hasattr(library, entry.symbol), entry
        # an AOT InferShape gives one output: the multi-output entry's shapes come from Python
        assert hasattr(library, entry.symbol + "InferShape") == (entry.operation != "grad_all"), entry
        assert entry.shapes == ("python" if entry.operation == "grad_all" else "library"), entry


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs nm")
def test_the_library_exports_the_registry_and_at_most_40_mindspore_symbols():
    """At the MindSpore boundary the library exports its entries, their InferShapes and the table, no more."""
    listing = subprocess.run(["nm", "-D", "--defined-only", _library.library_path()], capture_output=True, text=True,
                             check=True).stdout
    exported = {line.split()[-1] for line in listing.splitlines() if line.split()[-1].startswith("ms_bcewl_")}
    entries = _library.aot_entries()
    registry = {entry.symbol for entry in entries} | {"ms_bcewl_aot_registry"}
    registry |= {entry.symbol + "InferShape" for entry in entries if entry.shapes == "library"}
    assert exported == registry
    assert len(exported) <= 40, sorted(exported)


def test_the_library_and_python_give_each_reduction_the_aclnn_code_of_the_contract():
    from ms_bcewl._library import REDUCTION_CODES

    contract = {"none": 0, "mean": 1, "sum": 2}  # docs/contract.md §3
    assert REDUCTION_CODES == contract
    assert {entry.reduction: entry.code for entry in _library.aot_entries()} == contract


def test_python_reads_the_dtypes_of_the_library_header():
    """One dtype list in Python, the one MS_BCEWL_FOR_EACH_DTYPE of the shipped operations.h spells; the primitives,
    the Ascend kernels' formats and `ms-bcewl check` take theirs from it."""
    import re

    import mindspore as ms

    from ms_bcewl import _ascend_kernels, _primitives, cli

    header = (_library.LIBRARY_DIR / "include" / "ms_bcewl" / "operations.h").read_text(encoding="utf-8")
    listed = re.search(r"#define MS_BCEWL_FOR_EACH_DTYPE\(X, \.\.\.\)(.*?)\n\n", header, re.DOTALL).group(1)
    assert _library.DTYPE_NAMES == tuple(re.findall(r"X\((\w+),", listed))
    assert _primitives.SUPPORTED_DTYPES == (ms.float16, ms.float32, ms.bfloat16)
    assert {row[0] for row in _ascend_kernels.dtype_rows(_ascend_kernels.forward_kernel_spec())} == \
        set(_library.DTYPE_NAMES)
    assert set(cli.TOLERANCES) == set(_library.DTYPE_NAMES)
