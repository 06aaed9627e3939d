"""Exact dependences of a Scop, by isl's dataflow analysis.

Flow dependences go from the last writer to each read. Anti and output dependences are the direct ones:
a write depends on the last earlier write of its element and on every read since that write. Every other
memory-based dependence follows from these by transitivity, and the scheduler is much faster without them
(gemver: 0.01 s instead of 230 s).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import islpy as isl

from .islutil import CTX, bounded, maps_of
from .scop import Scop

# isl operation quotas (2 M: about 1-2 s on this machine); past one, the next, simpler analysis is used.
DATAFLOW_OPERATIONS = 3_000_000  # each step of the exact (value-based) analysis
MEMORY_OPERATIONS = 2_000_000  # the memory-based fallback


@dataclass(frozen=True, eq=False)
class Dependences:
    """Statement-instance relations ``S[i] -> T[j]``: T[j] must run after S[i]. When even the memory-based
    analysis runs out of its quota, the relations are None (*complete* is False): the region then keeps
    its original order, untransformed, and any use of the missing relations fails loudly."""

    flow: isl.UnionMap | None  # read-after-write, value-based (last writer)
    anti: isl.UnionMap | None  # write-after-read, direct (each read to the next write of its element)
    output: isl.UnionMap | None  # write-after-write, direct (previous write)
    scalars: ScalarInfo | None = field(default=None)  # for privatizing scalars the region writes
    fallback: str = ""  # what was used instead of the exact analysis, for a one-line note ("" if nothing)

    @property
    def complete(self) -> bool:
        return self.flow is not None

    @cached_property
    def all(self) -> isl.UnionMap:
        """What every legal schedule must respect (computed once: the tiling of a 3-region program asked
        for it 39 times, 3 s in all)."""
        return self.flow.union(self.anti).union(self.output).coalesce()


@dataclass(frozen=True, eq=False)
class ScalarInfo:
    """What privatizing the scalars a region writes needs (OpenMP `lastprivate`): the dependences without
    the anti and output dependences through those scalars, and per scalar its flow dependences, the reads
    no write of the region reaches, and its write instances."""

    without_false: isl.UnionMap  # flow (all arrays) + anti and output through the other arrays
    flow: dict  # scalar name -> its flow dependences
    exposed: dict  # scalar name -> read instances with no writer in the region (isl.UnionSet)
    writes: dict  # scalar name -> instances that surely write it (isl.UnionSet)
    may_writes: dict = field(default_factory=dict)  # scalar name -> instances that may write it (under a
    # data-dependent condition)


def instance_order(scop: Scop) -> isl.MultiUnionPwAff:
    """The 2d+1 schedule as one affine function per statement, not restricted to the domains (the pairs it
    orders already are): with the domains, a strided or min-bounded domain made every comparison
    piecewise (25 times slower)."""
    umap = isl.UnionMap.empty(scop.schedule.get_space())
    for st in scop.statements:
        umap = umap.union(isl.UnionMap.from_map(st.schedule))
    return isl.MultiUnionPwAff.from_union_map(umap)


def ordered(pairs: isl.UnionMap, order: isl.MultiUnionPwAff) -> isl.UnionMap:
    """The instance pairs ``x -> y`` of *pairs* where *x* runs before *y* in *order*. Only the statement
    pairs that occur in *pairs* are compared: ``lex_lt_union_map`` of the whole schedule builds every pair
    of statements (200 one-line loops: 40,000 maps and over 3 s, for the 200 pairs that share an array)."""
    return pairs if pairs.is_empty() else pairs.lex_lt_at_multi_union_pw_aff(order)


def _reversed(sched: isl.UnionMap) -> isl.UnionMap:
    """*sched* with every schedule dimension negated: the same instances in reverse order."""
    if sched.is_empty():
        return sched
    n = maps_of(sched)[0].dim(isl.dim_type.out)
    names = [f"t{k}" for k in range(n)]
    neg = isl.UnionMap(f"{{ [{', '.join(names)}] -> [{', '.join('-' + x for x in names)}] }}", context=CTX)
    return sched.apply_range(neg)


def flow_info(sinks: isl.UnionMap, writes: isl.UnionMap, may: isl.UnionMap | None,
              sched: isl.UnionMap) -> isl.UnionFlow:
    """isl's dataflow analysis of *sinks* from *writes* in the order *sched*; the writes also in *may*
    (under data-dependent conditions: they may not happen) are may-sources, which kill nothing (pet's and
    PPCG's model), the others must-sources."""
    info = isl.UnionAccessInfo.from_sink(sinks)
    if may is None or may.is_empty():
        info = info.set_must_source(writes)
    else:
        info = info.set_must_source(writes.subtract(may)).set_may_source(may)
    return info.set_schedule_map(sched).compute_flow()


def _false_dependences(writes: isl.UnionMap, reads: isl.UnionMap, sched: isl.UnionMap,
                       may: isl.UnionMap | None = None):
    """The direct output dependences (each write from the last earlier write of its element) and anti
    dependences (each read to the next write of its element: its last writer in reversed order). With the
    reads as isl may-sources (the last write and the reads since) isl took 7 s instead of 0.9 s on a
    strided, min-bounded nest; the pairs are the same, plus write-after-write pairs with reads between
    them, which the may-source analysis left to transitivity. Writes in *may* kill nothing: a write depends
    on every may-write since the last must-write, a read on every may-write up to the next must-write."""
    output = flow_info(writes, writes, may, sched).get_may_dependence()
    anti = flow_info(reads, writes, may, _reversed(sched)).get_may_dependence().reverse().subtract(output)
    return anti, output


def _scalar_info(scop: Scop, flow: isl.UnionMap) -> ScalarInfo | None:
    """Dependences for privatizing the scalars *scop* writes (None when it writes none)."""
    names = [a.name for a in scop.arrays if a.ndim == 0 and a.written]
    if not names:
        return None
    sched, reads, writes, may = scop.schedule, scop.reads, scop.writes, scop.may_writes
    space = isl.UnionSet.empty(writes.get_space())
    per = {}
    for s in names:
        one = isl.UnionSet(isl.Set(f"{{ {s}[] }}", context=scop.context.get_ctx()))
        space = space.union(one)
        per[s] = (reads.intersect_range(one), writes.intersect_range(one))
    anti, output = _false_dependences(writes.subtract_range(space), reads.subtract_range(space), sched, may)
    sflow, exposed, wdom, mdom = {}, {}, {}, {}
    for s, (r, w) in per.items():
        f = flow_info(r, w, may, sched)
        sflow[s] = f.get_may_dependence()
        exposed[s] = f.get_may_no_source().domain()
        wdom[s] = w.subtract(may).domain()
        mdom[s] = w.intersect(may).domain()
    return ScalarInfo(flow.union(anti).union(output).coalesce(), sflow, exposed, wdom, mdom)


def _exact(scop: Scop) -> Dependences:
    sched = scop.schedule
    reads, writes, may = scop.reads, scop.writes, scop.may_writes
    # Each step has its own quota: one quota over all of them let a 16-statement nest spend 90 s in the
    # anti/output step after the flow step had used little; per step, both stop in seconds.
    result = bounded(lambda: flow_info(reads, writes, may, sched), DATAFLOW_OPERATIONS)
    flow = result.get_may_dependence()
    # Every read that follows some write of its element must have a last writer. isl's dataflow analysis
    # has been seen to drop one (a strided, disjunctive domain) without reporting the read as having no
    # writer: then use the memory-based flow dependences, a safe superset.
    # Only the reads without a last writer need the (quadratic) memory-based test.
    unmatched = bounded(lambda: reads.domain().subtract(flow.range()), DATAFLOW_OPERATIONS)
    order = instance_order(scop)
    memory_flow = bounded(lambda: ordered(writes.apply_range(reads.intersect_domain(unmatched).reverse()), order),
                          DATAFLOW_OPERATIONS)
    if not bounded(memory_flow.is_empty, DATAFLOW_OPERATIONS):
        flow = bounded(lambda: ordered(writes.apply_range(reads.reverse()), order), DATAFLOW_OPERATIONS)
    anti, output = bounded(lambda: _false_dependences(writes, reads, sched, may), DATAFLOW_OPERATIONS)
    flow = flow.coalesce()
    try:
        scalars = bounded(lambda: _scalar_info(scop, flow), DATAFLOW_OPERATIONS)
    except isl.Error:  # (isl has failed here on quasi-affine accesses) the scalars then stay shared
        scalars = None
    return Dependences(flow, anti.coalesce(), output.coalesce(), scalars)


def _memory_based(scop: Scop) -> Dependences:
    """Pluto's memory-based dependences (every earlier access of an element that one of the two writes): a
    superset of the exact ones, without isl's dataflow analysis. No scalar is privatized."""
    order, reads, writes = instance_order(scop), scop.reads, scop.writes
    flow = ordered(writes.apply_range(reads.reverse()), order)
    anti = ordered(reads.apply_range(writes.reverse()), order)
    output = ordered(writes.apply_range(writes.reverse()), order)
    return Dependences(flow.coalesce(), anti.coalesce(), output.coalesce())


def compute_dependences(scop: Scop) -> Dependences:
    """The exact dependences; past isl's operation quota, the memory-based ones; past that too, none
    (the region keeps its original order). Each fallback says what it did in ``fallback``."""
    try:
        return _exact(scop)
    except isl.Error:  # out of quota, or isl failed (it has, on some quasi-affine accesses)
        pass
    try:
        deps = bounded(lambda: _memory_based(scop), MEMORY_OPERATIONS)
        return replace(deps, fallback="the exact dependence analysis exceeded its isl operation limit: "
                                      "memory-based dependences used")
    except isl.Error:
        return Dependences(None, None, None, None, "the dependence analysis exceeded its isl operation limit: "
                                                   "the region keeps its original order")
