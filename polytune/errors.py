"""Errors a user can cause. Each prints as one line: ``FILE:LINE: message``."""
from __future__ import annotations


class PolytuneError(Exception):
    """Base of all user-facing errors (bad input, unsupported construct, bad option)."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line

    def __str__(self) -> str:
        if self.file is not None and self.line is not None:
            return f"{self.file}:{self.line}: {self.message}"
        if self.file is not None:
            return f"{self.file}: {self.message}"
        return self.message


class UnsupportedError(PolytuneError):
    """The input is valid C but lies outside the polyhedral model."""


class ParseError(PolytuneError):
    """The input is not C that polytune can read (syntax error, missing endscop, ...)."""


class UsageError(PolytuneError):
    """A bad command-line option or API argument."""
