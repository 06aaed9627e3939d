"""Empirical search over integer and categorical parameters; sees only ``evaluate(config) -> Measurement``."""
from __future__ import annotations

from polytune.search.budget import Budget, BudgetExhausted, StopReason
from polytune.search.compare import Verdict, improves
from polytune.search.evaluator import EvalRecord, Evaluator, Step
from polytune.search.pool import MappedPool, Pool, SerialPool, ThreadPool
from polytune.search.replay import ReplayEvaluator
from polytune.search.space import Parameter, SearchSpace, parse_domain, pow2_domain
from polytune.search.strategies import STRATEGIES, SearchInterrupted, SearchOptions, SearchResult, run_search

__all__ = [
    "STRATEGIES",
    "Budget",
    "BudgetExhausted",
    "EvalRecord",
    "Evaluator",
    "MappedPool",
    "Parameter",
    "Pool",
    "ReplayEvaluator",
    "SearchInterrupted",
    "SearchOptions",
    "SearchResult",
    "SearchSpace",
    "SerialPool",
    "Step",
    "StopReason",
    "ThreadPool",
    "Verdict",
    "improves",
    "parse_domain",
    "pow2_domain",
    "run_search",
]
