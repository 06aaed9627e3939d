"""The statistics of two samples of run times that the search and the re-measurements use: Welch's t test, the
exact Mann-Whitney rank test and the Hodges-Lehmann shift with its interval (below search/ and measure/,
which both use them)."""
from __future__ import annotations

import math
import statistics


def welch_p_less(a: list[float] | tuple[float, ...], b: list[float] | tuple[float, ...]) -> float:
    """One-sided Welch t-test: the p-value of "mean(a) < mean(b)" (scipy's ``ttest_ind(a, b, equal_var=False,
    alternative="less")``), in the standard library: importing scipy.stats cost seconds of every search (a third of
    the search time of one profiled tune)."""
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    if va + vb == 0:
        return math.nan
    t = (statistics.fmean(a) - statistics.fmean(b)) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / ((va * va / (len(a) - 1) if va else 0.0) + (vb * vb / (len(b) - 1) if vb else 0.0))
    tail = 0.5 * _betainc(df / 2, 0.5, df / (df + t * t))  # P(T > |t|) for T ~ Student(df)
    return tail if t < 0 else 1.0 - tail


def rank_p_less(a: list[float] | tuple[float, ...], b: list[float] | tuple[float, ...]) -> float:
    """Exact one-sided Mann-Whitney test: the p-value of "a's times tend to be lower than b's", the chance that a
    random split of the pooled times puts at most as many (a, b) pairs out of order (a >= b) as observed. A tie
    counts as out of order (conservative: never significant by ties). Small samples only (the count is a table
    of len(a) * len(b) entries per pair of sizes)."""
    n, m = len(a), len(b)
    u = sum(1 for x in a for y in b if x >= y)
    counts = _u_counts(n, m)
    return sum(counts[: u + 1]) / sum(counts)


def shift_interval(a: list[float] | tuple[float, ...], b: list[float] | tuple[float, ...],
                   level: float = 0.95) -> tuple[float, float, float]:
    """The shift of a over b: the Hodges-Lehmann estimate (the median of the pairwise differences a_i - b_j)
    and its distribution-free interval at *level* (the differences at the ranks the exact Mann-Whitney
    distribution gives: Bauer 1972), (low, estimate, high). A few outlying runs move neither, where a
    difference of means moves with every one. Samples too small for the level give an unbounded interval."""
    diffs = sorted(x - y for x in a for y in b)
    k = len(diffs)
    estimate = diffs[k // 2] if k % 2 else 0.5 * (diffs[k // 2 - 1] + diffs[k // 2])
    counts = _u_counts(len(a), len(b))
    total, below, c = sum(counts), 0, 0  # c: how many of the smallest (and largest) differences fall outside
    while below + counts[c] <= (1 - level) / 2 * total:
        below += counts[c]
        c += 1
    if c == 0:
        return -math.inf, estimate, math.inf
    return diffs[c - 1], estimate, diffs[k - c]


def _u_counts(n: int, m: int) -> list[int]:
    """How many orderings of n a's and m b's have exactly u pairs with the a after the b, for u = 0..n*m
    (f(n, m, u) = f(n - 1, m, u - m) + f(n, m - 1, u): the largest value is either an a, after all m b's, or a b)."""
    table: dict[tuple[int, int], list[int]] = {}
    for i in range(n + 1):
        for j in range(m + 1):
            if i == 0 or j == 0:
                table[i, j] = [1] + [0] * (i * j)
                continue
            row = [0] * (i * j + 1)
            for u, c in enumerate(table[i - 1, j]):
                row[u + j] += c
            for u, c in enumerate(table[i, j - 1]):
                row[u] += c
            table[i, j] = row
    return table[n, m]


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (Lentz's continued fraction, Numerical Recipes 6.4)."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    if x > (a + 1) / (a + b + 2):  # the fraction converges fast below this point: use the symmetry
        return 1.0 - _betainc(b, a, 1.0 - x)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)) / a
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-14:
            break
    return front * f


__all__ = ["rank_p_less", "shift_interval", "welch_p_less"]
