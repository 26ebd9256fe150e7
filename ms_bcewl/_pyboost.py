"""PyNative's fast path: the loss as a pyboost operator with a C++ autograd Function (mindspore_entries.cpp, shipped
in ms_bcewl/lib with its headers), the primitives' values and gradients bit for bit: both run libms_bcewl.so.

MindSpore's CustomOpBuilder compiles it once per machine into a cache folder (``~/.cache/ms_bcewl`` or
``MS_BCEWL_CACHE_DIR``) keyed by what it depends on. A build records the module's SHA-256 and size, or why it failed;
a module unlike its record is built again, never loaded; a verified one loads without writing (a read-only cache
serves), and removes the module's builds unused for STALE_AFTER_DAYS.

``MS_BCEWL_PYNATIVE_PATH`` (unset or empty: ``auto``) picks the path of PyNative calls. ``auto``: pyboost under
``mindspore.runtime.launch_blocking()`` where the module is built, decided at the process's first call there, unless
operators ran before launch_blocking(); where the module is not built, that call starts a builder process for later
processes and the primitives serve (``ms-bcewl build`` builds it ahead). ``pyboost``: under launch_blocking() only,
building the module or raising. ``aot``: never.
"""
import fcntl
import hashlib
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import mindspore
from mindspore import ops

from ms_bcewl import _ascend_kernels as ascend_kernels
from ms_bcewl._library import LIBRARY_DIR
from ms_bcewl._mindspore_internals import launch_blocking, pynative_queues_operators, settle_pynative_executor

SOURCE, INCLUDE_DIR = LIBRARY_DIR / "mindspore_entries.cpp", LIBRARY_DIR / "include"
MODULE_NAME = "ms_bcewl_pyboost"
PATH_VARIABLE, CACHE_VARIABLE = "MS_BCEWL_PYNATIVE_PATH", "MS_BCEWL_CACHE_DIR"
CHOICES = ("auto", "pyboost", "aot")
STALE_AFTER_DAYS = 30
BUILD_FAILED = "could not build the pyboost module: "
FAILURE_RECORD = "build_failed.txt"  # the one-line cause a failed build leaves in its folder
_BUILDERS = []  # builder processes started here, kept so that their exit is collected
ASYNC_RUNTIME_REFUSED = (
    f"ms_bcewl: {PATH_VARIABLE}=pyboost needs mindspore.runtime.launch_blocking(): in MindSpore's asynchronous "
    "runtime the pyboost operator's autograd can miss an input made by an earlier operation, whose gradient then "
    f"comes out zero. Call mindspore.runtime.launch_blocking() first, or unset {PATH_VARIABLE} (auto takes pyboost "
    "under launch_blocking() and the ops.Custom primitives otherwise).")


def cache_root(environ):
    """The cache the environment names; a relative one from this process's folder (the builder runs elsewhere)."""
    if environ.get(CACHE_VARIABLE):
        return Path(environ[CACHE_VARIABLE]).absolute()
    return (Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ms_bcewl").absolute()


def build_folder(root, name=MODULE_NAME, source=SOURCE, include_dir=INCLUDE_DIR):
    return root / f"{name}-{build_key(source, include_dir)}"


def build_key(source=SOURCE, include_dir=INCLUDE_DIR):
    """What the module depends on: a change to any of these compiles it again, in a folder of its own."""
    digest = hashlib.sha256()
    for path in [source] + sorted(include_dir.rglob("*.h")):
        digest.update(path.read_bytes())
    for text in (mindspore.__version__, sys.version, str(LIBRARY_DIR)):
        digest.update(text.encode())
    return digest.hexdigest()[:16]


def module_file(folder, name=MODULE_NAME):
    return folder / f"{name}.so"


def record_file(folder, name=MODULE_NAME):
    return folder / f"{name}.so.sha256"  # the module's fingerprint, written when its build succeeded


def fingerprint(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return f"{digest.hexdigest()} {path.stat().st_size}"


def verified_module(folder, name=MODULE_NAME):
    """The module file where it matches the record of its build, else None (missing, unfinished, damaged)."""
    module = module_file(folder, name)
    try:
        return module if record_file(folder, name).read_text("utf-8").strip() == fingerprint(module) else None
    except OSError:
        return None


def recorded_failure(folder):
    try:
        return (folder / FAILURE_RECORD).read_text("utf-8").strip() or None
    except OSError:
        return None


def build(source=SOURCE, include_dir=INCLUDE_DIR, root=None, name=MODULE_NAME, progress=lambda text: None):
    """The verified module file, compiled first where there is none, by one process at a time (a build that another
    process just failed is not tried again); progress(text) hears each step. RuntimeError or OSError on failure."""
    folder = build_folder(root or cache_root(os.environ), name, source, include_dir)
    found = verified_module(folder, name)  # a read-only cache ends here
    if found is None:
        if missing := missing_compiler(os.environ):  # not recorded: installing one is all it takes
            raise RuntimeError(missing)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / ".lock", "a", encoding="utf-8") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                progress(f"waiting for another process building in {folder}")
                fcntl.flock(lock, fcntl.LOCK_EX)
                if recorded_failure(folder):
                    raise RuntimeError(recorded_failure(folder)) from None
            found = verified_module(folder, name) or rebuild(source, include_dir, folder, name, progress)
    progress(f"verified module {found}")
    return found


def rebuild(source, include_dir, folder, name, progress):
    """Compiles the module into `folder` (locked by the caller) and records it, or why it failed. A module without
    a record goes first (ninja would take it for up to date), and so does the lock of a killed build (the next would
    wait for ever); a failed build drops its objects, so that the next one compiles everything."""
    for stale in (module_file(folder, name), record_file(folder, name), folder / "build.lock",
                  folder / FAILURE_RECORD):
        stale.unlink(missing_ok=True)
    try:
        compile_into(source, include_dir, folder, name, progress)
    except (RuntimeError, OSError) as error:
        for stale in folder.glob("*.o"):
            stale.unlink(missing_ok=True)
        _write_atomically(folder / FAILURE_RECORD, failure_cause(error))
        raise
    _write_atomically(record_file(folder, name), fingerprint(module_file(folder, name)))
    return module_file(folder, name)


def _write_atomically(path, text):
    path.with_suffix(".tmp").write_text(text, "utf-8")
    path.with_suffix(".tmp").replace(path)


def compile_into(source, include_dir, folder, name, progress):
    """MindSpore's CustomOpBuilder on a copy of `source`, linked with libms_bcewl.so. It writes paths into
    build.ninja escaping spaces only and flags unquoted for a shell: flags are quoted, and $ escaped for ninja."""
    if re.search(r"[$:]", str(folder)):
        raise RuntimeError(f"cannot build in {folder}: MindSpore's builder cannot name a path holding '$' or ':' "
                           f"(set {CACHE_VARIABLE} to another folder)")
    shutil.copyfile(source, folder / source.name)
    flags = [f"-L{LIBRARY_DIR}", "-lms_bcewl", f"-Wl,-rpath,{LIBRARY_DIR}"]
    builder = ops.CustomOpBuilder(name, str(folder / source.name), backend="CPU", build_dir=str(folder),
                                  include_paths=[str(include_dir).replace("$", "$$")],
                                  ldflags=" ".join(map(shlex.quote, flags)).replace("$", "$$"))
    progress(f"compiling {source} into {folder} (about a minute)")
    started = time.monotonic()
    try:
        builder.build()
    except RuntimeError as error:
        raise RuntimeError(f"{failure_cause(error)} (compiler output: {folder / '.build_log.txt'})") from error
    progress(f"compiled in {time.monotonic() - started:.0f} s")


def missing_compiler(environ):
    """Why no module can be compiled here, or None: MindSpore's builder runs $CXX, else g++."""
    compiler = environ.get("CXX") or "g++"
    if shutil.which(compiler.split()[0], path=environ.get("PATH")) is None:
        return f"no C++ compiler found ({compiler} is not on PATH; CXX names another)"
    return None


_CAUSE = re.compile(r"(error|not found|no such file|cannot|fatal|permission denied)", re.IGNORECASE)


def failure_cause(error):
    """One line of why a build failed, from the kilobytes of compiler output MindSpore's builder raises."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    causes = [line for line in lines[1:] if _CAUSE.search(line) and len(line) < 500]
    cause = causes[0] if causes else (lines[0] if lines else type(error).__name__)
    return cause if len(cause) <= 300 else cause[:297] + "..."


def load(path, name=MODULE_NAME):
    """The module at `path`, loaded; ImportError where it does not load."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_module(source=SOURCE, include_dir=INCLUDE_DIR, root=None, name=MODULE_NAME):
    """Builds (where needed) and loads module `name`, marks its build used and removes its stale builds. The
    benchmarks build their pyboost no-op with it too."""
    path = build(source, include_dir, root, name)
    try:
        os.utime(path.parent / ".lock")
    except OSError:
        pass  # a read-only cache
    module = sys.modules[name] = load(path, name)
    remove_stale_builds(path.parent.parent, name, path.parent)
    return module


def remove_stale_builds(root, name, keep, now=None):
    """Removes the other builds of `name` under root whose .lock (touched by each load) is STALE_AFTER_DAYS old,
    unless another process holds it or this one may not change the cache."""
    cutoff = (time.time() if now is None else now) - STALE_AFTER_DAYS * 86400
    for folder in root.glob(f"{name}-*"):
        lock = folder / ".lock"
        if (folder == keep or not re.fullmatch(rf"{re.escape(name)}-[0-9a-f]{{16}}", folder.name)
                or not lock.is_file() or lock.stat().st_mtime > cutoff):
            continue
        try:
            with open(lock, "a", encoding="utf-8") as handle:  # "a": opening leaves the time stamp as it is
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:  # held by another process (BlockingIOError), or read-only
            continue


def start_builder(folder):
    """Starts `ms-bcewl build --background` of this very package; RuntimeError where the last build failed or there
    is no compiler, OSError where the cache cannot be written."""
    if failure := recorded_failure(folder) or missing_compiler(os.environ):
        raise RuntimeError(failure)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ".lock").touch()
    except OSError as error:
        raise OSError(f"cannot write to the cache {folder.parent} ({error.strerror}; {CACHE_VARIABLE} names "
                      "another)") from error
    package_root = LIBRARY_DIR.parent.parent  # the folder holding this ms_bcewl
    environment = dict(os.environ, **{CACHE_VARIABLE: str(folder.parent), PATH_VARIABLE: "aot"})
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(package_root), os.environ.get("PYTHONPATH")]))
    _BUILDERS.append(subprocess.Popen(  # pylint: disable=consider-using-with
        [sys.executable, "-m", "ms_bcewl", "build", "--background"], cwd=package_root, env=environment,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))


def default_folder():
    return build_folder(cache_root(os.environ))


def prepare_module(folder, wait_for_compile):
    """The pyboost loss of the module in `folder`, compiled here first where the caller waits for it, else None
    where it is not built yet (a builder process is started), with MindSpore's PyNative executor settled for it."""
    if verified_module(folder) is None:
        if not wait_for_compile:
            return start_builder(folder)  # None: the primitives serve this process
        print("ms_bcewl: building the pyboost module (once per machine, about a minute; 'ms-bcewl build' builds "
              "it ahead)", file=sys.stderr, flush=True)
    loss = build_module(root=folder.parent).binary_cross_entropy_with_logits
    settle_pynative_executor()
    return loss


class PyboostPath:
    """Hands PyNative calls the pyboost loss where the setting and the runtime choose it (``loss()``), preparing the
    module (``prepare(folder, wait_for_compile)``) at most once per process, at the first call that would take it."""

    def __init__(self, choice, prepare=prepare_module, locate=default_folder):
        self.choice = "aot" if ascend_kernels.runs_on_ascend() else choice
        self._prepare, self._locate = prepare, locate
        self._loss = self._failure = None
        self._prepared = self._blocking = False

    def loss(self):
        """loss(input, target, weight, pos_weight, reduction code) for this call, or None: use the primitives."""
        if self.choice == "aot":
            return None
        if self.choice not in CHOICES:
            raise ValueError(f"ms_bcewl: {PATH_VARIABLE}={self.choice!r} is not one of {', '.join(CHOICES)}.")
        self._blocking = self._blocking or launch_blocking()  # launch_blocking() cannot be undone
        if not self._blocking:
            if self.choice == "pyboost":
                raise RuntimeError(ASYNC_RUNTIME_REFUSED)
            return None
        if not self._prepared:
            self._prepare_once(wait_for_compile=self.choice == "pyboost")
        return self._checked(explicit=self.choice == "pyboost")

    def wait(self, explicit=False):
        """The pyboost loss, compiled here where needed; None where it cannot be built (RuntimeError for an explicit
        MS_BCEWL_PYNATIVE_PATH=pyboost). Tests and benchmarks call it to settle the calls that follow."""
        if self._loss is None and self._failure is None:
            self._prepare_once(wait_for_compile=True)
        return self._checked(explicit)

    def _checked(self, explicit):
        if self._failure is not None and explicit:
            raise RuntimeError(f"ms_bcewl: {BUILD_FAILED}{self._failure} ({PATH_VARIABLE}=pyboost asks for it)")
        return self._loss

    def _prepare_once(self, wait_for_compile):
        self._prepared = True
        try:
            self._loss = self._prepare(self._locate(), wait_for_compile)
            if self.choice == "auto" and pynative_queues_operators():
                self._loss = None  # launch_blocking() came after an operator: pyboost calls are queued, and slower
        except (RuntimeError, OSError, ImportError) as error:  # a failed compile; no ninja or g++; a bad module
            self._failure = failure_cause(error)
            if self.choice == "auto":
                warnings.warn(f"ms_bcewl: {BUILD_FAILED}{self._failure}; PyNative calls run through the ops.Custom "
                              f"primitives ('ms-bcewl build' tries again, step by step; {PATH_VARIABLE}=aot skips "
                              "it).", RuntimeWarning, stacklevel=5)


def setting(environ):
    """MS_BCEWL_PYNATIVE_PATH, empty read as unset; an unknown value stays for the first call to raise at."""
    return environ.get(PATH_VARIABLE) or "auto"


PYBOOST = PyboostPath(setting(os.environ))
