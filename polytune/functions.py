"""The function definitions of a file's own text, from its preprocessed form: tokens with their original lines,
each function parsed by pycparser, and the extent (first and last token) of any statement in it.

pycparser gives a node's first line and column, never its last; region detection (detect.py) needs the last
line of a loop nest to splice code in its place, and the pointer rewrite (rewrite/pointers.py) needs the
whole function around a region. Functions are parsed one at a time, so that one function pycparser cannot
read (a compiler extension) costs only itself.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from pycparser import c_ast, c_generator, c_parser

_MARKER = re.compile(r'^#\s*(?:line\s+)?(\d+)\s+"((?:[^"\\]|\\.)*)"')
_TOKEN = re.compile(r"""\s+|(?P<tok>[A-Za-z_]\w*|\.?\d(?:[\w.]|[eEpP][+-])*|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'"""
                    r"""|->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^!=<>]=|\.\.\.|##|.)""")
# GNU spellings pycparser does not read; none changes what the code computes
_GNU = re.compile(r"\b__attribute__\s*\(\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)\)|\b__extension__\b"
                  r"|\b__asm__\s*(?:volatile\s*|__volatile__\s*)?\((?:[^()]|\([^()]*\))*\)")
_GEN = c_generator.CGenerator()
_RENAME = {"__restrict": "restrict", "__restrict__": "restrict", "__inline": "inline", "__inline__": "inline",
           "__const": "const", "__signed__": "signed", "__volatile__": "volatile"}


@dataclass(frozen=True)
class Token:
    text: str
    line: int  # line in the original file
    index: int  # index of its line among the preprocessed lines
    column: int  # 1-based, in the preprocessed line


@dataclass(frozen=True, eq=False)
class Function:
    """One function definition of the file: its tokens (first .. last, the closing brace) and its AST."""

    name: str
    first: int  # index into the file's token list
    last: int
    ast: c_ast.FuncDef | None  # None where pycparser cannot read it
    error: str = ""  # why not
    begin_line: int = 0  # original lines of its first and last token
    end_line: int = 0


def main_tokens(pre: str, path: str, headers: bool = False) -> list[Token]:
    """The tokens of the file itself (*headers*: and of the headers that are not system headers) in
    preprocessed text *pre*; a preprocessor line left in the output (`#pragma ...`) is one token."""
    out: list[Token] = []
    cur_file, cur_line, main, system = path, 1, None, False
    for index, raw in enumerate(pre.splitlines()):
        m = _MARKER.match(raw)
        if m:
            cur_line, cur_file = int(m.group(1)), m.group(2)
            main = main or cur_file
            system = " 3" in raw[m.end():] or cur_file.startswith("<")
            continue
        if cur_file in (path, main) or (headers and not system):
            if raw.lstrip().startswith("#"):
                out.append(Token(raw.strip(), cur_line, index, len(raw) - len(raw.lstrip()) + 1))
            else:
                for t in _TOKEN.finditer(raw):
                    if t.group("tok"):
                        out.append(Token(t.group("tok"), cur_line, index, t.start() + 1))
        cur_line += 1
    return out


def matching(tokens: list[Token], k: int) -> int:
    """The index of the bracket closing the one at *k* (or the last token)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = [pairs[tokens[k].text]]
    for j in range(k + 1, len(tokens)):
        t = tokens[j].text
        if t in pairs:
            stack.append(pairs[t])
        elif stack and t == stack[-1]:
            stack.pop()
            if not stack:
                return j
    return len(tokens) - 1


def statement_end(tokens: list[Token], k: int) -> int:
    """The last token of the C statement whose first token is tokens[k]."""
    t = tokens[k].text
    if t == "{":
        return matching(tokens, k)
    if t.startswith("#"):
        return k
    if t in ("for", "while", "switch") and k + 1 < len(tokens) and tokens[k + 1].text == "(":
        return statement_end(tokens, matching(tokens, k + 1) + 1)
    if t == "if" and k + 1 < len(tokens) and tokens[k + 1].text == "(":
        end = statement_end(tokens, matching(tokens, k + 1) + 1)
        if end + 1 < len(tokens) and tokens[end + 1].text == "else":
            return statement_end(tokens, end + 2)
        return end
    if t == "else":
        return statement_end(tokens, k + 1)
    if t == "do":
        end = statement_end(tokens, k + 1)  # the body; then while (...) ;
        return statement_end(tokens, end + 2) if end + 2 < len(tokens) else end
    j = k
    while j < len(tokens):  # an expression, declaration, jump or labelled statement: up to its ';'
        if tokens[j].text in ("(", "[", "{"):
            j = matching(tokens, j)
        elif tokens[j].text == ";":
            return j
        elif tokens[j].text == ":" and j == k + 1 and t not in ("default",):
            return statement_end(tokens, j + 1)  # a label
        j += 1
    return len(tokens) - 1


def functions(pre: str, path: str, typedefs: tuple[str, ...], tokens: list[Token] | None = None) -> list[Function]:
    """Every function definition of the file's own text, in order, each parsed alone (with every typedef
    name of the translation unit declared as int: only the shape of the code matters here)."""
    tokens = main_tokens(pre, path) if tokens is None else tokens
    lines = pre.splitlines()
    out: list[Function] = []
    start, k = 0, 0
    while k < len(tokens):
        t = tokens[k].text
        if t in (";", "}") or t.startswith("#"):
            start, k = k + 1, k + 1
            continue
        if t in ("(", "["):
            k = matching(tokens, k) + 1
            continue
        if t == "{":
            end = matching(tokens, k)
            if k > start and tokens[k - 1].text == ")":
                out.append(_parse_function(tokens, start, end, lines, path, typedefs))
            else:  # a struct, union or enum body, or an initializer
                end = _through_semicolon(tokens, end)
            start, k = end + 1, end + 1
            continue
        k += 1
    return out


def _through_semicolon(tokens: list[Token], k: int) -> int:
    while k + 1 < len(tokens) and tokens[k].text != ";":
        k += 1
        if tokens[k].text in ("(", "[", "{"):
            k = matching(tokens, k)
    return k


def _parse_function(tokens: list[Token], first: int, last: int, lines: list[str], path: str,
                    typedefs: tuple[str, ...]) -> Function:
    name = next((tokens[j].text for j in range(first, last) if tokens[j + 1].text == "("
                 and re.fullmatch(r"[A-Za-z_]\w*", tokens[j].text)), "?")
    text = source_text(tokens, first, last, lines, path)
    lines_of = (tokens[first].line, tokens[last].line)
    used = [t for t in typedefs if re.search(rf"\b{re.escape(t)}\b", text)]
    header = "".join(f"typedef int {t};\n" for t in used)
    try:
        ast = c_parser.CParser().parse(header + text, filename=path)
    except Exception as e:  # noqa: BLE001 - pycparser raises assorted errors on code it cannot read
        return Function(name, first, last, None, str(e).splitlines()[0] if str(e) else type(e).__name__,
                        *lines_of)
    defs = [x for x in ast.ext if isinstance(x, c_ast.FuncDef)]
    if len(defs) != 1:
        return Function(name, first, last, None, "not one function definition", *lines_of)
    return Function(defs[0].decl.name, first, last, defs[0], "", *lines_of)


def source_text(tokens: list[Token], first: int, last: int, lines: list[str], path: str) -> str:
    """The preprocessed text from tokens[first] to tokens[last], with line markers so that pycparser's
    coordinates are the original file's lines, and the columns of the preprocessed lines (text before
    *first* and after *last* on their lines blanked)."""
    a, b = tokens[first], tokens[last]
    out = []
    for index in range(a.index, b.index + 1):
        raw = lines[index]
        if _MARKER.match(raw):
            out.append(raw)
            continue
        if index == b.index:
            raw = raw[:b.column - 1 + len(b.text)]
        if index == a.index:
            raw = " " * (a.column - 1) + raw[a.column - 1:]
        out.append(raw)
    text = f'# {a.line} "{path}"\n' + "\n".join(out) + "\n"
    text = _GNU.sub(lambda m: " " * len(m.group(0)) if "\n" not in m.group(0) else
                    re.sub(r"[^\n]", " ", m.group(0)), text)
    # the same length, so that pycparser's columns stay those of the tokens
    return re.sub(r"\b(" + "|".join(_RENAME) + r")\b", lambda m: _RENAME[m.group(1)].ljust(len(m.group(1))), text)


def token_at(tokens: list[Token], line: int, column: int, lo: int = 0, hi: int | None = None) -> int | None:
    """The index of the token at an original line and preprocessed column (a pycparser coordinate)."""
    for j in range(lo, len(tokens) if hi is None else hi + 1):
        if tokens[j].line == line and tokens[j].column == column:
            return j
    return None


@dataclass(frozen=True, eq=False)
class Scope:
    """What the source rewrites (rewrite/) need to know of the code around a region: the function it is in,
    the file-scope declarations and the other functions of the file, the members of its structs, and the
    identifiers a new name must avoid."""

    function: c_ast.FuncDef | None = None
    globals: dict = field(default_factory=dict)  # name -> c_ast.Decl at file scope (the file's own text)
    functions: tuple = ()  # every parsed c_ast.FuncDef of the file
    members: dict = field(default_factory=dict)  # struct/union member name -> its c_ast type, None if two differ
    avoid: frozenset[str] = frozenset()  # every identifier of the translation unit
    unreadable: tuple[str, ...] = ()  # functions pycparser could not read (their names)


def file_scope(pre: str, path: str, typedefs: tuple[str, ...]) -> tuple[list[Function], dict, dict]:
    """The file's functions, its file-scope declarations (name -> c_ast.Decl), and the members of the structs
    and unions of the file and its own headers (name -> type, None where two declarations differ)."""
    tokens = main_tokens(pre, path)
    funcs = functions(pre, path, typedefs, tokens)
    lines = pre.splitlines()
    inside = set()
    for f in funcs:
        inside.update(range(f.first, f.last + 1))
    decls: dict = {}
    start = 0
    k = 0
    while k < len(tokens):
        t = tokens[k]
        if k in inside:
            start = k = max(k, next(f.last for f in funcs if f.first <= k <= f.last)) + 1
            continue
        if t.text in ("{", "(", "["):
            k = matching(tokens, k) + 1
            continue
        if t.text.startswith("#"):
            start = k + 1
        elif t.text == ";" and k >= start:
            for d in _parse_decls(tokens, start, k, lines, path, typedefs):
                if isinstance(d, c_ast.Decl) and d.name:
                    decls[d.name] = d
            start = k + 1
        k += 1
    members: dict = {}
    user = main_tokens(pre, path, headers=True)
    for k, t in enumerate(user):
        if t.text in ("struct", "union") and k + 2 < len(user):
            brace = k + 1 if user[k + 1].text == "{" else k + 2 if user[k + 2].text == "{" else None
            if brace is None:
                continue
            end = matching(user, brace)
            text = source_text(user, k, end, pre.splitlines(), path) + ";\n"
            for d in _parse_text(text, typedefs):
                _members(d.type, members)
    return funcs, decls, members


def _members(node, out: dict) -> None:
    t = node.type if isinstance(node, c_ast.Decl) else node
    while isinstance(t, (c_ast.TypeDecl,)):
        t = t.type
    if isinstance(t, (c_ast.Struct, c_ast.Union)):
        for m in t.decls or []:
            if m.name:
                old = out.get(m.name, m.type)
                same = old is not None and _GEN.visit(old) == _GEN.visit(m.type) \
                    and _type_words(old) == _type_words(m.type)
                out[m.name] = m.type if same else None
            _members(m.type, out)


def _type_words(t) -> tuple:
    """A type's shape as words (pointer and array levels, base names), to compare two declarations."""
    out = []
    while not isinstance(t, c_ast.IdentifierType):
        out.append(type(t).__name__)
        if isinstance(t, (c_ast.Struct, c_ast.Union, c_ast.Enum)):
            return tuple(out + [t.name or ""])
        t = getattr(t, "type", None)
        if t is None:
            return tuple(out)
    return tuple(out + list(t.names))


def _parse_decls(tokens: list[Token], first: int, last: int, lines: list[str], path: str,
                 typedefs: tuple[str, ...]) -> list:
    return _parse_text(source_text(tokens, first, last, lines, path), typedefs)


def _parse_text(text: str, typedefs: tuple[str, ...]) -> list:
    used = [t for t in typedefs if re.search(rf"\b{re.escape(t)}\b", text)]
    header = "".join(f"typedef int {t};\n" for t in used)
    try:
        return c_parser.CParser().parse(header + text).ext[len(used):]
    except Exception:  # noqa: BLE001 - a declaration pycparser cannot read is left out
        return []
