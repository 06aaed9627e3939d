"""Whether tiling a band pays: tiles shorten reuse distances, so they are worth their cost (loop overhead,
guards, many access streams at once instead of a few) only where a reuse would otherwise miss the cache.

A permutable band is left untiled when its innermost member is already the one with the best access
strides (the point order would not move it), its first member is parallel, and one iteration of that
first member touches a "row": for every access, at most one dimension of the elements it touches there
is not of constant extent, and where the sizes are constants (fixed by the context), at most
REUSE_CACHE_BYTES in all. Every reuse the loops carry (a vector read again in the next row) then comes
from the cache as it is, and the nest streams its big arrays once, row-parallel, unit stride innermost:
gesummv's two matrix-vector products, which tiled walked each 32 x 32 tile 32 rows at a time (0.79x of
Polly). A band is tiled where loops below it are not part of it, and where some access walks an array down
its columns along a member inside the first (a transpose, `B[i][j] = A[j][i]`): the cache lines that walk
loads serve the next rows only from a tile (benchmarks/unseen/transpose_scale.c, correlation's symmetric
copy).
"""
from __future__ import annotations

import islpy as isl

from .bands import band_nodes
from .islutil import maps_of, sets_of

REUSE_CACHE_BYTES = 512 * 1024  # half of a 1-2 MiB per-core L2 (Xeon, EPYC): room for the streams besides
ELEMENT_BYTES = 8  # the footprint counts elements as doubles


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


def footprint(scop, node, members: int) -> tuple[int, int]:
    """What one iteration of the band's member *members* - 1 touches (members = 0: one run of the whole
    band), from the bounding box of the elements each access touches with the outer schedule dimensions
    fixed: (bytes of the boxes, counting ELEMENT_BYTES per element and only their constant extents; the
    most dimensions of one box that are not of constant extent)."""
    dom = node.get_domain()
    sched = node.get_prefix_schedule_union_map().intersect_domain(dom)
    mupa = node.band_get_partial_schedule()
    for k in range(members):
        sched = sched.flat_range_product(isl.UnionMap.from_union_pw_aff(mupa.get_at(k)).intersect_domain(dom))
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


class Reuse:
    """The tiler's decision to tile a band (a mixin of tiling.py's Transformer, whose state and tests it
    uses: scop, parallel, point_order, is_parallel, privatizing)."""

    def tiling_pays(self, node) -> bool:
        """(Independent of whether loops are marked parallel: the tuner counts the tiled bands of the
        schedule without marks, and its tile sizes must fall on the same bands.)"""
        n = node.band_n_member()
        if band_nodes(node.child(0)) or any(s.is_empty() for s in sets_of(node.get_domain())):
            return True  # (a statement that never runs: the stride scores need an instance)
        classes = self.stride_classes(node)
        if self.point_order(node, classes=classes)[-1] != n - 1:
            return True  # tiles are what let the best-stride loop run innermost
        if any(c < 0 for m in range(1, n) for c in classes[m]):
            # the best order still walks some array down its columns inside the row loop (a transpose): each
            # cache line it loads serves the next rows only if it is still in L1 then, which a tile guarantees
            return True
        if not self.is_parallel(node, 0) and self.privatizing(node, 0) is None:
            return True
        size, unbounded = footprint(self.scop, node, 1)
        return unbounded > 1 or size > REUSE_CACHE_BYTES
