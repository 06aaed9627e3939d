"""Measuring variants: the ``Measurement`` value and its record, the ``Runner`` interface and one runner per
target (``c``, ``cuda``, ``triton``: import them from their modules), the persistent cache (``cache``)."""
from __future__ import annotations

from .measurement import Config, ErrorKind, Measurement, from_record, to_record
from .runner import Memo, Runner, Variant

__all__ = ["Config", "ErrorKind", "Measurement", "Memo", "Runner", "Variant", "from_record", "to_record"]
