"""Exact dependences of a Scop: value-based flow (isl's dataflow analysis), memory-based anti and output."""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from .scop import Scop


@dataclass(frozen=True, eq=False)
class Dependences:
    """Statement-instance relations ``S[i] -> T[j]``: T[j] must run after S[i]."""

    flow: isl.UnionMap  # read-after-write, value-based (last writer)
    anti: isl.UnionMap  # write-after-read, memory-based
    output: isl.UnionMap  # write-after-write, memory-based

    @property
    def all(self) -> isl.UnionMap:
        """What every legal schedule must respect."""
        return self.flow.union(self.anti).union(self.output).coalesce()


def compute_dependences(scop: Scop) -> Dependences:
    sched = scop.schedule
    reads, writes = scop.reads, scop.writes
    info = isl.UnionAccessInfo.from_sink(reads).set_must_source(writes).set_schedule_map(sched)
    flow = info.compute_flow().get_may_dependence()
    before = sched.lex_lt_union_map(sched)
    anti = reads.apply_range(writes.reverse()).intersect(before)
    output = writes.apply_range(writes.reverse()).intersect(before)
    return Dependences(flow.coalesce(), anti.coalesce(), output.coalesce())
