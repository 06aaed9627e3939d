#!/usr/bin/env python3
"""TVM's tuner on gemm and conv2d on the CPU, next to gcc -O3 of the original C (issue 6).

The paper compares against AutoTVM. AutoTVM is not in any TVM that installs here: the registry has apache-tvm
0.25-0.27 only (for every Python version), and neither 0.25 nor 0.27 contains tvm.autotvm (nor
tvm.auto_scheduler); they ship MetaSchedule (`tvm.s_tir.meta_schedule`), AutoTVM's successor. This script
therefore tunes with MetaSchedule, in two design spaces:

  --space template  (default) an AutoTVM-style template, the matmul tutorial's: every loop split in two with
                    a sampled tile size (`sample_perfect_tile`, AutoTVM's `define_split`), a fixed tile order,
                    the innermost spatial loop vectorized, the outer tile loops fused and parallel, and an
                    unroll knob (0/16/64/512, like AutoTVM's x86 `unroll_kw`).
  --space auto      MetaSchedule's own space for the LLVM target (multi-level tiling, cache write,
                    parallel/vectorize/unroll rules).

Tuners (--tuners): random = replay-trace (random samples of the space, AutoTVM's RandomTuner); ga =
evolutionary search with no learned model (random cost model); xgb = evolutionary search guided by the
XGBoost cost model (MetaSchedule's default, the counterpart of AutoTVM's XGBTuner). There is no grid search.

The computations and sizes are those of benchmarks/pluto/gemm.c (double, C = alpha*A*B + beta*C with
alpha 1.5 and beta 1.2, N=800 as benchmarks/reproduce.py uses) and benchmarks/pluto/conv2d.c (double,
out[co][y][x] = sum w[co][ci][ky][kx] * in[ci][y+ky][x+kx], CHW layout, 3x3 valid, NC=64, N=256: the
file's defaults). gemm writes its result to a separate array D (init D = beta*C, then D += alpha*A*B), so
that every call computes the same result. The best schedule of each tuner is checked against numpy and
against the checksum the C program prints, then timed interleaved with the gcc -O3 -march=native binary of
the original C: the C program times its region once per run, TVM's time_evaluator one call (after a warm-up
call) per round.

Install (a separate venv, so the project's environment is untouched; apache-tvm-ffi 0.1.15 crashes
MetaSchedule's mutators with a segfault, hence the pin):

    python3 -m venv /tmp/tvmenv
    /tmp/tvmenv/bin/pip install apache-tvm==0.27.0.post1 apache-tvm-ffi==0.1.14.post0 psutil cloudpickle \
        xgboost-cpu

Usage:

    /tmp/tvmenv/bin/python benchmarks/run_tvm.py [--kernels gemm,conv2d] [--tuners random,xgb] [--n-trial 30]
        [--space template|auto] [--threads 2] [--reps 5] [--json out.json] [--markdown]
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

KERNELS = ("gemm", "conv2d")
TUNERS = {  # name -> (search strategy, cost model)
    "random": ("replay-trace", "random"),
    "ga": ("evolutionary", "random"),
    "xgb": ("evolutionary", "xgb"),
}
UNROLL = [0, 16, 64, 512]
ALPHA, BETA = 1.5, 1.2


# ---------------------------------------------------------------- the computations, as in the C files

def gemm_te(n):
    # TVMScript, not te.compute: te.sum's init accepts only a constant or a tensor load (not beta * C[i, j]),
    # and this TE drops a tensor-load init (it emitted 0.0).
    from tvm.script import tirx as T

    @T.prim_func(s_tir=True)
    def gemm(a: T.Buffer((n, n), "float64"), b: T.Buffer((n, n), "float64"), c: T.Buffer((n, n), "float64"),
             d: T.Buffer((n, n), "float64")):
        T.func_attr({"tirx.noalias": True})
        for i, j, k in T.grid(n, n, n):
            with T.sblock("D"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    d[vi, vj] = T.float64(BETA) * c[vi, vj]
                d[vi, vj] = d[vi, vj] + T.float64(ALPHA) * a[vi, vk] * b[vk, vj]

    return gemm


def conv2d_te(nc, n):
    from tvm import te

    inp = te.placeholder((nc, n + 2, n + 2), "float64", "inp")
    w = te.placeholder((nc, nc, 3, 3), "float64", "w")
    ci = te.reduce_axis((0, nc), "ci")
    ky = te.reduce_axis((0, 3), "ky")
    kx = te.reduce_axis((0, 3), "kx")
    out = te.compute((nc, n, n), lambda co, y, x: te.sum(w[co, ci, ky, kx] * inp[ci, y + ky, x + kx],
                                                          axis=[ci, ky, kx]), "out")
    return te.create_prim_func([inp, w, out])


def gemm_data(n):
    """Inputs as gemm.c initializes them, the numpy result and the C program's checksum of it."""
    import numpy as np

    i = np.arange(n).reshape(-1, 1)
    j = np.arange(n).reshape(1, -1)
    c = ((i * j + 1) % n) / n
    a = (i * (j + 1) % n) / n
    b = (i * (j + 2) % n) / n
    ref = BETA * c + (ALPHA * a) @ b
    return [a, b, c], np.zeros((n, n)), ref


def gemm_checksum(d):
    import numpy as np

    n = d.shape[0]
    i = np.arange(n).reshape(-1, 1)
    j = np.arange(n).reshape(1, -1)
    return float(np.sum(d * (1 + (i * 7 + j) % 13)))


def conv2d_data(nc, n):
    import numpy as np

    c = np.arange(nc).reshape(-1, 1, 1)
    y = np.arange(n + 2).reshape(1, -1, 1)
    x = np.arange(n + 2).reshape(1, 1, -1)
    inp = ((c + y * x + 1) % 17) / 17.0
    co = np.arange(nc).reshape(-1, 1, 1, 1)
    ci = np.arange(nc).reshape(1, -1, 1, 1)
    ky = np.arange(3).reshape(1, 1, -1, 1)
    kx = np.arange(3).reshape(1, 1, 1, -1)
    w = ((co * 3 + ci * 5 + ky * 3 + kx) % 11) / 11.0 - 0.45
    ref = np.zeros((nc, n, n))
    for dy in range(3):
        for dx in range(3):
            ref += np.einsum("oc,cyx->oyx", w[:, :, dy, dx], inp[:, dy:dy + n, dx:dx + n])
    return [inp, w], np.zeros((nc, n, n)), ref


def conv2d_checksum(out):
    import numpy as np

    nc, n, _ = out.shape
    c = np.arange(nc).reshape(-1, 1, 1)
    y = np.arange(n).reshape(1, -1, 1)
    x = np.arange(n).reshape(1, 1, -1)
    return float(np.sum(out * (1 + (c * 3 + y * 7 + x) % 13)))


# ---------------------------------------------------------------- AutoTVM-style templates

def _finish(sch, block, outer_spatial, first_reduction, vector_loop_index):
    """Fuse + parallelize the outer spatial tile loops, sample the unroll knob, vectorize, split off the init."""
    from tvm.tirx import ForKind

    root = sch.get_sblock("root")
    par = sch.fuse(*outer_spatial)
    sch.parallel(par)
    unroll = sch.sample_categorical(candidates=UNROLL, probs=[1.0 / len(UNROLL)] * len(UNROLL))
    sch.annotate(root, "meta_schedule.unroll_explicit", unroll)
    sch.vectorize(sch.get_loops(block)[vector_loop_index])  # before decompose: vectorize needs the init
    init = sch.decompose_reduction(block, first_reduction)
    inner = sch.get_loops(init)[-1]
    if sch.get(inner).kind != ForKind.VECTORIZED:
        sch.vectorize(inner)


def gemm_template(n):
    def template(sch):
        b = sch.get_sblock("D")
        i, j, k = sch.get_loops(b)
        i0, i1 = sch.split(i, sch.sample_perfect_tile(i, n=2, max_innermost_factor=n))
        j0, j1 = sch.split(j, sch.sample_perfect_tile(j, n=2, max_innermost_factor=64))
        k0, k1 = sch.split(k, sch.sample_perfect_tile(k, n=2, max_innermost_factor=n))
        sch.reorder(i0, j0, k0, i1, k1, j1)  # tile loops, then the point loops i, k, j (as polytune's)
        _finish(sch, b, [i0, j0], k0, -1)

    return template


def conv2d_template(nc, n):
    def template(sch):
        b = sch.get_sblock("out")
        co, y, x, ci, ky, kx = sch.get_loops(b)
        co0, co1 = sch.split(co, sch.sample_perfect_tile(co, n=2, max_innermost_factor=nc))
        y0, y1 = sch.split(y, sch.sample_perfect_tile(y, n=2, max_innermost_factor=n))
        x0, x1 = sch.split(x, sch.sample_perfect_tile(x, n=2, max_innermost_factor=64))
        ci0, ci1 = sch.split(ci, sch.sample_perfect_tile(ci, n=2, max_innermost_factor=nc))
        # output tile co1 x y1 x x1; each x1 vector accumulates over ci1, ky, kx
        sch.reorder(co0, y0, x0, ci0, co1, y1, ci1, ky, kx, x1)
        _finish(sch, b, [co0, y0], ci0, -1)

    return template


KNOB_NAMES = {"gemm": ["i", "j", "k", "unroll"], "conv2d": ["co", "y", "x", "ci", "unroll"]}


def knobs(sch):
    """The sampled decisions of a schedule's trace, in order: tile factors and categorical indices."""
    trace = sch.trace
    out = []
    for inst in trace.insts:
        if inst.kind.name in ("SamplePerfectTile", "SampleCategorical"):
            dec = trace.decisions[inst]
            if inst.kind.name == "SamplePerfectTile":
                out.append([int(v) for v in dec])
            else:
                cands = [int(c) for c in inst.attrs[0]]
                out.append(cands[int(dec)])
    return out


# ---------------------------------------------------------------- gcc -O3 of the original C

def build_c(kernel, defines, workdir):
    exe = os.path.join(workdir, kernel + "_gcc")
    cmd = ["gcc", "-O3", "-march=native", *["-D" + d for d in defines],
           os.path.join(HERE, "pluto", kernel + ".c"), "-o", exe]
    subprocess.run(cmd, check=True)
    return exe, " ".join(cmd[:3 + len(defines)])


def run_c(exe):
    out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    vals = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    return float(vals["time"]), float(vals["checksum"])


# ---------------------------------------------------------------- tuning

def fast_build(mod, target, _params):
    """MetaSchedule's default_build without its `import tvm.s_tir.tensor_intrin` (17 s here, in every builder
    process: MetaSchedule restarts its build pool for every batch). No tensor intrinsic is used for float64."""
    from tvm.driver import build

    return build(mod, target=target)


def tune_one(kernel, func, template, tuner, args, target, workdir):
    from tvm.s_tir import meta_schedule as ms

    strategy, cost_model = TUNERS[tuner]
    if not args.verbose:  # each tune_tir call sets its console level from this logger's (and then resets it)
        logging.getLogger("tvm.s_tir.meta_schedule").setLevel(logging.WARNING)
    if args.space == "template":
        space = ms.space_generator.ScheduleFn(
            template, sch_rules=[],
            postprocs=[ms.postproc.RewriteParallelVectorizeUnroll()],
            mutator_probs={ms.mutator.MutateTileSize(): 0.9, ms.mutator.MutateUnroll(): 0.1})
    else:
        space = "post-order-apply"
    runner = ms.runner.LocalRunner(
        timeout_sec=args.timeout,
        evaluator_config=ms.runner.EvaluatorConfig(number=1, repeat=args.tune_repeat, min_repeat_ms=0))
    builder = ms.builder.LocalBuilder(max_workers=args.threads, f_build=fast_build)
    wd = os.path.join(workdir, f"{kernel}_{tuner}")
    t0 = time.perf_counter()
    db = ms.tune_tir(func, target, wd, max_trials_global=args.n_trial,
                     num_trials_per_iter=min(args.trials_per_iter, args.n_trial),
                     builder=builder, runner=runner, cost_model=cost_model, strategy=strategy, space=space,
                     num_tuning_cores=args.threads, seed=args.seed)
    wall = time.perf_counter() - t0
    recs = db.get_all_tuning_records()
    ok = [r for r in recs if r.run_secs and all(float(s) < 1e9 for s in r.run_secs)]
    sch = ms.tir_integration.compile_tir(db, func, target)
    best_tuning = min((statistics.median(float(s) for s in r.run_secs) for r in ok), default=None)
    rt = fast_build(sch.mod, target, None) if sch is not None else None
    return {"tuner": tuner, "strategy": strategy, "cost_model": cost_model, "measured": len(recs),
            "valid": len(ok), "tune_wall_s": wall, "best_in_tuning_s": best_tuning,
            "knobs": knobs(sch) if sch is not None else None}, rt


def check(kernel, rt, data):
    import numpy as np
    import tvm

    dev = tvm.cpu()
    ins, out0, ref = data
    targs = [tvm.runtime.tensor(x, dev) for x in ins] + [tvm.runtime.tensor(out0, dev)]
    rt(*targs)
    got = targs[-1].numpy()
    ok = bool(np.allclose(got, ref, rtol=1e-10, atol=1e-12))
    cs = gemm_checksum(got) if kernel == "gemm" else conv2d_checksum(got)
    return ok, cs, targs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", default="gemm,conv2d")
    ap.add_argument("--tuners", default="random,xgb", help="comma list of " + ",".join(TUNERS))
    ap.add_argument("--space", choices=("template", "auto"), default="template")
    ap.add_argument("--n-trial", type=int, default=30, help="measured configurations per kernel and tuner")
    ap.add_argument("--trials-per-iter", type=int, default=16, help="measurement batch (cost-model update)")
    ap.add_argument("--tune-repeat", type=int, default=3, help="timed calls per configuration while tuning")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per measurement")
    ap.add_argument("--threads", type=int, default=2, help="TVM_NUM_THREADS and tuning cores")
    ap.add_argument("--reps", type=int, default=5, help="interleaved rounds of the final gcc/TVM timing")
    ap.add_argument("--gemm-n", type=int, default=800)
    ap.add_argument("--conv-nc", type=int, default=64)
    ap.add_argument("--conv-n", type=int, default=256)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--verbose", action="store_true", help="MetaSchedule's log on stdout (default: warnings)")
    args = ap.parse_args()
    kernels = [k for k in args.kernels.split(",") if k]
    tuners = [t for t in args.tuners.split(",") if t]
    for k in kernels:
        if k not in KERNELS:
            ap.error(f"unknown kernel {k}")
    for t in tuners:
        if t not in TUNERS:
            ap.error(f"unknown tuner {t}")

    os.environ["TVM_NUM_THREADS"] = str(args.threads)  # before tvm starts its thread pool
    try:
        import numpy  # noqa: F401
        import tvm
        from tvm.s_tir import meta_schedule  # noqa: F401
    except ImportError as e:
        sys.exit(f"run_tvm.py needs TVM with MetaSchedule ({e}); see the install lines in this file's docstring")

    if __name__ != "__main__":  # the builder processes get fast_build by value, not by module name
        import cloudpickle

        cloudpickle.register_pickle_by_value(sys.modules[__name__])
    t0 = time.perf_counter()
    import tvm.s_tir.tensor_intrin  # noqa: F401  (imported once by MetaSchedule; kept out of the tuning times)

    intrin_import_s = time.perf_counter() - t0
    target = tvm.target.Target({"kind": "llvm", "mcpu": tvm.target.codegen.llvm_get_system_cpu(),
                                "num-cores": args.threads})
    result = {"tvm": tvm.__version__, "target": str(target), "threads": args.threads, "space": args.space,
              "n_trial": args.n_trial, "reps": args.reps,
              "tensor_intrin_import_s": intrin_import_s, "loadavg_before": os.getloadavg(),
              "started": time.strftime("%Y-%m-%d %H:%M:%S"), "kernels": []}
    workdir = tempfile.mkdtemp(prefix="run_tvm_")
    try:
        for kernel in kernels:
            if kernel == "gemm":
                n = args.gemm_n
                defines, func, template = [f"N={n}"], gemm_te(n), gemm_template(n)
                data = gemm_data(n)
            else:
                nc, n = args.conv_nc, args.conv_n
                defines, func = [f"NC={nc}", f"N={n}"], conv2d_te(nc, n)
                template, data = conv2d_template(nc, n), conv2d_data(nc, n)
            exe, gcc_cmd = build_c(kernel, defines, workdir)
            krow = {"kernel": kernel, "defines": defines, "gcc": gcc_cmd, "tuners": []}
            built = []
            for tuner in tuners:
                print(f"[run_tvm] {kernel} {' '.join(defines)}: {tuner} ({args.space}), {args.n_trial} trials",
                      file=sys.stderr, flush=True)
                row, rt = tune_one(kernel, func, template, tuner, args, target, workdir)
                if rt is not None:
                    ok, cs, targs = check(kernel, rt, data)
                    row["numpy_ok"] = ok
                    row["checksum"] = cs
                    built.append((row, rt, targs))
                krow["tuners"].append(row)
            # final timing: gcc binary and every tuner's best, interleaved round by round
            dev = tvm.cpu()
            gcc_times, c_cs = [], None
            tvm_times = [[] for _ in built]
            evals = [rt.time_evaluator(rt.entry_name, dev, number=1, repeat=1, min_repeat_ms=0)
                     for _, rt, _ in built]
            for _ in range(args.reps):
                t, c_cs = run_c(exe)
                gcc_times.append(t)
                for idx, (_, _, targs) in enumerate(built):
                    tvm_times[idx].append(float(evals[idx](*targs).results[0]))
            krow["gcc_O3_s"] = statistics.median(gcc_times)
            krow["gcc_times"] = gcc_times
            krow["c_checksum"] = c_cs
            for (row, _, _), ts in zip(built, tvm_times):
                row["best_s"] = statistics.median(ts)
                row["times"] = ts
                row["speedup_vs_gcc"] = krow["gcc_O3_s"] / row["best_s"]
                row["checksum_ok"] = abs(row["checksum"] - c_cs) <= 1e-9 * abs(c_cs)
            result["kernels"].append(krow)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    result["loadavg_after"] = os.getloadavg()
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")

    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    print(markdown(result) if args.markdown else json.dumps(result, indent=1))
    bad = [(k["kernel"], r["tuner"]) for k in result["kernels"] for r in k["tuners"]
           if not (r.get("numpy_ok") and r.get("checksum_ok"))]
    if bad:
        sys.exit(f"results differ from numpy / the C program's checksum: {bad}")


def markdown(result):
    def f(v, fmt="{:.4f}"):
        return "-" if v is None else fmt.format(v)

    lines = [f"TVM {result['tvm']} MetaSchedule ({result['space']} space), target `{result['target']}`, "
             f"TVM_NUM_THREADS={result['threads']}, {result['n_trial']} trials per tuner; times: median of "
             f"{result['reps']} interleaved rounds; gcc -O3: the original C, one thread. "
             f"Load average before: {', '.join(f'{x:.2f}' for x in result['loadavg_before'])}.",
             "",
             "| kernel | size | tuner | configs measured | tuning wall (s) | best in tuning (s) | TVM best (s) "
             "| gcc -O3 (s) | TVM vs gcc -O3 | correct | knobs |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for k in result["kernels"]:
        for r in k["tuners"]:
            correct = "yes" if r.get("numpy_ok") and r.get("checksum_ok") else "NO"
            names = KNOB_NAMES.get(k["kernel"]) if result["space"] == "template" else None
            kn = r.get("knobs")
            knob_s = (", ".join(f"{a}={b}" for a, b in zip(names, kn)) if names and kn else str(kn))
            lines.append(f"| {k['kernel']} | {' '.join('-D' + d for d in k['defines'])} | {r['tuner']} "
                         f"| {r['measured']} ({r['valid']} valid) | {r['tune_wall_s']:.1f} "
                         f"| {f(r['best_in_tuning_s'])} | {f(r.get('best_s'))} | {f(k['gcc_O3_s'])} "
                         f"| {f(r.get('speedup_vs_gcc'), '{:.2f}x')} | {correct} | {knob_s} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
