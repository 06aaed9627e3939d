"""Where optimize and tune write: checked before the work, written whole or not at all, one line on failure."""
from __future__ import annotations

import os
import tempfile

from .errors import UsageError


def check_output(path: str | None, inputs: tuple[str, ...] = (), force: bool = False) -> None:
    """Refuse an output path that cannot be written (a directory, a missing directory) or that names one of
    the *inputs* (the user's source would be overwritten) unless *force*. '-' (stdout) and None pass."""
    if path is None or path == "-":
        return
    if os.path.isdir(path):
        raise UsageError("the output path is a directory (give a file name)", path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UsageError(f"cannot write the output: directory {parent} does not exist", path)
    try:  # the output is written through a temporary file beside it (pipeline.write_atomically)
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=".polytune-", suffix=".tmp")
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise UsageError(f"cannot write the output: {e.strerror or e}", path) from None
    for src in inputs:
        if os.path.exists(path) and os.path.exists(src) and os.path.samefile(path, src) and not force:
            raise UsageError("the output would overwrite the input file (give another -o, or --force)", path)


def check_creatable(path: str | None, option: str, directory: bool = False) -> None:
    """Refuse, before any work, a path that a command creates at its end (with the directories above it, as
    ``--cache``, ``--plot`` and bench's ``--report OUT_DIR`` are made): a file where a directory is wanted or
    the reverse, or a place where nothing can be created (a missing parent under /proc, a read-only file system).
    None passes. Probed by creating and removing a temporary directory in the nearest existing ancestor."""
    if path is None:
        return
    if os.path.exists(path) and os.path.isdir(path) != directory:
        raise UsageError(f"{option}: {'not a directory' if directory else 'is a directory (give a file name)'}",
                         path)
    where = os.path.abspath(path if directory else os.path.dirname(os.path.abspath(path)))
    above = where
    while not os.path.exists(above):
        above = os.path.dirname(above)
    if not os.path.isdir(above):
        raise UsageError(f"{option}: cannot create {where}: {above} is not a directory", path)
    try:
        os.rmdir(tempfile.mkdtemp(dir=above, prefix=".polytune-"))
    except OSError as e:
        what = f"cannot create {where}" if above != where else f"cannot write in {where}"
        raise UsageError(f"{option}: {what}: {e.strerror or e}", path) from None


def write_output(path: str, text: str) -> None:
    """Write *text* to *path* atomically; an OS error (read-only file system, /proc) is one line."""
    from .pipeline import write_atomically
    try:
        write_atomically(path, text)
    except OSError as e:
        raise UsageError(f"cannot write the output: {e.strerror or e}", path) from None
