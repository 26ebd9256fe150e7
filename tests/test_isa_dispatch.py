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

# The library's own answer: the ISAs it can run here and the one it chose, as kIsaNames (isa_kernels.h) names them,
# in the order of their Isa codes.
PROBE = f"""
import ctypes, json, sys

NAMES = {cli.ISA_ORDER!r}


class Hooks(ctypes.Structure):  # the first fields of KernelTestingHooks
    _fields_ = [("isa_available", ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_uint8)),
                ("force_isa", ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_uint8)),
                ("automatic_isa", ctypes.CFUNCTYPE(None)),
                ("active_isa", ctypes.CFUNCTYPE(ctypes.c_uint8))]


library = ctypes.CDLL(sys.argv[1])
library.msBcewlKernelTestingHooks.restype = ctypes.POINTER(Hooks)
hooks = library.msBcewlKernelTestingHooks().contents
print(json.dumps({{"available": [name for isa, name in enumerate(NAMES) if hooks.isa_available(isa)],
                  "active": NAMES[hooks.active_isa()]}}))
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
    return cli.build_record().get("isa_kernels", cli.ISA_ORDER)


def test_the_kernels_take_the_best_isa_of_this_cpu_and_build():
    flags = cli.cpu_flags()
    expected = [isa for isa in cli.ISA_ORDER if cli.ISA_FLAGS[isa] <= flags and isa in compiled_isas()]
    choice = library_choice()
    assert choice["available"] == expected, (choice, sorted(flags & set().union(*cli.ISA_FLAGS.values())))
    assert choice["active"] == expected[-1]


# Every name, one of no ISA, and the empty value: the library's choice is the one `ms-bcewl info` names.
@pytest.mark.parametrize("requested", [*cli.ISA_ORDER, "sse4", ""])
def test_ms_bcewl_isa_caps_the_choice_as_info_says(requested):
    named = cli.simd_level(environ={"MS_BCEWL_ISA": requested}, compiled=compiled_isas()).split()[0]
    assert library_choice(requested)["active"] == named


def test_the_installed_library_ships_its_build_record():
    """What CMake recorded of the build, beside the library (`ms-bcewl info` shows it)."""
    record = json.loads((Path(library_path()).parent / "libms_bcewl.build.json").read_text())
    assert record["build"] == "source" or record["build"].startswith("wheel manylinux_2_28_")
    assert record["machine"] == platform.machine()
    assert "scalar" in record["isa_kernels"]
