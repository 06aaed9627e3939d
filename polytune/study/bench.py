"""`polytune bench`: the original program under gcc -O3, clang -O3 and LLVM Polly against polytune's
Pluto-default seed (tile 32) and its tuned kernels, side by side on this machine.

Per kernel: first every chosen search strategy tunes the tile sizes (:func:`polytune.tune.tune`, fresh
measurements unless a cache is given), then every variant is compiled and all of them run in ONE session
of interleaved rounds: each round runs each variant once, starting one variant later than the previous
round, so drift and interference hit all variants alike. A variant's time is the median of the region
times the program prints itself (``time: X``). Compilers that are missing are skipped with a one-line note.
"""
from __future__ import annotations

import csv
import datetime
import glob
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..errors import PolytuneError, UsageError
from ..measure.build import Build as ProgramBuild
from ..measure.build import compile_objects
from ..timelimit import DEFAULT_TIME_LIMIT
from ..units import fmt_time
from .records import LABELS, SCANS, StrategySpec, _finite, found, tuning_entry  # noqa: F401 (bench's API)

BASELINES = ("gcc", "clang", "polly")
CLANG_NAMES = ("clang", *(f"clang-{v}" for v in range(19, 13, -1)))
CFLAGS = ("-O3", "-march=native")
SEARCHES = ("hill", "exhaustive", "random", "coordesc")
POLLY_INSTALL = "Debian/Ubuntu: apt-get install clang-14, or clang-19 libpolly-19-dev"
# The timer lines bench reads (nothing else a program prints is ever taken for its time): a "time: SECONDS"
# line, as every program of benchmarks/ prints, or, where the program is built with -D POLYBENCH_TIME, the line
# PolyBench's polybench_timer_print() writes, printf("%0.6f\n"): digits, a point and exactly six digits
TIME_RE = re.compile(r"^time:[ \t]*([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)[ \t]*s?[ \t]*$", re.M)
POLYBENCH_TIME_RE = re.compile(r"^([0-9]+\.[0-9]{6})$", re.M)
TIMER_WANTED = ("a 'time: SECONDS' line on stdout, or PolyBench's timer (-D POLYBENCH_TIME, with "
                "--with utilities/polybench.c)")
CHECKSUM_RE = re.compile(r"^checksum:\s*(\S+)", re.M)
PROBE_C = "int main(void) { double a[64]; for (int i = 0; i < 64; i++) a[i] = 2.0 * i; return (int)a[3] - 6; }\n"

Log = Callable[[str], object]


# ---- what to run ------------------------------------------------------------------------------------
def parse_strategy(text: str) -> StrategySpec:
    name, *mods = text.strip().split(":")
    if name not in SEARCHES:
        raise UsageError(f"unknown strategy '{name}' in '{text}' (known: {', '.join(SEARCHES)})")
    kw: dict = {}
    for m in mods:
        if m in ("first", "best"):
            kw["fit"] = m
        elif re.fullmatch(r"d[123]", m):
            kw["degree"] = int(m[1])
        elif m == "hop":
            kw["shortest_hop"] = True
        elif m == "sweep":
            kw["sweep"] = True
        elif m in ("pluto", "origin", "model"):
            kw["seed"] = m
        elif re.fullmatch(r"n[1-9][0-9]*", m):
            kw["samples"] = int(m[1:])
        else:
            raise UsageError(f"bad strategy modifier '{m}' in '{text}' (d1|d2|d3, first|best, hop, sweep, "
                             "pluto|origin|model, nNUM)")
    return StrategySpec(text.strip(), name, **kw)


def parse_strategies(text: str) -> tuple[StrategySpec, ...]:
    specs = tuple(parse_strategy(t) for t in text.split(",") if t.strip())
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels) or any(lb in LABELS for lb in labels):
        raise UsageError(f"strategies must be distinct and not named {', '.join(LABELS)}: {text}")
    return specs


@dataclass(frozen=True)
class KernelSpec:
    path: str
    defines: tuple[str, ...] | None = None  # None: the bench's -D
    strategies: tuple[StrategySpec, ...] | None = None  # None: the bench's --strategies


@dataclass(frozen=True)
class BenchOptions:
    strategies: tuple[StrategySpec, ...] = (StrategySpec("hill"),)
    compilers: tuple[str, ...] = BASELINES
    threads: int | None = None  # None: all cores
    runs: int = 3
    max_evals: int | None = None
    time_limit: float | None = None  # per tuning run
    exhaustive_max: int = 300
    includes: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    gcc: str = "gcc"
    clang: str | None = None  # None: the first of clang, clang-19 .. clang-14 found
    polly_flags: tuple[str, ...] | None = None  # None: detect
    cache: str | None = None  # tuning measurement cache; None: measure afresh (real search times)
    run_timeout: float = 600.0
    command: str = ""
    program: ProgramBuild = ProgramBuild()  # every kernel's other sources, libraries and arguments
    jobs: int | None = 1  # tuning candidates compiled at once (tune --jobs; None: the cores)
    ray: str | None = None  # tuning candidates on a Ray cluster (tune --ray)
    tunes_at_once: int | None = None  # tuning runs (kernel x strategy) at once over the workers; None: plan_tunes
    analysis_time_limit: float = DEFAULT_TIME_LIMIT  # seconds: a region analyzed longer is left out (as tune)

    @property
    def nthreads(self) -> int:
        return self.threads or os.cpu_count() or 1


def kernel_files(paths: Sequence[str]) -> list[str]:
    """Files as given; a directory stands for its *.c files (sorted)."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(glob.glob(os.path.join(p, "*.c")))
            if not found:
                raise UsageError("no .c files in the directory", p)
            out += found
        elif os.path.isfile(p):
            out.append(p)
        else:
            raise UsageError("no such file or directory", p)
    return out


def kernel_name(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


# ---- compilers --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Compiler:
    name: str
    argv: tuple[str, ...]  # the compiler and its flags (before -I/-D and the source)
    version: str = ""

    def command(self, src: str, exe: str, includes: Sequence[str] = (), defines: Sequence[str] = (),
                link: Sequence[str] = (), quote: Sequence[str] = ()) -> list[str]:
        """Compile *src* (its "..." includes also found in *quote*) and link it with *link* (objects, libraries)."""
        return [*self.argv, *(f"-iquote{d}" for d in quote), *(f"-I{d}" for d in includes),
                *(f"-D{d}" for d in defines), src, "-o", exe, *link, "-lm"]

    @property
    def shown(self) -> str:
        return " ".join(self.argv)


@dataclass(frozen=True)
class Toolchain:
    baselines: tuple[Compiler, ...]  # the available ones among gcc, clang, polly, in that order
    polytune: Compiler  # compiles polytune's output (gcc -O3 -march=native -fopenmp)
    notes: tuple[str, ...] = ()


def _probe(argv: Sequence[str], workdir: str) -> bool:
    src = os.path.join(workdir, "probe.c")
    if not os.path.exists(src):
        with open(src, "w") as f:
            f.write(PROBE_C)
    try:
        proc = subprocess.run([*argv, src, "-o", os.path.join(workdir, "probe"), "-lm"], capture_output=True,
                              timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def polly_plugin(clang: str) -> str | None:
    """LLVMPolly.so of this clang's LLVM (for clangs that load Polly as a plugin, e.g. Debian's clang-19)."""
    try:
        res = subprocess.run([clang, "-print-resource-dir"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    lib = os.path.dirname(os.path.dirname(res.strip()))  # <prefix>/lib/clang/<version> -> <prefix>/lib
    so = os.path.join(lib, "LLVMPolly.so")
    return so if os.path.exists(so) else None


def polly_flag_sets(clang: str) -> list[tuple[str, ...]]:
    sets = [("-mllvm", "-polly")]  # Polly linked into LLVM (Debian's clang-14 and clang-19, for instance)
    so = polly_plugin(clang)
    if so:
        sets += [(f"-fpass-plugin={so}", "-mllvm", "-polly"), ("-Xclang", "-load", "-Xclang", so, "-mllvm", "-polly")]
    return sets


def detect_toolchain(opts: BenchOptions, workdir: str) -> Toolchain:
    """Find the compilers of the comparison; what is missing becomes a note, never an error (but gcc)."""
    from ..measure.cache import compiler_id
    if shutil.which(opts.gcc) is None:
        raise UsageError(f"gcc not found ('{opts.gcc}'): polytune's output is compiled with it")
    notes: list[str] = []
    found: list[Compiler] = []
    if "gcc" in opts.compilers:
        found.append(Compiler("gcc", (opts.gcc, *CFLAGS), compiler_id(opts.gcc)))
    wants_clang = "clang" in opts.compilers or "polly" in opts.compilers
    names = (opts.clang,) if opts.clang else CLANG_NAMES
    clangs = [c for c in names if shutil.which(c) and _probe([c, *CFLAGS], workdir)] if wants_clang else []
    if wants_clang and not clangs:
        what = " and ".join(c for c in ("clang", "polly") if c in opts.compilers)
        notes.append(f"polytune: note: clang not found (tried {', '.join(names)}): skipped "
                     f"{what.replace('polly', 'Polly')}; install it ({POLLY_INSTALL}) or pass --clang")
    if "clang" in opts.compilers and clangs:
        found.append(Compiler("clang", (clangs[0], *CFLAGS), compiler_id(clangs[0])))
    if "polly" in opts.compilers and clangs:
        polly = _find_polly(clangs, opts, workdir, notes)
        if polly is not None:
            found.append(polly)
    omp = Compiler("polytune", (opts.gcc, *CFLAGS, "-fopenmp"), compiler_id(opts.gcc))
    return Toolchain(tuple(found), omp, tuple(notes))


def _find_polly(clangs: Sequence[str], opts: BenchOptions, workdir: str, notes: list[str]) -> Compiler | None:
    from ..measure.cache import compiler_id
    for clang in clangs:
        sets = [opts.polly_flags] if opts.polly_flags else polly_flag_sets(clang)
        for flags in sets:
            if not _probe([clang, *CFLAGS, *flags], workdir):
                continue
            if opts.nthreads > 1:
                for omp in ("-fopenmp", "-fopenmp=libgomp"):  # Polly's GNU OpenMP backend works with libgomp
                    argv = (clang, *CFLAGS, *flags, "-mllvm", "-polly-parallel", omp)
                    if _probe(argv, workdir):
                        return Compiler("polly", argv, compiler_id(clang))
                notes.append(f"polytune: note: {clang} has no OpenMP runtime: Polly runs without -polly-parallel")
            return Compiler("polly", (clang, *CFLAGS, *flags), compiler_id(clang))
    tried = "; ".join(" ".join(s) for s in ([opts.polly_flags] if opts.polly_flags else polly_flag_sets(clangs[0])))
    notes.append(f"polytune: note: Polly not available with {', '.join(clangs)} (tried {tried}): skipped Polly; "
                 f"install it ({POLLY_INSTALL}) or pass --polly-flags")
    return None


# ---- running ----------------------------------------------------------------------------------------
@dataclass
class Build:
    """One executable of the session (several variant labels may share it)."""

    key: str
    command: str
    exe: str | None = None
    error: str | None = None
    compile_time: float = 0.0
    times: list[float] = field(default_factory=list)
    checksum: str | None = None
    output: tuple[str, str] | None = None  # what its first run printed (stdout without the time, stderr)


def compile_build(build: Build, argv: list[str]) -> Build:
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as e:
        build.error = f"compile: {type(e).__name__}"
        return build
    build.compile_time = time.perf_counter() - t0
    if proc.returncode != 0:
        msg = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:200])
        build.error = f"compile: {msg.strip()[:200]}"
    else:
        build.exe = argv[argv.index("-o") + 1]
    return build


@dataclass(frozen=True)
class RunOutcome:
    """One run of a benchmark program: its kernel time (a ``time:`` line, or PolyBench's -DPOLYBENCH_TIME
    line), its ``checksum:``, what else it printed, or why it failed."""

    time: float | None = None
    checksum: str | None = None
    output: tuple[str, str] | None = None
    error: str | None = None


def polybench_timer(defines: Sequence[str]) -> bool:
    """Whether the program is built with PolyBench's timer on (-D POLYBENCH_TIME): then its timer's line counts."""
    return any(d.split("=", 1)[0].strip() == "POLYBENCH_TIME" for d in defines)


def find_time(stdout: str, polybench: bool = False) -> re.Match | str:
    """The line of *stdout* that gives the program's time (its group 1: seconds), or why there is none. Only
    a line bench understands counts (``TIME_RE``; with *polybench*, also ``POLYBENCH_TIME_RE``), exactly one,
    never another number the program prints (a checksum printed with %.3f is no time)."""
    for regex, what in ((TIME_RE, "'time:'"), *(((POLYBENCH_TIME_RE, "PolyBench timer"),) if polybench else ())):
        found = list(regex.finditer(stdout))
        if len(found) > 1:
            return f"printed {len(found)} {what} lines, where bench reads one"
        if found:
            if not math.isfinite(float(found[0].group(1))) or float(found[0].group(1)) < 0:
                return f"printed the time {found[0].group(1)!r}"
            return found[0]
    shown = next((ln.strip() for ln in stdout.splitlines() if ln.strip()), "")
    printed = f" (it printed {shown[:40]!r}{' ...' if len(stdout.strip().splitlines()) > 1 else ''})" if shown \
        else " (it printed nothing on stdout)"
    return f"printed no time{printed}: bench reads {TIMER_WANTED}"


def run_once(exe: str, threads: int, timeout: float, program: ProgramBuild = ProgramBuild(),
             polybench: bool = False) -> RunOutcome:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    try:
        proc = subprocess.run([exe, *program.args], capture_output=True, text=True, env=env, timeout=timeout,
                              cwd=program.cwd, errors="replace")
    except subprocess.TimeoutExpired:
        return RunOutcome(error=f"ran past {timeout:.0f} s")
    if proc.returncode != 0:
        return RunOutcome(error=f"exit status {proc.returncode}")
    t = find_time(proc.stdout, polybench)
    if isinstance(t, str):
        return RunOutcome(error=t)
    cs = CHECKSUM_RE.search(proc.stdout)
    rest = proc.stdout[:t.start()] + proc.stdout[t.end():]
    return RunOutcome(float(t.group(1)), cs.group(1) if cs else None, (rest, proc.stderr))


def run_session(builds: Sequence[Build], runs: int, threads: int, timeout: float,
                program: ProgramBuild = ProgramBuild(), polybench: bool = False) -> None:
    """Interleaved rounds: round r runs every build once, starting with build r mod n."""
    live = [b for b in builds if b.exe]
    for r in range(runs):
        k = r % max(1, len(live))
        for b in live[k:] + live[:k]:
            if b.error:
                continue
            o = run_once(b.exe, threads, timeout, program, polybench)
            if o.error:
                b.error = f"run: {o.error}"
                continue
            b.times.append(o.time)
            b.checksum = o.checksum
            b.output = b.output or o.output


def check_timer(spec: KernelSpec, opts: BenchOptions, workdir: str) -> None:
    """Refuse, before any tuning, a kernel whose program gives bench no time it can read (``find_time``): its
    original is built as the session builds gcc -O3's and run once. A UsageError names the file."""
    defines = tuple(opts.defines if spec.defines is None else spec.defines)
    flags = [*(f"-I{d}" for d in opts.includes), *(f"-D{d}" for d in defines)]
    objects = compile_objects(opts.program, [opts.gcc, *CFLAGS, *flags], os.path.join(workdir, "objects"))
    exe = os.path.join(workdir, f"timer-check-{kernel_name(spec.path)}")
    gcc = Compiler("gcc", (opts.gcc, *CFLAGS))
    built = compile_build(Build("gcc", ""), gcc.command(spec.path, exe, opts.includes, defines,
                                                        opts.program.link_flags(objects)))
    if built.error:
        raise UsageError(f"the original program does not build with {opts.gcc}: "
                         f"{built.error.removeprefix('compile: ')}", spec.path)
    o = run_once(exe, opts.nthreads, opts.run_timeout, opts.program, polybench_timer(defines))
    os.unlink(exe)
    if o.error:
        raise UsageError(f"bench cannot time this program: its original (gcc -O3) {o.error}", spec.path)


def checksums_agree(a: str | None, b: str | None, rtol: float = 1e-6) -> bool | None:
    try:
        x, y = float(a), float(b)
    except (TypeError, ValueError):
        return None
    return math.isclose(x, y, rel_tol=rtol, abs_tol=1e-12) or (math.isnan(x) and math.isnan(y))


# ---- tuning -----------------------------------------------------------------------------------------
def tune_one(path: str, spec: StrategySpec, opts: BenchOptions, defines: Sequence[str], shared=None) -> dict:
    """One tuning run (*shared*: the workers several runs use at once, ``tune.open_shared_workers``)."""
    from ..measure.c import BuildConfig
    from ..search.phases import LOCAL
    from ..tune import TuneOptions, tune
    local = spec.strategy in LOCAL  # exhaustive and random are bounded by their grid / sample
    topts = TuneOptions(strategy=spec.strategy, fit=spec.fit, degree=spec.degree, shortest_hop=spec.shortest_hop,
                        sweep=spec.sweep, seed=spec.seed, samples=spec.samples,
                        max_evals=opts.max_evals if local else None,
                        time_limit=opts.time_limit, cache=opts.cache, jobs=opts.jobs, ray=opts.ray,
                        # confirm_runs=0: each strategy's own best (the bench times them itself, interleaved)
                        confirm_runs=0, analysis_time_limit=opts.analysis_time_limit)
    build = BuildConfig(cc=opts.gcc, threads=opts.nthreads, runs=opts.runs, includes=opts.includes,
                        defines=tuple(defines), program=opts.program)
    t0 = time.perf_counter()
    res = tune(path, topts, build, shared=shared)
    return tuning_entry(spec, res.report.to_json(), time.perf_counter() - t0)


@dataclass(frozen=True)
class TunePlan:
    """How the bench's tuning runs share the workers: ``at_once`` runs at a time; ``note``: why fewer run at once
    than asked."""

    at_once: int
    note: str | None = None


def check_tunes_at_once(opts: BenchOptions) -> None:
    """A UsageError where ``tunes_at_once`` cannot be had: below 1, or above 1 without workers that time for
    every tune (``--jobs`` not 1, or ``--ray``)."""
    asked = opts.tunes_at_once
    if asked is not None and asked < 1:
        raise UsageError("--tunes-at-once must be at least 1")
    if opts.ray is None and opts.jobs == 1 and asked not in (None, 1):
        raise UsageError("--tunes-at-once needs workers that time for every tune: --jobs N (not 1) or --ray")


def plan_tunes(opts: BenchOptions, count: int, timers: int = 1, cores: int | None = None) -> TunePlan:
    """How many of *count* tuning runs go at once over the workers (*timers*: how many candidates they time at
    once: a Ray cluster's timer slots, the local pool's one).

    Several at once share one pool (``tune.open_shared_workers``), each run a thread of the bench's process:
    the local pool (``--jobs``, not 1), whose timer times one candidate at a time whichever run it belongs to,
    or a Ray cluster (``--ray``), each of whose timer slots does. Default (``tunes_at_once`` None): one per
    timer, at least two (one run's candidates compile while another's are timed). Locally only where the timed
    runs leave cores for the compiles (``--threads`` below the cores): a timing that takes every core gets a
    quiet machine, which the pool promises for its own timings but not for the runs' measurements of their
    originals, made beside the other runs' compiles."""
    from ..workers.identity import usable_cores
    check_tunes_at_once(opts)
    asked = opts.tunes_at_once
    if opts.ray is None and opts.jobs == 1:
        return TunePlan(1)
    if opts.ray is None:
        cores = cores or usable_cores()
        if opts.nthreads >= cores:
            note = None if asked in (None, 1) else \
                (f"polytune: note: tuning runs one at a time, not {asked}: the timed runs use every core (--threads "
                 f"{opts.nthreads} of {cores}), so no compile may run beside them; give --threads below the cores")
            return TunePlan(1, note)
    n = asked if asked is not None else max(2, timers)
    return TunePlan(max(1, min(n, count)))


def tune_all(preps: Sequence[Prepared], opts: BenchOptions, plan: TunePlan, shared, close: Callable[[], None],
             log: Log) -> None:
    """Every prepared kernel's tuning runs, ``plan.at_once`` at a time, each a thread of this process using the
    *shared* workers (their isl work under ``ISL_LOCK``); their entries go into the kernels' as they finish.
    Interrupted (Ctrl-C, or a run's bug), the runs not started are dropped and the workers closed at once
    (*close*): the candidates the running ones wait for are cancelled, so their threads end too."""
    from concurrent.futures import ThreadPoolExecutor, as_completed
    runs = [(prep, s) for prep in preps for s in prep.to_tune]
    ex = ThreadPoolExecutor(plan.at_once, thread_name_prefix="polytune-tune")
    try:
        futures = {}
        for prep, s in runs:
            _tuning_start(prep, s, log)
            futures[ex.submit(tune_one, prep.spec.path, s, opts, prep.defines, shared)] = (prep, s)
        for fut in as_completed(futures):
            prep, s = futures[fut]
            try:
                record_tuning(prep, s, fut.result(), None, log)
            except PolytuneError as e:
                record_tuning(prep, s, None, str(e), log)
    except BaseException:
        ex.shutdown(wait=False, cancel_futures=True)
        close()
        raise
    ex.shutdown(wait=True)
    for prep in preps:  # each kernel's entries in the order of its strategies, as one after another gives
        prep.entry["tuning"] = {s.label: prep.entry["tuning"][s.label] for s in prep.to_tune
                                if s.label in prep.entry["tuning"]}


# ---- one kernel -------------------------------------------------------------------------------------
def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover
        return None


@dataclass(frozen=True)
class Prepared:
    """A kernel of the bench before its tuning and session: its analysis, its space, the strategies that tune
    it, and its results entry (a dict the tuning runs and the session fill in)."""

    spec: KernelSpec
    entry: dict
    defines: tuple[str, ...]
    program: object | None = None  # the analyzed program (None: polytune cannot optimize it)
    space: object | None = None  # its search space (None: not tuned)
    loops: tuple[str, ...] | None = None
    to_tune: tuple[StrategySpec, ...] = ()
    target: object | None = None  # the tuner's target: a configuration's options (variant) and the seed


def prepare_kernel(spec: KernelSpec, opts: BenchOptions) -> Prepared:
    """Analyze a kernel and decide which strategies tune it (an exhaustive search only on a small grid)."""
    from ..errors import UnsupportedError
    from ..pipeline import analyze, slow_regions
    from ..tune import TuneOptions, make_target
    defines = tuple(opts.defines if spec.defines is None else spec.defines)
    strategies = opts.strategies if spec.strategies is None else spec.strategies
    entry: dict = {"name": kernel_name(spec.path), "file": spec.path, "defines": list(defines), "notes": [],
                   "space": None, "grid_size": None, "tuning": {}, "variants": {}, "started": _stamp_time(),
                   "load_start": _load()}
    program = space = loops = None
    try:
        skip, notes = slow_regions(spec.path, opts.includes, defines, (), opts.analysis_time_limit)
        entry["notes"] += [n.split(": note: ", 1)[-1] for n in notes]
        program = analyze(spec.path, opts.includes, defines, (), skip)
        if skip and not program.scops:
            program = None
            raise UnsupportedError("no region left: the analysis did not end within the time limit "
                                   f"({opts.analysis_time_limit:g} s)", spec.path, skip[0])
        target = make_target(program, TuneOptions(analysis_time_limit=opts.analysis_time_limit))
        space = target.space()
        loops = target.labels(space)
    except PolytuneError as e:
        space = None
        entry["notes"].append(f"{'not tuned' if program else 'polytune cannot optimize it'}: {e.message}")
    if space is None:
        return Prepared(spec, entry, defines, program)
    entry["space"] = [{"name": p.name, "values": list(p.values)} for p in space.params]
    entry["grid_size"] = space.size
    runs = []
    for s in strategies:
        if s.strategy == "exhaustive" and space.size > opts.exhaustive_max:
            entry["notes"].append(f"{s.label} skipped: the grid has {space.size} points "
                                  f"(> --exhaustive-max {opts.exhaustive_max})")
        else:
            runs.append(s)
    return Prepared(spec, entry, defines, program, space, loops, tuple(runs), target)


def _tuning_start(prep: Prepared, s: StrategySpec, log: Log) -> None:
    log(f"{prep.entry['name']}: tuning with {s.label} ({len(prep.space.params)} parameters, grid "
        f"{prep.space.size}) ...")


def record_tuning(prep: Prepared, s: StrategySpec, result: dict | None, error: str | None, log: Log) -> None:
    """A tuning run's entry (or why it failed) into the kernel's, and its line in the log."""
    from ..tune import describe
    if result is None:
        prep.entry["notes"].append(f"{s.label} failed: {error}")
        log(f"{prep.entry['name']}: {s.label} failed: {error}")
        return
    prep.entry["tuning"][s.label] = result
    best = found(result)
    log(f"{prep.entry['name']}: {s.label}: "
        + (f"best {describe(best['config'], prep.loops, prep.space, compact=True)} {fmt_time(best['median'])}" if best
           else "no verified configuration")
        + f", {result['evals']} evaluations, {result['search_time']:.1f} s, {result['stop_reason']}")


def bench_kernel(spec: KernelSpec, opts: BenchOptions, tools: Toolchain, workdir: str, log: Log) -> dict:
    """Tune a kernel with each strategy in turn, then time its variants in one session."""
    prep = prepare_kernel(spec, opts)
    t0 = time.perf_counter()
    for s in prep.to_tune:
        _tuning_start(prep, s, log)
        try:
            t = tune_one(spec.path, s, opts, prep.defines)
        except PolytuneError as e:
            record_tuning(prep, s, None, str(e), log)
            continue
        record_tuning(prep, s, t, None, log)
    prep.entry["tuning_s"] = round(time.perf_counter() - t0, 3)
    return kernel_session(prep, opts, tools, workdir, log)


def kernel_session(prep: Prepared, opts: BenchOptions, tools: Toolchain, workdir: str, log: Log) -> dict:
    """Build every variant of a prepared (and tuned) kernel and time them in one session of interleaved rounds."""
    from ..pipeline import OptimizeOptions, generate
    spec, entry, defines, program, space = prep.spec, prep.entry, prep.defines, prep.program, prep.space
    name = entry["name"]
    configs: dict[str, tuple | None] = {}
    # ---- the session's builds
    builds: dict[str, Build] = {}  # variant -> build (shared by equal configurations)
    src_dir = os.path.join(workdir, name)
    os.makedirs(src_dir, exist_ok=True)
    # the kernel's other sources: compiled once (by gcc -O3), linked into every build of the session
    objects = compile_objects(opts.program, [opts.gcc, *CFLAGS, *(f"-I{d}" for d in opts.includes),
                                             *(f"-D{d}" for d in defines)], os.path.join(workdir, "objects"))
    link = opts.program.link_flags(objects)
    shown_link = " ".join([*opts.program.sources, *opts.program.link_flags()])
    quote = (os.path.dirname(os.path.abspath(spec.path)),)  # polytune's output is compiled elsewhere
    for c in tools.baselines:
        exe = os.path.join(src_dir, c.name)
        cmd = c.command(spec.path, exe, opts.includes, defines, link)
        builds[c.name] = compile_build(Build(c.name, " ".join(c.argv) + f" FILE.c {shown_link} -lm".replace("  ", " ")),
                                       cmd)
    if program is not None:
        target = prep.target
        configs["seed"] = target.seed(space, "pluto") if space else None
        configs.update({lb: tuple(found(t)["config"]) for lb, t in entry["tuning"].items() if found(t)})
        by_config: dict[tuple | None, Build] = {}
        for label, config in configs.items():
            if config in by_config:
                builds[label] = by_config[config]
                continue
            b = Build(label, "polytune optimize")
            try:
                # the options the tuner built this configuration with (tile sizes, and block sizes where a band
                # is a contraction printed as packed blocks), and optimize's arguments for them
                oo = target.variant(space.names, config).build if config else OptimizeOptions(schedule="pluto")
                args = (target.describe_best(space.names, config).get("optimize_args") if config else None) \
                    or ["--tile-sizes", ",".join(map(str, oo.tile_sizes or (32,)))]
                b = Build(label, f"polytune optimize --schedule pluto {' '.join(args)} -o OUT.c; "
                                 f"{tools.polytune.shown} OUT.c {shown_link} -lm".replace("  ", " "))
                text = generate(program, oo).text  # tuned
            except PolytuneError as e:
                b.error = f"polytune: {e}"
            else:
                src = os.path.join(src_dir, f"polytune_{len(by_config)}.c")
                with open(src, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(text)
                compile_build(b, tools.polytune.command(src, src[:-2], opts.includes, defines, link, quote))
            by_config[config] = builds[label] = b
    distinct = list({id(b): b for b in builds.values()}.values())
    log(f"{name}: session of {len(distinct)} programs x {opts.runs} interleaved runs ...")
    run_session(distinct, opts.runs, opts.nthreads, opts.run_timeout, opts.program, polybench_timer(defines))
    entry["variants"] = variant_entries(builds, configs)
    entry["finished"], entry["load_end"] = _stamp_time(), _load()
    for label, v in entry["variants"].items():
        if v["error"]:
            entry["notes"].append(f"{LABELS.get(label, label)}: {v['error']}")
        elif v["checksum_ok"] is False:
            what = f"checksum {v['checksum']}" if v["checksum"] else f"output ({v['output_differs']})"
            entry["notes"].append(f"{LABELS.get(label, label)}: {what} differs from gcc -O3's")
    entry["notes"] += slower_warnings(entry["variants"], opts.nthreads, _load())
    return entry


def slower_warnings(variants: dict[str, dict], threads: int, load: list[float] | None) -> list[str]:
    """A warning for each of polytune's variants slower than gcc -O3's program, and each tuned one slower than
    the seed, in the session, with the advice that fits (a loaded machine, a region too short for threads)."""
    from ..tune import loaded
    from ..units import fmt_ratio
    from ..workers.identity import usable_cores
    med = {lb: v["median"] for lb, v in variants.items() if v["median"]}
    gcc, seed = med.get("gcc"), med.get("seed")
    if load and loaded(load[0], usable_cores(), threads):
        advice = "the machine is loaded: use " + ("a quiet machine" if threads == 1 else
                                                  "--threads 1, or a quiet machine")
    elif gcc and gcc < 1e-3 and threads > 1:
        advice = (f"the region runs for {fmt_time(gcc)}: starting threads costs more than they save at this size; "
                  "use --threads 1, or a larger problem size (-D)")
    else:
        advice = "keep gcc's program"
    out = []
    for lb, t in med.items():
        if lb in BASELINES:
            continue
        if gcc and t > gcc:
            out.append(f"warning: {LABELS.get(lb, lb)} is {fmt_ratio(t / gcc)} slower than gcc -O3's program "
                       f"({fmt_time(t)} against {fmt_time(gcc)}): {advice}")
        elif seed and lb != "seed" and t > seed:
            out.append(f"warning: {LABELS.get(lb, lb)} is slower than the seed in the session ({fmt_time(t)} "
                       f"against {fmt_time(seed)}): its search's gain did not hold")
    return out


def variant_entries(builds: dict[str, Build], configs: dict[str, tuple | None]) -> dict[str, dict]:
    ref = builds.get("gcc")
    ref_time = statistics.median(ref.times) if ref and ref.times and not ref.error else None
    from ..measure.c import ReferenceOutput
    ref_sum = ref.checksum if ref and not ref.error else None
    printed = ReferenceOutput.of(ref.output, None) if ref and not ref.error and ref.output and not ref_sum else None
    out = {}
    for label, b in builds.items():
        med = statistics.median(b.times) if b.times and not b.error else None
        ok = checksums_agree(b.checksum, ref_sum) if ref_sum and label != "gcc" else None
        differs = printed.compare(b.output, 1e-6) if printed and b.output and label != "gcc" else ""
        if printed and b.output and label != "gcc":  # no checksum: what it prints (PolyBench's dump on stderr)
            ok = not differs
        out[label] = {
            "label": LABELS.get(label, label), "command": b.command,
            "config": list(configs[label]) if configs.get(label) else None,
            "same_binary_as": b.key if b.key != label else None,
            "times": b.times, "median": med, "speedup_over_gcc": ref_time / med if med and ref_time else None,
            "checksum": b.checksum, "checksum_ok": ok, "output_differs": differs or None,
            "error": b.error, "compile_time": round(b.compile_time, 3),
        }
    return out


# ---- the whole bench --------------------------------------------------------------------------------
def _stamp_time() -> str:
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def load_note(load: list[float] | None, cores: int, threads: int) -> list[str]:
    """A warning when other processes keep cores busy: OpenMP programs wait at every barrier for a thread
    that is not running, so their times blow up (10x and more) on an oversubscribed machine."""
    from ..tune import loaded
    if not load or not loaded(load[0], cores, threads):
        return []
    if threads > 1:
        return [f"polytune: warning: load average {load[0]:.2f} on {cores} cores at the start: other processes "
                f"compete for the cores, so the timings are distorted (OpenMP programs with {threads} threads the "
                "most: a thread that is not running holds up every barrier); use --threads 1, or a quiet machine"]
    return [f"polytune: warning: load average {load[0]:.2f} on {cores} cores at the start: other processes compete "
            "for the cores, so the timings are distorted; use a quiet machine"]


def run_bench(kernels: Sequence[KernelSpec], opts: BenchOptions, log: Log | None = None,
              checkpoint: Callable[[dict], object] | None = None, notes: Sequence[str] = ()) -> dict:
    """Benchmark every kernel; returns the results document (see :func:`write_outputs`). *notes*: the caller's,
    said with the bench's own once the kernels' timers are checked."""
    from ..measure.cache import machine_id
    from ..tune import omp_environment
    from ..version import __version__
    log = log or (lambda s: print(s, file=sys.stderr, flush=True))
    with tempfile.TemporaryDirectory(prefix="polytune-bench-") as workdir:
        tools = detect_toolchain(opts, workdir)
        for spec in kernels:  # before any tuning: a program whose time bench cannot read is refused
            check_timer(spec, opts, workdir)
        from ..workers.identity import usable_cores
        notes = [*notes, *tools.notes, *load_note(_load(), usable_cores(), opts.nthreads)]
        for n in notes:
            log(n)
        results = {
            "kind": "polytune-bench", "version": 1, "polytune": __version__, "machine": machine_id(),
            "started": _stamp_time(), "finished": None, "command": opts.command, "threads": opts.nthreads,
            "runs": opts.runs, "strategies": [s.label for s in opts.strategies], "max_evals": opts.max_evals,
            "jobs": opts.jobs, **({"ray": opts.ray} if opts.ray else {}),
            "exhaustive_max": opts.exhaustive_max, "load_start": _load(), "omp_env": omp_environment(),
            "compilers": {c.name: {"command": c.shown, "version": c.version} for c in tools.baselines}
            | {"polytune": {"command": tools.polytune.shown, "version": tools.polytune.version}},
            "notes": notes, "kernels": [],
        }
        count = sum(len(opts.strategies if k.strategies is None else k.strategies) for k in kernels)
        plan = plan_tunes(opts, count)
        if plan.at_once > 1:  # one pool for every tuning run (on Ray, its timer slots decide the default)
            from ..measure.c import BuildConfig
            from ..tune import TuneOptions, open_shared_workers
            shared, close = open_shared_workers(TuneOptions(jobs=opts.jobs, ray=opts.ray),
                                                BuildConfig(cc=opts.gcc, threads=opts.nthreads))
            try:
                timers = len(shared.info.get("timers") or ()) or 1
                plan = plan_tunes(opts, count, timers)
                if plan.at_once > 1:  # every tune first, over the workers; then the sessions, on a quiet machine
                    preps = [prepare_kernel(spec, opts) for spec in kernels]
                    log(f"tuning: {sum(len(p.to_tune) for p in preps)} runs, {plan.at_once} at once, on "
                        f"{timers} timer{'s' if timers > 1 else ''} ...")
                    t0 = time.perf_counter()
                    tune_all(preps, opts, plan, shared, close, log)
                    results["tuning_s"] = round(time.perf_counter() - t0, 3)
            finally:
                close()
        results["tunes_at_once"] = plan.at_once
        if plan.note:
            log(plan.note)
            results["notes"].append(plan.note)
        for i, spec in enumerate(kernels):
            if plan.at_once > 1:
                results["kernels"].append(kernel_session(preps[i], opts, tools, workdir, log))
            else:
                results["kernels"].append(bench_kernel(spec, opts, tools, workdir, log))
            if plan.at_once == 1:
                results["tuning_s"] = round(sum(k.get("tuning_s", 0.0) for k in results["kernels"]), 3)
            results["finished"] = _stamp_time()
            results["load_end"] = _load()
            if checkpoint is not None:
                checkpoint(results)
    return results


def has_matplotlib() -> bool:
    import importlib.util
    try:
        return importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        return False


def write_outputs(results: dict, out_dir: str, figures: bool = True) -> list[str]:
    """results.json, results.csv, summary.md and the figures (where matplotlib is installed: the plots
    extra); returns the paths written."""
    from . import report
    if figures and not has_matplotlib():
        print("polytune: no figures: matplotlib is not installed (pip install -e '.[plots]')", file=sys.stderr)
        figures = False
    os.makedirs(out_dir, exist_ok=True)
    paths = [os.path.join(out_dir, "results.json"), os.path.join(out_dir, "results.csv")]
    with open(paths[0], "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")
    with open(paths[1], "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "variant", "median_s", "speedup_over_gcc", "times", "config", "checksum_ok",
                    "error", "evals", "search_s"])
        for k in results["kernels"]:
            for label, v in k["variants"].items():
                t = k["tuning"].get(label, {})
                w.writerow([k["name"], label, v["median"], v["speedup_over_gcc"], " ".join(map(str, v["times"])),
                            " ".join(map(str, v["config"] or [])), v["checksum_ok"], v["error"] or "",
                            t.get("evals", ""), round(t["search_time"], 3) if t else ""])
    rep = report.build_report(report.Sources(benches=[results]), out_dir, fig_dir=out_dir, figures=figures)
    md = os.path.join(out_dir, "summary.md")
    with open(md, "w") as f:
        f.write(rep.markdown(title="polytune bench", fig_prefix=""))
    return [*paths, md, *rep.figure_paths]


def print_tables(results: dict, stream=None) -> None:
    from . import report
    stream = stream or sys.stdout
    for table in (report.times_table([results]), report.quality_table([results])):
        stream.write(table.to_text() + "\n\n")
    for n in results["notes"]:
        stream.write(n + "\n")
    for k in results["kernels"]:
        for n in k["notes"]:
            stream.write(f"{k['name']}: {n}\n")


def command_line(args) -> str:
    parts = ["polytune bench", *args.paths]
    for flag, value in (("--threads", args.threads), ("--runs", args.runs), ("--strategies", args.strategies),
                        ("--max-evals", args.max_evals), ("--exhaustive-max", args.exhaustive_max),
                        ("--compilers", args.compilers), ("--clang", args.clang), ("--time-limit", args.time_limit),
                        ("--jobs", getattr(args, "jobs", 1) if getattr(args, "jobs", 1) != 1 else None),
                        ("--ray", getattr(args, "ray", None)),
                        ("--tunes-at-once", getattr(args, "tunes_at_once", None))):
        if value is not None:
            parts.append(f"{flag} {value}")
    parts += [f"-D {d}" for d in args.defines] + [f"-I {d}" for d in args.includes]
    parts += [f"--with {s}" for s in args.sources] + [f"-L {d}" for d in args.lib_dirs]
    parts += [f"-l {n}" for n in args.libs] + ([f"--ldflags '{args.ldflags}'"] if args.ldflags else [])
    parts += ["--", *args.program_args] if args.program_args else []
    return " ".join(parts)


def bench_options(args) -> BenchOptions:
    """The BenchOptions of a bench command line."""
    compilers = tuple(c.strip() for c in args.compilers.split(",") if c.strip())
    return BenchOptions(strategies=parse_strategies(args.strategies), compilers=compilers, threads=args.threads,
                        runs=args.runs, max_evals=args.max_evals, time_limit=args.time_limit,
                        exhaustive_max=args.exhaustive_max, includes=tuple(args.includes),
                        defines=tuple(args.defines), gcc=args.gcc, clang=args.clang,
                        polly_flags=tuple(args.polly_flags.split()) if args.polly_flags else None,
                        cache=args.cache, command=command_line(args), program=args.program,
                        jobs=getattr(args, "jobs", 1), ray=getattr(args, "ray", None),
                        tunes_at_once=getattr(args, "tunes_at_once", None),
                        **({} if getattr(args, "analysis_time_limit", None) is None else
                           {"analysis_time_limit": args.analysis_time_limit}))


def main_from_args(args) -> int:
    """`polytune bench` (the parser is in :mod:`polytune.cli`)."""
    if args.runs < 1:
        raise UsageError("--runs must be at least 1")
    compilers = tuple(c.strip() for c in args.compilers.split(",") if c.strip())
    unknown = set(compilers) - set(BASELINES)
    if unknown:
        raise UsageError(f"unknown compiler(s) {', '.join(sorted(unknown))} (choose from gcc, clang, polly)")
    opts = bench_options(args)
    if not opts.analysis_time_limit >= 0:
        raise UsageError("--analysis-time-limit must be 0 (none) or a positive number of seconds")
    check_tunes_at_once(opts)  # before the compilers are probed: a bad option prints nothing else
    kernels = [KernelSpec(p) for p in kernel_files(args.paths)]
    sofar: list[dict] = []  # the results document, once a kernel is done (run_bench's checkpoint, per kernel)
    try:
        results = run_bench(kernels, opts, log=(lambda line: None) if getattr(args, "quiet", False) else None,
                            checkpoint=sofar.append, notes=getattr(args, "notes", ()))
    except KeyboardInterrupt:
        return interrupted(sofar[-1] if sofar else None, len(kernels), args.report)
    print_tables(results)
    if args.report:
        written = write_outputs(results, args.report)
        print(f"polytune: {len(written)} files written to {args.report}", file=sys.stderr)
    untimed = untimed_kernels(results)
    for line in untimed:
        print(f"polytune: error: {line}", file=sys.stderr)
    return 1 if untimed else 0


def interrupted(results: dict | None, count: int, report: str | None) -> int:
    """Ctrl-C during a bench: the tables and the --report of the kernels done, then one line; exit code 130."""
    done = len(results["kernels"]) if results else 0
    if done:
        print_tables(results)
        if report:
            write_outputs(results, report)
    print(f"polytune: interrupted after {done} of {count} kernel{'s' if count > 1 else ''}"
          + (f"; their results -> {report}" if report and done else "; no results to write" if report else ""),
          file=sys.stderr)
    return 130


def untimed_kernels(results: dict) -> list[str]:
    """One line per kernel whose session timed no variant, or none of polytune's where it built some: the bench
    then exits non-zero."""
    out = []
    for k in results["kernels"]:
        variants = k["variants"]
        ours = {lb: v for lb, v in variants.items() if lb not in BASELINES}
        for group, what in ((variants, "no variant"), (ours, "none of polytune's variants")):
            if group and not any(v["median"] is not None for v in group.values()):
                label, why = next(((lb, v["error"]) for lb, v in group.items() if v["error"]), (None, None))
                out.append(f"{k['name']}: {what} was timed"
                           + (f" ({LABELS.get(label, label)}: {why})" if why else ""))
                break
        else:
            if not variants:
                out.append(f"{k['name']}: no variant was timed (none was built)")
    return out
