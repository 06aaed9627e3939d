"""Pointers defined before the region (`double *p = B;`, `p = &B[k]`, `p = A[i] + 1`): resolved to the array
they point into, with the offset, or the region refused. Never taken for a separate array without a word.

A pointer variable the region subscripts is one of:
- an array of its own: every definition is an allocation (`malloc`, `calloc`, ...): kept as it is;
- an alias: every definition is the same array plus offset, and nothing the offset reads changes in the
  function: `p[e]` becomes `B[offset + e]` (`A[i][1 + e]` for a row), so the model sees one array;
- opaque: one definition from memory polytune cannot see (a struct member, a call): it may overlap the
  other arrays the way a pointer parameter may (`shared_params`: the overlap warning, run-time checks);
- anything else (several definitions that differ, its address taken, a parameter assigned): refused.
Pointer parameters themselves are left to the parameter checks. Issue 33's third reproduction: `p = B` was
taken for a different array than `B`, and the time loop's scalar replacement gave wrong results.
"""
from __future__ import annotations

from dataclasses import replace

from pycparser import c_ast

from ..errors import UnsupportedError
from ..frontend import Region
from ._ast import (
    FRESH,
    Target,
    array_uses,
    assigned,
    bare_uses,
    clone,
    declarations,
    is_single_pointer,
    line_of,
    pointer_level,
    target_of,
    text,
    transform,
    walk,
)


def resolve_aliases(region: Region) -> Region:
    """*region* with the subscripts of pointers defined before it resolved to their arrays (see the module)."""
    scope = region.scope
    if scope is None:
        return region
    local = declarations(region.body)
    uses = array_uses(region.body)
    body, opaque, notes = region.body, [], []
    for name in sorted(uses):
        if name in local:
            continue  # declared inside the region: rewrite/pointers.py's
        kind, what = _classify(name, region)
        if kind == "alias":
            body = _substitute(body, name, what, region)
            notes.append(f"'{name}' points into '{what.base}': its subscripts are accesses of '{what.base}'")
        elif kind == "opaque":
            opaque.append(name)
        elif kind == "refuse":
            raise UnsupportedError(what, region.file, line_of(uses[name][0], region.begin_line))
    if body is region.body and not opaque:
        return region
    return replace(region, body=body, shared_params=tuple(dict.fromkeys(region.shared_params + tuple(opaque))),
                   notes=region.notes + tuple(f"{region.file}:{region.begin_line}: note: {n}" for n in notes))


def _classify(name: str, region: Region):
    """("array" | "alias" | "opaque" | "refuse" | "unknown", Target or reason) for a name the region subscripts."""
    scope = region.scope
    func = scope.function
    params = {p.name: p for p in _params(func)}
    decls = declarations(func.body).get(name, []) if func is not None else []
    decls = [d for d in decls if not _inside(d, region)]
    if func is None and name not in scope.globals:
        if scope.unreadable:
            return "refuse", (f"cannot read the function around the region ({', '.join(scope.unreadable)}), so "
                              f"cannot tell which array '{name}' is: polytune's C reader (pycparser) failed on it")
        return "unknown", None
    if len(decls) > 1:
        return "refuse", (f"'{name}' is declared more than once in the function (lines "
                          f"{', '.join(str(line_of(d, 0)) for d in decls)}): polytune cannot tell which one the "
                          "region accesses")
    if decls:
        decl, bodies, where = decls[0], [func.body], "function"
    elif name in params:
        decl, bodies, where = params[name], [func.body], "parameter"
    elif name in scope.globals:
        decl, bodies, where = scope.globals[name], list(scope.functions), "global"
    else:
        return "unknown", None
    if isinstance(decl.type, c_ast.ArrayDecl) or not isinstance(decl.type, c_ast.PtrDecl):
        return "array", None
    changes = [n for b in bodies for n in assigned(b, direct=True).get(name, [])]
    if where == "parameter":
        if changes:
            return "refuse", (f"the pointer parameter '{name}' is assigned in the function (line "
                              f"{line_of(changes[0], 0)}): polytune cannot tell which array it points to")
        return "parameter", None
    if not is_single_pointer(decl):
        return "array", None  # a pointer to pointers or rows: subscripted like a multi-dimensional array
    escaped = [n for n in changes if isinstance(n, c_ast.UnaryOp) and n.op == "&"]
    allocating = {id(c.args.exprs[0]) for b in bodies for c in walk(b) if isinstance(c, c_ast.FuncCall)
                  and isinstance(c.name, c_ast.ID) and c.name.name == "posix_memalign" and c.args and c.args.exprs}
    defs = ([decl.init] if decl.init is not None else []) + \
        [n.rvalue for n in changes if isinstance(n, c_ast.Assignment) and n.op == "="]
    others = [n for n in changes if not (isinstance(n, c_ast.Assignment) and n.op == "=") and n not in escaped]
    if escaped and all(id(n) in allocating for n in escaped) and not defs and not others:
        return "array", None  # posix_memalign(&p, ...)
    if escaped or others:
        n = (escaped or others)[0]
        return "refuse", (f"'{name}' may point into another array (line {line_of(n, 0)}: {text(n)}): polytune "
                          "cannot tell which memory the region accesses through it")
    is_array = _arrays(region, func, params)
    targets = [target_of(d, is_array) for d in defs]
    if not targets:
        return "array", None
    if all(t == FRESH for t in targets):
        return "array", None
    if all(isinstance(t, Target) for t in targets) and len({t.key() for t in targets}) == 1:
        t = targets[0]
        moving = sorted(v for v in t.names() if _changes(v, func, scope, params))
        if t.base != name and not moving:
            return "alias", t
        if moving:
            return "refuse", (f"'{name}' points into '{t.base}' at an offset that changes ('{moving[0]}' is "
                              "assigned in the function): polytune cannot tell where the region's accesses are")
    if len(defs) == 1 and _unseen(defs[0]):
        return "opaque", None  # a struct member, a call: memory polytune does not see, as a parameter's
    lines = ", ".join(str(line_of(d, 0)) for d in defs)
    return "refuse", (f"'{name}' may point into another array (it is assigned {text(defs[0])}"
                      f"{f' and more, lines {lines}' if len(defs) > 1 else ''}): polytune cannot tell which "
                      "memory the region accesses through it")


def _unseen(e) -> bool:
    """A pointer value from memory polytune does not see: a struct member, a call's result (casts aside)."""
    while isinstance(e, c_ast.Cast):
        e = e.expr
    return isinstance(e, (c_ast.StructRef, c_ast.FuncCall))


def _params(func) -> list:
    if func is None:
        return []
    args = getattr(func.decl.type, "args", None)
    return [p for p in (args.params if args else []) if isinstance(p, c_ast.Decl) and p.name]


def _arrays(region: Region, func, params: dict):
    """name -> whether it is declared as an array or a pointer (in the function, as a parameter, globally)."""
    local = declarations(func.body) if func is not None else {}
    inner = declarations(region.body)

    def is_array(name: str) -> bool:
        decl = (inner.get(name) or local.get(name) or [params.get(name) or region.scope.globals.get(name)])[0]
        return decl is not None and pointer_level(decl.type) > 0

    return is_array


def _changes(var: str, func, scope, params: dict) -> bool:
    """Whether variable *var* may change in the function (or, for a global, anywhere in the file) after its
    declaration: then `p = B + var` no longer says where p points."""
    local = declarations(func.body).get(var, []) if func is not None else []
    if len(local) > 1:
        return True
    if local or var in params:
        return bool(assigned(func.body, direct=True).get(var))
    return any(assigned(f, direct=True).get(var) for f in scope.functions)


def _inside(decl: c_ast.Decl, region: Region) -> bool:
    line = line_of(decl, 0)
    return region.begin_line <= line <= region.end_line


def _substitute(body, name: str, t: Target, region: Region):
    """*body* (copied) with `name[e]` replaced by t's access, and a bare `name` by t's base where t is the
    base itself; another bare use of the pointer is refused."""
    body = clone(body)
    bare = bare_uses(body, name)
    if bare and (t.rows or t.offset is not None):
        raise UnsupportedError(f"'{name}' points into '{t.base}' at an offset and is used as a pointer in the "
                               f"region ({text(bare[0])}): not supported", region.file,
                               line_of(bare[0], region.begin_line))

    def fn(n):
        if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ID) and n.name.name == name:
            return t.access(transform(n.subscript, fn), n.coord)
        if isinstance(n, c_ast.ID) and n.name == name:
            return c_ast.ID(t.base, coord=n.coord)
        return None

    return transform(body, fn)
