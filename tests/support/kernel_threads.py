"""The host kernels' thread count and the task count of their latest loop, set and read from Python.

libms_bcewl.so exports msBcewlKernelTestingHooks (aclnn_adapter/src/kernel/kernel_testing.h). Loaded with ctypes
from the package's absolute path, it is the library MindSpore's AOT kernels dlopen'ed (the dynamic loader keeps
one copy per file), so `kernel_threads(n)` changes the thread count of the ops in this very process, at run time
and in both modes; `library_copies_mapped()` checks that premise.
"""
import contextlib
import ctypes
import os

from ms_bcewl._library import library_path


class KernelTestingHooks(ctypes.Structure):
    """The C struct; the hooks typed c_void_p are not called from Python."""

    _fields_ = [("isa_available", ctypes.c_void_p), ("force_isa", ctypes.c_void_p),
                ("automatic_isa", ctypes.c_void_p), ("active_isa", ctypes.c_void_p),
                ("set_threads", ctypes.CFUNCTYPE(None, ctypes.c_int)),
                ("threads", ctypes.CFUNCTYPE(ctypes.c_int)),
                ("exp", ctypes.c_void_p), ("log1p", ctypes.c_void_p), ("widen", ctypes.c_void_p),
                ("narrow", ctypes.c_void_p), ("set_row_reductions", ctypes.c_void_p),
                ("hold_workers", ctypes.c_void_p),
                ("latest_loop_tasks", ctypes.CFUNCTYPE(ctypes.c_int))]


_HOOKS = []


def hooks():
    if not _HOOKS:
        library = ctypes.CDLL(library_path())
        library.msBcewlKernelTestingHooks.restype = ctypes.POINTER(KernelTestingHooks)
        _HOOKS.append(library.msBcewlKernelTestingHooks().contents)
    return _HOOKS[0]


@contextlib.contextmanager
def kernel_threads(count):
    """The kernels use `count` threads inside the block, their default after it."""
    hooks().set_threads(count)
    try:
        yield
    finally:
        hooks().set_threads(0)


def library_copies_mapped():
    """How many distinct files named libms_bcewl.so this process has mapped (1: ctypes and MindSpore share one)."""
    files = set()
    with open("/proc/self/maps", encoding="utf-8") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and fields[5].endswith("/libms_bcewl.so"):
                files.add((fields[3], fields[4]))  # (device, inode)
    return len(files)


def thread_ids():
    return set(os.listdir("/proc/self/task"))
