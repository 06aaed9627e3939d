"""Schedule alternatives as explicit choices: one small frozen value per alternative, each coordinate a
categorical (or small integer) choice, so that `optimize` can take one and the tuner can search them.

Every alternative goes through the same tiling, parallel marking and legality check (`make_schedule`'s
`check_legal`): a choice changes which legal schedule is emitted, never whether it is legal.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, fields

import islpy as isl

from ..errors import UsageError
from .contraction import Blocks
from .deps import Dependences
from .original import original_schedule
from .schedule import DEFAULT_UNROLL, TiledSchedule, compute_base_schedule, make_schedule
from .scop import Scop

SCHEDULERS = ("pluto", "outer", "original")  # tiling hyperplanes with skewing / parallel outer members first
# (PPCG) / the loops as written (poly/original.py)
FUSIONS = ("smart", "max", "none")  # isl SCC by SCC / whole connected components / SCCs one after another
OMP_SCHEDULES = ("auto", "static", "dynamic")  # auto: static, dynamic or cyclic on triangles
POINT_ORDERS = ("stride", "vector")  # best strides innermost / the same among vectorizable loops
UNROLLS = (0, 2, 4, 8)
TILINGS = ("all", "reuse")  # every permutable band / only where a reuse would miss the cache (poly/reuse.py)


@dataclass(frozen=True)
class ScheduleChoice:
    """One schedule alternative. The default is what `optimize` has always emitted (Pluto's seed)."""

    scheduler: str = "pluto"
    fusion: str = "smart"
    omp_schedule: str = "auto"
    privatize_arrays: bool = True
    point_order: str = "stride"
    unroll: int = DEFAULT_UNROLL
    tiling: str = "all"

    def __post_init__(self) -> None:
        for name, allowed in (("scheduler", SCHEDULERS), ("fusion", FUSIONS), ("omp_schedule", OMP_SCHEDULES),
                              ("point_order", POINT_ORDERS), ("tiling", TILINGS)):
            if getattr(self, name) not in allowed:
                raise UsageError(f"unknown {name} '{getattr(self, name)}' (choose from {', '.join(allowed)})")
        if self.unroll < 0:
            raise UsageError("the unroll-and-jam factor must be 0 (none) or a positive integer")

    def to_record(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_record(cls, record: dict) -> ScheduleChoice:
        return cls(**{f.name: record[f.name] for f in fields(cls) if f.name in record})


def coordinates() -> dict[str, tuple]:
    """The tuner's categorical coordinates and their values (the default first)."""
    unrolls = (DEFAULT_UNROLL,) + tuple(u for u in UNROLLS if u != DEFAULT_UNROLL)
    return {"scheduler": SCHEDULERS, "fusion": FUSIONS, "omp_schedule": OMP_SCHEDULES,
            "privatize_arrays": (True, False), "point_order": POINT_ORDERS, "unroll": unrolls, "tiling": TILINGS}


def parse_choice(text: str) -> ScheduleChoice:
    """`scheduler=outer,fusion=none,point_order=vector,...` (the command line's --choice)."""
    kw: dict = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        key, eq, value = item.partition("=")
        if not eq or key not in coordinates():
            raise UsageError(f"bad --choice item '{item}' (NAME=VALUE, NAME one of {', '.join(coordinates())})")
        if key == "privatize_arrays":
            kw[key] = value.lower() in ("1", "true", "yes", "on")
        elif key == "unroll":
            if not value.isdigit():
                raise UsageError(f"bad --choice item '{item}': unroll takes a non-negative integer")
            kw[key] = int(value)
        else:
            kw[key] = value
    return ScheduleChoice(**kw)


def alternatives() -> list[ScheduleChoice]:
    """Every combination of the coordinates, the default first."""
    coords = coordinates()
    return [ScheduleChoice(**dict(zip(coords, values))) for values in itertools.product(*coords.values())]


def base_schedule(scop: Scop, deps: Dependences, choice: ScheduleChoice) -> isl.Schedule:
    """isl's schedule for the choice's scheduler and fusion (before tiling); the program's own loops for the
    original scheduler (whose loops fix their fusion)."""
    if choice.scheduler == "original":
        return original_schedule(scop, deps)
    return compute_base_schedule(scop, deps, outer_coincidence=choice.scheduler == "outer",
                                 whole_component=choice.fusion == "max", serialize_sccs=choice.fusion == "none")


def schedule_with(scop: Scop, deps: Dependences, choice: ScheduleChoice, tile_sizes: tuple[int, ...] = (),
                  tile: bool = True, parallel: bool = True, base: isl.Schedule | None = None,
                  wavefront: bool = True, blocks: Blocks | None = None, wide: bool = True) -> TiledSchedule:
    """The tiled, parallel, checked schedule of one alternative (*base*: its base schedule, if computed)."""
    base = base if base is not None else base_schedule(scop, deps, choice)
    return make_schedule(scop, deps, tile_sizes, tile=tile, parallel=parallel, base=base, unroll=choice.unroll,
                         omp_schedule=choice.omp_schedule, privatize_arrays=choice.privatize_arrays,
                         point_order=choice.point_order, reuse=choice.tiling == "reuse", wavefront=wavefront,
                         blocks=blocks, wide=wide)
