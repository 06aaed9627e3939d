"""Tile-sized storage for expanded scalars: a scratch array (poly/expand.py) whose every element lives within
one iteration of the tile loops around its statements is printed as a small array, private to each thread,
indexed relative to that iteration, instead of an array of the whole iteration space on the heap.

Expansion replaces `sum` by `sum_x[c][y][x]` so that the (c, y, x, tap) band can be tiled; tiled, the init,
the taps and the final use of each element run in one iteration of the tile loops (c0, c1, c2). The whole
array (an image: box_blur's column pass, 12.6 MB) was then written, read and written again, and read, from
memory, where one tile's 32 x 32 x 32 elements stay in the cache: polytune's output ran at 0.66x of gcc's build
of the original at 1 thread (benchmarks/realc/box_blur.c), the original keeping `sum` in a register.

For each scratch array (`tile_buffers`):
- its statements must share the loops of the prefix: the band members above all of them (a sequence node
  above the bands that separates them ends the prefix), with no loop of the prefix marked `omp simd` or
  `GCC ivdep` (the cells of one iteration are used again by the next: a vectorized loop would interleave
  them), and none of them printed as packed blocks (emit/blis.py);
- the depth: the most loops of that prefix such that isl shows each element is accessed in one iteration of
  them only (element -> prefix values single-valued, over every access of the array);
- per dimension, the extent: the most indices one iteration touches (`reuse.largest_extents`: a constant,
  else no buffer), and the offset: the least index it touches, a function of the prefix loops (isl's lexmin);
  an element is printed at index - offset, which stays within the extent;
- at most TILE_BUFFER_ELEMENTS elements (256 KB of doubles), and at most REGION_BUFFER_ELEMENTS for all the
  region's buffers together (each thread's stack holds them: 1 MB of doubles, against the 2-8 MB a thread
  usually has); the arrays past that keep their heap storage.

Legality: two elements share a cell only when they are accessed in different iterations of the prefix,
and an element's accesses all fall in one iteration; iterations run one after the other on a thread, each
thread with its own copy (`private` on the parallel loops of the prefix, emit/c.py; a parallel loop inside it
shares the buffer: its threads touch different elements of one iteration, in different cells). The
expansion's copy back of the scalar's final value needs the element after the region: such an array keeps
its heap storage.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import islpy as isl

from .islutil import bounded, maps_of, sets_of
from .marks import ContractionMark, IvdepMark, SimdMark, mark_of
from .reuse import largest_extents
from .scop import Scop

TILE_BUFFER_ELEMENTS = 1 << 15
REGION_BUFFER_ELEMENTS = 1 << 17
TILE_BUFFER_OPERATIONS = 2_000_000  # isl quota of one scratch array's analysis (past it: heap storage, as before)


@dataclass(frozen=True, eq=False)
class TileBuffer:
    """Scratch array *name* stored per iteration of the schedule's first *depth* loops: *extents* per
    dimension, and *offsets* (isl.PwAff of those loops' values, an anonymous *depth*-dimensional space):
    element e of the array is stored at e - offset (its lower bound in ScratchArray not subtracted)."""

    name: str
    depth: int
    extents: tuple[int, ...]
    offsets: tuple  # isl.PwAff per dimension
    statements: frozenset[str]
    prefix: isl.UnionMap  # the statements' instances -> the values of the first *depth* loops


def _elements(b: TileBuffer) -> int:
    return math.prod(b.extents)


def schedule_paths(schedule: isl.Schedule) -> dict[str, list[list]]:
    """Per statement, for each leaf it reaches, the nodes on the way there from the root: ("band", node),
    ("branch", id of the sequence or set, child index) and ("mark", mark object)."""
    out: dict[str, list[list]] = {}
    counter = [0]

    def walk(node, path: list) -> None:
        t = node.get_type()
        here = path
        if t == isl.schedule_node_type.band:
            here = path + [("band", node)]
        elif t == isl.schedule_node_type.mark:
            here = path + [("mark", mark_of(node))]
        elif t in (isl.schedule_node_type.sequence, isl.schedule_node_type.set):
            counter[0] += 1
            me = counter[0]
            for i in range(node.n_children()):
                walk(node.child(i), path + [("branch", me, i)])
            return
        elif t == isl.schedule_node_type.leaf:
            for s in sets_of(node.get_domain()):
                if not s.is_empty():
                    out.setdefault(s.get_tuple_name(), []).append(path)
            return
        for i in range(node.n_children()):
            walk(node.child(i), here)

    walk(schedule.get_root(), [])
    return out


def _same(a, b) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "band":
        return a[1].is_equal(b[1])
    if a[0] == "branch":
        return a[1:] == b[1:]
    return a[1] is b[1]


def common_path(paths: list[list]) -> list:
    """The longest common prefix of *paths*."""
    first = paths[0]
    n = len(first)
    for p in paths[1:]:
        k = 0
        while k < min(n, len(p)) and _same(first[k], p[k]):
            k += 1
        n = k
    return first[:n]


def _prefix_schedule(bands: list) -> isl.UnionMap | None:
    """The statement instances -> the values of the members of *bands* (outermost first)."""
    out = None
    for node in bands:
        part = node.band_get_partial_schedule_union_map().intersect_domain(node.get_domain())
        out = part if out is None else out.flat_range_product(part)
    return out


def _as_map(umap: isl.UnionMap) -> isl.Map | None:
    """The maps of *umap* (all from the prefix space to the array) as one map."""
    out = None
    for m in maps_of(umap):
        m = m.reset_tuple_id(isl.dim_type.in_)
        out = m if out is None else out.union(m)
    return out


def tile_buffers(scop: Scop, schedule: isl.Schedule) -> tuple[TileBuffer, ...]:
    """The scratch arrays of *scop* that can be stored per iteration of the loops around them (module
    docstring)."""
    if not scop.scratch:
        return ()
    paths = schedule_paths(schedule)
    out = []
    for a in scop.scratch:
        if a.copied_back(scop.context):
            continue  # the final value is copied back after the region
        stmts = [st for st in scop.statements if any(x.array == a.name for x in st.accesses)]
        if not stmts or any(st.name not in paths for st in stmts):
            continue
        try:
            found = bounded(lambda name=a.name, stmts=stmts: _buffer(scop, name, stmts, paths), TILE_BUFFER_OPERATIONS)
        except isl.Error:
            found = None
        if found is not None:
            if sum(_elements(b) for b in out) + _elements(found) <= REGION_BUFFER_ELEMENTS:
                out.append(found)
    return tuple(out)


def _buffer(scop: Scop, name: str, stmts: list, paths: dict) -> TileBuffer | None:
    leaves = [p for st in stmts for p in paths[st.name]]
    if any(x[0] == "mark" and isinstance(x[1], ContractionMark) for p in leaves for x in p):
        return None
    common = common_path(leaves)
    bands = [x[1] for x in common if x[0] == "band"]
    depth = sum(b.band_n_member() for b in bands)
    # loops the statements' paths mark for the vectorizer: the buffer's cells must not be reused across them
    for p in leaves:
        for x in p:
            if x[0] == "mark" and isinstance(x[1], (SimdMark, IvdepMark)):
                depth = min(depth, x[1].depth)
    if depth == 0:
        return None
    prefix = _prefix_schedule(bands)
    ctx = scop.context
    accesses = None  # instance -> element, every access of the array
    for st in stmts:
        for x in st.accesses:
            if x.array == name:
                rel = isl.UnionMap.from_map(x.relation.intersect_domain(st.domain))
                accesses = rel if accesses is None else accesses.union(rel)
    accesses = accesses.intersect_params(ctx.align_params(accesses.get_space()))
    total = maps_of(prefix)[0].dim(isl.dim_type.out)
    for d in range(depth, 0, -1):
        outer = isl.UnionMap.empty(prefix.get_space())  # instance -> the first d loops' values
        for m in maps_of(prefix):
            outer = outer.union(isl.UnionMap.from_map(m.project_out(isl.dim_type.out, d, total - d)
                                                      .reset_tuple_id(isl.dim_type.out)))
        if not accesses.reverse().apply_range(outer).is_single_valued():
            continue
        within = _as_map(outer.reverse().apply_range(accesses))  # prefix values -> elements
        if within is None:
            return None
        extents = largest_extents(within)
        if any(e is None for e in extents) or math.prod(extents) > TILE_BUFFER_ELEMENTS:
            return None
        n = within.dim(isl.dim_type.out)
        offsets = []
        for k in range(n):
            one = within.project_out(isl.dim_type.out, k + 1, n - k - 1).project_out(isl.dim_type.out, 0, k)
            offset, extents[k] = _offset(one, extents[k])
            offsets.append(offset)
        if math.prod(extents) > TILE_BUFFER_ELEMENTS:
            return None
        return TileBuffer(name, d, tuple(extents), tuple(offsets), frozenset(st.name for st in stmts),
                          outer.intersect_domain(accesses.domain()))
    return None


def _offset(one: isl.Map, extent: int) -> tuple[isl.PwAff, int]:
    """The offset of one dimension (*one*: prefix values -> the indices they touch; *extent*: the most of
    them one prefix touches) and the extent it needs: the least index, a function of the prefix (box_blur's
    max(r, 32 i1)), or where one of its pieces alone is below every index touched (32 i1), that piece, whose
    affine form gcc keeps out of the inner loops (the piecewise form ran at 0.85x of it), where it needs at
    most twice the extent."""
    one = one.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)
    least = one.lexmin_pw_multi_aff().get_pw_aff(0).coalesce()
    best = None
    for _, aff in least.get_pieces():
        shifted = one.sum(isl.Map.from_aff(aff.neg()).reset_tuple_id(isl.dim_type.in_)
                          .reset_tuple_id(isl.dim_type.out).align_params(one.get_space())).range()
        lo, hi = shifted.dim_min_val(0), shifted.dim_max_val(0)
        if lo.is_int() and hi.is_int() and lo.to_python() >= 0 and hi.to_python() + 1 <= 2 * extent:
            if best is None or hi.to_python() + 1 < best[1]:
                best = (isl.PwAff.from_aff(aff), hi.to_python() + 1)
    return best if best is not None else (least, extent)


def offset_exprs(buffer: TileBuffer, build: isl.AstBuild) -> tuple[isl.AstExpr, ...]:
    """The offsets of *buffer* as AST expressions of the loops around a statement's instances (*build*:
    isl's AST build at that statement; its schedule has the loops that are not fixed by others, so the
    prefix is read through it). isl.Error where the prefix is not a function of those loops."""
    to_prefix = maps_of(build.get_schedule().reverse().apply_range(buffer.prefix))
    if len(to_prefix) != 1 or not to_prefix[0].is_single_valued():
        raise isl.Error("the prefix is not a function of the AST's loops")
    pma = isl.PwMultiAff.from_map(to_prefix[0].reset_tuple_id(isl.dim_type.out))
    out = []
    for off in buffer.offsets:
        pa = off.reset_tuple_id(isl.dim_type.in_)
        pa, p = pa.align_params(pma.get_space()), pma.align_params(pa.get_space())
        out.append(build.expr_from_pw_aff(pa.pullback_pw_multi_aff(p)))
    return tuple(out)
