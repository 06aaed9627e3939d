"""The records bench writes and report reads: a tuning run's spec and its compacted entry (no I/O)."""
from __future__ import annotations

import math
from dataclasses import dataclass

LABELS = {"gcc": "gcc -O3", "clang": "clang -O3", "polly": "Polly", "seed": "seed (tile 32)"}


@dataclass(frozen=True)
class StrategySpec:
    """One tuning run: a strategy and its knobs, written ``NAME[:MOD...]`` (label = the text).

    MODs: ``d1``/``d2``/``d3`` (neighbourhood degree), ``first``/``best`` (fit), ``hop`` (shortest hop),
    ``sweep`` (coordinate sweeps after converging), ``pluto``/``origin``/``model`` (seed), ``nNUM`` (random:
    sample size). ``hill:origin:d2`` is hill climbing from all-1 tiles with degree-2 neighbourhoods.
    """

    label: str
    strategy: str = "hill"
    fit: str = "best"
    degree: int = 1
    shortest_hop: bool = False
    seed: str = "pluto"
    samples: int | None = None
    sweep: bool = False


def _finite(v) -> float | None:
    return v if isinstance(v, (int, float)) and math.isfinite(v) else None


def tuning_entry(spec: StrategySpec, report: dict, wall: float) -> dict:
    """What the report needs of one tune() run (the measurements, compacted)."""
    evals = report["evaluations"]
    compiled = [e for e in evals if not e["cached"] and not str(e["detail"]).startswith("code generation")]
    ran = [e for e in compiled if e["error"] != "compile"]
    traj = [dict(s, median=_finite(s["median"])) for s in report["trajectory"]]
    return {
        "label": spec.label, "strategy": spec.strategy, "fit": spec.fit, "degree": spec.degree,
        "shortest_hop": spec.shortest_hop, "sweep": spec.sweep, "seed_kind": spec.seed, "samples": spec.samples,
        "space": report["space"], "original": report["original"], "seed": report["seed"], "best": report["best"],
        "speedup_over_seed": report["speedup_over_seed"], "evals": report["evals"],
        "iterations": traj[-1]["iteration"] if traj else 0, "stop_reason": report["stop_reason"],
        "search_time": report["search_time"], "wall": wall,
        "seed_eval_s": evals[0]["elapsed"] if evals else None,
        # the reference build and its runs, then one build per new configuration, and its verification
        # run plus timed runs
        "compilations": 1 + len(compiled),
        "runs": 1 + len(report["original"]["times"]) + sum(1 + len(e["times"]) for e in ran),
        "evaluations": [{"config": e["config"], "median": e["median"], "times": e["times"], "error": e["error"],
                         "phase": e["phase"], "elapsed": round(e["elapsed"], 4)} for e in evals],
        "trajectory": traj,
    }


SCANS = ("exhaustive", "random")


def found(t: dict) -> dict | None:
    """The configuration a tuning run delivers ({'config', 'median'}): hill climbing's and coordinate descent's
    final incumbent; for exhaustive and random search the lowest median they measured. (Their incumbent in
    tune() changes only on a significant improvement, so on a noisy surface it depends on the scan order.)"""
    if t["strategy"] not in SCANS:
        return t["best"] and {"config": t["best"]["config"], "median": t["best"]["median"]}
    ok = [e for e in t["evaluations"] if e["median"] is not None and math.isfinite(e["median"])]
    e = min(ok, key=lambda e: e["median"], default=None)
    return e and {"config": e["config"], "median": e["median"]}
