"""Choose a legal, tiled, parallel schedule the way Pluto does, on isl's schedule trees.

1. isl's Pluto-like scheduler finds permutable bands (with skewing for stencils, fusion where legal),
   maximizing band depth.
2. Every permutable band of two or more members is tiled (tile loops outside, point loops inside).
3. The point loops are reordered so that a loop with stride-1 (or no) access change runs innermost.
4. The outermost parallel loop (exact dependence test) is marked for OpenMP; a tiled band without a
   parallel loop gets a tile wavefront (Pluto's pipelined parallelism) that makes its second loop parallel.
5. The final schedule is checked against every dependence before anything is emitted.

This module calls isl's scheduler and composes the steps (make_schedule); each step is a module:
tiling.py, point_order.py, diamond.py, parallel.py, legality.py (marks: marks.py).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

import islpy as isl

from .bands import band_nodes, is_short, member_of
from .contraction import Blocks, isolate, worth_blocking
from .deps import Dependences, instance_order, ordered
from .distribute import distribute
from .islutil import CTX, ISL_LOCK, bounded, maps_of, sets_of
from .legality import IllegalSchedule, check_legal, in_listed_order
from .scop import Scop
from .tiling import DEFAULT_TILE, BandInfo, Transformer

__all__ = ["DEFAULT_TILE", "DEFAULT_UNROLL", "BandInfo", "IllegalSchedule", "TiledSchedule", "_bands", "access_dims",
           "check_legal", "compute_base_schedule", "make_schedule", "original_order"]
_bands = band_nodes  # (its old name here, which tests import)

DEFAULT_UNROLL = 4  # unroll-and-jam factor of a point loop into the innermost one (register tiling)
SCHEDULER_OPERATIONS = 20_000_000  # isl operation quota of the scheduler; past it: the original order
MANY_STATEMENTS = 50  # above this, isl's scheduler does not try to fuse (its search is not bounded by the quota)
TRANSFORM_OPERATIONS = 20_000_000  # quota of tiling, marks and the legality check; past it: the base schedule
# Above this many pieces (basic maps) of dependences, isl's scheduler gets them as validity constraints only:
# proximity and coincidence over many pieces make its simplex tableaux large and their numbers long, so that
# a pivot (what the quota counts) costs milliseconds. Issue 33's 8-statement region: 172 pieces, 94 s (and
# three such calls with the short-loop retries); validity only, 1.5 s. The kernels of benchmarks/pluto have
# at most 21 pieces.
MANY_PIECES = 64


@dataclass(frozen=True, eq=False)
class TiledSchedule:
    schedule: isl.Schedule  # the final schedule tree, with marks for OpenMP/ivdep (poly/marks.py)
    bands: tuple[BandInfo, ...]
    tile_sizes: tuple[int, ...]  # flattened, in band order: what the tuner tunes
    given_sizes: int = 0  # how many of tile_sizes (the first) were given; the others are the defaults
    private_arrays: dict = field(default_factory=dict)  # loop depth -> its PrivateArray copies
    fallback: str = ""  # what was done instead of the transformations, when isl ran out of its quota
    one_thread: bool = False  # the C code has a version for one thread, its tiles in order (no wavefront)
    contractions: tuple = ()  # contraction.Contraction of each band printed as packed blocks
    # the same schedule without unroll-and-jam, computed when asked: where a band was unrolled and jammed,
    # isl's AST builder may fail on the copies, and the code is then generated from this one (emit's AST
    # build is the test: building an AST only to ask whether it builds cost 40% of a candidate's generation)
    without_unroll: Callable[[], TiledSchedule] | None = field(default=None, compare=False, repr=False)

    @property
    def tunable_bands(self) -> tuple[BandInfo, ...]:
        return tuple(b for b in self.bands if b.tiled)


def schedule_options() -> None:
    CTX.set_schedule_maximize_band_depth(1)
    CTX.set_schedule_outer_coincidence(0)
    CTX.set_tile_scale_tile_loops(0)
    CTX.set_tile_shift_point_loops(0)


def compute_base_schedule(scop: Scop, deps: Dependences, outer_coincidence: bool = False,
                          whole_component: bool = False, serialize_sccs: bool = False,
                          notes: list[str] | None = None, input_reuse: bool = False) -> isl.Schedule:
    """isl's scheduler (Pluto-like: tiling hyperplanes, proximity, coincidence) over the dependences;
    *outer_coincidence* asks for parallel outer members (the GPU mapping's choice, as in PPCG);
    *whole_component* schedules each connected component at once instead of its strongly connected
    parts one by one, which fuses statements that the incremental scheduler distributes;
    *serialize_sccs* puts the strongly connected components one after the other (no fusion); *input_reuse*
    adds the reads of one element by two statements to the proximity constraints (Pluto's --rar), so that
    statements that read the same data are fused although no dependence joins them. A fallback to the
    original order is noted in *notes*."""
    if not deps.complete:
        return original_order(scop)
    with ISL_LOCK:  # the scheduler's options are the process's (islutil.ISL_LOCK)
        return _compute_base_schedule(scop, deps, outer_coincidence, whole_component, serialize_sccs, notes,
                                      input_reuse)


def input_reuse_pairs(scop: Scop, deps: isl.UnionMap) -> isl.UnionMap:
    """Instance pairs ``x -> y`` of statements that read one element, *x* first in the original order,
    where no chain of dependences *deps* joins the two statements: isl's scheduler sees such statements
    as separate components, each scheduled apart, and these pairs, as proximity, join them (statements
    already joined keep the schedule their dependences give). Empty where they are too many to compute
    within the scheduler's quota (a read-only array read by every statement of a big scop)."""
    reads = scop.reads
    names = [st.name for st in scop.statements]
    if len(names) < 2 or len(names) > MANY_STATEMENTS:
        return isl.UnionMap.empty(reads.get_space())
    component = {n: n for n in names}

    def find(n: str) -> str:
        while component[n] != n:
            n = component[n]
        return n

    for m in maps_of(deps):
        a, b = (find(m.get_tuple_name(t)) for t in (isl.dim_type.in_, isl.dim_type.out))
        component[a] = b

    def pairs() -> isl.UnionMap:
        out = isl.UnionMap.empty(reads.get_space())
        for m in maps_of(reads.apply_range(reads.reverse())):
            if find(m.get_tuple_name(isl.dim_type.in_)) != find(m.get_tuple_name(isl.dim_type.out)):
                out = out.union(isl.UnionMap.from_map(m))
        # one convex hull per statement pair: proximity is a preference, not a constraint, so a superset
        # does; the exact pairs of a radius-4 stencil are a hundred pieces, and isl's scheduler took 2.7 s
        # over them (0.1 s over the hulls, the same schedule)
        hulls = isl.UnionMap.empty(out.get_space())
        for m in maps_of(ordered(out, instance_order(scop))):
            hulls = hulls.union(isl.UnionMap.from_map(isl.Map.from_basic_map(m.simple_hull())))
        return hulls

    try:
        return bounded(pairs, SCHEDULER_OPERATIONS)
    except isl.Error:
        return isl.UnionMap.empty(reads.get_space())


def _compute_base_schedule(scop: Scop, deps: Dependences, outer_coincidence: bool, whole_component: bool,
                           serialize_sccs: bool, notes: list[str] | None, input_reuse: bool) -> isl.Schedule:
    schedule_options()
    CTX.set_schedule_outer_coincidence(1 if outer_coincidence else 0)
    CTX.set_schedule_whole_component(1 if whole_component else 0)
    CTX.set_schedule_serialize_sccs(1 if serialize_sccs else 0)
    many = len(scop.statements) > MANY_STATEMENTS
    try:
        d = bounded(lambda: _possible(deps.all, scop.context), SCHEDULER_OPERATIONS)
        pieces = sum(m.n_basic_map() for m in maps_of(d))
        cheap = pieces > MANY_PIECES
        if cheap:
            sc = isl.ScheduleConstraints.on_domain(scop.domain).set_validity(d)
            if notes is not None:
                notes.append(f"the dependences have {pieces} pieces: isl's scheduler keeps them without "
                             "optimizing their distances or parallelism (a cheaper schedule)")
        else:
            live = deps.live
            if live is not None:
                # the scalars' live ranges may be reordered where they stay local to a band (deps.LiveRanges)
                d = bounded(lambda: _possible(live.validity, scop.context), SCHEDULER_OPERATIONS)
            near = d.union(input_reuse_pairs(scop, d).intersect_params(scop.context)) if input_reuse else d
            sc = isl.ScheduleConstraints.on_domain(scop.domain).set_validity(d).set_proximity(near) \
                .set_coincidence(d)
            if live is not None:
                sc = sc.set_conditional_validity(_possible(live.condition, scop.context),
                                                 _possible(live.false, scop.context))
        if many:
            # isl's operation quota does not stop its scheduler's search for fusions (200 one-line loops:
            # over 10 minutes; 0.3 s with the strongly connected components scheduled one after another)
            CTX.set_schedule_serialize_sccs(1)
            if notes is not None:
                notes.append(f"{len(scop.statements)} statements: loops are not fused (isl's scheduler takes "
                             "each strongly connected component on its own)")
        schedule = bounded(sc.compute_schedule, SCHEDULER_OPERATIONS)
        if not (many or cheap) and _skews_short_loop(schedule):
            # isl skewed a loop by a short constant-extent loop (depthwise: `y + ky`, the filter taps): the
            # accumulation is spread over the outer loop, and the point loops get a loop of 1-3 iterations
            # and guards in the innermost body. Ask for parallel outer members instead (PPCG's choice,
            # which keeps such loops inside), or else schedule the strongly connected components one after
            # the other; keep the first schedule free of that skew.
            # The retries share the first call's quota (each with a fresh one, issue 33's region ran the
            # scheduler three times as long).
            for retry in ((1, 0), (0, 1)):
                CTX.set_schedule_outer_coincidence(retry[0] or int(outer_coincidence))
                CTX.set_schedule_serialize_sccs(retry[1] or int(serialize_sccs))
                try:
                    other = bounded(sc.compute_schedule, SCHEDULER_OPERATIONS, reset=False)
                except isl.Error:  # out of the shared quota (or isl failed): the first schedule stands
                    break
                finally:
                    CTX.set_schedule_serialize_sccs(int(serialize_sccs))
                if not _skews_short_loop(other):
                    return other
        return schedule
    except isl.Error:
        # isl's scheduler can fail ("unable to carry dependences") or run out of its operation quota: keep
        # the original order, untiled.
        if notes is not None:
            notes.append("isl's scheduler failed or exceeded its operation limit: the original loop order is kept")
        return original_order(scop)
    finally:
        CTX.set_schedule_outer_coincidence(0)
        CTX.set_schedule_whole_component(0)
        CTX.set_schedule_serialize_sccs(0)


def original_order(scop: Scop) -> isl.Schedule:
    """The region's own order (its 2d+1 schedule) as a schedule tree: one band, not permutable."""
    mupa = isl.MultiUnionPwAff.from_union_map(scop.schedule)
    return isl.Schedule.from_domain(scop.domain).insert_partial_schedule(mupa)


def _possible(deps: isl.UnionMap, context: isl.Set) -> isl.UnionMap:
    """The dependences without the pieces that cannot occur under the context: sizes that are macros are
    parameters the context fixes, and a piece that exists only for other values (a linearized
    `c[i * N + j]` aliasing the next row when j >= N) must not shape the schedule. The other pieces are
    kept as they are: giving the scheduler the fixed sizes themselves made it much slower (heat-3d)."""
    out = isl.UnionMap.empty(deps.get_space())
    for m in maps_of(deps):
        for b in m.get_basic_maps():
            piece = isl.Map.from_basic_map(b)
            if not piece.intersect_params(context.align_params(piece.get_space())).is_empty():
                out = out.union(isl.UnionMap.from_map(piece))
    return out.coalesce()


def _skews_short_loop(schedule: isl.Schedule) -> bool:
    """Whether some band member combines, for some statement, a loop that is not short with a loop of short
    constant extent nested inside it (`y + ky` with 0 <= ky < 3). Time skewing (`2t + i`) does not count,
    even with few time steps: the time loop is the outer one."""
    return any(_band_skews_short_loop(node) for node in band_nodes(schedule.get_root()))


def _band_skews_short_loop(node) -> bool:
    mupa = node.band_get_partial_schedule()
    for st in sets_of(node.get_domain()):
        short = [is_short(st, i) for i in range(st.dim(isl.dim_type.set))]
        if not any(short):
            continue
        for k in range(node.band_n_member()):
            for _piece, aff in member_of(mupa.get_at(k), st).get_pieces():
                used = [i for i in range(len(short)) if not aff.get_coefficient_val(isl.dim_type.in_, i).is_zero()]
                if any(short[j] and not short[i] for i in used for j in used if j > i):
                    return True
    return False


def make_schedule(scop: Scop, deps: Dependences, tile_sizes: tuple[int, ...] = (), tile: bool = True,
                  parallel: bool = True, base: isl.Schedule | None = None,
                  unroll: int = DEFAULT_UNROLL, omp_schedule: str = "auto",
                  privatize_arrays: bool = True, point_order: str = "stride", reuse: bool = False,
                  wavefront: bool = True, blocks: Blocks | None = None, wide: bool = True) -> TiledSchedule:
    """The tiled, parallel schedule of *base*. *omp_schedule*: the OpenMP schedule clause of the parallel
    loops: static (none printed), dynamic, or auto (static, except on a loop over a triangle, see
    `schedule_clause` in parallel.py). *privatize_arrays*: private copies of scratch arrays (privatize.py).
    *point_order*: stride (the best access strides innermost) or vector (the same among the point loops
    along which no statement depends on itself, where there are such). *reuse*: tile a band only where a
    reuse would otherwise miss the cache (reuse.py; optimize's model), not every permutable band. *blocks*:
    contraction bands get subtrees of their own, printed as packed blocks (contraction.py; None or off: not)."""
    if not deps.complete:  # no dependences known: the original order, nothing transformed or marked
        return TiledSchedule(original_order(scop), (), ())
    if deps.live is not None:
        try:
            return _make_schedule(scop, deps, tile_sizes, tile, parallel, base, unroll, omp_schedule,
                                  privatize_arrays, point_order, reuse, wavefront, blocks, wide)
        except IllegalSchedule:
            # the live ranges of a scalar interleave (the check found it): the schedule of the scalars' order
            # instead. isl gets only the direct anti and output dependences of the original order, which do
            # not order two live ranges once others run between them: the two taps sums of one body, or the
            # scalars of two nests that it fuses (17 of progen.local_scalar_program's seeds 1000-1079)
            deps, base = deps.in_order(), None
    return _make_schedule(scop, deps, tile_sizes, tile, parallel, base, unroll, omp_schedule, privatize_arrays,
                          point_order, reuse, wavefront, blocks, wide)


def _make_schedule(scop: Scop, deps: Dependences, tile_sizes: tuple[int, ...], tile: bool, parallel: bool,
                   base: isl.Schedule | None, unroll: int, omp_schedule: str, privatize_arrays: bool,
                   point_order: str, reuse: bool, wavefront: bool, blocks: Blocks | None,
                   wide: bool = True) -> TiledSchedule:
    base = base if base is not None else compute_base_schedule(scop, deps)
    if blocks is not None and blocks.on:
        # contraction bands in subtrees of their own, printed as packed blocks (contraction.py, emit/blis.py)
        base, found = isolate(base, scop, deps, blocks, worth_blocking)
    else:
        found = ()
    # statements under data-dependent conditions in innermost loops of their own, as written (distribute.py)
    base = distribute(base, scop, deps.all)

    def transform(u: int) -> TiledSchedule:
        t = Transformer(scop, deps.all.intersect_params(scop.context), list(tile_sizes), tile, parallel,
                         deps.scalars, u)
        t.deps_object = deps if privatize_arrays else None
        t.omp_schedule = omp_schedule
        t.point_rule = point_order
        t.reuse_rule = reuse
        t.wavefront = wavefront
        t.wide = wide
        root = t.visit(base.get_root(), inside_parallel=False)
        schedule = root.get_schedule()
        if deps.live is not None:  # (the order the check sees is the one printed)
            schedule = in_listed_order(schedule)
        check_legal(schedule, deps, scop)
        return TiledSchedule(schedule, tuple(t.bands), tuple(t.used_sizes), t.given, dict(t.copies),
                             contractions=found)

    def checked(u: int) -> TiledSchedule:
        try:
            return bounded(lambda: transform(u), TRANSFORM_OPERATIONS)
        except isl.Error:
            # Tiling, parallel marks and their tests ran out of their quota: the base schedule as it is (isl's
            # scheduler respected every dependence; the check confirms it), no loop marked.
            kept = in_listed_order(base) if deps.live is not None else base
            check_legal(kept, deps, scop)
            return TiledSchedule(kept, (), (), fallback="tiling and parallelization exceeded their isl operation "
                                                        "limit: the schedule is left untiled and sequential",
                                 contractions=found)

    ts = checked(unroll)
    if unroll and any(b.unroll_jam for b in ts.bands):
        ts = dataclasses.replace(ts, without_unroll=lambda: checked(0))
    return ts


def access_dims(scop: Scop, statements: tuple[str, ...]) -> dict[str, int]:
    """For the analytical seed: per array, how many loop dimensions its subscripts in these statements span."""
    out: dict[str, int] = {}
    for st in scop.statements:
        if st.name not in statements:
            continue
        for acc in st.accesses:
            n = acc.relation.dim(isl.dim_type.in_)
            d = sum(1 for k in range(n) if acc.relation.involves_dims(isl.dim_type.in_, k, 1))
            out[acc.array] = max(out.get(acc.array, 0), d)
    return out
