"""Measuring CUDA variants: one compilation and one serving process per search.

The tuning build (``generate_cuda(..., serve=True)``) reads block shapes from a pipe. For each it
restores the device arrays from pristine copies, runs the region's kernels ``reps`` times, timing each
round with CUDA events (the first round is the warm-up and is dropped), copies the results back, dumps
them for verification and answers ``ok <copy-back ms> <ms> <ms> ...``, or ``error <code> <message>``.
Transfers are kept out of the kernel time and reported separately. A process that dies (a sticky CUDA
error) or hangs is recorded against the configuration it was serving and restarted for the next one.

Before a configuration runs it is checked against the hardware limits and against the kernels' register
use read from ptxas (threads x registers per thread must fit the register file of a block): a
configuration that cannot launch is rejected as RESOURCES without running (Algorithm 9.1's "reject").
"""
from __future__ import annotations

import math
import os
import re
import select
import subprocess
import tempfile
from dataclasses import dataclass

import numpy as np

from ..emit.c import generate_dump
from ..emit.cuda import MAX_DIM, MAX_THREADS, kernel_block
from ..errors import PolytuneError, UsageError
from ..pipeline import OptimizeOptions, Program, generate_cuda
from .c import BuildConfig, CRunner, compare_dumps, compile_source, quote_dirs
from .cache import gpu_id
from .measurement import ErrorKind, Measurement
from .runner import Variant

REGISTERS_PER_BLOCK = 65536

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


class CudaRunner:
    """Verifies and times block shapes of one program on the GPU (a Runner: a variant's ``build`` is
    unused, its configuration is the block shape)."""

    def __init__(self, program: Program, build: CudaBuildConfig):
        self.program = program
        self.build = build
        self.cpu = CRunner(program, build.reference())
        self.dir = self.cpu.dir
        self.exe: str | None = None
        self.compile_error = ""
        self.compile_time = 0.0
        self.resources: dict[str, dict] = {}
        self.proc: subprocess.Popen | None = None
        self._fds: tuple[int, int] | None = None
        self.kernels_mapped = [k.mapped for a in program.scops for k in a.gpu.kernels]

    @property
    def reference_dump(self):
        return self.cpu.reference_dump

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
        exe, dt, err, stderr = compile_source(self.build, text, os.path.join(self.dir, "serve.cu"),
                                              os.path.join(self.dir, "serve"), timeout=900, label="CUDA ",
                                              timeout_message="nvcc timed out", quote=quote_dirs(self.program),
                                              objects=objects)
        if exe is None:
            self.compile_error = err
            return
        self.compile_time = dt
        self.resources = parse_ptxas(stderr)
        self.exe = exe

    @property
    def registers(self) -> int:
        return max((r["registers"] for r in self.resources.values()), default=0)

    @property
    def spills(self) -> int:
        return max((r["spill"] for r in self.resources.values()), default=0)

    # ---- the serving process -------------------------------------------------------------------------
    def start(self) -> None:
        cmd_r, cmd_w = os.pipe()
        rep_r, rep_w = os.pipe()
        env = dict(os.environ, POLYTUNE_SERVE_FDS=f"{cmd_r},{rep_w}", POLYTUNE_DUMP=self.exe + ".dump",
                   CUDA_MODULE_LOADING="EAGER")
        self.errlog = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([self.exe, *self.build.program.args], env=env, pass_fds=(cmd_r, rep_w),
                                     stdout=subprocess.DEVNULL, stderr=self.errlog,
                                     cwd=self.build.program.cwd or self.dir)
        os.close(cmd_r)
        os.close(rep_w)
        self._w = os.fdopen(cmd_w, "w")
        self._r = os.fdopen(rep_r, "r")

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
        self.proc = None

    def _kill(self) -> str:
        self.proc.kill()
        self.proc.wait()
        self.errlog.seek(0)
        err = self.errlog.read().decode(errors="replace").strip().splitlines()
        code = self.proc.returncode
        self._r.close()
        try:
            self._w.close()
        except OSError:
            pass
        self.proc = None
        return (err[-1] if err else "") or f"exit status {code}"

    def _ask(self, line: str) -> tuple[str | None, str]:
        """Send one request; (reply, '') or (None, why)."""
        try:
            self._w.write(line + "\n")
            self._w.flush()
        except (BrokenPipeError, OSError):
            return None, "runtime: " + self._kill()
        ready, _, _ = select.select([self._r], [], [], self.build.reply_timeout)
        if not ready:
            self._kill()
            return None, f"timeout: no answer within {self.build.reply_timeout:.0f} s"
        reply = self._r.readline()
        if not reply:
            return None, "runtime: " + self._kill()
        return reply.strip(), ""

    # ---- one configuration ---------------------------------------------------------------------------
    def measure(self, variant: Variant, bound: float | None = None) -> Measurement:
        return self.measure_block(tuple(variant.config))

    def measure_block(self, config: tuple[int, ...]) -> Measurement:
        """Verify and time one block shape (no pruning: a round of kernels is cheap)."""
        if self.exe is None and not self.compile_error:
            self.compile()
        if self.exe is None:
            return Measurement(config, error=ErrorKind.COMPILE, detail=self.compile_error)
        why = block_problem(config, self.kernels_mapped, self.registers)
        if why:
            return Measurement(config, error=ErrorKind.RESOURCES, detail=why)
        if self.proc is None:
            self.start()
        b = list(config) + [1] * (3 - len(config))
        reply, why = self._ask(f"{b[0]} {b[1]} {b[2]} {self.build.runs + 1} 1")
        if reply is None:
            kind = ErrorKind.TIMEOUT if why.startswith("timeout") else ErrorKind.RUNTIME
            return Measurement(config, error=kind, detail=why.split(": ", 1)[1])
        parts = reply.split()
        if parts[0] == "error":
            kind = ErrorKind.RESOURCES if parts[1] == "resources" else ErrorKind.RUNTIME
            if kind == ErrorKind.RUNTIME:
                self._kill()
            return Measurement(config, error=kind, detail=" ".join(parts[2:]))
        transfer_ms = float(parts[1])
        times = [float(x) / 1000.0 for x in parts[2:]][1:]  # the first round is the warm-up
        dump = self.exe + ".dump"
        verdict = compare_dumps(self.reference_dump, np.fromfile(dump, dtype=np.float64), self.build.rtol)
        os.unlink(dump)
        if verdict:
            return Measurement(config, error=ErrorKind.WRONG_ANSWER, detail=verdict)
        return Measurement(config, tuple(times), None, self.compile_time, extra={"copy_back_ms": transfer_ms})
