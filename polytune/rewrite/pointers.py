"""Pointer variables declared in the region as an array plus an offset (`float *row = w + i*n;`,
`double *p = A[i];`, `float *q = &x[k];`) and never assigned again become accesses of that array:
`row[j]` -> `w[(i*n) + j]`, `p[j]` -> `A[i][j]`, `*q` -> `x[k + 0]`. The offset may read the iterators of
the loops around the declaration and values the region does not change. Declarations are taken in
order, so a pointer defined from an earlier one is resolved too."""
from __future__ import annotations

from dataclasses import replace

from pycparser import c_ast

from ..frontend import Region
from ._ast import (
    Target,
    assigned,
    bare_uses,
    clone,
    declarations,
    in_block,
    is_single_pointer,
    iterators_around,
    pointer_level,
    prelude_pointers,
    put_back,
    set_child,
    take_out,
    target_of,
    transform,
    variables,
    walk,
)


def resolve_pointers(region: Region) -> Region:
    """*region* with its pointer variables resolved to their arrays (see the module)."""
    body = region.body
    decls = declarations(body)
    changes = assigned(body, direct=True)
    around = iterators_around(body)
    changing = variables(body)
    is_array = _arrays(region, body)
    done = False
    for d in [n for n in walk(body) if isinstance(n, c_ast.Decl)]:
        if not is_single_pointer(d) or d.init is None or len(decls.get(d.name, ())) != 1 or changes.get(d.name):
            continue
        t = target_of(d.init, is_array)
        if not isinstance(t, Target) or t.base == d.name:
            continue
        loops = around.get(id(d), set())
        if any(n in changing and n not in loops for n in t.names()):
            continue
        block = in_block(body, d)
        if block is None:
            continue
        scope = take_out(block, d)  # the items after the declaration: where the name is this pointer
        _inline_into_pointers(scope, d)
        if (t.rows or t.offset is not None) and not _derefs_only(scope, d):
            block.block_items = block.block_items + [d]
            put_back(block, scope)
            continue  # the pointer itself is used (passed, compared): not an array access
        _resolve(scope, d.name, t)
        put_back(block, scope)
        changing.discard(d.name)
        done = True
    return replace(region, body=body) if done else region


def _inline_into_pointers(body, d: c_ast.Decl) -> None:
    """A pointer defined from pointer *d* (`last = row + 1`) defined from d's value instead (`A[i] + 1`)."""
    def fn(n):
        return clone(d.init) if isinstance(n, c_ast.ID) and n.name == d.name else None

    for other in walk(body):
        if other is not d and isinstance(other, c_ast.Decl) and is_single_pointer(other) and other.init is not None:
            other.init = transform(other.init, fn)


def _derefs_only(body, d) -> bool:
    """Whether every use of the pointer other than a subscript is a dereference `*p` or `*(p + e)`."""
    derefs = set()
    for n in walk(body):
        if isinstance(n, c_ast.UnaryOp) and n.op == "*":
            e = n.expr
            if isinstance(e, c_ast.ID) and e.name == d.name:
                derefs.add(id(e))
            elif isinstance(e, c_ast.BinaryOp) and e.op == "+" and isinstance(e.left, c_ast.ID) \
                    and e.left.name == d.name:
                derefs.add(id(e.left))
    return all(id(u) in derefs for u in bare_uses(body, d.name))


def _resolve(body, name: str, t: Target) -> None:
    def fn(n):
        if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ID) and n.name.name == name:
            return t.access(transform(n.subscript, fn), n.coord)
        if isinstance(n, c_ast.UnaryOp) and n.op == "*":
            e = n.expr
            if isinstance(e, c_ast.ID) and e.name == name:
                return t.access(c_ast.Constant("int", "0"), n.coord)
            if isinstance(e, c_ast.BinaryOp) and e.op == "+" and isinstance(e.left, c_ast.ID) and e.left.name == name:
                return t.access(transform(e.right, fn), n.coord)
        if isinstance(n, c_ast.ID) and n.name == name and not t.rows and t.offset is None:
            return c_ast.ID(t.base, coord=n.coord)
        return None

    for child_name, child in list(body.children()):
        set_child(body, child_name, transform(child, fn))


def _arrays(region: Region, body):
    """name -> whether it is declared as an array or a pointer (in the region, the function, the file)."""
    scope = region.scope
    known: dict = dict(scope.globals) if scope is not None else {}
    func = scope.function if scope is not None else None
    if func is not None:
        args = getattr(func.decl.type, "args", None)
        known.update({p.name: p for p in (args.params if args else []) if isinstance(p, c_ast.Decl) and p.name})
        known.update({n: ds[0] for n, ds in declarations(func.body).items()})
    known.update({n: ds[0] for n, ds in declarations(body).items()})
    hoisted = prelude_pointers(region)
    return lambda name: name in hoisted or (name in known and pointer_level(known[name].type) > 0)

