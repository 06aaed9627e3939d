"""Regions without pragmas: the maximal loop nests of every function that the model accepts.

As LLVM Polly's ScopDetection and pet's --autodetect do, the candidates are proposed top-down and each is
checked by the same path a `#pragma scop` region takes (the source rewrites, then extraction): in every
compound statement of a function, each `for` statement is a candidate; one that is refused gives a
"missed" remark with extraction's reason at its line and its body is searched in turn; a run of adjacent
accepted nests is tried as one region (the scheduler may then fuse them). A nest is spliced by whole lines,
so a nest sharing a line with other code, or with preprocessor lines inside, is not taken. Whether a found
region is worth optimizing (a loop to tile or parallelize) is decided after scheduling (pipeline.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from pycparser import c_ast

from .errors import PolytuneError
from .frontend import (
    Region,
    dead_after,
    in_scope,
    pointer_row_arrays,
    read_after,
    scalars_in_scope,
    unrestricted_params,
)
from .functions import Function, Scope, Token, file_scope, main_tokens, statement_end, token_at
from .poly.extract import build_scop
from .poly.scop import Scop
from .purity import inferred_pure
from .rewrite import in_user_terms, prepare

_MARKER = re.compile(r'^#\s*(?:line\s+)?\d+\s+"')


@dataclass(frozen=True)
class Remark:
    """One line about a loop nest: found (optimized if worth it) or missed (with the reason)."""

    file: str
    line: int
    kind: str  # "found" or "missed"
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.kind}: {self.message}"

    def to_record(self) -> dict:
        return {"file": self.file, "line": self.line, "kind": self.kind, "message": self.message}


@dataclass(frozen=True, eq=False)
class Found:
    region: Region  # after the rewrites
    scop: Scop


@dataclass(frozen=True, eq=False)
class Detection:
    found: tuple[Found, ...]
    remarks: tuple[Remark, ...]


@dataclass
class _File:
    path: str
    pre: str
    lines: list[str]  # preprocessed lines
    original: list[str]  # the file's own lines
    tokens: list[Token]
    typedefs: tuple[str, ...]
    pure: frozenset[str]
    scope: Scope
    skip: tuple[tuple[int, int], ...]  # line ranges of the '#pragma scop' regions
    causes: set = field(default_factory=set)  # (line, reason) of the refusals remarked so far


def detect(path: str, pre: str, original: str, typedefs: tuple[str, ...], pure: frozenset[str],
           skip: tuple[tuple[int, int], ...] = ()) -> Detection:
    """The loop nests of *path* (preprocessed text *pre*, the file's own text *original*) that the model
    accepts, outside the line ranges *skip*; and a remark for each nest found or missed."""
    tokens = main_tokens(pre, path)
    funcs, decls, members = file_scope(pre, path, typedefs)
    avoid = frozenset(re.findall(r"\b[A-Za-z_]\w*\b", pre))
    parsed = tuple(f.ast for f in funcs if f.ast is not None)
    pure = pure | inferred_pure(parsed, pure)
    found: list[Found] = []
    remarks: list[Remark] = []
    for f in funcs:
        if f.ast is None:
            if any(t.text == "for" for t in tokens[f.first:f.last + 1]):
                remarks.append(Remark(path, f.begin_line, "missed", f"function '{f.name}' not read (polytune's C "
                                                                    f"reader, pycparser: {f.error})"))
            continue
        unreadable = tuple(g.name for g in funcs if g.ast is None)
        scope = Scope(f.ast, decls, parsed, members, avoid, unreadable)
        ctx = _File(path, pre, pre.splitlines(keepends=True), original.splitlines(keepends=True), tokens,
                    typedefs, pure, scope, skip)
        _block(ctx, f, f.ast.body.block_items or [], found, remarks)
    return Detection(tuple(sorted(found, key=lambda x: x.region.begin_line)),
                     tuple(sorted(remarks, key=lambda r: (r.line, r.kind))))


def _block(ctx: _File, f: Function, items: list, found: list, remarks: list) -> None:
    """Candidates among a compound statement's items; adjacent accepted nests are tried as one region."""
    run: list[tuple[int, Found]] = []  # (item index, found) of the current run of adjacent accepted nests
    for k, item in enumerate(items):
        if isinstance(item, c_ast.Pragma) and re.match(r"\s*omp\b", item.string or "") and \
                k + 1 < len(items) and isinstance(items[k + 1], c_ast.For):
            continue  # an OpenMP line before a loop: part of that loop's candidate
        if isinstance(item, c_ast.For):
            start = k - 1 if k and _omp(items[k - 1]) else k
            got = _try(ctx, f, items[start:k + 1], remarks)
            if got is not None:
                if run and run[-1][0] == start - 1:
                    run.append((k, got))
                else:
                    _close_run(ctx, f, items, run, found, remarks)
                    run = [(k, got)]
                continue
            _inside(ctx, f, item.stmt, found, remarks)
        else:
            _close_run(ctx, f, items, run, found, remarks)
            run = []
            _inside(ctx, f, item, found, remarks)
    _close_run(ctx, f, items, run, found, remarks)


def _omp(item) -> bool:
    return isinstance(item, c_ast.Pragma) and bool(re.match(r"\s*omp\b", item.string or ""))


def _close_run(ctx: _File, f: Function, items: list, run: list, found: list, remarks: list) -> None:
    if not run:
        return
    if len(run) > 1:
        first = run[0][0] - 1 if run[0][0] and _omp(items[run[0][0] - 1]) else run[0][0]
        whole = _try(ctx, f, items[first:run[-1][0] + 1], [])
        if whole is not None:
            run = [(run[0][0], whole)]
    for _, got in run:
        found.append(got)
        r = got.region
        remarks.append(Remark(ctx.path, r.begin_line, "found", f"loop nest of {_lines(r.begin_line, r.end_line)} "
                                                               f"({len(got.scop.statements)} statement"
                                                               f"{'s' if len(got.scop.statements) != 1 else ''})"))


def _inside(ctx: _File, f: Function, node, found: list, remarks: list) -> None:
    """Search the statements inside *node* (a refused nest's body, a branch, another loop's body)."""
    if node is None:
        return
    if isinstance(node, c_ast.Compound):
        _block(ctx, f, node.block_items or [], found, remarks)
    elif isinstance(node, c_ast.For):
        _block(ctx, f, [node], found, remarks)
    elif isinstance(node, c_ast.If):
        _inside(ctx, f, node.iftrue, found, remarks)
        _inside(ctx, f, node.iffalse, found, remarks)
    elif isinstance(node, (c_ast.While, c_ast.DoWhile)) and node.coord is not None:
        what = "while" if isinstance(node, c_ast.While) else "do-while"
        remarks.append(Remark(ctx.path, node.coord.line, "missed", f"'{what}' loop not optimized (polytune models "
                                                                   "counted 'for' loops): the loops inside it are "
                                                                   "searched"))
        _inside(ctx, f, node.stmt, found, remarks)
    elif isinstance(node, (c_ast.While, c_ast.DoWhile, c_ast.Switch, c_ast.Label, c_ast.Case, c_ast.Default)):
        body = getattr(node, "stmt", None)
        if isinstance(node, (c_ast.Case, c_ast.Default)):
            _block(ctx, f, node.stmts or [], found, remarks)
        else:
            _inside(ctx, f, body, found, remarks)


def _try(ctx: _File, f: Function, stmts: list, remarks: list) -> Found | None:
    """The candidate region of *stmts* (consecutive items of one block), if the model accepts it; else None
    and a missed remark with the reason."""
    line = stmts[-1].coord.line if stmts[-1].coord else f.begin_line
    first = _token_of(ctx, f, stmts[0])
    last_start = _token_of(ctx, f, stmts[-1])
    if first is None or last_start is None:
        remarks.append(Remark(ctx.path, line, "missed", "cannot find the loop nest's text (a macro?)"))
        return None
    last = statement_end(ctx.tokens, last_start)
    begin, end = ctx.tokens[first].line, ctx.tokens[last].line
    if any(b <= end and begin <= e for b, e in ctx.skip):
        return None  # a '#pragma scop' region's (or one inside it)
    why = _splice_problem(ctx, first, last)
    if why:
        remarks.append(Remark(ctx.path, begin, "missed", f"loop nest of {_lines(begin, end)} not optimized: {why}"))
        return None
    a, b = ctx.tokens[first].index, ctx.tokens[last].index
    text = f'# {begin} "{ctx.path}"\n' + "".join(ctx.lines[a:b + 1])
    upto = "".join(x for x in ctx.lines[:a] if not _MARKER.match(x))
    after = "".join(x for x in ctx.lines[b + 1:] if not _MARKER.match(x))
    floats, ints, spelled, words, arrays = scalars_in_scope(upto, ctx.pre)
    live = read_after(upto, after)
    region = Region(ctx.path, begin, end, text, c_ast.Compound(list(stmts), coord=stmts[0].coord), ctx.typedefs,
                    floats, unrestricted_params(upto, ctx.typedefs, ctx.pre), ctx.pure, ints, live,
                    spelled, words, arrays, pointer_row_arrays(in_scope(upto)), dead_after(upto, live),
                    scope=ctx.scope, auto=True)
    try:
        region = prepare(region)
        try:
            scop = build_scop(region)
        except PolytuneError as e:
            raise in_user_terms(region, e) from None
    except PolytuneError as e:
        at = e.line if e.line is not None else begin
        if (at, e.message) not in ctx.causes:  # an inner nest refused for the same reason: said once
            ctx.causes.add((at, e.message))
            where = f" (line {at})" if at != begin else ""
            remarks.append(Remark(ctx.path, begin, "missed", f"loop nest of {_lines(begin, end)} not optimized: "
                                                             f"{_plain(e.message)}{where}"))
        return None
    except RecursionError:
        remarks.append(Remark(ctx.path, begin, "missed", f"loop nest of {_lines(begin, end)} not optimized: it is "
                                                         "too deep to analyze"))
        return None
    return Found(region, scop)


def _lines(begin: int, end: int) -> str:
    return f"line {begin}" if begin == end else f"lines {begin}-{end}"


def _token_of(ctx: _File, f: Function, node) -> int | None:
    """The index of a statement's first token (a pragma: the preprocessor line's token on its line)."""
    if node.coord is None:
        return None
    if isinstance(node, c_ast.Pragma):
        return next((j for j in range(f.first, f.last + 1) if ctx.tokens[j].line == node.coord.line
                     and ctx.tokens[j].text.startswith("#")), None)
    return token_at(ctx.tokens, node.coord.line, node.coord.column, f.first, f.last)


def _plain(message: str) -> str:
    """Extraction's reason, said of a loop nest rather than of a '#pragma scop' region."""
    return message.replace("inside the scop", "inside the loop nest").replace("the scop", "the loop nest")


def _splice_problem(ctx: _File, first: int, last: int) -> str:
    """Why the lines of tokens first..last cannot be replaced as a whole ('' if they can)."""
    t = ctx.tokens
    if first > 0 and t[first - 1].line == t[first].line and t[first - 1].index == t[first].index:
        return "the loop nest shares its first line with other code (polytune replaces whole lines)"
    if last + 1 < len(t) and t[last + 1].line == t[last].line and t[last + 1].index == t[last].index:
        return "the loop nest shares its last line with other code (polytune replaces whole lines)"
    begin, end = t[first].line, t[last].line
    own = "".join(ctx.original[begin - 1:end])
    if any(re.match(r"\s*#\s*(?!pragma\b)", x) for x in ctx.original[begin - 1:end]):
        return "preprocessor lines inside the loop nest"
    code = re.sub(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', '""', own)
    code = re.sub(r"/\*.*?\*/|//[^\n]*", " ", code, flags=re.DOTALL)
    if "/*" in code or "*/" in code:
        return "a comment crosses the loop nest's first or last line"
    return ""
