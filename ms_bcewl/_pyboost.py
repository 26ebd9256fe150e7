"""PyNative's fast path: the loss as a pyboost operator with a C++ autograd Function (mindspore_entries.cpp), the
primitives' bits, compiled once per machine into a BuildFolder of the cache; PYBOOST chooses, per
``MS_BCEWL_PYNATIVE_PATH``, whether a PyNative call takes it (docs/contract.md §13 says when)."""
import contextlib
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

SOURCE, INCLUDE_DIR, MODULE_NAME = LIBRARY_DIR / "mindspore_entries.cpp", LIBRARY_DIR / "include", "ms_bcewl_pyboost"
PATH_VARIABLE, CACHE_VARIABLE = "MS_BCEWL_PYNATIVE_PATH", "MS_BCEWL_CACHE_DIR"
CHOICES = ("auto", "pyboost", "aot")
STALE_AFTER_DAYS = 30
BUILD_FAILED = "could not build the pyboost module: "
ASYNC_RUNTIME_REFUSED = (
    f"ms_bcewl: {PATH_VARIABLE}=pyboost needs mindspore.runtime.launch_blocking(): in the asynchronous runtime its "
    "autograd can miss an input made by an earlier operation, whose gradient then comes out zero. Call it first, or "
    f"unset {PATH_VARIABLE} (auto takes the ops.Custom primitives there).")
_CAUSE = re.compile(r"(error|not found|no such file|cannot|fatal|permission denied)", re.IGNORECASE)
_BUILDERS = []  # builder processes started here, kept so that their exit is collected


def missing_compiler(environ):
    """Why no module can be compiled here, or None: MindSpore's builder runs $CXX, else g++."""
    compiler = environ.get("CXX") or "g++"
    found = shutil.which(compiler.split()[0], path=environ.get("PATH"))
    return None if found else f"no C++ compiler found ({compiler} is not on PATH; CXX names another)"


def failure_cause(error):
    """One line of why a build failed, from the kilobytes of compiler output MindSpore's builder raises."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()] or [type(error).__name__]
    cause = next((line for line in lines[1:] if _CAUSE.search(line) and len(line) < 500), lines[0])
    return cause if len(cause) <= 300 else cause[:297] + "..."


class BuildFolder:
    """One build of module `name`: the module, the record of its build (fingerprint, or why it failed) and the .lock
    one builder holds at a time and each load touches. A verified module loads without writing (read-only caches)."""

    def __init__(self, path, name=MODULE_NAME, source=SOURCE, include_dir=INCLUDE_DIR):
        self.path, self.name, self.source, self.include_dir = path, name, source, include_dir
        self.module, self.record = path / f"{name}.so", path / f"{name}.so.sha256"
        self.failure_record, self.lock = path / "build_failed.txt", path / ".lock"

    @classmethod
    def in_cache(cls, environ=os.environ, name=MODULE_NAME, source=SOURCE, include_dir=INCLUDE_DIR):
        """The folder named by what the module depends on, in the cache the environment names (relative: to cwd)."""
        parts = [path.read_bytes() for path in [source, *sorted(include_dir.rglob("*.h"))]]
        key = hashlib.sha256(b"".join(parts + [f"{mindspore.__version__}{sys.version}{LIBRARY_DIR}".encode()]))
        root = environ.get(CACHE_VARIABLE) or Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ms_bcewl"
        return cls(Path(root).absolute() / f"{name}-{key.hexdigest()[:16]}", name, source, include_dir)

    def fingerprint(self):  # as the record of a build holds it
        return f"{hashlib.sha256(self.module.read_bytes()).hexdigest()} {self.module.stat().st_size}"

    def verified(self):
        """The module file where it matches the record of its build, else None (missing, unfinished, damaged)."""
        with contextlib.suppress(OSError):
            return self.module if self.record.read_text("utf-8").strip() == self.fingerprint() else None
        return None

    def failure(self):
        with contextlib.suppress(OSError):
            return self.failure_record.read_text("utf-8").strip() or None
        return None

    def build(self, progress=lambda text: None, loadable=False):
        """The verified module file, compiled first where there is none (or, `loadable`, where it does not load) by
        one process at a time, not again where another just failed. RuntimeError, OSError or ImportError on failure."""
        if loadable and self.verified() and (failure := self.load_failure()):
            progress(f"{self.module} does not load ({failure}): building it again")
            self.record.unlink()  # nothing replaces a module that matches its record
        if self.verified() is None:
            if missing := missing_compiler(os.environ):  # not recorded: installing one is all it takes
                raise RuntimeError(missing)
            self.path.mkdir(parents=True, exist_ok=True)
            with open(self.lock, "a", encoding="utf-8") as lock:
                asked = time.time()
                fcntl.flock(lock, fcntl.LOCK_EX)  # held by one builder at a time
                if self.failure() and self.failure_record.stat().st_mtime >= asked:  # failed while this one waited
                    raise RuntimeError(self.failure())
                if self.verified() is None:
                    self.rebuild(progress)
        if loadable:
            self.load_module()
        progress(f"verified module {self.module}")
        return self.module

    def rebuild(self, progress):
        """Compiles the module (the lock held) and records it, or why it failed. A module without a record and the
        lock of a killed build go first (ninja would take one for up to date, wait for ever on the other)."""
        for stale in (self.module, self.record, self.path / "build.lock", self.failure_record):
            stale.unlink(missing_ok=True)
        try:
            self.compile(progress)
        except (RuntimeError, OSError) as error:
            for stale in self.path.glob("*.o"):  # so that the next build compiles everything
                stale.unlink(missing_ok=True)
            self.failure_record.write_text(failure_cause(error), "utf-8")
            raise
        self.record.write_text(self.fingerprint(), "utf-8")

    def compile(self, progress):
        """MindSpore's CustomOpBuilder on a copy of the source, linked with libms_bcewl.so. It writes paths into
        build.ninja escaping spaces only and flags unquoted for a shell: flags are quoted, and $ escaped for ninja."""
        if re.search(r"[$:]", str(self.path)):
            raise RuntimeError(f"cannot build in {self.path}: MindSpore's builder cannot name a path holding '$' or "
                               f"':' (set {CACHE_VARIABLE} to another folder)")
        shutil.copyfile(self.source, self.path / self.source.name)
        flags = " ".join(map(shlex.quote, [f"-L{LIBRARY_DIR}", "-lms_bcewl", f"-Wl,-rpath,{LIBRARY_DIR}"]))
        builder = ops.CustomOpBuilder(self.name, str(self.path / self.source.name), "CPU", build_dir=str(self.path),
                                      include_paths=[str(self.include_dir).replace("$", "$$")],
                                      ldflags=flags.replace("$", "$$"))
        progress(f"compiling {self.source} into {self.path} (about a minute)")
        try:
            builder.build()
        except RuntimeError as error:
            raise RuntimeError(f"{failure_cause(error)} (compiler output: {self.path / '.build_log.txt'})") from error

    def load_module(self):
        spec = importlib.util.spec_from_file_location(self.name, self.module)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def load_failure(self):
        try:
            self.load_module()
        except ImportError as error:
            return failure_cause(error)
        return None

    def load(self):  # built first where needed; marks this build used and removes stale ones
        self.build()
        with contextlib.suppress(OSError):  # a read-only cache
            os.utime(self.lock)
        module = sys.modules[self.name] = self.load_module()
        self.remove_stale_builds()
        return module

    def remove_stale_builds(self, now=None):
        """Removes the module's other builds whose .lock (touched by each load) is STALE_AFTER_DAYS old."""
        cutoff = (time.time() if now is None else now) - STALE_AFTER_DAYS * 86400
        for folder in self.path.parent.glob(f"{self.name}-{'[0-9a-f]' * 16}"):
            lock = folder / ".lock"
            if folder == self.path or not lock.is_file() or lock.stat().st_mtime > cutoff:
                continue
            # "a" leaves the time stamp as it is; OSError: held by another process (BlockingIOError), or read-only
            with contextlib.suppress(OSError), open(lock, "a", encoding="utf-8") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(folder, ignore_errors=True)

    def start_builder(self):
        """Starts `ms-bcewl build --background` of this very package, where it can build and write to the cache."""
        if failure := self.failure() or missing_compiler(os.environ):
            raise RuntimeError(failure)
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            self.lock.touch()
        except OSError as error:
            raise OSError(f"cannot write to the cache {self.path.parent} ({error.strerror}; {CACHE_VARIABLE} names "
                          "another)") from error
        package_root = LIBRARY_DIR.parent.parent  # the folder holding this ms_bcewl
        environment = dict(os.environ, **{CACHE_VARIABLE: str(self.path.parent), PATH_VARIABLE: "aot"})
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(package_root), os.environ.get("PYTHONPATH")]))
        _BUILDERS.append(subprocess.Popen(  # pylint: disable=consider-using-with
            [sys.executable, "-m", "ms_bcewl", "build", "--background"], cwd=package_root, env=environment,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))


def prepare_module(folder, wait_for_compile):
    """The pyboost loss in `folder`, compiled here where the caller waits, else None and a builder process started
    where it is not built; MindSpore's PyNative executor settled for it."""
    if folder.verified() is None:
        if not wait_for_compile:
            return folder.start_builder()  # None: the primitives serve this process
        print("ms_bcewl: building the pyboost module (once per machine, about a minute; 'ms-bcewl build' builds "
              "it ahead)", file=sys.stderr, flush=True)
    loss = folder.load().binary_cross_entropy_with_logits
    settle_pynative_executor()
    return loss


class PyboostPath:
    """Hands PyNative calls the pyboost loss where setting and runtime choose it, prepared at the first such call."""

    def __init__(self, choice, prepare=prepare_module, locate=BuildFolder.in_cache):
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
        if self.choice == "pyboost" and not self._blocking:
            raise RuntimeError(ASYNC_RUNTIME_REFUSED)
        if self.choice == "pyboost":
            return self.wait(explicit=True)
        if self._blocking and not self._prepared:
            self._prepare_once(wait_for_compile=False)
        return self._loss if self._blocking else None  # a module loaded by wait() serves no asynchronous call

    def wait(self, explicit=False):
        """The pyboost loss, compiled here where needed, else None (explicit: RuntimeError); it settles the path."""
        if self._loss is None and self._failure is None:
            self._prepare_once(wait_for_compile=True)
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


def setting(environ):  # empty reads as unset; an unknown value stays for the first call to raise at
    return environ.get(PATH_VARIABLE) or "auto"


PYBOOST = PyboostPath(setting(os.environ))
