"""What the numbers were measured on: CPU, cores and versions, gathered in the parent and from the workers."""
import os
import platform
import subprocess

import numpy as np

from native import compiler_version


def cpu_model():
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    except FileNotFoundError:
        lscpu = ""
    for line in lscpu.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


PATH_PREFIX = "ms_bcewl path ("


def machine_info(workers, load_at_start):
    """Ordered fields; a version a worker could not report (torch not installed) says why. The load average
    tells how busy the (shared) machine was around the run."""
    info = {"cpu_model": cpu_model(), "cores": str(os.cpu_count()), "python": platform.python_version(),
            "numpy": np.__version__, "gxx": compiler_version(),
            "load_average": f"1-min {load_at_start:.2f} at start, {os.getloadavg()[0]:.2f} at end"}
    for worker in workers:
        info.update(worker.info)
    # Each MindSpore worker says which path ms_bcewl's calls took in its mode ("ms_bcewl path (<mode>/<runtime>)").
    paths = sorted(key for key in info if key.startswith(PATH_PREFIX))
    info["ms_bcewl_paths"] = "; ".join(f"{key[len(PATH_PREFIX):-1]}: {info.pop(key)}" for key in paths)
    info.setdefault("torch", next((w.unavailable for w in workers if w.name == "torch"), "not run"))
    return info
