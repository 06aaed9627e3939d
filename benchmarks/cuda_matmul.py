#!/usr/bin/env python3
"""CUDA matrix products, old code against new, in one device call: matmul_vanilla (benchmarks/gpu, N=2048,
float32, beside torch.matmul with TF32 off) and PolyBench/C 4.2.1 gemm and 2mm (LARGE_DATASET, double).

Variants per kernel (each a whole program: the user's, its region replaced, timing on):
  - "default": the default mapping (128x128 tiles on a 16x16 block, 8x8 points, strips of 8, full tiles
    unchecked, where a 2-D kernel stages a long reduction);
  - "old default": the previous default, 32x32 tiles on a 32x8 block, 1x4 points, strips of 32, every point
    checked (CudaMapping.full_tiles=False prints exactly the code generated before the full-tile split);
  - "old 128x128": the default's shape with the previous code (every point checked);
  - fixed shapes with the new code (FIXED).
Rounds: every variant runs once per round, interleaved, and reports its kernel time (CUDA events around the
region's launches), its region time (the program's host clock around allocation, copies, kernels, copies
back, with the time of each phase: allocation and copies in, kernels, copies out, frees: where the region's
time varies) and its program time (the program's own timer). The first round verifies: matmul checksums against
the old default's, PolyBench dumps against the CPU program's. The compile step records ptxas' registers
and spills per variant.

Per kernel, beside the medians: the kernel's share of the region, and for "default" against "old default"
the kernel gain, the program (region) gain with a 95% interval (Welch, on the logarithms of the region
times), the program gain the kernel gain predicts (region time with the kernel time swapped), and whether
the measured gain holds within 3% of the predicted one (measure.cuda.gain_check).

    python3 benchmarks/cuda_matmul.py --out results.json [--rounds 7] [--kernels matmul_vanilla,gemm,2mm]
    python3 benchmarks/cuda_matmul.py --compile-only --out x.json      # no GPU: generate and compile only

CUDA_MODULE_LOADING=EAGER is set for the runs: the kernels' module loads with the context, at program start
(the timed programs make their context before main), not at the first launch inside the region.
"""
from __future__ import annotations

import argparse
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

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cuda_mappings import (  # noqa: E402
    Kernel,
    compile_variant,
    interleaved_rounds,
    median,
)

from polytune.emit.cuda import CudaMapping  # noqa: E402
from polytune.measure.cuda import gain_check  # noqa: E402

DEFAULT, OLD = "default", "old default"
VARIANTS: dict[str, CudaMapping | None] = {
    DEFAULT: None,
    OLD: CudaMapping(block=(32, 8), points=(1, 4), reduction_tile=32, full_tiles=False),
    "old 128x128 on 16x16, K8": CudaMapping(block=(16, 16), points=(8, 8), reduction_tile=8, full_tiles=False),
}
FIXED = {  # the new code at other shapes ("32x32 on 32x8, K32": the old default's shape, to tell code from shape)
    "default, 2 blocks/SM": CudaMapping(block=(16, 16), points=(8, 8), reduction_tile=8, min_blocks=2),
    "64x128 on 16x16, K8": CudaMapping(block=(16, 16), points=(4, 8), reduction_tile=8),
    "64x64 on 16x16, K16": CudaMapping(block=(16, 16), points=(4, 4), reduction_tile=16),
    "64x64 on 16x16, K8, 2 blocks/SM": CudaMapping(block=(16, 16), points=(4, 4), reduction_tile=8, min_blocks=2),
    "32x32 on 32x8, K32": CudaMapping(block=(32, 8), points=(1, 4), reduction_tile=32),
}


def sass_mix(exe: str) -> dict:
    """Per kernel of *exe* (cuobjdump -sass, where installed): the SASS instructions between its first two
    barriers (the staged strip's work in a tiled kernel) and the share of fused multiply-adds among them."""
    tool = shutil.which("cuobjdump")
    if tool is None:
        return {}
    proc = subprocess.run([tool, "-sass", exe], capture_output=True, text=True)
    out: dict = {}
    for chunk in re.split(r"\n\s*Function : ", proc.stdout)[1:]:
        name = chunk.split("\n", 1)[0].strip()
        ops = re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[0-9T] )?([A-Z0-9]+)", chunk)
        bars = [k for k, op in enumerate(ops) if op == "BAR"]
        if len(bars) < 2:
            continue
        body = ops[bars[0]:bars[1] + 1]
        fma = sum(op in ("FFMA", "DFMA") for op in body)
        out[name] = {"instructions": len(body), "fma": fma, "fma_share": fma / len(body),
                     "lds": sum(op == "LDS" for op in body), "kernel_instructions": len(ops)}
    return out


def _args_for_kernel(args) -> argparse.Namespace:
    return argparse.Namespace(polybench=args.polybench, dataset=args.dataset, gpu_size=args.gpu_size)


def measure(kernels: list[Kernel], rows: dict[str, list[dict]], rounds: int, result: dict) -> None:
    """Interleaved rounds (cuda_mappings.interleaved_rounds): checksums against the old default's, the
    region's phases kept, torch.matmul every other round."""
    interleaved_rounds(kernels, rows, rounds, result["work"], result,
                       reference=lambda rows_: next((r for r in rows_ if r["variant"] == OLD), None),
                       keys=("kernel_ms", "region_ms", "program_s", "parts_ms"), torch_every=2)
    if result.get("torch_matmul_ms"):
        result["torch_matmul_ms_median"] = median(result["torch_matmul_ms"])

def summarize(k: Kernel, rows: list[dict]) -> dict:
    by = {r["variant"]: r for r in rows}
    for r in rows:
        for key in ("kernel_ms", "region_ms", "program_s"):
            r[f"{key}_median"] = median(r.get(key, []))
        km, rm = r.get("kernel_ms_median"), r.get("region_ms_median")
        r["kernel_share"] = km / rm if km and rm else None
        # where the region's time varies: per phase, the median and the spread (max - min) over the rounds
        parts = [x for x in r.get("parts_ms", []) if x]
        r["parts_summary"] = {ph: {"median": median([x[ph] for x in parts]),
                                   "spread": max(x[ph] for x in parts) - min(x[ph] for x in parts)}
                              for ph in ("in", "run", "out", "free")} if parts else None
    out: dict = {}
    new, old = by.get(DEFAULT, {}), by.get(OLD, {})
    if new.get("region_ms") and old.get("region_ms"):
        out = gain_check(old["kernel_ms"], new["kernel_ms"], old["region_ms"], new["region_ms"])
    return out


def _fma(row: dict) -> str:
    return ", ".join(f"{v['fma']}/{v['instructions']} ({100 * v['fma_share']:.0f}%)"
                     for v in (row.get("sass") or {}).values())


def table(result: dict) -> str:
    lines = ["| kernel | variant | kernel ms | vs old default | region ms | kernel share | regs | spill B | "
             "FMA share between barriers | verified |", "|" + "---|" * 10]
    for k in result["kernels"]:
        by = {r["variant"]: r for r in k["rows"]}
        old = by.get(OLD, {}).get("kernel_ms_median")
        for r in k["rows"]:
            if "error" in r or "run_error" in r:
                lines.append(f"| {k['kernel']} | {r['variant']} | error: {(r.get('error') or r['run_error'])[:100]} |"
                             + " |" * 7)
                continue
            km, rm, sh = r.get("kernel_ms_median"), r.get("region_ms_median"), r.get("kernel_share")
            lines.append(f"| {k['kernel']} | {r['variant']} | {'' if km is None else f'{km:.4f}'} | "
                         f"{f'{old / km:.2f}x' if old and km else ''} | {'' if rm is None else f'{rm:.2f}'} | "
                         f"{'' if sh is None else f'{100 * sh:.1f}%'} | {r.get('registers', '')} | "
                         f"{r.get('spill_bytes', '')} | {_fma(r)} | {r.get('verified', '')} |")
        if k["kernel"] == "matmul_vanilla" and result.get("torch_matmul_ms_median"):
            t = result["torch_matmul_ms_median"]
            d = by.get(DEFAULT, {}).get("kernel_ms_median")
            lines.append(f"| matmul_vanilla | torch.matmul (fp32, TF32 off) | {t:.4f} | "
                         f"{f'default at {t / d:.2f}x of torch' if d else ''} |" + " |" * 6)
    lines += ["", "| kernel | variant | region ms: allocation + copies in | kernels | copies out | frees "
              "(median, spread over the rounds) |", "|---|---|---|---|---|---|"]
    for k in result["kernels"]:
        for r in k["rows"]:
            ps = r.get("parts_summary")
            if ps:
                lines.append(f"| {k['kernel']} | {r['variant']} | " + " | ".join(
                    f"{ps[ph]['median']:.2f} ({ps[ph]['spread']:.2f})" for ph in ("in", "run", "out", "free")) + " |")
    lines += ["", "| kernel | kernel gain | program gain (95% interval) | predicted program gain | holds within 3% |",
              "|---|---|---|---|---|"]
    for k in result["kernels"]:
        g = k.get("gain")
        if not g:
            continue
        lines.append(f"| {k['kernel']} | {g['kernel_gain']:.3f}x | {g['program_gain']:.3f}x "
                     f"({g['program_gain_low']:.3f}-{g['program_gain_high']:.3f}) | {g['predicted_gain']:.3f}x | "
                     f"{g['verdict']} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--kernels", default="matmul_vanilla,gemm,2mm")
    ap.add_argument("--polybench", default=os.environ.get("POLYBENCH", "/work/polybench"))
    ap.add_argument("--dataset", default="LARGE")
    ap.add_argument("--gpu-size", type=int, help="N of matmul_vanilla (default 2048)")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--no-fixed", action="store_true", help="only the default and the two old codes")
    ap.add_argument("--compile-only", action="store_true")
    ap.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 1))
    ap.add_argument("--work", help="keep the generated files here")
    args = ap.parse_args()
    os.environ["CUDA_MODULE_LOADING"] = "EAGER"
    work = args.work or tempfile.mkdtemp(prefix="polytune-cuda-matmul-")
    os.makedirs(work, exist_ok=True)
    t0 = time.perf_counter()
    result: dict = {"rounds": args.rounds, "arch": args.arch, "work": work, "kernels": []}
    kernels = [Kernel(name, _args_for_kernel(args)) for name in args.kernels.split(",")]
    for k in kernels:
        k.objects(work)
    variants = dict(VARIANTS) if args.no_fixed else {**VARIANTS, **FIXED}
    jobs = [(k, label, m) for k in kernels for label, m in variants.items()]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        compiled = list(pool.map(lambda j: compile_variant(j[0], j[1], j[2], work, args.arch), jobs))
    result["compile_wall_s"] = time.perf_counter() - t0
    print(f"compiled {len(compiled)} variants in {result['compile_wall_s']:.0f} s", file=sys.stderr, flush=True)
    rows: dict[str, list[dict]] = {}
    for (k, _, _), row in zip(jobs, compiled):
        rows.setdefault(k.name, []).append(row)
        if "exe" in row:
            row["sass"] = sass_mix(row["exe"])
    if not args.compile_only:
        measure(kernels, rows, args.rounds, result)
    for k in kernels:
        entry = {"kernel": k.name, "defines": k.defines, "rows": rows[k.name]}
        if not args.compile_only:
            entry["gain"] = summarize(k, rows[k.name])
        for r in entry["rows"]:
            r.pop("exe", None)
        result["kernels"].append(entry)
    result["wall_s"] = time.perf_counter() - t0
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2, default=lambda x: None if isinstance(x, float) and math.isnan(x) else x)
    print(table(result))
    return 1 if any("error" in r for k in result["kernels"] for r in k["rows"]) else 0


if __name__ == "__main__":
    sys.exit(main())
