"""Index helpers inlined: a call in the region to a function of the file that computes an integer from integers in
one `return` (`static inline int idx(int i, int j, int n) { return i * n + j; }`, `static int clampi(int v, int
lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }`, as C code writes its flattened subscripts and its clamps
to the edge) is replaced by the returned expression, each parameter read as the argument converted to the
parameter's type and the value to the result's: `A[idx(i, j, n)]` -> `A[(int)(i * n + j)]`, a flattened subscript
that delinearization reads, and a clamp a choice that poly/split.py makes. Only where every argument is an index
expression (no side effect, no element: each may be evaluated more than once, or not at all) and the function
reads nothing but its parameters; helpers calling helpers are inlined inside out."""
from __future__ import annotations

from dataclasses import replace

from pycparser import c_ast

from ..frontend import MIN_MAX, Region, int_type
from ._ast import clone, transform, walk
from .index_scalars import _index_like


def inline_index_calls(region: Region) -> Region:
    """*region* with the calls of the file's index helpers inlined (see the module)."""
    helpers = _helpers(region)
    if not helpers:
        return region
    done = [False]

    def fn(n):
        if not _helper_call(n, helpers):
            return None
        inlined = _inlined(n, helpers, 0)
        if inlined is None:
            return None
        done[0] = True
        return inlined

    body = transform(region.body, fn)
    return replace(region, body=body) if done[0] else region


# calls extract reads by their names, whatever the file defines them as (Pluto's integer divisions: `floord(e, 2)`
# is a quasi-affine floor, where its inlined body divides by a parameter)
KNOWN = MIN_MAX | {"floord", "ceild"}
MAX_DEPTH = 8  # helpers calling helpers: deeper (or recursive) calls are left as they are


def _inlined(call: c_ast.FuncCall, helpers: dict, depth: int) -> c_ast.Node | None:
    """The expression *call* computes, or None where it is no helper's call with index arguments."""
    f = helpers.get(call.name.name) if isinstance(call.name, c_ast.ID) else None
    args = call.args.exprs if call.args is not None else []
    if f is None or depth > MAX_DEPTH or len(args) != len(f.params):
        return None
    inner: list[c_ast.Node] = []
    for a in args:  # (an argument that calls a helper: that call inlined first)
        a = transform(clone(a), lambda n: _inlined(n, helpers, depth + 1) if _helper_call(n, helpers) else None)
        if not _index_like(a):
            return None
        inner.append(a)
    values = {p.name: a if isinstance(a, c_ast.Constant) else _cast(p.type, a) for p, a in zip(f.params, inner)}

    # the parameters first, then the helpers the body calls, on the arguments (not on the parameters' names,
    # which may be the caller's too: `at(k, j, n)` returning `idx(i, j, n)`)
    def parameter(n):
        if isinstance(n, c_ast.FuncCall) and n.args is not None:  # (its name is no parameter)
            n.args = transform(n.args, parameter)
            return n
        return clone(values[n.name]) if isinstance(n, c_ast.ID) and n.name in values else None

    out = transform(clone(f.result), parameter)
    out = transform(out, lambda n: (_inlined(n, helpers, depth + 1) or n) if _helper_call(n, helpers) else None)
    return _cast(f.returns, out) if _index_like(out) else None


def _helper_call(n: c_ast.Node, helpers: dict) -> bool:
    return isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and n.name.name in helpers


def _cast(t: c_ast.TypeDecl, e: c_ast.Node) -> c_ast.Node:
    """*e* converted to type *t* (a cast, C's conversion of an argument or a returned value)."""
    return c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None, clone(t.type))), e,
                      coord=e.coord)


class _Helper:
    def __init__(self, params: list[c_ast.Decl], returns: c_ast.TypeDecl, result: c_ast.Node):
        self.params, self.returns, self.result = params, returns, result


def _helpers(region: Region) -> dict[str, _Helper]:
    """The file's functions that return an integer index expression of their integer parameters in one
    statement, by name."""
    out: dict[str, _Helper] = {}
    if region.scope is None:
        return out
    for fd in region.scope.functions:
        decl = fd.decl
        if decl.name in KNOWN:
            continue
        ftype = decl.type if isinstance(decl, c_ast.Decl) else None
        if not isinstance(ftype, c_ast.FuncDecl) or not _integer(ftype.type, region):
            continue
        params = [] if ftype.args is None else list(ftype.args.params)
        if len(params) == 1 and isinstance(params[0], c_ast.Typename) and _is_void(params[0].type):
            params = []
        if not all(isinstance(p, c_ast.Decl) and p.name and _integer(p.type, region) for p in params):
            continue
        items = fd.body.block_items or []
        if len(items) != 1 or not isinstance(items[0], c_ast.Return) or items[0].expr is None:
            continue
        result = items[0].expr
        names = {p.name for p in params}
        reads = {n.name for n in walk(result) if isinstance(n, c_ast.ID)}
        calls = {n.name.name for n in walk(result) if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID)}
        if not reads <= names | calls:
            continue  # (a global, an enumerator: left as it is)
        out[decl.name] = _Helper(params, ftype.type, result)
    # a helper's own calls must be helpers' (or min/max, which _index_like accepts)
    return {name: h for name, h in out.items()
            if all(n.name.name in out or n.name.name in MIN_MAX for n in walk(h.result)
                   if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID))}


def _integer(t, region: Region) -> bool:
    if not (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)):
        return False
    words = [w2 for w in t.type.names for w2 in region.typedef_words.get(w, (w,))]
    return int_type(words) is not None


def _is_void(t) -> bool:
    return isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType) and t.type.names == ["void"]
