"""The one improvement test every strategy uses."""
from __future__ import annotations

import enum
import math
import statistics
import warnings
from dataclasses import dataclass

from polytune.measurement import Measurement


class Verdict(str, enum.Enum):
    BETTER = "better"
    INSIGNIFICANT = "insignificant"  # lower median, but not significantly / not beyond the threshold
    WORSE = "worse"  # failed, or median not lower


def improves(
    candidate: Measurement, incumbent: Measurement | None, alpha: float | None, threshold: float
) -> Verdict:
    """Does ``candidate`` beat ``incumbent``?

    It must have a lower median. When ``alpha`` is set and both have >= 2 run times that are not all
    identical, a one-sided Welch t-test must also give p < alpha. Otherwise (single runs, zero variance,
    no alpha) the median must beat the incumbent's by the relative ``threshold``:
    ``candidate < (1 - threshold) * incumbent``. Failed candidates never improve; any finite candidate
    improves on a failed or missing incumbent.
    """
    if not candidate.ok:
        return Verdict.WORSE
    if incumbent is None or not incumbent.ok:
        return Verdict.BETTER
    if not candidate.value < incumbent.value:
        return Verdict.WORSE
    new, old = candidate.times, incumbent.times
    if (
        alpha is not None
        and len(new) >= 2
        and len(old) >= 2
        and (statistics.variance(new) > 0 or statistics.variance(old) > 0)
    ):
        from scipy.stats import ttest_ind  # lazy: scipy is slow to import

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            p = float(ttest_ind(new, old, equal_var=False, alternative="less").pvalue)
        if not math.isnan(p):
            return Verdict.BETTER if p < alpha else Verdict.INSIGNIFICANT
    if candidate.value < (1.0 - threshold) * incumbent.value:
        return Verdict.BETTER
    return Verdict.INSIGNIFICANT


@dataclass(frozen=True)
class ImprovementTest:
    """:func:`improves` with a strategy's ``alpha`` and ``threshold`` fixed: the test a search moves by, and
    the one that decides, when the search stops, whether a measured configuration beats the incumbent."""

    alpha: float | None = None
    threshold: float = 0.0

    def __call__(self, candidate: Measurement, incumbent: Measurement | None) -> Verdict:
        return improves(candidate, incumbent, self.alpha, self.threshold)
