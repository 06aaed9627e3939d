#!/usr/bin/env python3
"""Issue 18's benchmark: the wall time of `polytune tune` with 1 worker, the local pool and a Ray cluster.

For each kernel of benchmarks/pluto, one degree-1 best-fit hill climb from the Pluto-default seed, the same
budget (--max-evals, --time-limit) in three modes, one after another:

- `one`: `--jobs 1`, pinned to the first CPU group (one candidate at a time: compile, verify, time);
- `jobs`: the local pool, `--jobs J` (default: the number of CPUs given), pinned to all the CPUs given: J compiles
  at once while one candidate at a time is timed;
- `ray`: a Ray cluster that this script starts on loopback (Ray's `cluster_utils`): one node per CPU group
  (`--threads` CPUs each, the node's processes pinned to its group with the affinity they inherit), each
  with one unit of `polytune_timer` and as many CPUs as its group: a node times one candidate at a time on its
  own cores and compiles there. `polytune tune --ray ADDRESS` runs as the driver.

Every tune runs as a subprocess with OMP_NUM_THREADS = --threads and its own cache-less measurements. Reported
per kernel and mode: wall time, search time (the tune's own clock: the original's measurement, the pool's
start and the search), evaluations, the best configuration and its time; per kernel: wall-time ratios of
`one` over `jobs` and over `ray`, whether the three found the same best configuration (and if not, how far
apart their best times are), and the search overhead: search time / one seed evaluation (the seed's compile,
verification run and timed runs, measured by the `one` run: nothing else runs then). Usage:

    python benchmarks/workers.py [--kernels gemm,jacobi-2d,lu] [--cpus 0-7] [--threads 2] [--max-evals 40]
        [--modes one,jobs,ray] [--out workers.json] [--markdown-out workers.md] [--quick]

JSON after each tune (a run cut short keeps what it finished) and a markdown table at the end.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from polytune.workers.identity import cpu_list, cpu_model  # noqa: E402

MODES = ("one", "jobs", "ray")
# sizes whose original runs about 0.1-0.3 s on one thread of the 16-core Xeon: a candidate's compile (about a
# second) then dominates its evaluation, which is what parallel compiles overlap
SIZES = {"gemm": ["-DN=500"], "jacobi-2d": ["-DN=1000", "-DTSTEPS=40"], "lu": ["-DN=600"], "mvt": ["-DN=4000"],
         "fdtd-2d": ["-DN=1000", "-DTSTEPS=40"], "cholesky": ["-DN=800"]}
QUICK_SIZES = {"gemm": ["-DN=160"], "jacobi-2d": ["-DN=200", "-DTSTEPS=10"], "lu": ["-DN=160"]}


def groups_of(cpus: list[int], size: int) -> list[list[int]]:
    return [cpus[i:i + size] for i in range(0, len(cpus) - size + 1, size)]


def start_ray(groups: list[list[int]]):
    """A Ray cluster on 127.0.0.1, one node per CPU group, each node's processes pinned to its group (they inherit
    the affinity of this process when the node starts). Returns the cluster (``cluster.address``)."""
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # keeps Ray's addresses on loopback
    # the nodes' workers run polytune's compile and timing steps: this checkout, where nothing is installed
    os.environ["PYTHONPATH"] = REPO + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
    from ray.cluster_utils import Cluster

    cluster = Cluster()
    mine = os.sched_getaffinity(0)
    try:
        for i, g in enumerate(groups):
            os.sched_setaffinity(0, set(g))
            args = {"num_cpus": len(g), "resources": {"polytune_timer": 1}}
            if i == 0:
                args["include_dashboard"] = False
            cluster.add_node(**args)
        os.sched_setaffinity(0, mine)
        cluster.wait_for_nodes()
    except BaseException:
        cluster.shutdown()  # the nodes that did start
        raise
    finally:
        os.sched_setaffinity(0, mine)
    return cluster


def tune(args, kernel: str, mode: str, cpus: str, extra: list[str], out_dir: str, timeout: float) -> dict:
    """One `polytune tune` subprocess; its record."""
    src = os.path.join(HERE, "pluto", kernel + ".c")
    report = os.path.join(out_dir, f"{kernel}.{mode}.json")
    sizes = (QUICK_SIZES if args.quick else SIZES).get(kernel, [])
    budget = (["--max-evals", str(args.max_evals)] if args.max_evals else []) + \
        (["--time-limit", str(args.time_limit)] if args.time_limit else [])
    cmd = [sys.executable, "-m", "polytune", "tune", src, *sizes, "--strategy", "hill", "--fit", "best",
           "--neighbourhood", "1", "--seed", "pluto", "--threads", str(args.threads), "--runs", str(args.runs),
           f"--cflags={args.cflags}", "--no-cache", *budget, *extra, "--report", report]
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               PYTHONPATH=REPO + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else ""))
    taskset = ["taskset", "-c", cpus] if cpus and shutil.which("taskset") else []
    if os.path.exists(report):
        os.remove(report)
    t0 = time.perf_counter()
    try:
        p = subprocess.run(taskset + cmd, capture_output=True, text=True, env=env, cwd=REPO, timeout=timeout)
        rc, log = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        rc, log = 124, f"killed after {timeout:.0f} s (--timeout or --deadline)"
    wall = time.perf_counter() - t0
    rec: dict = {"mode": mode, "cpus": cpus, "command": shlex.join(taskset + cmd), "rc": rc, "wall_s": round(wall, 2)}
    try:
        with open(report) as f:
            r = json.load(f)
    except (OSError, ValueError):
        rec["error"] = (log.strip().splitlines() or [f"rc {rc}"])[-1][-300:]
        return rec
    evals = r.get("evaluations") or []
    seed = next((e for e in evals if e.get("phase") == "seed"), None)
    rec.update({"search_s": round(r["search_time"], 2), "evals": r["evals"], "stop_reason": r["stop_reason"],
                "strategy_s": round(evals[-1]["elapsed"], 2) if evals else None,
                "seed_s": (r.get("seed") or {}).get("median"), "best_s": (r.get("best") or {}).get("median"),
                "best": (r.get("best") or {}).get("config"), "original_s": (r.get("original") or {}).get("median"),
                "seed_eval_s": round(seed["elapsed"], 3) if seed else None,
                "seed_compile_s": round(seed["compile_time"], 3) if seed and seed.get("compile_time") else None,
                "workers": r.get("workers"),
                "timed_on": sorted({e.get("extra", {}).get("worker") for e in evals} - {None})})
    if rc != 0:
        rec["error"] = (log.strip().splitlines() or [f"rc {rc}"])[-1][-300:]
    return rec


def summarize(kernel: str, recs: dict[str, dict]) -> dict:
    """Ratios, same-best and the search overhead of one kernel's runs."""
    out: dict = {}
    one = recs.get("one", {})
    ok = {m: r for m, r in recs.items() if "error" not in r}
    for m in ("jobs", "ray"):
        if "one" in ok and m in ok:
            out[f"one/{m}"] = round(ok["one"]["wall_s"] / ok[m]["wall_s"], 2)
    bests = {m: tuple(r["best"]) for m, r in ok.items() if r.get("best")}
    out["same_best"] = len(set(bests.values())) == 1 if len(bests) > 1 else None
    times = [r["best_s"] for r in ok.values() if r.get("best_s")]
    out["best_spread"] = round(max(times) / min(times) - 1, 3) if len(times) > 1 else None
    seed_eval = one.get("seed_eval_s")
    if seed_eval:
        out["seed_eval_s"] = seed_eval
        for m, r in ok.items():
            out[f"overhead_{m}"] = round(r["search_s"] / seed_eval, 1)
    return out


def secs(t: float | None) -> str:
    return "-" if t is None else f"{t:.4f} s"


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def markdown(res: dict) -> str:
    modes = res["modes"]
    head = ["kernel"] + [f"{m} wall (s)" for m in modes] + [f"one/{m}" for m in modes if m != "one"] + \
        [f"overhead {m}" for m in modes] + ["same best", "best times spread"]
    lines = [f"`polytune tune` (hill climbing, degree 1, best fit, Pluto-default seed), budget: "
             f"max_evals={res['max_evals']} time_limit={res['time_limit']}; {res['threads']} threads per timing; "
             f"one: `--jobs 1` on cpus {res['groups'][0]}; jobs: `--jobs {res['jobs']}` on cpus {res['cpus']}; "
             f"ray: {len(res['groups'])} nodes on cpus {' | '.join(res['groups'])} (one timer each; the cluster "
             f"took {res.get('ray_start_s', '-')} s to start, not counted). Overhead: "
             "search time (the tune's own clock: the original's measurement, the pool's start and the search) "
             "/ one seed evaluation (its compile, verification and timed runs, measured by `one`). On "
             f"{res['cpu']} ({res['started']}); one run each, so noisy.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k, r in res["kernels"].items():
        s = r.get("summary", {})
        row = [k]
        row += [f"{r[m]['wall_s']:.1f}" if m in r and "error" not in r[m] else ("err" if m in r else "-")
                for m in modes]
        row += [f"{s[f'one/{m}']:.2f}" if f"one/{m}" in s else "-" for m in modes if m != "one"]
        row += [f"{s[f'overhead_{m}']:.1f}" if f"overhead_{m}" in s else "-" for m in modes]
        row += [{True: "yes", False: "no", None: "-"}[s.get("same_best")],
                f"{100 * s['best_spread']:.1f}%" if s.get("best_spread") is not None else "-"]
        lines.append("| " + " | ".join(row) + " |")
    sums = [r.get("summary", {}) for r in res["kernels"].values()]
    row = ["geometric mean"] + [""] * len(modes)
    for key, fmt in [(f"one/{m}", ".2f") for m in modes if m != "one"] + [(f"overhead_{m}", ".1f") for m in modes]:
        xs = [s[key] for s in sums if key in s]
        row.append(f"**{geomean(xs):{fmt}}**" if xs else "-")
    row += ["", ""]
    lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    for k, r in res["kernels"].items():
        for m in modes:
            if m in r:
                x = r[m]
                lines.append(f"- {k} {m}: " + (f"error: {x['error']}" if "error" in x else
                             f"{x['evals']} evals ({x['stop_reason']}), search {x['search_s']:.1f} s, best "
                             f"{x['best']} {secs(x['best_s'])} (seed {secs(x['seed_s'])}), timed on "
                             f"{', '.join(x['timed_on']) or 'the tuning process'}"))
    lines.append("- targets (issue 18): the same best configuration within noise; overhead of `jobs` at most 10; "
                 "one/ray at least 3.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", default="gemm,jacobi-2d,lu", help="benchmarks/pluto kernels (comma-separated)")
    ap.add_argument("--cpus", default=None, help="taskset list of the CPUs to use (default: all of this process's)")
    ap.add_argument("--threads", type=int, default=2, help="threads of a timed run = CPUs per worker")
    ap.add_argument("--jobs", type=int, default=None, help="--jobs of the `jobs` mode (default: the CPUs given)")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--max-evals", type=int, default=40)
    ap.add_argument("--time-limit", type=float, default=0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cflags", default="-O3 -march=native")
    ap.add_argument("--timeout", type=float, default=600, help="kill a tune after this many seconds")
    ap.add_argument("--deadline", type=float, default=0,
                    help="seconds for the whole benchmark: no tune starts later, a running one is killed then")
    ap.add_argument("--out", default="workers.json")
    ap.add_argument("--markdown-out")
    ap.add_argument("--quick", action="store_true", help="small sizes, --max-evals 6: a test run")
    args = ap.parse_args(argv)
    if args.quick:
        args.max_evals = min(args.max_evals, 6)
    modes = [m for m in args.modes.split(",") if m]
    if any(m not in MODES for m in modes):
        ap.error(f"--modes: a comma-separated subset of {', '.join(MODES)}")
    cpus = cpu_list(args.cpus) if args.cpus else sorted(os.sched_getaffinity(0))
    groups = groups_of(cpus, args.threads)
    if not groups:
        ap.error(f"--cpus: fewer than --threads {args.threads} CPUs")
    text = ",".join(map(str, cpus))
    gtext = [",".join(map(str, g)) for g in groups]
    jobs = args.jobs or len(cpus)
    out_dir = os.path.splitext(os.path.abspath(args.out))[0] + ".reports"
    os.makedirs(out_dir, exist_ok=True)
    res = {"kernels": {}, "modes": modes, "max_evals": args.max_evals, "time_limit": args.time_limit,
           "threads": args.threads, "runs": args.runs, "cflags": args.cflags, "cpus": text, "groups": gtext,
           "jobs": jobs, "quick": args.quick, "cpu": cpu_model(),
           "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    cluster = None
    t_start = time.perf_counter()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `timeout`: stop the tune and the Ray cluster too
    for attempt in range(2 if "ray" in modes else 0):  # a node that times out starting (an overloaded machine)
        t0 = time.perf_counter()
        try:
            cluster = start_ray(groups)
            res["ray_start_s"] = round(time.perf_counter() - t0, 1)
            print(f"ray: {len(groups)} nodes at {cluster.address} ({res['ray_start_s']} s)", file=sys.stderr)
            break
        except Exception as e:  # Ray missing or failing to start: the other modes still run
            res["ray_error"] = f"{type(e).__name__}: {e}"[:300]
            print(f"ray: not started (try {attempt + 1} of 2): {res['ray_error']}", file=sys.stderr)
            if isinstance(e, ImportError):
                break
    try:
        for k in args.kernels.split(","):
            recs: dict = {}
            for m in modes:
                extra, where = {"one": (["--jobs", "1"], gtext[0]), "jobs": (["--jobs", str(jobs)], text),
                                "ray": (["--ray", cluster.address] if cluster else [], "")}[m]
                left = args.deadline - (time.perf_counter() - t_start) if args.deadline else args.timeout
                if m == "ray" and cluster is None:
                    recs[m] = {"mode": m, "error": res.get("ray_error", "no Ray cluster")}
                elif left < 10:
                    recs[m] = {"mode": m, "error": f"not started: --deadline {args.deadline} s"}
                else:
                    print(f"{k} {m}: tuning", file=sys.stderr, flush=True)
                    recs[m] = tune(args, k, m, where, extra, out_dir, min(args.timeout, left))
                x = recs[m]
                print(f"{k} {m}: " + (x.get("error") or f"{x['wall_s']:.1f} s wall, {x['evals']} evals, best "
                                      f"{x['best']} {secs(x['best_s'])}"), file=sys.stderr, flush=True)
                res["kernels"][k] = dict(recs, summary=summarize(k, recs))
                with open(args.out + ".tmp", "w") as f:
                    json.dump(res, f, indent=1)
                os.replace(args.out + ".tmp", args.out)
    finally:
        if cluster is not None:
            cluster.shutdown()
    text_md = markdown(res)
    print(text_md, end="")
    if args.markdown_out:
        with open(args.markdown_out, "w") as f:
            f.write(text_md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
