"""Index scalars substituted: a variable declared in the region with an integer expression of the loop
iterators around it and of values the region does not change (`int idx = i*cols + j;`), and never
assigned again, is replaced at each use by that expression (`A[idx]` -> `A[(i*cols + j)]`, a flattened
subscript that delinearization then reads), cast to the variable's type where that type differs from
int. Declarations are taken in order, so an index defined from an earlier one (`int row = i*n; int k = row
+ j;`) is substituted too."""
from __future__ import annotations

from dataclasses import replace

from pycparser import c_ast

from ..frontend import Region, int_type
from ._ast import (
    assigned,
    clone,
    declarations,
    in_block,
    iterators_around,
    put_back,
    replace_uses,
    take_out,
    variables,
    walk,
)

_INDEX_CALLS = frozenset({"min", "max", "MIN", "MAX"})


def substitute_index_scalars(region: Region) -> Region:
    """*region* with its index scalars substituted (see the module)."""
    body = region.body
    decls = declarations(body)
    changes = assigned(body)
    around = iterators_around(body)
    changing = variables(body)
    floats = set(region.float_scalars) | {n for n, ds in decls.items() if any(_floating(d) for d in ds)}
    done = False
    for d in [n for n in walk(body) if isinstance(n, c_ast.Decl)]:
        t = _integer(d, region)
        if t is None or d.init is None or isinstance(d.init, c_ast.InitList) or len(decls.get(d.name, ())) != 1 \
                or changes.get(d.name):
            continue
        names = {n.name for n in walk(d.init) if isinstance(n, c_ast.ID)}
        loops = around.get(id(d), set())
        if names & floats or any(n in changing and n not in loops for n in names) or not _index_like(d.init):
            continue
        value = c_ast.Cast(c_ast.Typename(None, [], None, clone(d.type)), clone(d.init), coord=d.init.coord) \
            if t != (32, False) or not all(region.int_types.get(n, (32, False)) == (32, False) for n in names) \
            else clone(d.init)
        if isinstance(value, c_ast.Cast):
            value.to_type.type.declname = None
        block = in_block(body, d)
        if block is None:
            continue
        scope = take_out(block, d)
        replace_uses(scope, d.name, value)
        put_back(block, scope)
        changing.discard(d.name)
        done = True
    return replace(region, body=body) if done else region


def _integer(d: c_ast.Decl, region: Region) -> tuple[int, bool] | None:
    if not isinstance(d.type, c_ast.TypeDecl) or not isinstance(d.type.type, c_ast.IdentifierType):
        return None
    return int_type(d.type.type.names) or (region.int_types.get(d.name) if len(d.type.type.names) == 1 else None)


def _floating(d: c_ast.Decl) -> bool:
    t = d.type
    return isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType) \
        and bool({"float", "double"} & set(t.type.names))


def _index_like(e) -> bool:
    """An integer expression of names and constants (no element, member, call but min/max, side effect)."""
    for n in walk(e):
        if isinstance(n, (c_ast.ArrayRef, c_ast.StructRef, c_ast.Assignment, c_ast.Typename, c_ast.CompoundLiteral)):
            return False
        if isinstance(n, c_ast.FuncCall) and not (isinstance(n.name, c_ast.ID) and n.name.name in _INDEX_CALLS):
            return False
        if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&", "*", "sizeof"):
            return False
        if isinstance(n, c_ast.Constant) and n.type not in ("int", "long int", "unsigned int", "long long int",
                                                            "unsigned long int", "unsigned long long int", "char"):
            return False
    return True
