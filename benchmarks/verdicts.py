"""The ratio verdicts of the GPU benchmarks (cuda_matmul.py's program gain, gpu_targets.py's hill vs
exhaustive), one rule for both.

Two variants run in interleaved rounds, so round i's two times share its conditions: the ratio is the
geometric mean of the per-round ratios, with a 95% interval from Student's t on their logarithms.

The rule (``decide``): an interval wholly inside the tolerance band "holds", one wholly outside "does
not hold". Otherwise a verdict is given only where the interval resolves the tolerance, i.e. its
half-width (the larger of high/point and point/low, less 1) is at most the tolerance, else "undecided",
with the rounds that would resolve it at the measured spread; where resolved, the point estimate
decides: "holds" within the band, "does not hold" outside. The verdict can then be wrong only for a true
ratio within one interval width (<= the tolerance) of the band's edge.
"""
from __future__ import annotations

import math

_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def _t975(df: float) -> float:
    """The 97.5% quantile of Student's t with *df* degrees of freedom (a two-sided 95% interval)."""
    if df >= len(_T975):
        return 1.96 + 2.4 / df  # within 0.002 of the exact quantile from 30 on
    lo = max(1, int(math.floor(df)))
    return _T975[lo - 1]  # (rounding df down: the wider interval)


def paired_ratio(num: list[float], den: list[float]) -> dict:
    """num_i / den_i over the rounds both have (times > 0): {"ratio", "low", "high", "rounds"}; the interval
    is None below 2 rounds."""
    logs = [math.log(a / b) for a, b in zip(num, den) if a and b and a > 0 and b > 0]
    n = len(logs)
    if n == 0:
        return {"ratio": None, "low": None, "high": None, "rounds": 0}
    mean = sum(logs) / n
    if n < 2:
        return {"ratio": math.exp(mean), "low": None, "high": None, "rounds": n}
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (n - 1))
    half = _t975(n - 1) * sd / math.sqrt(n)
    return {"ratio": math.exp(mean), "low": math.exp(mean - half), "high": math.exp(mean + half), "rounds": n}


def decide(point: float | None, low: float | None, high: float | None, tolerance: float, rounds: int,
           upper_only: bool = False) -> dict:
    """The module's rule for a ratio that should be 1 within *tolerance* (*upper_only*: at most 1 + tolerance,
    any ratio below counts as holding): {"verdict", "resolution", "rounds_needed"}."""
    if point is None or low is None or high is None or point <= 0 or low <= 0:
        return {"verdict": "undecided", "resolution": None, "rounds_needed": None}
    resolution = max(high / point, point / low) - 1
    top, bottom = 1 + tolerance, 0.0 if upper_only else 1 - tolerance
    if bottom <= low and high <= top:
        return {"verdict": "holds", "resolution": resolution, "rounds_needed": None}
    if high < bottom or low > top:
        return {"verdict": "does not hold", "resolution": resolution, "rounds_needed": None}
    if resolution > tolerance:
        return {"verdict": "undecided", "resolution": resolution,
                "rounds_needed": math.ceil(rounds * (resolution / tolerance) ** 2)}
    inside = bottom <= point <= top
    return {"verdict": "holds" if inside else "does not hold", "resolution": resolution, "rounds_needed": None}


def verdict_text(d: dict) -> str:
    """*d*'s verdict (``decide``'s keys) for a table: an undecided one with the rounds that would tell."""
    verdict = d.get("verdict", "-")
    if verdict == "undecided" and d.get("rounds_needed"):
        width = f"+-{100 * d['resolution']:.1f}%: " if d.get("resolution") else ""
        verdict += f" ({width}about {d['rounds_needed']} rounds would tell)"
    return verdict
