"""Read a C file: run the real preprocessor, find the ``#pragma scop`` regions, parse each with pycparser.

The preprocessed text keeps gcc's line markers, so every node of the parsed region carries the line of the
*original* file, and the generated code can be spliced back into the original text by line numbers.
"""
from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from dataclasses import dataclass

from pycparser import c_ast, c_parser

from .errors import ParseError, PolytuneError, UsageError

_PRAGMA = re.compile(r"^\s*#\s*pragma\s+(scop|endscop)\b")
_MARKER = re.compile(r'^#\s*(?:line\s+)?(\d+)\s+"((?:[^"\\]|\\.)*)"')
_TYPEDEF = re.compile(r"\btypedef\b[^;{}]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*;")
_TYPEDEF_STRUCT = re.compile(r"\btypedef\s+(?:struct|union|enum)\b[^;]*?\}\s*([A-Za-z_]\w*)\s*;", re.DOTALL)
_REGION_FUNC = "__polytune_region"


@dataclass(frozen=True)
class Region:
    """One ``#pragma scop`` ... ``#pragma endscop`` region of the input file."""

    file: str
    begin_line: int  # line of '#pragma scop' in the original file (1-based)
    end_line: int  # line of '#pragma endscop'
    text: str  # preprocessed text between the pragmas, with line markers
    body: c_ast.Compound  # parsed region (statements between the pragmas)
    typedefs: tuple[str, ...]

    @property
    def source_hash(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:16]


def preprocess(path: str, includes: tuple[str, ...] = (), defines: tuple[str, ...] = (),
               cpp: str | None = None) -> str:
    """Run the system C preprocessor over *path*; keep line markers and pragmas."""
    cc = cpp or shutil.which("gcc") or shutil.which("cc") or shutil.which("cpp")
    if cc is None:
        raise UsageError("no C preprocessor found (need gcc, cc or cpp on PATH)")
    args = [cc, "-E"] if not cc.endswith("cpp") else [cc]
    args += [f"-I{d}" for d in includes] + [f"-D{d}" for d in defines] + [path]
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    except OSError as e:
        raise UsageError(f"cannot run the preprocessor {cc}: {e}") from None
    if proc.returncode != 0:
        raise _cpp_error(proc.stderr, path)
    return proc.stdout


def _cpp_error(stderr: str, path: str) -> PolytuneError:
    for line in stderr.splitlines():
        m = re.match(r"^(.*?):(\d+):(?:\d+:)?\s*(?:fatal )?error:\s*(.*)$", line)
        if m:
            return ParseError(f"preprocessor: {m.group(3)}", m.group(1), int(m.group(2)))
    first = stderr.strip().splitlines()[0] if stderr.strip() else "preprocessor failed"
    return ParseError(f"preprocessor: {first}", path)


def _same_file(marker_file: str, path: str, main_name: str | None) -> bool:
    return marker_file == path or (main_name is not None and marker_file == main_name)


def find_regions(path: str, pre: str) -> list[tuple[int, int, str, int]]:
    """Scan preprocessed text: (begin_line, end_line, region text with markers, first text line)."""
    regions: list[tuple[int, int, str, int]] = []
    cur_file, cur_line = path, 1
    main_name: str | None = None
    open_at: int | None = None
    buf: list[str] = []
    for raw in pre.splitlines():
        m = _MARKER.match(raw)
        if m:
            cur_line, cur_file = int(m.group(1)), m.group(2)
            if main_name is None:
                main_name = cur_file
            if open_at is not None:
                buf.append(raw)
            continue
        in_main = _same_file(cur_file, path, main_name)
        p = _PRAGMA.match(raw)
        if p and in_main:
            if p.group(1) == "scop":
                if open_at is not None:
                    raise ParseError("nested '#pragma scop' (the previous region is not closed)",
                                     path, cur_line)
                open_at = cur_line
                buf = [f'# {cur_line + 1} "{cur_file}"']
            else:
                if open_at is None:
                    raise ParseError("'#pragma endscop' without a matching '#pragma scop'", path, cur_line)
                regions.append((open_at, cur_line, "\n".join(buf) + "\n", open_at + 1))
                open_at = None
        elif open_at is not None:
            buf.append(raw)
        cur_line += 1
    if open_at is not None:
        raise ParseError("'#pragma scop' without a matching '#pragma endscop'", path, open_at)
    return regions


def _typedef_names(pre: str) -> tuple[str, ...]:
    names = set(_TYPEDEF.findall(pre)) | set(_TYPEDEF_STRUCT.findall(pre))
    return tuple(sorted(n for n in names if n not in _C_KEYWORDS))


_C_KEYWORDS = {"int", "char", "float", "double", "long", "short", "unsigned", "signed", "void", "const",
               "volatile", "struct", "union", "enum", "restrict", "static", "extern", "inline"}


def parse_region(path: str, text: str, typedefs: tuple[str, ...], begin_line: int) -> c_ast.Compound:
    """Parse a region's text as the body of a function; syntax errors become ParseError with file:line."""
    used = [t for t in typedefs if re.search(rf"\b{re.escape(t)}\b", text)]
    header = "".join(f"typedef int {t};\n" for t in used)
    src = f"{header}void {_REGION_FUNC}(void) {{\n{text}\n}}\n"
    parser = c_parser.CParser()
    try:
        ast = parser.parse(src, filename=path)
    except c_parser.ParseError as e:
        m = re.match(r"^(.*?):(\d+):(?:\d+:)?\s*(.*)$", str(e))
        if m and m.group(1) == path:
            raise ParseError(f"syntax error: {m.group(3)}", path, int(m.group(2))) from None
        raise ParseError(f"syntax error in the scop region: {e}", path, begin_line) from None
    except Exception as e:  # pycparser raises assorted errors on odd input
        raise ParseError(f"cannot parse the scop region: {e}", path, begin_line) from None
    for ext in ast.ext:
        if isinstance(ext, c_ast.FuncDef) and ext.decl.name == _REGION_FUNC:
            return ext.body
    raise ParseError("cannot parse the scop region", path, begin_line)  # pragma: no cover


def read_regions(path: str, includes: tuple[str, ...] = (), defines: tuple[str, ...] = ()) -> list[Region]:
    """All scop regions of *path*, in file order; raises PolytuneError with file:line on bad input."""
    try:
        with open(path, encoding="utf-8", errors="replace"):
            pass
    except OSError as e:
        raise UsageError(f"cannot read input: {e.strerror}", path) from None
    pre = preprocess(path, includes, defines)
    typedefs = _typedef_names(pre)
    out = []
    for begin, end, text, _ in find_regions(path, pre):
        body = parse_region(path, text, typedefs, begin)
        out.append(Region(path, begin, end, text, body, typedefs))
    return out
