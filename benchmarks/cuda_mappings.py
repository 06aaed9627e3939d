#!/usr/bin/env python3
"""CUDA mappings side by side: the previous mapping (one point per thread, the default block), the default
mapping (tiles of points per thread, registers, shared-memory tiles where they pay) and the mapping
`polytune tune --target cuda` finds, on benchmarks/gpu (the sizes of benchmarks/run_gpu.py; matmul_vanilla
with torch.matmul in float32, TF32 off) and PolyBench/C 4.2.1 gemm, 2mm, atax, jacobi-2d and covariance
(LARGE_DATASET).

Three phases:
  1. tune: `polytune tune --target cuda --max-evals E` per kernel, several at once (--jobs): their
     compiles overlap, their timings take turns (POLYTUNE_GPU_LOCK, measure/cuda.py's gpu_lock). Each
     report gives the best mapping, the tuner's kernel gain and the gain re-measured in the program.
  2. compile: every variant is a whole program (the user's, with its region replaced), compiled with
     nvcc, all at once.
  3. rounds: in each round every variant runs once, in the same order (interleaved), and reports
       - kernel time: CUDA events around the region's launches (`polytune-kernel-ms`);
       - region time: the program's host clock around the whole region (`polytune-region-ms`):
         allocation, copies, kernels, copies back;
       - program time: the region's time as the program's own timer measures it (PolyBench's
         POLYBENCH_TIME, benchmarks/gpu's `time:`).
     The CUDA context is created when the program starts (cuda_header's eager_context), not inside the
     region, so this one-time cost (~0.1-0.3 s) does not hide the differences between mappings.
The first round also verifies each variant: PolyBench arrays (POLYBENCH_DUMP_ARRAYS) against the CPU
program's within the dump's rounding, benchmarks/gpu checksums against the previous mapping's.

--ppcg GEN (benchmarks/ppcg/prepare.sh's output folder, or its tarball, unpacked into the work folder) adds a
variant "ppcg (default options)" to each PolyBench kernel of GEN's manifest: PPCG's CUDA built as
benchmarks/ppcg/run.py builds its "ppcg, eager context, events" program (the context made at start, CUDA
events from PPCG's first launch to its last: `ppcg-kernel-ms`, the kernel time column; PolyBench's time, the
program column; no region time), with the same defines as polytune's variants, so that the first round
checks its LARGE dump too; run.py's MINI dump check runs once before the rounds. It is timed in every
round with the kernel's other variants, and a last table gives tuned's speedup over it (PPCG's kernel ms /
tuned's, the default's where no tuned row) per kernel and as a geometric mean: issue 19 asks for 1.5x.

    python3 benchmarks/cuda_mappings.py --out results.json [--rounds 3] [--tune-evals 16] [--polybench DIR]
    python3 benchmarks/cuda_mappings.py --extra ...          # also fixed configurations beside the three
    python3 benchmarks/cuda_mappings.py --no-tune ...        # previous and default only (no search)
    python3 benchmarks/cuda_mappings.py --compile-only ...   # no GPU needed: generate and compile only
    python3 benchmarks/cuda_mappings.py --ppcg ppcg_cuda.tar.xz ...   # PPCG's output in the same rounds

PolyBench is not part of this repository: --polybench names a copy of PolyBench/C 4.2.1 as distributed
(default: $POLYBENCH or /work/polybench); its files are only read.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from polytune.emit.cuda import CudaMapping  # noqa: E402
from polytune.measure.cuda import parse_ptxas  # noqa: E402
from polytune.pipeline import OptimizeOptions, analyze, cuda_program  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("ppcg_run", os.path.join(HERE, "ppcg", "run.py"))
ppcg_run = importlib.util.module_from_spec(_spec)  # benchmarks/ppcg/run.py: how PPCG's output is built and checked
_spec.loader.exec_module(ppcg_run)
POLYBENCH = {  # name -> directory under PolyBench's root
    "gemm": "linear-algebra/blas/gemm", "2mm": "linear-algebra/kernels/2mm", "atax": "linear-algebra/kernels/atax",
    "jacobi-2d": "stencils/jacobi-2d", "covariance": "datamining/covariance",
}
GPU_SIZES = {  # benchmarks/gpu at benchmarks/run_gpu.py's sizes (softmax: its own default)
    "matmul_vanilla": ["N=2048"], "matmul_unroll": ["N=2048"], "matmul_interchange": ["N=2048"],
    "stencil2d_vanilla": ["N=2048"], "stencil2d_unroll": ["N=2048"], "stencil2d_interchange": ["N=2048"],
    "reduction_vanilla": ["N=8192"], "reduction_unroll": ["N=8192"], "reduction_interchange": ["N=8192"],
    "stencil3d_ns": ["N=128"], "softmax": [],
}
MATMUL_N = 2048
PREVIOUS, DEFAULT, TUNED = "previous (flat, default block)", "default", "tuned"
PPCG = "ppcg (default options)"

# Configurations beside the previous and the default mapping, by the deepest kernel's mapped loops.
VARIANTS_2D = {
    "64x64 on 16x16, K16": CudaMapping(block=(16, 16), points=(4, 4), reduction_tile=16),
    "64x64 on 32x8, K16": CudaMapping(block=(32, 8), points=(2, 8), reduction_tile=16),
    "32x32 on 16x16, K32": CudaMapping(block=(16, 16), points=(2, 2), reduction_tile=32),
    "128x128 on 16x16, K8": CudaMapping(block=(16, 16), points=(8, 8), reduction_tile=8),
    "default, no shared": CudaMapping(block=(32, 8), points=(1, 4), shared=()),
    "default, no registers": CudaMapping(block=(32, 8), points=(1, 4), registers=False),
}
VARIANTS_1D = {
    "warp per row, 256 threads": CudaMapping(block=(256,), points=(1,), reduction="warp"),
    "warp per row, 128 threads, 2 rows per warp": CudaMapping(block=(128,), points=(2,), reduction="warp"),
    "128 threads": CudaMapping(block=(128,), points=(1,)),
    "64 threads": CudaMapping(block=(64,), points=(1,)),
    "256 threads, 2 points": CudaMapping(block=(256,), points=(2,)),
    "default, no registers": CudaMapping(block=(256,), points=(1,), registers=False),
}



def program_text(program, mapping: CudaMapping | None) -> str:
    """The whole file as CUDA with *mapping*, each region printing its kernel time and its whole time."""
    return cuda_program(program, OptimizeOptions(target="cuda"), mapping=mapping, timing=True)[0]


class Kernel:
    def __init__(self, name: str, args):
        self.name = name
        if name in GPU_SIZES:
            self.src = os.path.join(HERE, "gpu", name + ".c")
            self.includes: list[str] = []
            self.defines = [f"N={args.gpu_size}"] if args.gpu_size else list(GPU_SIZES[name])
            self.extra_sources: list[str] = []
        elif name in POLYBENCH:
            root = args.polybench
            d = os.path.join(root, POLYBENCH[name])
            self.src = os.path.join(d, os.path.basename(POLYBENCH[name]) + ".c")
            self.includes = [os.path.join(root, "utilities"), d]
            self.defines = [f"{args.dataset}_DATASET", "POLYBENCH_TIME", "POLYBENCH_DUMP_ARRAYS"]
            self.extra_sources = [os.path.join(root, "utilities", "polybench.c")]
        else:
            raise ValueError(f"unknown kernel {name} (benchmarks/gpu or {', '.join(POLYBENCH)})")
        self.program = analyze(self.src, includes=tuple(self.includes), defines=tuple(self.defines))
        self.dims = max(a.gpu.max_mapped for a in self.program.scops)
        self.tune_report: dict | None = None

    @property
    def checksummed(self) -> bool:
        return self.name in GPU_SIZES

    def variants(self, extra: bool) -> dict[str, CudaMapping | None]:
        out: dict[str, CudaMapping | None] = {PREVIOUS: CudaMapping(flat=True), DEFAULT: None}
        best = (self.tune_report or {}).get("best_build") or {}
        if "cuda_mapping" in best:
            out[TUNED] = CudaMapping(**{k: tuple(v) if isinstance(v, list) else v
                                        for k, v in best["cuda_mapping"].items()})
        if extra:
            out.update(VARIANTS_2D if self.dims >= 2 else VARIANTS_1D)
        return out

    def flags(self) -> list[str]:
        return [*(f"-I{d}" for d in self.includes), *(f"-D{d}" for d in self.defines)]

    def objects(self, work: str) -> list[str]:
        """The program's other sources (polybench.c), compiled once by gcc: they keep C linkage, as the CUDA
        output declares their functions extern "C" (polytune.linkage)."""
        out = []
        for src in self.extra_sources:
            obj = os.path.join(work, f"{self.name}_{os.path.basename(src)}.o")
            if not os.path.exists(obj):
                subprocess.run(["gcc", "-O3", "-march=native", *self.flags(), "-c", src, "-o", obj], check=True,
                               capture_output=True)
            out.append(obj)
        return out


def tune_kernel(kernel: Kernel, args, work: str) -> dict:
    """`polytune tune --target cuda` on the kernel's program (in its own process): the report's essentials."""
    rep = os.path.join(work, f"{kernel.name}_tune.json")
    cmd = [sys.executable, "-m", "polytune", "tune", kernel.src, *kernel.extra_sources, *kernel.flags(),
           "--target", "cuda", "--max-evals", str(args.tune_evals), "--runs", "3", "--no-cache", "--report", rep,
           "--jobs", str(args.tune_jobs),
           "-o", os.path.join(work, f"{kernel.name}_tuned.cu")]
    t0 = time.perf_counter()
    env = dict(os.environ, POLYTUNE_GPU_LOCK=os.path.join(work, "gpu.lock"),
               PYTHONPATH=os.path.dirname(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.tune_timeout)
    out: dict = {"command": " ".join(cmd), "wall_s": time.perf_counter() - t0, "exit": proc.returncode}
    if proc.returncode != 0 or not os.path.exists(rep):
        out["error"] = proc.stderr[-2000:]
        return out
    with open(rep) as f:
        r = json.load(f)
    names = [p["name"] for p in r["space"]]
    out.update(seed=dict(zip(names, r["seed"]["config"])) if r.get("seed") else None,
               best=dict(zip(names, r["best"]["config"])) if r.get("best") else None,
               seed_ms=1e3 * r["seed"]["median"] if r.get("seed") and r["seed"].get("median") else None,
               best_ms=1e3 * r["best"]["median"] if r.get("best") and r["best"].get("median") else None,
               evals=r["evals"], stop_reason=r["stop_reason"], program_gain=r.get("program_gain"),
               warnings=r.get("warnings", []), best_build=r.get("best_build"),
               errors={k: sum(1 for e in r["evaluations"] if e.get("error") == k)
                       for k in {e.get("error") for e in r["evaluations"]} if k})
    return out


def compile_variant(kernel: Kernel, label: str, mapping, work: str, arch: str) -> dict:
    row: dict = {"variant": label, "mapping": asdict(mapping) if mapping is not None else "default"}
    safe = re.sub(r"\W+", "_", f"{kernel.name}_{label}")
    cu, exe = os.path.join(work, safe + ".cu"), os.path.join(work, safe)
    t0 = time.perf_counter()
    try:
        text = program_text(kernel.program, mapping)
    except Exception as e:  # noqa: BLE001 - a row records what broke
        row["error"] = f"generation: {type(e).__name__}: {e}"
        return row
    row["generate_s"] = time.perf_counter() - t0
    with open(cu, "w") as f:
        f.write(text)
    cmd = ["nvcc", "-O3", f"-arch={arch}", "-Xptxas", "-v", "-Xcompiler", "-w", *kernel.flags(), cu,
           *kernel.objects(work), "-o", exe, "-lm"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    row["compile_s"] = time.perf_counter() - t0
    if proc.returncode != 0:
        row["error"] = "nvcc: " + proc.stderr[-2000:]
        return row
    row.update(ptxas_figures(proc.stderr), exe=exe)
    return row


def compile_ppcg(kernel: Kernel, pk, work: str, arch: str) -> dict:
    """PPCG's output for *kernel* (*pk*: benchmarks/ppcg/run.py's Kernel) as run.py builds its "ppcg, eager
    context, events" program, with *kernel*'s defines (POLYBENCH_DUMP_ARRAYS: the first round checks it like
    every row), and run.py's MINI dump check beside it where PPCG's output has MINI ("check_exe")."""
    row: dict = {"variant": PPCG, "mapping": "ppcg"}
    if not os.path.exists(pk.host):
        row["error"] = f"PPCG's output has no {pk.host}"
        return row
    sub = os.path.join(work, "ppcg")  # run.py's file names, apart from polytune's
    os.makedirs(sub, exist_ok=True)
    cmd, exe = next((c, e) for label, e, c in ppcg_run.timed_builds(pk, arch, kernel.defines, sub, ["-Xptxas", "-v"])
                    if label == ppcg_run.EVENTS)
    if isinstance(cmd, str):
        row["error"] = "ppcg: " + cmd
        return row
    t0 = time.perf_counter()
    rc, _out, err = ppcg_run.sh(cmd)
    row["compile_s"] = time.perf_counter() - t0
    if rc != 0:
        row["error"] = "nvcc: " + err[-2000:]
        return row
    row.update(ptxas_figures(err), exe=exe)
    mini = pk.at("MINI")
    if pk.dataset != "MINI" and os.path.exists(mini.host):
        builds = ppcg_run.check_builds(mini, arch, sub)
        failed = [f"{label}: {b['error'][-300:]}" for label, _, c in builds if "error" in (b := ppcg_run.build(c))]
        if failed:
            row["mini_check"] = "did not build: " + "; ".join(failed)
        else:
            row["check_exe"] = builds[0][1]
    return row


def ptxas_figures(stderr: str) -> dict:
    """Registers, shared memory and spills of the kernels nvcc -Xptxas -v reported."""
    entries = ptxas_entries(stderr)
    # a kernel is compiled twice, for 32- and 64-bit indices (polytune/emit/index_width.py): the figures are
    # the instance these sizes launch (32-bit), the 64-bit one's spills beside them
    run = [e for e in entries if e["index"] != "long" or not any(
        f["name"] == e["name"] and f["index"] == "int" for f in entries)]
    smem = [int(x) for x in re.findall(r"(\d+) bytes smem", stderr)]  # (the same in both instances)
    return dict(registers=max((e["registers"] for e in run), default=0), smem_bytes=max(smem, default=0),
                spill_bytes=max((e["spill"] for e in run), default=0),
                spill_bytes_64=max((e["spill"] for e in entries if e not in run), default=None))


def ptxas_entries(stderr: str) -> list[dict]:
    """ptxas -v's figures per kernel instance (polytune's parse_ptxas) with its name and index type (the
    kernel template's first argument, 'int' or 'long'; '' for other entries)."""
    out = []
    for mangled, figures in parse_ptxas(stderr).items():
        m = re.match(r"_Z(\d+)", mangled)
        name, rest = (mangled[m.end():m.end() + int(m.group(1))], mangled[m.end() + int(m.group(1)):]) \
            if m else (mangled, "")
        out.append({"name": name, "index": {"Ii": "int", "Il": "long"}.get(rest[:2], ""), **figures})
    return out


def run_once(exe: str, keep_output: bool) -> dict:
    proc = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}: {proc.stderr[-500:]}")
    kernel = [float(x) for x in re.findall(r"(?:polytune|ppcg)-kernel-ms: ([\d.eE+-]+)", proc.stderr)]
    region = [float(x) for x in re.findall(r"polytune-region-ms: ([\d.eE+-]+)", proc.stderr)]
    m = re.search(r"time: ([\d.eE+-]+)", proc.stdout) or re.search(r"^\s*([\d.]+(?:[eE][+-]?\d+)?)\s*$",
                                                                      proc.stdout, re.M)
    parts: dict[str, float] = {}  # the region's phases (allocation + copies in, kernels, copies out, frees)
    for m_ in re.finditer(r"polytune-region-parts-ms: in ([\d.eE+-]+) run ([\d.eE+-]+) out ([\d.eE+-]+) "
                          r"free ([\d.eE+-]+)", proc.stderr):
        for k, x in zip(("in", "run", "out", "free"), m_.groups()):
            parts[k] = parts.get(k, 0.0) + float(x)
    return {"kernel_ms": sum(kernel) if kernel else None, "region_ms": sum(region) if region else None,
            "parts_ms": parts or None,
            "program_s": float(m.group(1)) if m else None,
            "stdout": proc.stdout if keep_output else "", "stderr": proc.stderr if keep_output else ""}


def dump_values(stderr: str) -> list[float]:
    """The numbers PolyBench's POLYBENCH_DUMP_ARRAYS printed (between its begin/end dump markers)."""
    out: list[float] = []
    for block in re.findall(r"begin dump:.*?\n(.*?)end   dump", stderr, re.S):
        out += [float(x) for x in block.split()]
    return out


def verify(kernel: Kernel, stdout: str, stderr: str, reference) -> str:
    """'' when the variant's results match the reference (a CPU run, or the previous mapping's checksum)."""
    if kernel.checksummed:
        m = re.search(r"checksum: ([\d.eE+-]+)", stdout)
        if not m:
            return "no checksum"
        got = float(m.group(1))
        if reference is None:
            return ""
        return "" if abs(got - reference) <= 1e-4 * max(1.0, abs(reference)) else f"checksum {got} != {reference}"
    got = dump_values(stderr)
    if len(got) != len(reference) or not got:
        return f"{len(got)} values dumped, expected {len(reference)}"
    # PolyBench dumps with two decimals: a last-bit difference (fused multiply-adds) can move one by 0.01
    worst = max(abs(a - b) - 1e-6 * abs(b) for a, b in zip(got, reference))
    return "" if worst <= 0.0101 else f"difference {worst:.3g} beyond the dump's rounding"


def cpu_reference(kernel: Kernel, work: str) -> list[float]:
    exe = os.path.join(work, kernel.name + "_cpu")
    subprocess.run(["gcc", "-O3", "-march=native", *kernel.flags(), kernel.src, *kernel.extra_sources, "-o", exe,
                    "-lm"], check=True, capture_output=True)
    proc = subprocess.run([exe], capture_output=True, text=True, timeout=600, check=True)
    return dump_values(proc.stderr)


def torch_matmul_ms(n: int, reps: int) -> list[float]:
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    a = torch.rand(n, n, device="cuda", dtype=torch.float32)
    b = torch.rand(n, n, device="cuda", dtype=torch.float32)
    for _ in range(3):
        torch.matmul(a, b)
    out = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        torch.matmul(a, b)
        e1.record()
        e1.synchronize()
        out.append(e0.elapsed_time(e1))
    return out


def median(xs: list[float]) -> float | None:
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    k = len(xs) // 2
    return xs[k] if len(xs) % 2 else 0.5 * (xs[k - 1] + xs[k])


def _ratio(a, b) -> str:
    return f"{a / b:.2f}x" if a and b else ""


def table(result: dict) -> str:
    lines = ["| kernel | variant | kernel ms | vs previous | vs default | region ms | vs previous | vs default | "
             "program s | regs | smem | verified |", "|" + "---|" * 12]
    for k in result["kernels"]:
        rows = {r["variant"]: r for r in k["rows"]}
        prev, dflt = rows.get(PREVIOUS, {}), rows.get(DEFAULT, {})
        for r in k["rows"]:
            if "error" in r or "run_error" in r:
                lines.append(f"| {k['kernel']} | {r['variant']} | error: {(r.get('error') or r['run_error'])[:120]} |"
                             + " |" * 9)
                continue
            km, rm, pm = r.get("kernel_ms_median"), r.get("region_ms_median"), r.get("program_s_median")
            lines.append(f"| {k['kernel']} | {r['variant']} | {'' if km is None else f'{km:.4f}'} | "
                         f"{_ratio(prev.get('kernel_ms_median'), km)} | {_ratio(dflt.get('kernel_ms_median'), km)} | "
                         f"{'' if rm is None else f'{rm:.3f}'} | {_ratio(prev.get('region_ms_median'), rm)} | "
                         f"{_ratio(dflt.get('region_ms_median'), rm)} | {'' if pm is None else f'{pm:.4f}'} | "
                         f"{r.get('registers', '')} | {r.get('smem_bytes', '')} | {r.get('verified', '')}"
                         f"{', MINI ' + r['mini_check'] if 'mini_check' in r else ''} |")
        if k.get("torch_ms_median") and prev.get("kernel_ms_median"):
            lines.append(f"| {k['kernel']} | torch.matmul (fp32, TF32 off) | {k['torch_ms_median']:.4f} | "
                         f"{_ratio(prev['kernel_ms_median'], k['torch_ms_median'])} |" + " |" * 8)
    lines += ["", "| kernel | tuned config | evals | tuner's kernel gain | program gain (tune's check) | "
              "kernel gain here | region gain here | tune s |", "|" + "---|" * 8]
    for k in result["kernels"]:
        t = k.get("tune")
        if not t:
            continue
        if "error" in t:
            lines.append(f"| {k['kernel']} | tune failed: {t['error'][-150:]!r} |" + " |" * 6)
            continue
        rows = {r["variant"]: r for r in k["rows"]}
        dflt, tuned = rows.get(DEFAULT, {}), rows.get(TUNED, {})
        g = t.get("program_gain") or {}
        cfg = " ".join(f"{n}={v}" for n, v in (t.get("best") or {}).items())
        lines.append(f"| {k['kernel']} | {cfg} | {t['evals']} | {_ratio(t.get('seed_ms'), t.get('best_ms'))} | "
                     f"{_ratio(g.get('program_gain'), 1.0)} | "
                     f"{_ratio(dflt.get('kernel_ms_median'), tuned.get('kernel_ms_median'))} | "
                     f"{_ratio(dflt.get('region_ms_median'), tuned.get('region_ms_median'))} | {t['wall_s']:.0f} |")
    if result.get("vs_ppcg"):
        lines += ["", "| kernel | polytune row | kernel ms | PPCG kernel ms | vs PPCG (kernel) | program s | "
                  "PPCG program s | vs PPCG (program) |", "|" + "---|" * 8]
        v = result["vs_ppcg"]
        for name, e in v["kernels"].items():
            km, pkm, ps, pps = (e[x] for x in ("kernel_ms_polytune", "kernel_ms_ppcg", "program_s_polytune",
                                               "program_s_ppcg"))
            lines.append(f"| {name} | {e['polytune']} | " + " | ".join(
                ["" if x is None else f"{x:.4f}" for x in (km, pkm)] + [_ratio(pkm, km)]
                + ["" if x is None else f"{x:.4f}" for x in (ps, pps)] + [_ratio(pps, ps)]) + " |")
        lines.append(f"| geometric mean ({v['kernel_ms_geomean_of']} kernels) | | | | "
                     f"{_ratio(v['kernel_ms_geomean'], 1.0)} | | | {_ratio(v['program_s_geomean'], 1.0)} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="JSON file for the results")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    ap.add_argument("--kernels", default=",".join([*GPU_SIZES, *POLYBENCH]))
    ap.add_argument("--polybench", default=os.environ.get("POLYBENCH", "/work/polybench"))
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--dataset", default="LARGE", help="PolyBench's dataset (MINI ... EXTRALARGE)")
    ap.add_argument("--gpu-size", type=int, help="N of the benchmarks/gpu programs (default: run_gpu.py's sizes)")
    ap.add_argument("--extra", action="store_true", help="also the fixed configurations beside the three")
    ap.add_argument("--quick", action="store_true", help="(kept for old command lines: the same as the default)")
    ap.add_argument("--no-tune", action="store_true", help="previous and default only")
    ap.add_argument("--tune-evals", type=int, default=16, help="evaluations of each kernel's search")
    ap.add_argument("--tune-jobs", type=int, default=3, help="each search's compiles at once (tune --jobs; the "
                    "kernels' searches run at the same time)")
    ap.add_argument("--tune-timeout", type=float, default=420, help="seconds one kernel's search may take")
    ap.add_argument("--compile-only", action="store_true", help="generate and compile, run nothing")
    ap.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 1))
    ap.add_argument("--work", help="keep the generated files here (default: a temporary directory)")
    ap.add_argument("--ppcg", metavar="GEN", help="also PPCG's output: benchmarks/ppcg/prepare.sh's folder or "
                    "tarball (a variant of each PolyBench kernel in its manifest)")
    args = ap.parse_args()
    rounds = args.rounds
    work = args.work or tempfile.mkdtemp(prefix="polytune-cuda-mappings-")
    os.makedirs(work, exist_ok=True)
    t_start = time.perf_counter()
    result: dict = {"rounds": rounds, "arch": args.arch, "tune_evals": None if args.no_tune else args.tune_evals,
                    "kernels": []}
    kernels = []
    for name in args.kernels.split(","):
        try:
            kernels.append(Kernel(name, args))
        except Exception as e:  # noqa: BLE001
            result["kernels"].append({"kernel": name, "rows": [{"variant": "-", "error": f"{type(e).__name__}: {e}"}]})
    if not args.no_tune and not args.compile_only:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            reports = list(pool.map(lambda k: _safe_tune(k, args, work), kernels))
        for k, r in zip(kernels, reports):
            k.tune_report = r
        result["tune_wall_s"] = time.perf_counter() - t_start
        print(f"tuned {len(kernels)} kernels in {result['tune_wall_s']:.0f} s", file=sys.stderr, flush=True)
    for k in kernels:
        k.objects(work)
    jobs = [(k, label, m) for k in kernels for label, m in k.variants(args.extra).items()]
    if args.ppcg:
        jobs += [(k, PPCG, pk) for k, pk in ppcg_kernels(kernels, args, work, result)]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(lambda j: compile_ppcg(j[0], j[2], work, args.arch) if j[1] == PPCG
                             else compile_variant(j[0], j[1], j[2], work, args.arch), jobs))
    result["compile_wall_s"] = time.perf_counter() - t0
    print(f"compiled {len(rows)} variants in {result['compile_wall_s']:.1f} s", file=sys.stderr, flush=True)
    by_kernel: dict[str, list[dict]] = {}
    for (k, _, _), row in zip(jobs, rows):
        by_kernel.setdefault(k.name, []).append(row)
    if not args.compile_only:
        for row in (r for rows_ in by_kernel.values() for r in rows_ if "check_exe" in r):
            row["mini_check"] = ppcg_run.check(row["check_exe"]) or "ok"  # run.py's check, before the rounds
        _measure(kernels, by_kernel, rounds, work, result, t_start)
    for k in kernels:
        entry = {"kernel": k.name, "defines": k.defines, "mapped": k.dims,
                 "rows": [{x: v for x, v in r.items() if x not in ("exe", "check_exe")}
                          for r in by_kernel.get(k.name, [])]}
        if k.tune_report is not None:
            entry["tune"] = k.tune_report
        if k.name == "matmul_vanilla" and result.get("torch_matmul_ms"):
            entry["torch_ms_median"] = median(result["torch_matmul_ms"])
        result["kernels"].append(entry)
    result["wall_s"] = time.perf_counter() - t_start
    if args.ppcg and not args.compile_only:
        result["vs_ppcg"] = vs_ppcg(result)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(table(result))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    bad = [r for k in result["kernels"] for r in k["rows"] if "error" in r]
    return 1 if bad else 0


def ppcg_kernels(kernels: list[Kernel], args, work: str, result: dict) -> list[tuple[Kernel, ppcg_run.Kernel]]:
    """The PolyBench kernels of *kernels* that PPCG's output (--ppcg: a folder or its tarball) has, each with
    run.py's Kernel at --dataset; PPCG's version and arguments into *result*."""
    gen = ppcg_run.gen_folder(args.ppcg, work)
    with open(os.path.join(gen, "manifest.json")) as f:
        manifest = json.load(f)
    result["ppcg"] = {"gen": args.ppcg, **{k: manifest.get(k) for k in ("ppcg_version", "ppcg_args", "datasets")}}
    return [(k, ppcg_run.Kernel(k.name, manifest["kernels"][k.name], gen, os.path.abspath(args.polybench),
                                args.dataset))
            for k in kernels if k.name in POLYBENCH and k.name in manifest["kernels"]]


def vs_ppcg(result: dict) -> dict:
    """Per PolyBench kernel with a PPCG row: the speedup of tuned (the default where there is no tuned row)
    over PPCG in kernel and program time (PPCG's median / polytune's), and their geometric means."""
    out: dict = {"kernels": {}}
    for k in result["kernels"]:
        rows = {r["variant"]: r for r in k["rows"]}
        ppcg = rows.get(PPCG)
        ours = rows.get(TUNED) if rows.get(TUNED, {}).get("kernel_ms_median") else rows.get(DEFAULT)
        if not ppcg or not ours:
            continue
        entry = {"polytune": ours["variant"]}
        for key in ("kernel_ms", "program_s"):
            a, b = ppcg.get(f"{key}_median"), ours.get(f"{key}_median")
            entry[f"{key}_ppcg"], entry[f"{key}_polytune"] = a, b
            entry[f"{key}_speedup"] = a / b if a and b else None
        out["kernels"][k["kernel"]] = entry
    for key in ("kernel_ms", "program_s"):
        xs = [e[f"{key}_speedup"] for e in out["kernels"].values() if e[f"{key}_speedup"]]
        out[f"{key}_geomean"] = math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None
        out[f"{key}_geomean_of"] = len(xs)
    return out


def _safe_tune(kernel: Kernel, args, work: str) -> dict:
    try:
        return tune_kernel(kernel, args, work)
    except Exception as e:  # noqa: BLE001 - a failed search leaves the kernel without a tuned row
        return {"error": f"{type(e).__name__}: {e}", "wall_s": 0, "evals": 0}


def _measure(kernels: list[Kernel], by_kernel: dict, rounds: int, work: str, result: dict, t_start: float) -> None:
    """CPU references, then *rounds* interleaved rounds of every variant; medians into the rows."""
    interleaved_rounds(kernels, by_kernel, rounds, work, result, reference=lambda rows: rows[0], t_start=t_start)
    for rows_ in by_kernel.values():
        for row in rows_:
            for key in ("kernel_ms", "region_ms", "program_s"):
                row[f"{key}_median"] = median(row.get(key, []))


def interleaved_rounds(kernels: list[Kernel], by_kernel: dict, rounds: int, work: str, result: dict,
                       reference, keys: tuple[str, ...] = ("kernel_ms", "region_ms", "program_s"),
                       torch_every: int = 1, t_start: float | None = None) -> None:
    """The CPU references of the PolyBench kernels, then *rounds* rounds in which every variant (a row of
    *by_kernel* with an "exe") runs once, in the same order; each run's *keys* are appended to its row. The
    first round verifies each row: PolyBench dumps against the CPU's, benchmarks/gpu checksums against the
    row ``reference(rows)`` of the kernel. torch.matmul is timed beside matmul_vanilla every *torch_every*
    rounds (result["torch_matmul_ms"])."""
    refs: dict = {}
    for k in kernels:
        if not k.checksummed:
            try:
                refs[k.name] = cpu_reference(k, work)
            except Exception as e:  # noqa: BLE001
                refs[k.name] = None
                print(f"{k.name}: CPU reference failed: {e}", file=sys.stderr)
    torch_times: list[float] = []
    for rnd in range(rounds):
        for k in kernels:
            for row in by_kernel[k.name]:
                if "exe" not in row or "run_error" in row:
                    continue
                try:
                    r = run_once(row["exe"], keep_output=rnd == 0)
                except Exception as e:  # noqa: BLE001
                    row["run_error"] = str(e)
                    continue
                for key in keys:
                    row.setdefault(key, []).append(r[key])
                if rnd == 0:
                    if k.checksummed:
                        m = re.search(r"checksum: ([\d.eE+-]+)", r["stdout"])
                        if row is reference(by_kernel[k.name]) and m:
                            refs[k.name] = float(m.group(1))
                        row["verified"] = verify(k, r["stdout"], r["stderr"], refs.get(k.name)) or "ok"
                    else:
                        ref = refs.get(k.name)
                        row["verified"] = (verify(k, r["stdout"], r["stderr"], ref) or "ok") if ref else "no reference"
            if k.name == "matmul_vanilla" and rnd % torch_every == 0:
                try:
                    torch_times += torch_matmul_ms(MATMUL_N, 5)
                except Exception as e:  # noqa: BLE001
                    result["torch_error"] = str(e)
        at = f" at {time.perf_counter() - t_start:.0f} s" if t_start is not None else ""
        print(f"round {rnd + 1}/{rounds} done{at}", file=sys.stderr, flush=True)
    if torch_times:
        result["torch_matmul_ms"] = torch_times

if __name__ == "__main__":
    sys.exit(main())
