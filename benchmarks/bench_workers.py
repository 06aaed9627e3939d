"""Issue 18's `polytune bench` over many workers: one bench of several benchmarks/pluto kernels, its tuning runs
one after another against all at once, on the local pool and on a Ray cluster of 4 timer nodes.

Four modes, one after another, each alone on the machine, the same bench command but for the workers:

- `jobs-1`: `--jobs J --tunes-at-once 1`: the local pool, the kernels' tunes one after another (as before);
- `jobs`: `--jobs J` (default: 2 tunes at once, threads of the bench sharing one local pool of J compile jobs
  and its one timer);
- `ray-1`: `--ray ADDRESS --tunes-at-once 1`: the Ray cluster, the tunes one after another;
- `ray`: `--ray ADDRESS` (default: one tune per timer slot of the cluster, here 4, sharing one Ray pool).

The cluster is `benchmarks/workers.py`'s (one node per timer group of --threads CPUs, a compile node, the
timer nodes' services on the compile node's CPUs, the bench's driver on its own CPUs); the local modes run
pinned to every CPU given (timings on the first --threads, compiles on the rest). Reported per mode: the bench's
wall time, its tuning phase (`tuning_s` of results.json: all tunes, before the sessions), each kernel's tuning
(evaluations, search seconds, best) and the session's speedups over gcc -O3 of the seed and the tuned kernel;
then the tuning phase one-after-another over at-once, for each kind of workers. Usage:

    python benchmarks/bench_workers.py [--kernels gemm,jacobi-2d,seidel-2d,lu] [--defines N=1000,TSTEPS=20]
        [--max-evals 13] [--strategies hill] [--threads 2] [--modes jobs-1,jobs,ray-1,ray] [--out FILE.json]
        [--markdown-out FILE.md] [--deadline S] [--quick]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

MODES = ("jobs-1", "jobs", "ray-1", "ray")


def _workers_script():
    """benchmarks/workers.py (the cluster layout and start), loaded as a module."""
    spec = importlib.util.spec_from_file_location("workers_bench", os.path.join(HERE, "workers.py"))
    module = sys.modules["workers_bench"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_bench(wb, args, mode: str, extra: list[str], cpus: str, out_dir: str, timeout: float) -> dict:
    """One `polytune bench` subprocess; its record."""
    report = os.path.join(out_dir, mode)
    shutil.rmtree(report, ignore_errors=True)
    cmd = [sys.executable, "-m", "polytune", "bench",
           *(os.path.join(HERE, "pluto", k + ".c") for k in args.kernels.split(",")),
           *(x for d in args.defines.split(",") if d for x in ("-D", d)),
           "--threads", str(args.threads), "--runs", str(args.runs), "--strategies", args.strategies,
           "--max-evals", str(args.max_evals), "--compilers", "gcc", *extra, "--report", report]
    rec, log = wb.run_polytune(cmd, cpus, args.threads, mode, timeout)
    rc = rec["rc"]
    with open(os.path.join(out_dir, f"{mode}.log"), "w") as f:
        f.write(log)
    try:
        with open(os.path.join(report, "results.json")) as f:
            r = json.load(f)
    except (OSError, ValueError):
        rec["error"] = (log.strip().splitlines() or [f"rc {rc}"])[-1][-300:]
        return rec
    rec.update({"tuning_s": r.get("tuning_s"), "tunes_at_once": r.get("tunes_at_once"), "kernels": {}})
    for k in r["kernels"]:
        t = next(iter(k["tuning"].values()), None)
        best = (t or {}).get("best") or {}
        v = k["variants"]
        rec["kernels"][k["name"]] = {
            "evals": (t or {}).get("evals"), "search_s": round(t["search_time"], 2) if t else None,
            "best": best.get("config"), "best_s": best.get("median"),
            "seed_speedup": (v.get("seed") or {}).get("speedup_over_gcc"),
            "tuned_speedup": next((x.get("speedup_over_gcc") for lb, x in v.items() if lb not in ("gcc", "seed")),
                                  None),
            "notes": k["notes"]}
    if rc != 0:
        rec["error"] = (log.strip().splitlines() or [f"rc {rc}"])[-1][-300:]
    return rec


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a and b else "-"


def markdown(res: dict) -> str:
    kernels = res["kernel_list"]
    lines = [f"Kernels {', '.join(kernels)} (-D {res['defines']}), strategies {res['strategies']}, "
             f"--max-evals {res['max_evals']}, {res['threads']} threads, {res['runs']} runs; {res['cpu']}", "",
             "| mode | tunes at once | wall (s) | tuning (s) | " + " | ".join(f"{k}: evals, search s, best, tuned/gcc"
                                                              for k in kernels) + " |",
             "|---|---|---|---|" + "---|" * len(kernels)]
    for m in res["modes"]:
        x = res["results"].get(m, {})
        if "tuning_s" not in x:
            lines.append(f"| {m} | - | - | - | {x.get('error', 'not run')} |" + " |" * (len(kernels) - 1))
            continue
        cells = []
        for k in kernels:
            y = x["kernels"].get(k, {})
            sp = y.get("tuned_speedup")
            cells.append(f"{y.get('evals')}, {y.get('search_s')}, {y.get('best')}, "
                         f"{f'{sp:.2f}x' if sp else '-'}")
        lines.append(f"| {m} | {x['tunes_at_once']} | {x['wall_s']:.1f} | {x['tuning_s']:.1f} | "
                     + " | ".join(cells) + " |")
    lines.append("")
    for kind in ("jobs", "ray"):
        one, many = res["results"].get(f"{kind}-1", {}), res["results"].get(kind, {})
        lines.append(f"- {kind}: tuning one after another / at once: {ratio(one.get('tuning_s'), many.get('tuning_s'))}"
                     f"; bench wall {ratio(one.get('wall_s'), many.get('wall_s'))}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", default="gemm,jacobi-2d,seidel-2d,lu")
    ap.add_argument("--defines", default="N=1000,TSTEPS=20", help="-D macros of every kernel (comma-separated)")
    ap.add_argument("--max-evals", type=int, default=13)
    ap.add_argument("--strategies", default="hill")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--cpus", default=None, help="taskset list of the CPUs to use (default: this process's)")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--deadline", type=float, default=0, help="seconds for the whole benchmark")
    ap.add_argument("--out", default="bench_workers.json")
    ap.add_argument("--markdown-out")
    ap.add_argument("--quick", action="store_true", help="small sizes, 4 evaluations: a test run")
    args = ap.parse_args(argv)
    if args.quick:
        args.defines, args.max_evals = "N=120,TSTEPS=4", min(args.max_evals, 4)
    modes = [m for m in args.modes.split(",") if m]
    if any(m not in MODES for m in modes):
        ap.error(f"--modes: a comma-separated subset of {', '.join(MODES)}")
    wb = _workers_script()
    cpus = wb.cpu_list(args.cpus) if args.cpus else sorted(os.sched_getaffinity(0))
    timer_cpus, compile_cpus, driver_cpus = wb.layout(cpus, args.threads)
    groups = wb.groups_of(timer_cpus, args.threads)
    every = ",".join(map(str, sorted(set(timer_cpus) | set(compile_cpus) | set(driver_cpus))))
    jobs = max(2, len(cpus) - args.threads)
    out_dir = os.path.splitext(os.path.abspath(args.out))[0] + ".reports"
    os.makedirs(out_dir, exist_ok=True)
    res = {"kernel_list": args.kernels.split(","), "defines": args.defines, "strategies": args.strategies,
           "max_evals": args.max_evals, "threads": args.threads, "runs": args.runs, "modes": modes, "jobs": jobs,
           "groups": [",".join(map(str, g)) for g in groups], "compile_cpus": ",".join(map(str, compile_cpus)),
           "driver_cpus": ",".join(map(str, driver_cpus)), "cpu": wb.cpu_model(), "results": {},
           "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    os.environ["OMP_PLACES"], os.environ["OMP_PROC_BIND"] = "threads", "close"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cluster = None
    t_start = time.perf_counter()
    if any(m.startswith("ray") for m in modes):
        try:
            cluster = wb.start_ray(groups, compile_cpus, compile_cpus or driver_cpus)
            print(f"ray: {len(groups)} timer nodes at {cluster.address}", file=sys.stderr)
        except Exception as e:  # the local modes still run
            res["ray_error"] = f"{type(e).__name__}: {e}"[:300]
    try:
        for m in modes:
            left = args.deadline - (time.perf_counter() - t_start) if args.deadline else args.timeout
            if m.startswith("ray") and cluster is None:
                res["results"][m] = {"mode": m, "error": res.get("ray_error", "no Ray cluster")}
            elif left < 10:
                res["results"][m] = {"mode": m, "error": f"not started: --deadline {args.deadline} s"}
            else:
                once = ["--tunes-at-once", "1"] if m.endswith("-1") else []
                if m.startswith("ray"):
                    extra, where = ["--ray", cluster.address, *once], res["driver_cpus"]
                else:
                    extra, where = ["--jobs", str(jobs), *once], every
                print(f"{m}: bench", file=sys.stderr, flush=True)
                res["results"][m] = run_bench(wb, args, m, extra, where, out_dir, min(args.timeout, left))
            x = res["results"][m]
            print(f"{m}: " + (x.get("error") or f"{x['wall_s']:.1f} s wall, tuning {x['tuning_s']} s, "
                              f"{x['tunes_at_once']} at once"), file=sys.stderr, flush=True)
            with open(args.out, "w") as f:
                json.dump(res, f, indent=1)
    finally:
        if cluster is not None:
            cluster.shutdown()
    text = markdown(res)
    print(text)
    if args.markdown_out:
        with open(args.markdown_out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
