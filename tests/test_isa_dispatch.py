"""The installed library's kernels take the best ISA that this CPU supports and the build compiled in, whatever
compiler built it (g++ for a source install, zig for a wheel): read from the library itself, through its test hooks
(aclnn_adapter/src/kernel/kernel_testing.h), in a child process with MS_BCEWL_ISA unset."""
import json
import os
import platform
import subprocess
from pathlib import Path

from ms_bcewl import cli
from ms_bcewl._library import library_path
from support import reference as R

# The library's own answer: the ISAs it can run here and the one it chose, as kIsaNames (isa_kernels.h) names them.
PROBE = """
import ctypes, json
from ms_bcewl._library import library_path

NAMES = ("scalar", "avx2", "avx512", "avx512bf16")


class Hooks(ctypes.Structure):  # the first fields of KernelTestingHooks
    _fields_ = [("isa_available", ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_uint8)),
                ("force_isa", ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_uint8)),
                ("automatic_isa", ctypes.CFUNCTYPE(None)),
                ("active_isa", ctypes.CFUNCTYPE(ctypes.c_uint8))]


library = ctypes.CDLL(library_path())
library.msBcewlKernelTestingHooks.restype = ctypes.POINTER(Hooks)
hooks = library.msBcewlKernelTestingHooks().contents
print(json.dumps({"available": [name for isa, name in enumerate(NAMES) if hooks.isa_available(isa)],
                  "active": NAMES[hooks.active_isa()]}))
"""


def library_choice(cwd):
    """In a folder outside the source tree, whose ms_bcewl (without its library) would shadow the installed one."""
    environment = {key: value for key, value in os.environ.items() if key != "MS_BCEWL_ISA"}
    done = subprocess.run([*R.PYTHON, "-c", PROBE], capture_output=True, text=True, env=environment, cwd=cwd,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_the_kernels_take_the_best_isa_of_this_cpu_and_build(tmp_path):
    compiled = cli.build_record().get("isa_kernels", cli.ISA_ORDER)
    flags = cli.cpu_flags()
    expected = [isa for isa in cli.ISA_ORDER if cli.ISA_FLAGS[isa] <= flags and isa in compiled]
    choice = library_choice(tmp_path)
    assert choice["available"] == expected, (choice, sorted(flags & set().union(*cli.ISA_FLAGS.values())))
    assert choice["active"] == expected[-1]


def test_the_installed_library_ships_its_build_record():
    """What CMake recorded of the build, beside the library (`ms-bcewl info` shows it)."""
    record = json.loads((Path(library_path()).parent / "libms_bcewl.build.json").read_text())
    assert record["build"] == "source" or record["build"].startswith("wheel manylinux_2_28_")
    assert record["machine"] == platform.machine()
    assert "scalar" in record["isa_kernels"]
