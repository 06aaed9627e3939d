"""``SearchOptions``: every strategy's options in one flat object, the one ``TuneOptions`` and the command line
fill; each strategy reads its own part of it (``SearchOptions.of``)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from polytune.search.strategies import random_sampling
from polytune.search.strategies.base import OptionsT, Strategy
from polytune.search.strategies.registry import STRATEGIES


@dataclass(frozen=True)
class SearchOptions:
    """Knobs of the strategies: the union of their own options (each field is a field of the same name and
    default in the options of the strategies that read it; ``tests/test_search_strategies.py`` checks it)."""

    degree: int = 1  # hill: neighbourhood degree, 1..3
    fit: str = "best"  # hill: "best" or "first"
    alpha: float | None = None  # significance level of the improvement test; None: medians only
    threshold: float = 0.0  # relative margin a move must win by when no t-test applies
    shortest_hop: bool = False  # hill: continue with shortest-hop moves after converging
    sweep: bool = False  # hill: after converging, sweep each parameter through its whole domain (_sweep)
    eps: float = 1e-3  # coordesc: relative margin (Algorithm 9.2)
    samples: int | None = None  # random: sample size; None: from quantile and delta
    quantile: float = 0.05  # random: q of Prop. 9.3
    delta: float = 0.05  # random: failure probability of Prop. 9.3
    rng_seed: int = 0  # random: seed of the sampler
    speculate: bool = True  # hill, best fit: measure the likely next neighbourhood on idle timers (see _climb)
    # hill: before stopping where no neighbour beats the incumbent, measure the incumbent once more and judge
    # the neighbourhood against both measurements' times (a lucky first measurement does not end the climb)
    again: bool = True

    def __post_init__(self) -> None:
        for strategy in STRATEGIES.values():  # each strategy's options check their own fields (a UsageError)
            self.of(strategy)

    def of(self, strategy: Strategy[OptionsT]) -> OptionsT:
        """*strategy*'s own options, with this object's values."""
        values = asdict(self)
        return strategy.options(**{f.name: values[f.name] for f in fields(strategy.options)})

    def sample_count(self) -> int:
        """``samples``, or the N >= ln(1/delta)/q of Prop. 9.3 (``random``)."""
        return self.of(random_sampling.STRATEGY).sample_count()
