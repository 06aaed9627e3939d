"""One class per target: what the tuner asks of a target (its space, seeds, variants, runner), by name.

The registry maps the CLI's ``--target`` names to Target classes; a class is imported on first use, so the
CLI can list the names without importing islpy or a runner.
"""
from __future__ import annotations

import importlib

from ..errors import UsageError

_CLASSES = {"c": "c:CTarget", "cuda": "cuda:CudaTarget", "triton": "triton:TritonTarget"}
TARGET_NAMES = tuple(_CLASSES)


def get_target(name: str):
    """The Target class registered under *name* (a user error for an unknown name)."""
    if name not in _CLASSES:
        raise UsageError(f"unknown target '{name}' (choose from {', '.join(TARGET_NAMES)})")
    module, cls = _CLASSES[name].split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), cls)


__all__ = ["TARGET_NAMES", "get_target"]
