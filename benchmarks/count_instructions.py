"""Executed instructions per element of the host kernels, scalar against SIMD, counted under qemu's user-mode
emulator (docs/performance.md, "aarch64: instructions per element").

    python benchmarks/count_instructions.py [--arch aarch64|x86_64] [--zig PATH] [--build DIR] [--sizes N1,N2]

Builds libms_bcewl.so for the architecture with the wheels' toolchain (cmake/zig-toolchain.cmake; zig from PyPI's
ziglang==0.17.1 unless --zig names one) and benchmarks/native/instruction_count.cpp against it, then runs each
operation under `qemu-<arch> -singlestep -d exec,nochain,strace`: every translation block is one guest instruction
and is logged each time it runs, between the logged marker system calls of the program. Per element:
(instructions of the call on N2 elements - those on N1) / (N2 - N1), which cancels each call's fixed cost (checks,
plan, workspace). One thread (MS_BCEWL_NUM_THREADS=1); MS_BCEWL_ISA picks the kernels (x86_64: scalar and avx2, the
widest that qemu emulates). Needs qemu-user and, for aarch64, its glibc (Debian: apt-get install qemu-user
libc6-arm64-cross).
"""
import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DRIVER = REPO / "benchmarks" / "native" / "instruction_count.cpp"
# Per architecture: the SIMD kernels counted against the scalar ones, and qemu's options (the aarch64 glibc; a CPU
# model with AVX2, FMA and F16C).
ARCHITECTURES = {"aarch64": ("neon", ["-L", "/usr/aarch64-linux-gnu"]), "x86_64": ("avx2", ["-cpu", "max"])}
# (what the row says, the driver's operation and reduction); each row is run without weights and with both.
OPERATIONS = (("forward, reduction none", "forward", "none"),
              ("forward, reduction mean", "forward", "mean"),
              ("dx (Backward), reduction none", "backward", "none"),
              ("dx, dy (, dw, dp) (AllBackward), mean", "all_backward", "mean"))
VARIANTS = (("no weights", "plain"), ("weight, pos_weight", "wp"))
MARKER = "write(-1,"  # the driver's marker system call, as qemu's strace logs it


def default_zig():
    try:
        import ziglang  # pylint: disable=import-outside-toplevel
    except ImportError:
        sys.exit("no zig: pip install ziglang==0.17.1, or pass --zig")
    return Path(ziglang.__file__).parent / "zig"


def run_quietly(command):
    """Runs a build step; its output only where it fails."""
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(map(str, command))} failed:\n{(done.stdout + done.stderr)[-4000:]}")


def build(zig, arch, build_dir):
    """The library, as the wheels build it (.ci/wheels), and the driver linked to it."""
    target = f"{arch}-linux-gnu.2.28"
    run_quietly(["cmake", "-S", REPO / "aclnn_adapter", "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                 f"-DCMAKE_TOOLCHAIN_FILE={REPO / 'cmake' / 'zig-toolchain.cmake'}", f"-DMS_BCEWL_ZIG={zig}",
                 f"-DMS_BCEWL_ZIG_TARGET={target}"])
    run_quietly(["cmake", "--build", build_dir, "--target", "ms_bcewl"])
    driver = build_dir / "instruction_count"
    run_quietly([zig, "c++", "-target", target, "-std=c++17", "-O2", f"-I{REPO / 'aclnn_adapter' / 'include'}",
                 DRIVER, f"-L{build_dir}", "-lms_bcewl", f"-Wl,-rpath,{build_dir}", "-o", driver])
    return driver


def instructions_between_markers(log):
    """The instructions logged between each pair of consecutive markers."""
    counts = []
    for line in log:
        if line.startswith("Trace ") and counts:
            counts[-1] += 1
        elif MARKER in line:
            counts.append(0)
    return counts[:-1]


def count(driver, arch, isa, op, variant, reduction, sizes):
    """Instructions of the counted calls on sizes[0] and sizes[1] elements."""
    with tempfile.TemporaryDirectory() as folder:
        fifo = Path(folder) / "log"
        os.mkfifo(fifo)
        environment = dict(os.environ, MS_BCEWL_ISA=isa, MS_BCEWL_NUM_THREADS="1")
        command = [f"qemu-{arch}", *ARCHITECTURES[arch][1], "-singlestep", "-d", "exec,nochain,strace", "-D", fifo,
                   driver, op, variant, reduction, *map(str, sizes)]
        with subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, text=True) as qemu:
            with open(fifo, encoding="utf-8", errors="replace") as log:
                counts = instructions_between_markers(log)
            output = qemu.communicate()[0]
        if qemu.returncode != 0 or len(counts) != 2:
            sys.exit(f"{' '.join(map(str, command))}: exit {qemu.returncode}, {output.strip()}, markers {counts}")
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", choices=sorted(ARCHITECTURES), default="aarch64")
    parser.add_argument("--zig", type=Path, help="the zig executable (default: the ziglang package's)")
    parser.add_argument("--build", type=Path, help="the build folder (default: ms_bcewl_count_<arch> in the temp dir)")
    parser.add_argument("--sizes", default="2048,4096", help="N1,N2: multiples of 64, N1 < N2")
    arguments = parser.parse_args()
    sizes = [int(size) for size in arguments.sizes.split(",")]
    arch, simd = arguments.arch, ARCHITECTURES[arguments.arch][0]
    build_dir = arguments.build or Path(tempfile.gettempdir()) / f"ms_bcewl_count_{arch}"
    driver = build(arguments.zig or default_zig(), arch, build_dir)
    print(f"{arch} instructions per element, from N = {sizes[0]} to {sizes[1]}, one thread:\n")
    print(f"| operation | inputs | scalar | {simd} | scalar / {simd} |\n|---|---|---|---|---|")
    for label, op, reduction in OPERATIONS:
        for inputs, variant in VARIANTS:
            per_element = {}
            for isa in ("scalar", simd):
                first, second = count(driver, arch, isa, op, variant, reduction, sizes)
                per_element[isa] = (second - first) / (sizes[1] - sizes[0])
            print(f"| {label} | {inputs} | {per_element['scalar']:.1f} | {per_element[simd]:.1f} | "
                  f"{per_element['scalar'] / per_element[simd]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
