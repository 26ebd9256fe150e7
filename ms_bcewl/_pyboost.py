"""PyNative's fast path: the loss as a pyboost operator with a C++ autograd Function.

MindSpore's CustomOpBuilder compiles aclnn_adapter/src/mindspore/mindspore_entries.cpp (shipped as
ms_bcewl/lib/mindspore_entries.cpp, the aclnn headers in ms_bcewl/lib/include) once per machine into a cache folder
keyed by the source, the headers, MindSpore's and Python's versions and the library's folder (``~/.cache/ms_bcewl``
or ``MS_BCEWL_CACHE_DIR``). A build records the module's size and SHA-256 beside it, or the cause of its failure; a
module that does not match its record is built again, never loaded, and a verified one loads without writing (a
read-only cache serves). A load removes the module's other builds that nothing has loaded for STALE_AFTER_DAYS.
Values and gradients are bit for bit those of the primitives: both run the same aclnn API of libms_bcewl.so.

Which path a PyNative call takes, by ``MS_BCEWL_PYNATIVE_PATH`` (unset or empty: ``auto``):
- ``auto``: pyboost under ``mindspore.runtime.launch_blocking()`` when this machine's module is built, the
  primitives otherwise. A process decides at its first call under launch_blocking() and keeps its choice: where
  the module is not built yet, that call starts a builder process at low priority and returns from the primitives
  at once; the module serves the processes that start after it (``ms-bcewl build`` builds it ahead). A module that
  cannot be built gives one warning, cause first;
- ``pyboost``: under ``launch_blocking()``; the first call builds the module where needed, waiting for it, and
  raises where it cannot be built. In the asynchronous runtime a call raises RuntimeError: there the autograd
  Function can miss an input that an earlier operation made, and its gradient comes out zero;
- ``aot``: never.
Graphs always use the primitives; so does the Ascend backend. ``ms-bcewl info`` shows the setting and the module's
state (cli.py).
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

SOURCE = LIBRARY_DIR / "mindspore_entries.cpp"
INCLUDE_DIR = LIBRARY_DIR / "include"
PACKAGE_ROOT = LIBRARY_DIR.parent.parent  # the folder holding this ms_bcewl, for the builder process
MODULE_NAME = "ms_bcewl_pyboost"
PATH_VARIABLE = "MS_BCEWL_PYNATIVE_PATH"
CACHE_VARIABLE = "MS_BCEWL_CACHE_DIR"
CHOICES = ("auto", "pyboost", "aot")
STALE_AFTER_DAYS = 30
BUILD_LOG = ".build_log.txt"  # where MindSpore's builder keeps the compiler's output
BUILD_FAILED = "could not build the pyboost module: "
FAILURE_RECORD = "build_failed.txt"  # the one-line cause a failed build leaves in its folder
_BUILDERS = []  # builder processes started here, kept so that their exit is collected


ASYNC_RUNTIME_REFUSED = (
    f"ms_bcewl: {PATH_VARIABLE}=pyboost needs mindspore.runtime.launch_blocking(): in MindSpore's asynchronous "
    "runtime the pyboost operator's autograd can miss an input made by an earlier operation, whose gradient then "
    f"comes out zero. Call mindspore.runtime.launch_blocking() first, or unset {PATH_VARIABLE} (auto takes pyboost "
    "under launch_blocking() and the ops.Custom primitives otherwise).")


def cache_root(environ):
    """The cache folder the environment names; a relative one from this process's working directory, the one the
    user meant (the builder process runs elsewhere)."""
    if environ.get(CACHE_VARIABLE):
        return Path(environ[CACHE_VARIABLE]).absolute()
    return (Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ms_bcewl").absolute()


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


def module_file(folder, name=MODULE_NAME):
    return folder / f"{name}.so"


def record_file(folder, name=MODULE_NAME):
    """Written after a successful build: the module's SHA-256 and size."""
    return folder / f"{name}.so.sha256"


def fingerprint(path):
    """'<sha256> <size>' of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return f"{digest.hexdigest()} {path.stat().st_size}"


def verified_module(folder, name=MODULE_NAME):
    """The module file when it matches the record its build wrote, else None (missing, unfinished, damaged)."""
    module, record = module_file(folder, name), record_file(folder, name)
    try:
        matches = module.is_file() and record.read_text(encoding="utf-8").strip() == fingerprint(module)
    except OSError:
        return None
    return module if matches else None


def recorded_failure(folder):
    """The one-line cause the last failed build in `folder` recorded, or None."""
    try:
        return (folder / FAILURE_RECORD).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def build(source=SOURCE, include_dir=INCLUDE_DIR, root=None, name=MODULE_NAME, progress=None):
    """The verified module file of `name` in its cache folder, compiled first where there is none (one process at
    a time per folder; a build another process just failed is not tried again). progress(text), where given,
    hears each step. RuntimeError or OSError where it fails."""
    progress = progress or (lambda text: None)
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
    """Compiles the module into `folder` (locked by the caller) and records it, or records why it failed. A module
    there without a matching record goes first: ninja would take its time stamp for up to date. So does the lock
    file a killed build of MindSpore's builder leaves behind, which would make the next build wait for ever. A
    failed build drops its objects, so the next one compiles everything again: not this process, whose builder
    never builds a module twice (a second try would only report the module missing and hide the first error)."""
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
    """MindSpore's CustomOpBuilder run on a copy of `source` in `folder`. The builder writes the copy's path into
    build.ninja escaping spaces only, and the flags as they are: $ in the package's path is escaped here."""
    if re.search(r"[$:]", str(folder)):
        raise RuntimeError(f"cannot build in {folder}: MindSpore's builder cannot name a path holding '$' or ':' "
                           f"(set {CACHE_VARIABLE} to another folder)")
    shutil.copyfile(source, folder / source.name)
    builder = ops.CustomOpBuilder(name, str(folder / source.name), backend="CPU", build_dir=str(folder),
                                  include_paths=[str(include_dir).replace("$", "$$")],
                                  ldflags=linker_flags(LIBRARY_DIR))
    progress(f"compiling {source} into {folder} (about a minute)")
    started = time.monotonic()
    try:
        builder.build()
    except RuntimeError as error:
        raise RuntimeError(f"{failure_cause(error)} (compiler output: {folder / BUILD_LOG})") from error
    progress(f"compiled in {time.monotonic() - started:.0f} s")


def linker_flags(library_dir):
    """The flags that link the module with libms_bcewl.so in `library_dir`. MindSpore's builder writes them into a
    ninja file unquoted and a shell runs them: quoted for the shell (a path may hold spaces), $ escaped for ninja."""
    flags = [f"-L{library_dir}", "-lms_bcewl", f"-Wl,-rpath,{library_dir}"]
    return " ".join(shlex.quote(flag) for flag in flags).replace("$", "$$")


def missing_compiler(environ):
    """Why no module can be compiled here, or None: MindSpore's builder runs $CXX, else g++."""
    compiler = environ.get("CXX") or "g++"
    if shutil.which(compiler.split()[0], path=environ.get("PATH")) is None:
        return f"no C++ compiler found ({compiler} is not on PATH; CXX names another)"
    return None


def build_module(source=SOURCE, include_dir=INCLUDE_DIR, root=None, name=MODULE_NAME):
    """Builds (where needed) and loads module `name`. The benchmarks build their pyboost no-op with it too."""
    return use_module(build(source, include_dir, root, name), name)


def load(path, name=MODULE_NAME):
    """The module at `path`, loaded; ImportError where it does not load."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def use_module(path, name=MODULE_NAME):
    """Loads the verified module at `path`, marking its build used, then removes the module's stale builds."""
    try:
        os.utime(path.parent / ".lock")  # for remove_stale_builds
    except OSError:
        pass  # a read-only cache
    module = sys.modules[name] = load(path, name)
    remove_stale_builds(path.parent.parent, name, path.parent)
    return module


def remove_stale_builds(root, name, keep, now=None):
    """Removes the other builds of module `name` under root that no process has loaded for STALE_AFTER_DAYS (a load
    touches its folder's .lock): a new source or MindSpore version leaves the old build behind. One that another
    process holds (building or loading it) stays; so does everything in a cache this process may not change."""
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


# Lines of a compiler's or a shell's output that name what went wrong.
_CAUSE = re.compile(r"(error|not found|no such file|cannot|fatal|permission denied)", re.IGNORECASE)


def failure_cause(error):
    """One line saying why a build failed: MindSpore's builder puts the whole compiler output (kilobytes of
    command lines) in its RuntimeError, with what went wrong near the end."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    causes = [line for line in lines[1:] if _CAUSE.search(line) and len(line) < 500]
    cause = causes[0] if causes else (lines[0] if lines else type(error).__name__)
    return cause if len(cause) <= 300 else cause[:297] + "..."


def start_builder(folder):
    """Starts `ms-bcewl build --background` of this very package, for the processes that come after this one
    (where another build holds the folder, it waits and finds the module built); RuntimeError with the cause where
    the last build failed or there is no compiler, OSError where the cache cannot be written."""
    failure = recorded_failure(folder) or missing_compiler(os.environ)
    if failure:
        raise RuntimeError(failure)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ".lock").touch()
    except OSError as error:
        raise OSError(f"cannot write to the cache {folder.parent} ({error.strerror}; {CACHE_VARIABLE} names "
                      "another)") from error
    environment = dict(os.environ, **{CACHE_VARIABLE: str(folder.parent), PATH_VARIABLE: "aot"})
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), os.environ.get("PYTHONPATH")]))
    _BUILDERS.append(subprocess.Popen(  # pylint: disable=consider-using-with
        [sys.executable, "-m", "ms_bcewl", "build", "--background"], cwd=PACKAGE_ROOT, env=environment,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))


def default_folder():
    """This package's build folder in the cache root the environment names."""
    return build_folder(cache_root(os.environ))


def prepare_module(folder, wait_for_compile):
    """The pyboost loss of the verified module in `folder`, compiled first in this process when the caller waits for
    it; else None where it is not built yet, with a builder process started for the processes that come later.
    MindSpore's PyNative executor is settled for it."""
    path = verified_module(folder)
    if path is None and not wait_for_compile:
        start_builder(folder)
        return None
    if path is None:
        print("ms_bcewl: building the pyboost module (once per machine, about a minute; 'ms-bcewl build' builds "
              "it ahead)", file=sys.stderr, flush=True)
    loss = use_module(path or build(root=folder.parent)).binary_cross_entropy_with_logits
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
        if not self._in_blocking_runtime():
            if self.choice == "pyboost":
                raise RuntimeError(ASYNC_RUNTIME_REFUSED)
            return None
        if not self._prepared:
            self._prepare_once(wait_for_compile=self.choice == "pyboost")
        if self._failure is not None and self.choice == "pyboost":
            raise RuntimeError(self._explicit_failure())
        return self._loss

    def _in_blocking_runtime(self):
        if not self._blocking:
            self._blocking = launch_blocking()  # launch_blocking() cannot be undone: once seen, no need to ask again
        return self._blocking

    def wait(self, explicit=False):
        """The pyboost loss, compiled in this process where needed; None where it cannot be built (RuntimeError for
        an explicit MS_BCEWL_PYNATIVE_PATH=pyboost). Tests and benchmarks call it to settle the calls that follow."""
        if self._loss is None and self._failure is None:
            self._prepare_once(wait_for_compile=True)
        if self._failure is not None and explicit:
            raise RuntimeError(self._explicit_failure())
        return self._loss

    def _explicit_failure(self):
        return f"ms_bcewl: {BUILD_FAILED}{self._failure} ({PATH_VARIABLE}=pyboost asks for it)"

    def _prepare_once(self, wait_for_compile):
        self._prepared = True
        folder = self._locate()
        try:
            self._loss = self._prepare(folder, wait_for_compile)
            if self.choice == "auto" and pynative_queues_operators():
                self._loss = None  # launch_blocking() came after an operator: pyboost calls are queued, and slower
        except (RuntimeError, OSError, ImportError) as error:  # a failed compile; no ninja or g++; a bad module
            self._failure = failure_cause(error)
            if self.choice == "auto":
                warnings.warn(f"ms_bcewl: {BUILD_FAILED}{self._failure}; PyNative calls run through the ops.Custom "
                              f"primitives ('ms-bcewl build' tries again, step by step; {PATH_VARIABLE}=aot skips "
                              "it).", RuntimeWarning, stacklevel=5)


def setting(environ):
    """MS_BCEWL_PYNATIVE_PATH, empty read as unset (auto); an unknown value is kept as it is, for the first PyNative
    call to raise at and `ms-bcewl info` to show."""
    return environ.get(PATH_VARIABLE) or "auto"


PYBOOST = PyboostPath(setting(os.environ))
