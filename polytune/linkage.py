"""C linkage for the user's own headers in C++ output (the CUDA target).

The CUDA target writes the user's file as CUDA C++, but the program's other sources stay C (PolyBench's
``polybench.c``, compiled by gcc): the functions they define have unmangled names, and ``polybench.h`` has
no ``extern "C"``. So in the CUDA output every ``#include`` of a header of the user's own (found through
the file's directory or a ``-I`` directory, not a system header) is wrapped in ``extern "C" { }``. Which
includes those are is read from the C preprocessor's line markers (flag 3: a system header), so
conditional includes and ``<polybench.h>`` found through ``-I`` are told apart the way the compiler does.
"""
from __future__ import annotations

import functools
import re
import shutil
import subprocess

MARKER = re.compile(r'^# (\d+) "((?:[^"\\]|\\.)*)"((?: \d)*)\s*$')


@functools.lru_cache(maxsize=64)
def user_header_lines(path: str, text: str, includes: tuple[str, ...] = (),
                      defines: tuple[str, ...] = ()) -> tuple[int, ...]:
    """Lines (1-based) of *path* whose ``#include`` brings in a header that is not a system header.
    *text* is the file's content (part of the cache key). Empty where the preprocessor fails."""
    cc = shutil.which("gcc") or shutil.which("cc") or shutil.which("cpp")
    if cc is None:
        return ()
    cmd = [cc, "-E", "-x", "c", *(f"-I{d}" for d in includes), *(f"-D{d}" for d in defines), path]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return ()
    if proc.returncode != 0:
        return ()
    return tuple(sorted(_included_from_main(proc.stdout, path)))


def _included_from_main(preprocessed: str, main: str) -> set[int]:
    lines: set[int] = set()
    stack: list[str] = []
    entered: tuple[str, bool] | None = None  # the header entered from the main file, whether a system one
    for ln in preprocessed.splitlines():
        m = MARKER.match(ln)
        if not m:
            continue
        number, name, flags = int(m.group(1)), m.group(2), m.group(3).split()
        if "1" in flags:
            if stack and stack[-1] == main:
                entered = (name, "3" in flags)
            stack.append(name)
        elif "2" in flags:
            while stack and stack[-1] != name:
                stack.pop()
            if name == main and entered is not None:
                if not entered[1]:
                    lines.add(number - 1)  # the marker gives the line after the #include
                entered = None
        elif not stack:
            stack.append(name)
    return lines


def wrap_c_headers(text: str, lines: tuple[int, ...]) -> list[tuple[int, int, str]]:
    """Replacements (for pipeline.splice) putting each of those include lines in ``extern "C" { }``."""
    src = re.split(r"(?<=\n)", text)
    out = []
    for n in lines:
        if 0 < n <= len(src) and src[n - 1].lstrip().startswith("#"):
            line = src[n - 1] if src[n - 1].endswith("\n") else src[n - 1] + "\n"
            out.append((n, n, 'extern "C" {  /* a C header of the program: C linkage in C++ */\n' + line + "}\n"))
    return out
