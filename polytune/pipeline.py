"""The whole job on a file: regions -> Scop -> Dependences -> TiledSchedule -> code spliced into the text."""
from __future__ import annotations

import math
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property

from . import timelimit
from .errors import UnsupportedError, UsageError
from .frontend import Region, _typedef_names, declared_pure, macro_guards, read_regions, read_source
from .poly.astcheck import CodegenMismatch
from .poly.choice import ScheduleChoice, schedule_with
from .poly.contraction import Blocks
from .poly.cost import choose_scheduler
from .poly.deps import Dependences, compute_dependences
from .poly.expand import expand
from .poly.extract import build_scop
from .poly.gpu import GpuSchedule, map_to_gpu
from .poly.original import original_schedule
from .poly.parallel import parallel_work, without_alternatives
from .poly.schedule import DEFAULT_UNROLL, BandInfo, TiledSchedule, compute_base_schedule, original_order
from .poly.scop import Scop, constant_work
from .poly.versioning import RuntimeChecks, runtime_checks
from .rewrite import in_user_terms, prepare, user_terms


@dataclass(frozen=True)
class OptimizeOptions:
    tile: bool = True
    parallel: bool = True
    tile_sizes: tuple[int, ...] = ()  # one per tiled band dimension, bands in file order; missing -> 32
    target: str = "c"
    ivdep: bool = True
    block: tuple[int, ...] = ()  # GPU thread-block shape x[,y[,z]]; () -> the defaults (1024 / 32x32 / 32x8x4)
    schedule: str = "model"  # CPU schedule: "pluto" (tiling hyperplanes, skewing), "outer" (outer parallelism),
    # "original" (the loops as written: poly/original.py) or "model" (the one the cost model ranks first, per
    # scop: poly/cost.py); `polytune optimize`'s default too
    unroll_jam: int = DEFAULT_UNROLL  # unroll-and-jam factor of a point loop into the innermost (0: none)
    choice: ScheduleChoice | None = None  # every schedule alternative at once (overrides schedule, unroll_jam)
    # optimize's wall-clock limit in seconds (0: none): each region's isl work runs in a worker process, and
    # a region not done by then keeps its original code, with a note (polytune/timelimit.py)
    time_limit: float = timelimit.DEFAULT_TIME_LIMIT
    blocks: Blocks = Blocks()  # contraction bands as packed blocks (poly/contraction.py, emit/blis.py); off: tiled
    # float32 contractions on TF32 tensor cores (Triton: tl.dot's input_precision="tf32", 10-bit mantissas):
    # only where the user asks (--allow-tf32); otherwise every tl.dot keeps full float32 ("ieee")
    allow_tf32: bool = False


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
              choice: ScheduleChoice | None = None, wavefront: bool = True,
              blocks: Blocks | None = Blocks(), wide: bool = True) -> TiledSchedule:
        """*schedule*: pluto, outer, or model (the one poly/cost.py ranks first); *choice* overrides it.
        *wavefront*: False keeps the tiles of a band that has no parallel tile loop in their order. *blocks*:
        contraction bands as packed blocks (None or off: tiled as any band). *wide*: False leaves a wavefront
        band's default sizes at 32 (poly/tiling.py WAVEFRONT_TILES)."""
        if self.expanded is not None:
            return self.expanded.tiled(sizes, tile, parallel, schedule, unroll_jam, choice, wavefront, blocks, wide)
        if choice is None:
            scheduler, order = self.model_scheduler[0] if schedule == "model" else (schedule, "stride")
            # (tile sizes given: every permutable band is tiled with them, as the user asked)
            choice = ScheduleChoice(scheduler=scheduler, point_order=order, unroll=unroll_jam,
                                    tiling="reuse" if schedule == "model" and not sizes else "all")
        base = None
        if choice.fusion == "smart":
            base = {"outer": self.base_outer, "original": self.base_original}.get(choice.scheduler, self.base)
        return schedule_with(self.scop, self.deps, choice, sizes, tile=tile, parallel=parallel, base=base,
                             wavefront=wavefront, blocks=blocks if tile else None, wide=wide)

    @cached_property
    def model_scheduler(self) -> tuple[tuple[str, str], dict]:
        """The (scheduler, point order) the cost model ranks first, and each candidate's cost (poly/cost.py)."""
        return choose_scheduler(self.scop, self.deps, {"pluto": self.base, "outer": self.base_outer,
                                                       "original": self.base_original})

    @cached_property
    def base_outer(self):
        """isl's schedule asked for coincident (parallel) outer members, as PPCG does: a stencil's time loop
        stays outside, unskewed, and the space loops inside it are tiled and parallel."""
        return compute_base_schedule(self.scop, self.deps, outer_coincidence=True)

    @cached_property
    def base_original(self):
        """The program's own loops as a base schedule (poly/original.py): the model's third candidate, taken
        only where it ranks strictly first."""
        return original_schedule(self.scop, self.deps)

    @cached_property
    def gpu(self) -> GpuSchedule:
        """The schedule mapped to a GPU (computed on first use: only the GPU targets need it)."""
        return map_to_gpu(self.scop, self.deps)

    @cached_property
    def gpu_fused(self) -> GpuSchedule:
        """The GPU mapping of the whole-component schedule with input reuse (fewer, fused kernels; Triton's
        FUSE=1, the CUDA target's fuse=1)."""
        return map_to_gpu(self.scop, self.deps, fuse=True)

    @cached_property
    def checks(self) -> RuntimeChecks:
        """What the optimized code checks at run time before it runs (poly/versioning.py)."""
        return runtime_checks(self.cpu.scop)

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
    left_out: tuple[int, ...] = ()  # the regions (by first line) analyze was asked to leave out (skip)
    auto: bool | None = None  # region detection: True (--auto), None (where the file has no '#pragma scop')
    remarks: tuple = ()  # detect.Remark: each loop nest found or missed by region detection
    _bands: dict = field(default_factory=dict, repr=False)
    _triton: dict = field(default_factory=dict, repr=False)  # triton_variants, by block option and allow_tf32

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
    warnings: tuple[str, ...] = ()  # the analysis's warnings and notes (optimize prints them before report's)


STRAIGHT_LINE = "the region has no loop: nothing to schedule, its original code is kept"


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:  # keep CRLF as it is
        return f.read()


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[A-Za-z_]\w*", text))


def analyze(path: str, includes: tuple[str, ...] = (), defines: tuple[str, ...] = (),
            pure: tuple[str, ...] = (), auto: bool | None = None, skip: tuple[int, ...] = (),
            stage: Callable[[int | None, str], None] | None = None) -> Program:
    """*path*'s regions with a loop, analyzed (in this process, without a time limit): its '#pragma scop'
    regions, and with *auto* (None: where the file has no pragma) the loop nests region detection finds
    (detect.py), those worth optimizing. *skip*: the first lines of regions to leave out (they keep their
    code: the ones tune's probe found too slow). *stage*: hears (region line, what) as each stage starts."""
    pre = read_source(path, includes, defines)
    text = _read_text(path)
    items, straight, remarks = read_items(path, pre, text, includes, defines, pure, auto)
    items = [(r, scop) for r, scop in items if r.begin_line not in skip]
    words = _words(text)
    scops, kept, warnings = [], [], [(b, f"{path}:{b}: note: {STRAIGHT_LINE}") for b, _e in straight]
    for r, scop in items:
        a, lines = analyze_region(r, words, (lambda what, line=r.begin_line: stage(line, what)) if stage else
                                  (lambda what: None), scop=scop)
        why = _not_worth(a) if r.auto else ""
        if why:
            remarks = missed_instead(remarks, r, why)
            continue
        scops.append(a)
        kept.append(r)
        warnings += [(r.begin_line, w) for w in lines]
    guards = macro_guards(path, text, [guard_span(r) for r in kept], includes, defines)
    warnings.sort(key=lambda x: x[0])
    remarks = sorted(remarks, key=lambda x: (x.line, x.kind))
    return Program(path, text, tuple(scops), tuple(guards), tuple(w for _b, w in warnings), tuple(includes),
                   tuple(defines), tuple(pure), tuple(skip), auto, tuple(remarks))


def read_items(path: str, pre: str, text: str, includes: tuple[str, ...], defines: tuple[str, ...],
               pure: tuple[str, ...], auto: bool | None) -> tuple[list, list[tuple[int, int]], list]:
    """The regions to analyze, in file order, each with its Scop where detection built it (else None); the
    (begin, end) lines of the '#pragma scop' regions without a loop; detection's remarks (detect.Remark)."""
    straight: list[tuple[int, int]] = []
    regions = read_regions(path, includes, defines, pure, straight, pre=pre)
    items: list = [(r, None) for r in regions]
    remarks: list = []
    if auto or (auto is None and not regions and not straight):
        from .detect import detect
        spans = tuple((r.begin_line, r.end_line) for r in regions) + tuple(straight)
        found = detect(path, pre, text, _typedef_names(pre), declared_pure(pre) | frozenset(pure), spans)
        items = sorted(items + [(f.region, f.scop) for f in found.found], key=lambda x: x[0].begin_line)
        remarks = list(found.remarks)
    return items, straight, remarks


def guard_span(r: Region) -> tuple[int, int]:
    """The lines macro_guards probes for region *r* (a found region has no pragma lines: the lines around it)."""
    return r.begin_line - r.auto, r.end_line + r.auto


def missed_instead(remarks: list, r: Region, why: str) -> list:
    """*remarks* with region *r*'s "found" remark replaced by a "missed" one saying *why*."""
    from .detect import Remark
    lines = f"line {r.begin_line}" if r.begin_line == r.end_line else f"lines {r.begin_line}-{r.end_line}"
    return [x for x in remarks if not (x.kind == "found" and x.line == r.begin_line)] + \
        [Remark(r.file, r.begin_line, "missed", f"loop nest of {lines} not optimized: {why}")]


def analyze_region(r: Region, words: frozenset[str], stage: Callable[[str], None] = lambda what: None,
                   scop: Scop | None = None) -> tuple[AnalyzedScop, list[str]]:
    """One region's model (after the source rewrites; *scop*: where detection has built it), dependences and
    base schedule, and its warning and note lines. *stage* hears each stage as it starts (a worker reports
    it to its parent: polytune/timelimit.py)."""
    stage("dependence analysis")
    if scop is None:
        r = prepare(r)
        try:
            scop = build_scop(r)
        except UnsupportedError as e:
            raise in_user_terms(r, e) from None
    deps = compute_dependences(scop)
    notes = [deps.fallback] if deps.fallback else []
    stage("scheduling")
    base = compute_base_schedule(scop, deps, notes=notes)
    ex = expand(scop, deps, base, words)
    lines = list(r.notes) + [f"{r.file}:{r.begin_line}: note: {n}" for n in notes]
    analyzed = AnalyzedScop(scop, deps, base, ex and AnalyzedScop(ex.scop, ex.deps, ex.base))
    checks = analyzed.checks
    if checks:
        # C allows a caller to pass one array for two parameters (`smooth(A, A)`), and a flattened
        # subscript may leave its row: the optimized code runs where neither happens, the original else
        lines.append(f"{r.file}:{r.begin_line}: note: the optimized code runs where a run-time check "
                     f"holds, the original code otherwise: {user_terms(r, checks.describe())}")
    return analyzed, lines


def _not_worth(a: AnalyzedScop) -> str:
    """Why a region found without pragmas is not worth optimizing ('' where it is): no loop to tile or
    parallelize, or constant bounds with less work than a parallel loop needs (poly/parallel.py)."""
    work = constant_work(a.scop)
    if work is not None and work < parallel_work():
        return f"too little work (at most {work} statement instances)"
    # Pluto's tiling (the tuner's seed) or the model's schedule (optimize's default, which may keep a scalar
    # private where an expansion made Pluto's bands permutable: hotspot's delta); a contraction's band is
    # printed as packed blocks, not tiled: it is worth it too
    for schedule in ("pluto", "model"):
        ts = a.tiled((), schedule=schedule)
        if ts.contractions or any(b.tiled or b.parallel_loop for b in ts.bands):
            return ""
    return "no loop to tile or parallelize"


def _guarded(program: Program, k: int, code: str) -> str:
    """The code replacing region k, after the checks of the macro values it was generated with."""
    guards = program.guards[k] if k < len(program.guards) else ()
    return "".join(g + "\n" for g in guards) + code


def _check(opts: OptimizeOptions) -> None:
    if opts.target not in EMITTERS:
        raise UsageError(f"unknown target '{opts.target}' (choose from {', '.join(EMITTERS)})")
    if opts.schedule not in ("pluto", "outer", "original", "model"):
        raise UsageError(f"unknown schedule '{opts.schedule}' (choose from pluto, outer, original, model)")
    if opts.unroll_jam < 0:
        raise UsageError("the unroll-and-jam factor must be 0 (none) or a positive integer")
    if any(s < 1 for s in opts.tile_sizes):
        raise UsageError("tile sizes must be positive integers")
    if not opts.time_limit >= 0:  # (NaN too)
        raise UsageError(f"bad time limit '{opts.time_limit:g}' (need 0 for none, or a positive number of seconds)")


def schedules(program: Program, opts: OptimizeOptions) -> list[TiledSchedule]:
    """The tiled schedule of every scop; tile sizes are taken band by band in file order."""
    _check(opts)
    sizes = list(opts.tile_sizes)
    out = []
    for a in program.scops:
        ts = a.tiled(tuple(sizes), tile=opts.tile, parallel=opts.parallel, schedule=opts.schedule,
                     unroll_jam=opts.unroll_jam, choice=opts.choice, blocks=opts.blocks)
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
    from .emit.c import fresh_prefix, generate_region, thread_versions, wide_or_narrow
    from .emit.versions import versioned
    outside = _indent_of(program.text, a.scop.begin_line)
    indent = outside + 2 if a.checks else outside  # (inside `if (checks) {`)
    try:
        serial = _serial_version(program, opts, a, ts, indent + 1)
        narrow = _narrow_version(program, opts, a, ts, indent + 2) if serial else None
        code = generate_region(a.cpu.scop, ts, parallel=opts.parallel, ivdep=opts.ivdep,
                               indent=indent + 1 + (narrow is not None) if serial else indent,
                               avoid=program.identifiers, deps=_deps_of(a))
        if narrow is not None:
            code = wide_or_narrow(narrow[0], code, narrow[1], indent + 1)
        if serial:
            code, ts = thread_versions(code, serial, indent), replace(ts, one_thread=True)
        code += "".join(f"{'  ' * indent}{x}\n" for x in a.scop.epilogue)  # (the optimized code's only)
        if a.checks:
            code = versioned(a.cpu.scop, a.checks, code, original_code(program.text, a.scop), outside,
                             fresh_prefix(a.cpu.scop, program.identifiers))
    except UnsupportedError as e:
        wrong = isinstance(e, CodegenMismatch)
        plainer = without_alternatives(ts.schedule) if wrong else None
        if plainer is not None:
            # the loops a parallel loop of few iterations hands its threads to are no parallel loops in isl's
            # code (hotspot's column loops, beside the corner printed before them): the loop keeps its threads
            return _c_region(program, opts, k, a, replace(ts, schedule=plainer, bands=tuple(
                replace(b, parallel_alternative=None) for b in ts.bands)))
        if ts.without_unroll is not None:
            return _c_region(program, opts, k, a, ts.without_unroll())  # (that one has no without_unroll)
        if ts.tile_sizes:
            # isl's AST builder fails on some tiled strided domains ("input involves unknown divs": random
            # program 82281), or prints code that does not run the schedule (issue 33: a tile wavefront
            # over a strided domain lost instances): the region untiled, under the same scheduler
            plain = a.tiled((), tile=False, parallel=opts.parallel, schedule=opts.schedule,
                            unroll_jam=opts.unroll_jam, choice=opts.choice, blocks=opts.blocks)
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
    return _guarded(program, k, with_prelude(a.scop, code, outside)), ts


def with_prelude(scop: Scop, code: str, indent: int) -> str:
    """*code* after the region's prelude (the values the rewrites read once, rewrite/members.py), in a block:
    every version of the region and its run-time checks read them."""
    if not scop.prelude:
        return code
    pad = "  " * indent
    return f"{pad}{{\n" + "".join(f"{pad}  {d}\n" for d in scop.prelude) + code + f"{pad}}}\n"


def region_code_lines(text: str, scop: Scop) -> tuple[int, int]:
    """The first and last lines (1-based) of the region's own code: those between `#pragma scop` and `#pragma
    endscop`, or the region's lines themselves where it was found without them (detect.py)."""
    lines = source_lines(text)
    begin, end = scop.begin_line, scop.end_line
    if re.match(r"\s*#\s*pragma\s+scop\b", lines[begin - 1] if begin <= len(lines) else ""):
        begin, end = begin + 1, end - 1
    return begin, end


def original_code(text: str, scop: Scop) -> str:
    """The region's code as the file has it (region_code_lines), in a block of their own."""
    lines = source_lines(text)
    begin, end = region_code_lines(text, scop)
    body = "".join(lines[begin - 1:end]).rstrip("\n")
    pad = "  " * (_indent_of(text, scop.begin_line) + 2)
    return f"{pad}{{\n{body}\n{pad}}}\n"


def _deps_of(a: AnalyzedScop):
    """The dependences the printed code of *a* must keep (None where the analysis gave up): every one, but
    the anti and output dependences of scalars whose live ranges may be reordered (poly/deps.LiveRanges; the
    schedule was checked to keep those live ranges apart, poly/legality.py)."""
    deps = a.cpu.deps
    if not deps.complete:
        return None
    return deps.live.validity if deps.live is not None else deps.all


def _serial_version(program: Program, opts: OptimizeOptions, a: AnalyzedScop, ts: TiledSchedule,
                    indent: int) -> str:
    """The region's code for one thread, where *ts* runs tiles as a wavefront (the order that makes a tile
    loop parallel): the same schedule with the wavefront left out, so that the tiles follow each other in their
    own order; the sizes given for *ts*, and where none were, the defaults of tiles in order (a band that needs a
    wavefront has its own: tiling.ROW_TILES). '' where no band of *ts* is a wavefront, or that code cannot be
    built."""
    if not (opts.parallel and any(b.wavefront for b in ts.bands)):
        return ""
    return _retiled(program, opts, a, ts, indent, wavefront=False) or ""


def _narrow_version(program: Program, opts: OptimizeOptions, a: AnalyzedScop, ts: TiledSchedule,
                    indent: int) -> tuple[str, str] | None:
    """Where a wavefront band of *ts* has wide tiles (poly/tiling.py WAVEFRONT_TILES, BandInfo.wide_tiles): the
    C condition under which they leave an anti-diagonal a tile for every thread (emit.c.wide_condition), and
    the region's parallel code with those bands' tiles at 32 instead, for the other runs: a 2000-wide table
    has 4 tiles of 512 to share among 16 threads.
    None where no band has them, or that code cannot be built."""
    bands = [b for b in ts.bands if b.wide_tiles]
    if not bands:
        return None
    from .emit.c import fresh_prefix, wide_condition
    condition = wide_condition(a.cpu.scop, bands, fresh_prefix(a.cpu.scop, program.identifiers))
    code = None if condition is None else _retiled(program, opts, a, ts, indent, wide=False)
    return None if code is None else (condition, code)


def _retiled(program: Program, opts: OptimizeOptions, a: AnalyzedScop, ts: TiledSchedule, indent: int,
             wavefront: bool = True, wide: bool = True) -> str | None:
    """The region's code with *ts*'s schedule built again under *wavefront* and *wide* (AnalyzedScop.tiled),
    from the sizes given for *ts* (the others the defaults of that build); None where it cannot be built."""
    from .emit.c import generate_region
    try:
        again = a.tiled(ts.tile_sizes[:ts.given_sizes], tile=opts.tile, parallel=opts.parallel, schedule=opts.schedule,
                        unroll_jam=opts.unroll_jam, choice=opts.choice, wavefront=wavefront, blocks=opts.blocks,
                        wide=wide)
        return generate_region(a.cpu.scop, again, parallel=opts.parallel, ivdep=opts.ivdep, indent=indent,
                               avoid=program.identifiers, deps=_deps_of(a))
    except UnsupportedError:
        return None


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
    reps = [(a.scop.begin_line, a.scop.end_line,
             _guarded(program, k, with_prelude(a.scop, r.host, _indent_of(program.text, a.scop.begin_line))))
            for k, (a, r) in enumerate(zip(program.scops, regions))]
    from .linkage import user_header_lines, wrap_c_headers  # the program's other C files keep C linkage
    reps += wrap_c_headers(program.text, user_header_lines(program.path, program.text, program.includes,
                                                           program.defines))
    return with_line_ending(head + "\n", program.text) + splice(program.text, reps), regions


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
                       gpu_prefix(program, "c"), cfg, allow_tf32=opts.allow_tf32)


def triton_modules(program: Program, opts: OptimizeOptions) -> dict:
    """The Triton modules worth measuring, by FUSE value: the PPCG-like mapping (0) and, where it differs,
    the mapping of the whole-component schedule (1). The choice between them is a tuning parameter.
    Computed once per program (the search space and the runner both need them)."""
    key = (opts.block, opts.allow_tf32)
    if key not in program._triton:
        out = {0: triton_module(program, opts, {"FUSE": 0})}
        fused = triton_module(program, opts, {"FUSE": 1})
        if fused.text.split("\n@triton.jit", 1)[-1] != out[0].text.split("\n@triton.jit", 1)[-1]:
            out[1] = fused
        program._triton[key] = out
    return dict(program._triton[key])


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
            if a.scop.epilogue:
                raise UnsupportedError(f"the GPU targets do not run what the optimized C code runs after the region "
                                       f"({a.scop.epilogue[0]}): use --target c", a.scop.file, a.scop.begin_line)
            if opts.target == "triton" and a.scop.prelude:
                raise UnsupportedError("the triton target does not read the values polytune reads once before "
                                       f"the region ({a.scop.prelude[0]}): use --target c or cuda",
                                       a.scop.file, a.scop.begin_line)
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
    """Replace 1-based inclusive line ranges of *text* by new code, its lines ending as *text*'s do."""
    lines = source_lines(text)
    for begin, end, code in sorted(replacements, reverse=True):
        lines[begin - 1:end] = [with_line_ending(code if code.endswith("\n") else code + "\n", text)]
    return "".join(lines)


def with_line_ending(code: str, like: str) -> str:
    """*code* with CRLF line endings where the file *like* ends its first line with CRLF (a Windows file:
    the output must not mix CRLF and LF), else as it is."""
    first = like.find("\n")
    if first <= 0 or like[first - 1] != "\r":
        return code
    return re.sub(r"(?<!\r)\n", "\r\n", code)


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
             "parallel_loop_alternative": b.parallel_alternative, "parallel_loop_collapse": b.parallel_collapse,
             **({"one_thread_tile_sizes": list(b.one_thread_sizes)} if b.one_thread_sizes else {})}
            for b in ts.bands
        ],
        "tile_sizes": list(ts.tile_sizes),
        "one_thread_version": ts.one_thread,
        **({"contractions": [{"statement": c.statement, "rows": c.i, "columns": c.j, "k": c.k, "outer": list(c.outer)}
                             for c in ts.contractions]} if ts.contractions else {}),
        **({"scheduler_costs": a.model_scheduler[1], "scheduler": a.model_scheduler[0][0],
            "point_order": a.model_scheduler[0][1]}
           if "model_scheduler" in a.__dict__ else {}),
        **({"expanded": [x.scalar for x in a.scop.scratch]} if a.scop.scratch else {}),
        **({"runtime_checks": a.checks.describe()} if a.checks else {}),
    }


def write_atomically(path: str, text: str) -> None:
    """Write the whole file or nothing (no half-written output on failure). The file gets the mode an ordinary
    write gives it: a file it replaces keeps its own (``--force`` on a 0644 input leaves it 0644), a new one
    0666 less the umask (the temporary file it is written through is created 0600)."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".polytune-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
            f.write(text)
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except OSError:  # a new file
            mode = 0o666 & ~current_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def current_umask() -> int:
    """The process's umask (read from /proc where it is there: setting it to read it races with other threads)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def optimize(path: str, opts: OptimizeOptions = OptimizeOptions(), includes: tuple[str, ...] = (),
             defines: tuple[str, ...] = (), pure: tuple[str, ...] = (), started: float | None = None,
             auto: bool | None = None) -> OptimizeResult:
    """Python API (and `polytune optimize`): the optimized text of *path*, a report and the warning lines,
    without writing anything. Within ``opts.time_limit`` seconds of wall clock: the C target's regions are
    done one after another in a worker process, and a region not done in time keeps its original code,
    with a note naming the stage that ran out; the GPU targets' whole file is done in one worker, and
    past the limit optimize stops with an error. 0: no limit, all in this process. *started*: the
    time.monotonic() the limit counts from (the command line's: the process's start; default: now); the
    workers end a little before it (timelimit.finish_margin), for what follows them. *auto*: region detection
    (analyze); the regions it found and the nests it missed are the report's ``regions_found`` and
    ``missed``, and lines of the result's warnings."""
    _check(opts)
    if opts.time_limit == 0 or math.isinf(opts.time_limit):
        program = analyze(path, includes, defines, pure, auto)
        return with_remarks(replace(generate(program, opts), warnings=program.warnings), program.remarks)
    end = time.monotonic() if started is None else started
    end += opts.time_limit - timelimit.finish_margin(opts.time_limit)
    if opts.target != "c":
        return _whole_file_within(path, opts, includes, defines, pure, auto, end)
    return _c_regions_within(path, opts, includes, defines, pure, auto, end)


def with_remarks(result: OptimizeResult, remarks) -> OptimizeResult:
    """*result* with region detection's remarks (detect.Remark) in its report and after its warnings."""
    if not remarks:
        return result
    report = dict(result.report, regions_found=[r.to_record() for r in remarks if r.kind == "found"],
                  missed=[r.to_record() for r in remarks if r.kind == "missed"])
    return replace(result, report=report, warnings=tuple(result.warnings) + tuple(str(r) for r in remarks))


# A region's worker is killed where the regions after it would have less than this each, up to half the
# time left: one slow region does not take every other one's time.
RESERVE_PER_REGION = 1.0


@dataclass(frozen=True)
class RegionCode:
    """What a worker sends for one region: its code (None: the original is kept), its report entry, the
    warning lines of its analysis, the note lines of its generation, and how many tile sizes it took."""

    begin: int
    end: int
    code: str | None
    report: dict
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    sizes_used: int = 0
    missed: str = ""  # a region found without pragmas, analyzed, and not worth optimizing: why (report: None)


def _region_worker(send, path: str, opts: OptimizeOptions, includes: tuple[str, ...], defines: tuple[str, ...],
                   pure: tuple[str, ...], auto: bool | None, start: int, sizes: tuple[int, ...],
                   read: tuple | None = None) -> None:
    """A worker's job (timelimit.run): read the file and find its regions (unless *read*: a former worker's
    regions, straight-line spans and macro guards), then do its regions from index *start* on, sending
    ``("regions", spans, read, remarks)`` first (*read* only where there are several regions: a later worker
    may need it; *remarks*: region detection's), ``("stage", k, what)`` as region k's stages start, and
    ``("region", k, RegionCode)`` as each is done."""
    scops: dict[int, Scop] = {}  # the regions detection built (this worker's first only: isl objects stay here)
    if read is None:
        send(("stage", None, "reading the file"))
        pre = read_source(path, includes, defines)  # (first: a file it cannot read)
        text = _read_text(path)
        items, straight, remarks = read_items(path, pre, text, includes, defines, pure, auto)
        regions = [r for r, _scop in items]
        scops = {r.begin_line: scop for r, scop in items if scop is not None}
        guards = macro_guards(path, text, [guard_span(r) for r in regions], includes, defines)
        read = (tuple(regions), tuple(straight), {r.begin_line: g for r, g in zip(regions, guards)})
        spans = sorted([(b, e, None) for b, e in straight] + [(r.begin_line, r.end_line, r) for r in regions],
                       key=lambda x: x[0])
        send(("regions", tuple((b, e) for b, e, _r in spans), read if len(spans) > 1 else None, tuple(remarks)))
    else:
        text = _read_text(path)
    regions, straight, guard_of = read
    spans = sorted([(b, e, None) for b, e in straight] + [(r.begin_line, r.end_line, r) for r in regions],
                   key=lambda x: x[0])
    words, left = _words(text), list(sizes)
    for k in range(start, len(spans)):
        b, e, r = spans[k]
        if r is None:
            send(("region", k, RegionCode(b, e, None, {"lines": [b, e], "kept": STRAIGHT_LINE},
                                          (f"{path}:{b}: note: {STRAIGHT_LINE}",))))
            continue
        a, lines = analyze_region(r, words, lambda what, k=k: send(("stage", k, what)), scop=scops.get(b))
        why = _not_worth(a) if r.auto else ""
        if why:
            send(("region", k, RegionCode(b, e, None, {}, missed=why)))
            continue
        program = Program(path, text, (a,), (guard_of.get(b, ()),), tuple(lines), includes, defines, pure)
        o = replace(opts, tile_sizes=tuple(left))
        send(("stage", k, "scheduling"))
        tiled = schedules(program, o)
        send(("stage", k, "code generation"))
        code, ts = c_regions(program, o, tiled)[0]
        del left[:len(ts.tile_sizes)]
        notes = (f"{path}:{b}: note: {ts.fallback}",) if ts.fallback else ()
        send(("region", k, RegionCode(b, e, code, scop_report(a, ts), tuple(lines), notes, len(ts.tile_sizes))))


def _ran_out(path: str, line: int, opts: OptimizeOptions, what: str) -> tuple[str, str]:
    """The note of a region kept for the time limit, and *what* ran out (its report entry's ``ran_out``)."""
    return (f"{path}:{line}: note: the region was not optimized within the time limit ({opts.time_limit:g} s; "
            f"{what}): its original code is kept (--time-limit)"), what


def _first_region_line(text: str) -> int:
    m = re.search(r"^[ \t]*#[ \t]*pragma[ \t]+scop\b", text, re.M)
    return text.count("\n", 0, m.start()) + 1 if m else 1


class _Progress:
    """What the parent knows of the workers of _c_regions_within: the regions' lines, those done, and where
    the current worker is (region index, stage) and its deadline."""

    def __init__(self, end: float, sizes: tuple[int, ...]):
        self.end = end
        self.spans: tuple[tuple[int, int], ...] | None = None
        self.done: dict[int, RegionCode] = {}
        self.sizes = list(sizes)
        self.read: tuple | None = None  # the first worker's regions, for the workers after it
        self.remarks: tuple = ()  # region detection's (detect.Remark)
        self.restart(end)

    def restart(self, until: float) -> None:
        self.k: int | None = None
        self.what = "reading the file" if self.read is None else "starting a worker"
        self.until = until

    def __call__(self, msg: tuple) -> None:
        if msg[0] == "regions":
            self.spans, self.read, self.remarks = msg[1], msg[2], msg[3]
        elif msg[0] == "stage":
            k, what = msg[1], msg[2]
            if k is not None and k != self.k and self.spans is not None:  # a region starts: its deadline
                left = self.end - time.monotonic()
                self.until = self.end - min(RESERVE_PER_REGION * (len(self.spans) - 1 - k), left / 2)
            self.k, self.what = k, what
        elif msg[0] == "region":
            self.done[msg[1]] = msg[2]
            del self.sizes[:msg[2].sizes_used]


def _c_regions_within(path: str, opts: OptimizeOptions, includes, defines, pure, auto, end: float) -> OptimizeResult:
    """optimize's C target under its deadline *end*: workers, one after another, do the regions in order;
    the region a worker is killed in keeps its code, and the next worker goes on after it (with the tile
    sizes from where that region's would have started)."""
    progress = _Progress(end, opts.tile_sizes)
    kept: dict[int, tuple[str, str]] = {}  # region index -> its note, what ran out
    start = 0
    while True:
        progress.restart(end)
        ending = timelimit.run(_region_worker, (path, opts, includes, defines, pure, auto, start,
                                                tuple(progress.sizes), progress.read), lambda: progress.until,
                               progress)
        if ending.finished:
            break
        what = f"{progress.what} ran out" if ending.how == "deadline" else \
            f"its worker stopped in {progress.what} (exit code {ending.exitcode})"
        spans = progress.spans
        if spans is None:  # the file itself was not read: it is kept as it is
            text = _read_text(path)
            return OptimizeResult(text, {"file": path, "scops": [], "kept": "time limit", "notes": [
                _ran_out(path, _first_region_line(text), opts, what)[0]]})
        if progress.k is None:  # a restarted worker did not start: the regions left keep their code
            kept.update((k, _ran_out(path, spans[k][0], opts, what)) for k in range(start, len(spans)))
            break
        kept[progress.k] = _ran_out(path, spans[progress.k][0], opts, what)
        start = progress.k + 1
        if start >= len(spans):
            break
        if time.monotonic() >= end:
            kept.update((k, _ran_out(path, spans[k][0], opts, "not started")) for k in range(start, len(spans)))
            break
    text = _read_text(path)
    reports, warnings, notes, replacements = [], [], [], []
    remarks = list(progress.remarks)
    regions = {r.begin_line: r for r in progress.read[0]} if progress.read else {}
    for k, (b, e) in enumerate(progress.spans or ()):
        if k in progress.done:
            rc = progress.done[k]
            if rc.missed:
                remarks = missed_instead(remarks, regions[b], rc.missed) if b in regions else remarks
                continue
            reports.append(rc.report)
            warnings += rc.warnings
            notes += rc.notes
            if rc.code is not None:
                replacements.append((b, e, rc.code))
        else:
            reports.append({"lines": [b, e], "kept": "time limit", "ran_out": kept[k][1]})
            notes.append(kept[k][0])
    remarks.sort(key=lambda x: (x.line, x.kind))
    return with_remarks(OptimizeResult(splice(text, replacements), {"file": path, "scops": reports,
                                                                    **({"notes": notes} if notes else {})},
                                       tuple(warnings)), remarks)


def _whole_worker(send, path: str, opts: OptimizeOptions, includes, defines, pure, auto) -> None:
    """A GPU target's worker: the whole file, its stages reported by region (``("stage", line, what)``)."""
    send(("stage", None, "reading the file"))
    program = analyze(path, includes, defines, pure, auto, stage=lambda line, what: send(("stage", line, what)))
    send(("stage", program.scops[0].scop.begin_line if program.scops else None, "code generation"))
    send(("result", with_remarks(replace(generate(program, opts), warnings=program.warnings), program.remarks)))


def _whole_file_within(path: str, opts: OptimizeOptions, includes, defines, pure, auto, end: float) -> OptimizeResult:
    state: dict = {"line": None, "what": "reading the file", "result": None}

    def on_message(msg: tuple) -> None:
        if msg[0] == "stage":
            state["line"], state["what"] = msg[1], msg[2]
        elif msg[0] == "result":
            state["result"] = msg[1]

    ending = timelimit.run(_whole_worker, (path, opts, includes, defines, pure, auto), lambda: end, on_message)
    if ending.finished and state["result"] is not None:
        return state["result"]
    line = state["line"] or _first_region_line(_read_text(path))
    how = f"{state['what']} ran out" if ending.how == "deadline" else \
        f"its worker stopped in {state['what']} (exit code {ending.exitcode})"
    raise UnsupportedError(f"the {opts.target} code was not generated within the time limit "
                           f"({opts.time_limit:g} s; {how}): give more time with --time-limit", path, line)


def slow_regions(path: str, includes: tuple[str, ...] = (), defines: tuple[str, ...] = (), pure: tuple[str, ...] = (),
                 time_limit: float = timelimit.DEFAULT_TIME_LIMIT,
                 auto: bool | None = None) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The first lines of the regions that optimize's default does not finish within *time_limit* (tune
    and bench leave them out: analyze's *skip*), and the note lines that say so; raises UnsupportedError
    where the file itself was not read in time. A probe in a worker (optimize): the regions that pass are
    analyzed again by the caller, in its own process, where its isl objects are needed. 0: no probe."""
    if not time_limit:
        return (), ()
    result = optimize(path, OptimizeOptions(time_limit=time_limit), includes, defines, pure, auto=auto)
    scops, notes = result.report["scops"], tuple(result.report.get("notes", ()))
    slow = tuple(s["lines"][0] for s in scops if s.get("kept") == "time limit")
    if not scops and notes:  # the file was not read within the limit
        m = re.match(r"^(.*):(\d+): note: (.*)$", notes[0])
        raise UnsupportedError(m.group(3) if m else notes[0], path, int(m.group(2)) if m else None)
    return slow, tuple(n for n in notes if "within the time limit" in n)
