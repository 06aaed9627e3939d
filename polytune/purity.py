"""Functions without side effects: the standard math functions, and the functions of the file whose bodies
show that they have none (`static float squash(float x) { return 1.0f / (1.0f + expf(-x)); }`), found as
GCC's `pure` attribute would say. A call to one is a read of its arguments (an array passed by name is read
whole: poly/extract.py), so such a function may read memory only through its pointer parameters."""
from __future__ import annotations

from collections.abc import Iterable

from pycparser import c_ast

# Functions without side effects that statement bodies may call.
PURE_FUNCTIONS = frozenset(
    f + suffix
    for f in ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "pow", "fabs",
              "fmax", "fmin", "fma", "floor", "ceil", "round", "trunc", "sin", "cos", "tan", "asin", "acos",
              "atan", "atan2", "sinh", "cosh", "tanh", "erf", "erfc", "hypot", "fmod", "copysign")
    for suffix in ("", "f", "l")
) | {"abs", "labs", "min", "max", "MIN", "MAX", "floord", "ceild", "__builtin_fabs", "__builtin_sqrt"}


def inferred_pure(functions: Iterable[c_ast.FuncDef], known: frozenset[str] = frozenset()) -> frozenset[str]:
    """The names of *functions* (definitions of the file) without side effects, by their bodies: every
    write is to a local scalar or a scalar parameter (`row -= pad`), no address is taken, nothing is
    read but the parameters, the locals and the pointers' elements (no global, no struct member: memory a
    caller's arguments do not show), no static or volatile local, every call is to a function of
    PURE_FUNCTIONS, *known* or this set, and a value is returned. Several definitions of one name: none."""
    defs: dict[str, c_ast.FuncDef | None] = {}
    for f in functions:
        name = f.decl.name
        defs[name] = None if name in defs else f
    candidates = {n: f for n, f in defs.items() if f is not None and _returns_value(f)}
    facts = {n: _facts(f) for n, f in candidates.items()}
    pure = {n for n, fact in facts.items() if fact is not None}
    changed = True
    while changed:  # drop those calling a function not (or no longer) known to be pure
        changed = False
        for n in sorted(pure):
            if any(c not in PURE_FUNCTIONS and c not in known and c not in pure for c in facts[n]):
                pure.discard(n)
                changed = True
    return frozenset(pure)


def _returns_value(f: c_ast.FuncDef) -> bool:
    t = f.decl.type.type if isinstance(f.decl.type, c_ast.FuncDecl) else None
    return not (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)
                and t.type.names == ["void"])


def _facts(f: c_ast.FuncDef) -> set[str] | None:
    """The names *f* calls, or None where its body shows a side effect or a read of unseen memory."""
    ftype = f.decl.type
    args = ftype.args.params if isinstance(ftype, c_ast.FuncDecl) and ftype.args else []
    params = {p.name: p for p in args if isinstance(p, c_ast.Decl) and p.name}
    local: dict[str, c_ast.Decl] = {}
    for n in _walk(f.body):
        if isinstance(n, c_ast.Decl) and n.name:
            if set(n.storage) & {"static", "extern"} or "volatile" in n.quals or n.name in local:
                return None
            local[n.name] = n
    names = set(params) | set(local)
    scalars = {n for n, d in {**params, **local}.items() if isinstance(d.type, c_ast.TypeDecl)}
    calls: set[str] = set()
    called = set()
    for n in _walk(f.body):
        if isinstance(n, c_ast.FuncCall):
            if not isinstance(n.name, c_ast.ID):
                return None
            calls.add(n.name.name)
            called.add(id(n.name))
        elif isinstance(n, c_ast.Assignment):
            if not (isinstance(n.lvalue, c_ast.ID) and n.lvalue.name in scalars):
                return None
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"):
            if not (isinstance(n.expr, c_ast.ID) and n.expr.name in scalars):
                return None
        elif isinstance(n, c_ast.UnaryOp) and n.op == "&":
            return None
        elif isinstance(n, (c_ast.StructRef, c_ast.Goto, c_ast.CompoundLiteral)):
            return None
        elif isinstance(n, c_ast.ID) and id(n) not in called and n.name not in names:
            return None  # a global (or an enumerator: a constant, but not told apart here)
    return calls


def _walk(node):
    yield node
    for _name, child in node.children():
        yield from _walk(child)
