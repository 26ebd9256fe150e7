"""The host kernels' thread count, set from Python, and the per-thread CPU time that shows which threads ran.

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
    """The head of the C struct, up to threads(); the ISA hooks before set_threads are not called from Python."""

    _fields_ = [("isa_available", ctypes.c_void_p), ("force_isa", ctypes.c_void_p),
                ("automatic_isa", ctypes.c_void_p), ("active_isa", ctypes.c_void_p),
                ("set_threads", ctypes.CFUNCTYPE(None, ctypes.c_int)),
                ("threads", ctypes.CFUNCTYPE(ctypes.c_int))]


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


def thread_cpu_ns(tids):
    """CPU time in ns of each thread of `tids` (schedstat has ns resolution; a thread that ended reads 0)."""
    times = {}
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/schedstat", encoding="utf-8") as schedstat:
                times[tid] = int(schedstat.read().split()[0])
        except OSError:
            times[tid] = 0
    return times


def busy_threads(tids, work, share=0.05):
    """The threads of `tids` that spent at least `share` of the busiest one's CPU time while work() ran. The share
    is small because the kernels' threads take pieces of work in turn: on a loaded machine a thread that wakes late
    does less than its quarter, but a thread the pool does not use does nothing."""
    before = thread_cpu_ns(tids)
    work()
    spent = {tid: time - before[tid] for tid, time in thread_cpu_ns(tids).items()}
    busiest = max(spent.values(), default=0)
    return {tid for tid, time in spent.items() if busiest > 0 and time >= share * busiest}
