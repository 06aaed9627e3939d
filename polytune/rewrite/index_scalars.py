"""Index scalars substituted: a variable declared in the region with an integer expression of the loop
iterators around it and of values the region does not change (`int idx = i*cols + j;`), and never
assigned again, is replaced at each use by that expression (`A[idx]` -> `A[(i*cols + j)]`, a flattened
subscript that delinearization then reads), cast to the variable's type where that type differs from
int. Declarations are taken in order, so an index defined from an earlier one (`int row = i*n; int k = row
+ j;`) is substituted too; a name declared in several blocks (each nest's own `int xx`) is substituted in each
declaration's scope where that scope neither assigns nor declares it again. An index clamped right after its
declaration (`int xx = x + k; if (xx < 0) xx = 0; if (xx > w - 1) xx = w - 1;`, as image filters clamp to the
edge) is first declared with its final value
(`int xx = (x + k) < 0 ? 0 : ...`): a piecewise-affine subscript."""
from __future__ import annotations

from dataclasses import replace

from pycparser import c_ast

from ..frontend import MIN_MAX, Region, int_type
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


def substitute_index_scalars(region: Region) -> Region:
    """*region* with its index scalars substituted (see the module)."""
    body = region.body
    clamped = _fold_clamps(body)
    decls = declarations(body)
    changes = assigned(body)
    around = iterators_around(body)
    changing = variables(body)
    floats = set(region.float_scalars) | {n for n, ds in decls.items() if any(_floating(d) for d in ds)}
    done = False
    for d in [n for n in walk(body) if isinstance(n, c_ast.Decl)]:
        t = _integer(d, region)
        if t is None or d.init is None or isinstance(d.init, c_ast.InitList):
            continue
        if len(decls.get(d.name, ())) != 1:  # (one name declared in two blocks: each nest's own `int xx`)
            block = in_block(body, d)
            after = c_ast.Compound(block.block_items[block.block_items.index(d) + 1:]) if block is not None \
                else None
            if after is None or d.name in declarations(after) or assigned(after).get(d.name):
                continue
        elif changes.get(d.name):
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
    return replace(region, body=body) if done or clamped else region


def _fold_clamps(body) -> bool:
    """Each integer declaration followed in its block by `if (c) v = e;` statements (no else, c and e
    index expressions) declared with its value after them instead: `v = c' ? e' : v0`, where c' and e'
    read the value v0 before the statement (converted to v's type). Whether any was folded."""
    folded = False
    for block in [n for n in walk(body) if isinstance(n, c_ast.Compound) and n.block_items]:
        items, k = block.block_items, 0
        while k < len(items):
            d = items[k]
            k += 1
            if not isinstance(d, c_ast.Decl) or d.init is None or isinstance(d.init, c_ast.InitList) \
                    or not isinstance(d.type, c_ast.TypeDecl) or not _index_like(d.init):
                continue
            while k < len(items) and (e := _clamp(items[k], d.name)) is not None:
                cond, value = e
                old = c_ast.Cast(c_ast.Typename(None, [], None, clone(d.type)), d.init, coord=d.init.coord)
                old.to_type.type.declname = None  # the value as the variable holds it (`(int)(...)`)
                cond, value = _with(cond, d.name, old), _with(value, d.name, old)
                d.init = c_ast.TernaryOp(cond, value, clone(old), coord=items[k].coord)
                del items[k]
                folded = True
    return folded


def _clamp(item, name: str):
    """(condition, value) of `if (c) name = e;` with c and e index expressions; else None."""
    if not isinstance(item, c_ast.If) or item.iffalse is not None:
        return None
    then = item.iftrue
    if isinstance(then, c_ast.Compound) and len(then.block_items or []) == 1:
        then = then.block_items[0]
    if not (isinstance(then, c_ast.Assignment) and then.op == "=" and isinstance(then.lvalue, c_ast.ID)
            and then.lvalue.name == name and _index_like(item.cond) and _index_like(then.rvalue)):
        return None
    return item.cond, then.rvalue


def _with(e, name: str, value):
    """A copy of *e* with *name* read as (a copy of) *value*."""
    box = c_ast.Compound([c_ast.Return(clone(e))])
    replace_uses(box, name, value)
    return box.block_items[0].expr


def _integer(d: c_ast.Decl, region: Region) -> tuple[int, bool] | None:
    if not isinstance(d.type, c_ast.TypeDecl) or not isinstance(d.type.type, c_ast.IdentifierType):
        return None
    return int_type(d.type.type.names) or (region.int_types.get(d.name) if len(d.type.type.names) == 1 else None)


def _floating(d: c_ast.Decl) -> bool:
    t = d.type
    return isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType) \
        and bool({"float", "double"} & set(t.type.names))


def _index_like(e) -> bool:
    """An integer expression of names and constants (no element, member, call but min/max, side effect, cast
    but to an integer type)."""
    for n in walk(e):
        if isinstance(n, (c_ast.ArrayRef, c_ast.StructRef, c_ast.Assignment, c_ast.CompoundLiteral)):
            return False
        if isinstance(n, c_ast.Typename) and not (isinstance(n.type, c_ast.TypeDecl) and isinstance(
                n.type.type, c_ast.IdentifierType) and int_type(n.type.type.names) is not None):
            return False  # a cast to an integer type only
        if isinstance(n, c_ast.FuncCall) and not (isinstance(n.name, c_ast.ID) and n.name.name in MIN_MAX):
            return False
        if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&", "*", "sizeof"):
            return False
        if isinstance(n, c_ast.Constant) and n.type not in ("int", "long int", "unsigned int", "long long int",
                                                            "unsigned long int", "unsigned long long int", "char"):
            return False
    return True
