"""The C/OpenMP target: the tile sizes of the chosen schedule's tiled bands."""
from __future__ import annotations

import dataclasses
import math
import os
import re
import statistics
import tempfile
from concurrent.futures import CancelledError
from functools import partial

from ..errors import PolytuneError
from ..machine import cache_sizes
from ..measure.c import (
    BuildConfig,
    Compiled,
    CRunner,
    compile_only,
    compile_variant,
    run_program,
    source_digest,
    time_variant,
    variant_source,
)
from ..measure.measurement import Config, Measurement, to_record
from ..measure.runner import Variant
from ..pipeline import OptimizeOptions, Program, analyze, generate
from ..poly.choice import ScheduleChoice, coordinates
from ..poly.contraction import BLOCK_COORDINATES, Blocks, blocks_of, blocks_text
from ..poly.schedule import DEFAULT_TILE, TiledSchedule, access_dims
from ..search import Parameter, SearchSpace, pow2_domain
from ..steps import Done
from ..workers.base import WorkerLost
from .base import Target

MIN_CONFIRM_ROUNDS = 3  # the re-run's rounds before clear_verdict may stop it

STRUCTURE = ("scheduler", "fusion", "privatize_arrays", "point_order", "tiling")  # the choice fields that change
# which bands are tiled (point_order: with tiling=reuse, a band stays untiled only where its best-stride
# loop is innermost already)


def category_name(value) -> str:
    """A schedule coordinate's value as a category name (privatize_arrays: on/off)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def choice_parameters() -> list[Parameter]:
    """One categorical parameter per ScheduleChoice field, its default (Pluto's) first."""
    return [Parameter.categorical(name, tuple(category_name(v) for v in values))
            for name, values in coordinates().items()]


def choice_of(cfg: dict[str, int]) -> ScheduleChoice:
    """The ScheduleChoice of a configuration's categorical coordinates (indices, by field name)."""
    coords = coordinates()
    return ScheduleChoice(**{name: coords[name][cfg[name]] for name in coords if name in cfg})


def choice_config(choice: ScheduleChoice) -> tuple[int, ...]:
    """The categorical coordinates (indices) of *choice*, in choice_parameters() order."""
    return tuple(values.index(getattr(choice, name)) for name, values in coordinates().items())


class CTarget(Target):
    name = "c"
    chooses_schedule = True
    spaces = ("tiles", "schedule")

    def options_for(self, config: Config) -> OptimizeOptions:
        return OptimizeOptions(tile_sizes=tuple(config), parallel=self.opts.parallel, schedule=self.opts.schedule,
                               unroll_jam=self.opts.unroll_jam, blocks=self.opts.blocks)

    def seed_choice(self) -> ScheduleChoice:
        """The schedule every tile-only variant uses, and where the schedule space starts (Pluto's default
        unless --schedule or --unroll-jam say otherwise)."""
        return ScheduleChoice(scheduler=self.opts.schedule, unroll=self.opts.unroll_jam)

    def parameters(self) -> list[Parameter]:
        params = []
        for k, band in self.program.tunable_bands(self.opts.tile, self.opts.schedule):
            for m in range(band.members):
                extent = band.extents[m] if m < len(band.extents) else None
                params.append(Parameter(f"s{k}b{band.index}t{m}", pow2_domain(extent, self.domain_cap)))
        return params

    def extra_parameters(self, kind: str) -> list[Parameter]:
        """--space schedule: the schedule coordinates, after the tile sizes; in either space, where some band is
        a contraction printed as packed blocks, the block coordinates last (block_parameters)."""
        return (choice_parameters() if kind == "schedule" else []) + self.block_parameters()

    def block_parameters(self) -> list[Parameter]:
        """The packed code's coordinates (poly/contraction.py BLOCK_COORDINATES: on/off, mr, nv, kc, mc, nc,
        packing of A; the model's values first), where optimize's default prints some band as packed blocks."""
        if "_blocked" not in self.__dict__:
            self._blocked = any(a.tiled((), tile=self.opts.tile, parallel=False, schedule=self.opts.schedule,
                                        unroll_jam=self.opts.unroll_jam).contractions for a in self.program.scops)
        if not self._blocked:
            return []
        return [Parameter.categorical(name, tuple(category_name(v) for v in values))
                for name, values in BLOCK_COORDINATES.items()]

    def _split_blocks(self, names: tuple[str, ...], config: Config) -> tuple[tuple, tuple, Blocks | None, set]:
        """The configuration without its block coordinates, and the Blocks they give (None: no such
        coordinates), with the block coordinates the code reads (all of them, or only `blocked` when off)."""
        rest = [(n, v) for n, v in zip(names, config) if n not in BLOCK_COORDINATES]
        mine = {n: BLOCK_COORDINATES[n][v] for n, v in zip(names, config) if n in BLOCK_COORDINATES}
        if not mine:
            return tuple(names), tuple(config), None, set()
        blocks = blocks_of(mine)
        reads = set(mine) if blocks.on else {"blocked"}
        return tuple(n for n, _ in rest), tuple(v for _, v in rest), blocks, reads

    def tile_counts(self, choice: ScheduleChoice) -> tuple[int, ...]:
        """How many tile sizes each scop takes under *choice* (computed once per structure)."""
        key = tuple(getattr(choice, f) for f in STRUCTURE)
        counts = self.__dict__.setdefault("_counts", {})
        if key not in counts:
            shape = ScheduleChoice(**dict(zip(STRUCTURE, key)))
            counts[key] = tuple(sum(b.members for b in a.tiled((), tile=self.opts.tile, parallel=False,
                                                               choice=shape).tunable_bands)
                                for a in self.program.scops)
        return counts[key]

    def choice_options(self, names: tuple[str, ...], config: Config) -> tuple[OptimizeOptions, frozenset[str]]:
        """A schedule-space configuration's options and the parameters its code reads. The tile sizes are
        the seed schedule's, per scop: a scop that the choice tiles in fewer dimensions takes its first
        sizes, one tiled in more takes 32 for the rest (so every choice reads the sizes of its own scop)."""
        cfg = dict(zip(names, config))
        choice = choice_of(cfg)
        per_scop: dict[int, list[str]] = {}
        for n in names:
            if n not in coordinates():
                per_scop.setdefault(int(n[1:n.index("b")]), []).append(n)
        sizes: list[int] = []
        reads = set(coordinates())
        for k, count in enumerate(self.tile_counts(choice)):
            mine = per_scop.get(k, [])[:count]
            reads.update(mine)
            sizes += [cfg[n] for n in mine] + [DEFAULT_TILE] * (count - len(mine))
        return OptimizeOptions(tile_sizes=tuple(sizes), parallel=self.opts.parallel, tile=self.opts.tile,
                               choice=choice, blocks=self.opts.blocks), frozenset(reads)

    def seed(self, space: SearchSpace, how: str | tuple[int, ...] = "pluto") -> Config:
        """As Target.seed; in the schedule space the tile sizes of an explicit seed may come alone (the
        seed's schedule choice is added)."""
        extra = len(space.params) - len(self.parameters())
        if isinstance(how, tuple) and extra and len(how) == len(space.params) - extra:
            nblocks = len(self.block_parameters())
            return how + (choice_config(self.seed_choice()) if extra > nblocks else ()) + (0,) * nblocks
        return super().seed(space, how)

    def named_seed(self, space: SearchSpace, how: str) -> Config | None:
        schedule = any(p.name in coordinates() for p in space.params)
        blocks = (0,) * sum(p.name in BLOCK_COORDINATES for p in space.params)  # (the model's, blocked)
        choice = (choice_config(self.seed_choice()) if schedule else ()) + blocks
        n = len(space.params) - len(choice)
        if how == "pluto":
            return (DEFAULT_TILE,) * n + choice
        if how == "origin":
            return (1,) * n + choice
        if how == "model":
            return model_seed(self.program, self.opts) + choice
        return None

    def default_choice(self) -> list[ScheduleChoice]:
        """What `optimize` emits without measuring (--schedule model): the cost model's choice, per scop
        (poly/cost.py), tiled only where tiling brings reuse; the distinct ones, in scop order."""
        out: list[ScheduleChoice] = []
        for a in self.program.scops:
            (scheduler, order), _ = a.model_scheduler
            c = ScheduleChoice(scheduler=scheduler, point_order=order, unroll=self.opts.unroll_jam, tiling="reuse")
            if c not in out:
                out.append(c)
        return out

    def starts(self, space: SearchSpace, seed: Config) -> list[tuple[str, Config]]:
        """The schedule space's starts: the seed (Pluto's default), `optimize`'s own output ("default": the
        model's choice at the sizes it uses, default_tiles; where scops differ in the choice, one start per
        distinct choice, "default1", ...: a configuration holds one choice for all scops) and the other
        scheduler's default at tile 32 (what --schedule auto compares). The tile-only space has the seed
        alone."""
        if not any(p.name in coordinates() for p in space.params):
            return [("seed", seed)]
        blocks = (0,) * sum(p.name in BLOCK_COORDINATES for p in space.params)
        tiles = (DEFAULT_TILE,) * (len(space.params) - len(coordinates()) - len(blocks))
        models = self.default_choice()
        out = [("seed", seed)] + [("default" if k == 0 else f"default{k}",
                                   self.default_tiles(space, c) + choice_config(c) + blocks)
                                  for k, c in enumerate(models)]
        other = "outer" if self.seed_choice().scheduler == "pluto" else "pluto"
        return out + [(other, tiles + choice_config(ScheduleChoice(scheduler=other, unroll=self.opts.unroll_jam))
                       + blocks)]

    def default_schedules(self, choice: ScheduleChoice) -> list[TiledSchedule]:
        """Each scop's schedule as `optimize` builds it under *choice* with no sizes given (computed once)."""
        cache = self.__dict__.setdefault("_default_schedules", {})
        if choice not in cache:
            cache[choice] = [a.tiled((), tile=self.opts.tile, parallel=self.opts.parallel, choice=choice)
                             for a in self.program.scops]
        return cache[choice]

    def default_has_own_one_thread_tiles(self) -> bool:
        """Whether `optimize`'s output has a one-thread version whose tiles differ from its wavefront's (a
        wavefront band sized by default: BandInfo.one_thread_sizes), which no configuration of a space holds."""
        return any(b.one_thread_sizes for c in self.default_choice() for ts in self.default_schedules(c)
                   for b in ts.bands)

    def default_tiles(self, space: SearchSpace, choice: ScheduleChoice) -> tuple[int, ...]:
        """The tile coordinates of *space* as `optimize` sizes the bands of *choice* with no sizes given: 32, but
        a wavefront band's own (poly/tiling.py WAVEFRONT_TILES); a size outside its coordinate's domain, and a
        coordinate no band of *choice* reads, 32."""
        params = [p for p in space.params if p.name not in coordinates() and p.name not in BLOCK_COORDINATES]
        used: dict[str, int] = {}
        for k, ts in enumerate(self.default_schedules(choice)):
            mine = [p for p in params if p.name.startswith(f"s{k}b")]
            used.update((p.name, size) for p, size in zip(mine, ts.tile_sizes) if size in p.values)
        return tuple(used.get(p.name, DEFAULT_TILE) for p in params)

    def confirm_best(self, runner: CRunner, seed: Measurement | None, best: Measurement | None,
                     names: tuple[str, ...], starts: dict[str, Measurement], runs: int,
                     defines: tuple[str, ...] | None = None,
                     workers=None) -> tuple[dict | None, list[str], Measurement | None]:
        """The best re-measured against the seed and `optimize`'s default in the program itself, in
        interleaved rounds (the region's own clock, at the tuned sizes), so that a gain the search saw by
        chance (the best of many noisy candidates) or under other cache conditions is not reported. The one
        with the lowest median is kept: the best where its gain holds, else the faster of the seed and the
        default (report entry program_gain, a warning). At most *runs* rounds: from the third on, the rounds
        stop once the verdict is clear (``clear_verdict``). The executables the search built are run again
        as they are (the runner's kept builds); only the others are compiled, on *workers* (the search's
        pool) where there is one. With *defines* (tune --confirm-define: a tune at a smaller size than the
        user runs), every program is built with those -D instead, the file analyzed again with them, and run
        unverified (the variants were verified at the tuned size)."""
        if best is None or not best.ok or runs < 1:
            return None, [], best
        target = self
        if defines is not None:
            build = dataclasses.replace(self.build, defines=tuple(defines))
            try:
                program = analyze(self.program.path, self.program.includes, tuple(defines), self.program.pure,
                                  self.program.auto, skip=self.program.left_out)
            except PolytuneError as e:
                why = f"the file does not analyze with {' '.join('-D' + d for d in defines)}: {e}"
                return {"error": why}, [f"polytune: warning: the tuned gain could not be re-measured ({why})"], best
            target, runner = type(self)(program, self.opts, build, self.domain_cap), CRunner(program, build)
        try:
            return target._program_runs(runner, seed, best, names, starts, runs, defines, workers)
        finally:
            if defines is not None:
                runner.close()

    def _program_runs(self, runner: CRunner, seed: Measurement | None, best: Measurement, names: tuple[str, ...],
                      starts: dict[str, Measurement], runs: int, defines: tuple[str, ...] | None,
                      workers) -> tuple[dict | None, list[str], Measurement | None]:
        cands: dict[str, Measurement] = {"best": best}
        variants = {"best": self.variant(names, best.config)}
        for label, m in [("seed", seed), *[(k, v) for k, v in starts.items() if k.startswith("default")]]:
            if m is not None and m.ok:
                cands[label], variants[label] = m, self.variant(names, m.config)
        if not any(n in coordinates() for n in names):  # tile-only: optimize's default is no configuration of
            variants["default"] = self.default_variant()  # the space; it is run beside them, to say so where faster
        elif self.default_has_own_one_thread_tiles():
            # (its one-thread version's tiles are not the default start's: run beside too)
            variants["optimize"] = self.default_variant()
        built, compiled_now, error = self._builds(runner, variants, workers)
        if error:
            out = {"max_runs": runs, "configs": {k: list(m.config) for k, m in cands.items()}, "error": error}
            return out, [f"polytune: warning: the tuned gain could not be re-measured ({error})"], best
        first: dict[bytes, str] = {}
        for label in list(built):  # the same program twice (the same options, or text): run once, the first
            if built[label].exe in first:
                del variants[label], built[label]
                cands.pop(label, None)
            else:
                first[built[label].exe] = label
        if len(variants) == 1:
            return None, [], best
        out: dict = {"max_runs": runs, "configs": {k: list(m.config) for k, m in cands.items()},
                     "search_ms": {k: 1e3 * m.value for k, m in cands.items()},
                     "compiled": [k for k in variants if k in compiled_now]}  # the others: the search's executables
        if defines is not None:
            out["defines"] = list(defines)
        times: dict[str, list[float]] = {k: [] for k in variants}
        # at the tuned size, each run goes through the search's own time step (verified again, timed once), so
        # the re-run and the search time programs the same way; at another size there is nothing to verify
        # against: the program is run, its regions timed
        ref = None if defines is not None else dataclasses.replace(
            runner.reference_data(), build=dataclasses.replace(self.build, runs=1))
        only_compared = [k for k in variants if k not in cands]  # the tile-only default: said, never kept
        from ..steps import TimerLock, default_lock_path  # (each run: no other tune times meanwhile)
        with tempfile.TemporaryDirectory(prefix="polytune-confirm-") as tmp:
            for label, compiled in built.items():
                with open(os.path.join(tmp, label), "wb") as f:
                    f.write(compiled.exe)
                os.chmod(os.path.join(tmp, label), 0o700)
            for k in range(runs):
                for label, compiled in built.items():
                    with TimerLock(default_lock_path()):
                        if ref is not None:
                            m = time_variant(ref, None, compiled)
                            ok, t = m.ok, (m.times or (0.0,))[0]
                            why = f"{m.error.value if m.error else ''} {m.detail}"
                        else:
                            r = run_program(self.build, os.path.join(tmp, label), None, None, False,
                                            self.build.program.cwd or tmp)
                            ok, t, why = r.ok, r.region_time, f"{r.error.value if r.error else ''} {r.detail}"
                    if not ok:
                        out["error"] = f"the {label} failed when run again: {why.strip()}"
                        return out, [f"polytune: warning: the tuned gain could not be re-measured "
                                     f"({out['error']})"], best
                    times[label].append(t)
                if k + 1 >= min(runs, MIN_CONFIRM_ROUNDS) and clear_verdict(
                        {c: times[c] for c in cands}, {c: times[c] for c in only_compared}):
                    break
        rounds = len(times["best"])
        med = {k: statistics.median(v) for k, v in times.items()}
        kept = min(cands, key=lambda k: med[k])  # (ties: the best, listed first)
        out.update({"runs": rounds, "program_ms": {k: [1e3 * t for t in v] for k, v in times.items()},
                    "median_ms": {k: 1e3 * v for k, v in med.items()}, "kept": kept, "holds": kept == "best"})
        if "seed" in cands:
            out["search_gain"] = seed.value / best.value if best.value > 0 else None
            out["program_gain"] = med["seed"] / med["best"] if med["best"] > 0 else None
        line = ", ".join(f"{k} {1e3 * med[k]:.4g} ms" for k in variants)
        warnings = [] if kept == "best" else [
            f"polytune: warning: the tuned configuration is not the fastest when its program is run again ({rounds} "
            f"interleaved runs each: {line}): the {kept} is kept"]
        if "default" in variants and "default" not in cands and med["default"] < med[kept]:
            out["default_faster"] = True
            warnings.append(f"polytune: warning: optimize's default is faster than the tuned {self.opts.schedule} "
                            f"schedule ({line}): use `polytune optimize` as it is, or tune --space schedule")
        if "optimize" in variants and med["optimize"] < med[kept]:
            out["default_faster"] = True
            warnings.append(f"polytune: warning: optimize's default is faster than the tuned configuration "
                            f"({line}): use `polytune optimize` as it is")
        return out, warnings, cands[kept]

    def _builds(self, runner: CRunner, variants: dict[str, Variant],
                workers) -> tuple[dict[str, Compiled], set[str], str]:
        """Each variant's executable: the one the search built (the runner's kept builds, by build options),
        else compiled now, on *workers* where given (in parallel), else here. Variants with the same options
        share one. Returns the executables, the labels compiled now, and why one does not build ('' if all do)."""
        built: dict[str, Compiled] = {}
        todo: dict[object, list[str]] = {}  # build options -> the labels that need them compiled
        for label, v in variants.items():
            kept = runner.kept.get(v.build)
            if kept is not None:
                built[label] = kept
            else:
                todo.setdefault(v.build, []).append(label)
        results = {}
        if workers is not None and len(todo) > 1:
            futures = {b: workers.submit(compile_only, runner.time_step, runner.job(variants[ls[0]]),
                                         label=f"re-run: {ls[0]}") for b, ls in todo.items()}
            for b, f in futures.items():
                try:
                    results[b] = f.result().value
                except WorkerLost:  # its workers died: built here instead
                    pass
        for b, labels in todo.items():
            if b not in results:  # here: the text first, and gcc only where no program of this re-run has it
                job = runner.job(variants[labels[0]])
                text = variant_source(job, self.program)
                digest = None if isinstance(text, Done) else source_digest(text)
                same = next((c for c in [*built.values(), *results.values()]
                             if isinstance(c, Compiled) and c.source == digest), None)
                results[b] = same if same is not None else compile_variant(job, self.program, source=text)
        for b, labels in todo.items():
            compiled = results[b]
            if not isinstance(compiled, Compiled):
                return built, set(), f"the {labels[0]} does not build again: {compiled.value.detail}"
            for label in labels:
                built[label] = compiled
        return dict(sorted(built.items(), key=lambda kv: list(variants).index(kv[0]))), \
            {label for labels in todo.values() for label in labels}, ""

    def prebuild(self, runner: CRunner, names: tuple[str, ...], workers) -> None:
        """Start compiling, on the search's pool, what the re-run after the search needs and the search never
        builds (the tile-only space's optimize's default), so that it compiles beside the search, not after."""
        if workers is None or any(n in coordinates() for n in names):
            return
        variant = self.default_variant()
        future = workers.submit(compile_only, runner.time_step, runner.job(variant), label="re-run: default")
        runner.kept.expect(variant.build, partial(_built, future))

    def default_variant(self) -> Variant:
        """The program `optimize` emits with these options and no tuning (--schedule model)."""
        opts = OptimizeOptions(parallel=self.opts.parallel, tile=self.opts.tile, schedule="model",
                               unroll_jam=self.opts.unroll_jam, blocks=self.opts.blocks)
        return Variant((), (), opts, frozenset(), lambda: generate(self.program, opts).text)

    def variant(self, names: tuple[str, ...], config: Config) -> Variant:
        rest_names, rest, blocks, block_reads = self._split_blocks(tuple(names), tuple(config))
        if any(n in coordinates() for n in rest_names):
            opts, reads = self.choice_options(rest_names, rest)
        else:
            opts, reads = self.options_for(rest), frozenset(rest_names)
        if blocks is not None:  # (the user's reassociation stays)
            blocks = dataclasses.replace(blocks, reassociate=self.opts.blocks.reassociate)
            opts, reads = dataclasses.replace(opts, blocks=blocks), reads | block_reads
        return Variant(tuple(config), tuple(names), opts, reads, lambda: generate(self.program, opts).text)

    def labels(self, space: SearchSpace) -> tuple[str, ...]:
        """The loop each tile size belongs to (i, j, k; 2t+i for a skewed member), as the band's schedule
        names it; where two bands have a loop of the same name, the parameter's name is added (i@s0b1).
        A schedule coordinate is labelled by its name."""
        names = {}
        for k, band in self.program.tunable_bands(self.opts.tile, self.opts.schedule):
            for m, loop in enumerate(member_names(band.schedule, band.members)):
                names[f"s{k}b{band.index}t{m}"] = loop
        loops = [names.get(n, n) for n in space.names]
        return tuple(lp if loops.count(lp) == 1 or n not in names else f"{lp}@{n[:n.rindex('t')]}"
                     for lp, n in zip(loops, space.names))

    def runner(self) -> CRunner:
        return CRunner(self.program, self.build)

    def report(self, runner, launch) -> dict:
        return {"schedule": self.opts.schedule}

    def describe_best(self, names: tuple[str, ...], config: Config) -> dict:
        """What `optimize` needs to emit the best variant: its tile sizes and, in the schedule space, its
        schedule choice (optimize --choice)."""
        opts = self.variant(names, config).build
        out = {"tile_sizes": list(opts.tile_sizes)}
        blocks = ["--blocks", blocks_text(opts.blocks)] if opts.blocks != Blocks() else []
        if opts.choice is not None:
            out["choice"] = opts.choice.to_record()
            out["optimize_args"] = (["--tile-sizes", ",".join(map(str, opts.tile_sizes))] if opts.tile_sizes else []) \
                + ["--choice", choice_text(opts.choice)] + blocks
        elif blocks:
            out["optimize_args"] = (["--tile-sizes", ",".join(map(str, opts.tile_sizes))] if opts.tile_sizes
                                    else []) + blocks
        if any(n in BLOCK_COORDINATES for n in names):
            out["blocks"] = dataclasses.asdict(opts.blocks)
        return out

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


def _built(future) -> Compiled | None:
    """The executable a pool's compile_only candidate built; None where it failed or its workers died (the
    re-run then compiles it itself, and says why where it fails again)."""
    try:
        value = future.result().value
    except (WorkerLost, CancelledError):
        return None
    return value if isinstance(value, Compiled) else None


def clear_verdict(cands: dict[str, list[float]], compared: dict[str, list[float]] | None = None) -> bool:
    """Whether the re-run's rounds so far decide what it reports, so that more rounds would not change it:
    every run of the candidate with the lowest median (the one kept) is faster than every run of each other
    candidate, and each program it is only *compared* with (the tile-only space's default) is entirely faster
    or entirely slower than it. Complete separation is the exact Mann-Whitney test at its extreme: for two
    equally fast programs, 3 rounds each separate one given way with probability 1/20 (4 rounds: 1/70)."""
    if not cands or any(not v for v in cands.values()):
        return False
    kept = min(cands, key=lambda k: statistics.median(cands[k]))
    lo, hi = min(cands[kept]), max(cands[kept])
    return all(min(v) > hi for k, v in cands.items() if k != kept) and \
        all(min(v) > hi or max(v) < lo for v in (compared or {}).values())


def choice_text(choice: ScheduleChoice) -> str:
    """*choice* as optimize's --choice takes it."""
    return ",".join(f"{k}={int(v) if isinstance(v, bool) else v}" for k, v in choice.to_record().items())


def member_names(schedule: str, members: int) -> list[str]:
    """Each band member's loop, from the band's partial schedule in isl notation
    (``[n] -> [{ S0[i, j] -> [(i)]; S1[i, j, k] -> [(i)] }, ...]``): the expression of the statement with the
    most loops (the shortest among those), e.g. ``k`` or ``2t+i``."""
    parts = re.findall(r"\{([^{}]*)\}", schedule)
    out = []
    for m in range(members):
        best = None
        for piece in (parts[m].split(";") if m < len(parts) else ()):
            mm = re.match(r"\s*\w+\[([^\]]*)\]\s*->\s*\[\((.*)\)\](?:\s*:[^;]*)?\s*$", piece)  # (: its domain)
            if not mm:
                continue
            depth = len([v for v in mm.group(1).split(",") if v.strip()])
            expr = mm.group(2).replace(" ", "")
            if best is None or (-depth, len(expr)) < best[0]:
                best = ((-depth, len(expr)), expr)
        out.append(best[1] if best else f"t{m}")
    return out


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


__all__ = ["CTarget", "MIN_CONFIRM_ROUNDS", "cache_sizes", "choice_config", "choice_of", "choice_parameters",
           "clear_verdict", "member_names", "model_seed"]
