"""The real-C corpus (benchmarks/realc/, issue 34) as a user would hand it over: polytune against LLVM Polly 19 (and
Pluto where built) on every nest as written, no pragma.

    python3 benchmarks/realc_sweep.py [--only a,b] [--threads 1,2] [--rounds 3] [--no-time]
                                      [--md OUT.md] [--json OUT.json] [--clang clang-19] [--polycc PATH]

Per nest:
- polytune: `polytune optimize FILE --report R` on the file as written, and on a copy with `#pragma scop` /
  `#pragma endscop` in place of its `/* hot */` and `/* end hot */` lines; whether the report has a scop over the
  hot nest's lines that was not kept as written (optimized; `kept`: the time limit ran out in its analysis),
  what was done to it (tiled, the parallel loop), every region found, and every
  stderr line (refusals and notes, `FILE:LINE: ...`).
- Polly: the file compiled as the timed build is (`clang-19 -O3 -march=native -fopenmp -mllvm -polly
  -mllvm -polly-parallel`) plus `-Rpass-analysis=polly-scops -Rpass-missed=polly-detect -g -S -emit-llvm
  -fno-discard-value-names`: "modelled" = a `SCoP begins here` .. `SCoP ends here` remark range that overlaps the
  hot lines ("whole" when it begins at or before the nest's outermost loop); "transformed" = Polly's generated code
  (basic blocks named polly.*, which a release build keeps with -fno-discard-value-names) carries the debug lines
  of hot statements (code generation runs only for a SCoP whose schedule Polly changed or found parallel);
  "parallel" = those lines appear in an outlined `*_polly_subfn` (its OpenMP loop). The reasons Polly gives for
  the candidate regions inside the hot nest that it rejected are kept (`-Rpass-missed=polly-detect`). A second
  compile with `-mllvm -polly-process-unprofitable` counts what Polly models when profitability is not asked.
- Pluto: `polycc --tile --parallel` on the pragma copy, where polycc is found (--polycc, PATH, or
  /work/tools/pluto/install/bin); as written Pluto takes nothing (it needs the pragmas).
- Speed: the original under `gcc -O3 -march=native -fopenmp` (its own OpenMP lines count), polytune's output
  (same flags; the original's time where polytune changed nothing), clang-19 -O3 and Polly, at the default sizes,
  each thread count in interleaved rounds (each round runs every build once, starting one later than the round
  before), the median of each; speed = gcc's median / the build's median. The checksum and hash lines of each
  build are compared with gcc's (clang may contract differently: a different checksum is noted, not an error).
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REALC = ROOT / "benchmarks" / "realc"
HOT_BEGIN, HOT_END = "/* hot */", "/* end hot */"
GCC = ("gcc", "-O3", "-march=native", "-fopenmp")
POLLY_FLAGS = ("-mllvm", "-polly", "-mllvm", "-polly-parallel")
REMARKS = ("-Rpass-analysis=polly-scops", "-Rpass-missed=polly-detect")
TIME_RE = re.compile(r"^time:\s*(\S+)", re.M)
RESULT_RE = re.compile(r"^(checksum|hash):.*$", re.M)
REMARK_RE = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+):\d+: remark: (?P<msg>.*?)(?: \[-R[^\]]*\])?$")
OPTIMIZE_TIMEOUT = 600
COMPILE_TIMEOUT = 300
RUN_TIMEOUT = 300


@dataclasses.dataclass(frozen=True)
class Nest:
    name: str
    path: str
    text: str
    hot: tuple[int, int]  # the marker lines
    outer: int  # the line of the nest's outermost loop

    def overlaps(self, lo: int, hi: int) -> bool:
        return lo <= self.hot[1] and hi >= self.hot[0]


def load_nest(path: Path) -> Nest:
    text = path.read_text()
    lines = text.splitlines()
    begin = next(k + 1 for k, s in enumerate(lines) if s.strip() == HOT_BEGIN)
    end = next(k + 1 for k, s in enumerate(lines) if s.strip() == HOT_END)
    outer = next(k + 1 for k in range(begin, end) if re.match(r"\s*for\s*\(", lines[k]))
    return Nest(path.stem, str(path), text, (begin, end), outer)


def with_pragmas(text: str) -> str:
    """*text* with its hot markers replaced by the scop pragmas, line for line."""
    marks = {HOT_BEGIN: "#pragma scop", HOT_END: "#pragma endscop"}
    return "".join(marks[s.strip()] + "\n" if s.strip() in marks else s for s in text.splitlines(keepends=True))


# ---- polytune ------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class PolytuneRun:
    mode: str
    rc: int | None
    optimized: bool = False  # a scop over the hot lines
    regions: list[list[int]] = dataclasses.field(default_factory=list)  # every scop's lines
    done: str = ""  # what was done to the hot scop
    messages: list[str] = dataclasses.field(default_factory=list)  # stderr lines but the summary
    output: str | None = None  # the output path, where it differs from the input
    seconds: float = 0.0


def run_polytune(nest: Nest, mode: str, work: Path, time_limit: str | None = None) -> PolytuneRun:
    d = work / f"polytune-{mode}"
    d.mkdir(parents=True, exist_ok=True)
    src = Path(nest.path)
    text = nest.text
    if mode == "with_pragmas":
        src, text = d / (nest.name + ".c"), with_pragmas(nest.text)
        src.write_text(text)
    out, rep = d / (nest.name + ".polytune.c"), d / "report.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = datetime.datetime.now()
    try:
        limit = ["--time-limit", time_limit] if time_limit is not None else []
        r = subprocess.run([sys.executable, "-m", "polytune", "optimize", str(src), "-o", str(out), "--report",
                            str(rep), *limit], capture_output=True, text=True, timeout=OPTIMIZE_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return PolytuneRun(mode, None, messages=[f"timeout after {OPTIMIZE_TIMEOUT} s"])
    run = PolytuneRun(mode, r.returncode, seconds=(datetime.datetime.now() - t0).total_seconds())
    run.messages = [s.replace(str(src), nest.name + ".c") for s in r.stderr.splitlines()
                    if s.strip() and not s.startswith("polytune: ") or "internal error" in s]
    if r.returncode == 0 and rep.exists():
        report = json.loads(rep.read_text())
        scops = report.get("scops", [])
        run.regions = [list(s["lines"]) for s in scops]
        hot = [s for s in scops if nest.overlaps(*s["lines"])]
        run.optimized = any(not s.get("kept") for s in hot)  # a scop kept as written (time limit) is not
        run.done = "; ".join(describe_scop(s) for s in hot)
        if out.exists() and out.read_text() != text:
            run.output = str(out)
    return run


def describe_scop(s: dict) -> str:
    if s.get("kept"):
        return f"lines {s['lines'][0]}-{s['lines'][1]} kept as written ({s['kept']}: {s.get('ran_out') or ''})"
    bands = s.get("bands", [])
    tiled = [b for b in bands if b.get("tiled")]
    par = [b.get("parallel_loop") for b in bands if b.get("parallel_loop")]
    what = [f"lines {s['lines'][0]}-{s['lines'][1]}"]
    what.append(f"{len(tiled)}/{len(bands)} bands tiled" if bands else "no bands")
    what.append(f"parallel {', '.join(map(str, par))}" if par else "no parallel loop")
    if s.get("scheduler"):
        what.append(str(s["scheduler"]))
    return ", ".join(what)


# ---- Polly ---------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class PollyResult:
    modelled: bool = False  # a SCoP overlapping the hot lines
    whole: bool = False  # one that begins at or before the outermost loop
    transformed: bool = False
    parallel: bool = False
    scops: list[list[int]] = dataclasses.field(default_factory=list)
    reasons: list[str] = dataclasses.field(default_factory=list)  # of rejected candidates inside the hot nest
    modelled_unprofitable: bool = False  # with -polly-process-unprofitable
    error: str = ""
    unprofitable_error: str = ""


def polly_remarks(stderr: str, nest: Nest) -> tuple[list[list[int]], list[str]]:
    """The SCoP ranges in *nest*'s file and the reasons given for candidates that begin inside the hot nest (those
    located in it or in another file)."""
    scops: list[list[int]] = []
    reasons: list[str] = []
    begin: int | None = None
    candidate: int | None = None
    base = os.path.basename(nest.path)
    for line in stderr.splitlines():
        m = REMARK_RE.match(line)
        if not m:
            continue
        mine, at, msg = os.path.basename(m["file"]) == base, int(m["line"]), m["msg"].strip()
        if msg.startswith("SCoP begins here"):
            begin = at if mine else None
        elif msg.startswith("SCoP ends here"):
            if begin is not None:
                rng = [begin, at if mine and at >= begin else begin]
                if rng not in scops:
                    scops.append(rng)
            begin = None
        elif msg.startswith("The following errors keep this region from being a Scop"):
            candidate = at if mine else None
        elif msg.startswith("Invalid Scop candidate ends here"):
            candidate = None
        elif candidate is not None and nest.hot[0] <= candidate <= nest.hot[1] and (
                not mine or nest.hot[0] <= at <= nest.hot[1]):
            why = f"{at}: {msg}" if mine else msg
            if why not in reasons:
                reasons.append(why)
    return scops, reasons


def polly_generated_lines(ll: str) -> tuple[set[int], set[int]]:
    """Source lines of the instructions in Polly's generated blocks, and of those in its outlined parallel
    functions."""
    loc = {m.group(1): int(m.group(2)) for m in re.finditer(r"^!(\d+) = !DILocation\(line: (\d+)", ll, re.M)}
    gen: set[int] = set()
    par: set[int] = set()
    fn = block = None
    for line in ll.splitlines():
        if line.startswith("define "):
            m = re.search(r"@([\w.$]+)\(", line)
            fn, block = (m.group(1) if m else ""), "entry"
            continue
        if line.startswith("}"):
            fn = block = None
            continue
        m = re.match(r"^([\w.$-]+):", line)
        if m:
            block = m.group(1)
            continue
        d = re.search(r"!dbg !(\d+)", line)
        if not d or fn is None or d.group(1) not in loc:
            continue
        subfn = "polly_subfn" in fn
        if subfn or (block or "").startswith("polly."):
            gen.add(loc[d.group(1)])
        if subfn:
            par.add(loc[d.group(1)])
    return gen, par


def run_polly(nest: Nest, clang: str, work: Path) -> PollyResult:
    res = PollyResult()
    ll = work / "polly.ll"
    base = [clang, "-O3", "-march=native", "-fopenmp", *POLLY_FLAGS, *REMARKS, nest.path]
    try:
        r = subprocess.run([*base, "-g", "-fno-discard-value-names", "-S", "-emit-llvm", "-o", str(ll)],
                           capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
    except subprocess.TimeoutExpired:
        res.error = f"compile timeout after {COMPILE_TIMEOUT} s"
        return res
    if r.returncode != 0:
        res.error = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
        return res
    res.scops, res.reasons = polly_remarks(r.stderr, nest)
    hot_scops = [s for s in res.scops if nest.overlaps(*s)]
    res.modelled = bool(hot_scops)
    res.whole = any(s[0] <= nest.outer for s in hot_scops)
    gen, par = polly_generated_lines(ll.read_text())
    inside = range(nest.hot[0], nest.hot[1] + 1)
    res.transformed = any(x in gen for x in inside)
    res.parallel = any(x in par for x in inside)
    try:
        r = subprocess.run([*base, "-mllvm", "-polly-process-unprofitable", "-c", "-o", str(work / "polly-u.o")],
                           capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
    except subprocess.TimeoutExpired:
        res.unprofitable_error = f"compile timeout after {COMPILE_TIMEOUT} s"
        return res
    scops, _ = polly_remarks(r.stderr, nest)
    res.modelled_unprofitable = any(nest.overlaps(*s) for s in scops)
    return res


# ---- Pluto ---------------------------------------------------------------------------------------------------
def find_polycc(given: str | None) -> str | None:
    for c in (given, shutil.which("polycc"), "/work/tools/pluto/install/bin/polycc"):
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def run_pluto(nest: Nest, polycc: str, work: Path) -> str:
    d = work / "pluto"
    d.mkdir(exist_ok=True)
    src = d / (nest.name + ".c")
    src.write_text(with_pragmas(nest.text))
    try:
        r = subprocess.run([polycc, src.name, "--tile", "--parallel", "-o", nest.name + ".pluto.c"], cwd=d,
                           capture_output=True, text=True, timeout=OPTIMIZE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return "timeout"
    if r.returncode == 0 and (d / (nest.name + ".pluto.c")).exists():
        return "transformed"
    last = (r.stderr or r.stdout).strip().splitlines()
    return "failed: " + (last[-1][:120] if last else f"exit {r.returncode}")


# ---- speed ---------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Build:
    label: str
    exe: str | None
    error: str = ""


def compile_builds(nest: Nest, pt: PolytuneRun, clang: str | None, work: Path) -> list[Build]:
    jobs = [("gcc", [*GCC, nest.path]), ]
    if pt.output:
        jobs.append(("polytune", [*GCC, pt.output]))
    if clang:
        jobs.append(("clang", [clang, "-O3", "-march=native", "-fopenmp", nest.path]))
        jobs.append(("polly", [clang, "-O3", "-march=native", "-fopenmp", *POLLY_FLAGS, nest.path]))
    builds = []
    for label, cmd in jobs:
        exe = str(work / f"{nest.name}.{label}")
        try:
            r = subprocess.run([*cmd, "-o", exe, "-lm"], capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
        except subprocess.TimeoutExpired:
            builds.append(Build(label, None, f"compile timeout after {COMPILE_TIMEOUT} s"))
            continue
        builds.append(Build(label, exe if r.returncode == 0 else None,
                            "" if r.returncode == 0 else (r.stderr.strip().splitlines() or ["?"])[-1]))
    return builds


def time_builds(builds: list[Build], threads: int, rounds: int) -> dict[str, dict]:
    """Interleaved rounds of every build: per label the median time, all times and its result lines."""
    ok = [b for b in builds if b.exe]
    times: dict[str, list[float]] = {b.label: [] for b in ok}
    results: dict[str, str] = {}
    errors: dict[str, str] = {}
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    for r in range(rounds):
        for k in range(len(ok)):
            b = ok[(k + r) % len(ok)]
            if b.label in errors:
                continue
            try:
                p = subprocess.run([b.exe], capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env)
            except subprocess.TimeoutExpired:
                errors[b.label] = f"timeout after {RUN_TIMEOUT} s"
                continue
            m = TIME_RE.search(p.stdout)
            if p.returncode != 0 or not m:
                errors[b.label] = f"exit {p.returncode}: {p.stderr.strip()[-200:]}"
                continue
            times[b.label].append(float(m.group(1)))
            results.setdefault(b.label, "\n".join(x.group(0) for x in RESULT_RE.finditer(p.stdout)))
    out: dict[str, dict] = {}
    for b in builds:
        if b.label in errors or not b.exe:
            out[b.label] = {"error": errors.get(b.label, b.error)}
            continue
        out[b.label] = {"median": statistics.median(times[b.label]), "times": times[b.label],
                        "same_results_as_gcc": results.get(b.label) == results.get("gcc")}
    return out


# ---- one nest, all nests -------------------------------------------------------------------------------------
def sweep_nest(nest: Nest, args, clang: str | None, polycc: str | None, work: Path, log) -> dict:
    w = work / nest.name
    w.mkdir(parents=True, exist_ok=True)
    written = run_polytune(nest, "as_written", w, args.time_limit)
    pragmas = run_polytune(nest, "with_pragmas", w, args.time_limit)
    polly = run_polly(nest, clang, w) if clang else None
    pluto = run_pluto(nest, polycc, w) if polycc else None
    entry: dict = {"nest": nest.name, "hot_lines": list(nest.hot), "polytune": dataclasses.asdict(written),
                   "polytune_with_pragmas": dataclasses.asdict(pragmas),
                   "polly": dataclasses.asdict(polly) if polly else None, "pluto_with_pragmas": pluto}
    log(f"{nest.name}: polytune {'optimized' if written.optimized else 'not optimized'} as written, "
        f"{'optimized' if pragmas.optimized else 'not optimized'} with pragmas"
        + (f"; Polly {'modelled' if polly.modelled else 'not modelled'}, "
           f"{'transformed' if polly.transformed else 'not transformed'}" if polly else ""))
    if not args.no_time:
        builds = compile_builds(nest, written, clang, w)
        entry["speed"] = {}
        for t in args.threads:
            timed = time_builds(builds, t, args.rounds)
            if "polytune" not in timed and "median" in timed.get("gcc", {}):
                timed["polytune"] = {**timed["gcc"], "unchanged": True}
            entry["speed"][str(t)] = timed
            # the 1-minute load average after the rounds: above the cores, other processes ran beside them
            # (2026-12-07: nests timed while the machine compiled ran at 0.25-0.7x at 2 threads, 1.7-3.7x
            # on a quiet rerun)
            entry.setdefault("load", {})[str(t)] = round(os.getloadavg()[0], 2)
            gcc = timed.get("gcc", {}).get("median")
            log(f"  {t} thread(s): " + ", ".join(
                f"{k} {v['median']:.3f} s" + (f" ({gcc / v['median']:.2f}x)" if gcc and k != "gcc" else "")
                if "median" in v else f"{k} {v['error']}" for k, v in timed.items())
                + f" (load {entry['load'][str(t)]})")
    return entry


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def tool_version(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "?"


def summarize(entries: list[dict]) -> dict:
    n = len(entries)
    polly = [e["polly"] for e in entries if e["polly"]]

    def count(xs, key):
        return sum(1 for x in xs if x and x.get(key))
    return {
        "nests": n,
        "polytune_optimized_as_written": sum(e["polytune"]["optimized"] for e in entries),
        "polytune_optimized_with_pragmas": sum(e["polytune_with_pragmas"]["optimized"] for e in entries),
        "polytune_refused_with_pragmas": sum(e["polytune_with_pragmas"]["rc"] == 2 for e in entries),
        "polly_compiled": len(polly),
        "polly_modelled": count(polly, "modelled"), "polly_modelled_whole_nest": count(polly, "whole"),
        "polly_transformed": count(polly, "transformed"), "polly_parallel": count(polly, "parallel"),
        "polly_modelled_unprofitable_too": count(polly, "modelled_unprofitable"),
        "pluto_with_pragmas": (sum(1 for e in entries if e["pluto_with_pragmas"] == "transformed")
                               if any(e["pluto_with_pragmas"] for e in entries) else None),
    }


def speed_cell(entry: dict, threads: int, label: str) -> str:
    s = entry.get("speed", {}).get(str(threads), {})
    gcc, v = s.get("gcc", {}).get("median"), s.get(label, {})
    if "median" not in v or not gcc:
        return "-" if not v else "err"
    mark = "" if v.get("same_results_as_gcc", True) else "*"
    return ("=" if v.get("unchanged") else f"{gcc / v['median']:.2f}x") + mark


def polly_cell(pl: dict | None) -> str:
    if not pl:
        return "-"
    if pl["error"]:
        return "error"
    if not pl["modelled"]:
        return "no"
    what = ["transformed" if pl["transformed"] else "modelled"]
    if pl["parallel"]:
        what.append("parallel")
    if not pl["whole"]:
        what.append("inner part")
    return what[0] + (f" ({', '.join(what[1:])})" if what[1:] else "")


def busy_nests(entries: list[dict], cores: int) -> list[str]:
    """`nest (T threads, load L)` for each thread count whose rounds ended with the load above *cores*."""
    return [f"{e['nest']} ({t} threads, load {load})" for e in entries
            for t, load in sorted(e.get("load", {}).items(), key=lambda x: int(x[0])) if load > cores]


def markdown(entries: list[dict], meta: dict) -> str:
    s = meta["summary"]
    n = s["nests"]
    partial = f" (partial: {n} nests so far)" if meta.get("partial") else ""
    out = [f"# Real-C corpus sweep ({meta['date']}){partial}", "",
           f"`{meta['command']}`", "",
           f"{meta['machine']}; load average {meta['load_before']} at the start, {meta['load_after']} at the end "
           f"(other processes share the cores: speeds are indicative, counts are exact). {meta['versions']}", "",
           "## Counts", "",
           "| tool | hot nests taken |", "|---|---|",
           f"| polytune, as written (no pragma) | {s['polytune_optimized_as_written']} of {n} optimized |",
           f"| polytune, `#pragma scop` around the hot nest | {s['polytune_optimized_with_pragmas']} of {n} optimized "
           f"({s['polytune_refused_with_pragmas']} refused) |"]
    if s["polly_compiled"]:
        out += [f"| Polly 19, as written: modelled (a SCoP over hot lines) | {s['polly_modelled']} of {n} "
                f"({s['polly_modelled_whole_nest']} from the outermost loop) |",
                f"| Polly 19, as written: transformed (code generated for hot lines) | {s['polly_transformed']} of {n} "
                f"({s['polly_parallel']} with an OpenMP loop) |",
                f"| Polly 19 with -polly-process-unprofitable: modelled | "
                f"{s['polly_modelled_unprofitable_too']} of {n} |"]
    pluto = "not built: skipped" if s["pluto_with_pragmas"] is None else f"{s['pluto_with_pragmas']} of {n}"
    out += [f"| Pluto (polycc --tile --parallel), with pragmas | {pluto} |",
            "| Pluto, as written | 0 by construction (it needs the pragmas) |", ""]
    threads = meta["threads"]
    head = ["nest", "polytune as written", "with pragmas", "Polly"]
    for t in threads:
        head += [f"gcc {t}t (s)", f"polytune {t}t", f"Polly {t}t", f"clang {t}t"]
    out += ["## Per nest", "",
            "Speed: gcc -O3 -march=native's median time over the build's (higher is faster); `=` polytune changed "
            "nothing (the original's time); `*` its checksum or hash differs from gcc's build (clang contracts "
            "a*b+c differently; for polytune this would be a bug).", "",
            "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for e in entries:
        p, q, pl = e["polytune"], e["polytune_with_pragmas"], e["polly"]
        cells = [e["nest"], "optimized" if p["optimized"] else ("refused" if p["rc"] == 2 else "no"),
                 "optimized" if q["optimized"] else ("refused" if q["rc"] == 2 else "no"),
                 polly_cell(pl)]
        for t in threads:
            g = e.get("speed", {}).get(str(t), {}).get("gcc", {})
            cells += [f"{g['median']:.3f}" if "median" in g else "-", speed_cell(e, t, "polytune"),
                      speed_cell(e, t, "polly"), speed_cell(e, t, "clang")]
        out.append("| " + " | ".join(cells) + " |")
    busy = busy_nests(entries, meta["cores"])
    if busy:
        out += ["", "Timed while other processes ran (1-minute load above the machine's cores after the rounds; "
                "time these again with `--only`): " + ", ".join(busy) + "."]
    out += ["", "## Why not: polytune's messages and Polly's reasons", ""]
    for e in entries:
        p, q, pl = e["polytune"], e["polytune_with_pragmas"], e["polly"]
        out.append(f"- **{e['nest']}** (hot lines {e['hot_lines'][0]}-{e['hot_lines'][1]})")
        if p["optimized"]:
            out.append(f"  - polytune as written: {p['done']}")
        msgs = [m for m in p["messages"]]
        out.append("  - polytune as written: " + ("; ".join(msgs) if msgs else
                                                  f"{len(p['regions'])} region(s) found, none over the hot nest"
                                                  if not p["optimized"] else "no messages"))
        out.append("  - polytune with pragmas: " + (q["done"] if q["optimized"] else "; ".join(q["messages"]) or "-"))
        if pl:
            rs = pl["reasons"][:4]
            out.append("  - Polly: " + ("; ".join(f"SCoP lines {a}-{b}" for a, b in pl["scops"]
                                                 if a <= e["hot_lines"][1] and b >= e["hot_lines"][0]) or "no SCoP")
                       + (f"; rejected candidates: {'; '.join(rs)}" if rs else ""))
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated nest names")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-time", action="store_true", help="counts only, no timed runs")
    ap.add_argument("--clang", default="clang-19")
    ap.add_argument("--polycc")
    ap.add_argument("--keep", help="work directory to keep (default: a temporary one)")
    ap.add_argument("--md")
    ap.add_argument("--json")
    ap.add_argument("--jobs", type=int, default=1, help="nests analysed at once (with --no-time)")
    ap.add_argument("--time-limit", help="polytune optimize's --time-limit (default: its own; 0: none, to count "
                                         "what it takes on a loaded machine)")
    args = ap.parse_args(argv)
    args.threads = [int(t) for t in args.threads.split(",") if t]
    names = set(args.only.split(",")) if args.only else None
    nests = [load_nest(p) for p in sorted(REALC.glob("*.c")) if names is None or p.stem in names]
    clang = shutil.which(args.clang)
    if clang is None:
        print(f"note: {args.clang} not found: Polly and clang skipped", file=sys.stderr)
    polycc = find_polycc(args.polycc)
    if polycc is None:
        print("note: polycc not found (--polycc, PATH, /work/tools/pluto/install/bin): Pluto skipped", file=sys.stderr)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="realc-sweep-"))
    work.mkdir(parents=True, exist_ok=True)
    cores = os.cpu_count() or 1
    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "command": "python3 benchmarks/realc_sweep.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "machine": f"{cores} cores", "cores": cores, "load_before": load_average(), "threads": args.threads,
            "versions": "; ".join(v for v in (tool_version(["gcc", "--version"]),
                                             tool_version([clang, "--version"]) if clang else "") if v)}

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    def write(entries: list[dict]) -> str:
        """The results so far, written after every nest (a long run that stops leaves what it measured)."""
        entries = sorted(entries, key=lambda e: e["nest"])
        meta["load_after"] = load_average()
        meta["summary"] = summarize(entries)
        meta["partial"] = len(entries) < len(nests)
        if args.json:
            Path(args.json).write_text(json.dumps({"meta": meta, "nests": entries}, indent=1) + "\n")
        text = markdown(entries, meta)
        if args.md:
            Path(args.md).write_text(text)
        return text

    jobs = args.jobs if args.no_time else 1  # timed runs one at a time
    done: list[dict] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for f in as_completed([pool.submit(sweep_nest, n, args, clang, polycc, work, log) for n in nests]):
            done.append(f.result())
            write(done)
    print(write(done))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
