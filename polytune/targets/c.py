"""The C/OpenMP target: the tile sizes of the chosen schedule's tiled bands."""
from __future__ import annotations

import glob
import math
import os
import re

from ..measure.c import BuildConfig, CRunner
from ..measure.measurement import Config, to_record
from ..measure.runner import Variant
from ..pipeline import OptimizeOptions, Program, generate
from ..poly.schedule import DEFAULT_TILE, access_dims
from ..search import Parameter, SearchSpace, pow2_domain
from .base import Target


class CTarget(Target):
    name = "c"
    chooses_schedule = True

    def options_for(self, config: Config) -> OptimizeOptions:
        return OptimizeOptions(tile_sizes=tuple(config), parallel=self.opts.parallel, schedule=self.opts.schedule,
                               unroll_jam=self.opts.unroll_jam)

    def parameters(self) -> list[Parameter]:
        params = []
        for k, band in self.program.tunable_bands(self.opts.tile, self.opts.schedule):
            for m in range(band.members):
                extent = band.extents[m] if m < len(band.extents) else None
                params.append(Parameter(f"s{k}b{band.index}t{m}", pow2_domain(extent, self.domain_cap)))
        return params

    def labels(self, space: SearchSpace) -> tuple[str, ...]:
        """The loop each tile size belongs to (i, j, k; 2t+i for a skewed member), as the band's schedule
        names it; where two bands have a loop of the same name, the parameter's name is added (i@s0b1)."""
        names = {}
        for k, band in self.program.tunable_bands(self.opts.tile, self.opts.schedule):
            for m, loop in enumerate(member_names(band.schedule, band.members)):
                names[f"s{k}b{band.index}t{m}"] = loop
        loops = [names.get(n, n) for n in space.names]
        return tuple(lp if loops.count(lp) == 1 else f"{lp}@{n[:n.rindex('t')]}" for lp, n in zip(loops, space.names))

    def named_seed(self, space: SearchSpace, how: str) -> Config | None:
        n = len(space.params)
        if how == "pluto":
            return (DEFAULT_TILE,) * n
        if how == "origin":
            return (1,) * n
        if how == "model":
            return model_seed(self.program, self.opts)
        return None

    def variant(self, names: tuple[str, ...], config: Config) -> Variant:
        opts = self.options_for(config)
        return Variant(tuple(config), tuple(names), opts, frozenset(names),
                       lambda: generate(self.program, opts).text)

    def runner(self) -> CRunner:
        return CRunner(self.program, self.build)

    def report(self, runner, launch) -> dict:
        return {"schedule": self.opts.schedule}

    @classmethod
    def choose_schedule(cls, program: Program, build: BuildConfig, parallel: bool, unroll_jam: int):
        """`--schedule auto`: measure the Pluto-default seed (tile 32) of both schedules, each verified
        against the original, and tune the faster one's tile sizes (its median; pluto when neither runs).
        Returns the schedule, the choice for the report, the runner with the original measured (the search
        goes on with it), the original's measurement, and the best seed time (the first pruning bound)."""
        runner = CRunner(program, build)
        seeds: dict[str, dict | None] = {}
        bound = None
        try:
            original = runner.reference()
            for sched in ("pluto", "outer"):
                n = sum(b.members for _, b in program.tunable_bands(True, sched))
                t = cls(program, OptimizeOptions(parallel=parallel, schedule=sched, unroll_jam=unroll_jam), build)
                m = runner.measure(t.variant(("",) * n, (DEFAULT_TILE,) * n), bound)
                if m.ok and (bound is None or m.value < bound):
                    bound = m.value
                seeds[sched] = to_record(m)
        except BaseException:
            runner.close()
            raise
        ok = {s: m["median"] for s, m in seeds.items() if m and m["median"] is not None and m["error"] is None}
        chosen = min(ok, key=ok.get) if ok else "pluto"
        return chosen, {"chosen": chosen, "seeds": seeds}, runner, original, bound


def member_names(schedule: str, members: int) -> list[str]:
    """Each band member's loop, from the band's partial schedule in isl notation
    (``[n] -> [{ S0[i, j] -> [(i)]; S1[i, j, k] -> [(i)] }, ...]``): the expression of the statement with the
    most loops (the shortest among those), e.g. ``k`` or ``2t+i``."""
    parts = re.findall(r"\{([^{}]*)\}", schedule)
    out = []
    for m in range(members):
        best = None
        for piece in (parts[m].split(";") if m < len(parts) else ()):
            mm = re.match(r"\s*\w+\[([^\]]*)\]\s*->\s*\[\((.*)\)\]\s*$", piece)
            if not mm:
                continue
            depth = len([v for v in mm.group(1).split(",") if v.strip()])
            expr = mm.group(2).replace(" ", "")
            if best is None or (-depth, len(expr)) < best[0]:
                best = ((-depth, len(expr)), expr)
        out.append(best[1] if best else f"t{m}")
    return out


def cache_sizes() -> dict[int, int]:
    """Data/unified cache size per level (bytes) from sysfs; conservative defaults where unknown."""
    sizes: dict[int, int] = {}
    for d in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
        try:
            level = int(open(os.path.join(d, "level")).read())
            kind = open(os.path.join(d, "type")).read().strip()
            text = open(os.path.join(d, "size")).read().strip()
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        mult = {"K": 1024, "M": 1024 * 1024}.get(text[-1], 1)
        sizes[level] = int(text.rstrip("KM")) * mult
    sizes.setdefault(1, 32 * 1024)
    sizes.setdefault(2, 512 * 1024)
    return sizes


def model_seed(program: Program, opts: OptimizeOptions) -> tuple[int, ...]:
    """The largest power-of-two cube tile whose data footprint (8-byte elements) fits half the L2 cache."""
    budget = cache_sizes()[2] // 2
    seed: list[int] = []
    for k, band in program.tunable_bands(opts.tile, opts.schedule):
        dims = access_dims(program.scops[k].scop, band.statements)
        t = 1
        while t < 1024 and sum(8 * (2 * t) ** min(d, band.members) for d in dims.values()) <= budget:
            t *= 2
        for m in range(band.members):
            ext = band.extents[m] if m < len(band.extents) else None
            seed.append(min(t, 2 ** max(0, math.ceil(math.log2(ext)))) if ext else t)
    return tuple(seed)


__all__ = ["CTarget", "cache_sizes", "member_names", "model_seed"]
