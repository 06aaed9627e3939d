"""Whether tiling a band pays: tiles shorten reuse distances, so they are worth their cost (loop overhead,
guards, many access streams at once instead of a few, unit-stride runs cut into pieces) only where a reuse
would otherwise miss the cache.

A band with loops below it that are not a few taps of constant extent is tiled, as before this rule
("below": its footprints do not see how those loops walk), unless its first member is parallel, the innermost
loops below walk their arrays along rows, and no reuse the band carries, along its innermost member too, waits
past a row (a layer norm's (batch, token) band over the loops that normalize each row: tiled 32 x 32, 24 rows
left one thread nothing to share). Otherwise the band is judged as it would run
untiled: its members permuted so that the one with the best access strides is innermost (tiling.py
permutes a band it leaves untiled). It is tiled where
- the point order would still move a member (no permutation of the whole band gives it);
- some access walks an array down its columns along a member inside the first, moving by more than a cache
  line while the members inside that one leave it in place (a transpose, `B[i][j] = A[j][i]`): the lines
  that walk loads serve the next rows only from a tile (benchmarks/unseen/transpose_scale.c, correlation's
  symmetric copy). A stride of 2 stays in the line; y in (c, y, x), moving every access by a row while x
  moves it along the row, is a row walk; a filter's few taps down a column (a short member of constant
  extent) are no walk (`walks_columns`);
- its first member is neither parallel nor privatizable: tiles give it an outer parallel loop (a wavefront's,
  or the tile loop of a parallel member inside);
- some reuse needs it: for each access to an array (scalars live in registers), the innermost member that
  carries a reuse of it (`reuse_carriers`: two instances touching one element, differing first in that
  member) must see the reuse within a "row": one iteration of that member touches, for every access, at
  most one dimension of unknown extent, and at most REUSE_CACHE_BYTES where the sizes are constants.
  Otherwise the reuse comes from the cache as it is.
So a band that carries no reuse (a streaming map: a 2x downsample, im2col) or reuses only within a row
(gesummv's matrix-vector products, a separable filter's passes, a layer norm's weight vector read again for
every row) streams its arrays once, parallel, unit stride innermost. Tiled, such bands ran at 0.79x of Polly
(gesummv) and 0.37-0.59x of gcc (benchmarks/realc: gaussian_clamp, downsample, im2col, layernorm; where a
tiled band also made expanding a scalar into a scratch image look like a gain, poly/expand.py).
"""
from __future__ import annotations

import islpy as isl

from .bands import band_nodes, short_extent
from .islutil import CTX, bounded, maps_of, sets_of
from .point_order import changes_within

REUSE_CACHE_BYTES = 512 * 1024  # half of a 1-2 MiB per-core L2 (Xeon, EPYC): room for the streams besides
ELEMENT_BYTES = 8  # the footprint counts elements as doubles
LINE_ELEMENTS = 8  # elements of one 64-byte cache line, as doubles: a move within it is no column walk
CARRIER_OPERATIONS = 2_000_000  # isl quota of finding a band's reuse carriers (past it: tiled, as before)


def largest_extents(rel: isl.Map) -> list[int | None]:
    """For a map from outer values to points, per output dimension the largest number of values it takes
    for fixed inputs (max over the inputs of max - min + 1); None where that is not a known constant.
    (From the differences of two points with the same input: one maximum per dimension, where the
    parametric maximum and minimum as functions of the inputs took seconds on diamond tiles.)"""
    n = rel.dim(isl.dim_type.out)
    if n == 0:
        return []
    rel = rel.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)
    diffs = rel.reverse().apply_range(rel).deltas()
    out: list[int | None] = []
    for k in range(n):
        extent = diffs.dim_max_val(k)
        out.append(extent.to_python() + 1 if extent.is_int() else None)
    return out


def _band_schedule(node, members: int) -> isl.UnionMap:
    """The band's statement instances -> (prefix schedule, the band's first *members* members)."""
    dom = node.get_domain()
    sched = node.get_prefix_schedule_union_map().intersect_domain(dom)
    mupa = node.band_get_partial_schedule()
    for k in range(members):
        sched = sched.flat_range_product(isl.UnionMap.from_union_pw_aff(mupa.get_at(k)).intersect_domain(dom))
    return sched


def footprint(scop, node, members: int) -> tuple[int, int]:
    """What one iteration of the band's member *members* - 1 touches (members = 0: one run of the whole
    band), from the bounding box of the elements each access touches with the outer schedule dimensions
    fixed: (bytes of the boxes, counting ELEMENT_BYTES per element and only their constant extents; the
    most dimensions of one box that are not of constant extent)."""
    sched = _band_schedule(node, members)
    total = unbounded = 0
    for mp in maps_of(sched):
        st = scop.statement(mp.get_tuple_name(isl.dim_type.in_))
        mp = mp.intersect_params(scop.context.align_params(mp.get_space()))
        for acc in st.accesses:
            rel = mp.reverse().apply_range(acc.relation.align_params(mp.get_space()))
            box = largest_extents(rel)
            size = ELEMENT_BYTES
            for e in box:
                size *= e if e is not None else 1
            total += size
            unbounded = max(unbounded, sum(e is None for e in box))
    return total, unbounded


def reuse_carriers(scop, node, last: bool = False) -> frozenset[int] | None:
    """Per access to an array (scalars live in registers), the innermost member of the band, its innermost
    excepted, that carries a temporal reuse of what it touches: a pair of an instance of that access and an
    instance of any access to the same array that touch the same element (reads and writes alike) with the
    same outer schedule and the same values of the members before it, and different values of it. The
    innermost carrier is the one whose iteration the reuse waits for: a layer norm's weight[i], read again for
    every row t of every batch b, is reused after one iteration of t, not of b; trmm's B[i][j], added to for
    every k (outermost), waits for a whole k, though the B[k][j] it reads is reused by the next i. None: isl
    could not tell within CARRIER_OPERATIONS. last: the band's innermost member counts too (with loops below it,
    one iteration of it is more than one instance: a layer norm's (batch, token) band over its rows)."""
    n = node.band_n_member()
    if n < 2 and not last:
        return frozenset()
    candidates = n if last else n - 1

    def find() -> frozenset[int]:
        sched = _band_schedule(node, n)
        outer = next((mp.dim(isl.dim_type.out) for mp in maps_of(sched)), n) - n
        by_array: dict[str, dict[str, isl.UnionMap]] = {}  # array -> its distinct accesses, schedule -> element
        for s in sets_of(node.get_domain()):
            st = scop.statement(s.get_tuple_name())
            for acc in st.accesses:
                if acc.relation.dim(isl.dim_type.out) > 0:
                    touch = sched.reverse().apply_range(isl.UnionMap.from_map(acc.relation))
                    by_array.setdefault(acc.array, {})[str(acc.relation)] = touch
        one, minus_one = isl.Val.int_from_si(CTX, 1), isl.Val.int_from_si(CTX, -1)
        found: set[int] = set()
        for accesses in by_array.values():
            every = None
            for touch in accesses.values():
                every = touch if every is None else every.union(touch)
            for touch in accesses.values():
                deepest = -1
                for d in sets_of(touch.apply_range(every.reverse()).deltas()):
                    d = d.intersect_params(scop.context.align_params(d.get_space()))
                    for k in range(outer):
                        d = d.fix_dim_si(k, 0)
                    for m in range(candidates):
                        pos = outer + m
                        if m > deepest and (not d.lower_bound_val(isl.dim_type.set, pos, one).is_empty()
                                            or not d.upper_bound_val(isl.dim_type.set, pos, minus_one).is_empty()):
                            deepest = m
                        d = d.fix_dim_si(pos, 0)
                if deepest >= 0:
                    found.add(deepest)
        return frozenset(found)

    try:
        return bounded(find, CARRIER_OPERATIONS)
    except isl.Error:
        return None


class Reuse:
    """The tiler's decision to tile a band (a mixin of tiling.py's Transformer, whose state and tests it
    uses: scop, parallel, point_order, is_parallel, privatizing)."""

    def tiling_pays(self, node) -> bool:
        """(Independent of whether loops are marked parallel: the tuner counts the tiled bands of the
        schedule without marks, and its tile sizes must fall on the same bands.)"""
        return self.tiling_reason(node) is not None

    def tiling_reason(self, node) -> str | None:
        """Why the band is tiled (module docstring): "empty", "below", "order", "column", "parallelism" or
        "reuse";
        None: tiling does not pay."""
        n = node.band_n_member()
        if any(s.is_empty() for s in sets_of(node.get_domain())):
            return "empty"  # (a statement that never runs: the stride scores need an instance)
        if any(not all(short_extent(self.extents(b), m) for m in range(b.band_n_member()))
               for b in band_nodes(node.child(0))):
            # loops below that are not a filter's few taps: the footprints above do not see how the loops
            # below walk (householder's column loop is sunk below the row sweeps only in a tiled band), except
            # where the band is an outer parallel loop around rows that no reuse of the band's waits past: a
            # layer norm's (batch, token) rows, each normalized by the loops below
            if self.outer_parallel(node) and self.rows_below(node) and not self.reuse_needs_tiles(node, last=True):
                return None
            return "below"
        classes = self.stride_classes(node)
        extents = self.extents(node)
        if self.point_order(node, extents, classes=classes)[-1] != n - 1:
            return "order"  # tiles are what let the best-stride loop run innermost
        if self.walks_columns(node, extents):
            return "column"  # a transpose
        if not self.outer_parallel(node):
            # tiles give it an outer parallel loop (a wavefront, or the tile loop of a parallel member inside:
            # mvt's transposed product, whose inner parallel loop would start a parallel region per row)
            return "parallelism"
        return "reuse" if self.reuse_needs_tiles(node) else None

    def rows_below(self, node) -> bool:
        """Whether the innermost loop of every nest below the band walks each access along a row (within a
        cache line per step, or not at all): householder's column sums below its (column, reflector) band walk
        A down a column, which only tiles let the printer sink below the row sweeps (poly/sink.py)."""
        for below in band_nodes(node.child(0)):
            if band_nodes(below.child(0)):
                continue  # (not innermost)
            last = below.band_n_member() - 1
            for moved in self.steps(below):
                if any(x is not None and not changes_within(x[0], x[1], LINE_ELEMENTS) for x in moved(last)):
                    return False
        return True

    def reuse_needs_tiles(self, node, last: bool = False) -> bool:
        """Whether some reuse the band carries waits for more than a row (module docstring): tiles would shorten
        it. last: the band's innermost member carries reuses too (`reuse_carriers`: loops below it)."""
        carriers = reuse_carriers(self.scop, node, last)
        if carriers is None:
            return True
        for m in sorted(carriers):
            size, unbounded = footprint(self.scop, node, m + 1)
            if unbounded > 1 or size > REUSE_CACHE_BYTES:
                return True
        return False

    def walks_columns(self, node, extents: tuple[int | None, ...]) -> bool:
        """Whether some access walks an array down its columns along a member other than the first: it moves
        by more than a cache line (LINE_ELEMENTS elements, or to another row) as that member advances, and no
        member inside it moves it at all, so the lines it loads serve only the next iteration of a member
        outside. A member of a few iterations (a filter's taps) is no walk: the next iteration of the member
        outside it reads those lines again."""
        n = node.band_n_member()
        for moved in self.steps(node):
            per_member = [moved(m) for m in range(n)]
            for a in range(len(per_member[0])):
                changes = [per_member[m][a] for m in range(n)]
                for m in range(1, n):
                    x = changes[m]
                    if x is None or short_extent(extents, m) or changes_within(x[0], x[1], LINE_ELEMENTS):
                        continue
                    if all(y is None or changes_within(y[0], y[1], 0) for y in changes[m + 1:]):
                        return True
        return False
