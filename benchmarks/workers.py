#!/usr/bin/env python3
"""Issue 18's benchmark: the wall time of `polytune tune` with 1 worker, the local pool and 4 Ray workers.

For each kernel of benchmarks/pluto, one degree-1 best-fit hill climb from the Pluto-default seed (or, with
--strategy random, --max-evals random samples), the same budget in evaluations (--max-evals) and no statistical
stop (--alpha 0), in three modes, one after another, each alone on the machine:

- `one`: `--jobs 1`, pinned to the first CPU group of --timer-cpus (one candidate at a time: compile, verify,
  time);
- `jobs`: the local pool, `--jobs J` (default: every CPU given but a timing's), pinned to all the CPUs given:
  J compiles at once while one candidate at a time is timed;
- `ray`: a Ray cluster that this script starts on loopback (Ray's `cluster_utils`): one timer node per CPU
  group of --timer-cpus (`--threads` CPUs each, one unit of `polytune_timer`), and a compile node on
  --compile-cpus (the head, no timer), each node's processes pinned to its CPUs (the affinity they inherit
  when it starts), but a timer node's own processes (raylet, agents, workers while they start) on
  --service-cpus (default: the compile node's; not the driver's, which times the original while the nodes are
  probed): only its timings run on its cores (POLYTUNE_TIMER_CPUS: the timing
  task pins itself there); `polytune tune --ray ADDRESS` runs as the driver, pinned to --driver-cpus. A timing
  node times one candidate at a time on its own cores; compiles go to the compile node first, then to the
  timer nodes' cores between their timings (enough timer nodes kept free of compiles for what the compile node
  turns out; a compile there pins itself to the node's timer CPUs too).
  Every timed run has OMP_PLACES=threads, OMP_PROC_BIND=close (--omp-bind), in every mode.

Default layout on 16 CPUs: timers 0-7 (4 pairs), compiles 8-13, driver 14-15. The sizes are set for an
evaluation (compile, verification run, 3 timed runs) of about 1.7 s on the 16-core Xeon, so that 3 kernels x 3
modes of 13 evaluations fit in one 240-s call (see SIZES). The fixed costs of a tune (starting Python and
analyzing the program; measuring the original; joining the cluster and probing its nodes; confirming the best in
the program) are then a large part of it: the table says at which budget one/ray wall time would reach 3.

Every tune runs as a subprocess with OMP_NUM_THREADS = --threads, without the measurement cache. Reported per
kernel and mode: wall time (the process), search time (the tune's own clock: the original's measurement, the
pool's start, the search and the pool's close), strategy time (from the search's start to its last
evaluation), fixed time (search - strategy), evaluations, the best configuration and its time, and for the
pools how busy the timers were (timed seconds / (timers x strategy time)), where a candidate's time went
(medians: waiting for a compile slot, compiling, and of that code generation and the compiler, waiting for a
timer, timing) and how many compiles ran (on timer nodes; finished or stopped for a dropped speculation); per
kernel: one/jobs and one/ray ratios of wall and strategy time, whether the three found the same best
configuration (and if not, how far apart their best times are), and the search overhead: search time / one seed
evaluation (the seed's compile, verification run and timed runs, measured by the `one` run: nothing else runs
then). Usage:

    python benchmarks/workers.py [--kernels gemm,jacobi-2d,fdtd-2d] [--timer-cpus 0-7] [--compile-cpus 8-13]
        [--driver-cpus 14-15] [--service-cpus 8-13] [--threads 2] [--max-evals 13] [--strategy hill]
        [--alpha 0] [--omp-bind threads] [--modes one,jobs,ray] [--size gemm=-DN=900]
        [--out workers.json] [--markdown-out workers.md] [--deadline 230] [--quick]

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
sys.path.insert(0, HERE)

from polytune.workers.identity import cpu_list, cpu_model  # noqa: E402

MODES = ("one", "jobs", "ray")
# lu is left out by default: its original runs 10x longer than the seed (0.077 s against 0.0073 s at N=600),
# so measuring the original, the same in every mode, would take a third of a one-worker tune
# the 2026-12-01 22:37 device run (gemm N=1100, jacobi-2d and fdtd-2d N=1400 TSTEPS=80): seed evaluations of 2.0 and
# 2.9 s (about 1.3 s of it generating and compiling), timed regions of 0.13 and 0.18 s, fdtd-2d's `one` past 48 s.
# A kernel's three modes take about 29 s + 23 evaluations (one: 10 s + 13 e, jobs: 6 s + 13 e / 2, ray: 13 s +
# 13 e / 4); 3 kernels and the cluster's start (19 s) fit in 235 s at e <= 1.9 s: timed regions of about 0.07 s
SIZES = {"gemm": ["-DN=900"], "jacobi-2d": ["-DN=1400", "-DTSTEPS=30"], "fdtd-2d": ["-DN=1000", "-DTSTEPS=40"],
         "lu": ["-DN=1000"], "mvt": ["-DN=8000"], "cholesky": ["-DN=1400"]}
QUICK_SIZES = {"gemm": ["-DN=160"], "jacobi-2d": ["-DN=200", "-DTSTEPS=10"], "fdtd-2d": ["-DN=200", "-DTSTEPS=10"],
               "lu": ["-DN=160"]}


def core_sharing(group: list[int], sysfs: str = "/sys/devices/system/cpu") -> str:
    """Whether a timing's CPUs are SMT siblings of one core ("one core"), on cores of their own ("own
    cores"), a mix ("mixed"), or unknown (no topology in sysfs): two threads on one core time differently."""
    cores = set()
    for c in group:
        try:
            with open(f"{sysfs}/cpu{c}/topology/physical_package_id") as f:
                package = f.read().strip()
            with open(f"{sysfs}/cpu{c}/topology/core_id") as f:
                cores.add((package, f.read().strip()))
        except OSError:
            return "unknown"
    return "one core" if len(cores) == 1 < len(group) else "own cores" if len(cores) == len(group) else "mixed"


def groups_of(cpus: list[int], size: int) -> list[list[int]]:
    return [cpus[i:i + size] for i in range(0, len(cpus) - size + 1, size)]


def layout(cpus: list[int], threads: int) -> tuple[list[int], list[int], list[int]]:
    """Default (timer, compile, driver) CPUs: on 12 or more, 4 timer groups first, the driver on the last
    `threads`, compiles between; on fewer, every CPU times and compiles, the driver unpinned."""
    if len(cpus) >= 4 * threads + threads + 2:
        return cpus[:4 * threads], cpus[4 * threads:-threads], cpus[-threads:]
    return cpus, [], []


def start_ray(groups: list[list[int]], compile_cpus: list[int], service_cpus: list[int] | None = None):
    """A Ray cluster on 127.0.0.1: a node per timer group (its CPUs, one polytune_timer) and, with
    ``compile_cpus``, a compile node (the head: Ray's own services run there, not on a timer's cores), each
    node's processes pinned to its CPUs (they inherit this process's affinity when the node starts). With
    ``service_cpus``, a timer node's own processes (its raylet and agents, its workers while they start and
    import) run there instead, and its timings alone on its group (``ray_pool.TIMER_CPUS_ENV``: the timing
    task pins itself). Returns the cluster (``cluster.address``)."""
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # keeps Ray's addresses on loopback
    # the nodes' workers run polytune's compile and timing steps: this checkout, where nothing is installed
    os.environ["PYTHONPATH"] = REPO + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
    from ray.cluster_utils import Cluster

    nodes = ([(compile_cpus, {})] if compile_cpus else []) + [(g, {"polytune_timer": 1}) for g in groups]
    cluster = Cluster()
    mine = os.sched_getaffinity(0)
    try:
        for i, (cpus, resources) in enumerate(nodes):
            timer = bool(resources)
            os.sched_setaffinity(0, set(service_cpus if timer and service_cpus else cpus))
            os.environ.pop("POLYTUNE_TIMER_CPUS", None)
            if timer and service_cpus:
                os.environ["POLYTUNE_TIMER_CPUS"] = ",".join(map(str, cpus))
            args = {"num_cpus": len(cpus), "resources": resources}
            if i == 0:
                args["include_dashboard"] = False
            cluster.add_node(**args)
        os.sched_setaffinity(0, mine)
        os.environ.pop("POLYTUNE_TIMER_CPUS", None)
        cluster.wait_for_nodes()
    except BaseException:
        cluster.shutdown()  # the nodes that did start
        raise
    finally:
        os.sched_setaffinity(0, mine)
        os.environ.pop("POLYTUNE_TIMER_CPUS", None)
    return cluster


def _busy(evals: list[dict], timers: int, strategy_s: float | None) -> float | None:
    """Timed seconds of the pool's timers over timers x strategy time (None without spans)."""
    spans = [e["extra"]["spans"]["time"] for e in evals if "time" in e.get("extra", {}).get("spans", {})]
    if not spans or not strategy_s or not timers:
        return None
    return round(sum(b - a for a, b in spans) / (timers * strategy_s), 2)


def _gaps(evals: list[dict]) -> dict:
    """Median seconds per candidate (from the spans): submission to compile start (queueing for a compile slot,
    Ray's dispatch, a fresh worker's start), compile, and of it code generation (a worker's first also analyzes
    the program) and the compiler, compile end to timing start (the artifact's way back and out, queueing for
    a timer), timing."""
    timed = [e for e in evals if "spans" in e.get("extra", {})]
    spans = [e["extra"]["spans"] for e in timed]

    def median(xs: list[float]) -> float | None:
        xs = sorted(xs)
        return round(xs[len(xs) // 2], 3) if xs else None

    return {"to_compile": median([s["compile"][0] - s["submitted"] for s in spans]),
            "compile": median([s["compile"][1] - s["compile"][0] for s in spans]),
            "generate": median([s["generate"] for s in spans if "generate" in s]),
            "gcc": median([e["compile_time"] for e in timed if e.get("compile_time")]),
            "to_time": median([s["time"][0] - s["compile"][1] for s in spans if "time" in s]),
            "time": median([s["time"][1] - s["time"][0] for s in spans if "time" in s])}


def _outliers(evals: list[dict], factor: float = 1.5) -> dict:
    """The timed runs' noise: how many evaluations had a run over *factor* x their median, and the worst ratio."""
    ratios = [max(e["times"]) / e["median"] for e in evals if e.get("times") and e.get("median")]
    return {"evals": len(ratios), "over": sum(r > factor for r in ratios),
            "worst": round(max(ratios), 2) if ratios else None}


def evals_for(one: dict, pool: dict, target: float = 3.0) -> float | None:
    """The budget (evaluations) at which one/pool wall time would reach *target*, from each run's fixed part (wall
    - strategy) and strategy time per evaluation; inf where the per-evaluation ratio stays below it, None without
    data."""
    if not (one.get("strategy_s") and pool.get("strategy_s") and one.get("evals") and pool.get("evals")):
        return None
    a1, b1 = one["wall_s"] - one["strategy_s"], one["strategy_s"] / one["evals"]
    a2, b2 = pool["wall_s"] - pool["strategy_s"], pool["strategy_s"] / pool["evals"]
    if b1 <= target * b2:
        return math.inf
    return max(1.0, math.ceil((target * a2 - a1) / (b1 - target * b2)))


def run_polytune(cmd: list[str], cpus: str, threads: int, mode: str, timeout: float) -> tuple[dict, str]:
    """Run a polytune command line under `taskset -c cpus` (where given), OMP_NUM_THREADS = *threads*, this
    checkout first on PYTHONPATH: its record (mode, cpus, the command, rc: 124 when killed after *timeout*,
    wall_s) and what it printed."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads),
               PYTHONPATH=REPO + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else ""))
    taskset = ["taskset", "-c", cpus] if cpus and shutil.which("taskset") else []
    t0 = time.perf_counter()
    try:
        p = subprocess.run(taskset + cmd, capture_output=True, text=True, env=env, cwd=REPO, timeout=timeout)
        rc, log = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        rc, log = 124, f"killed after {timeout:.0f} s (--timeout or --deadline)"
    return {"mode": mode, "cpus": cpus, "command": shlex.join(taskset + cmd), "rc": rc,
            "wall_s": round(time.perf_counter() - t0, 2)}, log


def tune(args, kernel: str, mode: str, cpus: str, extra: list[str], out_dir: str, timeout: float) -> dict:
    """One `polytune tune` subprocess; its record."""
    src = os.path.join(HERE, "pluto", kernel + ".c")
    report = os.path.join(out_dir, f"{kernel}.{mode}.json")
    sizes = args.sizes.get(kernel) or (QUICK_SIZES if args.quick else SIZES).get(kernel, [])
    budget = (["--max-evals", str(args.max_evals)] if args.max_evals else []) + \
        (["--time-limit", str(args.time_limit)] if args.time_limit else [])
    strategy = ["--strategy", "hill", "--fit", "best", "--neighbourhood", str(args.degree)] \
        if args.strategy == "hill" else \
        ["--strategy", "random", "--samples", str(args.max_evals or 13), "--rng-seed", "1"]
    cmd = [sys.executable, "-m", "polytune", "tune", src, *sizes, *strategy, "--seed", "pluto",
           "--threads", str(args.threads), "--runs", str(args.runs),
           f"--cflags={args.cflags}", "--no-cache", *budget, *extra, "--report", report]
    cmd[-2:-2] = ["--alpha", str(args.alpha)]
    if os.path.exists(report):
        os.remove(report)
    launched = time.time()
    rec, log = run_polytune(cmd, cpus, args.threads, mode, timeout)
    rc = rec["rc"]
    try:
        with open(report) as f:
            r = json.load(f)
    except (OSError, ValueError):
        rec["error"] = (log.strip().splitlines() or [f"rc {rc}"])[-1][-300:]
        return rec
    evals = r.get("evaluations") or []
    seed = next((e for e in evals if e.get("phase") == "seed"), None)
    strategy_s = round(evals[-1]["elapsed"], 2) if evals else None
    workers = r.get("workers") or {}
    timers = len(workers.get("timers") or []) or (1 if workers else 0)
    submitted = [e["extra"]["spans"]["submitted"] for e in evals if "spans" in e.get("extra", {})]
    rec.update({"search_s": round(r["search_time"], 2), "evals": r["evals"], "stop_reason": r["stop_reason"],
                "strategy_s": strategy_s,
                "fixed_s": round(r["search_time"] - strategy_s, 2) if strategy_s is not None else None,
                "first_submit_s": round(min(submitted) - launched, 2) if submitted else None,
                "timers_busy": _busy(evals, timers, strategy_s), "gaps": _gaps(evals), "runs": _outliers(evals),
                "seed_s": (r.get("seed") or {}).get("median"), "best_s": (r.get("best") or {}).get("median"),
                "best": (r.get("best") or {}).get("config"), "original_s": (r.get("original") or {}).get("median"),
                "best_tiles": (r.get("best_build") or {}).get("tile_sizes"),
                "seed_eval_s": round(seed["elapsed"], 3) if seed else None,
                "seed_compile_s": round(seed["compile_time"], 3) if seed and seed.get("compile_time") else None,
                "workers": r.get("workers"), "spans": r.get("spans"),
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
            if ok["one"].get("strategy_s") and ok[m].get("strategy_s"):
                out[f"strategy one/{m}"] = round(ok["one"]["strategy_s"] / ok[m]["strategy_s"], 2)
                # per evaluation: comparable where a mode's search stopped earlier than another's
                out[f"per-eval one/{m}"] = round(ok["one"]["strategy_s"] / ok["one"]["evals"]
                                                 / (ok[m]["strategy_s"] / ok[m]["evals"]), 2)
                n = evals_for(ok["one"], ok[m])
                out[f"evals for 3x one/{m}"] = "never" if n == math.inf else n
    bests = {m: tuple(r["best"]) for m, r in ok.items() if r.get("best")}
    out["same_best"] = len(set(bests.values())) == 1 if len(bests) > 1 else None
    times = [r["best_s"] for r in ok.values() if r.get("best_s")]
    out["best_spread"] = round(max(times) / min(times) - 1, 3) if len(times) > 1 else None
    evals = {r["evals"] for r in ok.values()}
    out["same_evals"] = len(evals) == 1 if len(ok) > 1 else None
    seed_eval = one.get("seed_eval_s")
    if seed_eval:
        out["seed_eval_s"] = seed_eval
        for m, r in ok.items():
            out[f"overhead_{m}"] = round(r["search_s"] / seed_eval, 1)
    return out


def side_by_side(args, kernel: str, recs: dict[str, dict], cpus: str, out_dir: str) -> dict | None:
    """The modes' distinct bests timed again beside each other: each built by `polytune optimize --tile-sizes`
    and gcc with --cflags, run --side-rounds times in alternating order (forward, then backward) on *cpus* with
    --threads threads; per configuration the ratio of its time to the fastest one's, paired by round
    (benchmarks/verdicts.py: geometric mean, 95% interval), and whether it is within --same-tolerance of it.
    None where the modes agree (or fewer than two have a best)."""
    from verdicts import decide, paired_ratio  # noqa: E402  (benchmarks/)
    configs: dict[tuple, list[str]] = {}
    for m, r in recs.items():
        if "error" not in r and r.get("best_tiles"):
            configs.setdefault(tuple(r["best_tiles"]), []).append(m)
    if len(configs) < 2 or args.side_rounds < 2:
        return None
    src = os.path.join(HERE, "pluto", kernel + ".c")
    sizes = args.sizes.get(kernel) or (QUICK_SIZES if args.quick else SIZES).get(kernel, [])
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               PYTHONPATH=REPO + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else ""))
    taskset = ["taskset", "-c", cpus] if cpus and shutil.which("taskset") else []
    exes: dict[tuple, str] = {}
    for tiles in configs:
        stem = os.path.join(out_dir, f"{kernel}.best-{'-'.join(map(str, tiles))}")
        subprocess.run([sys.executable, "-m", "polytune", "optimize", src, *sizes, "--tile-sizes",
                        ",".join(map(str, tiles)), "-o", stem + ".c"], check=True, cwd=REPO, env=env,
                       capture_output=True)
        subprocess.run(["gcc", *shlex.split(args.cflags), "-fopenmp", *sizes, stem + ".c", "-o", stem, "-lm"],
                       check=True, capture_output=True)
        exes[tiles] = stem
    times: dict[tuple, list[float]] = {t: [] for t in configs}
    order = list(configs)
    for i in range(args.side_rounds):
        for tiles in (order if i % 2 == 0 else order[::-1]):
            out = subprocess.run(taskset + [exes[tiles]], capture_output=True, text=True, env=env, check=True).stdout
            times[tiles].append(float(out.split("time:")[1].split()[0]))
    med = {t: sorted(x)[len(x) // 2] for t, x in times.items()}
    fastest = min(med, key=med.get)
    rows = []
    for tiles, modes in configs.items():
        r = paired_ratio(times[tiles], times[fastest]) if tiles != fastest else \
            {"ratio": 1.0, "low": 1.0, "high": 1.0, "rounds": args.side_rounds}
        d = decide(r["ratio"], r["low"], r["high"], args.same_tolerance, r["rounds"], upper_only=True) \
            if tiles != fastest else {"verdict": "holds"}
        rows.append({"tiles": list(tiles), "modes": modes, "median_s": med[tiles], **r, **d})
    return {"rounds": args.side_rounds, "cpus": cpus, "tolerance": args.same_tolerance, "configs": rows,
            "same_within_noise": all(x["verdict"] == "holds" for x in rows),
            "undecided": any(x["verdict"] == "undecided" for x in rows)}


def secs(t: float | None) -> str:
    return "-" if t is None else f"{t:.4f} s"


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def markdown(res: dict) -> str:
    modes = res["modes"]
    pools = [m for m in modes if m != "one"]
    head = ["kernel"] + [f"{m} wall (s)" for m in modes] + [f"evals {m}" for m in modes] + \
        [f"one/{m} wall" for m in pools] + [f"one/{m} strategy" for m in pools] + \
        [f"one/{m} per eval" for m in pools] + [f"evals for 3x one/{m} wall" for m in pools] + \
        [f"overhead {m}" for m in modes] + ["same best", "best times spread"]
    ray_where = (f"{len(res['groups'])} timer nodes on cpus {' | '.join(res['groups'])}"
                 + (f", a compile node on {res['compile_cpus']}" if res.get("compile_cpus") else "")
                 + (f", the driver on {res['driver_cpus']}" if res.get("driver_cpus") else "")
                 + (f", the timer nodes' Ray processes on {res['service_cpus']} (only the timings on a timer's "
                    "cores)" if res.get("service_cpus") else ""))
    what = f"hill climbing, degree {res.get('degree', 1)}, best fit, Pluto-default seed" \
        if res.get("strategy", "hill") == "hill" \
        else f"random sampling, {res['max_evals']} samples"
    omp = res.get("omp") or {}
    sharing = ", ".join(dict.fromkeys(res.get("timer_cores") or ["-"]))  # (SMT siblings time differently)
    lines = [f"`polytune tune` ({what}), budget: "
             f"max_evals={res['max_evals']} time_limit={res['time_limit']} alpha={res.get('alpha')}; "
             f"OMP_PLACES={omp.get('OMP_PLACES')} OMP_PROC_BIND={omp.get('OMP_PROC_BIND')}; "
             f"{res['threads']} threads per timing, "
             f"{res['runs']} timed runs (a timing's CPUs: {sharing}); "
             f"one: `--jobs 1` on cpus {res['groups'][0]}; jobs: `--jobs {res['jobs']}` on "
             f"cpus {res['cpus']}; ray: {ray_where} (the cluster took {res.get('ray_start_s', '-')} s to start, "
             "not counted). Wall: the tune's process. Strategy: from the search's start to its last evaluation "
             "(after the original's measurement and the pool's start). Per eval: strategy time per evaluation. "
             "Evals for 3x: the budget at which one/pool wall time would reach 3, from each run's fixed part (wall - "
             "strategy) and strategy time per evaluation (never: the per-evaluation ratio is below 3). "
             "Overhead: search time (the tune's own "
             "clock: the original's measurement, the pool's start and close, and the search) / one seed evaluation "
             f"(its compile, verification and timed runs, measured by `one`). On {res['cpu']} ({res['started']}); "
             "one run each, so noisy.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k, r in res["kernels"].items():
        s = r.get("summary", {})
        row = [k]
        row += [f"{r[m]['wall_s']:.1f}" if m in r and "error" not in r[m] else ("err" if m in r else "-")
                for m in modes]
        row += [str(r[m]["evals"]) if m in r and "error" not in r[m] else "-" for m in modes]
        row += [f"{s[f'one/{m}']:.2f}" if f"one/{m}" in s else "-" for m in pools]
        row += [f"{s[f'strategy one/{m}']:.2f}" if f"strategy one/{m}" in s else "-" for m in pools]
        row += [f"{s[f'per-eval one/{m}']:.2f}" if f"per-eval one/{m}" in s else "-" for m in pools]
        row += [str(s.get(f"evals for 3x one/{m}", "-")) for m in pools]
        row += [f"{s[f'overhead_{m}']:.1f}" if f"overhead_{m}" in s else "-" for m in modes]
        side = s.get("side_by_side")
        same = {True: "yes", False: "no", None: "-"}[s.get("same_best")]
        if side:
            same += "; side by side: " + ("within noise" if side["same_within_noise"] else
                                          "undecided" if side["undecided"] else "not within noise")
        row += [same,
                f"{100 * s['best_spread']:.1f}%" if s.get("best_spread") is not None else "-"]
        lines.append("| " + " | ".join(row) + " |")
    sums = [r.get("summary", {}) for r in res["kernels"].values()]
    row = ["geometric mean"] + [""] * (2 * len(modes))
    keys = [(f"one/{m}", ".2f") for m in pools] + [(f"strategy one/{m}", ".2f") for m in pools] + \
        [(f"per-eval one/{m}", ".2f") for m in pools] + [(None, "") for m in pools] + \
        [(f"overhead_{m}", ".1f") for m in modes]
    for key, fmt in keys:
        xs = [s[key] for s in sums if key in s] if key else []
        row.append(f"**{geomean(xs):{fmt}}**" if xs else "")
    row += ["", ""]
    lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    for k, r in res["kernels"].items():
        for m in modes:
            if m not in r:
                continue
            x = r[m]
            if "error" in x:
                lines.append(f"- {k} {m}: error: {x['error']}")
                continue
            per_eval = r.get("summary", {}).get(f"per-eval one/{m}")
            if per_eval is not None:
                busy = f", strategy time per evaluation one/{m} {per_eval:.2f}"
            else:
                busy = ""
            busy += f", timers busy {100 * x['timers_busy']:.0f}%" if x.get("timers_busy") is not None else ""
            g = x.get("gaps") or {}
            if g.get("compile") is not None:
                parts = "" if g.get("generate") is None else \
                    f" ({g['generate']:.2f} s generating, {g.get('gcc') or 0:.2f} s in the compiler)"
                busy += (f", per candidate (medians): {g['to_compile']:.2f} s to its compile, {g['compile']:.2f} s "
                         f"compiling{parts}, {g['to_time'] or 0:.2f} s to its timing, {g['time'] or 0:.2f} s timing")
            c = (x.get("workers") or {}).get("compiles") or {}
            if c.get("compiles"):
                busy += (f", {c['compiles']} compiles ({c.get('on_timer_nodes', 0)} on timer nodes), "
                         f"{c['discarded']} of them finished for dropped speculation ({c['discarded_s']:.1f} s), "
                         f"{c.get('stopped', 0)} stopped")
            n = x.get("runs") or {}
            if n.get("evals"):
                busy += (f", runs over 1.5x their median in {n['over']} of {n['evals']} evaluations "
                         f"(worst {n['worst']}x)")
            first = f", first candidate submitted {x['first_submit_s']:.1f} s after launch" \
                if x.get("first_submit_s") is not None else ""
            w = x.get("workers") or {}
            if "connect_s" in w:
                first += f" (joining Ray {w['connect_s']:.1f} s, probing its nodes {w['probe_s']:.1f} s)"
            sp = x.get("spans") or {}
            if sp:
                parts = [f"{name} {sp[key]:.1f} s" for key, name in
                         (("original", "measuring the original"), ("workers", "opening the workers"),
                          ("search", "the search"), ("confirm", "confirming the best"), ("close", "closing"))
                         if key in sp]
                busy += f"; the tune's clock: {', '.join(parts)}" + \
                    (" (the original and the workers at once)" if sp.get("overlapped") else "") + \
                    f", and {x['wall_s'] - x['search_s']:.1f} s before (start-up, analysis) and after it"
            lines.append(f"- {k} {m}: {x['evals']} evals ({x['stop_reason']}), search {x['search_s']:.1f} s = "
                         f"strategy {x['strategy_s']:.1f} s + fixed {x['fixed_s']:.1f} s{first}{busy}; best "
                         f"{x['best']} {secs(x['best_s'])} (seed {secs(x['seed_s'])}, original "
                         f"{secs(x['original_s'])}, seed evaluation {x['seed_eval_s']} s), timed on "
                         f"{', '.join(x['timed_on']) or 'the tuning process'}")
    for k, r in res["kernels"].items():
        side = r.get("summary", {}).get("side_by_side")
        if side:
            lines.append(f"- {k}: the modes' bests side by side ({side['rounds']} alternating rounds on cpus "
                         f"{side['cpus']}, time / the fastest's, paired, 95% interval, within "
                         f"{100 * side['tolerance']:.0f}%): " + "; ".join(
                             f"{x['tiles']} ({', '.join(x['modes'])}) {x['median_s']:.4f} s, {x['ratio']:.3f}x"
                             + (f" ({x['low']:.3f}-{x['high']:.3f})" if x.get("low") and x["ratio"] != 1.0 else "")
                             + f" {x['verdict']}" for x in side["configs"]))
    lines.append("- targets (issue 18): the same best configuration within noise; overhead of `jobs` at most 10; "
                 "one/ray at least 3.")
    return "\n".join(lines) + "\n"


def cpus_arg(text: str | None) -> list[int] | None:
    return None if text is None else (cpu_list(text) if text.strip() else [])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", default="gemm,jacobi-2d,fdtd-2d", help="benchmarks/pluto kernels (comma-separated)")
    ap.add_argument("--cpus", default=None, help="taskset list of the CPUs to use (default: all of this process's); "
                    "the layout below is taken from them unless given")
    ap.add_argument("--timer-cpus", default=None, help="CPUs of the Ray timer nodes, --threads each (`one` runs on "
                    "the first group)")
    ap.add_argument("--compile-cpus", default=None, help="CPUs of the Ray compile node ('': none)")
    ap.add_argument("--driver-cpus", default=None, help="CPUs of the `ray` mode's driver ('': unpinned)")
    ap.add_argument("--service-cpus", default=None, help="CPUs of the Ray timer nodes' own processes (raylet, "
                    "agents, starting workers), so that only the timed runs use a timer's cores (default: the "
                    "compile node's, else the driver's; '': each node's processes on its timer's cores)")
    ap.add_argument("--threads", type=int, default=2, help="threads of a timed run = CPUs per timer node")
    ap.add_argument("--jobs", type=int, default=None, help="--jobs of the `jobs` mode (default: the CPUs given "
                    "but --threads)")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--max-evals", type=int, default=13, help="the budget (default: the seed and 2 whole "
                    "neighbourhoods of a 3-parameter degree-1 hill climb, 1 + 6 + 6)")
    ap.add_argument("--strategy", choices=("hill", "random"), default="hill", help="hill: degree-1 best fit from "
                    "the Pluto seed (it may converge before the budget, at a different count in each mode); random: "
                    "--max-evals samples, the same in every mode")
    ap.add_argument("--degree", type=int, default=1, help="the hill climb's neighbourhood degree (2: a step of "
                    "3 tile sizes has 18 neighbours, 6 at degree 1)")
    ap.add_argument("--time-limit", type=float, default=0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--alpha", type=float, default=0, help="tune's --alpha (default 0: medians only, no "
                    "statistical stop, so that no mode stops on one noisy run where another goes on)")
    ap.add_argument("--omp-bind", default="threads", help="OMP_PLACES of every timed run, with OMP_PROC_BIND=close "
                    "(each thread on one CPU of its group, no migration); '': leave the environment's")
    ap.add_argument("--size", action="append", default=[], metavar="KERNEL=-DN=...,-DTSTEPS=...",
                    help="a kernel's size macros instead of the default")
    ap.add_argument("--cflags", default="-O3 -march=native")
    ap.add_argument("--timeout", type=float, default=600, help="kill a tune after this many seconds")
    ap.add_argument("--deadline", type=float, default=0,
                    help="seconds for the whole benchmark: no tune starts later, a running one is killed then")
    ap.add_argument("--out", default="workers.json")
    ap.add_argument("--markdown-out")
    ap.add_argument("--quick", action="store_true", help="small sizes, --max-evals 6: a test run")
    ap.add_argument("--side-rounds", type=int, default=21, help="rounds of the side-by-side timing of the "
                    "modes' distinct bests (0: none)")
    ap.add_argument("--same-tolerance", type=float, default=0.03, help="a best within this fraction of the "
                    "fastest best, timed side by side, is the same best within noise")
    args = ap.parse_args(argv)
    if args.quick:
        args.max_evals = min(args.max_evals, 6)
    modes = [m for m in args.modes.split(",") if m]
    if any(m not in MODES for m in modes):
        ap.error(f"--modes: a comma-separated subset of {', '.join(MODES)}")
    args.sizes = {}
    for spec in args.size:
        kernel, _, macros = spec.partition("=")
        args.sizes[kernel] = [m for m in macros.split(",") if m]
    cpus = cpu_list(args.cpus) if args.cpus else sorted(os.sched_getaffinity(0))
    timer_cpus, compile_cpus, driver_cpus = layout(cpus, args.threads)
    timer_cpus = cpus_arg(args.timer_cpus) if args.timer_cpus is not None else timer_cpus
    compile_cpus = cpus_arg(args.compile_cpus) if args.compile_cpus is not None else compile_cpus
    driver_cpus = cpus_arg(args.driver_cpus) if args.driver_cpus is not None else driver_cpus
    # not the driver's: it times the original while the nodes are probed (their workers start then)
    service_cpus = cpus_arg(args.service_cpus) if args.service_cpus is not None else (compile_cpus or driver_cpus)
    groups = groups_of(timer_cpus, args.threads)
    if not groups:
        ap.error(f"--timer-cpus: fewer than --threads {args.threads} CPUs")
    every = sorted(set(timer_cpus) | set(compile_cpus) | set(driver_cpus))
    text = ",".join(map(str, every))
    gtext = [",".join(map(str, g)) for g in groups]
    jobs = args.jobs or max(2, len(every) - args.threads)
    out_dir = os.path.splitext(os.path.abspath(args.out))[0] + ".reports"
    os.makedirs(out_dir, exist_ok=True)
    res = {"kernels": {}, "modes": modes, "max_evals": args.max_evals, "time_limit": args.time_limit,
           "alpha": args.alpha, "threads": args.threads, "runs": args.runs, "cflags": args.cflags, "cpus": text,
           "groups": gtext, "timer_cores": [core_sharing(g) for g in groups],
           "compile_cpus": ",".join(map(str, compile_cpus)), "driver_cpus": ",".join(map(str, driver_cpus)),
           "service_cpus": ",".join(map(str, service_cpus)),
           "jobs": jobs, "quick": args.quick, "cpu": cpu_model(),
           "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    if args.omp_bind:  # before the Ray nodes start: their workers, and the runs they time, inherit it
        os.environ["OMP_PLACES"], os.environ["OMP_PROC_BIND"] = args.omp_bind, "close"
    res["omp"] = {k: os.environ.get(k) for k in ("OMP_PLACES", "OMP_PROC_BIND")}
    res["strategy"], res["degree"] = args.strategy, args.degree
    cluster = None
    t_start = time.perf_counter()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `timeout`: stop the tune and the Ray cluster too
    for attempt in range(2 if "ray" in modes else 0):  # a node that times out starting (an overloaded machine)
        t0 = time.perf_counter()
        try:
            cluster = start_ray(groups, compile_cpus, service_cpus)
            res["ray_start_s"] = round(time.perf_counter() - t0, 1)
            print(f"ray: {len(groups)} timer nodes{' and a compile node' if compile_cpus else ''} at "
                  f"{cluster.address} ({res['ray_start_s']} s)", file=sys.stderr)
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
                                "ray": (["--ray", cluster.address] if cluster else [],
                                        res["driver_cpus"])}[m]
                left = args.deadline - (time.perf_counter() - t_start) if args.deadline else args.timeout
                if m == "ray" and cluster is None:
                    recs[m] = {"mode": m, "error": res.get("ray_error", "no Ray cluster")}
                elif left < 10:
                    recs[m] = {"mode": m, "error": f"not started: --deadline {args.deadline} s"}
                else:
                    print(f"{k} {m}: tuning", file=sys.stderr, flush=True)
                    recs[m] = tune(args, k, m, where, extra, out_dir, min(args.timeout, left))
                x = recs[m]
                print(f"{k} {m}: " + (x.get("error") or f"{x['wall_s']:.1f} s wall, {x['evals']} evals, strategy "
                                      f"{x['strategy_s']} s, best {x['best']} {secs(x['best_s'])}"),
                      file=sys.stderr, flush=True)
                res["kernels"][k] = dict(recs, summary=summarize(k, recs))
                with open(args.out + ".tmp", "w") as f:
                    json.dump(res, f, indent=1)
                os.replace(args.out + ".tmp", args.out)
            left = args.deadline - (time.perf_counter() - t_start) if args.deadline else args.timeout
            if left > 20:
                side = side_by_side(args, k, recs, gtext[0], out_dir)
                if side is not None:
                    res["kernels"][k]["summary"]["side_by_side"] = side
                    print(f"{k}: bests side by side: " + ", ".join(
                        f"{x['tiles']} ({'/'.join(x['modes'])}) {x['ratio']:.3f}x {x['verdict']}"
                        for x in side["configs"]), file=sys.stderr, flush=True)
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
