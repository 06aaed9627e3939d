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
from .scop import Scop, common_loops

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
    live: LiveRanges | None = field(default=None)  # scalars whose live ranges the C schedule may reorder

    @property
    def complete(self) -> bool:
        return self.flow is not None

    @cached_property
    def all(self) -> isl.UnionMap:
        """What every legal schedule must respect (computed once: the tiling of a 3-region program asked
        for it 39 times, 3 s in all)."""
        return self.flow.union(self.anti).union(self.output).coalesce()

    def in_order(self) -> Dependences:
        """These dependences with every scalar's live ranges kept in their order (no LiveRanges): the GPU
        targets' mapping, which does not take reordered live ranges."""
        return self if self.live is None else replace(self, live=None)


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


@dataclass(frozen=True, eq=False)
class LiveRanges:
    """Live-range reordering (PPCG's, Verdoolaege and Cohen 2016) for the scalars declared in the region.

    `float acc = 0; for k: acc += g[k] * in[y + k][x]; out[y][x] = acc;` in a (y, x) nest: the anti and
    output dependences through `acc` tie every (y, x) to the next one, and isl's scheduler, bound by them,
    merged x and k into one loop `4x + k` (gaussian_clamp's column pass, 2x slower than the original). A
    live range of `acc` (a write and the reads that take its value: its flow dependences) runs inside one
    (y, x); such live ranges may run in any order as long as none is interleaved with another. The
    scheduler gets the scalars' flow dependences as the condition and their anti and output dependences as
    conditional validity constraints (isl_schedule_constraints_set_conditional_validity): a band may break
    the order of the live ranges only where every live range is local to it (distance 0 along each member).
    The schedule is then checked (legality.py) against every other dependence, and against the live ranges
    themselves: no write of the scalar runs between a write and a read that takes its value. The scalar is
    printed as a scalar, private to each thread of a parallel loop.

    Only scalars declared inside the region (dead after it: no last value to keep), every read of which takes
    its value from a write of the region, none written under a data-dependent condition."""

    names: frozenset[str]
    validity: isl.UnionMap  # every dependence but the anti and output ones through these scalars
    condition: isl.UnionMap  # the scalars' flow dependences (their live ranges)
    false: isl.UnionMap  # the scalars' anti and output dependences (kept where a live range is not local)
    # (each scalar's flow dependences and write instances: Dependences.scalars)


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


def flow_webs(scop: Scop, name: str, flow: isl.UnionMap) -> list[list]:
    """The webs of scalar *name*: the statements using it, grouped where its flow dependences *flow* join
    them (a scalar of one name declared in two nests has a web in each)."""
    users = [st for st in scop.statements if any(a.array == name for a in st.accesses)]
    parent = {st.name: st.name for st in users}

    def find(x: str) -> str:
        while parent[x] != x:
            x = parent[x]
        return x

    for m in maps_of(flow):
        parent[find(m.get_tuple_name(isl.dim_type.in_))] = find(m.get_tuple_name(isl.dim_type.out))
    groups: dict[str, list] = {}
    for st in users:
        groups.setdefault(find(st.name), []).append(st)
    return list(groups.values())


def _within_iterations(scop: Scop, name: str, flow: isl.UnionMap) -> bool:
    """Whether every live range of scalar *name* (its flow dependences *flow*) runs inside one iteration of
    the loops that enclose every statement of its web, at least one. (A scalar set before a loop,
    overwritten in it and read after it has live ranges that cross the loop's iterations: its last value
    must stay the one the loop's last iteration wrote.)"""
    depths = {st.name: common_loops(web) for web in flow_webs(scop, name, flow) for st in web}
    if not depths or min(depths.values()) == 0:
        return False
    for m in maps_of(flow):
        same = m
        for k in range(depths[m.get_tuple_name(isl.dim_type.in_)]):
            same = same.equate(isl.dim_type.in_, k, isl.dim_type.out, k)
        if not m.is_subset(same):
            return False
    return True


def _live_ranges(scop: Scop, flow: isl.UnionMap, scalars: ScalarInfo | None) -> LiveRanges | None:
    """The scalars whose live ranges may be reordered (LiveRanges), with their dependences; None if none."""
    if scalars is None:
        return None
    names = sorted(s for s, f in scalars.flow.items()
                   if s in scop.local_names and scalars.exposed[s].is_empty()
                   and (s not in scalars.may_writes or scalars.may_writes[s].is_empty()) and not f.is_empty()
                   and _within_iterations(scop, s, f))
    if not names:
        return None
    sched, reads, writes, may = scop.schedule, scop.reads, scop.writes, scop.may_writes
    space = isl.UnionSet.empty(writes.get_space())
    for s in names:
        space = space.union(isl.UnionSet(isl.Set(f"{{ {s}[] }}", context=scop.context.get_ctx())))
    s_anti, s_output = _false_dependences(writes.intersect_range(space), reads.intersect_range(space), sched, may)
    false = s_anti.union(s_output).coalesce()
    if false.is_empty():
        return None
    if len(names) == len(scalars.flow):  # every scalar the region writes: ScalarInfo has the rest already
        validity = scalars.without_false
    else:
        anti, output = _false_dependences(writes.subtract_range(space), reads.subtract_range(space), sched, may)
        validity = flow.union(anti).union(output).coalesce()
    condition = isl.UnionMap.empty(flow.get_space())
    for s in names:
        condition = condition.union(scalars.flow[s])
    return LiveRanges(frozenset(names), validity, condition.coalesce(), false)


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
    try:
        live = bounded(lambda: _live_ranges(scop, flow, scalars), DATAFLOW_OPERATIONS)
    except isl.Error:  # the scalars' order is then kept as written
        live = None
    return Dependences(flow, anti.coalesce(), output.coalesce(), scalars, live=live)


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
