"""The first PyNative call of a fresh process under ``mindspore.runtime.launch_blocking()``, against a warm one.

Each configuration runs in fresh processes (MindSpore imported, then one timed first call of the loss on 1e3
float32 elements, then 50 warm calls timed one by one):
- ``empty cache``: ms_bcewl with an empty pyboost cache (MS_BCEWL_CACHE_DIR a new folder): the call must not wait
  for the compile that starts in the background;
- ``built cache``: ms_bcewl with the module already built;
- ``primitives``: ms_bcewl with MS_BCEWL_PYNATIVE_PATH=aot, the ops.Custom primitives only;
- ``built-in``: mindspore.ops.binary_cross_entropy_with_logits.
A process and its builder are ended once they have answered, so no compile runs beside the next measurement.
Nothing here asserts speed; see docs/performance.md.

    python benchmarks/first_call.py [--runs 5]
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time
import numpy as np
import mindspore as ms
ms.runtime.launch_blocking()
ms.set_context(mode=ms.PYNATIVE_MODE)
import ms_bcewl
loss = ms.ops.binary_cross_entropy_with_logits if sys.argv[1] == "built-in" else \
    ms_bcewl.binary_cross_entropy_with_logits
rng = np.random.default_rng(0)
x = ms.Tensor(rng.standard_normal((1000,), dtype=np.float32))
y = ms.Tensor(rng.random((1000,), dtype=np.float32))
def call():
    started = time.perf_counter()
    loss(x, y, None, None, "mean").asnumpy()
    return time.perf_counter() - started
first = call()
warm = sorted(call() for _ in range(50))
print(json.dumps({"first": first, "warm": warm[len(warm) // 2]}), flush=True)
"""
CONFIGURATIONS = ("empty cache", "built cache", "primitives", "built-in")


def environment(configuration, scratch):
    env = dict(os.environ)
    env.pop("MS_BCEWL_PYNATIVE_PATH", None)
    if configuration == "empty cache":
        env["MS_BCEWL_CACHE_DIR"] = tempfile.mkdtemp(prefix="empty_", dir=scratch)
    elif configuration == "built cache":
        env["MS_BCEWL_CACHE_DIR"] = os.path.join(scratch, "built")
    elif configuration == "primitives":
        env["MS_BCEWL_PYNATIVE_PATH"] = "aot"
    return env


def measure(configuration, scratch):
    """{first, warm} seconds of one fresh process; the process group (with any builder) is ended after."""
    with subprocess.Popen([sys.executable, "-c", CHILD, configuration], env=environment(configuration, scratch),
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                          start_new_session=True) as child:
        line = child.stdout.readline()
        os.killpg(child.pid, signal.SIGKILL)
    if not line:
        raise RuntimeError(f"the {configuration} process answered nothing")
    return json.loads(line)


def build_cache(scratch):
    env = dict(os.environ, MS_BCEWL_CACHE_DIR=os.path.join(scratch, "built"))
    subprocess.run([sys.executable, "-m", "ms_bcewl", "build"], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per configuration (default 5)")
    args = parser.parse_args(argv)
    samples = {configuration: [] for configuration in CONFIGURATIONS}
    with tempfile.TemporaryDirectory(prefix="ms_bcewl_first_call_") as scratch:
        build_cache(scratch)
        for _ in range(args.runs):
            for configuration in CONFIGURATIONS:  # in turn, so that drift lands on every configuration alike
                samples[configuration].append(measure(configuration, scratch))
    primitive_first = statistics.median(sample["first"] for sample in samples["primitives"])
    print("| configuration | first call | warm call | first ÷ warm | first ÷ first of the primitives |")
    print("|---|---|---|---|---|")
    for configuration, runs in samples.items():
        first = statistics.median(sample["first"] for sample in runs)
        warm = statistics.median(sample["warm"] for sample in runs)
        print(f"| {configuration} | {first * 1e3:.1f} ms | {warm * 1e6:.0f} µs | {first / warm:.0f}× | "
              f"{first / primitive_first:.2f}× |")


if __name__ == "__main__":
    main()
