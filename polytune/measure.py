"""Build, verify and time program variants; a persistent cache of measurements.

A tuning build is the user's whole program with every scop region wrapped: the region is timed with
``timespec_get`` and, on the verification run, every element it wrote is written (as a double) to a dump
file. The reference build wraps the *original* region text the same way, so the two dumps must agree
before a variant's time counts.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import shlex
import sqlite3
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

from .emit.c import generate_dump
from .errors import PolytuneError, UsageError
from .measurement import ErrorKind, Measurement
from .pipeline import OptimizeOptions, Program, generate_regions, source_lines, splice

PRELUDE = r"""/* polytune tuning harness */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double polytune_region_seconds;
static FILE *polytune_dump_file;
static int polytune_started;
static void polytune_report(void) {
  const char *p = getenv("POLYTUNE_REPORT");
  if (p) { FILE *f = fopen(p, "w"); if (f) { fprintf(f, "%.17g\n", polytune_region_seconds); fclose(f); } }
  if (polytune_dump_file) fclose(polytune_dump_file);
}
/* seconds since the first region started: small numbers keep nanoseconds (seconds since the epoch in a
   double resolve only 2.4e-7 s) */
static struct timespec polytune_base;
static void polytune_clock(struct timespec *t) {
#ifdef CLOCK_MONOTONIC
  clock_gettime(CLOCK_MONOTONIC, t);
#else
  timespec_get(t, TIME_UTC);
#endif
}
static double polytune_now(void) {
  struct timespec t;
  polytune_clock(&t);
  return (double)(t.tv_sec - polytune_base.tv_sec) + 1e-9 * (double)(t.tv_nsec - polytune_base.tv_nsec);
}
static double polytune_start(void) {
  if (!polytune_started) {
    const char *p = getenv("POLYTUNE_DUMP");
    polytune_clock(&polytune_base);
    polytune_started = 1;
    if (p) polytune_dump_file = fopen(p, "wb");
    atexit(polytune_report);
  }
  return polytune_now();
}
static void polytune_dump(double v) { fwrite(&v, sizeof v, 1, polytune_dump_file); }
"""


def instrument(program: Program, codes: list[str]) -> str:
    """The program with region k replaced by codes[k], timed and followed by a dump of what it wrote."""
    reps = []
    for a, code in zip(program.scops, codes):
        dump = generate_dump(a.scop, indent=1, avoid=program.identifiers)
        body = ("  { double polytune_t0 = polytune_start();\n" + code +
                "  polytune_region_seconds += polytune_now() - polytune_t0;\n"
                "  if (polytune_dump_file)\n" + dump + "  }\n")
        reps.append((a.scop.begin_line, a.scop.end_line, body))
    return PRELUDE + "#line 1\n" + splice(program.text, reps)


def original_regions(program: Program) -> list[str]:
    lines = source_lines(program.text)
    return [f"#line {a.scop.begin_line + 1}\n" + "".join(lines[a.scop.begin_line:a.scop.end_line - 1])
            for a in program.scops]


@dataclass(frozen=True)
class BuildConfig:
    """How variants are compiled and run."""

    cc: str = "gcc"
    cflags: tuple[str, ...] = ("-O3", "-march=native")
    includes: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    threads: int | None = None  # OMP_NUM_THREADS; None: leave the environment's
    runs: int = 3
    prune_factor: float = 2.0  # stop after one timed run if it is this much slower than the best so far
    timeout_factor: float = 5.0  # a run may take this much longer than the reference run (plus slack)
    timeout_slack: float = 5.0
    # Result check: |got - ref| <= rtol * |ref| + rtol * 1e-3 * max|ref|. Not 0 by default because gcc
    # contracts a*b+c into FMAs differently in differently shaped loops under -march=native (lu: 1 ulp).
    rtol: float = 1e-9

    def compile_cmd(self, src: str, exe: str) -> list[str]:
        return [self.cc, *self.cflags, "-fopenmp", *[f"-I{d}" for d in self.includes],
                *[f"-D{d}" for d in self.defines], src, "-o", exe, "-lm"]


@dataclass
class RunResult:
    ok: bool
    region_time: float = 0.0
    wall: float = 0.0
    error: ErrorKind | None = None
    detail: str = ""


class Harness:
    """Compiles and runs variants of one program in a private temporary directory."""

    def __init__(self, program: Program, build: BuildConfig, workdir: str | None = None):
        self.program = program
        self.build = build
        self._tmp = tempfile.TemporaryDirectory(prefix="polytune-") if workdir is None else None
        self.dir = workdir or self._tmp.name
        self.counter = 0
        self.reference_dump: np.ndarray | None = None
        self.reference_wall: float | None = None
        self.best_time: float | None = None

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()

    # ---- building --------------------------------------------------------------------------------
    def compile(self, text: str, name: str) -> tuple[str | None, float, str]:
        exe, dt, err, _ = compile_source(self.build, text, os.path.join(self.dir, name + ".c"),
                                         os.path.join(self.dir, name))
        return exe, dt, err

    def run(self, exe: str, dump: str | None, timeout: float | None) -> RunResult:
        report = exe + ".time"
        if os.path.exists(report):
            os.unlink(report)
        env = dict(os.environ, POLYTUNE_REPORT=report)
        env.pop("POLYTUNE_DUMP", None)
        if dump:
            env["POLYTUNE_DUMP"] = dump
        if self.build.threads is not None:
            env["OMP_NUM_THREADS"] = str(self.build.threads)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run([exe], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  timeout=timeout, cwd=self.dir)
        except subprocess.TimeoutExpired:
            return RunResult(False, wall=time.perf_counter() - t0, error=ErrorKind.TIMEOUT,
                             detail=f"ran past {timeout:.1f} s")
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            sig = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
            err = proc.stderr.decode(errors="replace").strip().splitlines()
            return RunResult(False, wall=wall, error=ErrorKind.RUNTIME,
                             detail=sig + (f": {err[-1]}" if err else ""))
        try:
            with open(report) as f:
                t = float(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return RunResult(False, wall=wall, error=ErrorKind.RUNTIME, detail="no region time reported")
        return RunResult(True, region_time=t, wall=wall)

    def timeout(self) -> float | None:
        if self.reference_wall is None:
            return None
        return self.build.timeout_factor * self.reference_wall + self.build.timeout_slack

    # ---- reference ---------------------------------------------------------------------------------
    def measure_reference(self) -> Measurement:
        """Build and run the original regions: the dump every variant must match, and the baseline time."""
        text = instrument(self.program, original_regions(self.program))
        exe, ct, err = self.compile(text, "reference")
        if exe is None:
            raise PolytuneError(f"the original program does not compile with {self.build.cc}: {err}",
                                self.program.path)
        dump = exe + ".dump"
        r = self.run(exe, dump, None)
        if not r.ok:
            raise PolytuneError(f"the original program failed: {r.detail}", self.program.path)
        self.reference_dump = np.fromfile(dump, dtype=np.float64)
        os.unlink(dump)
        self.reference_wall = r.wall
        times = []
        for _ in range(self.build.runs):
            r = self.run(exe, None, self.timeout())
            if not r.ok:
                raise PolytuneError(f"the original program failed: {r.detail}", self.program.path)
            times.append(r.region_time)
        return Measurement((), tuple(times), None, ct, extra={"what": "original"})

    # ---- variants ----------------------------------------------------------------------------------
    def measure(self, config: tuple, opts: OptimizeOptions) -> Measurement:
        self.counter += 1
        name = f"v{self.counter}"
        try:
            codes = generate_regions(self.program, opts)
        except PolytuneError as e:
            return Measurement(config, error=ErrorKind.COMPILE, detail=f"code generation: {e}")
        exe, ct, err = self.compile(instrument(self.program, codes), name)
        if exe is None:
            return Measurement(config, error=ErrorKind.COMPILE, compile_time=ct, detail=err)
        try:
            return self._run_variant(config, exe, ct)
        finally:
            for suffix in ("", ".c", ".dump", ".time"):
                p = os.path.join(self.dir, name + suffix)
                if os.path.exists(p):
                    os.unlink(p)

    def _run_variant(self, config: tuple, exe: str, ct: float) -> Measurement:
        dump = exe + ".dump"
        r = self.run(exe, dump, self.timeout())  # verification run, doubles as the warm-up
        if not r.ok:
            return Measurement(config, error=r.error, compile_time=ct, detail=r.detail)
        verdict = compare_dumps(self.reference_dump, np.fromfile(dump, dtype=np.float64), self.build.rtol)
        if verdict:
            return Measurement(config, error=ErrorKind.WRONG_ANSWER, compile_time=ct, detail=verdict)
        times: list[float] = []
        for k in range(self.build.runs):
            r = self.run(exe, None, self.timeout())
            if not r.ok:
                return Measurement(config, tuple(times), r.error, ct, r.detail)
            times.append(r.region_time)
            if k == 0 and self.best_time is not None and self.build.runs > 1 \
                    and r.region_time > self.build.prune_factor * self.best_time:
                return Measurement(config, tuple(times), ErrorKind.PRUNED, ct,
                                   f"first run {r.region_time:.4g} s > {self.build.prune_factor:g} x best "
                                   f"{self.best_time:.4g} s")
        m = Measurement(config, tuple(times), None, ct)
        if self.best_time is None or m.value < self.best_time:
            self.best_time = m.value
        return m


def compile_source(build: BuildConfig, text: str, src: str, exe: str, timeout: float = 600,
                   label: str = "", timeout_message: str = "compiler timed out"):
    """Write *text* to *src* and compile it to *exe* with *build*'s command: (exe or None, seconds, first
    error line or '', the compiler's stderr). A missing compiler is the user's error."""
    with open(src, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(build.compile_cmd(src, exe), capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise UsageError(f"{label}compiler not found: {build.cc}") from None
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - t0, timeout_message, ""
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        return None, dt, _first_error(proc.stderr), proc.stderr
    return exe, dt, "", proc.stderr


def compare_dumps(ref: np.ndarray | None, got: np.ndarray, rtol: float) -> str:
    """'' when the variant wrote the same values as the original, else what differs."""
    if ref is None:
        return "no reference"
    if ref.shape != got.shape:
        return f"wrote {got.size} values, the original {ref.size}"
    same = (ref == got) | (np.isnan(ref) & np.isnan(got))
    if same.all():
        return ""
    if rtol > 0:
        scale = float(np.nanmax(np.abs(ref))) if ref.size else 1.0
        close = np.isclose(got, ref, rtol=rtol, atol=rtol * 1e-3 * (scale or 1.0), equal_nan=True)
        if close.all():
            return ""
        same = close
    bad = np.flatnonzero(~same)
    k = int(bad[0])
    return f"{bad.size} of {ref.size} values differ (first at #{k}: {got[k]!r} instead of {ref[k]!r})"


def _first_error(stderr: str) -> str:
    for line in stderr.splitlines():
        if "error" in line:
            return line.strip()[:300]
    return (stderr.strip().splitlines() or ["compiler failed"])[0][:300]


# ---- persistent cache ------------------------------------------------------------------------------
def machine_id() -> str:
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{platform.node()}|{platform.machine()}|{cpu}|{os.cpu_count()}"


def gpu_id() -> str:
    """The GPU(s) and driver, as nvidia-smi names them ('' where there is none)."""
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def compiler_id(cc: str) -> str:
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30).stdout
        return out.splitlines()[0] if out else cc
    except (OSError, subprocess.TimeoutExpired):
        return cc


def workload_key(program: Program, build: BuildConfig, opts: OptimizeOptions) -> str:
    """Everything a measurement depends on except the configuration."""
    parts = {
        "polytune": code_fingerprint(),
        "source": hashlib.sha256(program.text.encode("utf-8", "surrogateescape")).hexdigest(),
        "scops": [a.scop.source_hash for a in program.scops],
        "compiler": compiler_id(build.cc),
        "cflags": list(build.cflags), "includes": list(build.includes), "defines": list(build.defines),
        "threads": build.threads if build.threads is not None else os.environ.get("OMP_NUM_THREADS"),
        "runs": build.runs, "rtol": build.rtol,
        "machine": machine_id(),
        "tile": opts.tile, "parallel": opts.parallel,
    }
    if opts.schedule != "pluto":
        parts["schedule"] = opts.schedule
    if opts.unroll_jam != OptimizeOptions.unroll_jam:
        parts["unroll_jam"] = opts.unroll_jam
    if opts.target != "c":
        parts["target"] = opts.target
        parts["gpu"] = gpu_id()
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """The version and a hash of polytune's own source: a measurement made by other code (a changed
    schedule or emitter, even under the same version number) is not reused."""
    from . import __version__
    root = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256(__version__.encode())
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        for name in sorted(f for f in filenames if f.endswith(".py")):
            with open(os.path.join(dirpath, name), "rb") as f:
                h.update(name.encode() + b"\0" + f.read())
    return f"{__version__}+{h.hexdigest()[:16]}"


def default_cache_path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "polytune", "measurements.sqlite")


@dataclass
class MeasurementCache:
    """Append-only sqlite store: each finished measurement is committed at once (a killed run loses none)."""

    path: str
    workload: str
    _db: sqlite3.Connection | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, timeout=30)
            self._db.execute("CREATE TABLE IF NOT EXISTS measurements (workload TEXT, config TEXT, "
                             "record TEXT, created REAL, PRIMARY KEY (workload, config))")
            self._db.commit()
        except sqlite3.Error as e:
            raise UsageError(f"cannot open the measurement cache: {e}", self.path) from None

    def get(self, config: tuple) -> Measurement | None:
        row = self._db.execute("SELECT record FROM measurements WHERE workload = ? AND config = ?",
                               (self.workload, json.dumps(list(config)))).fetchone()
        if row is None:
            return None
        rec = json.loads(row[0])
        return Measurement(tuple(rec["config"]), tuple(rec["times"]),
                           ErrorKind(rec["error"]) if rec["error"] else None, rec["compile_time"],
                           rec["detail"], cached=True)

    def put(self, m: Measurement) -> None:
        if m.error == ErrorKind.PRUNED:
            return  # depends on the incumbent of that search, not on the configuration alone
        rec = {"config": list(m.config), "times": list(m.times), "error": m.error.value if m.error else None,
               "compile_time": m.compile_time, "detail": m.detail}
        self._db.execute("INSERT OR REPLACE INTO measurements VALUES (?, ?, ?, ?)",
                         (self.workload, json.dumps(list(m.config)), json.dumps(rec), time.time()))
        self._db.commit()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()


def shell_flags(text: str | None) -> tuple[str, ...]:
    return tuple(shlex.split(text)) if text else ()
