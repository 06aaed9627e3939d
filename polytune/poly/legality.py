"""Legality: a schedule is checked against every dependence before anything is emitted."""
from __future__ import annotations

import islpy as isl

from ..errors import PolytuneError
from .deps import Dependences, LiveRanges, ScalarInfo
from .fission import sequence_filters
from .islutil import CTX, maps_of
from .scop import Scop


class IllegalSchedule(PolytuneError):
    """A schedule violates a dependence (an internal error: never emit such code)."""


def check_legal(schedule: isl.Schedule, deps: Dependences, scop: Scop) -> None:
    """Every dependence S[i] -> T[j] must go forward in the schedule: sched(S[i]) << sched(T[j]). Where
    *deps* has scalars whose live ranges may be reordered (deps.LiveRanges), their anti and output
    dependences are replaced by the test that no write of such a scalar runs inside one of its live
    ranges."""
    smap = schedule.get_map().intersect_domain(scop.domain)
    width = max((m.dim(isl.dim_type.out) for m in maps_of(smap)), default=0)
    space = isl.Space.set_alloc(CTX, 0, width)
    live = deps.live
    d = (live.validity if live is not None else deps.all).intersect_params(scop.context)
    if not d.is_empty():
        mapped = d.apply_domain(smap).apply_range(smap)
        order = isl.UnionMap(isl.Map.lex_lt(space)).align_params(mapped.get_space())
        if not mapped.is_subset(order):
            bad = mapped.subtract(order)
            raise IllegalSchedule(f"internal error: the schedule violates dependences {bad}", scop.file,
                                  scop.begin_line)
    if live is not None:
        _check_live_ranges(smap, space, live, deps.scalars, scop)


def in_listed_order(schedule: isl.Schedule) -> isl.Schedule:
    """*schedule* with each `set` node (children in any order: isl's scheduler found no dependence between
    them) made a `sequence` of its children in their listed order, the order `get_map` and so check_legal
    see. Where live ranges may be reordered, the scheduler does not see a scalar's anti and output
    dependences: two statements of two live ranges of one scalar (a store `C = acc` and the next nest's
    `acc = 0`) came out as a set, which isl's AST builder printed in the other order, the store reading 0
    (progen.local_scalar_program seed 1071)."""
    def visit(node):
        if node.get_type() == isl.schedule_node_type.set:
            dom = node.get_domain()
            filters = [node.child(i).filter_get_filter() for i in range(node.n_children())]
            if sum(1 for f in filters if not f.intersect(dom).is_empty()) >= 2:
                node = node.insert_sequence(sequence_filters(filters))
        for i in range(node.n_children()):
            node = visit(node.child(i)).parent()
        return node
    return visit(schedule.get_root()).get_schedule()


def _check_live_ranges(smap: isl.UnionMap, space: isl.Space, live: LiveRanges, scalars: ScalarInfo,
                       scop: Scop) -> None:
    """No write of a scalar of *live* is scheduled strictly between a write of it and a read that takes its
    value from that write (then every read sees the write it saw in the original order)."""
    context = scop.context
    for name in sorted(live.names):
        flow = scalars.flow[name].intersect_params(context)
        if flow.is_empty():
            continue
        times = flow.apply_domain(smap).apply_range(smap)  # t(write) -> t(read)
        writes = scalars.writes[name].intersect_params(context).apply(smap)  # t(other write)
        lt = isl.UnionMap(isl.Map.lex_lt(space)).align_params(times.get_space())
        between = lt.intersect_range(writes).apply_range(lt.intersect_domain(writes))
        clobbered = times.intersect(between)
        if not clobbered.is_empty():
            raise IllegalSchedule(f"internal error: the schedule interleaves live ranges of '{name}': "
                                  f"{clobbered}", scop.file, scop.begin_line)
