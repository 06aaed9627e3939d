#!/usr/bin/env python3
"""CUDA mappings side by side: the previous mapping (one point per thread, the default block), the new
default mapping (tiles of points per thread, registers, shared-memory tiles) and a few other
configurations, on matmul_vanilla (benchmarks/gpu, N=2048, with torch.matmul in float32, TF32 off) and
PolyBench/C 4.2.1 gemm, 2mm, atax, jacobi-2d and covariance (LARGE_DATASET).

Every variant is a whole program (the user's, with its region replaced), compiled once with nvcc; all
compiles run in parallel first. Then rounds: in each round every variant runs once, in the same order
(interleaved), and reports two times:
  - kernel time: CUDA events around the region's launches (`polytune-kernel-ms`, printed by the program);
  - program time: the region's time as the program's own run measures it (PolyBench's POLYBENCH_TIME,
    matmul_vanilla's `time:`): device allocation, copies, kernels and copies back. The CUDA context is
    created when the program starts (cuda_header's eager_context), not inside the region, so this one-time
    cost (~0.1-0.3 s) does not hide the differences between mappings.
The first round also verifies each variant: PolyBench arrays (POLYBENCH_DUMP_ARRAYS) against the CPU
program's within a relative tolerance, matmul's checksum against the previous mapping's.

    python3 benchmarks/cuda_mappings.py --out results.json [--quick] [--rounds 3] [--polybench DIR]
    python3 benchmarks/cuda_mappings.py --compile-only ...   # no GPU needed: generate and compile only

PolyBench is not part of this repository: --polybench names a copy of PolyBench/C 4.2.1 as distributed
(default: $POLYBENCH or /work/polybench); its files are only read.
"""
from __future__ import annotations

import argparse
import json
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

from polytune.emit.cuda import CudaMapping, cuda_header, generate_cuda_region, resource_problem  # noqa: E402
from polytune.pipeline import _guarded, _indent_of, analyze, gpu_prefix, splice  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
POLYBENCH = {  # name -> directory under PolyBench's root
    "gemm": "linear-algebra/blas/gemm", "2mm": "linear-algebra/kernels/2mm", "atax": "linear-algebra/kernels/atax",
    "jacobi-2d": "stencils/jacobi-2d", "covariance": "datamining/covariance",
}
MATMUL_N = 2048

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
QUICK_2D = ("64x64 on 16x16, K16",)
QUICK_1D = ("warp per row, 256 threads",)


def program_text(program, mapping: CudaMapping | None) -> str:
    """The whole file as CUDA with *mapping*, the region's kernel time printed (as pipeline.generate_cuda)."""
    p = gpu_prefix(program)
    regions = [generate_cuda_region(a.scop, a.gpu, indent=_indent_of(program.text, a.scop.begin_line), prefix=p,
                                    scop_index=k, mapping=mapping, deps=a.deps, timing=True)
               for k, a in enumerate(program.scops)]
    problems = [resource_problem(r) for r in regions]
    if any(problems):
        raise ValueError("; ".join(x for x in problems if x))
    head = cuda_header(p, eager_context=True) + "\n".join(r.kernels for r in regions)
    reps = [(a.scop.begin_line, a.scop.end_line, _guarded(program, k, r.host))
            for k, (a, r) in enumerate(zip(program.scops, regions))]
    return head + "\n" + splice(program.text, reps)


class Kernel:
    def __init__(self, name: str, args):
        self.name = name
        if name == "matmul_vanilla":
            self.src = os.path.join(HERE, "gpu", "matmul_vanilla.c")
            self.includes: list[str] = []
            self.defines = [f"N={MATMUL_N}"]
            self.extra_sources: list[str] = []
        else:
            root = args.polybench
            d = os.path.join(root, POLYBENCH[name])
            self.src = os.path.join(d, os.path.basename(POLYBENCH[name]) + ".c")
            self.includes = [os.path.join(root, "utilities"), d]
            self.defines = ["LARGE_DATASET", "POLYBENCH_TIME", "POLYBENCH_DUMP_ARRAYS"]
            self.extra_sources = [os.path.join(root, "utilities", "polybench.c")]
        self.program = analyze(self.src, includes=tuple(self.includes), defines=tuple(self.defines))
        self.dims = max(a.gpu.max_mapped for a in self.program.scops)

    def variants(self, quick: bool) -> dict[str, CudaMapping | None]:
        out: dict[str, CudaMapping | None] = {"previous (flat, default block)": CudaMapping(flat=True),
                                              "new default": None}
        extra, pick = (VARIANTS_2D, QUICK_2D) if self.dims >= 2 else (VARIANTS_1D, QUICK_1D)
        out.update({k: v for k, v in extra.items() if not quick or k in pick})
        return out

    def flags(self) -> list[str]:
        return [*(f"-I{d}" for d in self.includes), *(f"-D{d}" for d in self.defines)]


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
    cmd = ["nvcc", "-O3", f"-arch={arch}", "-Xptxas", "-v", "-Xcompiler", "-w", *kernel.flags(), "-x", "cu", cu,
           *kernel.extra_sources, "-o", exe, "-lm"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    row["compile_s"] = time.perf_counter() - t0
    if proc.returncode != 0:
        row["error"] = "nvcc: " + proc.stderr[-2000:]
        return row
    regs = [int(x) for x in re.findall(r"Used (\d+) registers", proc.stderr)]
    smem = [int(x) for x in re.findall(r"(\d+) bytes smem", proc.stderr)]
    spill = [int(a) + int(b) for a, b in re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", proc.stderr)]
    row.update(registers=max(regs, default=0), smem_bytes=max(smem, default=0), spill_bytes=max(spill, default=0))
    row["exe"] = exe
    return row


def run_once(exe: str, keep_output: bool) -> tuple[float | None, float | None, str, str]:
    proc = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}: {proc.stderr[-500:]}")
    kernel = [float(x) for x in re.findall(r"polytune-kernel-ms: ([\d.eE+-]+)", proc.stderr)]
    m = re.search(r"time: ([\d.eE+-]+)", proc.stdout) or re.search(r"^\s*([\d.]+(?:[eE][+-]?\d+)?)\s*$",
                                                                      proc.stdout, re.M)
    program = float(m.group(1)) if m else None
    return (sum(kernel) if kernel else None, program, proc.stdout if keep_output else "",
            proc.stderr if keep_output else "")


def dump_values(stderr: str) -> list[float]:
    """The numbers PolyBench's POLYBENCH_DUMP_ARRAYS printed (between its begin/end dump markers)."""
    out: list[float] = []
    for block in re.findall(r"begin dump:.*?\n(.*?)end   dump", stderr, re.S):
        out += [float(x) for x in block.split()]
    return out


def verify(kernel: Kernel, stdout: str, stderr: str, reference) -> str:
    """'' when the variant's results match the reference (a CPU run, or the previous mapping's checksum)."""
    if kernel.name == "matmul_vanilla":
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


def table(result: dict) -> str:
    lines = ["| kernel | variant | kernel ms (median) | vs previous | program s (median) | vs previous | "
             "regs | smem | verified |", "|" + "---|" * 9]
    for k in result["kernels"]:
        prev = k["rows"][0]
        for r in k["rows"]:
            if "error" in r:
                lines.append(f"| {k['kernel']} | {r['variant']} | error: {r['error'][:120]} |" + " |" * 6)
                continue
            km, pm = r.get("kernel_ms_median"), r.get("program_s_median")
            pk, pp = prev.get("kernel_ms_median"), prev.get("program_s_median")
            lines.append(f"| {k['kernel']} | {r['variant']} | {km if km is None else f'{km:.4f}'} | "
                         f"{f'{pk / km:.2f}x' if km and pk else ''} | {pm if pm is None else f'{pm:.4f}'} | "
                         f"{f'{pp / pm:.2f}x' if pm and pp else ''} | {r.get('registers', '')} | "
                         f"{r.get('smem_bytes', '')} | {r.get('verified', '')} |")
        if "torch_ms_median" in k:
            lines.append(f"| {k['kernel']} | torch.matmul (fp32, TF32 off) | {k['torch_ms_median']:.4f} | "
                         f"{prev['kernel_ms_median'] / k['torch_ms_median']:.2f}x | | | | | |"
                         if prev.get("kernel_ms_median") else f"| {k['kernel']} | torch | {k['torch_ms_median']:.4f} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="JSON file for the results")
    ap.add_argument("--quick", action="store_true", help="fewer variants and rounds (a smoke run)")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 3, quick 2)")
    ap.add_argument("--kernels", default="matmul_vanilla," + ",".join(POLYBENCH))
    ap.add_argument("--polybench", default=os.environ.get("POLYBENCH", "/work/polybench"))
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--compile-only", action="store_true", help="generate and compile, run nothing")
    ap.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 1))
    ap.add_argument("--work", help="keep the generated files here (default: a temporary directory)")
    args = ap.parse_args()
    rounds = args.rounds or (2 if args.quick else 3)
    work = args.work or tempfile.mkdtemp(prefix="polytune-cuda-mappings-")
    os.makedirs(work, exist_ok=True)
    t_start = time.perf_counter()
    result: dict = {"rounds": rounds, "quick": args.quick, "arch": args.arch, "kernels": []}
    kernels = []
    for name in args.kernels.split(","):
        try:
            kernels.append(Kernel(name, args))
        except Exception as e:  # noqa: BLE001
            result["kernels"].append({"kernel": name, "rows": [{"variant": "-", "error": f"{type(e).__name__}: {e}"}]})
    jobs = [(k, label, m) for k in kernels for label, m in k.variants(args.quick).items()]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(lambda j: compile_variant(j[0], j[1], j[2], work, args.arch), jobs))
    result["compile_wall_s"] = time.perf_counter() - t_start
    print(f"compiled {len(rows)} variants in {result['compile_wall_s']:.1f} s", file=sys.stderr, flush=True)
    by_kernel: dict[str, list[dict]] = {}
    for (k, _, _), row in zip(jobs, rows):
        by_kernel.setdefault(k.name, []).append(row)
    if not args.compile_only:
        refs = {}
        for k in kernels:
            if k.name != "matmul_vanilla":
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
                        km, ps, out, err = run_once(row["exe"], keep_output=rnd == 0)
                    except Exception as e:  # noqa: BLE001
                        row["run_error"] = str(e)
                        continue
                    row.setdefault("kernel_ms", []).append(km)
                    row.setdefault("program_s", []).append(ps)
                    if rnd == 0:
                        if k.name == "matmul_vanilla":
                            m = re.search(r"checksum: ([\d.eE+-]+)", out)
                            if row is by_kernel[k.name][0] and m:
                                refs[k.name] = float(m.group(1))
                            row["verified"] = verify(k, out, err, refs.get(k.name)) or "ok"
                        else:
                            ref = refs.get(k.name)
                            row["verified"] = (verify(k, out, err, ref) or "ok") if ref else "no reference"
                if k.name == "matmul_vanilla":
                    try:
                        torch_times += torch_matmul_ms(MATMUL_N, 5)
                    except Exception as e:  # noqa: BLE001
                        result["torch_error"] = str(e)
            print(f"round {rnd + 1}/{rounds} done at {time.perf_counter() - t_start:.0f} s", file=sys.stderr,
                  flush=True)
        for rows_ in by_kernel.values():
            for row in rows_:
                row["kernel_ms_median"] = median(row.get("kernel_ms", []))
                row["program_s_median"] = median(row.get("program_s", []))
        if torch_times:
            result["torch_matmul_ms"] = torch_times
    for k in kernels:
        entry = {"kernel": k.name, "defines": k.defines, "mapped": k.dims,
                 "rows": [{x: v for x, v in r.items() if x != "exe"} for r in by_kernel[k.name]]}
        if k.name == "matmul_vanilla" and result.get("torch_matmul_ms"):
            entry["torch_ms_median"] = median(result["torch_matmul_ms"])
        result["kernels"].append(entry)
    result["wall_s"] = time.perf_counter() - t_start
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(table(result))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    bad = [r for k in result["kernels"] for r in k["rows"] if "error" in r]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
