"""The parent's side of the worker processes: start, talk JSON lines, notice deaths, restart."""
import json
import subprocess
import sys
from pathlib import Path

WORKER_SCRIPT = Path(__file__).resolve().parent / "worker.py"
LOG_TAIL_CHARS = 300


class WorkerDied(RuntimeError):
    pass


class WorkerProcess:
    """One provider group in its own process. ``spec`` goes to worker.py; ``providers`` maps a workload kind
    ('bce' or 'floor') to the provider names the group is expected to answer for; ``labels`` maps a provider name to
    the (provider, runtime) its results are reported as, where they differ from the name and the worker's runtime."""

    def __init__(self, name, spec, providers, mode, runtime, log_dir, labels=None):
        self.name, self.spec, self.providers = name, spec, providers
        self.mode, self.runtime, self.labels = mode, runtime, labels or {}
        self._log_path = Path(log_dir) / f"{name}.log"
        self._process = None
        self.info, self.unavailable = {}, ""

    def start(self):
        """Starts the process; read its greeting with ``greet`` (so several can start at once)."""
        with open(self._log_path, "a", encoding="utf-8") as log:
            self._process = subprocess.Popen([sys.executable, str(WORKER_SCRIPT), json.dumps(self.spec)],
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                             text=True, bufsize=1)

    def greet(self):
        try:
            hello = self.receive()
        except WorkerDied as death:
            hello = {"error": str(death)}
        self.unavailable = hello.get("error", "")
        self.info.update(hello.get("info", {}))

    @property
    def alive(self):
        return self._process is not None and self._process.poll() is None and not self.unavailable

    def send(self, request):
        try:
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
        except (BrokenPipeError, OSError) as error:
            raise WorkerDied(self._death_note()) from error

    def receive(self):
        line = self._process.stdout.readline()
        if not line:
            raise WorkerDied(self._death_note())
        return json.loads(line)

    def request(self, request):
        self.send(request)
        return self.receive()

    def _death_note(self):
        self._process.wait()
        tail = self._log_path.read_text(encoding="utf-8", errors="replace")[-LOG_TAIL_CHARS:]
        return f"worker {self.name} died (exit {self._process.returncode}): ...{' '.join(tail.split())}"

    def restart_if_dead(self):
        """A worker that crashed on one workload is started afresh for the next."""
        if self._process.poll() is not None and not self.unavailable:
            self.start()
            self.greet()

    def close(self):
        if self._process is None or self._process.poll() is not None:
            return
        self._process.stdin.close()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
