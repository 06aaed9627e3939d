"""The rest of a user's program, as a compiler driver takes it: other sources, libraries, linker flags and the
program's arguments. The file with the regions is compiled once per variant; everything here is the same for
the original and every variant, so the other sources are compiled once per search (objects in the runner's
work directory, named by a hash of their content and compile command) and only linked per variant.
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import UsageError

OBJECT_SUFFIXES = (".o", ".a", ".so", ".obj")


@dataclass(frozen=True)
class Build:
    """What is compiled and linked with the file that holds the regions, and how the program is run."""

    sources: tuple[str, ...] = ()  # other C files, compiled unchanged with the same -I/-D, then linked
    objects: tuple[str, ...] = ()  # object files and archives, linked as they are
    libs: tuple[str, ...] = ()  # -l NAME
    lib_dirs: tuple[str, ...] = ()  # -L DIR
    ldflags: tuple[str, ...] = ()  # further linker flags (after the libraries)
    args: tuple[str, ...] = ()  # the program's command-line arguments: the original's and every variant's
    cwd: str | None = None  # the directory the program runs in (None: the runner's work directory)

    @classmethod
    def from_files(cls, files: Sequence[str], **kw) -> Build:
        """Sources and objects of a command line, told apart by their suffix; a missing one is the user's error."""
        sources, objects = [], []
        for f in files:
            if not os.path.isfile(f):
                raise UsageError("no such file", f)
            (objects if f.endswith(OBJECT_SUFFIXES) else sources).append(f)
        return cls(tuple(sources), tuple(objects), **kw)

    @property
    def empty(self) -> bool:
        return self == Build(cwd=self.cwd)

    def link_flags(self, objects: Sequence[str] = ()) -> list[str]:
        """What follows the main source on the link line: compiled objects, given objects, -L, -l, ldflags."""
        return [*objects, *self.objects, *(f"-L{d}" for d in self.lib_dirs), *(f"-l{n}" for n in self.libs),
                *self.ldflags]

    def fingerprint(self) -> dict:
        """What measurements depend on (for the measurement cache): contents, not names alone."""
        return {"sources": [_digest(p) for p in self.sources], "objects": [_digest(p) for p in self.objects],
                "libs": list(self.libs), "lib_dirs": list(self.lib_dirs), "ldflags": list(self.ldflags),
                "args": list(self.args)}


def _digest(path: str) -> str:
    h = hashlib.sha256(os.path.basename(path).encode() + b"\0")
    try:
        with open(path, "rb") as f:
            h.update(f.read())
    except OSError:
        pass
    return h.hexdigest()[:16]


def compile_objects(build: Build, command: Sequence[str], workdir: str) -> tuple[str, ...]:
    """Compile *build*'s sources with *command* (the compiler and its flags, without -c/-o) into *workdir*;
    an object whose content hash and command are unchanged is reused. A source that does not compile is
    the user's error: one line, the compiler's first error."""
    out = []
    os.makedirs(workdir, exist_ok=True)
    for src in build.sources:
        with open(src, "rb") as f:
            content = f.read()
        key = hashlib.sha256(content + b"\0" + "\0".join(command).encode() + b"\0" + src.encode()).hexdigest()[:16]
        stem = re.sub(r"[^\w.-]", "_", os.path.splitext(os.path.basename(src))[0])
        obj = os.path.join(workdir, f"{stem}-{key}.o")
        if not os.path.exists(obj):
            argv = [*command, "-c", src, "-o", obj + ".tmp"]
            try:
                proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
            except FileNotFoundError:
                raise UsageError(f"compiler not found: {command[0]}") from None
            except subprocess.TimeoutExpired:
                raise UsageError("the compiler timed out", src) from None
            if proc.returncode != 0:
                raise UsageError(f"does not compile with {command[0]}: {first_error(proc.stderr)}", src)
            os.replace(obj + ".tmp", obj)
        out.append(obj)
    return tuple(out)


def first_error(stderr: str) -> str:
    """The line of a compiler's or linker's output that says what went wrong (the linker's own message
    rather than collect2's summary)."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for pattern in (r"cannot find -l[^\s:]+", r"undefined reference to [`'][^`']+'", r"\berror\b"):
        for ln in lines:
            m = re.search(pattern, ln)
            if m and "collect2" not in ln and "ld returned" not in ln:
                return (m.group(0) if pattern != r"\berror\b" else ln)[:300]
    return (lines or ["compiler failed"])[0][:300]


__all__ = ["Build", "compile_objects", "first_error"]
