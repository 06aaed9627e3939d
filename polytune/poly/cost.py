"""A cost model that ranks schedule alternatives without measuring them.

Only the hot statements count: those with the most loops around them (the most instances, N^depth, for
sizes that are unknown at compile time, as PolyBench's are). For each of them, from the final schedule:
- serial: no OpenMP loop runs it, or every run of its loop does too little work to be run in parallel
  (fewer statement instances than poly/parallel.py's PARALLEL_WORK, where the sizes are constants: the
  parallel work per synchronization);
- bad accesses: along its innermost loop, accesses that move by more than one element (a row or column
  stride: gramschmidt's `A[i][j]` walked along i; every access where the loop steps by more than one, as
  diamond tiles' inner loop does), plus UNVECTORIZABLE if that loop carries a dependence of the
  statement on itself (a reduction or recurrence gcc will not vectorize without reassociating) unless
  the statement streams an array (touches some element once: memory-bound, see `_streams`);
- region depth: the loops around its OpenMP loop (each starts the parallel region once per iteration).
An innermost loop of a constant count below UNROLLED (a filter's taps) is unrolled whole by gcc, and so is each
short constant loop outside it: the loop outside them is innermost, and pays for a self-dependence it carries.
A statement under an `omp simd` loop whose inner loops are all windows (`_window`: a filter's taps,
`sum += in[y + d][x]`) is vectorized along that loop: its accesses count along it, and the taps' reduction and walk
cost nothing (box_blur's column pass, x vectorized around its d taps, ran 1.2-1.3x faster than the tiled
taps with the sum expanded, which the model had ranked equal).
Alternatives compare by (hot statements run serially, bad accesses, region depth), in that order; ties
keep the earlier alternative (Pluto's default first).
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from .deps import Dependences
from .islutil import CTX, few_along, maps_of, sets_of
from .marks import ParallelMark, SimdMark, mark_of
from .parallel import iteration_work, parallel_work
from .point_order import address_changes, changes_within
from .schedule import TiledSchedule
from .scop import Scop

# An innermost loop that carries a dependence of a statement on itself (a floating-point reduction) costs as
# much as this many strided accesses: gcc runs it scalar. 3 orders the measured cases (2 threads, Xeon,
# -march=x86-64-v4): vector order won on syrk (1.6x), syr2k (1.1x), cholesky (2.3x), lost on gemm_bilinear
# (0.81x: 6 strided accesses in place of one reduction) and self_attention (0.95x).
UNVECTORIZABLE = 3
# An innermost loop of fewer iterations than this (a constant, whatever the parameters) along which some access
# moves (a filter's taps) is unrolled whole by gcc -O3 (its complete peeling stops at 16): the loop outside it is
# the one gcc vectorizes, and the short loop's reduction costs nothing (unseen helper_blur's 7 taps summed into
# `dst[at(y, x)]`: 0.022 s in the written order, against 0.24 s with the taps' loop moved outside the image, which
# the model had ranked first)
UNROLLED = 16


@dataclass(frozen=True, order=True)
class Cost:
    serial: int  # hot statements no OpenMP loop runs
    bad_accesses: int  # strided accesses along the innermost loop, and unvectorizable innermost loops
    region_depth: int  # the most loops around the OpenMP loop of a hot statement

    def to_record(self) -> dict:
        return {"serial": self.serial, "bad_accesses": self.bad_accesses, "region_depth": self.region_depth}


def schedule_cost(scop: Scop, deps: Dependences, ts: TiledSchedule, reductions: bool = True,
                  only: frozenset[str] | None = None) -> Cost:
    """*reductions* False: bad accesses count only the strided ones (poly/expand.py's profile: an expanded scalar
    streams, so counting its reduction as free would favour expanding it for nothing). *only*: the hot
    statements counted (None: all)."""
    smap = _band_schedule(ts.schedule.get_root()).intersect_params(scop.context)
    hot_depth = max(st.domain.dim(isl.dim_type.set) for st in scop.statements)
    marks = _parallel_marks(ts.schedule.get_root(), scop.context)
    simd = _simd_marks(ts.schedule.get_root())
    d = deps.all.intersect_params(scop.context)
    serial = bad = region = 0
    for st in scop.statements:
        if st.domain.dim(isl.dim_type.set) != hot_depth or (only is not None and st.name not in only):
            continue
        sd = isl.UnionSet(st.domain).intersect_params(scop.context)
        full = smap.intersect_domain(sd)
        if full.is_empty():
            continue
        width = maps_of(full)[0].dim(isl.dim_type.out)
        pts = sets_of(full.range())[0]
        varying = [k for k in range(width) if _varies(pts, k)]
        par = [depth for depth, dom, small in marks if not small and not dom.intersect(sd).is_empty()]
        if not par:
            serial += 1
        else:
            region = max(region, sum(1 for k in varying if k < min(par)))
        if not varying:
            continue
        vector = _vector_loop(simd, sd, st, full, varying, width)
        inner = vector if vector is not None else varying[-1 - _unrolled(pts, full, sd, st, varying, width)]
        changes = address_changes(full, sd, st, inner, width)
        if all(x is None for x in changes):
            bad += len(changes)  # the loop steps by more than one (diamond tiles' lattice): no access is regular
        bad += sum(1 for x in changes if x is not None and not changes_within(x[0], x[1], 1))
        if reductions and vector is None and not _streams(st, scop.context):
            bad += UNVECTORIZABLE * _carries_self(d, full, st.name, inner, width)
    return Cost(serial, bad, region)


def _unrolled(pts: isl.Set, full: isl.UnionMap, sd: isl.UnionSet, st, varying: list[int], width: int) -> int:
    """How many innermost loops gcc unrolls whole: a short constant loop along which some access moves (a
    filter's taps), then each short constant loop outside it (a time loop of T = 5 sunk inside the image's
    loops, helper_blur under Pluto's schedule); one loop always stays. The loop outside them is the one gcc
    vectorizes, and it still pays for a dependence of the statement on itself that it carries (that sunk time
    loop, whose accesses stay put: nothing to vectorize along it)."""
    if len(varying) < 2 or not few_along(pts, varying[-1], UNROLLED) \
            or not _walks(address_changes(full, sd, st, varying[-1], width)):
        return 0
    n = 1
    while n + 1 < len(varying) and few_along(pts, varying[-1 - n], UNROLLED):
        n += 1
    return n


def _walks(changes: list) -> bool:
    """Whether some access moves along the loop (a filter's taps), not every one staying put (a short loop that
    repeats the statement: T = 3 time steps computing the same elements)."""
    return any(x is not None and not changes_within(x[0], x[1], 0) for x in changes)


def _streams(st, context: isl.Set) -> bool:
    """Whether the statement reads or writes some array element once over its whole domain (an injective
    access: gesummv's A[i][j]): it does O(1) operations per element streamed from memory, which scalar
    code keeps up with, so an unvectorized reduction costs it nothing (gesummv: the j loop, a reduction,
    innermost ran at 1.26x the speed of the vectorizable i loop striding over rows)."""
    dom = st.domain.intersect_params(context.align_params(st.domain.get_space()))
    return any(acc.relation.dim(isl.dim_type.out) > 0 and
               acc.relation.intersect_domain(dom.align_params(acc.relation.get_space())).is_injective()
               for acc in st.accesses)


def _band_schedule(node) -> isl.UnionMap:
    """Each statement instance -> the values of the band members above it (the loops and the depths that
    the marks name; sequence positions left out)."""
    if node.get_type() == isl.schedule_node_type.leaf:
        return node.get_prefix_schedule_union_map().intersect_domain(node.get_domain())
    out = None
    for i in range(node.n_children()):
        part = _band_schedule(node.child(i))
        out = part if out is None else out.union(part)
    return out if out is not None else isl.UnionMap.empty(node.get_domain().get_space())


def _parallel_marks(node, context: isl.Set) -> list[tuple[int, isl.UnionSet, bool]]:
    """(schedule depth, statement instances below, whether every run of its loop is too small to run in
    parallel) of every OpenMP mark of the tree. A run of fewer than parallel_work() statement instances
    (known where the sizes are constants) runs serially: the printer's branch to a serial copy, or no pragma."""
    out = []
    mark = mark_of(node)
    if isinstance(mark, ParallelMark):
        work = iteration_work(node.child(0), -1, context) \
            if node.child(0).get_type() == isl.schedule_node_type.band else None
        out.append((mark.depth, node.get_domain(), work is not None and work < parallel_work()))
    for i in range(node.n_children()):
        out += _parallel_marks(node.child(i), context)
    return out


def _simd_marks(node) -> list[tuple[int, isl.UnionSet]]:
    """(schedule depth, statement instances below) of every `omp simd` mark of the tree."""
    mark = mark_of(node)
    out = [(mark.depth, node.get_domain())] if isinstance(mark, SimdMark) else []
    for i in range(node.n_children()):
        out += _simd_marks(node.child(i))
    return out


def _vector_loop(simd: list, sd: isl.UnionSet, st, full: isl.UnionMap, varying: list[int], width: int) -> int | None:
    """The schedule dimension of the `omp simd` loop that vectorizes the statement around its inner loops,
    where every inner loop is a window (`_window`); None otherwise (the innermost loop is the vector loop)."""
    moves: dict[int, list] = {}  # each loop's address changes, computed once

    def along(k: int) -> list:
        if k not in moves:
            moves[k] = address_changes(full, sd, st, k, width)
        return moves[k]

    for depth, dom in simd:
        if depth not in varying or depth == varying[-1] or dom.intersect(sd).is_empty():
            continue
        outer = [k for k in varying if k <= depth]
        if all(_window(along(k), [along(o) for o in outer]) for k in varying if k > depth):
            return depth
    return None


def _window(along: list, outer: list[list]) -> bool:
    """Whether a loop is a window of the loops *outer* (those at and outside the vector loop): each access
    that moves along it either slides, moving as it does along one of them (`in[y + d][x]` along d and y),
    or moves along none of them (a filter's `w[d]`), and some access slides. A window is as short as the
    filter it walks (taps: 2r + 1), so its walk and its reduction stay in registers and L1; a contraction's k
    (`a[i][k]`, `b[k][j]`) is none."""
    slides = False
    for a, change in enumerate(along):
        if change is None or changes_within(change[0], change[1], 0):
            continue
        same = [o[a] for o in outer if o[a] is not None and _same_change(o[a], change)]
        if same:
            slides = True
        elif any(o[a] is not None and not changes_within(o[a][0], o[a][1], 0) for o in outer):
            return False
    return slides


def _same_change(a: tuple, b: tuple) -> bool:
    """Whether two address changes (address_changes' deltas, subscripts) are the same vectors, whatever the
    parameters (the two steps stay in the domain under different conditions)."""
    if a[1] != b[1] or len(sets_of(a[0])) != 1 or len(sets_of(b[0])) != 1:
        return False
    x, y = (sets_of(c[0])[0] for c in (a, b))
    x, y = (s.project_out(isl.dim_type.param, 0, s.dim(isl.dim_type.param)) for s in (x, y))
    return x.is_equal(y)


def _varies(pts: isl.Set, k: int) -> bool:
    """Whether schedule dimension k takes more than one value for fixed outer dimensions (a real loop)."""
    n = pts.dim(isl.dim_type.set)
    upto = pts.project_out(isl.dim_type.set, k + 1, n - k - 1)
    rel = isl.Map.from_range(upto).move_dims(isl.dim_type.in_, 0, isl.dim_type.out, 0, k)
    return not rel.is_single_valued()


def _carries_self(deps: isl.UnionMap, full: isl.UnionMap, name: str, k: int, width: int) -> int:
    """1 if the loop at schedule dimension *k* carries a dependence of statement *name* on itself."""
    own = isl.UnionMap.empty(deps.get_space())
    for m in maps_of(deps):
        if m.get_tuple_name(isl.dim_type.in_) == name and m.get_tuple_name(isl.dim_type.out) == name:
            own = own.union(isl.UnionMap(m))
    if own.is_empty():
        return 0
    pairs = own.apply_domain(full).apply_range(full)
    a = [f"a{i}" for i in range(width)]
    b = [f"b{i}" for i in range(width)]
    cond = " and ".join([f"{a[i]} = {b[i]}" for i in range(k)] + [f"{a[k]} < {b[k]}"])
    carried = isl.UnionMap(isl.Map(f"{{ [{', '.join(a)}] -> [{', '.join(b)}] : {cond} }}", context=CTX))
    return 0 if pairs.intersect(carried.align_params(pairs.get_space())).is_empty() else 1


def rank(costs: list[Cost]) -> int:
    """The index of the best alternative (the first of equals)."""
    return min(range(len(costs)), key=lambda i: (costs[i], i))


def choose_scheduler(scop: Scop, deps: Dependences, bases: dict) -> tuple[tuple[str, str], dict]:
    """The (scheduler, point order) whose tiled schedule the model ranks first (schedulers: the keys of
    *bases*, name -> base schedule; point orders: stride, vector), and every candidate's cost. Costed at
    tile 32 without unroll-and-jam (its copies are not loops); a candidate that fails the legality check
    is left out. Ties keep the earlier candidate: pluto with the stride order first. Bands are tiled only
    where a reuse would miss the cache (reuse.py), as `optimize --schedule model` emits them."""
    from ..errors import PolytuneError
    from .schedule import make_schedule
    if not deps.complete:  # the dependences fell back to the original order: nothing to rank
        return (next(iter(bases)), "stride"), {}
    names, costs = [], []
    for name, base in bases.items():
        for order in ("stride", "vector"):
            try:
                ts = make_schedule(scop, deps, base=base, unroll=0, point_order=order, reuse=True)
            except PolytuneError:
                continue
            names.append((name, order))
            costs.append(schedule_cost(scop, deps, ts))
            if costs[-1] == Cost(0, 0, 0):  # nothing ranks before it (ties keep the earlier): stop here
                return names[rank(costs)], {f"{n}/{o}": c.to_record() for (n, o), c in zip(names, costs)}
    if not names:
        return (next(iter(bases)), "stride"), {}
    return names[rank(costs)], {f"{n}/{o}": c.to_record() for (n, o), c in zip(names, costs)}
