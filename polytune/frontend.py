"""Read a C file: run the real preprocessor, find the ``#pragma scop`` regions, parse each with pycparser.

The preprocessed text keeps gcc's line markers, so every node of the parsed region carries the line of the
*original* file, and the generated code can be spliced back into the original text by line numbers.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

from pycparser import c_ast, c_parser

from .errors import ParseError, PolytuneError, UsageError
from .functions import Scope, file_scope
from .purity import inferred_pure

_PRAGMA = re.compile(r"^\s*#\s*pragma\s+(scop|endscop)\b")
_MARKER = re.compile(r'^#\s*(?:line\s+)?(\d+)\s+"((?:[^"\\]|\\.)*)"')
_TYPEDEF = re.compile(r"\btypedef\b[^;{}]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*;")
_TYPEDEF_STRUCT = re.compile(r"\btypedef\s+(?:struct|union|enum)\b[^;]*?\}\s*([A-Za-z_]\w*)\s*;", re.DOTALL)
_REGION_FUNC = "__polytune_region"
# the calls of two operands read as their minimum and maximum (macros and functions of those names alike)
MIN_MAX = frozenset({"min", "max", "MIN", "MAX"})


@dataclass(frozen=True)
class Region:
    """One ``#pragma scop`` ... ``#pragma endscop`` region of the input file."""

    file: str
    begin_line: int  # line of '#pragma scop' in the original file (1-based)
    end_line: int  # line of '#pragma endscop'
    text: str  # preprocessed text between the pragmas, with line markers
    body: c_ast.Compound  # parsed region (statements between the pragmas)
    typedefs: tuple[str, ...]
    float_scalars: dict = field(default_factory=dict)  # name -> "fp32"/"fp64": floating scalars in scope
    shared_params: tuple[str, ...] = ()  # the enclosing function's array/pointer parameters without restrict
    pure_functions: frozenset[str] = frozenset()  # declared __attribute__((pure/const)), named by --pure, or
    # defined in the file without side effects (purity.py)
    int_types: dict = field(default_factory=dict)  # name -> (bits, unsigned): integer scalars in scope
    # where the region begins (its own declarations, loop iterators among them, are read from its body)
    read_after: frozenset[str] = frozenset()  # names the program may read after the region (read_after)
    scalar_types: dict = field(default_factory=dict)  # name -> C type (c_spelling) of the scalars in scope
    typedef_words: dict = field(default_factory=dict)  # arithmetic typedef name -> its type's words
    array_types: dict = field(default_factory=dict)  # name -> C type of the elements of arrays in scope
    pointer_rows: frozenset[str] = frozenset()  # arrays in scope whose rows are pointers (pointer_row_arrays)
    dead_after: frozenset[str] = frozenset()  # scalars of the function that no code reads after the region
    scope: Scope | None = None  # the code around the region, for the source rewrites (rewrite/)
    prelude: tuple[str, ...] = ()  # declarations the rewrites put before the region's code (values read once)
    epilogue: tuple[str, ...] = ()  # statements the optimized code runs after the region (rewrite/swaps.py: a
    # pointer swap the loop no longer does); the original code, where a run-time check fails, does not
    notes: tuple[str, ...] = ()  # what the rewrites did that the user should hear of (one line each)
    auto: bool = False  # found by region detection (detect.py), not marked by '#pragma scop'
    prepared: bool = False  # the source rewrites have run (rewrite.prepare)

    @property
    def source_hash(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def preprocess(path: str, includes: tuple[str, ...] = (), defines: tuple[str, ...] = (),
               cpp: str | None = None) -> str:
    """Run the system C preprocessor over *path*; keep line markers and pragmas."""
    proc = _run_cpp(path, includes, defines, cpp)
    if proc.returncode != 0:
        raise _cpp_error(proc.stderr, path)
    return proc.stdout


def _run_cpp(path: str, includes: tuple[str, ...], defines: tuple[str, ...], cpp: str | None = None,
             extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    cc = cpp or shutil.which("gcc") or shutil.which("cc") or shutil.which("cpp")
    if cc is None:
        raise UsageError("no C preprocessor found (need gcc, cc or cpp on PATH)")
    args = [cc, "-E"] if not cc.endswith("cpp") else [cc]
    args += list(extra) + [f"-I{d}" for d in includes] + [f"-D{d}" for d in defines] + [path]
    try:
        # bytes that are not UTF-8 (a Latin-1 string literal) pass through unchanged, as in the file itself
        return subprocess.run(args, capture_output=True, text=True, encoding="utf-8", errors="surrogateescape",
                              timeout=120)
    except OSError as e:
        raise UsageError(f"cannot run the preprocessor {cc}: {e}") from None


_PROBE = "__polytune_probe_"
# An integer constant expression the preprocessor can evaluate: integer literals, operators, parentheses.
_CONSTANT = re.compile(r"(?:\s|[()+\-*/%<>=!&|^~?:]|0[xX][0-9a-fA-F]+[uUlL]*|[0-9]+[uUlL]*)*[0-9]"
                       r"(?:\s|[()+\-*/%<>=!&|^~?:]|0[xX][0-9a-fA-F]+[uUlL]*|[0-9]+[uUlL]*)*")


def macro_guards(path: str, text: str, spans: list[tuple[int, int]], includes: tuple[str, ...] = (),
                 defines: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """For each region (its '#pragma scop' and '#pragma endscop' lines), preprocessor lines that stop a
    compilation of the output in which a macro of the region has another integer value than when it was
    optimized: the generated code has the values of that run built in (loop bounds, tile counts), and
    the same file compiled with another -DN would compute something else, silently.

    Every identifier of the region's source text is expanded by the preprocessor right where the region
    starts (a probe line inserted after '#pragma scop', with the user's -I/-D); those that expand to an
    integer constant expression get `#if (NAME) != (VALUE)` / `#error ...`. The guards are checked the
    same way (they must pass on this very file), and dropped for the file if they do not."""
    lines = re.split(r"(?<=\n)", text) if text else []
    words: list[list[str]] = []
    for begin, end in spans:
        code = re.sub(r"/\*.*?\*/|//[^\n]*|\"(?:[^\"\\\n]|\\.)*\"", " ", "".join(lines[begin:end - 1]), flags=re.DOTALL)
        found = re.findall(r"\b[A-Za-z_]\w*\b", code)  # identifiers outside comments and strings
        words.append(sorted(set(found) - _C_KEYWORDS - _OTHER_KEYWORDS))

    def insert(per_region: list[list[str]]) -> str:
        out = list(lines)
        for (begin, _end), new in sorted(zip(spans, per_region), reverse=True):
            out[begin:begin] = new
        return "".join(out)

    probes = [[f"{_PROBE}{k} {w} {_PROBE}end\n" for w in ws] for k, ws in enumerate(words)]
    proc = _cpp_copy(path, insert(probes), includes, defines)
    if proc is None or proc.returncode != 0:
        return [() for _ in spans]
    values: list[list[str]] = [[] for _ in spans]  # per region, its words' expansions in order
    for m in re.finditer(rf"{_PROBE}(\d+) (.*?) ?{_PROBE}end", proc.stdout):
        values[int(m.group(1))].append(m.group(2).strip())
    guards: list[tuple[str, ...]] = []
    for ws, vs in zip(words, values):
        mine = []
        for w, v in zip(ws, vs if len(vs) == len(ws) else ws):
            if v != w and _CONSTANT.fullmatch(v):
                mine += [f"#if ({w}) != ({v})",
                         f'#error "polytune generated this code for {w} == {v}: run polytune optimize again '
                         f'with the -D values you compile with"', "#endif"]
        guards.append(tuple(mine))
    if any(guards):
        check = _cpp_copy(path, insert([[g + "\n" for g in gs] for gs in guards]), includes, defines)
        if check is None or check.returncode != 0:
            return [() for _ in spans]
    return guards


def _cpp_copy(path: str, text: str, includes: tuple[str, ...], defines: tuple[str, ...]):
    """Preprocess *text* as if it were the file at *path* (its directory searched for "quoted" includes)."""
    with tempfile.TemporaryDirectory(prefix="polytune-") as d:
        copy = os.path.join(d, os.path.basename(path))
        with open(copy, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
            f.write(text)
        try:
            return _run_cpp(copy, includes, defines, extra=("-iquote", os.path.dirname(os.path.abspath(path))))
        except (UsageError, subprocess.SubprocessError):
            return None


def _cpp_error(stderr: str, path: str) -> PolytuneError:
    for line in stderr.splitlines():
        m = re.match(r"^(.*?):(\d+):(?:\d+:)?\s*(?:fatal )?error:\s*(.*)$", line)
        if m:
            hint = " (give its directory with -I)" if m.group(3).endswith(": No such file or directory") else ""
            return ParseError(f"preprocessor: {m.group(3)}{hint}", m.group(1), int(m.group(2)))
    first = stderr.strip().splitlines()[0] if stderr.strip() else "preprocessor failed"
    return ParseError(f"preprocessor: {first}", path)


def _same_file(marker_file: str, path: str, main_name: str | None) -> bool:
    return marker_file == path or (main_name is not None and marker_file == main_name)


_SCALAR_TYPES = r"float|double|int|long|short|char|unsigned|signed|_Bool|size_t|ptrdiff_t|u?int\d+_t"
_FLOAT_TYPEDEF = re.compile(r"\btypedef\s+(?:const\s+)?((?:long\s+)?double|float)\s+([A-Za-z_]\w*)\s*;")
_INT_TYPEDEF = re.compile(r"\btypedef\s+(?:const\s+)?((?:(?:unsigned|signed|long|int|short|char)\s+)*"
                          r"(?:unsigned|signed|long|int|short|char))\s+([A-Za-z_]\w*)\s*;")
_UNSIGNED_64 = {"size_t", "uint64_t", "uintptr_t"}
_SIGNED_64 = {"ptrdiff_t", "int64_t", "intptr_t", "ssize_t"}


def int_type(words: list[str] | tuple[str, ...]) -> tuple[int, bool] | None:
    """(bits, unsigned) of an integer type named by its words (LP64: long is 64 bits), None if not one."""
    words = [w for w in words if w not in ("const", "static", "register", "volatile")]
    if not words or any(w in ("float", "double") for w in words):
        return None
    if len(words) == 1 and words[0] in _UNSIGNED_64 | _SIGNED_64:
        return 64, words[0] in _UNSIGNED_64
    if len(words) == 1 and (m := re.fullmatch(r"(u?)int(\d+)_t", words[0])):
        return max(32, int(m.group(2))), bool(m.group(1)) and int(m.group(2)) >= 32
    if not set(words) <= {"unsigned", "signed", "long", "int", "short", "char", "_Bool"}:
        return None
    unsigned = "unsigned" in words and "short" not in words and "char" not in words  # those promote to int
    return (64 if "long" in words else 32), unsigned


def declared_int_scalars(text: str) -> dict[str, tuple[int, bool]]:
    """The scalar variables declared with an integer type in (preprocessed) C text, the last declaration of
    each name winning: name -> (bits, unsigned) (`unsigned`, `size_t`, `uint32_t`, their typedefs...). The
    affine model is exact for unsigned arithmetic only where its values are not negative (extract checks)."""
    return {n: t for n, words in _declared_scalars(text).items() if (t := int_type(words)) is not None}


def declared_float_scalars(text: str) -> dict[str, str]:
    """The scalar variables declared with a floating type in (preprocessed) C text, the last declaration of
    each name winning: name -> "fp64" (double, long double, or a typedef of them) or "fp32" (float, or a
    typedef of it). A later declaration of the name with an integer type removes it; arrays, pointers and
    functions are left out. The GPU emitters need this to pass a scalar in its own precision (Triton types
    a Python float as fp32)."""
    out = {}
    for name, words in _declared_scalars(text).items():
        kind = "fp64" if "double" in words else "fp32" if "float" in words else None
        if kind:
            out[name] = kind
    return out


def _declared_scalars(text: str) -> dict[str, tuple[str, ...]]:
    """name -> the words of its type (typedefs resolved) for each scalar declared in *text*, the last
    declaration winning (arrays, pointers and functions remove the name)."""
    return {n: words for n, (words, array, _rows) in _declarations(text).items() if not array}


def declared_array_types(text: str) -> dict[str, str]:
    """name -> the C type (c_spelling) of the elements of each array or pointer declared in *text* with an
    arithmetic element type, the last declaration of each name winning (a scalar removes it)."""
    return {n: t for n, (words, array, _rows) in _declarations(text).items() if array and (t := c_spelling(words))}


def pointer_row_arrays(text: str) -> frozenset[str]:
    """The arrays declared in *text* whose rows are reached through pointers (`double **A`, `float *rows[8]`):
    each row may lie anywhere, so the span from the first row's first element to the last row's last holds
    them only where the rows follow each other in memory (poly/versioning.py checks that at run time)."""
    return frozenset(n for n, (_words, _array, rows) in _declarations(text).items() if rows)


def _declarations(text: str) -> dict[str, tuple[tuple[str, ...], bool, bool]]:
    """name -> (the words of its type, typedefs resolved; whether an array or a pointer; whether its rows are
    pointers: two stars or more, or a star and brackets) for each variable declared in *text* with an
    arithmetic type, the last declaration winning (a function removes the name).
    A declarator ends at a `,` or `;` outside parentheses, brackets and braces: an initializer may hold any
    of them (`unsigned i = (1)`, `int k = f(a, b)`); a `(` before any `=` is a function's (or a function
    pointer's) declarator."""
    aliases = typedef_words(text)
    types = "|".join([_SCALAR_TYPES] + [re.escape(n) for n in aliases])
    decl = re.compile(rf"\b(?:const\s+|static\s+|register\s+)*((?:{types})(?:\s+(?:{types}))*)\s+")
    starts_typed = re.compile(rf"(?:{types}|const|static)\b")
    out: dict[str, tuple[tuple[str, ...], bool, bool]] = {}
    pos = 0
    while (m := decl.search(text, pos)) is not None:
        words = tuple(" ".join(" ".join(aliases[w]) if w in aliases else w for w in m.group(1).split()).split())
        pos = m.end()
        if m.group(1).split()[0] == "typedef" or text[max(0, m.start() - 8):m.start()].rstrip().endswith("typedef"):
            continue  # the typedef itself declares a type, not a variable
        start, depth, init, k = m.end(), 0, False, m.end()
        while k <= len(text):
            ch = text[k] if k < len(text) else ";"
            if depth:
                depth += (ch in "([{") - (ch in ")]}")
            elif ch == "=" and text[k + 1:k + 2] != "=":
                init = True
            elif ch in "[" or ch in "({" and init:
                depth = 1
            elif ch in ",;(){}":
                d = text[start:k].strip()
                if starts_typed.match(d):
                    pos = start  # the next parameter of a list: the next search handles it
                    break
                n = re.match(r"(\*[\s*]*(?:(?:const|restrict|__restrict|__restrict__|volatile)\b[\s*]*)*)?"
                             r"([A-Za-z_]\w*)\s*(\[)?", d)
                if n and ch != "(":
                    stars = (n.group(1) or "").count("*")
                    out[n.group(2)] = (words, bool(n.group(1) or n.group(3)), stars >= 2 or bool(stars and n.group(3)))
                elif n:
                    out.pop(n.group(2), None)  # a function
                if ch != ",":
                    pos = k  # a function's parameters (after its '(') are read by the next search
                    break
                start, init = k + 1, False
            k += 1
    return out


_STDINT = {"size_t": ("unsigned", "long"), "uintptr_t": ("unsigned", "long"), "ptrdiff_t": ("long",),
           "intptr_t": ("long",), "ssize_t": ("long",), "int8_t": ("signed", "char"), "uint8_t": ("unsigned", "char"),
           "int16_t": ("short",), "uint16_t": ("unsigned", "short"), "int32_t": ("int",),
           "uint32_t": ("unsigned", "int"), "int64_t": ("long",), "uint64_t": ("unsigned", "long")}


def typedef_words(text: str) -> dict[str, tuple[str, ...]]:
    """The typedefs of integer and floating types in (preprocessed) C text: name -> the words of its type
    (`typedef unsigned long idx_t;` -> ("unsigned", "long")); the <stdint.h>/<stddef.h> names are known
    without their headers."""
    out = dict(_STDINT)
    out.update({name: tuple(base.split()) for base, name in _FLOAT_TYPEDEF.findall(text) + _INT_TYPEDEF.findall(text)})
    return out


def c_spelling(words: list[str] | tuple[str, ...]) -> str | None:
    """The C type named by *words* (typedefs resolved, <stdint.h> names known) in one spelling: what a
    generated cast prints (`unsigned int`, `short`, `signed char`, `unsigned long`, `double`); None if not
    an arithmetic type."""
    words = [w for w in words if w not in ("const", "static", "register", "volatile")]
    if len(words) == 1 and words[0] in _STDINT:
        words = list(_STDINT[words[0]])
    if "double" in words or "float" in words:
        return "long double" if "double" in words and "long" in words else "double" if "double" in words \
            else "float"
    if not words or not set(words) <= {"unsigned", "signed", "long", "int", "short", "char", "_Bool"}:
        return None
    if "_Bool" in words:
        return "_Bool"
    base = "char" if "char" in words else "short" if "short" in words else "long" if "long" in words else "int"
    if "unsigned" in words:
        return f"unsigned {base}"
    return "signed char" if base == "char" and "signed" in words else base


def find_regions(path: str, pre: str) -> list[tuple[int, int, str, int]]:
    """Scan preprocessed text: (begin_line, end_line, region text with markers, index of the region's
    '#pragma scop' among the preprocessed lines)."""
    regions: list[tuple[int, int, str, int]] = []
    cur_file, cur_line = path, 1
    main_name: str | None = None
    open_at: int | None = None
    buf: list[str] = []
    for index, raw in enumerate(pre.splitlines()):
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
                open_at, open_index = cur_line, index
                buf = [f'# {cur_line + 1} "{cur_file}"']
            else:
                if open_at is None:
                    raise ParseError("'#pragma endscop' without a matching '#pragma scop'", path, cur_line)
                regions.append((open_at, cur_line, "\n".join(buf) + "\n", open_index))
                open_at = None
        elif open_at is not None:
            buf.append(raw)
        cur_line += 1
    if open_at is not None:
        raise ParseError("'#pragma scop' without a matching '#pragma endscop'", path, open_at)
    return regions



def _typedef_names(pre: str) -> tuple[str, ...]:
    names = set(_TYPEDEF.findall(pre)) | set(_TYPEDEF_STRUCT.findall(pre))
    for m in re.finditer(r"\btypedef\s+(?:struct|union|enum)\b[^;{]*\{", pre):  # a body with ';' inside
        depth, k = 1, m.end()
        while depth and k < len(pre):
            depth += (pre[k] == "{") - (pre[k] == "}")
            k += 1
        name = re.match(r"\s*([A-Za-z_]\w*)\s*;", pre[k:k + 200])
        if name:
            names.add(name.group(1))
    return tuple(sorted(n for n in names if n not in _C_KEYWORDS))


_C_KEYWORDS = {"int", "char", "float", "double", "long", "short", "unsigned", "signed", "void", "const",
               "volatile", "struct", "union", "enum", "restrict", "static", "extern", "inline"}
_OTHER_KEYWORDS = {"for", "if", "else", "while", "do", "return", "break", "continue", "sizeof", "goto",
                   "switch", "case", "default", "pragma"}


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
        detail = str(e).removeprefix(f"{path}:").strip()  # pycparser names the file without a line
        raise ParseError(f"syntax error in the scop region: {detail}", path, begin_line) from None
    except Exception as e:  # pycparser raises assorted errors on odd input
        raise ParseError(f"cannot parse the scop region: {e}", path, begin_line) from None
    others = ast.ext[len(used):]
    if len(others) != 1 or not (isinstance(others[0], c_ast.FuncDef) and others[0].decl.name == _REGION_FUNC):
        # the region's text closed its function's body and went on with more declarations (an endscop
        # in the next function): parsed in the wrapper, everything after the first '}' would be lost
        where = next((_line(x, begin_line) for x in others[1:]), begin_line)
        raise ParseError("the scop region crosses a function boundary ('#pragma endscop' is not in the "
                         "function of its '#pragma scop')", path, where)
    return others[0].body


def _line(node: c_ast.Node, default: int) -> int:
    coord = getattr(node, "coord", None)
    return coord.line if coord is not None and coord.line else default


_LOOP_WORD = re.compile(r"\b(?:for|while|do)\b")


def straight_line(text: str) -> bool:
    """Whether a region's text holds statements but no loop: nothing a schedule can improve (issue 33: 1,000
    such statements took minutes in the dependence analysis, and pycparser alone takes seconds on 10,000)."""
    code = "".join(line for line in text.splitlines(keepends=True) if not _MARKER.match(line))
    return ";" in code and not _LOOP_WORD.search(code)


def read_source(path: str, includes: tuple[str, ...] = (), defines: tuple[str, ...] = ()) -> str:
    """The preprocessed text of *path*; UsageError where it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace"):
            pass
    except OSError as e:
        raise UsageError(f"cannot read input: {e.strerror}", path) from None
    return preprocess(path, includes, defines)


def read_regions(path: str, includes: tuple[str, ...] = (), defines: tuple[str, ...] = (),
                 pure: tuple[str, ...] = (), straight: list[tuple[int, int]] | None = None,
                 pre: str | None = None) -> list[Region]:
    """All scop regions of *path*, in file order; raises PolytuneError with file:line on bad input. *pure*:
    functions the user says have no side effects (besides those declared so in the file). *straight*: where
    given, the regions without a loop (straight_line) are not parsed nor returned; their (begin, end) lines
    are appended to it. *pre*: the preprocessed text where the caller has it (read_source)."""
    if pre is None:
        pre = read_source(path, includes, defines)
    typedefs = _typedef_names(pre)
    out = []
    lines = pre.splitlines(keepends=True)
    pure_functions = declared_pure(pre) | frozenset(pure)
    found = find_regions(path, pre)
    loops = [f for f in found if straight is None or not straight_line(f[2])]
    if straight is not None:
        straight += [(begin, end) for begin, end, text, _at in found if straight_line(text)]
    funcs, decls, members = file_scope(pre, path, typedefs) if loops else ([], {}, {})
    pure_functions |= inferred_pure((f.ast for f in funcs if f.ast is not None), pure_functions)
    avoid = frozenset(_NAME.findall(pre))
    for begin, end, text, at in loops:
        body = parse_region(path, text, typedefs, begin)
        around = next((f for f in funcs if f.ast is not None and _spans(f, begin)), None)
        code_scope = Scope(around.ast if around else None, decls, tuple(f.ast for f in funcs if f.ast is not None),
                           members, avoid, tuple(f.name for f in funcs if f.ast is None))
        upto = "".join(line for line in lines[:at] if not _MARKER.match(line))
        check_declared(body, upto, path, begin)
        after = "".join(line for line in lines[at + text.count("\n") + 1:] if not _MARKER.match(line))
        floats, ints, spelled, words, arrays = scalars_in_scope(upto, pre)
        live = read_after(upto, after)
        out.append(Region(path, begin, end, text, body, typedefs, floats, unrestricted_params(upto, typedefs, pre),
                          pure_functions, ints, live, spelled, words, arrays, pointer_row_arrays(in_scope(upto)),
                          dead_after(upto, live), scope=code_scope))
    return out


def scalars_in_scope(upto: str, pre: str) -> tuple[dict, dict, dict, dict, dict]:
    """The scalars and arrays declared in scope at the end of *upto* (the preprocessed text before a region; the
    region's own declarations are read from its body): Region's float_scalars, int_types and scalar_types, the
    arithmetic typedefs of the file *pre* (typedef_words), and array_types."""
    scope = in_scope(upto)
    scalars = _declared_scalars(scope)
    return (declared_float_scalars(scope), {n: t for n, w in scalars.items() if (t := int_type(w)) is not None},
            {n: t for n, w in scalars.items() if (t := c_spelling(w)) is not None}, typedef_words(pre),
            declared_array_types(scope))


def _spans(f, line: int) -> bool:
    """Whether function *f*'s body holds original line *line*."""
    return f.begin_line <= line <= f.end_line
class _Names(c_ast.NodeVisitor):
    """The variables a region reads or writes (ID nodes, not the names of called functions or struct fields),
    in order, and the names it declares itself."""

    def __init__(self) -> None:
        self.used: list[c_ast.ID] = []
        self.declared: set[str] = set()

    def visit_Decl(self, node: c_ast.Decl) -> None:
        if node.name:
            self.declared.add(node.name)
        self.generic_visit(node)

    def visit_ID(self, node: c_ast.ID) -> None:
        self.used.append(node)

    def visit_FuncCall(self, node: c_ast.FuncCall) -> None:
        if node.args is not None:
            self.visit(node.args)

    def visit_StructRef(self, node: c_ast.StructRef) -> None:
        self.visit(node.name)


def check_declared(body: c_ast.Compound, upto: str, path: str, begin: int) -> None:
    """Refuse a region that uses a variable declared nowhere before it (C declares before use): one line,
    instead of an output that then fails in the compiler. A name that occurs anywhere in the preprocessed text
    before the region passes (its headers too: the check never refuses a declared name, and leaves the rest
    to the compiler)."""
    names = _Names()
    names.visit(body)
    before = set(_NAME.findall(_LITERALS.sub('""', upto)))
    for node in names.used:
        if node.name not in before and node.name not in names.declared:
            raise ParseError(f"'{node.name}' is not declared (the scop uses it, and nothing before declares it)",
                             path, _line(node, begin))


_LITERALS = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')


def in_scope(upto: str) -> str:
    """The part of (preprocessed) C text *upto* whose declarations are still in scope at its end: the
    blocks closed before it (other functions' bodies, finished inner blocks) and the parenthesized groups
    at file scope (prototypes' parameters) are left out, but the enclosing function's own parameters."""
    text = _LITERALS.sub('""', upto)
    buf: list[str] = []
    opened: list[int] = []
    pos = 0
    for m in re.finditer(r"[{}]", text):
        buf.append(text[pos:m.start()])
        pos = m.end()
        if m.group(0) == "{":
            opened.append(len(buf))
            buf.append("{")
        elif opened:
            del buf[opened.pop():]
            buf.append("{}")
    buf.append(text[pos:])
    head = "".join(buf[:opened[0]]) if opened else "".join(buf)
    body = "".join(buf[opened[0]:]) if opened else ""
    close = head.rfind(")") if opened else -1  # the enclosing function's header ends the file-scope text
    keep = _opening(head, close) if close >= 0 else len(head)
    out, depth = [], 0
    for ch in head[:keep]:  # each group becomes "()"
        depth += ch == "("
        if depth == 0 or depth == 1 and ch == "(":
            out.append(ch)
        depth = max(0, depth - (ch == ")"))
        if depth == 0 and ch == ")":
            out.append(ch)
    return "".join(out) + head[keep:] + _open_loops(body)


def _open_loops(body: str) -> str:
    """*body* (a function's text with its closed blocks emptied) without the headers of the `for` loops
    that ended before its end: their iterators' declarations are out of scope."""
    out, pos = [], 0
    for m in re.finditer(r"\bfor\s*\(", body):
        if m.start() < pos:
            continue
        depth, k = 1, m.end()
        while k < len(body) and depth:
            depth += (body[k] == "(") - (body[k] == ")")
            k += 1
        rest = body[k:].lstrip()
        if not rest.startswith("{") or rest.startswith("{}"):
            out.append(body[pos:m.start()])
            pos = k
    return "".join(out) + body[pos:]


def _opening(text: str, close: int) -> int:
    """The position of the '(' that the ')' at *close* closes."""
    depth = 0
    for k in range(close, -1, -1):
        depth += (text[k] == ")") - (text[k] == "(")
        if depth == 0:
            return k
    return 0


_NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def read_after(upto: str, after: str) -> frozenset[str]:
    """The names the program may read after the region, before it assigns them (preprocessed text before
    and after the region): in the rest of the enclosing function, a name whose first occurrence is not
    `name = ...` (or a `for (name = ...)`); a global (declared at file scope, not in the enclosing
    function) that another function reads without declaring its own. Loop iterators among them would need
    their exit values, which the optimized code does not compute."""
    before, rest = _LITERALS.sub('""', upto), _LITERALS.sub('""', after)
    start, depth = _function_start(before)
    end, d = len(rest), depth
    for m in re.finditer(r"[{}]", rest):
        d += 1 if m.group(0) == "{" else -1
        if d <= 0:
            end = m.start()
            break
    function, outside = rest[:end], before[:start] + rest[end + 1:]
    header = before[:start][before[:start].rfind(";") + 1:]  # the function's header: its parameters
    local = set(_declared_scalars(header + before[start:])) | set(_NAME.findall(header))
    live = set()
    seen = set()
    for m in _NAME.finditer(function):
        name = m.group(0)
        if name in seen:
            continue
        seen.add(name)
        assigned = re.match(r"\s*=(?!=)", function[m.end():]) and not re.search(r"[\w\]).>*&]\s*$|->\s*$",
                                                                              function[:m.start()])
        if not assigned:
            live.add(name)
    file_scope, bodies = _top_level(outside)
    globals_ = set(_NAME.findall(file_scope)) - local
    for head, body in bodies:  # another function (or initializer) that reads a global of that name
        own = set(_NAME.findall(head)) | set(_declared_scalars(body))
        live |= (set(_NAME.findall(body)) & globals_) - own
    return frozenset(live)


def _function_start(before: str) -> tuple[int, int]:
    """Where the enclosing function's body starts in *before* (C text up to the region, literals blanked): its
    last '{' at file scope; with the brace depth at the end of *before*."""
    depth, start = 0, 0
    for m in re.finditer(r"[{}]", before):
        if m.group(0) == "{" and depth == 0:
            start = m.start()
        depth += 1 if m.group(0) == "{" else -1
    return start, depth


def dead_after(upto: str, live: frozenset[str]) -> frozenset[str]:
    """The scalars declared in the enclosing function's body before the region (C text *upto*) that no code
    reads after it: not in *live* (read_after's), and named before the region only in their declaration,
    without an initializer (so that in a loop around the region no earlier statement of the next trip reads
    the value the region left; a read of it inside the region before its write there is the dependence
    analysis' to see)."""
    before = _LITERALS.sub('""', upto)
    body = before[_function_start(before)[0]:]
    out = set()
    for name in _declared_scalars(body):
        uses = [m for m in _NAME.finditer(body) if m.group(0) == name]
        if name not in live and len(uses) == 1 and not re.match(r"\s*=(?!=)", body[uses[0].end():]):
            out.add(name)
    return frozenset(out)


def _top_level(text: str) -> tuple[str, list[tuple[str, str]]]:
    """C text at file scope split into its file-scope part (parenthesized groups left out: parameters) and
    its top-level `{...}` blocks, each with the file-scope text before it back to the previous `;` or
    block (a function's header)."""
    scope, blocks, depth, pos, opened = [], [], 0, 0, 0
    for m in re.finditer(r"[{}]", text):
        if m.group(0) == "{":
            if depth == 0:
                scope.append(text[pos:m.start()])
                opened = m.start()
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                head = scope[-1][scope[-1].rfind(";") + 1:] if scope else ""
                blocks.append((head, text[opened + 1:m.start()]))
                pos = m.end()
    scope.append(text[pos:] if depth == 0 else "")
    out, depth = [], 0
    for ch in "".join(scope):
        depth += ch == "("
        if depth == 0:
            out.append(ch)
        depth = max(0, depth - (ch == ")"))
    return "".join(out), blocks


_PURE_WORD = re.compile(r"\b(?:__)?(?:pure|const)(?:__)?\b")
_ATTRIBUTE = re.compile(r"\b__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)")


def declared_pure(pre: str) -> frozenset[str]:
    """Functions declared `__attribute__((pure))` or `__attribute__((const))` (or `__pure__`, `__const__`) in
    preprocessed text: they have no side effects, so a call is a read of its arguments. pycparser does not
    read attributes, so the declarations are found in the text: the declaration around each such attribute
    (from the previous `;`, `{` or `}` to the next `;` or `{`), attributes removed, names the function
    before its first parenthesis."""
    out = set()
    for m in _ATTRIBUTE.finditer(pre):
        if not _PURE_WORD.search(m.group(0)):
            continue
        start = max(pre.rfind(c, 0, m.start()) for c in ";{}") + 1
        ends = [k for k in (pre.find(";", m.end()), pre.find("{", m.end())) if k >= 0]
        decl = _ATTRIBUTE.sub(" ", pre[start:min(ends) if ends else len(pre)])
        decl = "\n".join(line for line in decl.splitlines() if not _MARKER.match(line))
        name = re.search(r"\b([A-Za-z_]\w*)\s*\(", decl)
        if name and name.group(1) not in _C_KEYWORDS | _OTHER_KEYWORDS:
            out.add(name.group(1))
    return frozenset(out)


_FUNC_HEAD = re.compile(r"\b([A-Za-z_]\w*)\s*\(((?:[^()]|\([^()]*\))*)\)\s*\{")


def unrestricted_params(upto: str, typedefs: tuple[str, ...], pre: str | None = None) -> tuple[str, ...]:
    """The array and pointer parameters, not declared `restrict`, of the function whose body the region
    is in (the last function header before it in the preprocessed text), that some caller may pass
    overlapping memory (`smooth(A, A)`). With the whole translation unit *pre*, a `static` function whose
    name is used only in calls keeps only the parameters that some call passes an argument that may overlap
    another's (`_overlapping`); otherwise (not static: a caller elsewhere could) all of them. Empty when the
    header cannot be found or read."""
    heads = [m for m in _FUNC_HEAD.finditer(upto) if m.group(1) not in _OTHER_KEYWORDS]  # not `if (..) {`
    if not heads:
        return ()
    params = heads[-1].group(2)
    prelude = "".join(f"typedef int {t};\n" for t in typedefs)
    try:
        ast = c_parser.CParser().parse(prelude + f"void polytune_f({params});")
    except Exception:  # noqa: BLE001 - a header we cannot read: no warning rather than a failure
        return ()
    decl = ast.ext[-1].type
    out: dict[int, str] = {}
    for k, p in enumerate(getattr(decl.args, "params", None) or []):
        t = getattr(p, "type", None)
        if not isinstance(t, (c_ast.PtrDecl, c_ast.ArrayDecl)) or not getattr(p, "name", None):
            continue
        quals = t.quals if isinstance(t, c_ast.PtrDecl) else (t.dim_quals or [])
        if "restrict" not in quals:
            out[k] = p.name
    if pre is None or len(out) < 2:
        return tuple(out.values())
    positions = _overlapping(pre, heads[-1].group(1), tuple(out))
    return tuple(name for k, name in out.items() if k in positions)


_LITERAL = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'")
_CAST = re.compile(r"\(\s*[A-Za-z_]\w*(?:\s+[A-Za-z_]\w*)*[\s*]*(?:\(\s*\*\s*\))?\s*(?:\[\s*\w*\s*\]\s*)*\)")


def _overlapping(pre: str, func: str, positions: tuple[int, ...]) -> set[int]:
    """Of *positions* (parameter indexes of *func*), those that some caller may pass memory overlapping
    another's: all of them unless *func* is `static` and every use of its name in the translation unit is
    a call; else those of a call where two arguments have the same base name (`A`, `*A`, `A[1]`, `(T *)A`),
    an argument is not a name (`p + 1`), or a base is not proven a distinct object (`_distinct_object`:
    an array declared at file scope or in the caller, or a pointer of the caller assigned only the result
    of an allocation; a parameter of the caller, or a pointer copied from another, `p = A; f(A, p)`, is
    not one)."""
    text = _LITERAL.sub('""', "\n".join(line for line in pre.splitlines() if not _MARKER.match(line)))
    everything = set(positions)
    if not re.search(rf"\bstatic\b[^;{{}}()]*\b{re.escape(func)}\s*\(", text):
        return everything
    found: set[int] = set()
    for m in re.finditer(rf"\b{re.escape(func)}\b", text):
        if text.count("{", 0, m.start()) == text.count("}", 0, m.start()):
            continue  # at file scope: a declaration or the definition
        args = _call_args(text, m.end())
        if args is None:
            return everything  # its address is taken: a call through the pointer is not seen
        caller = _caller_params(text, m.start())
        body = _function_text(text, m.start())
        bases = {}
        for pos in positions:
            if pos >= len(args):
                return everything
            base = _base_name(args[pos])
            if base is None:
                return everything
            bases[pos] = base
        for a in positions:
            for b in positions:
                if a < b and (bases[a] == bases[b] or not all(
                        x not in caller and _distinct_object(text, body, x) for x in (bases[a], bases[b]))):
                    found |= {a, b}
    return found


_ALLOCATORS = ("malloc", "calloc", "aligned_alloc", "_mm_malloc", "polybench_alloc_data")
_NOT_TYPES = _OTHER_KEYWORDS | {"typedef"}


def _function_text(text: str, at: int) -> str:
    """The body of the function that contains position *at* (from its '{' to its '}')."""
    depth, start = 0, 0
    for m in re.finditer(r"[{}]", text[:at]):
        if m.group(0) == "{" and depth == 0:
            start = m.start()
        depth += 1 if m.group(0) == "{" else -1
    for m in re.finditer(r"[{}]", text[at:]):
        depth += 1 if m.group(0) == "{" else -1
        if depth == 0:
            return text[start:at + m.end()]
    return text[start:]


def _declarators(chunk: str) -> list[str]:
    """The declarators of the declaration statements of *chunk* at its top level of braces (`double A[N],
    *p = x` gives `A[N]` and `*p = x`): statements that start with a type."""
    out = []
    for stmt in re.split(r"[;{}]", chunk):
        head = re.match(r"\s*((?:[A-Za-z_]\w*\s+)+|(?:[A-Za-z_]\w*\s*)(?=[*(]))", stmt)
        if not head or set(head.group(1).split()) & _NOT_TYPES:
            continue
        depth, start = 0, head.end()
        for k in range(head.end(), len(stmt) + 1):
            ch = stmt[k] if k < len(stmt) else ","
            depth += (ch in "([") - (ch in ")]")
            if ch == "," and depth == 0:
                out.append(stmt[start:k].strip())
                start = k + 1
    return out


def _distinct_object(text: str, body: str, name: str) -> bool:
    """Whether *name* (an argument's base in the caller's *body*) is its own object: an array declared at
    file scope or in the caller, or a pointer declared in the caller that is only assigned the result of an
    allocation (`malloc`, `calloc`, PolyBench's `polybench_alloc_data`, ...; casts allowed)."""
    depth, outside = 0, []
    for ch in text:
        depth += (ch == "{") - (ch == "}")
        outside.append(";" if ch in "{}" else ch if depth == 0 else " ")
    decls = _declarators("".join(outside)) + _declarators(body)
    if any(re.match(rf"{re.escape(name)}\s*\[", d) for d in decls):
        return True
    if not any(re.match(rf"(?:\*\s*)+{re.escape(name)}\b|\(\s*\*\s*{re.escape(name)}\s*\)", d)
               for d in _declarators(body)):
        return False
    n = re.escape(name)
    if re.search(rf"(?:\+\+|--)\s*{n}\b|\b{n}\s*(?:\+\+|--|[-+*/|&^]=)|&\s*{n}\b", body):
        return False  # changed otherwise, or its address taken
    found = False
    assign = re.compile(rf"(?<![\w.>])(?:\(\s*\*\s*)?{re.escape(name)}\s*\)?\s*(?:\[[^\]]*\]\s*)*=(?!=)")
    for m in assign.finditer(body):
        rhs = body[m.end():]
        depth, end = 0, len(rhs)
        for k, ch in enumerate(rhs):
            depth += (ch in "([") - (ch in ")]")
            if (ch in ",;" and depth == 0) or depth < 0:
                end = k
                break
        value, prev = rhs[:end].strip(), None
        while value != prev:
            prev = value
            cast = _CAST.match(value)
            if cast and value[cast.end():].strip():
                value = value[cast.end():].strip()
            if value.startswith("(") and value.endswith(")") \
                    and _call_args(value[:-1] + ")", 0) == [value[1:-1].strip()]:
                value = value[1:-1].strip()
        if not re.match(rf"(?:{'|'.join(_ALLOCATORS)})\s*\(", value):
            return False
        found = True
    return found


def _call_args(text: str, at: int) -> list[str] | None:
    """The top-level arguments of the call whose name ends at *at*; None if no call follows."""
    m = re.compile(r"\s*\(").match(text, at)
    if not m:
        return None
    depth, start, args = 1, m.end(), []
    for i in range(m.end(), len(text)):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                args.append(text[start:i])
                return [a.strip() for a in args] if any(a.strip() for a in args) else []
        elif ch == "," and depth == 1:
            args.append(text[start:i])
            start = i + 1
    return None


def _base_name(arg: str) -> str | None:
    """`A`, `*A`, `&A`, `A[1]`, `(double *)A`, `(A)` -> "A"; anything else (arithmetic, calls) -> None."""
    prev = None
    while arg != prev:
        prev, arg = arg, arg.strip().lstrip("*&").strip()
        cast = _CAST.match(arg)
        if cast and arg[cast.end():].strip():
            arg = arg[cast.end():]
        elif arg.startswith("(") and arg.endswith(")") and _call_args(arg[:-1] + ")", 0) == [arg[1:-1].strip()]:
            arg = arg[1:-1]
    m = re.fullmatch(r"([A-Za-z_]\w*)\s*(?:\[[^\[\]]*\]\s*)*", arg.strip())
    return m.group(1) if m else None


def _caller_params(text: str, at: int) -> set[str]:
    """The array and pointer parameter names (not restrict) of the function whose body contains *at*."""
    heads = [m for m in _FUNC_HEAD.finditer(text, 0, at) if m.group(1) not in _OTHER_KEYWORDS]
    if not heads:
        return set()
    out = set()
    for p in heads[-1].group(2).split(","):
        if ("*" in p or "[" in p) and "restrict" not in p:
            name = re.search(r"([A-Za-z_]\w*)\s*(?:\)\s*)?(?:\[[^\]]*\]\s*)*$", p.strip())
            if name:
                out.add(name.group(1))
    return out
