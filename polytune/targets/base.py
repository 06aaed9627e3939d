"""What every target answers: the tuner asks a target, never which target it is."""
from __future__ import annotations

import os

from ..errors import UsageError
from ..measure.c import BuildConfig
from ..measure.measurement import Config, Measurement
from ..measure.measurer import Measurer
from ..measure.runner import Runner, Variant
from ..pipeline import OptimizeOptions, Program
from ..search import Parameter, SearchSpace, parse_domain


def _targets_with(kind: str) -> list[str]:
    from . import TARGET_NAMES, get_target
    return [n for n in TARGET_NAMES if kind in get_target(n).spaces]


class Target:
    """A program's tuning for one target. Subclasses give ``parameters``, ``named_seed``, ``variant`` and
    ``runner``; the rest has defaults that do nothing."""

    name = ""
    build_class = BuildConfig  # the build configuration its runner needs
    build_options = ("threads",)  # BuildConfig fields the CLI fills for this target (beyond the common ones)
    chooses_schedule = False  # implements choose_schedule (--schedule auto)
    spaces = ("tiles",)  # the search spaces it offers (tune --space); the first is the default
    gpu = False  # its candidates are timed on a GPU (a timer per GPU; compiles may run while one is timed)

    def __init__(self, program: Program, opts: OptimizeOptions, build: BuildConfig | None = None,
                 domain_cap: int = 512):
        self.program = program
        self.opts = opts  # the options every variant starts from (target, parallel, schedule, unroll-and-jam)
        self.build = build if build is not None else self.build_class()
        self.domain_cap = domain_cap

    @classmethod
    def default_output(cls, path: str) -> str:
        """Where `optimize` writes the program when no -o is given."""
        root, ext = os.path.splitext(path)
        return f"{root}.polytune{ext or '.c'}"

    # ---- the search space and where it starts ------------------------------------------------------
    def parameters(self) -> list[Parameter]:
        """The tuning parameters with their default domains."""
        raise NotImplementedError

    def extra_parameters(self, kind: str) -> list[Parameter]:
        """The parameters a space other than the default adds after parameters() (categorical ones)."""
        return []

    def space(self, domains: tuple[str, ...] = (), kind: str | None = None) -> SearchSpace:
        """parameters() with --domain specs applied (one for all, one per parameter, or NAME=SPEC), and
        the parameters of the space *kind* (tune --space) after them."""
        kind = kind or self.spaces[0]
        if kind not in self.spaces:
            raise UsageError(f"--space {kind} applies to the "
                             f"{', '.join(n for n in _targets_with(kind))} target only" if _targets_with(kind)
                             else f"unknown space '{kind}'")
        params = self.parameters()
        extra = self.extra_parameters(kind)
        if not params and not extra:
            raise UsageError("nothing to tune: no scop has a tilable band of two or more loops", self.program.path)
        specs = list(domains)
        # NAME: a parameter's name, or its label, as the progress lines and the summary name it (i=32 j=64)
        labels = self.labels(SearchSpace(tuple(params))) if any("=" in s for s in specs) else ()
        by_label = {lb: p.name for lb, p in zip(labels, params) if lb != p.name}
        named = {by_label.get(k, k): v for k, v in (s.split("=", 1) for s in specs if "=" in s)}
        plain = [s for s in specs if "=" not in s]
        unknown = set(named) - {p.name for p in params}
        if unknown:
            known = [f"{lb} ({p.name})" if lb != p.name else p.name for lb, p in zip(labels, params)]
            raise UsageError(f"--domain names unknown parameter(s) {', '.join(sorted(unknown))} "
                             f"(parameters: {', '.join(known)})")
        if len(plain) not in (0, 1, len(params)):
            raise UsageError(f"give one --domain for all parameters or one per parameter ({len(params)})")
        out = []
        for i, p in enumerate(params):
            spec = named.get(p.name) or (plain[0] if len(plain) == 1 else plain[i] if plain else None)
            out.append(Parameter(p.name, parse_domain(spec)) if spec else p)
        return SearchSpace(tuple(out) + tuple(extra))

    def seed(self, space: SearchSpace, how: str | tuple[int, ...] = "pluto") -> Config:
        """The starting configuration: explicit sizes, or a named seed (pluto: the target's default)."""
        n = len(space.params)
        if isinstance(how, tuple):
            if len(how) != n:
                raise UsageError(f"the seed needs {n} sizes, got {len(how)}")
            return how
        seed = self.named_seed(space, how)
        if seed is None:
            raise UsageError(f"unknown seed '{how}' (pluto, origin, model, or sizes like 32,16,8)")
        return seed

    def named_seed(self, space: SearchSpace, how: str) -> Config | None:
        """The seed called *how* (None: this target has none of that name)."""
        raise NotImplementedError

    def labels(self, space: SearchSpace) -> tuple[str, ...]:
        """A short name per parameter for progress lines and reports (default: the parameter's name)."""
        return space.names

    def launch_seed(self, runner: Runner, space: SearchSpace, measurer: Measurer,
                    seed: Config) -> tuple[Config, dict | None]:
        """A better start measured before the search (default: the seed itself, nothing to report), through the
        search's *measurer* (``submit(config)`` gives a future; a later evaluation of a configuration measured
        here is a free repeat)."""
        return seed, None

    # ---- variants and their measurement ------------------------------------------------------------
    def variant(self, names: tuple[str, ...], config: Config) -> Variant:
        raise NotImplementedError

    def runner(self) -> Runner:
        raise NotImplementedError

    def measured_texts(self) -> list[str]:
        """The program texts the runner builds for its measurements, where they differ from the variants'
        (for comparing outputs before and after a change)."""
        return []

    # ---- the report ---------------------------------------------------------------------------------
    def compiler(self) -> str:
        return " ".join(self.build.compile_cmd("FILE.c", "EXE"))

    def report(self, runner: Runner, launch: dict | None) -> dict:
        """Target-specific entries of the tuning report."""
        return {}

    def describe_best(self, names: tuple[str, ...], config: Config) -> dict | None:
        """What `optimize` needs to emit the best variant (the report's ``best_build``; None: nothing to say)."""
        return None

    def finish(self, runner: Runner, best: Measurement | None, names: tuple[str, ...]) -> None:
        """Called once the search is over (e.g. to remember the best launch configuration)."""

    def prebuild(self, runner: Runner, names: tuple[str, ...], workers) -> None:
        """Start building on the search's *workers* what ``confirm_best`` needs and the search never builds,
        so that it builds beside the search (default: nothing)."""

    def confirm(self, runner: Runner, seed: Measurement | None, best: Measurement | None,
                names: tuple[str, ...]) -> tuple[dict | None, list[str]]:
        """The best's gain over the seed re-measured as the user's program sees it, after the search (the
        GPU targets: the search timed kernels): (the report's program_gain entry or None, warnings)."""
        return None, []

    def starts(self, space: SearchSpace, seed: Config) -> list[tuple[str, Config]]:
        """Where a local search of *space* starts: the seed first, then the other configurations it measures
        before climbing from the fastest (search/phases.py). Default: the seed alone."""
        return [("seed", seed)]

    def confirm_best(self, runner: Runner, seed: Measurement | None, best: Measurement | None,
                     names: tuple[str, ...], starts: dict[str, Measurement], runs: int,
                     defines: tuple[str, ...] | None = None,
                     workers=None) -> tuple[dict | None, list[str], Measurement | None]:
        """``confirm``, and the configuration the tuner keeps: (the report's program_gain entry, warnings, the
        kept measurement). *defines*: the program's -D set for the re-run, where it is not the tuning's (the
        size the user runs). *workers*: the search's pool (``polytune.workers``), if any, for what the re-run
        builds. Default: ``confirm``'s verdict, the best kept whatever it says."""
        info, warnings = self.confirm(runner, seed, best, names)
        return info, warnings, best

    @classmethod
    def choose_schedule(cls, program: Program, build: BuildConfig, parallel: bool, unroll_jam: int):
        from . import TARGET_NAMES, get_target
        names = [n for n in TARGET_NAMES if get_target(n).chooses_schedule]
        raise UsageError(f"--schedule auto applies to the {', '.join(names)} target only")
