"""Measuring CUDA variants: one serving process per build (the flat mapping: one build per search).

The tuning build (``generate_cuda(..., serve=True)``) reads block shapes from a pipe. For each it
restores the device arrays from pristine copies, runs the region's kernels ``reps`` times, timing each
round with CUDA events (the first round is the warm-up and is dropped), copies the results back, dumps
them for verification and answers ``ok <copy-back ms> <ms> <ms> ...``, or ``error <code> <message>``.
Transfers are kept out of the kernel time and reported separately. A process that dies (a sticky CUDA
error) or hangs is recorded against the configuration it was serving and restarted for the next one.

A tiled mapping has its blocks built in: each gets its own build (measure_mapping), served the same way.

On workers (polytune.workers) a candidate is two steps: compile_mapping (in a compile worker: the build
generated and compiled, or the flat build's block checked) and time_mapping (on the GPU's timer: served by
the timer process's serving process, the results checked). The kernels run under gpu_lock, one tune's at a
time on the machine (or on each GPU a process was given).

Before a configuration runs it is checked against the hardware limits and against the kernels' register
use read from ptxas (threads x registers per thread must fit the register file of a block): a
configuration that cannot launch is rejected as RESOURCES without running (Algorithm 9.1's "reject").
"""
from __future__ import annotations

import atexit
import contextlib
import dataclasses
import fcntl
import hashlib
import math
import os
import re
import select
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass

import numpy as np

from ..emit.c import generate_dump
from ..emit.cuda import MAX_DIM, MAX_THREADS, CudaMapping, kernel_block, resource_problem
from ..errors import PolytuneError, UsageError
from ..pipeline import OptimizeOptions, Program, cuda_program, generate_cuda
from ..stats import shift_interval
from ..steps import Done, Latest, WorkerState, this_process
from .c import (
    BuildConfig,
    CompileJob,
    CRunner,
    Reference,
    compare_dumps,
    compile_source,
    job_program,
    quote_dirs,
    read_bytes,
    source_digest,
    write_objects,
)
from .cache import gpu_id
from .measurement import ErrorKind, Measurement
from .runner import TwoSteps, Variant

REGISTERS_PER_BLOCK = 65536
GPU_LOCK_ENV = "POLYTUNE_GPU_LOCK"


@contextlib.contextmanager
def gpu_lock():
    """Held while kernels are timed on the GPU: an ``flock`` on the machine-wide timer lock (the one every
    tune's timings take, polytune.workers.local), or on the file $POLYTUNE_GPU_LOCK names. Several tunes on
    one machine then compile, start their serving processes and check results at the same time, but run
    their kernels one at a time. A process given its own GPUs ($CUDA_VISIBLE_DEVICES: a Ray timer per GPU)
    locks those GPUs only, so that the timers of one node's GPUs time at once. (Not taken inside a pool's
    timer lock: the GPU pools' timers take none.)"""
    path = os.environ.get(GPU_LOCK_ENV) or gpu_lock_path(os.environ.get("CUDA_VISIBLE_DEVICES", ""))
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def gpu_lock_path(visible: str) -> str:
    """The lock file of the GPUs *visible* names ('' or unset: the machine-wide timer lock)."""
    from ..steps import default_lock_path
    if not visible.strip():
        return default_lock_path()
    return default_lock_path()[:-len(".lock")] + "-gpu" + re.sub(r"[^\w,-]", "_", visible.strip()) + ".lock"


SERVE_PRELUDE = r"""/* polytune CUDA tuning harness */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static FILE *polytune_dump_file, *polytune_in, *polytune_out;
static char polytune_reply[1 << 16];
static size_t polytune_reply_len;
static float polytune_transfer_ms;
static void polytune_dump(double v) { fwrite(&v, sizeof v, 1, polytune_dump_file); }
static void polytune_dump_open(void)
{
  const char *p = getenv("POLYTUNE_DUMP");
  polytune_dump_file = fopen(p ? p : "/dev/null", "wb");
  if (!polytune_dump_file) { fprintf(stderr, "polytune: cannot write the dump\n"); exit(2); }
}
static void polytune_dump_close(void) { fclose(polytune_dump_file); polytune_dump_file = NULL; }
static int polytune_serve_next(int *bx, int *by, int *bz, int *reps, int *dump)
{
  if (!polytune_in) {
    const char *s = getenv("POLYTUNE_SERVE_FDS");
    int a, b;
    if (!s || sscanf(s, "%d,%d", &a, &b) != 2) { fprintf(stderr, "polytune: not started by the tuner\n"); exit(2); }
    polytune_in = fdopen(a, "r");
    polytune_out = fdopen(b, "w");
  }
  polytune_reply_len = 0;
  polytune_transfer_ms = 0;
  return fscanf(polytune_in, "%d %d %d %d %d", bx, by, bz, reps, dump) == 5;
}
static void polytune_serve_time(float ms)
{
  if (polytune_reply_len < sizeof polytune_reply - 32)
    polytune_reply_len += sprintf(polytune_reply + polytune_reply_len, " %.6f", ms);
}
static void polytune_serve_transfer(float ms) { polytune_transfer_ms = ms; }
static void polytune_serve_reply(void)
{
  fprintf(polytune_out, "ok %.6f%s\n", polytune_transfer_ms, polytune_reply);
  fflush(polytune_out);
}
static void polytune_serve_error(cudaError_t e)
{
  /* a launch that could not start leaves the context usable; anything else does not */
  int usable = e == cudaErrorInvalidConfiguration || e == cudaErrorLaunchOutOfResources || e == cudaErrorInvalidValue;
  fprintf(polytune_out, "error %s %s\n", usable ? "resources" : "fatal", cudaGetErrorString(e));
  fflush(polytune_out);
  if (!usable) exit(3);
}
"""


@dataclass(frozen=True)
class CudaBuildConfig(BuildConfig):
    cc: str = "nvcc"
    cflags: tuple[str, ...] = ("-O3", "-arch=native")
    reference_cc: str = "gcc"
    reference_cflags: tuple[str, ...] = ("-O3", "-march=native")
    # Float data and the GPU's fused multiply-adds: see docs (README, "Tolerances").
    rtol: float = 1e-4
    reply_timeout: float = 120.0

    def compile_cmd(self, src: str, exe: str, quote: tuple[str, ...] = (), objects: tuple[str, ...] = ()) -> list[str]:
        # nvcc's -x applies to every input, objects included: a .cu name says CUDA without it
        lang = [] if src.endswith(".cu") else ["-x", "cu"]
        return [self.cc, *self.cflags, "-Xptxas", "-v", *lang, *[f"-I{d}" for d in quote], *self.flags(), src,
                "-o", exe, *self.program.link_flags(objects), "-lm"]

    def objects_cmd(self) -> list[str]:
        """The program's other sources stay C: compiled by the C compiler (the CUDA file declares their
        functions extern "C", see polytune.linkage), linked by nvcc."""
        return self.reference().objects_cmd()

    def reference(self) -> BuildConfig:
        return BuildConfig(cc=self.reference_cc, cflags=self.reference_cflags, includes=self.includes,
                           defines=self.defines, runs=1, rtol=self.rtol, program=self.program)


def parse_ptxas(stderr: str) -> dict[str, dict]:
    """Per kernel (mangled name): registers per thread and spill bytes, from ``-Xptxas -v``."""
    out: dict[str, dict] = {}
    current = None
    for line in stderr.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line) or re.search(r"Function properties for (\w+)", line)
        if m:
            current = m.group(1)
            out.setdefault(current, {"registers": 0, "spill": 0})
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            out[current]["spill"] = max(out[current]["spill"], int(m.group(1)) + int(m.group(2)))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            out[current]["registers"] = int(m.group(1))
    return out


def block_problem(config: tuple[int, ...], kernels_mapped: list[int], registers: int) -> str:
    """Why a block shape cannot launch ('' if it can)."""
    threads = math.prod(config)
    if threads > MAX_THREADS:
        return f"{threads} threads per block (at most {MAX_THREADS})"
    for mapped in set(kernels_mapped):
        shape = kernel_block(mapped, config)
        for d, (s, most) in enumerate(zip(shape, MAX_DIM)):
            if s > most:
                return f"block {'xyz'[d]} = {s} (at most {most})"
    if registers and threads * registers > REGISTERS_PER_BLOCK:
        return f"{threads} threads x {registers} registers > {REGISTERS_PER_BLOCK} registers per block"
    return ""


def serve_source(program: Program) -> str:
    """The tuning build: the whole program as CUDA, serving block shapes read from a pipe."""
    dumps = [generate_dump(a.scop, indent=3, avoid=program.identifiers) for a in program.scops]
    return SERVE_PRELUDE + generate_cuda(program, OptimizeOptions(target="cuda"), serve=True, dumps=dumps)


def mapping_build(program: Program, mapping: CudaMapping) -> tuple[str, str]:
    """The tuning build of a tiled *mapping* (its blocks are built in: one build per mapping) and why its
    kernels cannot run ('' if they can), known before compiling (shared memory, registers: resource_problem)."""
    dumps = [generate_dump(a.scop, indent=3, avoid=program.identifiers) for a in program.scops]
    text, regions = cuda_program(program, OptimizeOptions(target="cuda"), serve=True, dumps=dumps, mapping=mapping)
    return SERVE_PRELUDE + text, "; ".join(x for x in (resource_problem(r) for r in regions) if x)


def kernel_registers_problem(resources: dict[str, dict], threads: dict[str, int]) -> str:
    """Why a kernel cannot launch with its built-in block, from ptxas's registers per thread ('' if all can):
    *threads* by kernel name (a ptxas name is the mangled template, which contains it)."""
    for mangled, r in resources.items():
        for name, n in threads.items():
            named = mangled == name or f"{len(name)}{name}" in mangled  # (Itanium mangling: length, name)
            if named and n * r["registers"] > REGISTERS_PER_BLOCK:
                return f"{name}: {n} threads x {r['registers']} registers > {REGISTERS_PER_BLOCK} per block"
    return ""


class Server:
    """The serving process of one tuning build (SERVE_PRELUDE's protocol: a request line in, a reply line out).
    A process that dies (a sticky CUDA error) or hangs is killed (``alive`` turns False); its owner starts
    another one for the next request."""

    def __init__(self, exe: str, build: CudaBuildConfig, cwd: str):
        cmd_r, cmd_w = os.pipe()
        rep_r, rep_w = os.pipe()
        env = dict(os.environ, POLYTUNE_SERVE_FDS=f"{cmd_r},{rep_w}", POLYTUNE_DUMP=exe + ".dump",
                   CUDA_MODULE_LOADING="EAGER")
        self.exe = exe
        self.build = build
        self.errlog = tempfile.TemporaryFile()
        self.proc: subprocess.Popen | None = subprocess.Popen(
            [exe, *build.program.args], env=env, pass_fds=(cmd_r, rep_w), stdout=subprocess.DEVNULL,
            stderr=self.errlog, cwd=cwd)
        os.close(cmd_r)
        os.close(rep_w)
        self._w = os.fdopen(cmd_w, "w")
        self._r = os.fdopen(rep_r, "r")

    @property
    def alive(self) -> bool:
        return self.proc is not None

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            self._w.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._r.close()
        self.errlog.close()
        self.proc = None

    def kill(self) -> str:
        """Kill the process: the last line it wrote to stderr, or its exit status."""
        self.proc.kill()
        self.proc.wait()
        self.errlog.seek(0)
        err = self.errlog.read().decode(errors="replace").strip().splitlines()
        self.errlog.close()
        code = self.proc.returncode
        self._r.close()
        try:
            self._w.close()
        except OSError:
            pass
        self.proc = None
        return (err[-1] if err else "") or f"exit status {code}"

    def ask(self, line: str) -> tuple[str | None, str]:
        """Send one request; (reply, '') or (None, why)."""
        try:
            self._w.write(line + "\n")
            self._w.flush()
        except (BrokenPipeError, OSError):
            return None, "runtime: " + self.kill()
        ready, _, _ = select.select([self._r], [], [], self.build.reply_timeout)
        if not ready:
            self.kill()
            return None, f"timeout: no answer within {self.build.reply_timeout:.0f} s"
        reply = self._r.readline()
        if not reply:
            return None, "runtime: " + self.kill()
        return reply.strip(), ""

    def measure(self, config: tuple[int, ...], block: tuple[int, ...], compile_time: float,
                reference_dump: np.ndarray | None) -> Measurement:
        """One round: the kernels run ``runs`` + 1 times with *block* (the first round is the warm-up), the
        results checked against *reference_dump*."""
        b = list(block) + [1] * (3 - len(block))
        with gpu_lock():
            reply, why = self.ask(f"{b[0]} {b[1]} {b[2]} {self.build.runs + 1} 1")
        if reply is None:
            kind = ErrorKind.TIMEOUT if why.startswith("timeout") else ErrorKind.RUNTIME
            return Measurement(config, error=kind, detail=why.split(": ", 1)[1])
        parts = reply.split()
        if parts[0] == "error":
            kind = ErrorKind.RESOURCES if parts[1] == "resources" else ErrorKind.RUNTIME
            if kind == ErrorKind.RUNTIME:
                self.kill()
            return Measurement(config, error=kind, detail=" ".join(parts[2:]))
        transfer_ms = float(parts[1])
        times = [float(x) / 1000.0 for x in parts[2:]][1:]  # the first round is the warm-up
        dump = self.exe + ".dump"
        verdict = compare_dumps(reference_dump, np.fromfile(dump, dtype=np.float64), self.build.rtol)
        os.unlink(dump)
        if verdict:
            return Measurement(config, error=ErrorKind.WRONG_ANSWER, detail=verdict)
        return Measurement(config, tuple(times), None, compile_time, extra={"copy_back_ms": transfer_ms})


def mapping_text(program: Program, mapping: CudaMapping, config: tuple[int, ...]) -> str | Measurement:
    """A tiled mapping's tuning build (mapping_build), or the Measurement of why it cannot be built or run,
    known before compiling: RESOURCES (shared memory, registers held per thread, the block shape), COMPILE
    (code generation failed)."""
    try:
        text, why = mapping_build(program, mapping)
    except UsageError as e:  # a block shape or points over the hardware's limits
        return Measurement(config, error=ErrorKind.RESOURCES, detail=str(e))
    except PolytuneError as e:
        return Measurement(config, error=ErrorKind.COMPILE, detail=f"code generation: {e}")
    if why:
        return Measurement(config, error=ErrorKind.RESOURCES, detail=why)
    return text


def shares_build(mapping: CudaMapping) -> bool:
    """Whether *mapping* runs on the one flat build of a search (the flat mapping of PPCG's schedule, its block
    read from the pipe); every other mapping has a build of its own."""
    return mapping.flat and not mapping.fuse


def served_block(mapping: CudaMapping) -> tuple[int, ...]:
    """The block a request to a mapping's own build names: a flat build reads it from the pipe, a tiled one
    has its blocks built in (and ignores it)."""
    return tuple(mapping.block) if mapping.flat else (1, 1, 1)


def own_build_problem(program: Program, mapping: CudaMapping, text: str, ptxas: dict[str, dict]) -> str:
    """Why a compiled build of *mapping*'s own cannot launch ('' if it can): a tiled build's kernels with their
    built-in blocks (launch_problem), a flat one's with the block it is asked for (block_problem)."""
    if not mapping.flat:
        return launch_problem(text, ptxas)
    mapped = [k.mapped for a in program.scops for k in a.gpu_mapping(mapping.fuse).kernels]
    return block_problem(tuple(mapping.block), mapped, max((r["registers"] for r in ptxas.values()), default=0))


def launch_problem(text: str, ptxas: dict[str, dict]) -> str:
    """Why a compiled tiled build's kernels cannot launch with their built-in blocks ('' if they can)."""
    threads = {name: int(n) for n, name in re.findall(r"__launch_bounds__\((\d+)\) (\w+)\(", text)}
    return kernel_registers_problem(ptxas, threads)


def _nvcc(build: CudaBuildConfig, text: str, folder: str, stem: str, quote: tuple[str, ...],
          objects: tuple[str, ...]) -> tuple:
    """nvcc on a whole-program text (as FOLDER/STEM.cu -> FOLDER/STEM): (executable or None, error or None,
    ptxas's resource usage, compile seconds)."""
    try:
        exe, dt, err, stderr = compile_source(build, text, os.path.join(folder, f"{stem}.cu"),
                                              os.path.join(folder, stem), timeout=900, label="CUDA ",
                                              timeout_message="nvcc timed out", quote=quote, objects=objects)
    except PolytuneError as e:
        exe, dt, err, stderr = None, 0.0, str(e), ""
    return exe, err, parse_ptxas(stderr) if exe else {}, dt


# ---- the compile step and the time step (polytune.workers) ---------------------------------------------------
@dataclass(frozen=True, eq=False)
class SharedBuild:
    """The flat mapping's one tuning build, compiled once by the runner (CudaRunner.compile): every flat
    candidate runs it with its own block, so their compile step compiles nothing."""

    exe: bytes | None
    digest: str
    compile_time: float
    registers: int
    error: str
    kernels_mapped: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class CudaJob(CompileJob):
    """The compile step's input (CompileJob's, ``opts`` the variant's CudaMapping); ``shared``: the flat
    mapping's build, for a flat variant."""

    shared: SharedBuild | None = None


@dataclass(frozen=True, eq=False)
class CudaCompiled:
    """The compile step's output: the build that serves the candidate (its bytes; ``digest``: candidates of
    one build run in one serving process, one after the other) and the block it asks for."""

    config: tuple
    exe: bytes
    digest: str
    block: tuple[int, ...]
    compile_time: float
    generate_time: float = 0.0


class Compiles(Latest[tuple, tuple]):
    """A compile worker's part of its ``WorkerState``: its latest 4 compiles, (text digest, build) -> (bytes,
    error, ptxas, s)."""

    def __init__(self) -> None:
        super().__init__(4)


def compile_mapping(job: CudaJob, state: WorkerState | None = None):
    """The compile step of a CUDA candidate (in a compile worker): a tiled mapping's build generated and
    compiled with nvcc, its limits checked before (mapping_text) and after (ptxas's registers); a flat one
    checked against the shared build's registers. A ``CudaCompiled``, or ``Done(Measurement)`` where the
    candidate cannot run."""
    mapping, config = job.opts, job.config
    if job.shared is not None:
        s = job.shared
        if s.exe is None:
            return Done(Measurement(config, error=ErrorKind.COMPILE, detail=s.error))
        block = tuple(mapping.block)
        why = block_problem(block, list(s.kernels_mapped), s.registers)
        if why:
            return Done(Measurement(config, error=ErrorKind.RESOURCES, detail=why))
        return CudaCompiled(config, s.exe, s.digest, block, s.compile_time)
    state = state or this_process()
    start = time.perf_counter()
    text = mapping_text(job_program(job, state), mapping, config)
    generated = time.perf_counter() - start
    if isinstance(text, Measurement):
        return Done(text)
    key = (source_digest(text), job.build)
    compiles = state.part(Compiles)
    built = compiles.get(key)
    if built is None:
        with tempfile.TemporaryDirectory(prefix="polytune-cuda-compile-") as tmp:
            exe, err, ptxas, dt = _nvcc(job.build, text, tmp, "v", job.quote, write_objects(job.objects, tmp))
            built = compiles.put(key, (read_bytes(exe) if exe else None, err, ptxas, dt))
    data, err, ptxas, dt = built
    if data is None:
        return Done(Measurement(config, error=ErrorKind.COMPILE, compile_time=dt, detail=err))
    why = own_build_problem(job_program(job, state), mapping, text, ptxas)
    if why:
        return Done(Measurement(config, error=ErrorKind.RESOURCES, compile_time=dt, detail=why))
    return CudaCompiled(config, data, key[0], served_block(mapping), dt, generated)


class Serving:
    """A timer's part of its ``WorkerState``: the time step's serving process (one per process), kept while the
    candidates run one build, and the directory of its executables (removed when the process exits)."""

    def __init__(self) -> None:
        self.server: Server | None = None
        self.lock = threading.Lock()
        self.dir: str | None = None

    def measure(self, ref: Reference, compiled: CudaCompiled) -> Measurement:
        with self.lock:
            if self.dir is None:
                self.dir = tempfile.mkdtemp(prefix="polytune-serve-")
                atexit.register(self.remove_dir)
            exe = os.path.join(self.dir, compiled.digest[:24])
            if self.server is None or self.server.exe != exe:
                self._stop()
                with open(exe, "wb") as f:
                    f.write(compiled.exe)
                os.chmod(exe, 0o700)
            self.server = serving(self.server, exe, ref.build, ref.build.program.cwd or self.dir)
            return self.server.measure(compiled.config, compiled.block, compiled.compile_time, ref.dump)

    def stop(self) -> None:
        """Stop the serving process (it holds device memory) and remove its executable."""
        with self.lock:
            self._stop()

    def remove_dir(self) -> None:
        self.stop()
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            with contextlib.suppress(OSError):
                os.unlink(self.server.exe)
            self.server = None


def time_mapping(ref: Reference, bound, compiled: CudaCompiled, state: WorkerState | None = None) -> Measurement:
    """The time step (on the GPU's timer): the candidate's build served by this process's serving process
    (*state*'s), started for it unless the candidate before ran the same build (the flat mapping's candidates);
    one request, the results checked against the original's. *bound* is not used: a round of kernels is cheap."""
    return (state or this_process()).part(Serving).measure(ref, compiled)


def serving(server: Server | None, exe: str, build: CudaBuildConfig, cwd: str) -> Server:
    """*server* where it serves *exe* and is alive, else a new serving process of *exe* (*server* stopped)."""
    if server is not None and server.exe == exe and server.alive:
        return server
    if server is not None:
        server.stop()
    return Server(exe, build, cwd)


def stop_server(state: WorkerState | None = None) -> None:
    """Stop the time step's serving process of this process (*state*)."""
    (state or this_process()).part(Serving).stop()


class CudaRunner(TwoSteps):
    """Verifies and times the mappings of one program on the GPU (a Runner: a variant's ``build`` is its
    CudaMapping; see measure).

    Measured here (``measure``), a variant's build is compiled in the runner's directory and served by the
    runner's serving process. On workers (``polytune.workers``), the two steps run apart: ``compile_step``
    (``compile_mapping``: generate and compile, in a compile worker) and ``time_step`` (``time_mapping``:
    serve and verify, on the timer), with ``job(variant)`` and ``reference_data()``."""

    compile_step = staticmethod(compile_mapping)
    time_step = staticmethod(time_mapping)

    def __init__(self, program: Program, build: CudaBuildConfig):
        self.program = program
        self.build = build
        self.cpu = CRunner(program, build.reference())
        self.dir = self.cpu.dir
        self.exe: str | None = None
        self.compile_error = ""
        self.compile_time = 0.0
        self.resources: dict[str, dict] = {}
        self.server: Server | None = None
        self.builds: dict[str, tuple] = {}  # a mapping's build text -> (exe or None, error, ptxas, compile s)
        self.kernels_mapped = [k.mapped for a in program.scops for k in a.gpu.kernels]
        self._shared: SharedBuild | None = None
        self._shared_lock = threading.Lock()
        self._jobs: set = set()  # the tiled mappings handed to compile workers (job)

    @property
    def reference_dump(self):
        return self.cpu.reference_dump

    @property
    def mapping_builds(self) -> int:
        """The tiled mappings built: compiled here, or handed to compile workers."""
        return len(self.builds) + len(self._jobs)

    def close(self) -> None:
        self.stop()
        self.cpu.close()

    def reference(self) -> Measurement:
        """The original program on the CPU: the results every variant must reproduce."""
        if not gpu_id():
            raise UsageError("tuning for the cuda target needs an NVIDIA GPU (nvidia-smi finds none); "
                             "'polytune optimize --target cuda' works without one")
        return self.cpu.reference()

    # ---- building ----------------------------------------------------------------------------------
    def compile(self) -> None:
        try:
            text = serve_source(self.program)
        except PolytuneError as e:
            self.compile_error = f"code generation: {e}"
            return
        try:
            objects = self.cpu.objects()
        except PolytuneError as e:
            self.compile_error = str(e)
            return
        exe, err, ptxas, dt = _nvcc(self.build, text, self.dir, "serve", quote_dirs(self.program), objects)
        if exe is None:
            self.compile_error = err
            return
        self.compile_time = dt
        self.resources = ptxas
        self.exe = exe

    @property
    def registers(self) -> int:
        return max((r["registers"] for r in self.resources.values()), default=0)

    @property
    def spills(self) -> int:
        return max((r["spill"] for r in self.resources.values()), default=0)

    # ---- the serving process -------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the serving processes (this runner's and the time step's: they hold device memory)."""
        if self.server is not None:
            self.server.stop()
            self.server = None
        stop_server()

    # ---- the two steps on workers ---------------------------------------------------------------------
    def job(self, variant: Variant) -> CudaJob:
        """What a compile worker needs to build *variant* (picklable): the program by path and digest, the
        variant's mapping, the build, the program's other objects and, for a flat variant, the shared build
        (compiled here on first use)."""
        mapping = _mapping_of(variant)
        base = self.cpu.job(variant)
        fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(base)}
        if not shares_build(mapping):
            self._jobs.add(mapping)
        return CudaJob(**dict(fields, opts=mapping, build=self.build),
                       shared=self.shared_build() if shares_build(mapping) else None)

    def shared_build(self) -> SharedBuild:
        """The flat mapping's build as the compile step takes it (compiled on first use)."""
        with self._shared_lock:
            if self._shared is None:
                if self.exe is None and not self.compile_error:
                    self.compile()
                data = read_bytes(self.exe) if self.exe else None
                self._shared = SharedBuild(data, hashlib.sha256(data or b"").hexdigest(), self.compile_time,
                                           self.registers, self.compile_error, tuple(self.kernels_mapped))
            return self._shared

    def reference_data(self) -> Reference:
        """What the time step checks variants against (after ``reference()``)."""
        return Reference(self.reference_dump, None, None, self.build)

    # ---- one configuration, measured here ------------------------------------------------------------
    def measure(self, variant: Variant, bound: float | None = None) -> Measurement:
        """A variant's ``build`` is its CudaMapping (the flat one reads its block from the pipe of the one
        shared build; a tiled one has its own build) or, from older callers, None: the config is a block."""
        mapping = variant.build if isinstance(variant.build, CudaMapping) else None
        if mapping is None:
            return self.measure_block(tuple(variant.config))
        if shares_build(mapping):
            return self.measure_block(tuple(mapping.block), tuple(variant.config))
        return self.measure_mapping(mapping, tuple(variant.config))

    def compile_text(self, text: str, stem: str) -> tuple:
        """nvcc on a whole-program text (as DIR/STEM.cu -> DIR/STEM): (executable or None, error or None,
        ptxas's resource usage, compile seconds), the entry ``self.builds`` keeps per text. Thread-safe: a
        benchmark may compile several texts at once before measuring them."""
        try:
            objects = self.cpu.objects()
        except PolytuneError as e:
            return None, str(e), {}, 0.0
        return _nvcc(self.build, text, self.dir, stem, quote_dirs(self.program), objects)

    def measure_mapping(self, mapping: CudaMapping, config: tuple[int, ...]) -> Measurement:
        """Verify and time a mapping with a build of its own (a tiled one; a flat one of the fused schedule):
        limits checked before compiling (shared memory, registers held per thread, the block shape), then
        after (ptxas's registers per thread x threads): a configuration that cannot run is RESOURCES, never a
        time."""
        text = mapping_text(self.program, mapping, config)
        if isinstance(text, Measurement):
            return text
        if text not in self.builds:
            self.builds[text] = self.compile_text(text, f"serve{len(self.builds)}")
        exe, err, ptxas, dt = self.builds[text]
        if exe is None:
            return Measurement(config, error=ErrorKind.COMPILE, detail=err)
        why = own_build_problem(self.program, mapping, text, ptxas)
        if why:
            return Measurement(config, error=ErrorKind.RESOURCES, detail=why)
        return self._serve(exe, config, served_block(mapping), dt)

    def measure_block(self, block: tuple[int, ...], config: tuple[int, ...] | None = None) -> Measurement:
        """Verify and time one block shape of the flat build (no pruning: a round of kernels is cheap)."""
        config = block if config is None else config
        if self.exe is None and not self.compile_error:
            self.compile()
        if self.exe is None:
            return Measurement(config, error=ErrorKind.COMPILE, detail=self.compile_error)
        why = block_problem(block, self.kernels_mapped, self.registers)
        if why:
            return Measurement(config, error=ErrorKind.RESOURCES, detail=why)
        return self._serve(self.exe, config, block, self.compile_time)

    def _serve(self, exe: str, config: tuple[int, ...], block: tuple[int, ...], compile_time: float) -> Measurement:
        """One round of requests to the serving process of *exe* (started, or switched to, as needed)."""
        self.server = serving(self.server, exe, self.build, self.build.program.cwd or self.dir)
        return self.server.measure(config, block, compile_time, self.reference_dump)


def _mapping_of(variant: Variant) -> CudaMapping:
    """A variant's mapping (from older callers, whose variants carry no build: the flat one on the config's
    block)."""
    if isinstance(variant.build, CudaMapping):
        return variant.build
    return CudaMapping(block=tuple(variant.config), flat=True)


# ---- the tuned gain, re-measured in the program ------------------------------------------------------------
REGION_MS = re.compile(r"polytune-region-ms: ([\d.eE+-]+)")
KERNEL_MS = re.compile(r"polytune-kernel-ms: ([\d.eE+-]+)")
# the region's phases: allocation and copies in, kernels, copies out, frees (ms)
REGION_PARTS_MS = re.compile(r"polytune-region-parts-ms: in ([\d.eE+-]+) run ([\d.eE+-]+) out ([\d.eE+-]+) "
                             r"free ([\d.eE+-]+)")
PROGRAM_TOLERANCE = 0.03  # a program gain this far below the kernel gain is reported as not holding
# The kernels' module loads with the context (made at program start by the timed build), not at the first
# launch inside the region: a one-time cost of the process that no mapping changes.
PROGRAM_ENV = {**os.environ, "CUDA_MODULE_LOADING": "EAGER"}


def gain_check(seed_kernel: list[float], best_kernel: list[float], seed_region: list[float],
               best_region: list[float], tolerance: float = 0.03) -> dict:
    """Does a kernel gain hold in the program? From interleaved runs of the seed's and the best's program
    (kernel times and region times of each run, ms): the kernel gain (medians), the kernels' share of the
    seed's region, the program gain the kernel gain predicts (the seed's region with its kernel time swapped
    for the best's), the measured program gain with a 95% interval (the Hodges-Lehmann shift of the
    logarithms of the region times and its distribution-free interval, stats.shift_interval: a
    run slowed by something else on the machine moves neither), and a verdict: "holds" where the interval
    of measured over predicted lies within *tolerance*, "does not hold" where it lies outside, else
    "undecided" (too noisy: more runs would tell)."""
    sk, bk, sr, br = _median(seed_kernel), _median(best_kernel), _median(seed_region), _median(best_region)
    ls, lb = [math.log(x) for x in seed_region if x > 0], [math.log(x) for x in best_region if x > 0]
    out: dict = {"runs": (len(ls), len(lb)), "kernel_gain": sk / bk if bk > 0 else None,
                 "kernel_share": sk / sr if sr > 0 else None}
    out["predicted_gain"] = sr / (sr - sk + bk) if sr - sk + bk > 0 else None
    if len(ls) < 2 or len(lb) < 2:
        out.update(program_gain=sr / br if br > 0 else None, program_gain_low=None, program_gain_high=None,
                   verdict="undecided")
        return out
    low, d, high = shift_interval(ls, lb)
    out.update(program_gain=math.exp(d), program_gain_low=math.exp(low), program_gain_high=math.exp(high))
    pred = out["predicted_gain"]
    if pred is None:
        out["verdict"] = "undecided"
        return out
    lo, hi = out["program_gain_low"] / pred, out["program_gain_high"] / pred
    out["measured_over_predicted"] = (lo, math.exp(d) / pred, hi)
    if 1 - tolerance <= lo and hi <= 1 + tolerance:
        out["verdict"] = "holds"
    elif hi < 1 - tolerance or lo > 1 + tolerance:
        out["verdict"] = "does not hold"
    else:
        out["verdict"] = "undecided"
    return out


def region_shares(parts: list[list[float]]) -> dict | None:
    """The share of each phase in a region's time, from its runs' phases (each ``[in, run, out, free]`` ms, as
    the timed program prints them): allocation and copies to the device, kernels (launches and the host's wait),
    copies back, frees; ``copies``: both copy phases together, the part no kernel tuning touches. Medians of
    the runs' shares (None without phases)."""
    runs = [p for p in parts if len(p) == 4 and sum(p) > 0]
    if not runs:
        return None
    share = {k: _median([p[i] / sum(p) for p in runs]) for i, k in enumerate(("copies_in", "kernels", "copies_out",
                                                                                "free"))}
    share["copies"] = _median([(p[0] + p[2]) / sum(p) for p in runs])
    share["region_ms"] = _median([sum(p) for p in runs])
    return share


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    k = len(xs) // 2
    return xs[k] if len(xs) % 2 else 0.5 * (xs[k - 1] + xs[k])


def program_gain(program: Program, build: CudaBuildConfig, seed: CudaMapping, best: CudaMapping,
                 seed_m: Measurement, best_m: Measurement, runs: int = 5) -> tuple[dict, list[str]]:
    """The user's program built with the *seed*'s and the *best*'s mapping, each region timing itself as the
    program runs it (host clock around its allocation, copies, kernels, copies back; CUDA events around
    its kernels; the CUDA context made at start, outside the regions), run *runs* times each, interleaved:
    the program gain (median region time, seed over best) beside the kernel gain the search measured, and
    a warning where the program gains more than PROGRAM_TOLERANCE less. ({report entry}, [warnings])."""
    out: dict = {"runs": runs, "kernel_gain": seed_m.value / best_m.value if best_m.value > 0 else None}
    exes = {}
    with tempfile.TemporaryDirectory(prefix="polytune-cuda-program-") as tmp:
        cpu = CRunner(program, build.reference())
        try:
            objects = cpu.objects()
            for label, mapping in (("seed", seed), ("best", best)):
                text = cuda_program(program, OptimizeOptions(target="cuda"), mapping=mapping, timing=True)[0]
                exe, _, err, _ = compile_source(build, text, os.path.join(tmp, f"{label}.cu"), os.path.join(tmp, label),
                                                timeout=900, label="CUDA ", quote=quote_dirs(program), objects=objects)
                if exe is None:
                    raise PolytuneError(f"the {label}'s program does not compile: {err}")
                exes[label] = exe
            times: dict[str, dict[str, list]] = {k: {"region_ms": [], "kernel_ms": [], "region_parts_ms": []}
                                                 for k in exes}
            for _ in range(runs):
                for label, exe in exes.items():
                    with gpu_lock():
                        proc = subprocess.run([exe, *build.program.args], capture_output=True, text=True,
                                              timeout=600, cwd=build.program.cwd or tmp, env=PROGRAM_ENV)
                    if proc.returncode != 0:
                        tail = proc.stderr.strip().splitlines()
                        raise PolytuneError(f"the {label}'s program failed: {tail[-1] if tail else proc.returncode}")
                    times[label]["region_ms"].append(sum(float(x) for x in REGION_MS.findall(proc.stderr)))
                    times[label]["kernel_ms"].append(sum(float(x) for x in KERNEL_MS.findall(proc.stderr)))
                    parts = [tuple(map(float, m)) for m in REGION_PARTS_MS.findall(proc.stderr)]
                    times[label]["region_parts_ms"].append([sum(x) for x in zip(*parts)] if parts else [])
        except (PolytuneError, subprocess.TimeoutExpired, OSError) as e:
            out["error"] = str(e)
            return out, [f"polytune: warning: the tuned gain could not be re-measured in the program ({e})"]
        finally:
            cpu.close()
    out.update({f"{label}_{what}": xs for label, t in times.items() for what, xs in t.items()})
    seed_r, best_r = _median(times["seed"]["region_ms"]), _median(times["best"]["region_ms"])
    seed_k, best_k = _median(times["seed"]["kernel_ms"]), _median(times["best"]["kernel_ms"])
    check = gain_check(times["seed"]["kernel_ms"], times["best"]["kernel_ms"], times["seed"]["region_ms"],
                       times["best"]["region_ms"], PROGRAM_TOLERANCE)
    out["program_gain"] = check["program_gain"]
    out["program_gain_interval"] = (check["program_gain_low"], check["program_gain_high"])
    out["program_kernel_gain"] = check["kernel_gain"]  # the kernels' gain as the program runs them
    out["kernel_share"] = check["kernel_share"]
    out["predicted_program_gain"] = check["predicted_gain"]
    out["verdict"] = check["verdict"]
    out["saved_ms"] = {"kernels": seed_k - best_k, "region": seed_r - best_r}
    shares = {label: region_shares(t["region_parts_ms"]) for label, t in times.items()}
    out["region_shares"] = {k: v for k, v in shares.items() if v is not None}
    warnings = []
    kg, pkg, pg = out["kernel_gain"], check["kernel_gain"], check["program_gain"]
    where = (f"({seed_r:.3f} -> {best_r:.3f} ms, of which kernels {seed_k:.3f} -> {best_k:.3f} ms, "
             f"{100 * (check['kernel_share'] or 0):.1f}% of the region)")
    if kg is not None and pkg is not None and pkg < kg * (1 - PROGRAM_TOLERANCE):
        warnings.append(f"polytune: warning: the tuned kernel gain does not hold in the program: {kg:.2f}x in the "
                        f"tuner's kernel time, {pkg:.2f}x in the kernels as the program runs them {where}")
    if check["verdict"] == "does not hold":
        warnings.append(f"polytune: warning: the program gains {pg:.3f}x where its kernels predict "
                        f"{check['predicted_gain']:.3f}x {where}")
    out["holds"] = None if check["verdict"] == "undecided" and not warnings else not warnings
    return out, warnings
