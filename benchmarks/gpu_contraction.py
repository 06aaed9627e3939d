#!/usr/bin/env python3
"""Contractions on the Triton target vs torch (issue 38): float32 matmul (benchmarks/gpu/matmul_vanilla.c,
N=2048 and 4096) and PolyBench/C 4.2.1 gemm, 2mm, 3mm in float (-DDATA_TYPE_IS_FLOAT, LARGE_DATASET), each
in full float32 (tl.dot "ieee", against torch with TF32 off) and with --allow-tf32 (tl.dot "tf32", against
torch with TF32 on), on one GPU.

For each kernel and precision: polytune's module (`OptimizeOptions(target="triton", allow_tf32=...)`) at its
default launch configuration (the contraction tile) and at the other configurations of --configs (tuner
candidates, see polytune.measure.triton.candidates), each verified against the original program's results
and timed as `polytune tune --target triton` times (measure.triton: the region's kernels, launch hidden
behind a spacer, median of --runs); the fastest is "polytune best". Then --rounds interleaved rounds: polytune's
default and best and the torch call of the same precision, each verified again, the ratio taken per round.

The reference: the original program run once on the CPU (the tuner's probe) for PolyBench; for the matmuls,
whose original takes minutes on one core at N=4096, the inputs are the file's own (A, B by its formulas)
and the reference C = A @ B computed by torch in float64 on the GPU (the original's arithmetic, exactly
rounded, instead of its sequential float32 sums).

    python benchmarks/gpu_contraction.py --polybench PolyBenchC-4.2.1 --rounds 7 --json out.json
    python benchmarks/gpu_contraction.py --quick --polybench PolyBenchC-4.2.1      # tiny sizes, interpreter OK
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from polytune.measure.build import Build  # noqa: E402
from polytune.measure.c import BuildConfig, compare_dumps  # noqa: E402
from polytune.measure.triton import SPACER_US, ProbeData, load_module, spaced_time  # noqa: E402
from polytune.pipeline import OptimizeOptions, analyze  # noqa: E402
from polytune.targets.triton import TritonTarget  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# (BLOCK_X, BLOCK_Y, BLOCK_K, num_warps, num_stages): BLOCK_Y rows of C by BLOCK_X columns; the first is
# the module's default for a float32 contraction; all are in the tuner's candidate set
CONFIGS = ((128, 128, 32, 8, 3), (128, 128, 32, 8, 4), (256, 64, 32, 8, 3), (64, 256, 32, 8, 3),
           (128, 256, 32, 8, 3), (64, 64, 32, 4, 3))
QUICK_CONFIGS = ((16, 16, 16, 4, 2), (32, 16, 16, 4, 2))
TILE_NAMES = ("BLOCK_X", "BLOCK_Y", "BLOCK_K", "num_warps", "num_stages")
POLYBENCH = {"gemm": "linear-algebra/blas/gemm", "2mm": "linear-algebra/kernels/2mm",
             "3mm": "linear-algebra/kernels/3mm"}


def kernels(args) -> list[dict]:
    out = []
    for n in ([32] if args.quick else args.matmul_sizes):
        out.append({"name": f"matmul N={n}", "src": os.path.join(HERE, "gpu", "matmul_vanilla.c"),
                    "includes": (), "defines": (f"N={n}",), "sources": (), "vendor": "matmul", "n": n})
    for name in args.polybench_kernels:
        d = os.path.join(args.polybench, POLYBENCH[name])
        out.append({"name": name, "src": os.path.join(d, name + ".c"),
                    "includes": (os.path.join(args.polybench, "utilities"), d),
                    "defines": ("MINI_DATASET" if args.quick else f"{args.dataset}_DATASET", "DATA_TYPE_IS_FLOAT"),
                    "sources": (os.path.join(args.polybench, "utilities", "polybench.c"),), "vendor": name})
    return out


def matmul_data(n: int) -> ProbeData:
    """matmul_vanilla.c's inputs by its own formulas, and C = A @ B in float64 (on the GPU where there is one)."""
    import torch
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    a = (((i * j + 1) % 17).astype(np.float32) / np.float32(17.0)).astype(np.float32)
    b = (((i + 2 * j) % 19).astype(np.float32) / np.float32(19.0) - np.float32(0.25)).astype(np.float32)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    ref = (torch.from_numpy(a).to(dev).double() @ torch.from_numpy(b).to(dev).double()).float().cpu().numpy()
    c = np.full((n, n), np.float32(np.nan))  # poisoned: every element must be written
    return ProbeData({"A": a, "B": b, "C": c}, {"A": "f4", "B": "f4", "C": "f4"}, {"n": n}, {}, {"C": ref})


def adopt(runner, data: ProbeData) -> None:
    """The runner's reference() with *data* in place of the probe's run (TritonRunner.reference's other steps)."""
    runner.data = data
    runner.mods = {f: load_module(text, runner.dir) for f, text in runner.texts.items()}
    runner.mod = runner.mods[0]
    runner.pristine = {k: runner.torch.from_numpy(v.copy()).to(runner.device) for k, v in data.arrays.items()}
    runner.live = {k: v.clone() for k, v in runner.pristine.items()}


def vendor(kind: str, data: ProbeData, device: str):
    """The torch call computing the same outputs from the same inputs (its own tensors), and its output name."""
    import torch
    t = {k: torch.from_numpy(v.copy()).to(device) for k, v in data.arrays.items()}
    nb = data.numbers
    if kind == "matmul":
        return (lambda: torch.matmul(t["A"], t["B"])), "C"
    if kind == "gemm":  # C := alpha*A*B + beta*C
        return (lambda: torch.addmm(t["C"], t["A"], t["B"], beta=nb["beta"], alpha=nb["alpha"])), "C"
    if kind == "2mm":  # tmp := alpha*A*B; D := tmp*C + beta*D
        return (lambda: torch.addmm(t["D"], torch.mm(t["A"], t["B"]).mul_(nb["alpha"]), t["C"], beta=nb["beta"])), "D"
    if kind == "3mm":  # E := A*B; F := C*D; G := E*F
        return (lambda: torch.mm(torch.mm(t["A"], t["B"]), torch.mm(t["C"], t["D"]))), "G"
    raise ValueError(kind)


def vendor_ms(torch, f, runs: int) -> float:
    times, spacer = [], SPACER_US
    for _ in range(runs):
        tm, spacer = spaced_time(torch, f, lambda: None, spacer)
        times.append(1e3 * tm)
    return sorted(times)[len(times) // 2]


def set_tf32(torch, on: bool) -> None:
    torch.set_float32_matmul_precision("high" if on else "highest")
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def run_kernel(k: dict, args, deadline: float) -> dict:
    import torch
    program = analyze(k["src"], includes=k["includes"], defines=k["defines"])
    build = BuildConfig(includes=k["includes"], defines=k["defines"], runs=args.runs,
                        program=Build(sources=k["sources"]))
    row: dict = {"kernel": k["name"], "defines": list(k["defines"]), "precisions": {}}
    data = None
    runners = {}
    try:
        for tf32 in (False, True):
            target = TritonTarget(program, OptimizeOptions(target="triton", allow_tf32=tf32), build)
            th = target.runner()
            runners[tf32] = (target, th)
            if data is None:
                t0 = time.perf_counter()
                if k["vendor"] == "matmul":
                    data = matmul_data(k["n"])
                    adopt(th, data)
                else:
                    th.reference()
                    data = th.data
                row["reference_s"] = time.perf_counter() - t0
                row["reference"] = "torch float64 of the file's inputs" if k["vendor"] == "matmul" else "probe"
            else:
                adopt(th, data)
            space = target.space()
            names = space.names
            default = target.named_seed(space, "pluto")
            configs = [tuple(default)]
            tiles = [dict(zip(TILE_NAMES, c)) for c in (QUICK_CONFIGS if args.quick else CONFIGS)]
            if "FUSE" in names:  # the other schedule at the default tile too
                tiles.insert(0, {"FUSE": 1 - dict(zip(names, default))["FUSE"]})
            for tile in tiles:
                c = tuple(tile.get(n, v) for n, v in zip(names, default))
                if c not in configs:
                    configs.append(c)
            prec = {"names": list(names), "default": list(default), "configs": []}
            best = None
            for c in configs:
                if time.perf_counter() > deadline and c != default:
                    prec["configs"].append({"config": list(c), "skipped": "out of time"})
                    continue
                t0 = time.perf_counter()
                m = th.measure_fresh(tuple(c), tuple(names))
                rec = {"config": list(c), "ok": m.ok, "ms": m.value * 1e3 if m.ok else None,
                       "error": None if m.ok else f"{m.error.value}: {m.detail}", "s": time.perf_counter() - t0,
                       "resources": th.resources if m.ok else None}
                prec["configs"].append(rec)
                print(f"  {k['name']} {'tf32' if tf32 else 'ieee'} {c}: "
                      f"{rec['ms'] and round(rec['ms'], 4)} {rec['error'] or ''}", file=sys.stderr, flush=True)
                if m.ok and (best is None or m.value < best[1]):
                    best = (tuple(c), m.value)
            prec["best"] = list(best[0]) if best else None
            row["precisions"]["tf32" if tf32 else "ieee"] = prec
        # interleaved rounds: default, best, torch (same precision), each precision in turn
        dev = runners[False][1].device
        flops = None
        for tf32 in (False, True):
            key = "tf32" if tf32 else "ieee"
            prec = row["precisions"][key]
            target, th = runners[tf32]
            names = tuple(prec["names"])
            set_tf32(torch, tf32)
            f, out = vendor(k["vendor"], data, dev)
            got = f()
            prec["torch_check"] = compare_dumps(data.outputs[out].astype(np.float64).ravel(),
                                                got.float().cpu().numpy().astype(np.float64).ravel(),
                                                th.rtol["f4"]) or "ok"
            rounds = {"default": [], "best": [], "torch": []}
            for _ in range(args.rounds if dev == "cuda" else 1):
                for label in ("default", "best"):
                    c = prec["default"] if label == "default" else prec["best"]
                    if c is None:
                        continue
                    m = th.measure_fresh(tuple(c), names)
                    rounds[label].append(m.value * 1e3 if m.ok else None)
                set_tf32(torch, tf32)
                rounds["torch"].append(vendor_ms(torch, f, args.runs) if dev == "cuda" else None)
            prec["rounds"] = rounds
            med = {lb: _median([x for x in xs if x is not None]) for lb, xs in rounds.items()}
            prec["median_ms"] = med
            for lb in ("default", "best"):
                ratios = [t / p for t, p in zip(rounds["torch"], rounds[lb]) if t and p]
                prec[f"torch_over_{lb}"] = _median(ratios) if ratios else None
                prec[f"torch_over_{lb}_range"] = [min(ratios), max(ratios)] if ratios else None
        if flops is None:
            row["gflop"] = gflop(k, data)
    except Exception as e:  # noqa: BLE001 - a row records what broke; the run goes on
        row["error"] = f"{type(e).__name__}: {str(e)[:500]}"
    finally:
        for _, th in runners.values():
            th.close()
    set_tf32(torch, False)
    print(json.dumps({k2: v for k2, v in row.items() if k2 != "precisions"}), file=sys.stderr, flush=True)
    return row


def cuda_build(k: dict, tmp: str) -> dict:
    """The CUDA target's program of *k* at its default mapping, timed (each region prints its phases: the
    previous rounds' code path), compiled with nvcc: {"exe": path} or {"error": ...}. Runs in a thread while
    the Triton part measures (nvcc on the CPUs)."""
    from polytune.measure.c import CRunner, compile_source, quote_dirs
    from polytune.measure.cuda import CudaBuildConfig
    from polytune.pipeline import cuda_program
    try:
        program = analyze(k["src"], includes=k["includes"], defines=k["defines"])
        build = CudaBuildConfig(includes=k["includes"], defines=k["defines"], program=Build(sources=k["sources"]))
        cpu = CRunner(program, build.reference())
        try:
            objects = cpu.objects()
            text = cuda_program(program, OptimizeOptions(target="cuda"), timing=True)[0]
            base = os.path.join(tmp, k["name"].replace(" ", "_").replace("=", ""))
            exe, secs, err, _ = compile_source(build, text, base + ".cu", base, timeout=900, label="CUDA ",
                                               quote=quote_dirs(program), objects=objects)
        finally:
            cpu.close()
        return {"exe": exe, "compile_s": secs} if exe else {"error": f"nvcc: {err}"}
    except Exception as e:  # noqa: BLE001
        return {"error": f"{type(e).__name__}: {str(e)[:300]}"}


def cuda_shares(built: dict, runs: int) -> dict:
    """The timed CUDA program run *runs* times: where its regions' time goes (measure.cuda.region_shares)."""
    import subprocess

    from polytune.measure.cuda import KERNEL_MS, PROGRAM_ENV, REGION_MS, REGION_PARTS_MS, region_shares
    if "exe" not in built:
        return built
    parts, kernel, region = [], [], []
    for _ in range(runs):
        proc = subprocess.run([built["exe"]], capture_output=True, text=True, timeout=300, env=PROGRAM_ENV,
                              cwd=os.path.dirname(built["exe"]))
        if proc.returncode != 0:
            return {"error": f"exit {proc.returncode}: {proc.stderr[-300:]}"}
        ps = [tuple(map(float, m)) for m in REGION_PARTS_MS.findall(proc.stderr)]
        parts.append([sum(x) for x in zip(*ps)] if ps else [])
        kernel.append(sum(float(x) for x in KERNEL_MS.findall(proc.stderr)))
        region.append(sum(float(x) for x in REGION_MS.findall(proc.stderr)))
    return {"runs": runs, "shares": region_shares(parts), "kernel_ms": _median(kernel),
            "region_ms": _median(region), "parts_ms": parts, "compile_s": built.get("compile_s")}


def gflop(k: dict, data: ProbeData) -> float:
    s = {n: a.shape for n, a in data.arrays.items()}
    if k["vendor"] in ("matmul", "gemm"):
        (m, kk), (_, n) = s["A"], s["B"]
        return 2e-9 * m * n * kk
    if k["vendor"] == "2mm":
        (ni, nk), (_, nj), (_, nl) = s["A"], s["B"], s["C"]
        return 2e-9 * (ni * nj * nk + ni * nl * nj)
    (ni, nk), (_, nj), (_, nm), (_, nl) = s["A"], s["B"], s["C"], s["D"]
    return 2e-9 * (ni * nj * nk + nj * nl * nm + ni * nl * nj)


def _median(xs: list[float]) -> float | None:
    xs = sorted(xs)
    if not xs:
        return None
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else 0.5 * (xs[m - 1] + xs[m])


def table(rows: list[dict]) -> str:
    out = ["| kernel | precision | polytune default (ms) | polytune best (ms), config | torch (ms) | torch / default "
           "| torch / best (min-max) | TFLOP/s best | checks |", "|" + "---|" * 9]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['kernel']} | error: {r['error'][:200]} |" + " |" * 7)
        for key, p in r.get("precisions", {}).items():
            med = p.get("median_ms") or {}
            ok = all(c.get("ok") for c in p["configs"] if "skipped" not in c)
            fails = [c["error"][:60] for c in p["configs"] if c.get("error")]
            rng = p.get("torch_over_best_range") or [None, None]

            def f(x, d=4):
                return f"{x:.{d}f}" if isinstance(x, float) else "-"
            tflops = r.get("gflop") / med["best"] if r.get("gflop") and med.get("best") else None
            out.append(f"| {r['kernel']} | {key} vs torch TF32 {'on' if key == 'tf32' else 'off'} | "
                       f"{f(med.get('default'))} | {f(med.get('best'))} {tuple(p.get('best') or ())} | "
                       f"{f(med.get('torch'))} | {f(p.get('torch_over_default'), 3)} | "
                       f"{f(p.get('torch_over_best'), 3)} ({f(rng[0], 2)}-{f(rng[1], 2)}) | {f(tflops, 1)} | "
                       f"{'all verified' if ok else 'failed: ' + '; '.join(fails)}; torch {p.get('torch_check')} |")
    return "\n".join(out)


def shares_table(rows: list[dict]) -> str:
    out = ["", "| kernel | CUDA default program: region (ms) | kernels (ms, events) | copies in (with allocation) "
           "| kernels | copies out | frees | copies |", "|" + "---|" * 8]
    for r in rows:
        c = r.get("cuda_default_program") or {}
        sh = c.get("shares")
        if not sh:
            out.append(f"| {r['kernel']} | {c.get('error', '-')[:200]} |" + " |" * 6)
            continue
        out.append(f"| {r['kernel']} | {c['region_ms']:.3f} | {c['kernel_ms']:.3f} | {100 * sh['copies_in']:.1f}% | "
                   f"{100 * sh['kernels']:.1f}% | {100 * sh['copies_out']:.1f}% | {100 * sh['free']:.1f}% | "
                   f"{100 * sh['copies']:.1f}% |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--polybench", default=os.environ.get("POLYBENCH", "/work/polybench"))
    ap.add_argument("--polybench-kernels", default="gemm,2mm,3mm")
    ap.add_argument("--dataset", default="LARGE")
    ap.add_argument("--matmul-sizes", default="2048,4096")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--budget-s", type=float, default=420.0, help="after this many seconds only defaults are "
                    "measured before the rounds")
    ap.add_argument("--cuda-runs", type=int, default=3, help="runs of the CUDA target's timed default program "
                    "(the copies' share of each region; 0: none)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (the interpreter can run them)")
    ap.add_argument("--json")
    ap.add_argument("--from-json")
    args = ap.parse_args()
    if args.from_json:
        with open(args.from_json) as fh:
            rows = json.load(fh)["rows"]
        print(table(rows))
        print(shares_table(rows))
        return 0
    args.matmul_sizes = [int(x) for x in args.matmul_sizes.split(",") if x]
    args.polybench_kernels = [x for x in args.polybench_kernels.split(",") if x]
    import torch
    set_tf32(torch, False)
    start = time.perf_counter()
    deadline = start + args.budget_s
    rows = []
    meta = {"started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "argv": sys.argv[1:],
            "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu (interpreter)",
            "torch": torch.__version__}
    try:
        import triton
        meta["triton"] = triton.__version__
    except ImportError:
        pass
    ks = kernels(args)
    tmp = tempfile.mkdtemp(prefix="gpu-contraction-cuda-")
    pool = ThreadPoolExecutor(max_workers=4)
    builds = [pool.submit(cuda_build, k, tmp) for k in ks] if args.cuda_runs else []
    for k in ks:
        rows.append(run_kernel(k, args, deadline))
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"meta": meta, "rows": rows}, fh, indent=1)
    for row, fut in zip(rows, builds):  # the CUDA target's default program: copies' share of its regions
        row["cuda_default_program"] = cuda_shares(fut.result(), args.cuda_runs)
        print(f"  {row['kernel']} cuda: {json.dumps(row['cuda_default_program'])[:300]}", file=sys.stderr, flush=True)
    pool.shutdown()
    meta["wall_s"] = time.perf_counter() - start
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"meta": meta, "rows": rows}, fh, indent=1)
    print(table(rows))
    print(shares_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
