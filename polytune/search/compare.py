"""The one improvement test every strategy uses."""
from __future__ import annotations

import enum
import math
import statistics
from dataclasses import dataclass

from polytune.measure.measurement import Measurement
from polytune.stats import rank_p_less, welch_p_less


class Verdict(str, enum.Enum):
    BETTER = "better"
    INSIGNIFICANT = "insignificant"  # lower median, but not significantly / not beyond the threshold
    WORSE = "worse"  # failed, or median not lower


def improves(
    candidate: Measurement, incumbent: Measurement | None, alpha: float | None, threshold: float
) -> Verdict:
    """Does ``candidate`` beat ``incumbent``?

    It must have a lower median. When ``alpha`` is set and both have >= 2 run times that are not all
    identical, a one-sided Welch t-test must also give p < alpha, or, when it does not, the rank test must:
    the median beats the incumbent's by the relative ``threshold`` and the exact one-sided Mann-Whitney test
    gives p <= alpha (:func:`rank_p_less`). The t-test assumes normal times; one slow outlier (a timer's
    hiccup) inflates a side's variance and defeats it however large the gain, while ranks ignore how slow the
    outlier was: 3 runs all faster than the incumbent's 3 give p = 1/20. Otherwise (single runs, zero variance,
    no alpha) the median must beat the incumbent's by the relative ``threshold``:
    ``candidate < (1 - threshold) * incumbent``. Failed candidates never improve; any finite candidate
    improves on a failed or missing incumbent. (:func:`judge` gives the same verdict with its reason in words.)
    """
    return judge(candidate, incumbent, alpha, threshold).verdict


@dataclass(frozen=True)
class Judgement:
    """A verdict of :func:`improves` and the test that gave it, in words: *what* ("not significantly faster")
    and *test* ("Welch p=0.31, needs < 0.05; 3 and 3 runs")."""

    verdict: Verdict
    what: str
    test: str = ""

    def said(self, than: str) -> str:
        """"not significantly faster than the best (Welch p=0.31, needs < 0.05; 3 and 3 runs)"."""
        return f"{self.what} than {than}" + (f" ({self.test})" if self.test else "")


def judge(candidate: Measurement, incumbent: Measurement | None, alpha: float | None,
          threshold: float) -> Judgement:
    """:func:`improves`, step by step, with the reason of its verdict."""
    if not candidate.ok:
        return Judgement(Verdict.WORSE, "not faster", f"it has no time: "
                                                     f"{candidate.error.value if candidate.error else 'no runs'}")
    if incumbent is None or not incumbent.ok:
        return Judgement(Verdict.BETTER, "faster", "the other has no time")
    if not candidate.value < incumbent.value:
        return Judgement(Verdict.WORSE, "not faster", "its median is not lower")
    new, old = candidate.times, incumbent.times
    runs = f"{len(new)} and {len(old)} runs"
    beyond = candidate.value < (1.0 - threshold) * incumbent.value
    if (
        alpha is not None
        and len(new) >= 2
        and len(old) >= 2
        and (statistics.variance(new) > 0 or statistics.variance(old) > 0)
    ):
        p = welch_p_less(new, old)
        if not math.isnan(p):
            if p < alpha:
                return Judgement(Verdict.BETTER, "significantly faster", f"Welch p={p:.2g} < {alpha:g}; {runs}")
            rank = rank_p_less(new, old) if beyond else None
            if rank is not None and rank <= alpha:
                return Judgement(Verdict.BETTER, "significantly faster by ranks",
                                 f"Mann-Whitney p={rank:.2g} <= {alpha:g}, Welch p={p:.2g}; {runs}")
            ranks = f", Mann-Whitney p={rank:.2g}" if rank is not None else ""
            return Judgement(Verdict.INSIGNIFICANT, "not significantly faster",
                             f"Welch p={p:.2g}{ranks}, needs < {alpha:g}; {runs}")
    if alpha is None:
        how = "medians compared, no significance test"
    elif len(new) < 2 or len(old) < 2:
        how = f"medians compared: {runs} are too few for a significance test"
    else:
        how = f"medians compared: identical run times; {runs}"
    margin = f" by more than {threshold:.1%}" if threshold else ""
    if beyond:
        return Judgement(Verdict.BETTER, f"faster{margin}", how)
    return Judgement(Verdict.INSIGNIFICANT, f"not faster{margin}", how)


@dataclass(frozen=True)
class ImprovementTest:
    """:func:`improves` with a strategy's ``alpha`` and ``threshold`` fixed: the test a search moves by, and
    the one that decides, when the search stops, whether a measured configuration beats the incumbent."""

    alpha: float | None = None
    threshold: float = 0.0

    def __call__(self, candidate: Measurement, incumbent: Measurement | None) -> Verdict:
        return improves(candidate, incumbent, self.alpha, self.threshold)

    def explain(self, candidate: Measurement, incumbent: Measurement | None, than: str) -> str:
        """The verdict in words: "not significantly faster than *than* (Welch p=0.31, ...)"."""
        return judge(candidate, incumbent, self.alpha, self.threshold).said(than)
