"""The whole job on a file: regions -> Scop -> Dependences -> TiledSchedule -> code spliced into the text."""
from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field, replace
from functools import cached_property

from .errors import UnsupportedError, UsageError
from .frontend import macro_guards, read_regions
from .poly.astcheck import CodegenMismatch
from .poly.choice import ScheduleChoice, schedule_with
from .poly.cost import choose_scheduler
from .poly.deps import Dependences, compute_dependences
from .poly.expand import expand
from .poly.extract import build_scop
from .poly.gpu import GpuSchedule, map_to_gpu
from .poly.schedule import DEFAULT_UNROLL, BandInfo, TiledSchedule, compute_base_schedule, original_order
from .poly.scop import Scop


@dataclass(frozen=True)
class OptimizeOptions:
    tile: bool = True
    parallel: bool = True
    tile_sizes: tuple[int, ...] = ()  # one per tiled band dimension, bands in file order; missing -> 32
    target: str = "c"
    ivdep: bool = True
    block: tuple[int, ...] = ()  # GPU thread-block shape x[,y[,z]]; () -> the defaults (1024 / 32x32 / 32x8x4)
    schedule: str = "pluto"  # CPU schedule: "pluto" (tiling hyperplanes, skewing), "outer" (outer parallelism)
    # or "model" (the one the cost model ranks first, per scop: poly/cost.py)
    unroll_jam: int = DEFAULT_UNROLL  # unroll-and-jam factor of a point loop into the innermost (0: none)
    choice: ScheduleChoice | None = None  # every schedule alternative at once (overrides schedule, unroll_jam)


@dataclass(frozen=True, eq=False)
class AnalyzedScop:
    """A region with its model and dependences, and the base schedule (tile sizes are applied later)."""

    scop: Scop
    deps: Dependences
    base: object  # isl.Schedule from the scheduler, before tiling
    expanded: AnalyzedScop | None = None  # with scalars expanded (poly/expand.py), where that schedules better

    @property
    def cpu(self) -> AnalyzedScop:
        """What the C target schedules and prints: the expanded region where there is one (the GPU targets
        and the reference dumps keep the original)."""
        return self.expanded or self

    def tiled(self, sizes: tuple[int, ...], tile: bool = True, parallel: bool = True,
              schedule: str = "pluto", unroll_jam: int = DEFAULT_UNROLL,
              choice: ScheduleChoice | None = None, wavefront: bool = True) -> TiledSchedule:
        """*schedule*: pluto, outer, or model (the one poly/cost.py ranks first); *choice* overrides it.
        *wavefront*: False keeps the tiles of a band that has no parallel tile loop in their order."""
        if self.expanded is not None:
            return self.expanded.tiled(sizes, tile, parallel, schedule, unroll_jam, choice, wavefront)
        if choice is None:
            scheduler, order = self.model_scheduler[0] if schedule == "model" else (schedule, "stride")
            choice = ScheduleChoice(scheduler=scheduler, point_order=order, unroll=unroll_jam,
                                    tiling="reuse" if schedule == "model" else "all")
        base = None
        if choice.fusion == "smart":
            base = self.base_outer if choice.scheduler == "outer" else self.base
        return schedule_with(self.scop, self.deps, choice, sizes, tile=tile, parallel=parallel, base=base,
                             wavefront=wavefront)

    @cached_property
    def model_scheduler(self) -> tuple[tuple[str, str], dict]:
        """The (scheduler, point order) the cost model ranks first, and each candidate's cost (poly/cost.py)."""
        return choose_scheduler(self.scop, self.deps, {"pluto": self.base, "outer": self.base_outer})

    @cached_property
    def base_outer(self):
        """isl's schedule asked for coincident (parallel) outer members, as PPCG does: a stencil's time loop
        stays outside, unskewed, and the space loops inside it are tiled and parallel."""
        return compute_base_schedule(self.scop, self.deps, outer_coincidence=True)

    @cached_property
    def gpu(self) -> GpuSchedule:
        """The schedule mapped to a GPU (computed on first use: only the GPU targets need it)."""
        return map_to_gpu(self.scop, self.deps)

    @cached_property
    def gpu_fused(self) -> GpuSchedule:
        """The GPU mapping of the whole-component schedule with input reuse (fewer, fused kernels; Triton's
        FUSE=1, the CUDA target's fuse=1)."""
        return map_to_gpu(self.scop, self.deps, fuse=True)

    def gpu_mapping(self, fused: bool) -> GpuSchedule:
        """``gpu_fused`` if *fused*, else ``gpu``."""
        return self.gpu_fused if fused else self.gpu


@dataclass(frozen=True, eq=False)
class Program:
    """An input file, analyzed: the original text and every scop in it."""

    path: str
    text: str
    scops: tuple[AnalyzedScop, ...]
    guards: tuple[tuple[str, ...], ...] = ()  # per scop: preprocessor lines checking its macros' values
    warnings: tuple[str, ...] = ()  # one line each (file:line: warning: ...)
    includes: tuple[str, ...] = ()  # the -I and -D it was analyzed with
    defines: tuple[str, ...] = ()
    pure: tuple[str, ...] = ()  # the functions declared pure on the command line (--pure)
    _bands: dict = field(default_factory=dict, repr=False)
    _triton: dict = field(default_factory=dict, repr=False)  # triton_variants, by block option

    @cached_property
    def identifiers(self) -> frozenset[str]:
        """Every identifier-like word of the file: generated names must avoid them (macros included)."""
        return frozenset(re.findall(r"[A-Za-z_]\w*", self.text))

    def tunable_bands(self, tile: bool = True, schedule: str = "pluto") -> list[tuple[int, BandInfo]]:
        """(scop index, band) of every tiled band, in the order tile sizes are taken (computed once)."""
        if (tile, schedule) not in self._bands:
            self._bands[tile, schedule] = [(k, b) for k, a in enumerate(self.scops)
                                           for b in a.tiled((), tile=tile, parallel=False,
                                                            schedule=schedule).tunable_bands]
        return self._bands[tile, schedule]


@dataclass(frozen=True)
class OptimizeResult:
    text: str
    report: dict = field(default_factory=dict)


def analyze(path: str, includes: tuple[str, ...] = (), defines: tuple[str, ...] = (),
            pure: tuple[str, ...] = ()) -> Program:
    regions = read_regions(path, includes, defines, pure)
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:  # keep CRLF as it is
        text = f.read()
    scops, warnings = [], []
    for r in regions:
        scop = build_scop(r)
        deps = compute_dependences(scop)
        notes = [deps.fallback] if deps.fallback else []
        base = compute_base_schedule(scop, deps, notes=notes)
        ex = expand(scop, deps, base, frozenset(re.findall(r"[A-Za-z_]\w*", text)))
        scops.append(AnalyzedScop(scop, deps, base, ex and AnalyzedScop(ex.scop, ex.deps, ex.base)))
        warnings += [f"{path}:{r.begin_line}: note: {n}" for n in notes]
        shared = [a for a in scop.arrays if a.name in r.shared_params and a.ndim > 0]
        if len(shared) >= 2 and any(a.written for a in shared):
            # Like Pluto, polytune takes distinctly named arrays for distinct memory: C allows a caller to
            # pass one array for two parameters (`smooth(A, A)`), and the transformed code is then wrong.
            warnings.append(f"{path}:{r.begin_line}: warning: the array parameters {', '.join(a.name for a in shared)} "
                            "are assumed not to overlap (as Pluto assumes): declare them restrict, and do "
                            "not pass one array for two of them")
    guards = macro_guards(path, text, [(r.begin_line, r.end_line) for r in regions], includes, defines)
    return Program(path, text, tuple(scops), tuple(guards), tuple(warnings), tuple(includes), tuple(defines),
                   tuple(pure))


def _guarded(program: Program, k: int, code: str) -> str:
    """The code replacing region k, after the checks of the macro values it was generated with."""
    guards = program.guards[k] if k < len(program.guards) else ()
    return "".join(g + "\n" for g in guards) + code


def _check(opts: OptimizeOptions) -> None:
    if opts.target not in EMITTERS:
        raise UsageError(f"unknown target '{opts.target}' (choose from {', '.join(EMITTERS)})")
    if opts.schedule not in ("pluto", "outer", "model"):
        raise UsageError(f"unknown schedule '{opts.schedule}' (choose from pluto, outer, model)")
    if opts.unroll_jam < 0:
        raise UsageError("the unroll-and-jam factor must be 0 (none) or a positive integer")
    if any(s < 1 for s in opts.tile_sizes):
        raise UsageError("tile sizes must be positive integers")


def schedules(program: Program, opts: OptimizeOptions) -> list[TiledSchedule]:
    """The tiled schedule of every scop; tile sizes are taken band by band in file order."""
    _check(opts)
    sizes = list(opts.tile_sizes)
    out = []
    for a in program.scops:
        ts = a.tiled(tuple(sizes), tile=opts.tile, parallel=opts.parallel, schedule=opts.schedule,
                     unroll_jam=opts.unroll_jam, choice=opts.choice)
        del sizes[:len(ts.tile_sizes)]
        out.append(ts)
    return out


def generate_regions(program: Program, opts: OptimizeOptions = OptimizeOptions(),
                     tiled: list[TiledSchedule] | None = None) -> list[str]:
    """The code replacing each region."""
    return [code for code, _ts in c_regions(program, opts, tiled)]


def c_regions(program: Program, opts: OptimizeOptions = OptimizeOptions(),
              tiled: list[TiledSchedule] | None = None) -> list[tuple[str, TiledSchedule]]:
    """Each region's code and the schedule it was generated from: *tiled*'s, or where isl's AST builder
    fails on a band's unrolled and jammed copies, the same schedule without unroll-and-jam."""
    tiled = schedules(program, opts) if tiled is None else tiled
    return [_c_region(program, opts, k, a, ts) for k, (a, ts) in enumerate(zip(program.scops, tiled))]


def _c_region(program: Program, opts: OptimizeOptions, k: int, a: AnalyzedScop,
              ts: TiledSchedule) -> tuple[str, TiledSchedule]:
    from .emit.c import generate_region, thread_versions
    indent = _indent_of(program.text, a.scop.begin_line)
    try:
        serial = _serial_version(program, opts, a, ts, indent + 1)
        code = generate_region(a.cpu.scop, ts, parallel=opts.parallel, ivdep=opts.ivdep,
                               indent=indent + 1 if serial else indent, avoid=program.identifiers,
                               deps=_deps_of(a))
        if serial:
            code, ts = thread_versions(code, serial, indent), replace(ts, one_thread=True)
    except UnsupportedError as e:
        if ts.without_unroll is not None:
            return _c_region(program, opts, k, a, ts.without_unroll())  # (that one has no without_unroll)
        wrong = isinstance(e, CodegenMismatch)
        if ts.tile_sizes:
            # isl's AST builder fails on some tiled strided domains ("input involves unknown divs": random
            # program 82281), or prints code that does not run the schedule (issue 33: a tile wavefront
            # over a strided domain lost instances): the region untiled, under the same scheduler
            plain = a.tiled((), tile=False, parallel=opts.parallel, schedule=opts.schedule,
                            unroll_jam=opts.unroll_jam, choice=opts.choice)
            note = (f"isl's code generator printed wrong code for the tiled schedule ({e.message})" if wrong
                    else "isl's code generator failed on the tiled schedule") + ": the region is left untiled"
        elif wrong and ts.bands:
            # the untiled schedule too: the original order, as the scheduler's own fallback gives it
            plain = TiledSchedule(original_order(a.cpu.scop), (), ())
            note = f"isl's code generator printed wrong code for the schedule ({e.message}): the original " \
                   "loop order is kept"
        else:
            raise
        return _c_region(program, opts, k, a, replace(
            plain, fallback="; ".join(filter(None, [ts.fallback, plain.fallback, note]))))
    return _guarded(program, k, code), ts


def _deps_of(a: AnalyzedScop):
    """The dependences the printed code of *a* must keep (None where the analysis gave up)."""
    return a.cpu.deps.all if a.cpu.deps.complete else None


def _serial_version(program: Program, opts: OptimizeOptions, a: AnalyzedScop, ts: TiledSchedule,
                    indent: int) -> str:
    """The region's code for one thread, where *ts* runs tiles as a wavefront (the order that makes a tile
    loop parallel): the same schedule and tile sizes with the wavefront left out, so that the tiles follow
    each other in their own order. '' where no band of *ts* is a wavefront, or that code cannot be built."""
    if not (opts.parallel and any(b.wavefront for b in ts.bands)):
        return ""
    from .emit.c import generate_region
    try:
        serial = a.tiled(ts.tile_sizes, tile=opts.tile, parallel=opts.parallel, schedule=opts.schedule,
                         unroll_jam=opts.unroll_jam, choice=opts.choice, wavefront=False)
        return generate_region(a.cpu.scop, serial, parallel=opts.parallel, ivdep=opts.ivdep, indent=indent,
                               avoid=program.identifiers, deps=_deps_of(a))
    except UnsupportedError:
        return ""


def gpu_prefix(program: Program, wanted: str = "pt") -> str:
    """A name prefix no identifier of the file uses (the file's words cover every region's names)."""
    from .emit.c import fresh_prefix
    return fresh_prefix(program.scops[0].scop, program.identifiers, wanted) if program.scops else wanted


def generate_cuda(program: Program, opts: OptimizeOptions, serve: bool = False,
                  dumps: list[str] | None = None, mapping=None) -> str:
    """The whole file as CUDA: helpers and kernels first (they need nothing of the file), regions replaced.
    *mapping*: an emit.cuda.CudaMapping (None: the default for opts.block)."""
    return cuda_program(program, opts, serve, dumps, mapping)[0]


def cuda_program(program: Program, opts: OptimizeOptions, serve: bool = False, dumps: list[str] | None = None,
                 mapping=None, timing: bool = False) -> tuple[str, list]:
    """generate_cuda's text and its regions (emit.cuda.CudaRegion: the mapping resolved, what each kernel
    asks of a block). *timing*: each region prints its kernel time and its whole time to stderr, and the
    CUDA context is created at program start (emit.cuda.generate_cuda_region, cuda_header)."""
    from .emit.cuda import cuda_header, generate_cuda_region
    p = gpu_prefix(program)
    fused = mapping is not None and mapping.fuse
    regions = [generate_cuda_region(a.scop, a.gpu_mapping(fused), opts.block,
                                    indent=_indent_of(program.text, a.scop.begin_line),
                                    serve=serve, dump=dumps[k] if dumps else "", prefix=p, scop_index=k,
                                    mapping=mapping, deps=a.deps, timing=timing)
               for k, a in enumerate(program.scops)]
    head = cuda_header(p, serve, eager_context=timing) + "\n".join(r.kernels for r in regions)
    reps = [(a.scop.begin_line, a.scop.end_line, _guarded(program, k, r.host))
            for k, (a, r) in enumerate(zip(program.scops, regions))]
    from .linkage import user_header_lines, wrap_c_headers  # the program's other C files keep C linkage
    reps += wrap_c_headers(program.text, user_header_lines(program.path, program.text, program.includes,
                                                           program.defines))
    return head + "\n" + splice(program.text, reps), regions


def generate_triton(program: Program, opts: OptimizeOptions, config: dict | None = None) -> str:
    """A Python module: the Triton kernels of every scop and a launcher run_<k>() per scop (run = run_0)."""
    return triton_module(program, opts, config).text


def triton_module(program: Program, opts: OptimizeOptions, config: dict | None = None):
    """generate_triton's module with the launch parameters it reads (an emit.triton.TritonModule)."""
    from .emit.triton import triton_module as emit_module
    cfg = dict(config or {})
    if opts.block:
        cfg.update(zip(("BLOCK_X", "BLOCK_Y", "BLOCK_Z"), opts.block))
    fuse = bool(cfg.get("FUSE"))
    return emit_module(program.path, [(a.scop, a.gpu_mapping(fuse)) for a in program.scops],
                       gpu_prefix(program, "c"), cfg)


def triton_modules(program: Program, opts: OptimizeOptions) -> dict:
    """The Triton modules worth measuring, by FUSE value: the PPCG-like mapping (0) and, where it differs,
    the mapping of the whole-component schedule (1). The choice between them is a tuning parameter.
    Computed once per program (the search space and the runner both need them)."""
    if opts.block not in program._triton:
        out = {0: triton_module(program, opts, {"FUSE": 0})}
        fused = triton_module(program, opts, {"FUSE": 1})
        if fused.text.split("\n@triton.jit", 1)[-1] != out[0].text.split("\n@triton.jit", 1)[-1]:
            out[1] = fused
        program._triton[opts.block] = out
    return dict(program._triton[opts.block])


def triton_variants(program: Program, opts: OptimizeOptions) -> dict[int, str]:
    """The texts of triton_modules, by FUSE value."""
    return {f: m.text for f, m in triton_modules(program, opts).items()}


def gpu_report(program: Program, opts: OptimizeOptions) -> list[dict]:
    from .emit.cuda import default_block, kernel_block
    out = []
    for a in program.scops:
        g = a.gpu
        block = opts.block or default_block(g.max_mapped)
        out.append({"lines": [a.scop.begin_line, a.scop.end_line], "parameters": list(a.scop.params),
                    "block": list(block),
                    "kernels": [{"index": k.index, "host_loops": k.depth, "mapped_loops": k.mapped,
                                 "axes": ["xyz"[x] for x in k.axes], "statements": list(k.statements),
                                 "block": list(kernel_block(k.mapped, block))} for k in g.kernels]})
    return out


def generate(program: Program, opts: OptimizeOptions = OptimizeOptions()) -> OptimizeResult:
    """Replace every region of the program by optimized code; everything else stays byte for byte."""
    _check(opts)
    if opts.target != "c":
        for a in program.scops:
            if not a.deps.complete:
                raise UnsupportedError(f"the GPU targets need the region's dependences ({a.deps.fallback})",
                                       a.scop.file, a.scop.begin_line)
    return EMITTERS[opts.target](program, opts)


def _emit_cuda(program: Program, opts: OptimizeOptions) -> OptimizeResult:
    return OptimizeResult(generate_cuda(program, opts),
                          {"file": program.path, "target": opts.target, "scops": gpu_report(program, opts)})


def _emit_triton(program: Program, opts: OptimizeOptions) -> OptimizeResult:
    return OptimizeResult(generate_triton(program, opts),
                          {"file": program.path, "target": opts.target, "scops": gpu_report(program, opts)})


def _emit_c(program: Program, opts: OptimizeOptions) -> OptimizeResult:
    codes, tiled = zip(*c_regions(program, opts)) if program.scops else ((), ())
    reports = [scop_report(a, ts) for a, ts in zip(program.scops, tiled)]
    notes = [f"{a.scop.file}:{a.scop.begin_line}: note: {ts.fallback}" for a, ts in zip(program.scops, tiled)
             if ts.fallback]
    replacements = [(a.scop.begin_line, a.scop.end_line, code) for a, code in zip(program.scops, codes)]
    return OptimizeResult(splice(program.text, replacements), {"file": program.path, "scops": reports,
                                                               **({"notes": notes} if notes else {})})


# The code generator of each target (polytune.targets holds the same names, with what tuning needs).
EMITTERS = {"c": _emit_c, "cuda": _emit_cuda, "triton": _emit_triton}


def _indent_of(text: str, line: int) -> int:
    lines = text.split("\n")
    raw = lines[line - 1] if 0 < line <= len(lines) else ""
    return (len(raw) - len(raw.lstrip(" "))) // 2


def source_lines(text: str) -> list[str]:
    """Lines as the C preprocessor counts them: split at newlines only (not at form feeds)."""
    return re.split(r"(?<=\n)", text) if text else []


def splice(text: str, replacements: list[tuple[int, int, str]]) -> str:
    """Replace 1-based inclusive line ranges of *text* by new code."""
    lines = source_lines(text)
    for begin, end, code in sorted(replacements, reverse=True):
        lines[begin - 1:end] = [code if code.endswith("\n") else code + "\n"]
    return "".join(lines)


def scop_report(a: AnalyzedScop, ts: TiledSchedule) -> dict:
    a = a.cpu
    return {
        "lines": [a.scop.begin_line, a.scop.end_line],
        "parameters": list(a.scop.params),
        "statements": [{"name": s.name, "line": s.line, "domain": str(s.domain)} for s in a.scop.statements],
        "bands": [
            {"index": b.index, "members": b.members, "depth": b.depth, "statements": list(b.statements),
             "permutable": b.permutable, "tiled": b.tiled, "tile_sizes": list(b.tile_sizes),
             "schedule": b.schedule, "parallel_loop": b.parallel_loop, "wavefront": b.wavefront,
             "concurrent_start": b.concurrent_start,
             "unroll_jam": None if b.unroll_jam is None else
             {"point_member": b.unroll_jam[0], "factor": b.unroll_jam[1]},
             "point_loop_order": list(b.point_order), "sequence_at": b.sequence_at, "sunk": b.sunk,
             "parallel_loop_alternative": b.parallel_alternative}
            for b in ts.bands
        ],
        "tile_sizes": list(ts.tile_sizes),
        "one_thread_version": ts.one_thread,
        **({"scheduler_costs": a.model_scheduler[1], "scheduler": a.model_scheduler[0][0],
            "point_order": a.model_scheduler[0][1]}
           if "model_scheduler" in a.__dict__ else {}),
        **({"expanded": [x.scalar for x in a.scop.scratch]} if a.scop.scratch else {}),
    }


def write_atomically(path: str, text: str) -> None:
    """Write the whole file or nothing (no half-written output on failure)."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".polytune-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def optimize(path: str, opts: OptimizeOptions = OptimizeOptions(), includes: tuple[str, ...] = (),
             defines: tuple[str, ...] = ()) -> OptimizeResult:
    """Python API: the optimized text of *path* (and a report), without writing anything."""
    return generate(analyze(path, includes, defines), opts)
