"""Array elements an innermost loop keeps touching, held in a scalar along the loop (scalar replacement).

gcc keeps `tmp[i]` of `for j: tmp[i] = A[i][j] * x[j] + tmp[i]` in memory: `tmp` and `A` are pointer
parameters it cannot tell apart, so every iteration stores the sum and loads it back, and the reduction
runs at the store-to-load latency (gesummv: 2.0x of gcc against Polly's 3.1x, whose code keeps the sum in
a register behind a run-time alias check). polytune already takes arrays of different names as different
memory (docs/DESIGN.md, Schedule choice 1), so the element can live in a scalar: loaded before the loop,
stored after it if the loop writes it.

A reference qualifies when, for every iteration of the loops around the loop, it touches one element
(independent of the loop's counter), every reference of the same array in the loop that is not such a
reference touches other elements (trisolv's `x[j]`, j < i, beside `x[i]`) unless the loop only reads the
array (syr2k's `A[i][k]` beside `A[j][k]`, j <= i: a load hoisted out of the loop), and the array is not used
whole (a bare name: a call's argument). Both are checked with isl on the loop's printed statements: each
occurrence's iterators as functions of the counters (the AST's expressions), composed with the reference's
subscripts parsed from its C text; a reference whose subscripts or iterators isl cannot read stays in
memory.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import islpy as isl
from pycparser import c_ast, c_generator

from .extract import set_child
from .islutil import CTX, isl_name
from .scop import Scop

_GEN = c_generator.CGenerator()
_AFFINE = re.compile(r"^[\w\s+\-*()]+$")  # subscripts isl can read as they are (no /, %, ?:, casts)
_WRITES = ("++", "--", "p++", "p--")
_T = isl.ast_expr_op_type


@dataclass(frozen=True)
class Ref:
    """One array reference of a statement body (the whole `A[i][j]`, subscripts outermost first)."""

    array: str
    subscripts: tuple[str, ...]
    write: bool
    conditional: bool = False  # in a branch of a ternary or the right operand of && or ||: evaluated only sometimes


def refs_of(body: c_ast.Node) -> tuple[list[Ref], set[str]]:
    """The array references of a statement body in a fixed order (`replace_refs` walks the same way), and
    the names it uses other than as the base of a subscripted reference (an array passed whole)."""
    refs: list[Ref] = []
    bare: set[str] = set()

    def walk(node: c_ast.Node, write: bool, sometimes: bool) -> None:
        if isinstance(node, c_ast.ArrayRef):
            subs, base = _chain(node)
            if isinstance(base, c_ast.ID):
                refs.append(Ref(base.name, tuple(_GEN.visit(s) for s in subs), write, sometimes))
            else:
                walk(base, False, sometimes)
            for s in subs:
                walk(s, False, sometimes)
            return
        if isinstance(node, c_ast.ID):
            bare.add(node.name)
            return
        if isinstance(node, c_ast.FuncCall):  # the callee's name is no array
            if node.args is not None:
                walk(node.args, False, sometimes)
            return
        for name, child in node.children():
            walk(child, _writes(node, name), sometimes or isinstance(node, c_ast.TernaryOp) and name != "cond"
                 or isinstance(node, c_ast.BinaryOp) and node.op in ("&&", "||") and name == "right")

    walk(body, False, False)
    return refs, bare


def replace_refs(body: c_ast.Node, names: dict[int, str]) -> c_ast.Node:
    """*body* (a copy the caller owns) with the references of the given indexes (`refs_of`'s order)
    replaced by those scalar names."""
    count = [0]

    def walk(node: c_ast.Node) -> c_ast.Node:
        if isinstance(node, c_ast.ArrayRef):
            subs, base = _chain(node)
            if isinstance(base, c_ast.ID):
                k = count[0]
                count[0] += 1
                if k in names:
                    _walk_subscripts(node, walk)  # (counts the references inside its subscripts)
                    return c_ast.ID(names[k], coord=node.coord)
            else:
                _set_base(node, walk(base))
            _walk_subscripts(node, walk)
            return node
        if isinstance(node, c_ast.FuncCall):
            if node.args is not None:
                node.args = walk(node.args)
            return node
        for name, child in list(node.children()):
            new = walk(child)
            if new is not child:
                set_child(node, name, new)
        return node

    return walk(body)


def _chain(node: c_ast.ArrayRef) -> tuple[list[c_ast.Node], c_ast.Node]:
    """(the subscripts of `A[a][b]`, outermost first, and the base `A`)."""
    subs = []
    while isinstance(node, c_ast.ArrayRef):
        subs.append(node.subscript)
        node = node.name
    return subs[::-1], node


def _set_base(node: c_ast.ArrayRef, base: c_ast.Node) -> None:
    while isinstance(node.name, c_ast.ArrayRef):
        node = node.name
    node.name = base


def _walk_subscripts(node: c_ast.ArrayRef, walk) -> None:
    while isinstance(node, c_ast.ArrayRef):
        node.subscript = walk(node.subscript)
        node = node.name


def _writes(parent: c_ast.Node, child: str) -> bool:
    """Whether the child of *parent* so named is written (an assignment's left side, `++`'s operand)."""
    if isinstance(parent, c_ast.Assignment):
        return child == "lvalue"
    return isinstance(parent, c_ast.UnaryOp) and parent.op in _WRITES and child == "expr"


@dataclass(frozen=True)
class Occurrence:
    """One statement printed in the loop's body: its name, the AST's expression of each of its iterators
    (isl text over the loop counters and parameters, None where isl cannot read it) and its references."""

    statement: str
    iterators: tuple[str | None, ...]
    refs: tuple[Ref, ...]
    bare: frozenset[str]


def ast_text(e: isl.AstExpr) -> str | None:
    """An isl AST expression as isl text (None for operators isl's parser has no form for)."""
    t = e.get_type()
    if t == isl.ast_expr_type.int:
        return e.int_get_val().to_str()
    if t == isl.ast_expr_type.id:
        return e.id_get_id().get_name()
    op = e.op_get_type()
    args = [ast_text(e.op_get_arg(i)) for i in range(e.op_get_n_arg())]
    if None in args:
        return None
    if op in (_T.add, _T.sub, _T.mul):
        return f"({args[0]} {'+' if op == _T.add else '-' if op == _T.sub else '*'} {args[1]})"
    if op == _T.minus:
        return f"(-{args[0]})"
    if op in (_T.fdiv_q, _T.pdiv_q):
        return f"floor(({args[0]}) / ({args[1]}))"
    if op == _T.pdiv_r:
        return f"(({args[0]}) mod ({args[1]}))"
    if op in (_T.min, _T.max):
        name = "min" if op == _T.min else "max"
        out = args[0]
        for a in args[1:]:
            out = f"{name}({out}, {a})"
        return out
    return None


def promotable(scop: Scop, occurrences: list[Occurrence], counters: list[str],
               loop: str) -> dict[str, list[set]]:
    """Array -> for each of its elements that may live in a scalar along the loop with counter *loop*
    (*counters*: those of the loops around it), the (occurrence index, reference index) pairs that touch
    it; for each array where that holds (see the module docstring)."""
    ndim = {a.name: a.ndim for a in scop.arrays}
    params = ", ".join(scop.context.get_dim_name(isl.dim_type.param, i)
                       for i in range(scop.context.dim(isl.dim_type.param)))
    rels: dict[str, list] = {}
    bad: set[str] = set()
    for k, occ in enumerate(occurrences):
        st = scop.statement(occ.statement)
        for name in occ.bare:
            bad.add(name)
        instances = _instances(scop, st, occ, params, counters, loop)
        for r, ref in enumerate(occ.refs):
            if ref.array in bad:
                continue
            if ref.conditional and not any(not x.conditional and (x.array, x.subscripts) == (ref.array, ref.subscripts)
                                           for x in occ.refs):
                # (a load taken out of the loop would read it where the program does not: `i > 0 ? img[i - 1][j]
                # : 0` at i = 0, the row before the array; not so where the statement reads it anyway, as
                # nussinov's `t[i][j] = t[i][j] >= x ? t[i][j] : x` does in its condition)
                bad.add(ref.array)
                continue
            if instances is None or ndim.get(ref.array) != len(ref.subscripts):
                bad.add(ref.array)
                continue
            acc = _access(st, ref, params)
            if acc is None:
                bad.add(ref.array)
                continue
            rel = isl.UnionMap(instances).apply_range(isl.UnionMap(acc.intersect_domain(st.domain)))
            rels.setdefault(ref.array, []).append(((k, r), rel.intersect_params(scop.context)))
    out: dict[str, list[set]] = {}
    for array, items in rels.items():
        if array in bad:
            continue
        groups: list[list] = []  # [element as a function of the outer counters, its references]
        for key, rel in items:
            if not rel.is_single_valued():
                continue
            same = next((g for g in groups if g[0].union(rel).is_single_valued()), None)
            if same is not None:
                same[0], same[1] = same[0].union(rel), same[1] | {key}
            else:
                groups.append([rel, {key}])
        if not groups:
            continue
        if not any(occurrences[k].refs[r].write for (k, r), _ in items):
            # read only in the loop: a copy in a scalar reads what memory holds, whatever else reads it
            out[array] = [g[1] for g in groups]
            continue
        # each element apart from the others, and from everything the array's other references touch
        keys = set().union(*(g[1] for g in groups))
        others = [rel for key, rel in items if key not in keys] + [g[0] for g in groups]
        if all(rel.intersect(g[0]).is_empty() for g in groups for rel in others if rel is not g[0]):
            out[array] = [g[1] for g in groups]
    return out


def _instances(scop: Scop, st, occ: Occurrence, params: str, counters: list[str], loop: str) -> isl.Map | None:
    """{ [outer counters] -> S[iterators] } for the occurrence, over every value of the loop's counter."""
    if None in occ.iterators or len(occ.iterators) != len(st.iterators):
        return None
    names = counters + [loop]
    try:
        m = isl.Map(f"[{params}] -> {{ [{', '.join(names)}] -> {st.name}[{', '.join(occ.iterators)}] }}",
                    context=CTX)
    except isl.Error:
        return None
    m = m.intersect_range(st.domain.align_params(m.get_space()))
    return m.project_out(isl.dim_type.in_, len(counters), 1)


def _access(st, ref: Ref, params: str) -> isl.Map | None:
    """{ S[iterators] -> A[subscripts] } from the reference's C text (None where isl cannot read it)."""
    if not all(_AFFINE.match(s) for s in ref.subscripts):
        return None
    subs = [re.sub(r"[A-Za-z_]\w*", lambda m: isl_name(m.group(0)), s) for s in ref.subscripts]
    its = ", ".join(isl_name(i) for i in st.iterators)
    try:
        return isl.Map(f"[{params}] -> {{ {st.name}[{its}] -> {isl_name(ref.array)}[{', '.join(subs)}] }}",
                       context=CTX)
    except isl.Error:
        return None
