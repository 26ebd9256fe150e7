"""One benchmark process: hosts one group of providers and times them on request.

Started by bench_bce_with_logits.py with a JSON spec as its argument. It answers one JSON line per request read
from stdin: {"op": "prepare", "workload": {...}} builds and warms up every provider of the group (the parent lets
the workers do this at once); {"op": "calibrate"} picks, with the machine to itself, how many calls make one
sample of each provider; {"op": "sample", "provider": name} times one sample and returns the seconds per call.
Answers go to the original stdout; anything a library prints is sent to stderr instead, so it cannot corrupt them.
"""
import gc
import json
import math
import os
import re
import sys
import time

from workloads import Workload, make_inputs

WARMUP_CALLS = 3
CALIBRATION_CALLS = 3  # the fastest of these sets the calls per sample
MAX_CALLS_PER_SAMPLE = 10_000


def describe(error):
    """One line: the error's type and message, without MindSpore's ---- frames and C++ call stack."""
    message = str(error).split("C++ Call Stack")[0]
    lines = [line.strip(" -") for line in message.splitlines()]
    text = " ".join(line for line in lines if line)
    return re.sub(r"\s+", " ", f"{type(error).__name__}: {text}")[:240]


def make_group(spec):
    if spec["group"] == "mindspore":
        from mindspore_providers import MindSporeGroup
        return MindSporeGroup(spec["mode"], spec["runtime"], spec["noop_library"], spec.get("paths"))
    if spec["group"] == "kernel":
        from kernel_providers import KernelGroup
        return KernelGroup()
    if spec["group"] == "torch":
        from torch_providers import TorchGroup
        return TorchGroup()
    from roof_providers import RoofGroup
    return RoofGroup(spec["formula_library"], spec["formula_build"])


def seconds_per_call(call, count):
    start = time.perf_counter()
    for _ in range(count):
        call()
    return (time.perf_counter() - start) / count


class Session:
    def __init__(self, group, sample_seconds):
        self._group = group
        self._sample_seconds = sample_seconds
        self._calls = {}

    def handle(self, request):
        if request["op"] == "prepare":
            return self._prepare(Workload(**request["workload"]))
        if request["op"] == "calibrate":
            return {"calls_per_sample": {name: self._calibrate(name) for name in self._calls}}
        call, count = self._calls[request["provider"]]
        return {"seconds": seconds_per_call(call, count)}

    def _prepare(self, workload):
        self._calls = {}
        gc.collect()
        ready, failed = [], {}
        for name, factory in self._group.providers(workload, make_inputs(workload)).items():
            try:
                call = factory()
                for _ in range(WARMUP_CALLS):
                    call()
                self._calls[name] = (call, 1)
                ready.append(name)
            except Exception as error:  # pylint: disable=broad-except  # any failure is reported as n/a
                failed[name] = describe(error)
        return {"ready": ready, "failed": failed}

    def _calibrate(self, name):
        """How many calls one sample of ~sample_seconds takes, from the fastest of a few single calls."""
        call, _ = self._calls[name]
        single = min(seconds_per_call(call, 1) for _ in range(CALIBRATION_CALLS))
        count = min(MAX_CALLS_PER_SAMPLE, max(1, math.ceil(self._sample_seconds / max(single, 1e-9))))
        self._calls[name] = (call, count)
        return count


def protocol_stream():
    """The original stdout, for answers only; fd 1 is pointed at stderr for everything else."""
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    return answers


def main():
    spec = json.loads(sys.argv[1])
    os.environ.update(spec.get("environment", {}))  # before ms_bcewl is imported, which reads its settings once
    if spec.get("package_root"):
        sys.path.insert(0, spec["package_root"])  # a baseline tree's ms_bcewl, imported instead of this one
    answers = protocol_stream()
    try:
        group = make_group(spec)
        hello = {"info": group.info()}
        if spec.get("package_root"):
            hello = {"info": {"baseline": hello["info"]["ms_bcewl"]}}
    except Exception as error:  # pylint: disable=broad-except  # e.g. torch not installed: the parent says n/a
        answers.write(json.dumps({"error": describe(error)}) + "\n")
        return
    answers.write(json.dumps(hello) + "\n")
    gc.disable()  # a collection inside a timed loop would land on whichever provider ran then
    session = Session(group, spec["sample_seconds"])
    for line in sys.stdin:
        answers.write(json.dumps(session.handle(json.loads(line))) + "\n")


if __name__ == "__main__":
    main()
