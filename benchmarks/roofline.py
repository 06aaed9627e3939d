#!/usr/bin/env python3
"""GFLOP/s of the BLAS-shaped PolyBench kernels against the library and the machine: gcc -O3, polytune optimize,
Polly 19 (clang-19 -O3 -mllvm -polly -mllvm -polly-parallel), Pluto's output where given, and OpenBLAS (through
numpy / scipy.linalg.blas, the same operation at the same sizes), at 1 thread and at all cores.

    python3 benchmarks/roofline.py run --polybench DIR [--kernels gemm,syrk] [--dataset LARGE] [--threads 1,2]
        [--rounds 3] [--cpus 0,1] [--pluto DIR] [--out roofline.json]
    python3 benchmarks/roofline.py table roofline.json [--plot docs/figures/roofline.png]

Every round runs every program once per thread count, in a fresh shuffled order (interleaved); the table has the
medians. A program's time is PolyBench's -DPOLYBENCH_TIME (the kernel only); the library's is the median of 3 calls
after a warm-up in one Python process per round with OPENBLAS_NUM_THREADS (and OMP_NUM_THREADS) set to the thread
count; `openblas-first` (a variant to ask for) is the library's first call in a fresh process, the program's view: a
PolyBench program's timer also covers its first touches of its output arrays, its buffers and its thread pool's
start, which the library's warm calls have behind them. Peak is stated two ways: nominal (lanes of a double vector x
full-width FMAs per cycle x 2 flops x the highest frequency cpufreq or /proc/cpuinfo reports, per core) and measured
(independent FMA chains in vector registers, in C, timed). The STREAM triad (a[i] = b[i] + s * c[i], 24 bytes per
element, arrays of 160 MB each) gives the memory ceiling for the memory-bound kernels (GB/s column where a byte
count is known). `--pluto DIR`: DIR/KERNEL.pluto.c (polycc --tile --parallel output) is built and timed too.
Nothing of PolyBench is copied into this repository.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

# flop counts (multiply-add = 2) from the dataset's sizes; covariance/correlation count their product only
FLOPS = {
    "gemm": lambda s: 2 * s["NI"] * s["NJ"] * s["NK"],
    "2mm": lambda s: 2 * s["NI"] * s["NJ"] * s["NK"] + 2 * s["NI"] * s["NL"] * s["NJ"],
    "3mm": lambda s: 2 * s["NI"] * s["NJ"] * s["NK"] + 2 * s["NJ"] * s["NL"] * s["NM"]
    + 2 * s["NI"] * s["NL"] * s["NJ"],
    "syrk": lambda s: s["M"] * s["N"] * (s["N"] + 1),
    "syr2k": lambda s: 2 * s["M"] * s["N"] * (s["N"] + 1),
    "symm": lambda s: 2 * s["M"] * s["M"] * s["N"],
    "trmm": lambda s: s["M"] * s["M"] * s["N"],
    "doitgen": lambda s: 2 * s["NR"] * s["NQ"] * s["NP"] * s["NP"],
    "covariance": lambda s: s["N"] * s["M"] * (s["M"] + 1),
    "correlation": lambda s: s["N"] * s["M"] * (s["M"] + 1),
}
# bytes a memory-bound kernel must move at least once (8-byte elements), for its GB/s against the triad
BYTES = {
    "atax": lambda s: 8 * s["M"] * s["N"], "bicg": lambda s: 8 * s["M"] * s["N"],
    "mvt": lambda s: 16 * s["N"] * s["N"], "gesummv": lambda s: 16 * s["N"] * s["N"],
    "gemver": lambda s: 24 * s["N"] * s["N"],
}
DEFAULT_KERNELS = list(FLOPS)
# the library's two timings: warm (the median of 3 calls after one) and its first call in a fresh process
LIBRARY_VARIANTS = ("openblas", "openblas-first")
VARIANTS = ["gcc", "polytune", "polly19", "pluto", *LIBRARY_VARIANTS]

# The library's equivalent of each kernel (Fortran-ordered operands, so that no call copies them).
BLAS_CODE = {
    "gemm": "A=r(NI,NK); B=r(NK,NJ); C=r(NI,NJ)\ndef run(): blas.dgemm(1.5, A, B, 1.2, C, overwrite_c=1)",
    "2mm": "A=r(NI,NK); B=r(NK,NJ); C=r(NJ,NL); D=r(NI,NL)\n"
           "def run():\n t = blas.dgemm(1.5, A, B)\n blas.dgemm(1.0, t, C, 1.2, D, overwrite_c=1)",
    "3mm": "A=r(NI,NK); B=r(NK,NJ); C=r(NJ,NM); D=r(NM,NL)\n"
           "def run():\n E = blas.dgemm(1.0, A, B)\n F = blas.dgemm(1.0, C, D)\n blas.dgemm(1.0, E, F)",
    "syrk": "A=r(N,M); C=r(N,N)\ndef run(): blas.dsyrk(1.5, A, 1.2, C, lower=1, overwrite_c=1)",
    "syr2k": "A=r(N,M); B=r(N,M); C=r(N,N)\ndef run(): blas.dsyr2k(1.5, A, B, 1.2, C, lower=1, overwrite_c=1)",
    "symm": "A=r(M,M); B=r(M,N); C=r(M,N)\n"
            "def run(): blas.dsymm(1.5, A, B, 1.2, C, side=0, lower=1, overwrite_c=1)",
    "trmm": "A=r(M,M); B=r(M,N)\ndef run(): blas.dtrmm(1.5, A, B, side=0, lower=1, trans_a=1, diag=1, overwrite_b=1)",
    "doitgen": "A=r(NR*NQ,NP); C4=r(NP,NP)\ndef run(): blas.dgemm(1.0, A, C4)",
    "covariance": "D=r(N,M)\ndef run():\n X = np.asfortranarray(D - D.mean(axis=0))\n"
                  " blas.dsyrk(1.0 / (N - 1), X, trans=1, lower=0)",
    "correlation": "D=r(N,M)\ndef run():\n X = D - D.mean(axis=0)\n"
                   " X = np.asfortranarray(X / (np.sqrt(N) * X.std(axis=0)))\n blas.dsyrk(1.0, X, trans=1, lower=0)",
}
BLAS_MAIN = """
import os, sys, time, json
import numpy as np
from scipy.linalg import blas
S = json.loads(sys.argv[1]); globals().update(S)
rng = np.random.default_rng(0)
def r(*shape): return np.asfortranarray(rng.random(shape))
{code}
if S.get("FIRST"):
    t0 = time.perf_counter(); run(); print(time.perf_counter() - t0); raise SystemExit
run()
ts = []
for _ in range(3):
    t0 = time.perf_counter(); run(); ts.append(time.perf_counter() - t0)
print(sorted(ts)[1])
"""

# The kernels the library runs: OpenBLAS picks them at load time from the core it detects, and on a core it does
# not know (a virtual machine's "Intel Xeon Processor") it may fall back to older ones (an AVX-512 host whose
# OpenBLAS ran gemm at 38 GFLOP/s on one core against 107 GFLOP/s of FMA chains, 2026-12-07): the table names
# them, so that a share of such a library is not read as the library's ceiling.
LIBRARY_CODE = r"""
import ctypes
from scipy.linalg import blas  # (loads the library)
paths = []
for line in open("/proc/self/maps"):
    path = line.split()[-1]
    if "openblas" in path.rsplit("/", 1)[-1] and ".so" in path and path not in paths:
        paths.append(path)
for path in paths:
    lib = ctypes.CDLL(path)
    for name in ("scipy_openblas_get_corename", "scipy_openblas_get_corename64_", "openblas_get_corename",
                 "openblas_get_corename64_"):
        f = getattr(lib, name, None)
        if f is not None:
            f.restype = ctypes.c_char_p
            print(f().decode())
            raise SystemExit
print("unknown")
"""

PEAK_C = r"""
#include <stdio.h>
#include <time.h>
typedef double v __attribute__((vector_size(VB)));
int main(void) {
  v a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0}, a8 = {0}, a9 = {0};
  v x = {0}; x += 1e-9; v y = x + 1.0;
  struct timespec s, e; long n = 200000000 / (VB / 8);
  clock_gettime(CLOCK_MONOTONIC, &s);
  for (long i = 0; i < n; i++) {
    __asm__("" : "+x"(x));
    a0 = a0 * y + x; a1 = a1 * y + x; a2 = a2 * y + x; a3 = a3 * y + x; a4 = a4 * y + x;
    a5 = a5 * y + x; a6 = a6 * y + x; a7 = a7 * y + x; a8 = a8 * y + x; a9 = a9 * y + x;
  }
  clock_gettime(CLOCK_MONOTONIC, &e);
  v t = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9;
  double sec = (e.tv_sec - s.tv_sec) + 1e-9 * (e.tv_nsec - s.tv_nsec);
  printf("%g %g\n", 20.0 * (VB / 8) * n / sec / 1e9, t[0]);
  return 0;
}
"""

TRIAD_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
#define N 20000000
int main(void) {
  double *a = malloc(8L * N), *b = malloc(8L * N), *c = malloc(8L * N), best = 1e30;
  #pragma omp parallel for
  for (long i = 0; i < N; i++) { a[i] = 0; b[i] = 1; c[i] = 2; }
  for (int r = 0; r < 10; r++) {
    double t = omp_get_wtime();
    #pragma omp parallel for
    for (long i = 0; i < N; i++) a[i] = b[i] + 3.0 * c[i];
    t = omp_get_wtime() - t;
    if (t < best) best = t;
  }
  printf("%g %g\n", 24.0 * N / best / 1e9, a[N / 2]);
  return 0;
}
"""


def sh(cmd: list[str], env: dict | None = None, timeout: float = 1800) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n{(p.stdout + p.stderr)[-2000:]}")
    return p.stdout


def sizes_of(header: str, dataset: str) -> dict[str, int]:
    """The dataset's size macros from a PolyBench header (`# ifdef LARGE_DATASET ... # define NI 1000`)."""
    text = open(header).read()
    m = re.search(rf"#\s*ifdef\s+{dataset}_DATASET(.*?)#\s*endif", text, re.S)
    return {k: int(v) for k, v in re.findall(r"#\s*define\s+(\w+)\s+(\d+)", m.group(1))} if m else {}


def frequency_ghz() -> float:
    try:
        return int(open("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").read()) / 1e6
    except (OSError, ValueError):
        mhz = [float(x) for x in re.findall(r"cpu MHz\s*:\s*([\d.]+)", open("/proc/cpuinfo").read())]
        return max(mhz) / 1e3 if mhz else 0.0


def machine_ceilings(tmp: str, threads: list[int]) -> dict:
    from polytune import machine
    vb = machine.vector_bytes()
    lanes, fma, ghz = vb // 8, machine.fma_units(), frequency_ghz()
    out = {"vector_bytes": vb, "fma_units": fma, "ghz": ghz,
           "nominal_gflops_per_core": lanes * fma * 2 * ghz,
           "nominal_how": f"{lanes} doubles per vector x {fma} full-width FMA per cycle x 2 flops x {ghz:.2f} GHz"}
    src = os.path.join(tmp, "peak.c")
    open(src, "w").write(PEAK_C)
    sh(["gcc", "-O2", "-march=native", f"-DVB={vb}", src, "-o", src[:-2]])
    out["measured_gflops_per_core"] = max(float(sh([src[:-2]]).split()[0]) for _ in range(3))
    src = os.path.join(tmp, "triad.c")
    open(src, "w").write(TRIAD_C)
    sh(["gcc", "-O3", "-march=native", "-fopenmp", src, "-o", src[:-2]])
    out["triad_gbs"] = {str(t): float(sh([src[:-2]], dict(os.environ, OMP_NUM_THREADS=str(t))).split()[0])
                        for t in threads}
    try:
        out["openblas_core"] = sh([sys.executable, "-c", LIBRARY_CODE], timeout=120).strip() or "unknown"
    except (RuntimeError, OSError, subprocess.TimeoutExpired):
        out["openblas_core"] = "unknown"
    return out


def build(args, tmp: str) -> dict[str, dict[str, str]]:
    """kernel -> variant -> executable."""
    sys.path.insert(0, os.path.join(HERE, "polybench"))
    from run import checkout_pythonpath, find_kernels, polly_flags
    pb = os.path.abspath(args.polybench)
    util = os.path.join(pb, "utilities")
    found = find_kernels(pb)
    clang = shutil.which("clang-19")
    polly = polly_flags(clang) if clang else None
    out: dict[str, dict[str, str]] = {}
    for k in args.kernels:
        src = found[k]
        kdir = os.path.dirname(src)
        defs = [f"-D{args.dataset}_DATASET", "-DPOLYBENCH_TIME", f"-I{util}", f"-I{kdir}"]
        harness = os.path.join(util, "polybench.c")
        exes = {}
        opt = os.path.join(tmp, f"{k}.polytune.c")
        sh([sys.executable, "-m", "polytune", "optimize", src, "-o", opt, f"-I{util}", f"-I{kdir}",
            f"-D{args.dataset}_DATASET", "-DPOLYBENCH_TIME"],
           dict(os.environ, PYTHONPATH=checkout_pythonpath()))
        omp = ["-O3", "-march=native", "-fopenmp"]
        pluto = os.path.join(args.pluto, k + ".pluto.c") if args.pluto else ""
        todo = [("gcc", "gcc", ["-O3", "-march=native"], src)] * ("gcc" in args.variants) \
            + [("polytune", "gcc", omp, opt)] \
            + [("polly19", clang, ["-O3", "-march=native", *(polly or []), "-fopenmp"], src)] \
            * bool(polly and "polly19" in args.variants) \
            + [("pluto", "gcc", omp, pluto)] * bool(pluto and "pluto" in args.variants and os.path.exists(pluto))
        for v, cc, flags, file in todo:
            exe = os.path.join(tmp, f"{k}.{v}")
            sh([cc, *flags, *defs, file, harness, "-o", exe, "-lm"])
            exes[v] = exe
        out[k] = exes
    return out


def run(args) -> None:
    threads = [int(t) for t in args.threads.split(",")]
    pin = ["taskset", "-c", args.cpus] if args.cpus else []
    pb = os.path.abspath(args.polybench)
    sys.path.insert(0, os.path.join(HERE, "polybench"))
    from run import find_kernels
    headers = {k: v[:-2] + ".h" for k, v in find_kernels(pb).items()}
    with tempfile.TemporaryDirectory(prefix="roofline-") as tmp:
        ceilings = machine_ceilings(tmp, threads)
        exes = build(args, tmp)
        blas = [v for v in LIBRARY_VARIANTS if v in args.variants]
        times: dict = {k: {str(t): {v: [] for v in [*exes[k], *blas]} for t in threads} for k in args.kernels}
        for rnd in range(args.rounds):
            jobs = [(k, t, v) for k in args.kernels for t in threads for v in [*exes[k], *blas]]
            random.Random(rnd).shuffle(jobs)
            for k, t, v in jobs:
                env = dict(os.environ, OMP_NUM_THREADS=str(t), OPENBLAS_NUM_THREADS=str(t))
                if v in LIBRARY_VARIANTS:
                    if k not in BLAS_CODE:
                        continue
                    code = BLAS_MAIN.format(code=BLAS_CODE[k])
                    sizes = dict(sizes_of(headers[k], args.dataset), FIRST=v == "openblas-first")
                    out = sh([*pin, sys.executable, "-c", code, json.dumps(sizes)], env)
                else:
                    out = sh([*pin, exes[k][v]], env)
                times[k][str(t)][v].append(float(out.split()[-1]))
            print(f"round {rnd + 1}/{args.rounds} done", file=sys.stderr)
            _write(args, threads, rnd + 1, ceilings, headers, times)  # (each round: an interrupted run keeps them)
    print(table(json.load(open(args.out))))


def _write(args, threads, rounds, ceilings, headers, times) -> None:
    rec = {"dataset": args.dataset, "threads": threads, "rounds": rounds, "cpus": args.cpus,
           "load_after": os.getloadavg(), "ceilings": ceilings, "kernels": {}}
    for k in args.kernels:
        s = sizes_of(headers[k], args.dataset)
        rec["kernels"][k] = {"sizes": s, "flops": FLOPS[k](s) if k in FLOPS else None,
                             "bytes": BYTES[k](s) if k in BYTES else None, "times": times[k]}
    with open(args.out, "w") as f:
        json.dump(rec, f, indent=1)


def table(rec: dict) -> str:
    c = rec["ceilings"]
    lines = [f"Peak per core: nominal {c['nominal_gflops_per_core']:.1f} GFLOP/s ({c['nominal_how']}), measured "
             f"{c['measured_gflops_per_core']:.1f} GFLOP/s (independent FMA chains); STREAM triad "
             + ", ".join(f"{t} thread(s) {g:.1f} GB/s" for t, g in c["triad_gbs"].items())
             + f". {rec['dataset']}, medians of {rec['rounds']} interleaved rounds; load average after: "
             + ", ".join(f"{x:.1f}" for x in rec["load_after"]) + "."
             + (f" OpenBLAS's kernels: {c['openblas_core']} (the core it detected)." if "openblas_core" in c else ""),
             ""]
    first_call = _has(rec, "openblas-first")  # (older records have no such timing: no column)
    variants = [v for v in VARIANTS if v != "openblas-first" or first_call]
    for t in rec["threads"]:
        peak = c["measured_gflops_per_core"] * t
        lines += [f"**{t} thread(s)** (peak {peak:.1f} GFLOP/s)", "",
                  "| kernel | " + " | ".join(f"{v} GFLOP/s" for v in variants) +
                  " | polytune / OpenBLAS |" + " polytune / OpenBLAS's first call |" * first_call
                  + " polytune / peak | polytune / Polly 19 |",
                  "|---" * (len(variants) + 4 + first_call) + "|"]
        for k, kr in rec["kernels"].items():
            med = {v: statistics.median(x) for v, x in kr["times"][str(t)].items() if x}
            work = kr["flops"]
            rate = {v: (work / s / 1e9 if work else None) for v, s in med.items()}
            cells = [f"{rate[v]:.2f}" if rate.get(v) else "-" for v in variants]
            first = f" {_fraction(rate, 'polytune', 'openblas-first')} |" if first_call else ""
            lines.append(f"| {k} | " + " | ".join(cells) + f" | {_fraction(rate, 'polytune', 'openblas')} |{first} "
                         + (f"{rate['polytune'] / peak:.0%}" if rate.get("polytune") else "-") +
                         f" | {_fraction(rate, 'polytune', 'polly19')} |")
        lines.append("")
    return "\n".join(lines)


def _has(rec: dict, variant: str) -> bool:
    return any(ts.get(variant) for kr in rec["kernels"].values() for ts in kr["times"].values())


def _fraction(rate: dict, a: str, b: str) -> str:
    return f"{rate[a] / rate[b]:.0%}" if rate.get(a) and rate.get(b) else "-"


def plot(rec: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    variants = [v for v in VARIANTS if _has(rec, v)]
    kernels = list(rec["kernels"])
    fig, axes = plt.subplots(1, len(rec["threads"]), figsize=(6 * len(rec["threads"]), 4.5), squeeze=False)
    for ax, t in zip(axes[0], rec["threads"]):
        width = 0.8 / len(variants)
        for n, v in enumerate(variants):
            vals = []
            for k in kernels:
                x = rec["kernels"][k]["times"][str(t)].get(v)
                vals.append(rec["kernels"][k]["flops"] / statistics.median(x) / 1e9 if x else 0)
            ax.bar([i + n * width for i in range(len(kernels))], vals, width, label=v)
        peak = rec["ceilings"]["measured_gflops_per_core"] * t
        ax.axhline(peak, color="k", linestyle="--", linewidth=1, label="measured peak")
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(kernels))], kernels, rotation=45, ha="right")
        ax.set_ylabel("GFLOP/s")
        ax.set_title(f"{rec['dataset']}, {t} thread(s)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run")
    p.add_argument("--polybench", required=True)
    p.add_argument("--kernels", default=",".join(DEFAULT_KERNELS))
    p.add_argument("--dataset", default="LARGE")
    p.add_argument("--threads", default=f"1,{os.cpu_count() or 1}")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--cpus")
    p.add_argument("--pluto")
    p.add_argument("--variants", default="gcc,polytune,polly19,pluto,openblas",
                   help="which programs to time (polytune always; openblas-first: the library's first call in a "
                   "fresh process)")
    p.add_argument("--out", default="roofline.json")
    p.add_argument("--plot")
    p = sub.add_parser("table")
    p.add_argument("json")
    p.add_argument("--plot")
    args = ap.parse_args(argv)
    if args.cmd == "run":
        args.kernels = args.kernels.split(",")
        args.variants = args.variants.split(",")
        run(args)
        rec = json.load(open(args.out))
    else:
        rec = json.load(open(args.json))
        print(table(rec))
    if args.plot:
        plot(rec, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
