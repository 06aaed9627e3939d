"""Legality: a schedule is checked against every dependence before anything is emitted."""
from __future__ import annotations

import islpy as isl

from ..errors import PolytuneError
from .deps import Dependences
from .islutil import CTX, maps_of
from .scop import Scop


class IllegalSchedule(PolytuneError):
    """A schedule violates a dependence (an internal error: never emit such code)."""


def check_legal(schedule: isl.Schedule, deps: Dependences, scop: Scop) -> None:
    """Every dependence S[i] -> T[j] must go forward in the schedule: sched(S[i]) << sched(T[j])."""
    smap = schedule.get_map().intersect_domain(scop.domain)
    width = max((m.dim(isl.dim_type.out) for m in maps_of(smap)), default=0)
    d = deps.all.intersect_params(scop.context)
    if d.is_empty():
        return
    mapped = d.apply_domain(smap).apply_range(smap)
    space = isl.Space.set_alloc(CTX, 0, width)
    order = isl.UnionMap(isl.Map.lex_lt(space)).align_params(mapped.get_space())
    if not mapped.is_subset(order):
        bad = mapped.subtract(order)
        raise IllegalSchedule(f"internal error: the schedule violates dependences {bad}", scop.file,
                              scop.begin_line)
