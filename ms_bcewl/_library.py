"""Locates the native library that ships inside this package (never in the working directory), reads its
registry of AOT entry points and names its reductions and dtypes.

Before the primitives name the library, it is checked once, with a read of its first 20 bytes (no dlopen): it exists,
it is an ELF shared library for this machine (class, byte order and e_machine), its path can be carried by
MindSpore's 'file:function' form, and MindSpore's MS_CUSTOM_AOT_WHITE_LIST, when set, allows it. Each failure is
an ImportError that says what was found and what to do, instead of MindSpore's later dlopen error or TypeError.
"""
import collections
import ctypes
import functools
import os
import platform
import sys
from pathlib import Path

# A reduction's index here is its aclnn code (docs/contract.md §3), as in aclnn_adapter/include/ms_bcewl/reductions.h.
REDUCTIONS = ("none", "mean", "sum")
REDUCTION_CODES = {name: code for code, name in enumerate(REDUCTIONS)}
# The dtypes the library computes in (docs/contract.md §5), by their MindSpore names, as
# aclnn_adapter/include/ms_bcewl/operations.h lists them (MS_BCEWL_FOR_EACH_DTYPE): the one list Python reads.
DTYPE_NAMES = ("float16", "float32", "bfloat16")
LIBRARY_DIR = Path(__file__).resolve().parent / "lib"
LIBRARY_PATH = LIBRARY_DIR / "libms_bcewl.so"
AOT_WHITE_LIST = "MS_CUSTOM_AOT_WHITE_LIST"
REBUILD = ("Reinstall ms_bcewl on this machine with 'pip install .' from its source tree, which compiles the library "
           "with g++.")

ELF_MAGIC = b"\x7fELF"
ELF_CLASSES = {1: "32-bit", 2: "64-bit"}
ELF_BYTE_ORDERS = {1: "little", 2: "big"}
ET_DYN = 3  # e_type of a shared object
# e_machine codes (the ELF gABI), by platform.machine() names.
ELF_MACHINES = {
    "x86_64": 62, "amd64": 62, "i386": 3, "i686": 3, "aarch64": 183, "arm64": 183, "armv7l": 40, "ppc64le": 21,
    "ppc64": 21, "s390x": 22, "riscv64": 243, "loongarch64": 258,
}
MACHINE_NAMES = {62: "x86_64", 3: "i386", 183: "aarch64", 40: "arm", 21: "ppc64", 22: "s390x", 243: "riscv64",
                 258: "loongarch64"}


@functools.lru_cache(maxsize=None)
def library_path() -> str:
    """Absolute path of libms_bcewl.so once check_library accepts it (ImportError otherwise)."""
    check_library(LIBRARY_PATH)
    check_aot_white_list(LIBRARY_PATH, os.environ)
    return str(LIBRARY_PATH)


# One exported AOT entry point: its symbol, what it computes, its reduction with the aclnn code, where its output
# shapes come from ("library": its InferShape; "python": the primitive's) and the input its calls with one weight pass
# third ("weight", "pos_weight", or "none": those calls pass all four inputs).
AotEntry = collections.namedtuple("AotEntry", "symbol operation reduction code shapes third_input")


@functools.lru_cache(maxsize=None)
def aot_entries():
    """Every entry the library exports, in the order of its registry (aclnn_adapter/src/mindspore/aot_registry.h);
    ctypes loads the library MindSpore loads later."""
    registry = ctypes.CDLL(library_path()).ms_bcewl_aot_registry
    registry.restype = ctypes.c_char_p
    entries = []
    for line in registry().decode().splitlines():
        symbol, operation, reduction, code, shapes, third_input = line.split()
        entries.append(AotEntry(symbol, operation, reduction, int(code), shapes, third_input))
    return tuple(entries)


def aot_entry(operation, reduction, weights):
    """The entry for a call of `operation` whose caller passed `weights`, the names of the weights among "weight"
    and "pos_weight", with the inputs it takes: input and target, then the weights passed where a row of the
    operation takes them alone, else all four."""
    rows = [entry for entry in aot_entries() if (entry.operation, entry.reduction) == (operation, reduction)]
    if not weights:
        return rows[0], ("input", "target")
    own = [entry for entry in rows if (entry.third_input,) == tuple(weights)]
    if own:
        return own[0], ("input", "target", *weights)
    return rows[0], ("input", "target", "weight", "pos_weight")


def check_library(path, machine=None):
    """ImportError unless `path` is an ELF shared library for `machine` (default: this one) that MindSpore can name."""
    path = Path(path)
    if not path.is_file():
        raise ImportError(missing_library(path))
    if ":" in str(path):
        raise ImportError(f"ms_bcewl: the native library's path {path} contains ':', which MindSpore's "
                          "'file:function' name of a custom operator cannot carry. Install ms_bcewl into a directory "
                          "whose path has no ':'.")
    with open(path, "rb") as library:
        header = library.read(20)
    problem = elf_problem(header, machine or platform.machine())
    if problem:
        raise ImportError(f"ms_bcewl: the native library {path} {problem}. {REBUILD}")


def missing_library(path):
    """What to say of a library that is not there: a source tree that has not been built is a package of its own
    that Python imports ahead of the installed one when it is the current directory or on PYTHONPATH."""
    package = path.parent.parent
    tree = package.parent
    if not ((tree / "setup.py").is_file() and (tree / "aclnn_adapter").is_dir()):
        return f"ms_bcewl: the native library {path} is missing. {REBUILD}"
    return (f"ms_bcewl: this ms_bcewl was imported from its source tree {tree} (the current directory or "
            f"PYTHONPATH puts it ahead of an installed ms_bcewl), and that tree has no built library ({path}). Run "
            f"from another directory or with 'python -P' to use the installed package, or build the tree in place "
            f"with 'python setup.py build_ext --inplace' in {tree}.")


def elf_problem(header, machine):
    """Why the first 20 bytes of a file are not those of an ELF shared library for `machine`, or None."""
    if len(header) < 20 or not header.startswith(ELF_MAGIC):
        return f"is not an ELF file (it starts with {header[:8]!r})"
    elf_class = ELF_CLASSES.get(header[4], f"class-{header[4]}")
    byte_order = ELF_BYTE_ORDERS.get(header[5])
    expected_class = "64-bit" if sys.maxsize > 2**32 else "32-bit"
    if (elf_class, byte_order) != (expected_class, sys.byteorder):
        order = f"{byte_order}-endian" if byte_order else f"byte order {header[5]}"
        return f"is a {elf_class} {order} ELF file, but this Python is {expected_class} {sys.byteorder}-endian"
    e_type = int.from_bytes(header[16:18], byte_order)
    e_machine = int.from_bytes(header[18:20], byte_order)
    if e_type != ET_DYN:
        return f"is an ELF file of type {e_type}, not a shared library (type {ET_DYN})"
    expected_machine = ELF_MACHINES.get(machine.lower())
    if expected_machine is not None and e_machine != expected_machine:
        built_for = MACHINE_NAMES.get(e_machine, "another machine")
        return f"was built for {built_for} (ELF e_machine {e_machine}), but this machine is {machine}"
    return None


def check_aot_white_list(path, environ):
    """ImportError where MindSpore would refuse the library because of MS_CUSTOM_AOT_WHITE_LIST.

    MindSpore's rule (mindspore/ops/operations/custom_ops.py when an ops.Custom is made; the C++ kernels again at
    every compilation): unset allows every library; otherwise the library's real path must lie under the real path
    of the one directory the variable names. An empty value reads as the working directory to the Python check and
    as an illegal path to the C++ one, so it allows no library at all."""
    value = environ.get(AOT_WHITE_LIST)
    if value is None:
        return
    real_path = os.path.realpath(path)
    fix = (f"Set {AOT_WHITE_LIST} to {os.path.dirname(real_path)} (or a directory above it), or unset it.")
    if not value:
        raise ImportError(f"ms_bcewl: {AOT_WHITE_LIST} is set but empty, which makes MindSpore refuse every custom "
                          f"operator library, ms_bcewl's {real_path} included. {fix}")
    allowed = os.path.realpath(value)
    if os.path.commonpath([real_path, allowed]) != allowed:
        raise ImportError(f"ms_bcewl: MindSpore loads custom operator libraries only from under {AOT_WHITE_LIST}="
                          f"{value} ({allowed}), and ms_bcewl's library {real_path} is not there. {fix}")
