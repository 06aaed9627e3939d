"""Measuring Triton variants, in process, on the data of the user's own program.

1. *Probe*: the original program is built with gcc with its region wrapped by code that writes, before
   the region, every array it touches, its scalars and parameter values (each with its C type), and,
   after the region, what it wrote (``polytune.emit.triton.generate_probe``). One run of the original
   program gives the inputs and the reference outputs: the variants compute on the same data.
2. *Variants*: the generated module is imported; its ``run`` is called on torch tensors made from the
   probe's inputs (on the GPU; on the CPU under ``TRITON_INTERPRET=1``). The first call compiles and
   doubles as the warm-up; its results are checked against the reference. Kernels that spill registers
   are rejected (Algorithm 9.1). Then ``runs`` timed calls, each on freshly restored inputs (restoring is
   not timed), timed with CUDA events; the median counts.

What is timed on the GPU: the region's kernels, from the first one's start to the last one's end, with the
host's time to reach the first launch hidden (``spaced_time``: a spacer keeps the GPU busy while run()
enqueues its kernels, as the kernels of a program that calls run() step after step queue up behind each
other). Events around a call on an idle GPU would add the Python launcher's time (20-30 us on the H200,
more on a busy host) to kernels of 40-80 us, and that part varies with the host's load, not with the
configuration. Such a call's time (what a program that calls run() once and waits sees) is recorded
beside it, ``extra["call_ms"]``.

Tolerances (relative, plus an absolute floor of rtol * 1e-3 * max|reference|): float32 1e-4, float64
1e-9, integers exact. Triton's reductions reassociate sums and the GPU contracts multiply-adds. With
``--allow-tf32`` float32 results are checked to 1e-2: TF32 rounds a dot's operands to 10-bit mantissas
(a relative error of about 5e-4 each), which the user accepted by asking for it.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import numpy as np

from ..emit.triton import PROBE_PRELUDE, generate_probe, py_names
from ..errors import PolytuneError, UsageError
from ..pipeline import Program, splice
from ..steps import WorkerState, this_process
from .build import compile_objects
from .c import BuildConfig, compare_dumps, compile_source, original_regions, quote_dirs
from .measurement import ErrorKind, Measurement
from .runner import TwoSteps, Variant

DTYPES = {"f4": np.float32, "f8": np.float64, "i4": np.int32, "u4": np.uint32, "i8": np.int64, "u8": np.uint64,
          "i2": np.int16, "u2": np.uint16, "i1": np.int8, "u1": np.uint8}
RTOL = {"f4": 1e-4, "f8": 1e-9}
RTOL_TF32 = {"f4": 1e-2, "f8": 1e-9}  # float32 contractions on TF32 tensor cores (--allow-tf32)


@dataclass
class ProbeData:
    arrays: dict[str, np.ndarray]  # inputs, shaped
    codes: dict[str, str]
    numbers: dict[str, float | int]
    written_scalars: dict[str, float]
    outputs: dict[str, np.ndarray]


def run_probe(program: Program, build: BuildConfig, workdir: str, scop_index: int = 0) -> ProbeData:
    """Build the original program with the probe around region *scop_index*, run it once, read the data."""
    a = program.scops[scop_index]
    body = ("  {\n" + generate_probe(a.scop, "in", program.identifiers) + original_regions(program)[scop_index]
            + generate_probe(a.scop, "out", program.identifiers) + "  }\n")
    text = PROBE_PRELUDE + "#line 1\n" + splice(program.text, [(a.scop.begin_line, a.scop.end_line, body)])
    objects = compile_objects(build.program, build.objects_cmd(), os.path.join(workdir, "objects"))
    exe, _, err, _ = compile_source(build, text, os.path.join(workdir, "probe.c"), os.path.join(workdir, "probe"),
                                    quote=quote_dirs(program), objects=objects)
    if exe is None:
        raise PolytuneError(f"the original program does not build with {build.cc}: {err}", program.path)
    env = dict(os.environ, POLYTUNE_PROBE=workdir)
    proc = subprocess.run([exe, *build.program.args], env=env, cwd=build.program.cwd or workdir,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise PolytuneError(f"the original program failed: {proc.stderr.decode(errors='replace')[-300:]}",
                            program.path)
    data = ProbeData({}, {}, {}, {}, {})
    for phase in ("in", "out"):
        with open(os.path.join(workdir, f"{phase}.meta")) as f:
            for line in f:
                kind, name, code, *rest = line.split()
                if code not in DTYPES:
                    raise PolytuneError(f"Triton target: array or scalar '{name}' has a type numpy cannot hold",
                                        program.path)
                if kind == "array":
                    arr = np.fromfile(os.path.join(workdir, f"{phase}.{name}.bin"), dtype=DTYPES[code])
                    arr = arr.reshape([int(x) for x in rest])
                    (data.arrays if phase == "in" else data.outputs)[name] = arr
                    data.codes[name] = code
                elif kind == "param":
                    data.numbers[name] = int(float(rest[0]))
                elif kind == "scalar":
                    v = float(rest[0])
                    data.numbers[name] = int(v) if code[0] in "iu" else v
                elif kind == "written":
                    arr = np.array([float(rest[0])], dtype=DTYPES[code])
                    (data.arrays if phase == "in" else data.outputs)[name] = arr
                    data.codes[name] = code
    return data


def load_module(text: str, workdir: str):
    name = "polytune_triton_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    path = os.path.join(workdir, name + ".py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def run_args(mod, rn: dict, arrays: dict, numbers: dict) -> dict:
    """The arguments of the module's run(), by its parameter names: the tensors of *arrays* and the values
    of *numbers*, both keyed by C name (*rn*: C name -> Python name)."""
    back = {v: k for k, v in rn.items()}  # Python name in run() -> C name
    args = {}
    for name in mod.run.__code__.co_varnames[:mod.run.__code__.co_argcount - 1]:
        c = back.get(name, name)
        # an array no executed access touches was not recorded: the launcher does not use it either
        args[name] = arrays[c] if c in arrays else numbers.get(c)
    return args


def forget_compiled(mod) -> None:
    """Drop the module's in-memory compiled kernels, so that kernel_resources afterwards sees those of the
    next launch alone (Triton's on-disk cache makes a recompile of a configuration seen before cheap)."""
    for name in dir(mod):
        caches = getattr(getattr(mod, name), "device_caches", None)
        if hasattr(caches, "clear"):
            caches.clear()
    getattr(mod, "_LAUNCHED", {}).clear()  # the launcher's own memo of the compiled kernels


def kernel_resources(mod) -> dict[str, dict]:
    """Registers and spills of the module's compiled kernels (best effort across Triton versions): after
    forget_compiled, those of the configuration launched since."""
    out: dict[str, dict] = {}
    for name in dir(mod):
        fn = getattr(mod, name)
        caches = getattr(fn, "device_caches", None) or {}
        for entry in caches.values():
            kernels = entry[0] if isinstance(entry, tuple) else entry
            for ck in getattr(kernels, "values", lambda: [])():
                n_regs = getattr(ck, "n_regs", None)
                n_spills = getattr(ck, "n_spills", None)
                if n_regs is not None or n_spills is not None:
                    r = out.setdefault(name, {"registers": 0, "spill": 0})
                    r["registers"] = max(r["registers"], n_regs or 0)
                    r["spill"] = max(r["spill"], n_spills or 0)
    return out


class TritonRunner(TwoSteps):
    """Verifies and times launch configurations of one program's Triton module (scop 0); a Runner whose
    variants carry their launch configuration by name (``build``)."""

    def __init__(self, program: Program, build: BuildConfig, runs: int = 5, texts: dict[int, str] | None = None,
                 allow_tf32: bool = False):
        try:
            import torch
            import triton  # noqa: F401
        except ImportError as e:
            raise UsageError(f"the triton target needs torch and triton (pip install -e '.[gpu]'): {e}") from None
        self.torch = torch
        self.program = program
        self.build = build
        self.runs = runs
        self.rtol = RTOL_TF32 if allow_tf32 else RTOL
        self._tmp = tempfile.TemporaryDirectory(prefix="polytune-triton-")
        self.dir = self._tmp.name
        self.interpret = os.environ.get("TRITON_INTERPRET") == "1"
        self.device = "cpu" if self.interpret or not torch.cuda.is_available() else "cuda"
        if self.device == "cpu" and not self.interpret:
            raise UsageError("the triton target needs an NVIDIA GPU (or TRITON_INTERPRET=1 to run on the CPU)")
        if texts is None:
            from ..pipeline import OptimizeOptions, triton_variants
            texts = triton_variants(program, OptimizeOptions(target="triton", allow_tf32=allow_tf32))
        self.texts = texts  # by FUSE value
        extern = sorted({m for t in self.texts.values() for m in re.findall(r"libdevice\.(\w+)\(", t)})
        if extern and self.interpret:
            raise UsageError(f"Triton's interpreter cannot run CUDA libdevice functions ({', '.join(extern)}): "
                             "tune this program on an NVIDIA GPU", program.path)
        self.text = self.texts[0]
        self.rn = py_names(program.scops[0].scop)
        self.key = hashlib.sha256("".join(self.texts.values()).encode()).hexdigest()
        self.data: ProbeData | None = None
        self.mods: dict = {}
        self.mod = None
        self.resources: dict[str, dict] = {}

    def close(self) -> None:
        self._tmp.cleanup()

    # ---- the two steps on workers: kernels compiled ahead in a worker, the candidate measured here ---------
    pooled_by_default = False  # tune --jobs N asks for it: it paid only where compiles are long (BENCHMARKS.md)
    local_only = True  # the time step measures on this process's tensors: no timer on another node

    def job(self, variant: Variant) -> TritonJob:
        """What a compile worker needs to compile *variant*'s kernels ahead (after ``reference()``): the
        module's text and run()'s arguments as shapes, strides and dtypes (tensors) or values."""
        cfg = dict(zip(variant.names, variant.config))
        fuse = cfg.get("FUSE", 0)
        mod = self.mods.get(fuse)
        args: list[tuple[str, tuple]] = []
        for name, v in (self._args(mod).items() if mod is not None else ()):
            if isinstance(v, self.torch.Tensor):
                args.append((name, ("tensor", str(v.dtype).rsplit(".", 1)[-1], tuple(v.shape), tuple(v.stride()))))
            else:
                args.append((name, ("value", v)))
        return TritonJob(tuple(variant.config), tuple(variant.names), self.texts.get(fuse, ""), cfg, tuple(args),
                         warm=mod is not None and self.device == "cuda")

    @staticmethod
    def compile_step(job: TritonJob) -> Warmed:
        return warm_kernels(job)

    def reference_data(self) -> None:
        """(The time step measures on this runner's own data.)"""
        return None

    def time_step(self, reference, bound, warmed: Warmed) -> Measurement:
        """Verify and time the candidate here, its kernels' first launch finding them compiled (Triton's
        on-disk cache) where the compile step could compile them ahead; one tune's kernels at a time on the
        GPU (measure.cuda.gpu_lock)."""
        from .cuda import gpu_lock
        with gpu_lock():
            m = self.measure_fresh(warmed.config, warmed.names)
        return dataclasses.replace(m, extra=dict(m.extra, warm_up=warmed.detail)) if warmed.detail else m

    def reference(self) -> Measurement:
        t0 = time.perf_counter()
        self.data = run_probe(self.program, BuildConfig(cc="gcc", cflags=("-O3", "-march=native"),
                                                        includes=self.build.includes,
                                                        defines=self.build.defines, program=self.build.program),
                                self.dir)
        self.mods = {f: load_module(text, self.dir) for f, text in self.texts.items()}
        self.mod = self.mods[0]
        self.pristine = {k: self.torch.from_numpy(v.copy()).to(self.device) for k, v in self.data.arrays.items()}
        self.live = {k: v.clone() for k, v in self.pristine.items()}
        # The reference ran on the CPU (once, to record the data): it has no time to compare with.
        return Measurement((), (), None, 0.0, detail=f"probe run {time.perf_counter() - t0:.2f} s",
                           extra={"what": "probe"})

    def _restore(self) -> None:
        for k, v in self.pristine.items():
            self.live[k].copy_(v)

    def _args(self, mod) -> dict:
        """run()'s arguments: the live arrays (restored in place before each run) and the numbers."""
        return run_args(mod, self.rn, self.live, self.data.numbers)

    def _call(self, mod, config: dict) -> None:
        mod.run(**self._args(mod), config=config)

    def verify(self) -> str:
        for name, ref in self.data.outputs.items():
            got = self.live[name].cpu().numpy()
            rtol = self.rtol.get(self.data.codes[name], 0.0)
            verdict = compare_dumps(ref.astype(np.float64).ravel(), got.astype(np.float64).ravel(), rtol)
            if verdict:
                return f"{name}: {verdict}"
        return ""

    def measure(self, variant: Variant, bound: float | None = None) -> Measurement:
        """Verify and time a variant (no pruning: its runs are cheap once compiled)."""
        return self.measure_fresh(variant.config, variant.names)

    def measure_fresh(self, config: tuple[int, ...], names: tuple[str, ...]) -> Measurement:
        """Verify and time a configuration now (side-by-side rounds against a vendor call want a timing
        from the moment; a search's repeats are answered by measure.runner.Memo before they get here)."""
        torch = self.torch
        cfg = dict(zip(names, config))
        mod = self.mods.get(cfg.get("FUSE", 0))
        if mod is None:
            return Measurement(config, error=ErrorKind.COMPILE, detail=f"no module for FUSE={cfg['FUSE']}")
        problem = tile_problem(mod, cfg, self.device == "cuda")
        if problem:
            return Measurement(config, error=ErrorKind.RESOURCES, detail=problem)
        try:
            self._restore()
            forget_compiled(mod)
            self._call(mod, cfg)
            if self.device == "cuda":
                # the first launch compiles; the generated launcher calls what Triton picked directly from
                # the second on, and the timed runs take that path: the verified run takes it too
                self._restore()
                self._call(mod, cfg)
                torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - a failed variant is a result, not a crash
            kind = ErrorKind.RESOURCES if "OutOfResources" in type(e).__name__ or "out of resource" in str(e) \
                else ErrorKind.COMPILE if "Compil" in type(e).__name__ else ErrorKind.RUNTIME
            return Measurement(config, error=kind, detail=f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
                               if str(e) else type(e).__name__)
        verdict = self.verify()
        if verdict:
            return Measurement(config, error=ErrorKind.WRONG_ANSWER, detail=verdict)
        self.resources = kernel_resources(mod)
        spills = max((r["spill"] for r in self.resources.values()), default=0)
        if spills:
            return Measurement(config, error=ErrorKind.RESOURCES, detail=f"register spills ({spills})")
        times, calls = [], []
        args = self._args(mod)  # built once: the harness's own bookkeeping is not the region's time

        def run() -> None:
            mod.run(**args, config=cfg)

        spacer = SPACER_US
        for _ in range(self.runs):
            if self.device == "cuda":
                t, spacer = spaced_time(torch, run, self._restore, spacer)
                times.append(t)
                calls.append(call_time(torch, run, self._restore))
            else:
                self._restore()
                t0 = time.perf_counter()
                run()
                times.append(time.perf_counter() - t0)
        extra = {"call_ms": round(1e3 * sorted(calls)[len(calls) // 2], 5)} if calls else {}
        return Measurement(config, tuple(times), None, 0.0, extra=extra)


SPACER_US = 100.0  # the GPU kept busy this long (at least) before a timed run, while the host enqueues it
SPACER_CYCLES_PER_US = 2000  # torch.cuda._sleep counts GPU clock cycles (the H200's SM clock: up to 1.98 GHz)


def spaced_time(torch, call, restore, spacer_us: float = SPACER_US) -> tuple[float, float]:
    """The GPU time of *call*'s kernels (seconds), without the host's time to enqueue them, and the spacer
    that hid it (microseconds; the next run starts from it). A spacer kernel runs before the start event
    while the host enqueues the call; if it ended before the host was done (the start event completed by
    then), the GPU may have waited for the host, and the run is repeated with a spacer four times longer.
    *restore* puts the inputs back before each attempt. A torch without ``_sleep`` (a private function):
    the call's time, the host's launch counted (``call_time``)."""
    if not hasattr(torch.cuda, "_sleep"):
        return call_time(torch, call, restore), spacer_us
    for _ in range(4):
        t, hidden = _timed(torch, call, restore, spacer_us)
        if hidden:
            return t, spacer_us
        spacer_us *= 4
    return t, spacer_us  # a host that takes over 6 ms a call: its time counts


def call_time(torch, call, restore) -> float:
    """The time of *call* as a caller that waits for it sees it (seconds): events around the call on an
    idle GPU, so the host's time to enqueue the first kernel counts."""
    return _timed(torch, call, restore)[0]


def _timed(torch, call, restore, spacer_us: float = 0.0) -> tuple[float, bool]:
    """One run of *call* between two events on a synchronized GPU, its inputs restored first, after a spacer
    kernel of *spacer_us* (0: none): (seconds, whether the spacer still ran when the last kernel was
    enqueued, so that the host's time was hidden)."""
    restore()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    if spacer_us:
        torch.cuda._sleep(int(spacer_us * SPACER_CYCLES_PER_US))
    start.record()
    call()
    end.record()
    hidden = bool(spacer_us) and not start.query()
    end.synchronize()
    return start.elapsed_time(end) / 1e3, hidden


# ---- the compile step: a candidate's kernels compiled ahead, in a worker ------------------------------------
@dataclass(frozen=True)
class TritonJob:
    """The compile step's input: the module's text, the launch configuration, and run()'s arguments (by name:
    ("tensor", dtype, shape, strides) or ("value", v)); *warm*: there is a GPU to compile for."""

    config: tuple
    names: tuple[str, ...]
    text: str
    cfg: dict
    args: tuple[tuple[str, tuple], ...]
    warm: bool = True


@dataclass(frozen=True)
class Warmed:
    """The compile step's output: the candidate, and why its kernels were not compiled ahead ('' if they were:
    the time step's first launch then loads them from Triton's on-disk cache)."""

    config: tuple
    names: tuple[str, ...]
    detail: str = ""
    generate_time: float = 0.0  # (the code was generated before the search: none here)


class WarmModules:
    """A compile worker's part of its ``WorkerState``: its modules, by text digest, their launcher compiling only,
    and the directory they are loaded from (made on first use and removed when the worker process exits: a
    multiprocessing finalizer, which runs where a worker ends without running atexit, as forkserver's
    children do)."""

    def __init__(self) -> None:
        self.modules: dict[str, object] = {}
        self.dir: str | None = None


def _compile_only(kernel, grid, tensors, numbers, constexprs, num_warps, num_stages) -> None:
    """The generated launcher's stand-in in a compile worker: compile the kernel for these arguments (their
    dtypes, values and constexprs: the specialization the real launch computes) without launching it."""
    kernel.warmup(*[t.dtype for t in tensors], *numbers, *constexprs, grid=grid, num_warps=num_warps,
                  num_stages=num_stages)


def warm_dir(state: WorkerState | None = None) -> str:
    """This worker's directory for the modules it loads (*state*'s ``WarmModules``)."""
    warm = (state or this_process()).part(WarmModules)
    if warm.dir is None:
        import multiprocessing.util
        import shutil
        warm.dir = tempfile.mkdtemp(prefix="polytune-triton-warm-")
        multiprocessing.util.Finalize(None, shutil.rmtree, args=(warm.dir,), kwargs={"ignore_errors": True},
                                      exitpriority=0)
    return warm.dir


def warm_kernels(job: TritonJob, state: WorkerState | None = None) -> Warmed:
    """The compile step: run the module's run() on meta tensors of the candidate's shapes with a launcher that
    compiles each kernel (JITFunction.warmup) instead of launching it. A failure is not the candidate's: the
    time step then compiles as it launches (``Warmed.detail`` says why)."""
    if not job.warm:  # Triton's interpreter: nothing is compiled
        return Warmed(job.config, job.names)
    try:
        import torch
        state = state or this_process()
        modules = state.part(WarmModules).modules
        key = hashlib.sha256(job.text.encode()).hexdigest()
        mod = modules.get(key)
        if mod is None:
            mod = load_module(job.text, warm_dir(state))
            mod._launch = _compile_only
            modules[key] = mod
        args = {name: torch.empty_strided(a[2], a[3], dtype=getattr(torch, a[1]), device="meta") if a[0] == "tensor"
                else a[1] for name, a in job.args}
        mod.run(**args, config=job.cfg)
        return Warmed(job.config, job.names)
    except Exception as e:  # noqa: BLE001 - the timer compiles it then
        return Warmed(job.config, job.names, f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")



# ---- Algorithm 9.1: candidates from the kernel's shape, the choice cached by kernel-source hash -------------
def candidates(names) -> list[dict]:
    """Algorithm 9.1's small launch-configuration set, from the kernel's shape as its parameters show it:
    tl.dot tiles (16 or more on each side; a short BLOCK_K keeps the float32 FMA dot's operands in
    registers; 3 or 4 stages of software pipelining),
    rows x lanes of vector reductions (from one long row per program to many short ones, for
    rows contiguous along the lanes or along the rows), element-wise blocks of the mapped dims. Where a
    module has kernels of several kinds, the lists are combined element by element, each with 4 and 8 warps."""
    names = set(names)
    lists = []
    if "BLOCK_K" in names:
        lists.append([{"BLOCK_X": bx, "BLOCK_Y": by, "BLOCK_K": bk, "num_stages": st}
                      for bx, by, bk, st in ((32, 32, 16, 3), (64, 32, 16, 3), (64, 64, 16, 3), (128, 64, 16, 3),
                                             (64, 128, 16, 3), (128, 128, 16, 3), (64, 64, 32, 3),
                                             (64, 128, 32, 3), (128, 128, 32, 3), (256, 128, 16, 4),
                                             (256, 64, 32, 3), (64, 256, 32, 3), (128, 128, 32, 4),
                                             (128, 256, 32, 3))])
    if "BLOCK_M" in names:
        lists.append([{"BLOCK_M": m, "BLOCK_R": r} for m, r in
                      ((1, 4096), (1, 1024), (4, 1024), (16, 256), (64, 64), (128, 16))])
    if "BLOCK_K" not in names:
        dims = [n for n in ("BLOCK_X", "BLOCK_Y", "BLOCK_Z") if n in names]
        base = {0: [{}], 1: [{"BLOCK_X": bx} for bx in (128, 512, 1024)],
                2: [{"BLOCK_X": bx, "BLOCK_Y": by} for bx, by in ((32, 8), (64, 8), (64, 16), (32, 32), (128, 8),
                                                                     (128, 16))],
                3: [{"BLOCK_X": bx, "BLOCK_Y": by, "BLOCK_Z": bz}
                    for bx, by, bz in ((32, 2, 2), (32, 4, 2), (32, 4, 4), (64, 4, 2), (16, 8, 8))]}[len(dims)]
        if "BLOCK_R" in names and "BLOCK_M" not in names:  # reductions inside 2- or 3-D kernels
            base = [dict(b, BLOCK_R=r) for b in base for r in (32, 256)]
        lists.append(base)
    longest = max(len(x) for x in lists)
    out = []
    for i in range(longest):
        merged = {"num_stages": 2}
        for x in lists:
            merged.update(x[i % len(x)])
        out += [dict(merged, num_warps=w) for w in (4, 8)]
    if "FUSE" in names:  # both schedules, each with the whole set
        out = [dict(c, FUSE=f) for f in (0, 1) for c in out]
    return out


def tile_problem(mod, config: dict, gpu: bool = True) -> str:
    """Why a configuration cannot run (well), decided before compiling it: a kernel whose largest tiles need
    more than MAX_TILE_PER_THREAD values per thread would spill registers whatever the compiler does (and
    huge tiles take minutes to compile); on the GPU, Triton compiles no tl.dot with a side under 16 (its
    interpreter does). '' when none."""
    tiles = getattr(mod, "tile_elements", None)
    if tiles is None:
        return ""
    cfg = dict(mod.CONFIG, **config)
    threads = 32 * cfg["num_warps"]
    per_kernel = tiles(config)
    for name, elements in per_kernel.items():
        if elements > MAX_TILE_PER_THREAD * threads:
            return (f"{name}: tiles of {elements} elements for {threads} threads (more than "
                    f"{MAX_TILE_PER_THREAD} per thread)")
    small = [k for k in ("BLOCK_X", "BLOCK_Y", "BLOCK_K") if cfg[k] < MIN_DOT] if gpu else []
    for name in per_kernel if small else ():
        fn = getattr(mod, name)
        if "tl.dot(" in inspect.getsource(getattr(fn, "fn", fn)):
            return f"{name}: tl.dot needs blocks of at least {MIN_DOT} ({', '.join(f'{k}={cfg[k]}' for k in small)})"
    return ""


MIN_DOT = 16


MAX_TILE_PER_THREAD = 256


def launch_cache_path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "polytune", "triton_launch.json")


def cached_choice(key: str) -> dict | None:
    try:
        with open(launch_cache_path()) as f:
            return json.load(f).get(key)
    except (OSError, ValueError):
        return None


def remember_choice(key: str, config: dict) -> None:
    path = launch_cache_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with open(path) as f:
            table = json.load(f)
    except (OSError, ValueError):
        table = {}
    table[key] = config
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(table, f, indent=1)
    os.replace(tmp, path)
