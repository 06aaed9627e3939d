"""Privatization of scratch arrays: an outer loop made parallel by giving each iteration its own copy.

doitgen's `r` loop runs `sum[p] = 0; for s: sum[p] += ...; A[r][q][p] = sum[p]` in every iteration: the
only dependences between iterations are the anti and output dependences through `sum`, whose values never
cross an iteration. Pluto does not privatize arrays, and without it the parallel loop was an inner tile
wavefront (about 21,000 parallel regions at LARGE). An array X written in a loop can be private to that
loop when, proven with isl on the exact dependences:
- every read of X in the loop takes its value from a write of the same iteration (X's flow dependences
  into the loop stay within an iteration, and no read of the loop finds no writer in the region);
- the last iteration writes every element that any iteration of the loop writes, so that after the loop
  X holds the sequential program's values when the last iteration worked on X itself;
- the loop is the outermost one, and the subscripts of X in it start at 0 or above in the first dimension.
Each thread allocates one buffer of X's rows; the loop body points at the real array in the last
iteration and at the buffer in the others (`emit/c.py`). The loop is then parallel if it is without X's
anti and output dependences.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import islpy as isl

from .deps import Dependences, flow_info
from .deps import _false_dependences as false_dependences_of
from .islutil import bounded, maps_of, sets_of
from .scop import Scop

ANALYSIS_OPERATIONS = 2_000_000


@dataclass(frozen=True, eq=False)
class ArrayFlow:
    """One array written in the region: what privatizing it needs."""

    name: str
    ndim: int
    flow: isl.UnionMap  # its flow dependences (last writer -> read)
    exposed: isl.UnionSet  # its read instances with no writer in the region
    writes: isl.UnionMap  # instance -> element written
    must: isl.UnionMap  # instance -> element surely written (not under a data-dependent condition)
    accesses: isl.UnionMap  # instance -> element read or written
    false: isl.UnionMap  # its direct anti and output dependences
    flat: bool = False  # delinearized (its copy would be sized in rows of the model, not of C): not private


@dataclass(frozen=True, eq=False)
class ArrayPrivatization:
    """Per written array, the dependence information privatization needs; the flow dependences of all."""

    arrays: dict  # name -> ArrayFlow
    flow: isl.UnionMap  # all flow dependences
    scalar_false: isl.UnionMap  # anti and output dependences through the scalars
    # privatizable's answers by (domain, iterations, context) as isl prints them: the cost model's schedule
    # alternatives ask the same loops again (deriche: 2.1 s of 10.8 s in private_copy)
    answers: dict = field(default_factory=dict, compare=False, repr=False)

    def without(self, names: frozenset[str], deps: Dependences) -> isl.UnionMap:
        """The dependences with those of the privatized arrays' anti and output dependences left out."""
        kept = [a.false for n, a in self.arrays.items() if n not in names]
        out = self.flow.union(self.scalar_false)
        for f in kept:
            out = out.union(f)
        return out.coalesce()


@dataclass(frozen=True, eq=False)
class PrivateArray:
    """A private copy of array *name* for an outermost parallel loop: *rows* rows of its first subscript
    (one buffer per thread), the array itself used in the iteration whose loop value is *last*
    (both functions of the parameters)."""

    name: str
    rows: isl.PwAff
    last: isl.PwAff


_FLOWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # deps -> (scop, its array_flows)


def array_flows(scop: Scop, deps: Dependences) -> ArrayPrivatization | None:
    """Per-array flow and false dependences of the arrays *scop* writes (None: none, or isl gave up).
    Computed once per (scop, deps): every schedule alternative the cost model ranks asks for them."""
    known = _FLOWS.get(deps)
    if known is not None and known[0] is scop:
        return known[1]
    flows = _array_flows(scop, deps)
    _FLOWS[deps] = (scop, flows)
    return flows


def _array_flows(scop: Scop, deps: Dependences) -> ArrayPrivatization | None:
    names = [a.name for a in scop.arrays if a.ndim > 0 and a.written]
    if not names:
        return None
    sched, may = scop.schedule, scop.may_writes
    out = {}
    try:
        for name in names:
            one = array_space(scop, name)
            r, w = scop.reads.intersect_range(one), scop.writes.intersect_range(one)
            f = bounded(lambda r=r, w=w: flow_info(r, w, may, sched), ANALYSIS_OPERATIONS)
            anti, output = bounded(lambda r=r, w=w: false_dependences_of(w, r, sched, may), ANALYSIS_OPERATIONS)
            array = next(a for a in scop.arrays if a.name == name)
            out[name] = ArrayFlow(name, array.ndim, f.get_may_dependence(), f.get_may_no_source().domain(), w,
                                  w.subtract(may), r.union(w), anti.union(output), array.layout is not None)
        scalars = [a.name for a in scop.arrays if a.ndim == 0 and a.written]
        sfalse = isl.UnionMap.empty(deps.flow.get_space())
        if scalars:
            space = None
            for s in scalars:
                one = array_space(scop, s)
                space = one if space is None else space.union(one)
            anti, output = bounded(lambda: false_dependences_of(scop.writes.intersect_range(space),
                                                                scop.reads.intersect_range(space), sched, may),
                                   ANALYSIS_OPERATIONS)
            sfalse = anti.union(output)
    except isl.Error:
        return None
    return ArrayPrivatization(out, deps.flow, sfalse)


def array_space(scop: Scop, name: str) -> isl.UnionSet:
    """Every element of array *name* (as a universe set of its space)."""
    for m in maps_of(scop.writes.union(scop.reads)):
        if m.get_tuple_name(isl.dim_type.out) == name:
            return isl.UnionSet(isl.Set.universe(m.get_space().range()))
    return isl.UnionSet.empty(scop.writes.get_space().range())


def private_copy(info: ArrayFlow, dom: isl.UnionSet, iters: isl.UnionMap,
                 context: isl.Set) -> PrivateArray | None:
    """Whether array *info* can be private to the loop whose iterations *iters* gives (instance -> outer
    dimensions and the loop's value, for the instances *dom* of the subtree); the copy if so."""
    writes = info.writes.intersect_domain(dom).intersect_params(context)
    if info.flat or writes.is_empty():
        return None
    same = iters.apply_range(iters.reverse())
    inside = info.flow.intersect_params(context).intersect_range(dom)
    if not inside.is_subset(same) or not info.exposed.intersect(dom).intersect_params(context).is_empty():
        return None
    # the loop is the outermost one (its last value is then a function of the parameters, which the
    # printer compares the counter with); its last iteration must write every element any iteration writes
    ps = sets_of(iters.intersect_domain(dom).range())
    if len(ps) != 1 or ps[0].dim(isl.dim_type.set) != 1:
        return None
    pts = ps[0].intersect_params(context.align_params(ps[0].get_space()))
    last_pts = pts.lexmax()
    elems = iters.reverse().apply_range(writes)  # loop value -> elements written there
    surely = iters.reverse().apply_range(info.must.intersect_domain(dom).intersect_params(context))
    if not elems.range().is_subset(surely.intersect_domain(isl.UnionSet(last_pts)).range()):
        return None
    last = pts.dim_max(0)
    # the copy: rows of the first subscript from 0 up to the largest touched
    ts = sets_of(info.accesses.intersect_domain(dom).intersect_params(context).range())
    if len(ts) != 1:
        return None
    names = ", ".join(f"x{k}" for k in range(ts[0].dim(isl.dim_type.set)))
    negative = isl.Set(f"{{ [{names}] : x0 < 0 }}", context=ts[0].get_ctx()).align_params(ts[0].get_space())
    if not ts[0].reset_tuple_id().intersect(negative.align_params(ts[0].get_space())).is_empty():
        return None
    rows = ts[0].reset_tuple_id().dim_max(0).add_constant_val(isl.Val.one(ts[0].get_ctx()))
    return PrivateArray(info.name, rows, last)


def privatizable(ap: ArrayPrivatization, dom: isl.UnionSet, iters: isl.UnionMap,
                 context: isl.Set) -> tuple[PrivateArray, ...]:
    """The arrays written in the subtree that can be private to its loop."""
    key = (str(dom), str(iters), str(context))
    known = ap.answers.get(key)
    if known is not None:
        return known
    out = []
    for info in ap.arrays.values():
        copy = private_copy(info, dom, iters, context)
        if copy is not None:
            out.append(copy)
    ap.answers[key] = tuple(out)
    return tuple(out)
