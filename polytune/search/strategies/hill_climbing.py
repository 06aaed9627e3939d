"""Hill climbing (Sec. 3.3): ``hill``, with its shortest-hop continuation and coordinate sweeps.

Coordinate-wise hill climbing over the neighbourhood of ``options.degree`` (see :mod:`polytune.search.space`);
``fit="best"`` evaluates the whole neighbourhood and moves to the best improving neighbour, ``fit="first"``
moves to the first improving one in the neighbourhood's order. With ``shortest_hop``, once it stops it continues
with moves of +-(the domain's shortest hop), within each domain's [min, max]. With ``sweep``, once it stops each
parameter in turn is swept through its whole domain (the others fixed); a significantly faster value becomes the
incumbent and the climb resumes from it, until a pass of sweeps moves nothing (``_sweep``). A failed seed is
still the starting point; any finite neighbour improves on it. Moves by ``alpha`` and ``threshold``.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass

from polytune.errors import UsageError
from polytune.measure.measurement import Config, Measurement
from polytune.search.budget import StopReason
from polytune.search.compare import ImprovementTest, Verdict
from polytune.search.evaluator import Evaluator
from polytune.search.space import SearchSpace
from polytune.search.strategies.base import Strategy, check_alpha, check_margin, stalled


@dataclass(frozen=True)
class HillOptions:
    """What ``hill`` reads of ``SearchOptions`` (the comments there say what each field does)."""

    degree: int = 1
    fit: str = "best"
    alpha: float | None = None
    threshold: float = 0.0
    shortest_hop: bool = False
    sweep: bool = False
    speculate: bool = True
    again: bool = True

    def __post_init__(self) -> None:
        if self.degree not in (1, 2, 3):
            raise UsageError(f"degree must be 1, 2 or 3, got {self.degree}")
        if self.fit not in ("best", "first"):
            raise UsageError(f"fit must be 'best' or 'first', got {self.fit!r}")
        check_alpha(self.alpha)
        check_margin("threshold", self.threshold)

    def move_test(self) -> ImprovementTest:
        return ImprovementTest(self.alpha, self.threshold)


def _climb(space: SearchSpace, ev: Evaluator, options: HillOptions, phase: str, hop: bool) -> StopReason:
    """Move through neighbourhoods until none improves (hill climbing, Sec. 3.3).

    Best fit needs the whole neighbourhood: one batch. While its last candidates are measured, timers left
    idle measure the neighbourhood of the best improving neighbour finished so far (the likely next step):
    speculation, an evaluation only if the next step asks for it (``Evaluator.stream``'s ``guess``). First
    fit reads in order, measuring ahead speculatively as far as there are workers."""
    while True:
        incumbent = ev.incumbent
        assert incumbent is not None
        neighbours = space.neighbours(incumbent.config, options.degree, hop=hop)
        ahead = ev.workers if options.fit == "first" else None
        guess = _next_step(space, ev, options, incumbent, hop) \
            if options.fit == "best" and options.speculate else None
        measured: list[Measurement] = []
        with closing(ev.stream(neighbours, phase, ahead, guess)) as results:
            for measurement in results:
                measured.append(measurement)
                if options.fit == "first" and ev.test(measurement, incumbent) is Verdict.BETTER:
                    break
        chosen, insignificant = _judge(ev, measured, incumbent)
        if chosen is None and options.again and incumbent.config not in ev.measured_again:
            # a lucky measurement of the incumbent would end the climb here: measure it again, judge again
            chosen, insignificant = _judge(ev, measured, ev.measure_again(incumbent, phase))
        if chosen is None:
            return stalled(options.alpha, insignificant)
        ev.accept(chosen, phase)


def _judge(ev: Evaluator, measured: list[Measurement], incumbent: Measurement) -> tuple[Measurement | None, bool]:
    """The fastest of *measured* that beats *incumbent* under the evaluator's test (None: none does), and
    whether one was faster in median but not significantly."""
    chosen: Measurement | None = None
    insignificant = False
    for measurement in measured:
        verdict = ev.test(measurement, incumbent)
        insignificant |= verdict is Verdict.INSIGNIFICANT
        if verdict is Verdict.BETTER and (chosen is None or measurement.value < chosen.value):
            chosen = measurement
    return chosen, insignificant


def _next_step(space: SearchSpace, ev: Evaluator, options: HillOptions, incumbent: Measurement,
               hop: bool) -> Callable[[list[Measurement]], Iterator[Config]]:
    """Best fit's guess of its next neighbourhoods from the neighbours finished so far: those of the
    improving ones, the fastest first (the fastest is where best fit moves if nothing faster finishes)."""

    def guess(finished: list[Measurement]) -> Iterator[Config]:
        better = [m for m in finished if ev.test(m, incumbent) is Verdict.BETTER]
        for m in sorted(better, key=lambda m: m.value):
            yield from space.neighbours(m.config, options.degree, hop=hop)

    return guess


def _sweep(space: SearchSpace, ev: Evaluator) -> bool:
    """One pass of coordinate sweeps from the incumbent: each parameter in turn through every value of its
    domain, the others fixed (one batch), moving to the fastest that beats the incumbent by the improvement
    test; whether it moved. A line search along each coordinate (Algorithm 9.2 tries one step each way): it
    crosses a plateau of neighbours that no single step tells apart (a row reduction's 64- to 1024-thread
    blocks, all within 3%) to a value several steps away that is measurably faster (32 threads)."""
    moved = False
    for k, param in enumerate(space.params):
        incumbent = ev.incumbent
        assert incumbent is not None
        line = [incumbent.config[:k] + (v,) + incumbent.config[k + 1:] for v in param.values
                if v != incumbent.config[k]]
        chosen: Measurement | None = None
        with closing(ev.stream(line, "sweep")) as results:
            for measurement in results:
                if ev.test(measurement, incumbent) is Verdict.BETTER and \
                        (chosen is None or measurement.value < chosen.value):
                    chosen = measurement
        if chosen is not None:
            ev.accept(chosen, "sweep")
            moved = True
    return moved


def hill(space: SearchSpace, ev: Evaluator, seed: Config | None, options: HillOptions) -> StopReason:
    """Climb from *seed* (the origin if None), then continue by shortest hops and sweeps where the options say."""
    ev.test = options.move_test()
    start = space.origin if seed is None else seed
    # best fit measures the seed's whole neighbourhood next, whatever the seed measures: it starts beside the seed
    ev.start(start, space.neighbours(start, options.degree) if options.fit == "best" and options.speculate else None)
    reason = _climb(space, ev, options, "hill", hop=False)
    if options.shortest_hop:
        reason = _climb(space, ev, options, "hop", hop=True)
    while options.sweep and _sweep(space, ev):  # a sweep that moved: climb from there, then sweep again
        reason = _climb(space, ev, options, "hill", hop=False)
    return reason


STRATEGY = Strategy(hill, HillOptions, climbs=True)
