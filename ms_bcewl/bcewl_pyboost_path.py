"""PyNative's fast path: the loss as a pyboost operator with a C++ autograd Function.

MindSpore's CustomOpBuilder compiles aclnn_adapter/src/pyboost/pyboost_entries.cpp (shipped beside the library
as ms_bcewl/lib/pyboost_entries.cpp, with the aclnn headers in ms_bcewl/lib/include) against the installed
MindSpore, once per machine: the module is kept in a cache folder keyed by the source, the headers, MindSpore's and
Python's versions and the library's folder (``~/.cache/ms_bcewl``, or ``MS_BCEWL_CACHE_DIR``). The first call that
needs it compiles it, which takes about 45 s; a process that finds it up to date only loads it, and removes the
module's other builds that nothing has loaded for STALE_AFTER_DAYS.

A call through it skips what an ``ops.Custom`` call pays in PyNative (the Python infer functions, the primitive's
generic run path): 41 µs against 162 µs per call at 1e3 elements under ``launch_blocking()``, and 0.49 ms against
1.26 ms for ``value_and_grad``, on the 2-core reference machine (docs/performance.md). The values and gradients are
bit for bit those of the primitives: both run the same aclnn API of libms_bcewl.so.

Which path a PyNative call takes, by ``MS_BCEWL_PYNATIVE_PATH``:
- ``auto`` (default): pyboost under ``mindspore.runtime.launch_blocking()``, the primitives in MindSpore's default
  asynchronous runtime, where a pyboost operator passes through two queue threads (1.3 ms a call at 1e3 elements
  against 0.23 ms for the primitive, on 2 cores);
- ``pyboost``: always (an error at the call if the module cannot be built);
- ``aot``: never.
Under ``auto``, a module that cannot be built (no g++, no ninja, ...) gives one warning saying why, and the
primitives run. Graphs (GRAPH_MODE, ``mindspore.jit``) always use the primitives; so does the Ascend backend.
"""
import fcntl
import hashlib
import os
import re
import shutil
import sys
import threading
import time
import warnings
from pathlib import Path

import mindspore
from mindspore import ops

from ms_bcewl import bcewl_ascend_dispatch as ascend_dispatch
from ms_bcewl._bcewl_library import LIBRARY_DIR

SOURCE = LIBRARY_DIR / "pyboost_entries.cpp"
INCLUDE_DIR = LIBRARY_DIR / "include"
MODULE_NAME = "ms_bcewl_pyboost"
PATH_VARIABLE = "MS_BCEWL_PYNATIVE_PATH"
CACHE_VARIABLE = "MS_BCEWL_CACHE_DIR"
CHOICES = ("auto", "pyboost", "aot")
STALE_AFTER_DAYS = 30
REDUCTION_CODES = {"none": 0, "mean": 1, "sum": 2}


def choice_from(environ):
    """The MS_BCEWL_PYNATIVE_PATH setting; ValueError for an unknown one."""
    choice = environ.get(PATH_VARIABLE, "auto")
    if choice not in CHOICES:
        raise ValueError(f"ms_bcewl: {PATH_VARIABLE}={choice!r} is not one of {', '.join(CHOICES)}.")
    return choice


try:
    from mindspore._c_expression import RuntimeConf  # MindSpore has no public getter for launch_blocking()
    _RUNTIME_CONF = RuntimeConf.get_instance()
except (ImportError, AttributeError):
    _RUNTIME_CONF = None


def launch_blocking():
    """Whether mindspore.runtime.launch_blocking() was called (False where MindSpore cannot say)."""
    return _RUNTIME_CONF is not None and _RUNTIME_CONF.is_launch_blocking()


def cache_root(environ):
    if environ.get(CACHE_VARIABLE):
        return Path(environ[CACHE_VARIABLE])
    return Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ms_bcewl"


def build_key(source=SOURCE, include_dir=INCLUDE_DIR):
    """What the compiled module depends on: a change to any of these compiles it again, in a folder of its own."""
    digest = hashlib.sha256()
    for path in [source] + sorted(include_dir.rglob("*.h")):
        digest.update(path.read_bytes())
    for text in (mindspore.__version__, sys.version, str(LIBRARY_DIR)):
        digest.update(text.encode())
    return digest.hexdigest()[:16]


def build_folder(root, name=MODULE_NAME, source=SOURCE, include_dir=INCLUDE_DIR):
    """Where module `name` built from these files lives under the cache root."""
    return root / f"{name}-{build_key(source, include_dir)}"


def build_module(source=SOURCE, include_dir=INCLUDE_DIR, root=None, name=MODULE_NAME):
    """Compiles (if needed) and loads the module; one process at a time per build folder. The benchmarks build
    their pyboost no-op with it too."""
    build_dir = build_folder(root or cache_root(os.environ), name, source, include_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    with open(build_dir / ".lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        builder = ops.CustomOpBuilder(name, str(source), backend="CPU", include_paths=[str(include_dir)],
                                      ldflags=f"-L{LIBRARY_DIR} -lms_bcewl -Wl,-rpath,{LIBRARY_DIR}",
                                      build_dir=str(build_dir))
        module = builder.load()
    remove_stale_builds(build_dir.parent, name, build_dir)
    return module


def remove_stale_builds(root, name, keep, now=None):
    """Removes the other builds of module `name` under root that no process has loaded for STALE_AFTER_DAYS (a load
    rewrites its folder's .lock): a new source or MindSpore version leaves the old build behind. One that another
    process holds (building or loading it) stays."""
    cutoff = (time.time() if now is None else now) - STALE_AFTER_DAYS * 86400
    for folder in root.glob(f"{name}-*"):
        lock = folder / ".lock"
        if (folder == keep or not re.fullmatch(rf"{re.escape(name)}-[0-9a-f]{{16}}", folder.name)
                or not lock.is_file() or lock.stat().st_mtime > cutoff):
            continue
        with open(lock, "a", encoding="utf-8") as handle:  # "a": opening leaves the time stamp as it is
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            shutil.rmtree(folder, ignore_errors=True)


def describe(choice, environ):
    """One line for `ms-bcewl info`: the setting, what it does, and whether this machine's module is built."""
    if ascend_dispatch.runs_on_ascend():
        return "ops.Custom primitives (Ascend backend)"
    built_dir = build_folder(cache_root(environ))
    built = f"module built in {built_dir}" if (built_dir / f"{MODULE_NAME}.so").is_file() else "module not built yet"
    meaning = {"auto": "pyboost under launch_blocking(), ops.Custom primitives otherwise",
               "pyboost": "pyboost in both runtimes", "aot": "ops.Custom primitives"}[choice]
    return f"{choice}: {meaning}; {built} ({PATH_VARIABLE})"


class PyboostPath:
    """Hands PyNative calls the pyboost loss where the setting and the runtime choose it (``loss()``)."""

    def __init__(self, choice, build=build_module):
        self.choice = "aot" if ascend_dispatch.runs_on_ascend() else choice
        self._build = build
        self._loss = None
        self._failure = None
        self._blocking = False
        self._lock = threading.Lock()

    def loss(self):
        """loss(input, target, weight, pos_weight, reduction code) for this call, or None: use the primitives."""
        if self.choice == "aot":
            return None
        if self.choice == "auto" and not self._blocking:
            if not launch_blocking():
                return None
            self._blocking = True  # launch_blocking() cannot be undone: no need to ask again
        if self._loss is None and self._failure is None:
            self._load()
        if self._failure is not None and self.choice == "pyboost":
            raise RuntimeError(f"ms_bcewl: {PATH_VARIABLE}=pyboost, but the pyboost module could not be built: "
                               f"{self._failure}")
        return self._loss

    def _load(self):
        with self._lock:
            if self._loss is not None or self._failure is not None:
                return
            try:
                self._loss = self._build().binary_cross_entropy_with_logits
            except Exception as error:  # pylint: disable=broad-except
                # A failed compile raises RuntimeError, a missing ninja or g++ OSError, a bad module ImportError.
                self._failure = f"{type(error).__name__}: {error}"
                if self.choice == "auto":
                    warnings.warn(f"ms_bcewl: PyNative calls run through the ops.Custom primitives, because the "
                                  f"pyboost module could not be built ({self._failure}). Set {PATH_VARIABLE}=aot "
                                  "to choose them without trying.", RuntimeWarning, stacklevel=4)


PYBOOST = PyboostPath(choice_from(os.environ))
