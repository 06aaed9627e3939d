"""`continue` as the guard it is: in a loop body, `if (c) continue; rest` becomes `if (!(c)) { rest }`, and a
plain `continue;` ends the body. A `continue` anywhere else (deeper in a branch) is left for extraction
to refuse."""
from __future__ import annotations

from dataclasses import replace

from pycparser import c_ast

from ..frontend import Region
from ._ast import walk


def guard_continues(region: Region) -> Region:
    """*region* with the `continue` statements of its loop bodies turned into guards (see the module)."""
    changed = False
    for n in list(walk(region.body)):
        if isinstance(n, c_ast.For) and isinstance(n.stmt, c_ast.Compound) and n.stmt.block_items:
            items = _guarded(n.stmt.block_items)
            if items is not None:
                n.stmt.block_items = items
                changed = True
    return replace(region) if changed else region


def _continues(node) -> bool:
    return isinstance(node, c_ast.Continue) or (isinstance(node, c_ast.Compound) and len(node.block_items or []) == 1
                                                and isinstance(node.block_items[0], c_ast.Continue))


def _guarded(items: list) -> list | None:
    """The items of a loop body with its top-level continues as guards; None where there is none."""
    for k, item in enumerate(items):
        if isinstance(item, c_ast.Continue):
            return items[:k]
        if isinstance(item, c_ast.If) and item.iffalse is None and _continues(item.iftrue):
            rest = items[k + 1:]
            rest = _guarded(rest) or rest
            if not rest:
                return items[:k]
            cond = c_ast.UnaryOp("!", item.cond, coord=item.coord)
            return items[:k] + [c_ast.If(cond, c_ast.Compound(rest, coord=item.coord), None, coord=item.coord)]
    return None
