"""Builds the two native helpers at run time with g++: the formula roof and the do-nothing AOT kernel."""
import platform
import re
import subprocess
from pathlib import Path

SOURCES = Path(__file__).resolve().parent / "native"


def _cpu_flags():
    try:
        return next((line.split(":", 1)[1].split() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("flags")), [])
    except OSError:
        return []


def _vector_width_flags():
    """The widest vectors the CPU has: GCC's tuning keeps some x86 CPUs to narrower ones (128 bits on AMD Zen 1,
    256 on AVX-512 CPUs), and libmvec's wider variants run the formula faster; a roof must be the best of it."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return []
    return [f"-mprefer-vector-width={512 if 'avx512f' in _cpu_flags() else 256}"]


ROOF_FLAGS = ["-O3", "-march=native", *_vector_width_flags(), "-ffast-math", "-fopenmp", "-shared", "-fPIC"]
NOOP_FLAGS = ["-O2", "-shared", "-fPIC"]
LIBMVEC_FUNCTIONS = ("expf", "log1pf")


def _compile(source, library, flags):
    command = ["g++", *flags, "-o", str(library), str(source)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode:
        raise RuntimeError(f"{' '.join(command)} failed: {result.stderr.strip()[:300]}")
    return result


def _vector_symbols(library):
    """libmvec entry points the library calls, e.g. _ZGVbN4v_expf (b = SSE, d = AVX2; N4 = 4 lanes)."""
    symbols = subprocess.run(["nm", "-D", "--undefined-only", str(library)], capture_output=True, text=True,
                             check=False).stdout
    return sorted(set(re.findall(r"_ZGV\w+?_(?:%s)\b" % "|".join(LIBMVEC_FUNCTIONS), symbols)))


def build_formula_roof(directory):
    """(library path, a sentence on vectorisation). The compiler's report and nm tell whether it vectorised."""
    library = Path(directory) / "formula_roof.so"
    report = Path(directory) / "formula_roof.vec.txt"
    _compile(SOURCES / "formula_roof.cpp", library, ROOF_FLAGS + [f"-fopt-info-vec-optimized={report}"])
    vectorised_loops = report.read_text().count("loop vectorized")
    symbols = _vector_symbols(library)
    missing = [name for name in LIBMVEC_FUNCTIONS if not any(s.endswith("_" + name) for s in symbols)]
    verdict = "vectorised" if vectorised_loops and not missing else f"NOT fully vectorised (scalar {missing})"
    return str(library), (f"g++ {' '.join(ROOF_FLAGS)}: {verdict}; {vectorised_loops} loops vectorised, "
                          f"libmvec calls {', '.join(symbols) or 'none'}")


def build_noop_kernel(directory):
    library = Path(directory) / "noop_aot.so"
    _compile(SOURCES / "noop_aot.cpp", library, NOOP_FLAGS)
    return str(library)


def compiler_version():
    result = subprocess.run(["g++", "--version"], capture_output=True, text=True, check=False)
    return result.stdout.splitlines()[0] if result.returncode == 0 else "g++ not found"
