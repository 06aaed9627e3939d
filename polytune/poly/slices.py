"""Thread slices: a scratch array (poly/expand.py) indexed first by the region's outermost loop, each of whose
slices lives within one iteration of that loop, is stored as one slice per thread instead of one per iteration.

doitgen's `sum[p]`, rewritten in every (r, q), is expanded into `sum_x[r][q][p]` so that
`sum_x[r][q][p] += A[r][q][s] * C4[s][p]` is a product with r as its batch loop. Every element of slice r is
cleared, summed into and read back within iteration r of the outermost loop, so the whole array (LARGE: 150 x
140 x 160 doubles, 27 MB) is written once to fresh memory, page by page, where one 179 KB slice per thread stays
in L2: polytune's output ran at 0.58x of the same product written as one matrix product (Zen 3, one thread).

For each scratch array on the heap (not in a tile buffer, poly/tilestore.py), `thread_slices` takes it when:
- the paths of its statements share a band, the first band on them (its first member is the region's
  outermost loop, printed with the counter of depth 0), with no `omp simd` or `GCC ivdep` mark on that loop
  and not printed as packed blocks (emit/blis.py prints those loops itself);
- every access of the array, read or write, is to an element whose first index is the value of that loop
  (isl: instance -> (loop value, first index) within the equality), so iteration v touches slice v only and
  no value crosses from one slice to another;
- where the expansion copies the final value back after the region, the elements that hold it have one first
  index, a function of the parameters (*last*): that iteration stores its slice in a slot of its own, which
  no other iteration uses, and the copy reads it there.

The printer (emit/c.py) allocates `threads + 1` slices (one without OpenMP), points each iteration of the
loop at its thread's slice (`omp_get_thread_num()` where the loop itself is the parallel loop, slice 0 where
it runs on one thread: a parallel loop inside it shares that slice, its threads touching different elements),
and prints the first index as 0. An access printed outside such a loop makes it print the region again without
slices (`UnfoldedSlice`).
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from .islutil import bounded, maps_of
from .marks import ContractionMark, IvdepMark, SimdMark
from .scop import Scop
from .tilestore import TileBuffer, common_path, schedule_paths

SLICE_OPERATIONS = 1_000_000  # isl quota of one scratch array's test (past it: the whole array, as before)


@dataclass(frozen=True, eq=False)
class ThreadSlice:
    """Scratch array *name* stored as one slice of its first dimension per thread; *last*: the value of the
    outermost loop whose slice holds what the region copies back after its loops (None: nothing copied)."""

    name: str
    last: isl.PwAff | None


class UnfoldedSlice(Exception):
    """An access of a sliced array was printed outside the loop that picks its slice."""


def thread_slices(scop: Scop, schedule: isl.Schedule, buffers: tuple[TileBuffer, ...] = ()) -> tuple[ThreadSlice, ...]:
    """The scratch arrays of *scop* that can be stored per thread (module docstring)."""
    if not scop.scratch:
        return ()
    paths = schedule_paths(schedule)
    taken = {b.name for b in buffers}
    out = []
    for a in scop.scratch:
        if a.name in taken:
            continue
        stmts = [st for st in scop.statements if any(x.array == a.name for x in st.accesses)]
        if not stmts or any(st.name not in paths for st in stmts):
            continue
        try:
            found = bounded(lambda a=a, stmts=stmts: _slice(scop, a, stmts, paths), SLICE_OPERATIONS)
        except isl.Error:
            found = None
        if found is not None:
            out.append(found)
    return tuple(out)


def _slice(scop: Scop, a, stmts: list, paths: dict) -> ThreadSlice | None:
    leaves = [p for st in stmts for p in paths[st.name]]
    common = common_path(leaves)
    band = next((k for k, x in enumerate(common) if x[0] == "band"), None)
    if band is None:
        return None
    node = common[band][1]
    for p in leaves:
        if any(x[0] == "mark" and isinstance(x[1], (SimdMark, IvdepMark)) and x[1].depth == 0 for x in p):
            return None
    if any(x[0] == "mark" and isinstance(x[1], ContractionMark) for x in common[:band + 1]):
        return None  # (the band printed as packed blocks: no loop of depth 0 to pick the slice in)
    first = node.band_get_partial_schedule_union_map().intersect_domain(node.get_domain())
    ctx = scop.context
    for st in stmts:
        to_loop = [m for m in maps_of(first) if m.get_tuple_name(isl.dim_type.in_) == st.name]
        if len(to_loop) != 1:
            return None
        loop = to_loop[0].project_out(isl.dim_type.out, 1, to_loop[0].dim(isl.dim_type.out) - 1) \
            .reset_tuple_id(isl.dim_type.out)
        for x in st.accesses:
            if x.array != a.name:
                continue
            rel = x.relation.intersect_domain(st.domain)
            rel = rel.intersect_params(ctx.align_params(rel.get_space()))
            n = rel.dim(isl.dim_type.out)
            index = rel.project_out(isl.dim_type.out, 1, n - 1).reset_tuple_id(isl.dim_type.out)
            at = loop.align_params(index.get_space())
            index = index.align_params(at.get_space())
            if not index.is_subset(at.intersect_domain(index.domain())):
                return None  # (some access's first index is not the loop's value)
    last = None
    if a.copied_back(ctx):
        held = a.last.intersect_params(ctx.align_params(a.last.get_space()))
        lo, hi = held.dim_min(0), held.dim_max(0)
        if not lo.is_equal(hi):
            return None
        last = hi
    return ThreadSlice(a.name, last)
