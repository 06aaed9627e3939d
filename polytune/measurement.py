"""Moved to ``polytune.measure.measurement`` (kept for imports written before the move)."""
from __future__ import annotations

from .measure.measurement import Config, ErrorKind, Measurement, from_record, to_record

__all__ = ["Config", "ErrorKind", "Measurement", "from_record", "to_record"]
