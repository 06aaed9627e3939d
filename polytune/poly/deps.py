"""Exact dependences of a Scop, by isl's dataflow analysis.

Flow dependences go from the last writer to each read. Anti and output dependences are the direct ones:
a write depends on the last earlier write of its element and on every read since that write. Every other
memory-based dependence follows from these by transitivity, and the scheduler is much faster without them
(gemver: 0.01 s instead of 230 s).
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from .islutil import bounded
from .scop import Scop

# isl operation quotas (about 1-2 s each on this machine); past them, the safe fallbacks are used.
DATAFLOW_OPERATIONS = 2_000_000


@dataclass(frozen=True, eq=False)
class Dependences:
    """Statement-instance relations ``S[i] -> T[j]``: T[j] must run after S[i]."""

    flow: isl.UnionMap  # read-after-write, value-based (last writer)
    anti: isl.UnionMap  # write-after-read, direct (reads since the previous write)
    output: isl.UnionMap  # write-after-write, direct (previous write)

    @property
    def all(self) -> isl.UnionMap:
        """What every legal schedule must respect."""
        return self.flow.union(self.anti).union(self.output).coalesce()


def compute_dependences(scop: Scop) -> Dependences:
    sched = scop.schedule
    reads, writes = scop.reads, scop.writes
    info = isl.UnionAccessInfo.from_sink(reads).set_must_source(writes).set_schedule_map(sched)
    before = sched.lex_lt_union_map(sched)
    memory_flow = writes.apply_range(reads.reverse()).intersect(before)
    try:
        flow = bounded(lambda: info.compute_flow().get_may_dependence(), DATAFLOW_OPERATIONS)
    except isl.Error:  # isl has failed here on some quasi-affine accesses: use the safe superset
        flow = memory_flow
    if not memory_flow.range().is_subset(flow.range()):
        # Every read instance that follows some write of its element must have a last writer. isl's
        # dataflow analysis has been seen to drop one (a strided, disjunctive domain): fall back to the
        # memory-based flow dependences, a safe superset.
        flow = memory_flow
    try:
        false = bounded(lambda: isl.UnionAccessInfo.from_sink(writes).set_must_source(writes)
                        .set_may_source(reads).set_schedule_map(sched).compute_flow(), DATAFLOW_OPERATIONS)
        output = false.get_must_dependence()
        anti = false.get_may_dependence().subtract(output).intersect(reads.apply_range(writes.reverse()))
    except isl.Error:
        output = writes.apply_range(writes.reverse()).intersect(before)
        anti = reads.apply_range(writes.reverse()).intersect(before)
    return Dependences(flow.coalesce(), anti.coalesce(), output.coalesce())
