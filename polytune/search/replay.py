"""Replay recorded measurements as an ``evaluate`` function: deterministic tests, reports without hardware.

Records in JSON are a list (or ``{"records": [...]}``) of objects
``{"config": [16, 8], "times": [0.0012, 0.0011], "error": null, "detail": "", "compile_time": 0.0}``;
only ``config`` is required. A configuration that was not recorded measures as a RUNTIME failure with
detail ``"not recorded"`` instead of raising: a search on a partly recorded space (e.g. shortest-hop
stepping off the recorded grid) then treats it like any failed candidate and carries on.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from polytune.errors import UsageError
from polytune.measure.measurement import Config, ErrorKind, Measurement, from_record, to_record


def measurement_from_record(record: Mapping) -> Measurement:
    """Parse one JSON record (see the module docstring): ``polytune.measure.from_record``."""
    return from_record(record)


def measurement_to_record(measurement: Measurement) -> dict:
    """``polytune.measure.to_record``."""
    return to_record(measurement)


def save_records(path: str | Path, measurements: Iterable[Measurement]) -> None:
    """Write measurements in the format :meth:`ReplayEvaluator.from_json` reads."""
    records = [measurement_to_record(m) for m in measurements]
    Path(path).write_text(json.dumps(records, indent=1) + "\n")


class ReplayEvaluator:
    """``evaluate(config)`` answered from recorded times; counts the calls per configuration."""

    def __init__(self, records: Mapping[Sequence[int], Sequence[float] | Measurement]):
        self._table: dict[Config, Measurement] = {}
        for config, value in records.items():
            key = tuple(int(v) for v in config)
            if isinstance(value, Measurement):
                self._table[key] = value
            else:
                self._table[key] = Measurement(key, tuple(float(t) for t in value))
        self.calls: Counter[Config] = Counter()

    @classmethod
    def from_measurements(cls, measurements: Iterable[Measurement]) -> ReplayEvaluator:
        return cls({m.config: m for m in measurements})

    @classmethod
    def from_json(cls, path: str | Path) -> ReplayEvaluator:
        try:
            data = json.loads(Path(path).read_text())
            if isinstance(data, dict):
                data = data["records"]
            return cls.from_measurements(measurement_from_record(r) for r in data)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"cannot read recorded measurements: {exc}", file=str(path)) from None

    def __contains__(self, config: Sequence[int]) -> bool:
        return tuple(config) in self._table

    def evaluate(self, config: Sequence[int]) -> Measurement:
        key = tuple(int(v) for v in config)
        self.calls[key] += 1
        known = self._table.get(key)
        if known is None:
            return Measurement(key, error=ErrorKind.RUNTIME, detail="not recorded")
        return known

    __call__ = evaluate
