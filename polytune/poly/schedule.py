"""Choose a legal, tiled, parallel schedule the way Pluto does, on isl's schedule trees.

1. isl's Pluto-like scheduler finds permutable bands (with skewing for stencils, fusion where legal),
   maximizing band depth.
2. Every permutable band of two or more members is tiled (tile loops outside, point loops inside).
3. The point loops are reordered so that a loop with stride-1 (or no) access change runs innermost.
4. The outermost parallel loop (exact dependence test) is marked for OpenMP; a tiled band without a
   parallel loop gets a tile wavefront (Pluto's pipelined parallelism) that makes its second loop parallel.
5. The final schedule is checked against every dependence before anything is emitted.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from ..errors import PolytuneError
from .deps import Dependences, ScalarInfo
from .islutil import CTX, bounded, maps_of, sets_of
from .privatize import PrivateArray, array_flows, privatizable
from .scop import Scop

# Marks name the schedule depth of the loop they are for ("omp_parallel@3"): when that loop is degenerate
# (a single iteration) the AST has no for node for it and the mark must not fall on an inner loop.
PARALLEL_MARK = "omp_parallel"
IVDEP_MARK = "ivdep"
SIMD_MARK = "omp_simd"
DEFAULT_TILE = 32
DEFAULT_UNROLL = 4  # unroll-and-jam factor of a point loop into the innermost one (register tiling)
SCHEDULER_OPERATIONS = 20_000_000  # isl operation quota of the scheduler; past it: the original order


@dataclass(frozen=True)
class BandInfo:
    """What was done to one band of the schedule, for reports and for the tuner."""

    index: int  # depth-first order of bands in the tree
    members: int
    depth: int  # number of enclosing band members
    statements: tuple[str, ...]
    permutable: bool
    tiled: bool
    tile_sizes: tuple[int, ...]
    schedule: str  # the band's partial schedule in isl notation (before tiling)
    parallel_loop: str | None  # "tile k" / "point k" / "loop k" for the OpenMP loop in this band, if any
    wavefront: bool
    point_order: tuple[int, ...]  # band member order of the point loops (innermost last)
    extents: tuple[int | None, ...] = ()  # trip count of each member's loop where it is a known constant
    concurrent_start: bool = False  # the time member was replaced by a mirrored one (diamond tiles)
    unroll_jam: tuple[int, int] | None = None  # (point member, factor) unrolled and jammed into the innermost


@dataclass(frozen=True, eq=False)
class TiledSchedule:
    schedule: isl.Schedule  # the final schedule tree, with marks for OpenMP/ivdep
    bands: tuple[BandInfo, ...]
    tile_sizes: tuple[int, ...]  # flattened, in band order: what the tuner tunes
    private_arrays: dict = field(default_factory=dict)  # loop depth -> its PrivateArray copies

    @property
    def tunable_bands(self) -> tuple[BandInfo, ...]:
        return tuple(b for b in self.bands if b.tiled)


class IllegalSchedule(PolytuneError):
    """A schedule violates a dependence (an internal error: never emit such code)."""


def schedule_options() -> None:
    CTX.set_schedule_maximize_band_depth(1)
    CTX.set_schedule_outer_coincidence(0)
    CTX.set_tile_scale_tile_loops(0)
    CTX.set_tile_shift_point_loops(0)


def compute_base_schedule(scop: Scop, deps: Dependences, outer_coincidence: bool = False,
                          whole_component: bool = False, serialize_sccs: bool = False) -> isl.Schedule:
    """isl's scheduler (Pluto-like: tiling hyperplanes, proximity, coincidence) over the dependences;
    *outer_coincidence* asks for parallel outer members (the GPU mapping's choice, as in PPCG);
    *whole_component* schedules each connected component at once instead of its strongly connected
    parts one by one, which fuses statements that the incremental scheduler distributes;
    *serialize_sccs* puts the strongly connected components one after the other (no fusion)."""
    schedule_options()
    CTX.set_schedule_outer_coincidence(1 if outer_coincidence else 0)
    CTX.set_schedule_whole_component(1 if whole_component else 0)
    CTX.set_schedule_serialize_sccs(1 if serialize_sccs else 0)
    d = _possible(deps.all, scop.context)
    sc = isl.ScheduleConstraints.on_domain(scop.domain).set_validity(d).set_proximity(d).set_coincidence(d)
    try:
        schedule = bounded(sc.compute_schedule, SCHEDULER_OPERATIONS)
        if _skews_short_loop(schedule):
            # isl skewed a loop by a short constant-extent loop (depthwise: `y + ky`, the filter taps): the
            # accumulation is spread over the outer loop, and the point loops get a loop of 1-3 iterations
            # and guards in the innermost body. Ask for parallel outer members instead (PPCG's choice,
            # which keeps such loops inside), or else schedule the strongly connected components one after
            # the other; keep the first schedule free of that skew.
            for retry in ((1, 0), (0, 1)):
                CTX.set_schedule_outer_coincidence(retry[0] or int(outer_coincidence))
                CTX.set_schedule_serialize_sccs(retry[1] or int(serialize_sccs))
                try:
                    other = bounded(sc.compute_schedule, SCHEDULER_OPERATIONS)
                finally:
                    CTX.set_schedule_serialize_sccs(int(serialize_sccs))
                if not _skews_short_loop(other):
                    return other
        return schedule
    except isl.Error:
        # isl's scheduler can fail ("unable to carry dependences"): keep the original order, untiled.
        mupa = isl.MultiUnionPwAff.from_union_map(scop.schedule)
        return isl.Schedule.from_domain(scop.domain).insert_partial_schedule(mupa)
    finally:
        CTX.set_schedule_outer_coincidence(0)
        CTX.set_schedule_whole_component(0)
        CTX.set_schedule_serialize_sccs(0)


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


SHORT_LOOP = 8  # constant trip counts up to this are "short" (filter taps, unrolled widths)


def _skews_short_loop(schedule: isl.Schedule) -> bool:
    """Whether some band member combines, for some statement, a loop that is not short with a loop of short
    constant extent nested inside it (`y + ky` with 0 <= ky < 3). Time skewing (`2t + i`) does not count,
    even with few time steps: the time loop is the outer one."""
    return any(_band_skews_short_loop(node) for node in _bands(schedule.get_root()))


def _bands(node) -> list:
    """Every band node below *node*, depth first (plain recursion: no isl callback can raise)."""
    out = [node] if node.get_type() == isl.schedule_node_type.band else []
    for i in range(node.n_children()):
        out += _bands(node.child(i))
    return out


def _band_skews_short_loop(node) -> bool:
    mupa = node.band_get_partial_schedule()
    for st in sets_of(node.get_domain()):
        short = [_is_short(st, i) for i in range(st.dim(isl.dim_type.set))]
        if not any(short):
            continue
        for k in range(node.band_n_member()):
            for _piece, aff in _member_of(mupa.get_at(k), st).get_pieces():
                used = [i for i in range(len(short)) if not aff.get_coefficient_val(isl.dim_type.in_, i).is_zero()]
                if any(short[j] and not short[i] for i in used for j in used if j > i):
                    return True
    return False


def _short_extent(extents: tuple[int | None, ...], m: int) -> bool:
    """Whether band member *m* has a known constant trip count below SHORT_LOOP."""
    return m < len(extents) and extents[m] is not None and extents[m] < SHORT_LOOP


def _is_short(st: isl.Set, i: int) -> bool:
    lo, hi = st.dim_min_val(i), st.dim_max_val(i)
    return lo.is_int() and hi.is_int() and hi.sub(lo).to_python() < SHORT_LOOP


def make_schedule(scop: Scop, deps: Dependences, tile_sizes: tuple[int, ...] = (), tile: bool = True,
                  parallel: bool = True, base: isl.Schedule | None = None,
                  unroll: int = DEFAULT_UNROLL, omp_schedule: str = "auto",
                  privatize_arrays: bool = True, point_order: str = "stride") -> TiledSchedule:
    """The tiled, parallel schedule of *base*. *omp_schedule*: the OpenMP schedule clause of the parallel
    loops: static (none printed), dynamic, or auto (static, except on a loop over a triangle, see
    `_Transformer.schedule_clause`). *privatize_arrays*: private copies of scratch arrays (privatize.py).
    *point_order*: stride (the best access strides innermost) or vector (the same among the point loops
    along which no statement depends on itself, where there are such)."""
    base = base if base is not None else compute_base_schedule(scop, deps)
    t = _Transformer(scop, deps.all.intersect_params(scop.context), list(tile_sizes), tile, parallel,
                     deps.scalars, unroll)
    t.deps_object = deps if privatize_arrays else None
    t.omp_schedule = omp_schedule
    t.point_rule = point_order
    root = t.visit(base.get_root(), inside_parallel=False, outer_members=0)
    schedule = root.get_schedule()
    check_legal(schedule, deps, scop)
    return TiledSchedule(schedule, tuple(t.bands), tuple(t.used_sizes), dict(t.copies))


class _Transformer:
    def __init__(self, scop: Scop, deps: isl.UnionMap, sizes: list[int], tile: bool, parallel: bool,
                 scalars: ScalarInfo | None = None, unroll: int = 0):
        self.scop, self.deps, self.sizes = scop, deps, sizes
        self.tile, self.parallel = tile, parallel
        self.unroll = unroll  # unroll-and-jam factor of the point loops (0: none)
        self.scalars = scalars  # privatizable scalars (OpenMP loops only; None: keep every scalar shared)
        self.private: tuple[str, ...] = ()  # what the last loop first_parallel found needs privatized
        self.private_arrays: tuple[PrivateArray, ...] = ()  # arrays that loop needs a private copy of
        self.deps_object: Dependences | None = None  # for the per-array dependences (computed on first use)
        self._array_flows = None
        self.copies: dict[int, tuple[PrivateArray, ...]] = {}  # by the depth of their loop
        self.omp_schedule = "static"  # static | dynamic | auto (make_schedule's argument)
        self.point_rule = "stride"  # stride | vector (make_schedule's argument)
        self.bands: list[BandInfo] = []
        self.used_sizes: list[int] = []

    def next_sizes(self, n: int) -> list[int]:
        out = []
        for _ in range(n):
            out.append(self.sizes.pop(0) if self.sizes else DEFAULT_TILE)
        self.used_sizes += out
        return out

    def visit(self, node: isl.ScheduleNode, inside_parallel: bool, outer_members: int) -> isl.ScheduleNode:
        """Transform the subtree at *node*; return a node at the same tree depth as given."""
        depth = node.get_tree_depth()
        if node.get_type() == isl.schedule_node_type.band:
            members = node.band_n_member()
            node, found_parallel = self.transform_band(node, inside_parallel, outer_members)
            inside_parallel = inside_parallel or found_parallel
            outer_members += members
        for i in range(node.n_children()):
            node = self.visit(node.child(i), inside_parallel, outer_members).parent()
        while node.get_tree_depth() > depth:
            node = node.parent()
        return node

    def transform_band(self, node, inside_parallel: bool, outer_members: int):
        """Tile, reorder and parallelize one band. Returns the lowest node made from it (whose children
        are the band's original children) and whether an OpenMP loop was placed."""
        n = node.band_n_member()
        permutable = bool(node.band_get_permutable())
        stmts = tuple(sorted(s.get_tuple_name() for s in sets_of(node.get_domain())))
        sched_text = str(node.band_get_partial_schedule())
        index = len(self.bands)
        if not (self.tile and permutable and n >= 2):
            par = self.first_parallel(node, range(n)) if self.parallel and not inside_parallel else None
            if par is not None:
                node = _mark_member(node, par, self.mark_name(outer_members + par,
                                                              self.schedule_clause(node, par, False)))
            if par != n - 1:
                node = self.mark_vector(node, outer_members + n - 1)
            self.bands.append(BandInfo(index, n, outer_members, stmts, permutable, False, (), sched_text,
                                       None if par is None else f"loop {par}", False, tuple(range(n))))
            return node, par is not None
        sizes = self.next_sizes(n)
        mv = isl.MultiVal.zero(node.band_get_space())
        for k, size in enumerate(sizes):
            mv = mv.set_val(k, isl.Val.int_from_si(CTX, max(1, int(size))))
        tiled = node.band_tile(mv).band_set_permutable(1)  # tile band; its child: the point band
        wavefront = False
        diamond = None
        par = None
        if self.parallel and not inside_parallel:
            par = self.first_parallel(tiled, range(n))
            if par is None:
                # no tile loop is parallel, a wavefront will be needed: prefer tiles that can start
                # concurrently (diamonds)
                diamond = self.concurrent_start(node)
                if diamond is not None:
                    node = diamond
                    sched_text = str(node.band_get_partial_schedule())
                    tiled = node.band_tile(mv).band_set_permutable(1)
                    par = self.first_parallel(tiled, range(n))
            if par is None:
                tiled = _wavefront(tiled)
                wavefront = True
                par = self.first_parallel(tiled, range(n))
        extents = self.extents(node)
        node = tiled
        if par is not None and _single_tile(extents[par], sizes[par]):
            # That tile loop has one iteration and prints as no loop: use a later parallel tile loop, or
            # else a parallel point loop, so the OpenMP pragma lands on a real loop.
            later = [m for m in range(par + 1, n) if not _single_tile(extents[m], sizes[m])]
            par = self.first_parallel(node, later) if self.parallel else None
            point_par = par is None
        else:
            point_par = False
        order = self.point_order(node.child(0), extents)
        if order != list(range(n)):
            node = _permute(node.child(0), order).parent()
        if _has_degenerate_member(node.child(0)) or len(sets_of(node.get_domain())) > 1:
            # Statements that do not vary along some point loop (gemm's C *= beta at k = 0) would otherwise
            # sit behind a guard in the innermost loop: let the AST builder peel them off.
            node = node.child(0).band_set_ast_build_options(
                isl.UnionSet("{ separate[x] }", context=CTX)).parent()
        if par is not None:
            # (a tile wavefront's tiles are independent of the loops' shape: no clause there)
            clause = "" if wavefront or diamond is not None else self.schedule_clause(node, par, True)
            node = _mark_member(node, par, self.mark_name(outer_members + par, clause))
        # (not where the innermost point loop is a short one: the copies belong around the strided loop)
        point, jam = (node.child(0), None) if _short_extent(extents, order[-1]) else \
            self.unroll_jam(node.child(0), [sizes[k] for k in order])
        desc = None if par is None else f"tile {par}"
        if point_par:
            ppar = self.first_parallel(point, range(n))
            if ppar is not None:
                point = _mark_member(point, ppar, self.mark_name(outer_members + n + ppar,
                                                                 self.schedule_clause(point, ppar, False)))
                desc = f"point {ppar}"
        if not (point_par and desc is not None and desc == f"point {n - 1}"):
            point = self.mark_vector(point, outer_members + 2 * n - 1, jammed=jam is not None)
        self.bands.append(BandInfo(index, n, outer_members, stmts, True, True, tuple(sizes), sched_text,
                                   desc, wavefront, tuple(order), extents, diamond is not None, jam))
        return point, desc is not None

    def mark_vector(self, node, depth: int, jammed: bool = False):
        """Mark the band's last member for `#pragma GCC ivdep` when it is an innermost loop that carries no
        dependence against the order of the statements in its body: gcc may then vectorize it without
        the run-time overlap checks it adds for arrays it cannot tell apart (array parameters). A
        dependence carried from an earlier statement of the body to a later one (jacobi's B, written at
        j - 1 and read at j by the A statement) stays in order under vectorization; one from a statement
        to itself or to an earlier one does not. The mark lists the carried (source, sink) pairs; the C
        printer emits the pragma on a copy of the loop only where each source is printed before its
        sink. Returns the lowest band node."""
        last = node.band_n_member() - 1
        if len(_bands(node.child(0))) > jammed:  # an inner loop (the unrolled band of copies is none)
            return self.mark_outer_simd(node, last, depth)
        pairs = self.carried_pairs(node, last)
        if pairs is None:
            return node
        # the statement order inside the loop is the AST builder's: the printer checks the pairs
        order = ";".join(f"{a}<{b}" for a, b in sorted(pairs))
        return _mark_member(node, last, f"{IVDEP_MARK}@{depth}" + (f"@{order}" if order else ""))

    def mark_outer_simd(self, node, m: int, depth: int):
        """Mark band member *m*, a loop with inner loops, for `#pragma omp simd` (its scalars privatized as
        on a parallel loop: `private` or `lastprivate`, see the C printer) when it is parallel only once
        scalars are privatized (a scalar accumulator: `s = 0; for k: s += a[i][k] * b[k][j]; c[i][j] =
        s` in a j loop) and every access is invariant or unit-stride along it. gcc
        vectorizes such an outer loop on its own (a vector of accumulators), except inside an OpenMP
        parallel loop, where it does not (3.7x slower at 1 thread on a 1500^2 matmul); the pragma asks for
        it there too. Returns the lowest band node."""
        if self.scalars is None or self.is_parallel(node, m):
            return node
        private = self.privatizing(node, m)
        if not private:
            return node
        for moved in self.steps(node):
            if any(x is not None and not _changes_within(x[0], x[1], 1) for x in moved(m)):
                return node
        return _mark_member(node, m, f"{SIMD_MARK}@{depth}@{','.join(private)}")

    def carried_pairs(self, node, m: int) -> set[tuple[str, str]] | None:
        """The (source, sink) statement pairs of the dependences band member *m* carries; None if one of
        them goes from a statement to itself."""
        dom = node.get_domain()
        deps = self.deps.intersect_domain(dom).intersect_range(dom)
        if deps.is_empty():
            return set()
        before = _iterations(node, dom, m)
        upto = _iterations(node, dom, m + 1)
        carried = deps.intersect(before.apply_range(before.reverse())).subtract(
            upto.apply_range(upto.reverse()))
        pairs = set()
        for d in maps_of(carried):
            src, dst = d.get_tuple_name(isl.dim_type.in_), d.get_tuple_name(isl.dim_type.out)
            if src == dst:
                return None
            pairs.add((src, dst))
        return pairs

    def concurrent_start(self, node):
        """A time-tiled stencil band (t, s*t + i, ...) with its time member replaced by the mirror of the
        first space member, (s*t + i, s*t - i + c, ...): Pluto's diamond tiling (concurrent start).

        With the time member, the tile wavefront starts at one corner and the tiles of a wavefront are
        few (pipelined parallelism); with the two mirrored members, all tiles of one time level are
        independent. The constant c of each statement is the smallest that keeps every dependence
        distance along the new member non-negative (difference constraints between statements); the band
        stays permutable. None when the band does not have that shape or no constants work."""
        n = node.band_n_member()
        if n < 2:
            return None
        mupa = node.band_get_partial_schedule()
        dom = node.get_domain()
        mirror: dict[str, isl.Aff] = {}
        spaces: dict[str, isl.Set] = {}
        skewed = False  # some statement's first space member is time-skewed space (s*t + i)
        for st in sets_of(dom):
            h0, h1 = (_single_aff(mupa.get_at(k), st) for k in (0, 1))
            if h0 is None or h1 is None:
                return None
            nd = st.dim(isl.dim_type.set)
            c0 = [h0.get_coefficient_val(isl.dim_type.in_, i).to_python() for i in range(nd)]
            if sorted(c0) != [0] * (nd - 1) + [1] or any(
                    not h0.get_coefficient_val(isl.dim_type.param, k).is_zero()
                    for k in range(h0.dim(isl.dim_type.param))):
                return None  # the first member is not one loop (the time loop)
            t = c0.index(1)
            slope = h1.get_coefficient_val(isl.dim_type.in_, t)
            if not slope.is_pos():
                return None  # the first space member is not skewed by time
            skewed = skewed or any(not h1.get_coefficient_val(isl.dim_type.in_, i).is_zero()
                                   for i in range(nd) if i != t)
            mirror[st.get_tuple_name()] = h0.scale_val(slope.mul(isl.Val.int_from_si(CTX, 2))).sub(h1)
            spaces[st.get_tuple_name()] = st
        if not skewed:
            return None
        # dependences live in this band: between instances with the same outer schedule
        prefix = _iterations(node, dom, 0)
        deps = self.deps.intersect_domain(dom).intersect_range(dom).intersect(
            prefix.apply_range(prefix.reverse()))
        bound: dict[tuple[str, str], int] = {}
        for d in maps_of(deps):
            a, b = d.get_tuple_name(isl.dim_type.in_), d.get_tuple_name(isl.dim_type.out)
            dist = d.apply_domain(isl.Map.from_aff(mirror[a])).apply_range(isl.Map.from_aff(mirror[b])).deltas()
            low = dist.dim_min_val(0) if not dist.is_empty() else None
            if low is None:
                continue
            if not low.is_int():
                return None
            bound[(a, b)] = max(bound.get((a, b), -(1 << 30)), -low.to_python())
        # c_b - c_a >= bound[a, b]: the least non-negative solution by longest paths (Bellman-Ford)
        shift = dict.fromkeys(mirror, 0)
        for _ in range(len(shift) + 1):
            changed = False
            for (a, b), need in bound.items():
                if shift[b] - shift[a] < need:
                    shift[b] = shift[a] + need
                    changed = True
            if not changed:
                break
        else:
            return None  # a positive cycle: no constants make the mirror legal
        if any(v > 64 for v in shift.values()):
            return None
        member = None
        for name, aff in mirror.items():
            shifted = aff.add_constant_val(isl.Val.int_from_si(CTX, shift[name]))
            piece = isl.UnionPwAff(isl.PwAff.from_aff(shifted).intersect_domain(spaces[name]))
            member = piece if member is None else member.union_add(piece)
        new = mupa.set_at(0, mupa.get_at(1)).set_at(1, member.align_params(mupa.get_space()))
        return node.delete().insert_partial_schedule(new).band_set_permutable(1)

    def extents(self, node) -> tuple[int | None, ...]:
        dom = node.get_domain().intersect_params(self.scop.context)
        mupa = node.band_get_partial_schedule()
        out: list[int | None] = []
        for k in range(node.band_n_member()):
            upa = mupa.get_at(k).intersect_domain(dom)
            lo, hi = upa.min_val(), upa.max_val()
            out.append(hi.sub(lo).to_python() + 1 if lo.is_int() and hi.is_int() else None)
        return tuple(out)

    # -------------------------------------------------------------------------------------------------
    def first_parallel(self, node, members) -> int | None:
        self.private_arrays = ()
        for m in members:
            if self.is_parallel(node, m):
                self.private = ()
                return m
            private = self.privatizing(node, m)
            if private is not None:
                self.private = private
                return m
            arrays = self.privatizing_arrays(node, m)
            if arrays:
                self.private, self.private_arrays = (), arrays
                return m
        return None

    def privatizing_arrays(self, node, m: int) -> tuple[PrivateArray, ...]:
        """The scratch arrays whose private copies make band member *m* parallel (`poly/privatize.py`);
        () where none do. Scalars are not privatized along with them."""
        if self.deps_object is None:
            return ()
        if self._array_flows is None:
            self._array_flows = array_flows(self.scop, self.deps_object) or False
        if not self._array_flows:
            return ()
        dom = node.get_domain()
        copies = privatizable(self._array_flows, dom, _iterations(node, dom, m + 1), self.scop.context)
        if not copies:
            return ()
        deps = self._array_flows.without(frozenset(c.name for c in copies), self.deps_object)
        if not self.is_parallel(node, m, deps):
            return ()
        # only the copies whose dependences the loop carries are needed
        needed = tuple(c for c in copies if not self.is_parallel(
            node, m, self._array_flows.without(frozenset(x.name for x in copies if x != c), self.deps_object)))
        return needed or copies

    def schedule_clause(self, node, m: int, tiles: bool) -> str:
        """The OpenMP schedule of the parallel loop of band member *m*: '' (static blocks) unless the
        loops inside it have bounds that depend on it (a triangle: syrk's `j <= i`, cholesky, lu), where
        equal blocks of iterations are unequal work and one thread finishes long before the other. Then
        `dynamic,1` over tiles (few, large iterations), `static,1` over other loops (many small ones:
        a cyclic deal balances a triangle at no run-time cost)."""
        if self.omp_schedule == "static":
            return ""
        if self.omp_schedule == "dynamic":
            return "dynamic,1"
        if _uncoupled_below(node, m, below=not tiles):
            return ""
        return "dynamic,1" if tiles else "static,1"

    def mark_name(self, depth: int, clause: str = "") -> str:
        """The OpenMP mark of the loop at schedule *depth*, with the scalars it must privatize and the
        arrays it needs private copies of (their copies are kept in TiledSchedule.private_arrays)."""
        arrays = ",".join(a.name for a in self.private_arrays)
        if arrays:
            self.copies[depth] = self.private_arrays
        return f"{PARALLEL_MARK}@{depth}" + (f"@{','.join(self.private)}" if self.private or arrays or clause else "") \
            + (f"@{arrays}" if arrays or clause else "") + (f"@{clause}" if clause else "")

    def privatizing(self, node, m: int) -> tuple[str, ...] | None:
        """The scalars that, made `lastprivate`, let band member *m* run in parallel (None: none do).
        A scalar qualifies when, inside the loop, every value it carries is written and read in one
        iteration (its flow dependences in the subtree stay within an iteration and none comes from
        outside it, nor from before the region), and every iteration writes it (so the last iteration's
        value is the sequential program's final value). Only its anti and output dependences are then
        dropped from the parallelism test."""
        if self.scalars is None or not self.is_parallel(node, m, self.scalars.without_false):
            return None
        dom = node.get_domain()
        prefix = _iterations(node, dom, m + 1)
        same = prefix.apply_range(prefix.reverse())
        iterations = prefix.range()
        out = []
        for s, flow in self.scalars.flow.items():
            writes = self.scalars.writes[s].intersect(dom)
            inside = flow.intersect_params(self.scop.context).intersect_range(dom)
            if writes.is_empty():
                continue  # not written in this loop: only read, nothing to privatize
            if not inside.is_subset(same) or not self.scalars.exposed[s].intersect(dom).is_empty():
                return None
            if not iterations.is_subset(prefix.intersect_domain(writes).range()):
                return None
            out.append(s)
        return tuple(out)

    def is_parallel(self, node, m: int, deps: isl.UnionMap | None = None) -> bool:
        """Exact test: no dependence between instances of this subtree that agree on every outer
        schedule dimension has a non-zero distance along band member *m*."""
        dom = node.get_domain()
        deps = (self.deps if deps is None else deps.intersect_params(self.scop.context))
        deps = deps.intersect_domain(dom).intersect_range(dom)
        if deps.is_empty():
            return True
        prefix = _iterations(node, dom, m)
        same = prefix.apply_range(prefix.reverse())
        deps = deps.intersect(same)
        if deps.is_empty():
            return True
        f = _member_map(node.band_get_partial_schedule(), m, dom)
        dist = deps.apply_domain(f).apply_range(f).deltas()
        zero = isl.UnionSet(isl.Set("{ [0] }", context=CTX)).align_params(dist.get_space())
        return dist.is_subset(zero)

    def point_order(self, point, extents: tuple[int | None, ...] = ()) -> list[int]:
        """Member order for the point loops: the member with the best access strides goes innermost, or
        just outside the short loops of the band. A member of a few iterations (a filter's taps, known
        constant extent below SHORT_LOOP), other than the first member, goes inside the strided one:
        gcc unrolls it completely, and the taps of one output element then add up in a register while
        the strided loop is vectorized (depthwise: the row loop of the 3x3 taps had been outside the
        column loop, so every tap row re-read and re-wrote the output row)."""
        n = point.band_n_member()
        if n < 2:
            return list(range(n))
        scores = [0.0] * n
        for moved in self.steps(point):
            for m in range(n):
                scores[m] += sum(_stride_class(*x) for x in moved(m) if x is not None)
        # Highest score innermost; ties keep the later member innermost (the original order). With the
        # "vector" rule (Pluto's intra-tile choice), only among members along which no statement depends on
        # itself, where there are such: a reduction innermost is not vectorized (gcc keeps FP order).
        pool = list(range(n))
        if self.point_rule == "vector":
            pool = [m for m in range(n) if not self.carries_self(point, m)] or pool
        best = max(pool, key=lambda m: (scores[m], m))
        short = [] if _short_extent(extents, best) else \
            [m for m in range(1, n) if m != best and _short_extent(extents, m)]
        return [k for k in range(n) if k != best and k not in short] + [best] + short

    def carries_self(self, point, m: int) -> bool:
        """Whether point member *m*, run innermost, would carry a dependence of a statement on itself."""
        dom = point.get_domain()
        mupa = point.band_get_partial_schedule()
        pre = point.get_prefix_schedule_union_map().intersect_domain(dom)
        for k in range(point.band_n_member()):
            if k != m:
                pre = pre.flat_range_product(_member_map(mupa, k, dom))
        deps = self.deps.intersect_domain(dom).intersect_range(dom).intersect(pre.apply_range(pre.reverse()))
        f = _member_map(mupa, m, dom)
        carried = deps.subtract(f.apply_range(f.reverse()))
        return any(d.get_tuple_name(isl.dim_type.in_) == d.get_tuple_name(isl.dim_type.out)
                   for d in maps_of(carried))

    def steps(self, point):
        """For each statement of the band, a function of a member m that gives, for each access of the
        statement, its address changes when member m advances by one (the other members fixed) and its
        number of subscripts (None where no such advance stays in the domain)."""
        dom = point.get_domain()
        prefix = point.get_prefix_schedule_union_map().intersect_domain(dom)
        subtree = point.get_subtree_schedule_union_map().intersect_domain(dom)
        for st in self.scop.statements:
            sdom = [x for x in sets_of(dom) if x.get_tuple_name() == st.name]
            if not sdom:
                continue
            sd = isl.UnionSet(sdom[0])
            pre = prefix.intersect_domain(sd)
            # The complete schedule of this statement: outer dims, then this band's members, then inner dims.
            full = pre.flat_range_product(subtree.intersect_domain(sd))
            off = max(m.dim(isl.dim_type.out) for m in maps_of(pre))
            width = max(m.dim(isl.dim_type.out) for m in maps_of(full))
            yield (lambda m, full=full, sd=sd, st=st, off=off, width=width:
                   _moved(full, sd, st, off + m, width))

    def unroll_jam(self, point, sizes: list[int]):
        """Unroll-and-jam (register tiling) of one point loop into the innermost one: point member m
        becomes floor(m / u) in the band, and a band of m alone, below the innermost member and unrolled
        by the AST builder, runs the u copies of the body in each iteration of the innermost loop. The
        member is the one along which most accesses do not move while the innermost loop moves them
        (matmul's C[i][j] along k): the u copies then share those loads and stores. Within a permutable
        band every dependence distance is non-negative along every member, so moving the copies inside
        is legal (and checked with the rest). Only where the bounds of the loops inside it do not depend
        on the member. Returns the (possibly new) point band node and (member, factor) or None."""
        n = point.band_n_member()
        if self.unroll < 2 or n < 2 or _bands(point.child(0)):
            return point, None
        reuse = [0] * (n - 1)
        for moved in self.steps(point):
            changes = [moved(k) for k in range(n)]  # each one isl computation per access
            still = [[x is not None and _is_zero(*x) for x in ch] for ch in changes]
            reached = [[x is not None for x in ch] for ch in changes]
            if not all(any(s[a] or not r[a] for s, r in zip(still, reached)) for a in range(len(still[0]))):
                # an access that moves along every member streams through memory (mvt's A): the tile
                # does not reuse it, the loop is bound by memory traffic, and u streams per thread in
                # place of one made it slower
                return point, None
            for m in range(n - 1):
                reuse[m] += sum(1 for a, s in enumerate(still[m]) if s and not still[n - 1][a])
        m = max(range(n - 1), key=lambda k: (reuse[k], k))
        u = next((f for f in (self.unroll, 2) if f <= sizes[m] and sizes[m] % f == 0), None)
        if reuse[m] == 0 or u is None or not _uncoupled(point, m):
            return point, None
        mupa = point.band_get_partial_schedule()
        whole = mupa.get_at(m)
        outer = mupa.set_at(m, whole.scale_down_val(isl.Val.int_from_si(CTX, u)).floor())
        options = point.band_get_ast_build_options()
        full = _full_blocks(point, m, u)
        node = point.delete()
        node = node.insert_partial_schedule(isl.MultiUnionPwAff.from_union_pw_aff(whole))
        node = node.band_member_set_ast_loop_type(0, isl.ast_loop_type.unroll)
        node = node.insert_partial_schedule(outer).band_set_permutable(1)
        # The blocks where all u copies run are generated on their own (isl's isolate option), so their
        # copies need no guards; a partial block (at a bound that u does not divide, or a symbolic one)
        # gets its copies behind guards, outside the loops of full blocks.
        if not options.is_empty():  # the same options (separate) in the isolated part
            options = options.union(isl.UnionSet("{ [isolate[] -> separate[x]] }", context=CTX))
        return node.band_set_ast_build_options(options.union(full)), (m, u)


def _full_blocks(point, m: int, u: int) -> isl.UnionSet:
    """isl's isolate option for the point band after member *m* became floor(m / u): the (outer
    dimensions, members) points whose block of u values of member m all occur, for some statement."""
    n = point.band_n_member()
    sched = point.get_prefix_schedule_union_map().range_product(
        isl.UnionMap.from_multi_union_pw_aff(point.band_get_partial_schedule()))
    pts = sched.intersect_domain(point.get_domain()).range()
    full = None
    for wrapped in sets_of(pts):
        k = wrapped.unwrap().dim(isl.dim_type.in_)
        outer = ", ".join(f"p{i}" for i in range(k))
        blocks = ", ".join(f"b{i}" for i in range(n))
        here = None
        for r in range(u):
            moved = ", ".join(f"{u} * b{i} + {r}" if i == m else f"b{i}" for i in range(n))
            shift = isl.Map(f"{{ [[{outer}] -> [{blocks}]] -> [[{outer}] -> [{moved}]] }}", context=CTX)
            block = shift.align_params(wrapped.get_space()).intersect_range(wrapped).domain()
            here = block if here is None else here.intersect(block)
        full = here if full is None else full.union(here)
    return isl.UnionSet(full.coalesce().set_tuple_name("isolate"))


def _moved(full: isl.UnionMap, sd: isl.UnionSet, st, pos: int,
           width: int) -> list[tuple[isl.UnionSet, int] | None]:
    """Address changes of the accesses of one statement when schedule dimension *pos* advances by one."""
    eq = " and ".join(f"q{k} = p{k}" + (" + 1" if k == pos else "") for k in range(width))
    step = isl.UnionMap(isl.Map(f"{{ [{', '.join(f'p{k}' for k in range(width))}] -> "
                                f"[{', '.join(f'q{k}' for k in range(width))}] : {eq} }}", context=CTX))
    nxt = full.apply_range(step.align_params(full.get_space())).apply_range(full.reverse())
    nxt = nxt.intersect_domain(sd).intersect_range(sd)
    if nxt.is_empty():
        return [None] * len(st.accesses)
    out = []
    for acc in st.accesses:
        a = isl.UnionMap(acc.relation)
        moved = nxt.apply_domain(a).apply_range(a)
        out.append(None if moved.is_empty() else (moved.deltas(), acc.relation.dim(isl.dim_type.out)))
    return out


def _changes_within(deltas: isl.UnionSet, ndim: int, last: int) -> bool:
    """Whether every address change is zero in all subscripts but the last, and within [-last, last]
    in the last one (last = 0: the access does not move)."""
    if ndim == 0:
        return True
    names = [f"d{k}" for k in range(ndim)]
    rest = " and ".join([f"{x} = 0" for x in names[:-1]] + [f"-{last} <= {names[-1]} <= {last}"])
    box = isl.Set(f"{{ [{', '.join(names)}] : {rest} }}", context=CTX)
    return all((s.reset_tuple_id() if s.has_tuple_id() else s).is_subset(box.align_params(s.get_space()))
               for s in sets_of(deltas))


def _is_zero(deltas: isl.UnionSet, ndim: int) -> bool:
    """Whether every address change is zero (the access does not move)."""
    return _changes_within(deltas, ndim, 0)


def _uncoupled(point, m: int) -> bool:
    """Whether, for every statement, the ranges of the band members after *m* do not depend on member m
    (with the outer dimensions and the members before m fixed): the set of (outer, members) points is
    the intersection of its projection that drops m and its projection that drops the later members."""
    sched = point.get_prefix_schedule_union_map().flat_range_product(
        isl.UnionMap.from_multi_union_pw_aff(point.band_get_partial_schedule()))
    n = point.band_n_member()
    for mp in maps_of(sched.intersect_domain(point.get_domain())):
        pts = mp.range()
        off = pts.dim(isl.dim_type.set) - n
        drop_m = pts.eliminate(isl.dim_type.set, off + m, 1)
        drop_later = pts.eliminate(isl.dim_type.set, off + m + 1, n - 1 - m)
        if not drop_m.intersect(drop_later).is_subset(pts):
            return False
    return True


def _uncoupled_below(node, m: int, below: bool) -> bool:
    """Whether, for every statement, the ranges of the schedule dimensions inside band member *m* (the
    band's later members, and with *below* the loops below the band) do not depend on member m, the outer
    ones fixed: every iteration of m's loop then has the same loops inside (equal work, up to guards).
    Tile loops leave out the point loops below them, whose ranges move with every tile."""
    sched = _iterations(node, node.get_domain(), m + 1)
    n = node.band_n_member()
    mupa = node.band_get_partial_schedule()
    dom = node.get_domain()
    for k in range(m + 1, n):
        sched = sched.flat_range_product(_member_map(mupa, k, dom))
    if below and node.n_children() and node.child(0).get_type() != isl.schedule_node_type.leaf:
        below = node.child(0).get_subtree_schedule_union_map().intersect_domain(dom)
        if not below.is_empty():
            sched = sched.flat_range_product(below)
    width_before = node.get_prefix_schedule_union_map().intersect_domain(dom)
    for mp in maps_of(sched.intersect_domain(dom)):
        pts = mp.range()
        pre = [x for x in maps_of(width_before.intersect_domain(isl.UnionSet(mp.domain())))]
        off = pre[0].dim(isl.dim_type.out) + m if pre else m
        total = pts.dim(isl.dim_type.set)
        if total <= off + 1:
            continue
        drop_m = pts.eliminate(isl.dim_type.set, off, 1)
        drop_later = pts.eliminate(isl.dim_type.set, off + 1, total - off - 1)
        if not drop_m.intersect(drop_later).is_subset(pts):
            return False
    return True


def _stride_class(deltas: isl.UnionSet, ndim: int) -> float:
    if ndim == 0:
        return 1.0
    sets = sets_of(deltas)
    if not sets:
        return 0.0
    # +1: temporal reuse, or stride 1 along the last subscript; -2: jumps across rows
    return 1.0 if _changes_within(isl.UnionSet(sets[0]), ndim, 1) else -2.0


def _single_tile(extent: int | None, size: int) -> bool:
    return extent is not None and extent <= size


def _has_degenerate_member(node) -> bool:
    """Whether some statement of a multi-statement band is constant along some member."""
    stmts = sets_of(node.get_domain())
    if len(stmts) < 2:
        return False
    mupa = node.band_get_partial_schedule()
    for k in range(node.band_n_member()):
        upa = mupa.get_at(k)
        for st in stmts:
            if _member_of(upa, st).is_cst():
                return True
    return False


def _pw_space(st: isl.Set) -> isl.Space:
    return st.get_space().from_domain().add_dims(isl.dim_type.out, 1)


def _member_of(upa: isl.UnionPwAff, st: isl.Set) -> isl.PwAff:
    """One band member's expression for one statement."""
    return upa.intersect_domain(isl.UnionSet(st)).extract_pw_aff(_pw_space(st))


def _single_aff(upa: isl.UnionPwAff, st: isl.Set) -> isl.Aff | None:
    """The affine expression of one band member for one statement, if it has a single piece."""
    pieces = _member_of(upa, st).get_pieces()
    return pieces[0][1] if len(pieces) == 1 else None


def _iterations(node, dom, members: int) -> isl.UnionMap:
    """Each instance of *dom* -> its outer schedule dimensions followed by the band's first *members*
    members: two instances with the same image run in the same iteration of the loop of member
    members - 1."""
    prefix = node.get_prefix_schedule_union_map().intersect_domain(dom)
    mupa = node.band_get_partial_schedule()
    for k in range(members):
        prefix = prefix.flat_range_product(_member_map(mupa, k, dom))
    return prefix


def _member_map(mupa: isl.MultiUnionPwAff, k: int, dom: isl.UnionSet) -> isl.UnionMap:
    return isl.UnionMap.from_union_pw_aff(mupa.get_at(k)).intersect_domain(dom)


def _mark_member(node, m: int, mark: str):
    """Split the band so that member *m* starts a band and put a mark above that piece; returns the piece."""
    if m > 0:
        node = node.band_split(m).child(0)
    return node.insert_mark(isl.Id(mark, context=CTX)).child(0)


def _wavefront(node):
    """Replace the first two members (t0, t1, ...) of a permutable band by (t0 + t1, t1, ...)."""
    mupa = node.band_get_partial_schedule()
    mupa = mupa.set_at(0, mupa.get_at(0).add(mupa.get_at(1)))
    node = node.delete()
    node = node.insert_partial_schedule(mupa)
    return node.band_set_permutable(1)


def _permute(node, order: list[int]):
    mupa = node.band_get_partial_schedule()
    new = mupa
    for pos, src in enumerate(order):
        new = new.set_at(pos, mupa.get_at(src))
    node = node.delete()
    node = node.insert_partial_schedule(new)
    return node.band_set_permutable(1)


def check_legal(schedule: isl.Schedule, deps: Dependences, scop: Scop) -> None:
    """Every dependence S[i] -> T[j] must go forward in the schedule: sched(S[i]) << sched(T[j])."""
    smap = schedule.get_map().intersect_domain(scop.domain)
    width = max((m.dim(isl.dim_type.out) for m in maps_of(smap)), default=0)
    d = deps.all.intersect_params(scop.context)
    if d.is_empty():
        return
    mapped = d.apply_domain(smap).apply_range(smap)
    space = isl.Space.set_alloc(CTX, 0, width)
    order = isl.UnionMap(isl.Map.lex_lt(space)).align_params(mapped.get_space())
    if not mapped.is_subset(order):
        bad = mapped.subtract(order)
        raise IllegalSchedule(f"internal error: the schedule violates dependences {bad}", scop.file,
                              scop.begin_line)


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
