"""What every strategy is and shares: the registry's entry (:class:`Strategy`), the protocol of a strategy's own
options, and the helpers more than one strategy uses (``stalled``, ``scan``).

A strategy is one function ``run(space, ev, seed, options) -> StopReason`` in a module of its own, with its own
frozen options dataclass. It measures only through the :class:`Evaluator` ``ev`` (memoized, budget-enforced).
``seed`` is None when the caller gave none: local searches then start at the space's origin, sampling
strategies measure no seed. Every strategy decides whether a candidate becomes the incumbent with
:func:`polytune.search.compare.improves`, fixed by its options' ``move_test()``; failed measurements never do.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import closing
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from polytune.errors import UsageError
from polytune.measure.measurement import Config
from polytune.search.budget import StopReason
from polytune.search.compare import ImprovementTest, Verdict
from polytune.search.evaluator import Evaluator
from polytune.search.space import SearchSpace


class StrategyOptions(Protocol):
    """A strategy's own options: a frozen dataclass whose fields are ``SearchOptions`` fields of the same name
    and default (``SearchOptions.of`` picks them; ``__post_init__`` checks them, as a ``UsageError``)."""

    def move_test(self) -> ImprovementTest:
        """The test a candidate must pass to become the incumbent (also the one ``keep_best`` and the phases
        of ``search.phases`` judge by)."""
        ...


OptionsT = TypeVar("OptionsT", bound=StrategyOptions)


@dataclass(frozen=True)
class Strategy(Generic[OptionsT]):
    """A strategy as the registry (``strategies.registry.STRATEGIES``) holds it."""

    run: Callable[[SearchSpace, Evaluator, Config | None, OptionsT], StopReason]
    options: type[OptionsT]  # its own options: what it reads of SearchOptions
    climbs: bool  # it climbs from a start: over a schedule space it runs in phases (search.phases.LOCAL)


def check_alpha(alpha: float | None) -> None:
    """A significance level lies in (0, 1); None: medians only."""
    if alpha is not None and not 0 < alpha < 1:
        raise UsageError(f"alpha must lie in (0, 1), got {alpha}")


def check_margin(name: str, value: float) -> None:
    """A relative margin lies in [0, 1)."""
    if not 0 <= value < 1:
        raise UsageError(f"{name} must lie in [0, 1), got {value}")


def stalled(alpha: float | None, insignificant: bool) -> StopReason:
    """Why a local search stopped where no candidate beat the incumbent: ``no_significant_improvement`` where
    a t-test decides (``alpha``) and a candidate was faster in median but not significantly, else converged."""
    if alpha is not None and insignificant:
        return StopReason.NO_SIGNIFICANT_IMPROVEMENT
    return StopReason.CONVERGED


def scan(ev: Evaluator, configs: Iterable[Config], phase: str) -> StopReason:
    """Measure every config; each with a lower median than the incumbent replaces it (not a counted move).

    No significance test here: a scan does not decide where to go next, it reports the fastest
    configuration it measured (gating on a t-test kept a slower incumbent on gemver)."""
    ev.test = SCAN_TEST
    with closing(ev.stream(configs, phase)) as results:  # one batch: every configuration is needed
        for measurement in results:
            if ev.test(measurement, ev.incumbent) is Verdict.BETTER:
                ev.accept(measurement, phase, is_move=False)
    return StopReason.EXHAUSTED


SCAN_TEST = ImprovementTest(None, 0.0)  # the scans' move test: a lower median alone
