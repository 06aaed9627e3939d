#!/usr/bin/env python3
"""Triton benchmark (issue 5): default launch configuration vs tuned Triton vs tuned CUDA vs the vendor
library, side by side in one session on the GPU.

For each kernel: Triton with polytune's default configuration; Triton tuned as `polytune tune --target
triton` does (Algorithm 9.1's candidate set from the kernel's shape, then hill climbing, degree 1, from the
best candidate, at most --max-evals measured configurations); CUDA tuned by hill climbing (degree 1, from
the default block); and, for matmul and softmax, torch.matmul / torch.softmax in float32 (TF32 off).
Times: CUDA-event time of the whole region (all launches), median of --runs after a warm-up; each
configuration is verified against the original program's results before its time counts.

    python benchmarks/run_triton.py [--kernels matmul_vanilla,softmax,...] [--runs 5] [--rounds 15] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from run_gpu import read_rows, run_rows

from polytune.emit.cuda import default_block
from polytune.emit.triton import DEFAULT_CONFIG
from polytune.measure import Memo
from polytune.measure.c import BuildConfig
from polytune.measure.cuda import CudaBuildConfig, CudaRunner
from polytune.measure.triton import SPACER_US, spaced_time
from polytune.pipeline import OptimizeOptions, analyze
from polytune.search import Budget, SearchOptions, run_search
from polytune.targets.triton import TritonTarget, triton_seed

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = {"matmul_vanilla": ["N=2048"], "softmax": ["N=4096"], "stencil2d_vanilla": ["N=2048"],
         "reduction_vanilla": ["N=8192"], "stencil3d_ns": ["N=128"], "matmul_interchange": ["N=2048"],
         "stencil2d_interchange": ["N=2048"], "reduction_interchange": ["N=8192"],
         "matmul_unroll": ["N=2048"], "stencil2d_unroll": ["N=2048"], "reduction_unroll": ["N=8192"],
         "gemm": ["N=2048"]}
ALL = ("matmul_vanilla,matmul_unroll,matmul_interchange,softmax,stencil2d_vanilla,stencil2d_unroll,"
       "stencil2d_interchange,reduction_vanilla,reduction_unroll,reduction_interchange,stencil3d_ns,"
       "../pluto/gemm")


def vendor_ms(name: str, data, runs: int) -> float | None:
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    if name == "gemm":  # PolyBench gemm in its own type (double): C = alpha * A @ B + beta * C
        a, b, c = (torch.from_numpy(data.arrays[k]).cuda() for k in ("A", "B", "C"))
        alpha, beta = data.numbers["alpha"], data.numbers["beta"]

        def f():
            return torch.addmm(c, a, b, beta=beta, alpha=alpha)
    elif name.startswith("matmul"):
        a, b = (torch.from_numpy(data.arrays[k]).cuda() for k in ("A", "B"))

        def f():
            return torch.matmul(a, b)
    elif name == "softmax":
        a = torch.from_numpy(data.arrays["A"]).cuda()

        def f():
            return torch.softmax(a, dim=1)
    else:
        return None
    f()
    torch.cuda.synchronize()
    times = []
    spacer = SPACER_US
    for _ in range(runs):  # timed as the Triton runner times run(): the host's launch hidden behind a spacer
        t, spacer = spaced_time(torch, f, lambda: None, spacer)
        times.append(1e3 * t)
    return sorted(times)[len(times) // 2]


def head_to_head(th, config, names, name: str, args) -> dict:
    """The tuned Triton configuration and the vendor call, alternately, --rounds times (each a median of
    --runs launches): both see the same clocks and neighbours, and the ratio is taken per round."""
    tri, ven = [], []
    for _ in range(args.rounds):
        m = th.measure_fresh(tuple(config), tuple(names))
        tri.append(m.value * 1e3 if m.ok else float("nan"))
        ven.append(vendor_ms(name, th.data, args.runs))
    ratios = sorted(v / t for v, t in zip(ven, tri))
    return {"rounds": args.rounds, "triton_ms": sorted(tri)[len(tri) // 2], "vendor_ms": sorted(ven)[len(ven) // 2],
            "ratio_median": ratios[len(ratios) // 2], "ratio_min": ratios[0], "ratio_max": ratios[-1]}


def run_kernel(name: str, args) -> dict:
    src = os.path.normpath(os.path.join(HERE, "gpu", name + ".c"))
    name = os.path.basename(name)
    defines = tuple(args.define) if args.define else tuple(SIZES[name])
    program = analyze(src, defines=defines)
    row: dict = {"kernel": name, "size": list(defines)}
    target = TritonTarget(program, OptimizeOptions(target="triton"), BuildConfig(defines=defines, runs=args.runs))
    th = target.runner()
    memo = Memo(th)
    try:
        th.reference()
        space = target.space()
        names = space.names
        default = tuple(DEFAULT_CONFIG[n] for n in names)
        m = memo.measure(target.variant(names, default))
        row["triton_default"] = {"config": dict(zip(names, default)), "ms": m.value * 1e3 if m.ok else None,
                                 "error": m.detail if not m.ok else None}
        t0 = time.perf_counter()
        count = [0]

        def evaluate(config):
            count[0] += 1
            return memo.measure(target.variant(names, tuple(config)))

        seed, choice = triton_seed(th.key, space, evaluate, default)
        res = run_search(space, evaluate, "hill", seed, SearchOptions(alpha=0.05),
                         Budget(max_evals=args.max_evals, time_limit=args.time_limit))
        row["triton_tuned"] = {"config": dict(zip(names, res.best.config)) if res.best else None,
                               "ms": res.best.value * 1e3 if res.best else None,
                               "candidate_best": choice.get("config"), "evals": count[0],
                               "search_s": time.perf_counter() - t0,
                               "errors": sorted({r.measurement.error.value for r in res.evaluations
                                                 if r.measurement.error})}
        row["triton_resources"] = th.resources
        row["vendor_ms"] = vendor_ms(name, th.data, args.runs)
        if args.rounds and row["vendor_ms"] is not None and res.best:
            row["head_to_head"] = head_to_head(th, res.best.config, names, name, args)
    except Exception as e:  # noqa: BLE001 - a row records what broke; the run goes on
        row["triton_error"] = f"{type(e).__name__}: {e}"
    finally:
        th.close()
    ch = CudaRunner(program, CudaBuildConfig(defines=defines, runs=args.runs))
    try:
        ch.reference()
        dims = max(a.gpu.max_mapped for a in program.scops)
        from polytune.search import Parameter, SearchSpace, parse_domain
        params = [Parameter("block_x", parse_domain("8:1024:pow2"), hop=8)]
        params += [Parameter(n, parse_domain(d), hop=0) for n, d in (("block_y", "1:128:pow2"),
                                                                    ("block_z", "1:64:pow2"))[:dims - 1]]
        t0 = time.perf_counter()
        res = run_search(SearchSpace(tuple(params)), lambda c: ch.measure_block(tuple(c)), "hill", default_block(dims),
                         SearchOptions(alpha=0.05, shortest_hop=True),
                         Budget(max_iterations=100, time_limit=args.time_limit))
        row["cuda_default_ms"] = res.seed.value * 1e3 if res.seed and res.seed.ok else None
        row["cuda_tuned"] = {"config": list(res.best.config) if res.best else None,
                             "ms": res.best.value * 1e3 if res.best else None, "evals": res.evals,
                             "search_s": time.perf_counter() - t0}
    except Exception as e:  # noqa: BLE001
        row["cuda_error"] = f"{type(e).__name__}: {e}"
    finally:
        ch.close()
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def table(rows: list[dict]) -> str:
    out = ["| kernel | Triton default (ms) | Triton tuned (ms), config, evals, s | CUDA tuned (ms), block "
           "| vendor (ms) | tuned Triton / default | vendor / tuned Triton | CUDA / Triton |", "|" + "---|" * 8]
    wins = 0
    for r in rows:
        td = (r.get("triton_default") or {}).get("ms")
        tt = r.get("triton_tuned") or {}
        ct = r.get("cuda_tuned") or {}
        v = r.get("vendor_ms")
        cfg = ", ".join(f"{k}={val}" for k, val in (tt.get("config") or {}).items())

        def f(x):
            return f"{x:.3f}" if x else "-"
        def ratio(a, b):
            return f"{a / b:.2f}" if a and b else "-"
        if tt.get("ms") and ct.get("ms") and tt["ms"] < ct["ms"]:
            wins += 1
        out.append(f"| {r['kernel']} | {f(td)} | {f(tt.get('ms'))} ({cfg}), {tt.get('evals', '-')}, "
                   f"{tt.get('search_s', 0):.0f} | {f(ct.get('ms'))} {tuple(ct.get('config') or ())} | {f(v)} | "
                   f"{ratio(td, tt.get('ms'))} | {ratio(v, tt.get('ms'))} | {ratio(ct.get('ms'), tt.get('ms'))} |")
        for k in ("triton_error", "cuda_error"):
            if k in r:
                out.append(f"| {r['kernel']} | {k}: {r[k][:200]} |" + " |" * 6)
    out.append(f"\nTuned Triton is faster than tuned CUDA on {wins} of {len(rows)} kernels.")
    h2h = [r for r in rows if r.get("head_to_head")]
    if h2h:
        out += ["", "| kernel | rounds | tuned Triton (ms) | vendor (ms) "
                "| vendor / Triton, median of rounds (min-max) |", "|---|---|---|---|---|"]
        for r in h2h:
            h = r["head_to_head"]
            out.append(f"| {r['kernel']} | {h['rounds']} | {h['triton_ms']:.4f} | {h['vendor_ms']:.4f} | "
                       f"{h['ratio_median']:.2f} ({h['ratio_min']:.2f}-{h['ratio_max']:.2f}) |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", default=ALL, help="names in benchmarks/gpu (or paths relative to it, "
                    "without .c); default: all ten, softmax and ../pluto/gemm")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--max-evals", type=int, default=12)
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per search (each target)")
    ap.add_argument("--rounds", type=int, default=0, help="then time the tuned Triton and the vendor call "
                    "alternately this many rounds (kernels with a vendor reference)")
    ap.add_argument("--json")
    ap.add_argument("-D", dest="define", action="append", default=[], help="size override for every kernel")
    ap.add_argument("--from-json", nargs="+")
    args = ap.parse_args()
    if args.from_json:
        print(table(read_rows(args.from_json)))
        return 0
    print(table(run_rows(args.kernels.split(","), run_kernel, args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
