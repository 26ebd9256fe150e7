"""The installed library's kernels take the best ISA that this CPU supports and the build compiled in, whatever
compiler built it (g++ for a source install, zig for a wheel), and MS_BCEWL_ISA caps that choice as `ms-bcewl info`
says it does: read from the library itself, through its test hooks (aclnn_adapter/src/kernel/kernel_testing.h), in
child processes (the library reads MS_BCEWL_ISA once per process)."""
import json
import os
import platform
import subprocess
from pathlib import Path

import pytest

from ms_bcewl import cli
from ms_bcewl._library import library_path
from support import reference as R

# The kernels' rule, as isa_kernels.h and plan.cpp state it, spelled here on its own: the ISAs in the order of their
# Isa codes, the CPU features each needs (/proc/cpuinfo's names) and the next one down in its architecture's order.
ISA_ORDER = ("scalar", "avx2", "avx512", "avx512bf16", "neon")
ISA_FLAGS = {"scalar": set(), "avx2": {"avx2", "fma", "f16c"}, "avx512": {"avx512f"},
             "avx512bf16": {"avx512f", "avx512dq", "avx512_bf16"}, "neon": {"asimd"}}
ISA_BELOW = {"avx2": "scalar", "avx512": "avx2", "avx512bf16": "avx512", "neon": "scalar"}


def cpu_flags():
    """The features of the first processor in /proc/cpuinfo: x86's flags, Arm's Features."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return set(value.split())
    raise AssertionError("no CPU features in /proc/cpuinfo")


def expected_isa(available, requested):
    """The ISA the kernels should run on: the one MS_BCEWL_ISA names, else the best available below it; with no
    such name, the best available."""
    if requested not in ISA_ORDER:
        return available[-1]
    while requested not in available:
        requested = ISA_BELOW[requested]
    return requested


# The library's own answer: the ISAs it can run here, the one it chose, as kIsaNames (isa_kernels.h) names them,
# and the one msBcewlKernelIsa() (what `ms-bcewl info` shows) names.
PROBE = f"""
import ctypes, json, sys

NAMES = {ISA_ORDER!r}


class Hooks(ctypes.Structure):  # the first fields of KernelTestingHooks
    _fields_ = [("isa_available", ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_uint8)),
                ("force_isa", ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_uint8)),
                ("automatic_isa", ctypes.CFUNCTYPE(None)),
                ("active_isa", ctypes.CFUNCTYPE(ctypes.c_uint8))]


library = ctypes.CDLL(sys.argv[1])
library.msBcewlKernelTestingHooks.restype = ctypes.POINTER(Hooks)
library.msBcewlKernelIsa.restype = ctypes.c_char_p
hooks = library.msBcewlKernelTestingHooks().contents
print(json.dumps({{"available": [name for isa, name in enumerate(NAMES) if hooks.isa_available(isa)],
                  "active": NAMES[hooks.active_isa()], "reported": library.msBcewlKernelIsa().decode()}}))
"""


def library_choice(requested=None):
    """With MS_BCEWL_ISA set to `requested`, or unset."""
    environment = {key: value for key, value in os.environ.items() if key != "MS_BCEWL_ISA"}
    if requested is not None:
        environment["MS_BCEWL_ISA"] = requested
    done = subprocess.run([*R.PYTHON, "-c", PROBE, library_path()], capture_output=True, text=True, env=environment,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def compiled_isas():
    return cli.build_record().get("isa_kernels", ISA_ORDER)


def test_the_kernels_take_the_best_isa_of_this_cpu_and_build():
    flags = cpu_flags()
    expected = [isa for isa in ISA_ORDER if ISA_FLAGS[isa] <= flags and isa in compiled_isas()]
    choice = library_choice()
    assert choice["available"] == expected, (choice, sorted(flags & set().union(*ISA_FLAGS.values())))
    assert choice["active"] == choice["reported"] == expected[-1]


# Every name, one of no ISA, and the empty value: the library's choice is the one msBcewlKernelIsa() (`ms-bcewl
# info`) names.
@pytest.mark.parametrize("requested", [*ISA_ORDER, "sse4", ""])
def test_ms_bcewl_isa_caps_the_choice_as_info_says(requested):
    choice = library_choice(requested)
    assert choice["active"] == choice["reported"] == expected_isa(choice["available"], requested)


def test_the_installed_library_ships_its_build_record():
    """What CMake recorded of the build, beside the library (`ms-bcewl info` shows it)."""
    record = json.loads((Path(library_path()).parent / "libms_bcewl.build.json").read_text())
    assert record["build"] == "source" or record["build"].startswith("wheel manylinux_2_28_")
    assert record["machine"] == platform.machine()
    assert "scalar" in record["isa_kernels"]
