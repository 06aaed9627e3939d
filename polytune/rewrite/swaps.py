"""Double buffers swapped by pointers at the end of a time loop (`double *tmp = cur; cur = next; next = tmp;`):
the loop's even iterations compute with the buffers the two pointers hold on entry, its odd ones with them
exchanged. The body becomes `if ((t - lo) % 2 == 0) { body } else { body, the two names exchanged }` over
the two entry values (read once before the region: `pt_cur`, `pt_next`, which a caller may pass overlapping,
so the output checks that they do not), and the optimized code swaps the pointers once after the loop where
it ran an odd number of iterations (Region.epilogue: the original code, where a run-time check fails, swaps
them itself). The loop must count up by one from `lo` while `t < hi` (or `t <= hi`); the pointers must be
declared outside the region and not assigned in it otherwise."""
from __future__ import annotations

from dataclasses import replace

from pycparser import c_ast

from ..frontend import Region
from ._ast import assigned, clone, declarations, fresh_name, is_single_pointer, replace_uses, text, walk


def resolve_swaps(region: Region) -> Region:
    """*region* with the pointer swaps of its loops resolved (see the module)."""
    scope = region.scope
    avoid = scope.avoid if scope is not None else frozenset()
    local = declarations(region.body)
    taken: set[str] = set()
    prelude, epilogue, shared, notes = list(region.prelude), list(region.epilogue), [], []
    for loop in [n for n in (region.body.block_items or []) if isinstance(n, c_ast.For)]:
        found = _swap(loop, local)
        if found is None:
            continue
        a, b, ctype, bounds = found
        t, lo, hi = bounds
        changes = assigned(region.body, direct=True)
        if len(changes.get(a, [])) != 1 or len(changes.get(b, [])) != 1 or \
                any(isinstance(n, c_ast.UnaryOp) and n.op == "&" and isinstance(n.expr, c_ast.ID)
                    and n.expr.name in (a, b) for n in walk(region.body)):
            continue
        items = loop.stmt.block_items[:-3]
        pa, pb = fresh_name(a, avoid, taken), fresh_name(b, avoid, taken)
        count = fresh_name(f"{a}_{b}_swaps", avoid, taken)
        even = c_ast.Compound([_copy(x) for x in items])
        odd = c_ast.Compound([_copy(x) for x in items])
        _rename(even, {a: pa, b: pb})
        _rename(odd, {a: pb, b: pa})
        parity = c_ast.BinaryOp("==", c_ast.BinaryOp("%", c_ast.BinaryOp("-", c_ast.ID(t), _copy(lo)),
                                                     c_ast.Constant("int", "2")), c_ast.Constant("int", "0"))
        loop.stmt = c_ast.Compound([c_ast.If(parity, even, odd, coord=loop.stmt.coord)], coord=loop.stmt.coord)
        prelude += [f"__typeof__(&({a})[0]) const {pa} = {a};", f"__typeof__(&({b})[0]) const {pb} = {b};",
                    f"const long {count} = ({text(hi)}) > ({text(lo)}) ? (long)({text(hi)}) - ({text(lo)}) : 0;"]
        tmp = fresh_name("swap", avoid, taken)
        epilogue.append(f"if ({count} % 2) {{ {ctype} {tmp} = {a}; {a} = {b}; {b} = {tmp}; }}")
        shared += [pa, pb]
        notes.append(f"{region.file}:{region.begin_line}: note: '{a}' and '{b}' are swapped at the end of each "
                     f"iteration of '{t}': its even iterations use the buffers they hold before the loop, its odd "
                     "ones the buffers exchanged")
    if not shared:
        return region
    return replace(region, prelude=tuple(prelude), epilogue=tuple(epilogue),
                   shared_params=tuple(dict.fromkeys(region.shared_params + tuple(shared))),
                   notes=region.notes + tuple(notes))


def _swap(loop: c_ast.For, local: dict):
    """(a, b, the pointer type's C text, (iterator, lo, hi)) where *loop* counts up by one and its body ends
    with `T *tmp = a; a = b; b = tmp;` of two pointers declared outside the region; else None."""
    body = loop.stmt
    if not isinstance(body, c_ast.Compound) or len(body.block_items or []) < 4:
        return None
    d, first, second = body.block_items[-3:]
    if not (isinstance(d, c_ast.Decl) and is_single_pointer(d) and isinstance(d.init, c_ast.ID)
            and _assigns(first) and _assigns(second)):
        return None
    a = d.init.name
    if not (first.lvalue.name == a and isinstance(first.rvalue, c_ast.ID) and second.rvalue.name == d.name):
        return None
    b = first.rvalue.name
    if second.lvalue.name != b or a == b or a in local or b in local or any(
            isinstance(n, c_ast.ID) and n.name == d.name for x in body.block_items[:-3] for n in walk(x)):
        return None
    bounds = _counted(loop)
    if bounds is None:
        return None
    ctype = text(c_ast.Typename(None, list(d.quals), None, _without_name(d.type)))
    return a, b, ctype, bounds


def _assigns(n) -> bool:
    return isinstance(n, c_ast.Assignment) and n.op == "=" and isinstance(n.lvalue, c_ast.ID) \
        and isinstance(n.rvalue, c_ast.ID)


def _counted(loop: c_ast.For):
    """(iterator, lo, hi) of `for (t = lo; t < hi; t++)` (`t <= hi`: hi + 1); else None."""
    init, cond, step = loop.init, loop.cond, loop.next
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None:
        t, lo = init.decls[0].name, init.decls[0].init
    elif isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
        t, lo = init.lvalue.name, init.rvalue
    else:
        return None
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=") and isinstance(cond.left, c_ast.ID)
            and cond.left.name == t):
        return None
    hi = cond.right if cond.op == "<" else c_ast.BinaryOp("+", cond.right, c_ast.Constant("int", "1"))
    unit = (isinstance(step, c_ast.UnaryOp) and step.op in ("p++", "++") and isinstance(step.expr, c_ast.ID)
            and step.expr.name == t) or (isinstance(step, c_ast.Assignment) and step.op == "+=" and
                                          isinstance(step.lvalue, c_ast.ID) and step.lvalue.name == t and
                                          isinstance(step.rvalue, c_ast.Constant) and step.rvalue.value == "1")
    if not unit or any(t in {n.name for n in walk(e) if isinstance(n, c_ast.ID)} for e in (lo, cond.right)):
        return None
    return t, lo, hi


def _without_name(t):
    t = _copy(t)
    n = t
    while not isinstance(n, c_ast.TypeDecl):
        n = n.type
    n.declname = None
    return t


def _copy(n):
    return clone(n)


def _rename(body: c_ast.Compound, names: dict[str, str]) -> None:
    """Every read of the names in *body* as the names they map to (at once: a swap of two names)."""
    marks = {old: f"__pt_swap_{k}" for k, old in enumerate(names)}
    for old, mark in marks.items():
        replace_uses(body, old, c_ast.ID(mark))
    for old, mark in marks.items():
        replace_uses(body, mark, c_ast.ID(names[old]))
