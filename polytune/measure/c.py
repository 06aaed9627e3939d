"""The C target's runner: build, verify and time program variants with the C compiler.

A tuning build is the user's whole program with every scop region wrapped: the region is timed with
``timespec_get`` and, on the verification run, every element it wrote is written (as a double) to a dump
file. The reference build wraps the *original* region text the same way, so the two dumps must agree
before a variant's time counts.
"""
from __future__ import annotations

import hashlib
import math
import os
import re
import shlex
import subprocess
import tempfile
import time
from dataclasses import dataclass

import numpy as np

from ..emit.c import generate_dump
from ..errors import PolytuneError, UsageError
from ..pipeline import Program, generate_regions, region_code_lines, source_lines, splice, with_prelude
from ..steps import Done, Latest, WorkerState, this_process
from .build import Build, compile_objects, first_error
from .kept import KeptBuilds
from .measurement import ErrorKind, Measurement
from .runner import TwoSteps, Variant

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
static void polytune_skip(const volatile void *p) { (void)p; }
"""


def instrument(program: Program, codes: list[str]) -> str:
    """The program with region k replaced by codes[k], timed and followed by a dump of what it wrote."""
    reps = []
    for a, code in zip(program.scops, codes):
        dump = generate_dump(a.scop, indent=1, avoid=program.identifiers, generic=True)
        body = ("  { double polytune_t0 = polytune_start();\n" + code +
                "  polytune_region_seconds += polytune_now() - polytune_t0;\n"
                "  if (polytune_dump_file)\n" + dump + "  }\n")
        # (the dump reads the region's parameters: those its rewrites define, `pt_n_m` for n * m of a region
        # found without pragmas, are read before the timed code as the region's own prelude reads them)
        body = with_prelude(a.scop, body, 1)
        reps.append((a.scop.begin_line, a.scop.end_line, body))
    return PRELUDE + "#line 1\n" + splice(program.text, reps)


def original_regions(program: Program) -> list[str]:
    """Each region's own code as the file has it, under a `#line` of its first line: between the pragmas, or
    the lines of a region found without them (whose first and last lines are code: tune's reference of
    benchmarks/realc/nw.c lost its row loop's `for` line and did not compile)."""
    lines = source_lines(program.text)
    out = []
    for a in program.scops:
        begin, end = region_code_lines(program.text, a.scop)
        out.append(f"#line {begin}\n" + "".join(lines[begin - 1:end]))
    return out


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
    program: Build = Build()  # the program's other sources, libraries and arguments

    def flags(self) -> list[str]:
        return [*[f"-I{d}" for d in self.includes], *[f"-D{d}" for d in self.defines]]

    def compile_cmd(self, src: str, exe: str, quote: tuple[str, ...] = (), objects: tuple[str, ...] = ()) -> list[str]:
        """Compile *src* (the file with the regions; *quote*: where its "..." includes are) and link it with
        the program's *objects* (compiled once by objects_cmd) and libraries."""
        return [self.cc, *self.cflags, "-fopenmp", *[f"-iquote{d}" for d in quote], *self.flags(), src, "-o", exe,
                *self.program.link_flags(objects), "-lm"]

    def objects_cmd(self) -> list[str]:
        """How the program's other C sources are compiled (unchanged, with the same -I/-D)."""
        return [self.cc, *self.cflags, *self.flags()]


@dataclass
class RunResult:
    ok: bool
    region_time: float = 0.0
    wall: float = 0.0
    error: ErrorKind | None = None
    detail: str = ""
    output: tuple[str, str] | None = None  # (stdout, stderr), where asked for


class CRunner(TwoSteps):
    """Compiles and runs variants of one program in a private temporary directory (a Runner).

    A variant is measured in two steps that may run apart (``polytune.workers``): ``compile_variant(job)``
    generates and compiles it into a self-contained ``Compiled`` (the executable's bytes), then
    ``time_variant(reference, bound, compiled)`` verifies it against the original's results and times it.
    ``measure`` runs both here, one after the other. ``kept``: the executables of the variants measured,
    by their build options, for the re-run after the search (``measure`` offers its own; a workers pool's
    come back through ``keep``)."""

    def __init__(self, program: Program, build: BuildConfig, workdir: str | None = None):
        self.program = program
        self.build = build
        self._tmp = tempfile.TemporaryDirectory(prefix="polytune-") if workdir is None else None
        self.dir = workdir or self._tmp.name
        self.counter = 0
        self.reference_dump: np.ndarray | None = None
        self.reference_wall: float | None = None
        self.reference_output: ReferenceOutput | None = None
        self._objects: tuple[str, ...] | None = None
        self._object_bytes: tuple[tuple[str, bytes], ...] | None = None
        self.kept = KeptBuilds()
        remember_program(program)

    # the two steps as a workers pool takes them (picklable: pickled by the qualified name CRunner.compile_step)
    @staticmethod
    def compile_step(job: CompileJob):
        return compile_variant(job)

    @staticmethod
    def time_step(ref: Reference, bound, compiled: Compiled) -> Measurement:
        return time_variant(ref, bound, compiled)

    def keep(self, variant: Variant, measurement: Measurement, built: Compiled) -> None:
        self.kept.offer(variant.build, measurement, built)

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()

    # ---- building --------------------------------------------------------------------------------
    def objects(self) -> tuple[str, ...]:
        """The program's other sources, compiled once for the whole search."""
        if self._objects is None:
            self._objects = compile_objects(self.build.program, self.build.objects_cmd(),
                                            os.path.join(self.dir, "objects"))
        return self._objects

    def compile(self, text: str, name: str) -> tuple[str | None, float, str]:
        exe, dt, err, _ = compile_source(self.build, text, os.path.join(self.dir, name + ".c"),
                                         os.path.join(self.dir, name), quote=quote_dirs(self.program),
                                         objects=self.objects())
        return exe, dt, err

    def run(self, exe: str, dump: str | None, timeout: float | None, output: bool = False) -> RunResult:
        return run_program(self.build, exe, dump, timeout, output, self.build.program.cwd or self.dir)

    def timeout(self) -> float | None:
        if self.reference_wall is None:
            return None
        return self.build.timeout_factor * self.reference_wall + self.build.timeout_slack

    # ---- reference ---------------------------------------------------------------------------------
    def reference(self) -> Measurement:
        """Build and run the original regions: the dump every variant must match, and the baseline time."""
        text = instrument(self.program, original_regions(self.program))
        exe, ct, err = self.compile(text, "reference")
        if exe is None:
            hint = " (give the program's other sources after the file, e.g. PolyBench's utilities/polybench.c, " \
                "or its libraries with -l)" if "undefined reference" in err else ""
            raise PolytuneError(f"the original program does not build with {self.build.cc}: {err}{hint}",
                                self.program.path)
        dump = exe + ".dump"
        r = self.run(exe, dump, None, output=True)
        if not r.ok:
            raise PolytuneError(f"the original program failed: {r.detail}", self.program.path)
        self.reference_dump = np.fromfile(dump, dtype=np.float64)
        os.unlink(dump)
        self.reference_wall = r.wall
        first = r.output
        times, again = [], None
        for k in range(self.build.runs):
            r = self.run(exe, None, self.timeout(), output=k == 0)
            if not r.ok:
                raise PolytuneError(f"the original program failed: {r.detail}", self.program.path)
            times.append(r.region_time)
            again = again or r.output
        self.reference_output = ReferenceOutput.of(first, again)
        return Measurement((), tuple(times), None, ct, extra={"what": "original"})

    # ---- variants: the compile step and the time step ----------------------------------------------
    def job(self, variant: Variant) -> CompileJob:
        """What a compile worker needs to build *variant* (picklable, self-contained but for the program's
        file and headers, which are read where it runs)."""
        if self._object_bytes is None:
            self._object_bytes = tuple((os.path.basename(o), read_bytes(o)) for o in self.objects())
        return CompileJob(os.path.abspath(self.program.path), self.program.includes, self.program.defines,
                          program_digest(self.program), tuple(variant.config), variant.build, self.build,
                          quote_dirs(self.program), self._object_bytes, self.program.pure, self.program.auto,
                          self.program.left_out)

    def reference_data(self) -> Reference:
        """What the time step checks variants against (after ``reference()``)."""
        return Reference(self.reference_dump, self.reference_output, self.timeout(), self.build)

    def measure(self, variant: Variant, bound: float | None = None) -> Measurement:
        """Verify and time a variant (``variant.build``: its OptimizeOptions); with *bound*, a first run
        more than prune_factor times slower than it is not repeated (PRUNED)."""
        self.counter += 1
        compiled = compile_variant(self.job(variant), self.program)
        if not isinstance(compiled, Compiled):
            return compiled.value
        m = time_variant(self.reference_data(), bound, compiled)
        self.kept.offer(variant.build, m, compiled)
        return m


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def source_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def program_digest(program: Program) -> str:
    return source_digest(program.text)


class Analyzed(Latest[tuple, Program]):
    """A process's part of its ``WorkerState``: the programs it analyzed, by (path, includes, defines, text
    digest, ...): a compile worker analyzes its program once; the driver registers the one it analyzed
    (remember_program). The latest 8: a bench tunes kernel after kernel."""

    def __init__(self) -> None:
        super().__init__(8)


def _program_key(path: str, includes, defines, pure, auto: bool | None, digest: str, skip) -> tuple:
    """What tells two analyses of a file apart (one function, so that the driver's registration and a
    worker's lookup cannot drift: a key without `auto` never matched, and every compile analyzed again)."""
    return (os.path.abspath(path), tuple(includes), tuple(defines), tuple(pure), auto, digest, tuple(skip))


def remember_program(program: Program, state: WorkerState | None = None) -> None:
    key = _program_key(program.path, program.includes, program.defines, program.pure, program.auto,
                       program_digest(program), program.left_out)
    (state or this_process()).part(Analyzed).put(key, program)


def job_program(job: CompileJob, state: WorkerState | None = None) -> Program:
    """*job*'s program, analyzed once per process (*state*)."""
    analyzed = (state or this_process()).part(Analyzed)
    key = _program_key(job.path, job.includes, job.defines, job.pure, job.auto, job.digest, job.skip)
    program = analyzed.get(key)
    if program is None:
        from ..pipeline import analyze
        program = analyze(job.path, job.includes, job.defines, job.pure, job.auto, skip=job.skip)
        if program_digest(program) != job.digest:
            raise PolytuneError("the file changed while it was being tuned", job.path)
        analyzed.put(key, program)
    return program


@dataclass(frozen=True, eq=False)
class CompileJob:
    """The compile step's input: the program by path and content digest (analyzed once per process), the
    variant's options, how to build it, and the program's other objects as bytes (so that a compile on
    another machine needs only the file and its headers at the same path)."""

    path: str
    includes: tuple[str, ...]
    defines: tuple[str, ...]
    digest: str
    config: tuple
    opts: object  # the variant's OptimizeOptions
    build: BuildConfig
    quote: tuple[str, ...]
    objects: tuple[tuple[str, bytes], ...]
    pure: tuple[str, ...] = ()  # --pure: the functions the analysis takes for pure
    auto: bool | None = None  # --auto: region detection (pipeline.analyze)
    skip: tuple[int, ...] = ()  # the regions the tuning left out (Program.left_out: too slow to analyze)


@dataclass(frozen=True, eq=False)
class Compiled:
    """The compile step's output: a self-contained executable (its bytes, not a path), ready to verify and time."""

    config: tuple
    exe: bytes
    compile_time: float
    source: str = ""  # the compiled text's digest (source_digest): two builds of one text are one program
    generate_time: float = 0.0  # seconds generating the text before the compiler ran (a worker's first also
    # analyzes the program): where a compile step's time goes, reported per candidate (measure.pooled)


@dataclass(frozen=True, eq=False)
class Reference:
    """What the time step needs of the original: its results (the dump and the printed output), the run
    time-out it implies, and how programs are run."""

    dump: np.ndarray | None
    output: ReferenceOutput | None
    timeout: float | None
    build: BuildConfig


def variant_source(job: CompileJob, program: Program | None = None):
    """The compile step's first half: the variant's instrumented program text, or ``Done(Measurement)``
    where code generation fails."""
    program = program if program is not None else job_program(job)
    try:
        codes = generate_regions(program, job.opts)
    except PolytuneError as e:
        return Done(Measurement(job.config, error=ErrorKind.COMPILE, detail=f"code generation: {e}"))
    return instrument(program, codes)


def compile_variant(job: CompileJob, program: Program | None = None, source: str | None = None,
                    state: WorkerState | None = None):
    """The compile step: generate the variant's regions (or take *source*, ``variant_source``'s text) and
    compile the instrumented program (*program*, else the job's, analyzed once per process: *state*). A
    ``Compiled``, or ``Done(Measurement)`` when code generation or the compiler failed (a failure is a value)."""
    start = time.perf_counter()
    program = program if program is not None else job_program(job, state)
    text = variant_source(job, program) if source is None else source
    generated = time.perf_counter() - start
    if isinstance(text, Done):
        return text
    with tempfile.TemporaryDirectory(prefix="polytune-compile-") as tmp:
        exe, ct, err, _ = compile_source(job.build, text, os.path.join(tmp, "v.c"), os.path.join(tmp, "v"),
                                         quote=job.quote, objects=write_objects(job.objects, tmp))
        if exe is None:
            return Done(Measurement(job.config, error=ErrorKind.COMPILE, compile_time=ct, detail=err))
        return Compiled(job.config, read_bytes(exe), ct, source_digest(text), generated)


def write_objects(objects: tuple[tuple[str, bytes], ...], folder: str) -> tuple[str, ...]:
    """A job's objects (name, bytes) written to *folder*, for the link: their paths."""
    paths = []
    for name, data in objects:
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(data)
        paths.append(path)
    return tuple(paths)


def compile_only(job: CompileJob):
    """The compile step as a pool's whole candidate (``Done``: nothing is timed): its ``Compiled``, or the
    ``Done(Measurement)`` of a failure. For builds the caller runs itself (the re-run after the search)."""
    return Done(compile_variant(job))


def time_variant(ref: Reference, bound, compiled: Compiled) -> Measurement:
    """The time step: run the variant once to verify its results against the original's (the run doubles
    as the warm-up), then time it ``runs`` times. *bound* (a time, an object with ``.value``, or None): a
    first run more than prune_factor times slower than it is not repeated (PRUNED)."""
    bound = getattr(bound, "value", bound)
    with tempfile.TemporaryDirectory(prefix="polytune-run-") as tmp:
        exe = os.path.join(tmp, "v")
        with open(exe, "wb") as f:
            f.write(compiled.exe)
        os.chmod(exe, 0o700)
        return _verify_and_time(ref, compiled.config, exe, compiled.compile_time, bound, ref.build.program.cwd or tmp)



def _verify_and_time(ref: Reference, config: tuple, exe: str, ct: float, bound: float | None,
                     cwd: str) -> Measurement:
    build = ref.build
    dump = exe + ".dump"
    r = run_program(build, exe, dump, ref.timeout, True, cwd)  # verification run, doubles as the warm-up
    if not r.ok:
        return Measurement(config, error=r.error, compile_time=ct, detail=r.detail)
    got = np.fromfile(dump, dtype=np.float64)
    verdict = compare_dumps(ref.dump, got, build.rtol)
    if not verdict and ref.output is not None:
        # where the region's float elements drifted (within FLOAT_RTOL, beyond a double's tolerance), what the
        # program prints from them drifts alike: its numbers are compared at the float tolerance too
        drifted = build.rtol > 0 and bool(compare_dumps(ref.dump, got, build.rtol, floats=False))
        verdict = ref.output.compare(r.output, max(build.rtol, FLOAT_RTOL) if drifted else build.rtol)
        if verdict and compare_dumps(ref.dump, got, 0.0):
            verdict += (" (the region's results differ from the original's in the last bits, within --rtol, "
                        "and the program prints them exactly: gcc contracts multiply-adds differently in "
                        "other loop shapes; add -ffp-contract=off to --cflags)")
    if verdict:
        return Measurement(config, error=ErrorKind.WRONG_ANSWER, compile_time=ct, detail=verdict)
    times: list[float] = []
    for k in range(build.runs):
        r = run_program(build, exe, None, ref.timeout, False, cwd)
        if not r.ok:
            return Measurement(config, tuple(times), r.error, ct, r.detail)
        times.append(r.region_time)
        if k == 0 and bound is not None and build.runs > 1 and r.region_time > build.prune_factor * bound:
            return Measurement(config, tuple(times), ErrorKind.PRUNED, ct,
                               f"first run {r.region_time:.4g} s > {build.prune_factor:g} x best {bound:.4g} s")
    return Measurement(config, tuple(times), None, ct)


def run_program(build: BuildConfig, exe: str, dump: str | None, timeout: float | None, output: bool,
                cwd: str) -> RunResult:
    """Run a tuning build once (with the program's arguments, in *cwd*): its region time, or why it has none."""
    report = exe + ".time"
    if os.path.exists(report):
        os.unlink(report)
    env = dict(os.environ, POLYTUNE_REPORT=report)
    env.pop("POLYTUNE_DUMP", None)
    if dump:
        env["POLYTUNE_DUMP"] = dump
    if build.threads is not None:
        env["OMP_NUM_THREADS"] = str(build.threads)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([exe, *build.program.args], env=env,
                              stdout=subprocess.PIPE if output else subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        return RunResult(False, wall=time.perf_counter() - t0, error=ErrorKind.TIMEOUT,
                         detail=f"ran past {timeout:.1f} s")
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sig = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        return RunResult(False, wall=wall, error=ErrorKind.RUNTIME, detail=sig + (f": {err[-1]}" if err else ""))
    try:
        with open(report) as f:
            t = float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return RunResult(False, wall=wall, error=ErrorKind.RUNTIME, detail="no region time reported")
    out = (_text(proc.stdout), _text(proc.stderr)) if output else None
    return RunResult(True, region_time=t, wall=wall, output=out)


def quote_dirs(program: Program) -> tuple[str, ...]:
    """Where the file's own "..." includes are found: its directory (the build compiles a copy elsewhere)."""
    return (os.path.dirname(os.path.abspath(program.path)),)


def compile_source(build: BuildConfig, text: str, src: str, exe: str, timeout: float = 600,
                   label: str = "", timeout_message: str = "compiler timed out", quote: tuple[str, ...] = (),
                   objects: tuple[str, ...] = ()):
    """Write *text* to *src* and compile it to *exe* with *build*'s command (linked with *objects* and the
    program's libraries): (exe or None, seconds, first error line or '', the compiler's stderr). A missing
    compiler is the user's error."""
    with open(src, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(build.compile_cmd(src, exe, quote, objects), capture_output=True, text=True,
                              timeout=timeout)
    except FileNotFoundError:
        raise UsageError(f"{label}compiler not found: {build.cc}") from None
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - t0, timeout_message, ""
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        return None, dt, first_error(proc.stderr), proc.stderr
    return exe, dt, "", proc.stderr


FLOAT_RTOL = 1e-5  # the result check's relative tolerance for elements of float arrays (compare_dumps)


def compare_dumps(ref: np.ndarray | None, got: np.ndarray, rtol: float, floats: bool = True) -> str:
    """'' when the variant wrote the same values as the original, else what differs. *floats* False: float
    elements are held to *rtol* as well (no FLOAT_RTOL)."""
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
        if floats and not close.all():
            # elements of float arrays (both values float32 numbers, not integers): gcc contracts a * b + c into
            # an FMA differently in another loop shape, a float's rounding is 2^-24, and a long sum drifts by a few
            # of them (matmul_batch: 1.5e-7 apart, which a double's tolerance took for a wrong answer)
            with np.errstate(over="ignore", invalid="ignore"):
                single = (ref == ref.astype(np.float32)) & (got == got.astype(np.float32)) & (ref != np.round(ref))
            close |= single & np.isclose(got, ref, rtol=max(rtol, FLOAT_RTOL),
                                         atol=max(rtol, FLOAT_RTOL) * 1e-3 * (scale or 1.0), equal_nan=True)
        if close.all():
            return ""
        same = close
    bad = np.flatnonzero(~same)
    k = int(bad[0])
    return f"{bad.size} of {ref.size} values differ (first at #{k}: {float(got[k])!r} instead of {float(ref[k])!r})"




def _text(b: bytes | None) -> str:
    return b.decode(errors="replace") if b else ""


NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)", re.I)


@dataclass(frozen=True)
class ReferenceOutput:
    """What the original program prints (stdout and stderr: PolyBench dumps its arrays on stderr), for
    comparing a variant's output with. Lines that differ between two runs of the original (a printed time)
    are not compared; a stream whose line count differs between them is not compared at all."""

    streams: tuple[tuple[str, ...] | None, tuple[str, ...] | None]
    varying: tuple[frozenset[int], frozenset[int]]

    @classmethod
    def of(cls, first: tuple[str, str] | None, again: tuple[str, str] | None) -> ReferenceOutput:
        streams, varying = [], []
        for k in range(2):
            a = tuple(first[k].splitlines()) if first else ()
            b = tuple(again[k].splitlines()) if again else a
            if len(a) != len(b):
                streams.append(None)
                varying.append(frozenset())
            else:
                streams.append(a)
                varying.append(frozenset(i for i, (x, y) in enumerate(zip(a, b)) if x != y))
        return cls(tuple(streams), tuple(varying))

    def compare(self, got: tuple[str, str] | None, rtol: float) -> str:
        """'' when *got* prints what the original prints, else where it differs. Numbers may differ by the
        result tolerance, or by one unit of their last printed digit (a value within the tolerance that
        rounds the other way); everything else must be identical."""
        if got is None:
            return ""
        for name, ref, vary, text in zip(("stdout", "stderr"), self.streams, self.varying, got):
            if ref is None:
                continue
            lines = text.splitlines()
            if len(lines) != len(ref):
                return f"printed {len(lines)} lines on {name}, the original {len(ref)}"
            for i, (a, b) in enumerate(zip(ref, lines)):
                if i not in vary and a != b and not _same_line(a, b, rtol):
                    return f"{name} line {i + 1} differs: {b.strip()[:80]!r} instead of {a.strip()[:80]!r}"
        return ""


def _same_line(ref: str, got: str, rtol: float) -> bool:
    if NUMBER.sub("#", ref) != NUMBER.sub("#", got):
        return False
    return all(_same_number(a, b, rtol) for a, b in zip(NUMBER.findall(ref), NUMBER.findall(got)))


def _same_number(ref: str, got: str, rtol: float) -> bool:
    if ref == got:
        return True
    x, y = float(ref), float(got)
    if math.isclose(x, y, rel_tol=rtol, abs_tol=0.0) or (math.isnan(x) and math.isnan(y)):
        return True
    frac = re.search(r"\.(\d*)", ref)
    if frac is None or re.search(r"[eE]", ref):  # integers exact; 1.5e-03: one unit of the mantissa's last digit
        m = re.fullmatch(r"[-+]?(\d*)\.?(\d*)[eE]([-+]?\d+)", ref)
        return bool(m) and abs(x - y) <= 1.0001 * 10.0 ** (int(m.group(3)) - len(m.group(2)))
    return abs(x - y) <= 1.0001 * 10.0 ** -len(frac.group(1))


def shell_flags(text: str | None) -> tuple[str, ...]:
    return tuple(shlex.split(text)) if text else ()
