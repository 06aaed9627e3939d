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

Program rounds (--program-rounds, after the rounds above): only "default" and "old default" of each
kernel, in turns (ABBA order), until --program-rounds are done or --stop-after-s have passed since the
start. Their region times vary by 2-5 ms between runs (copies of pageable memory) where the kernels are
3-26% of the region, so 5 rounds gave intervals of +-12%; a program run costs ~0.5-1 s of wall time
(the process and its CUDA context), which is why the rounds are bounded by time.

Per kernel, beside the medians: the kernel's share of the region, and for "default" against "old default"
(from the program rounds, or the rounds above where none ran) the kernel gain, the program (region) gain
measured (the geometric mean of the rounds' old/default region ratios, with a 95% interval from Student's
t on their logarithms), the program gain the kernel gain predicts (the old default's median region with
its median kernel time swapped for the default's; its own noise moves it by the kernel share times the
region's, negligible), and the verdict of benchmarks/verdicts.py's rule on measured / predicted with a 3%
tolerance: "undecided" where the 95% interval is wider than +-3% (with the rounds that would narrow it
to 3% at the measured spread), else "holds" where measured / predicted is within 3% of 1, "does not
hold" where not.

    python3 benchmarks/cuda_matmul.py --out results.json [--rounds 5] [--kernels matmul_vanilla,gemm,2mm]
    python3 benchmarks/cuda_matmul.py --variants all --program-rounds 0 ...  # the whole table of shapes
    python3 benchmarks/cuda_matmul.py --compile-only --out x.json      # no GPU: generate and compile only

Time on the H200 (--jobs 6): ~1 s a program run; compiles ~2 s a variant at 6 at once; the default
(3 variants per kernel, 5 rounds, program rounds until 135 s) ends before ~150 s. --variants all: 24
variants, ~190 s for 5 rounds alone.

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
    run_once,
)
from verdicts import decide, paired_ratio, verdict_text  # noqa: E402

from polytune.emit.cuda import CudaMapping  # noqa: E402

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
    # around the fastest (128x128, 2 blocks/SM): other strips, half tiles, 512 threads
    "default, K16, 2 blocks/SM": CudaMapping(block=(16, 16), points=(8, 8), reduction_tile=16, min_blocks=2),
    "default, K4, 2 blocks/SM": CudaMapping(block=(16, 16), points=(8, 8), reduction_tile=4, min_blocks=2),
    "128x64 on 16x16, K8, 2 blocks/SM": CudaMapping(block=(16, 16), points=(8, 4), reduction_tile=8, min_blocks=2),
    "128x64 on 16x16, K16, 2 blocks/SM": CudaMapping(block=(16, 16), points=(8, 4), reduction_tile=16,
                                                     min_blocks=2),
    "64x128 on 16x16, K16, 2 blocks/SM": CudaMapping(block=(16, 16), points=(4, 8), reduction_tile=16,
                                                     min_blocks=2),
    "128x128 on 32x16, K8": CudaMapping(block=(32, 16), points=(4, 8), reduction_tile=8),
    "128x128 on 32x16, K16": CudaMapping(block=(32, 16), points=(4, 8), reduction_tile=16),
    # a thread's 8 columns in two runs of 4 adjacent ones (CudaMapping.vector): vector loads from the staged B
    "default, 2 blocks/SM, runs of 4": CudaMapping(block=(16, 16), points=(8, 8), reduction_tile=8, min_blocks=2,
                                                   vector=4),
    "default, K16, 2 blocks/SM, runs of 4": CudaMapping(block=(16, 16), points=(8, 8), reduction_tile=16,
                                                        min_blocks=2, vector=4),
    "default, K32, 2 blocks/SM, runs of 4": CudaMapping(block=(16, 16), points=(8, 8), reduction_tile=32,
                                                        min_blocks=2, vector=4),
    "128x128 on 32x16, K16, runs of 4": CudaMapping(block=(32, 16), points=(4, 8), reduction_tile=16, vector=4),
    "128x128 on 32x16, K32, runs of 4": CudaMapping(block=(32, 16), points=(4, 8), reduction_tile=32, vector=4),
    "128x128 on 32x16, K8, runs of 4": CudaMapping(block=(32, 16), points=(4, 8), reduction_tile=8, vector=4),
}
DEFAULT_VARIANTS = tuple(VARIANTS)  # --variants' default: the default and the two old codes
TOLERANCE = 0.03  # the program gain should be the predicted one within 3%


def parse_variants(text: str) -> list[str]:
    """--variants: labels of VARIANTS and FIXED separated by commas (a label may hold a comma itself: the
    longest label that matches wins), or "all"."""
    known = {**VARIANTS, **FIXED}
    if text.strip() == "all":
        return list(known)
    parts, out, i = text.split(","), [], 0
    while i < len(parts):
        for j in range(len(parts), i, -1):
            label = ",".join(parts[i:j]).strip()
            if label in known:
                out.append(label)
                i = j
                break
        else:
            raise SystemExit(f"cuda_matmul.py: unknown variant {parts[i].strip()!r} (known: {'; '.join(known)})")
    return out


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

def program_rounds(kernels: list[Kernel], rows: dict[str, list[dict]], rounds: int, stop_at: float,
                   result: dict) -> None:
    """The program rounds (module doc): "old default" and "default" of each kernel in turns, ABBA order, a
    round's pair kept only where both runs succeeded (so round i of the one pairs with round i of the
    other); no round starts after the clock passes *stop_at* (time.perf_counter)."""
    took: list[float] = []
    for rnd in range(rounds):
        if time.perf_counter() >= stop_at:
            break
        t0 = time.perf_counter()
        for k in kernels:
            by = {r["variant"]: r for r in rows[k.name]}
            pair = [by.get(OLD), by.get(DEFAULT)]
            if any(r is None or "exe" not in r or "run_error" in r for r in pair):
                continue
            got = {}
            for row in (pair if rnd % 2 == 0 else pair[::-1]):
                try:
                    got[row["variant"]] = run_once(row["exe"], keep_output=False)
                except Exception as e:  # noqa: BLE001 - the row records what broke; its pair stops
                    row["run_error"] = str(e)
                    break
            if len(got) == 2:
                for row in pair:
                    row.setdefault("program_kernel_ms", []).append(got[row["variant"]]["kernel_ms"])
                    row.setdefault("program_region_ms", []).append(got[row["variant"]]["region_ms"])
        took.append(round(time.perf_counter() - t0, 2))
        print(f"program round {rnd + 1}/{rounds} done ({took[-1]:.1f} s)", file=sys.stderr, flush=True)
    result["program_rounds_done"], result["program_round_s"] = len(took), took


def program_verdict(old_kernel: list[float], new_kernel: list[float], old_region: list[float],
                    new_region: list[float], tolerance: float = TOLERANCE) -> dict:
    """The default's program gain over the old default's, from paired rounds (ms): measured against
    predicted, with the module doc's rule (benchmarks/verdicts.py)."""
    ok_, nk, orr = median(old_kernel), median(new_kernel), median(old_region)
    out: dict = {"kernel_gain": ok_ / nk if ok_ and nk else None, "kernel_share": ok_ / orr if ok_ and orr else None,
                 "predicted_gain": orr / (orr - ok_ + nk) if ok_ and nk and orr and orr - ok_ + nk > 0 else None}
    g = paired_ratio(old_region, new_region)
    out.update(program_gain=g["ratio"], program_gain_low=g["low"], program_gain_high=g["high"], rounds=g["rounds"])
    pred = out["predicted_gain"]
    if g["low"] is None or not pred:
        out.update(verdict="undecided", resolution=None, rounds_needed=None)
        return out
    q = (g["low"] / pred, g["ratio"] / pred, g["high"] / pred)
    out["measured_over_predicted"] = q
    out.update(decide(q[1], q[0], q[2], tolerance, g["rounds"]))
    return out


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
    new, old = by.get(DEFAULT, {}), by.get(OLD, {})
    if len(new.get("program_region_ms", [])) >= 2:
        out = program_verdict(old["program_kernel_ms"], new["program_kernel_ms"], old["program_region_ms"],
                              new["program_region_ms"])
        out["source"] = "program rounds"
    elif new.get("region_ms") and old.get("region_ms"):
        out = program_verdict(old["kernel_ms"], new["kernel_ms"], old["region_ms"], new["region_ms"])
        out["source"] = "rounds"
    else:
        out = {}
    return out


def _fma(row: dict) -> str:
    return ", ".join(f"{v['fma']}/{v['instructions']} ({100 * v['fma_share']:.0f}%)"
                     for v in (row.get("sass") or {}).values())


def _x(v) -> str:
    return f"{v:.3f}x" if v else "-"


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
    lines += ["", "| kernel | kernel gain | program gain (95% interval) | predicted program gain | measured / "
              "predicted (95%) | rounds | holds within 3% |", "|---|---|---|---|---|---|---|"]
    for k in result["kernels"]:
        g = k.get("gain")
        if not g or g.get("program_gain_low") is None:
            continue
        q = g.get("measured_over_predicted")
        verdict = verdict_text(g)
        lines.append(f"| {k['kernel']} | {_x(g['kernel_gain'])} | {_x(g['program_gain'])} "
                     f"({g['program_gain_low']:.3f}-{g['program_gain_high']:.3f}) | {_x(g['predicted_gain'])} | "
                     f"{f'{q[1]:.3f} ({q[0]:.3f}-{q[2]:.3f})' if q else '-'} | {g['rounds']} ({g.get('source', '')}) "
                     f"| {verdict} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds of every variant")
    ap.add_argument("--variants", default=",".join(DEFAULT_VARIANTS), help="labels, comma-separated, or 'all' "
                    f"(known: {'; '.join([*VARIANTS, *FIXED])}; default: {'; '.join(DEFAULT_VARIANTS)})")
    ap.add_argument("--program-rounds", type=int, default=60, help="program rounds of the default and the old "
                    "default after --rounds (0: none; the verdict then uses --rounds)")
    ap.add_argument("--stop-after-s", type=float, default=135.0, help="no program round starts after this many "
                    "seconds since the start")
    ap.add_argument("--kernels", default="matmul_vanilla,gemm,2mm")
    ap.add_argument("--polybench", default=os.environ.get("POLYBENCH", "/work/polybench"))
    ap.add_argument("--dataset", default="LARGE")
    ap.add_argument("--gpu-size", type=int, help="N of matmul_vanilla (default 2048)")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--no-fixed", action="store_true", help="(old command lines: the default --variants)")
    ap.add_argument("--compile-only", action="store_true")
    ap.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 1))
    ap.add_argument("--work", help="keep the generated files here")
    args = ap.parse_args(argv)
    labels = list(DEFAULT_VARIANTS) if args.no_fixed else parse_variants(args.variants)
    os.environ["CUDA_MODULE_LOADING"] = "EAGER"
    work = args.work or tempfile.mkdtemp(prefix="polytune-cuda-matmul-")
    os.makedirs(work, exist_ok=True)
    t0 = time.perf_counter()
    result: dict = {"rounds": args.rounds, "program_rounds": args.program_rounds, "variants": labels, "arch": args.arch,
                    "work": work, "kernels": []}
    kernels = [Kernel(name, _args_for_kernel(args)) for name in args.kernels.split(",")]
    for k in kernels:
        k.objects(work)
    known = {**VARIANTS, **FIXED}
    variants = {label: known[label] for label in labels}
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
        if args.program_rounds > 0:
            program_rounds(kernels, rows, args.program_rounds, t0 + args.stop_after_s, result)
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
