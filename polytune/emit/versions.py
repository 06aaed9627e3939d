"""The C text of a region with run-time checks (poly/versioning.py): `if (checks) { optimized } else
{ original }`. The assumptions and the range bounds are printed by isl's AST expression builder, under the
context of the constants alone; addresses are compared as integers (`__UINTPTR_TYPE__`)."""
from __future__ import annotations

import islpy as isl

from ..poly.scop import Scop
from ..poly.versioning import Range, Rows, RuntimeChecks, constants_context
from .printer import Printer, strip


def condition(scop: Scop, checks: RuntimeChecks, prefix: str) -> tuple[str, list[str], list[str]]:
    """The C condition of *checks*, and the macro definitions it needs before it and the #undefs after."""
    p = Printer(scop, prefix)
    p.macro = f"{prefix}_v_"  # (no identifier of the file looks like prefix_*: fresh_prefix)
    base = constants_context(scop)
    parts = []
    if checks.assumed is not None:
        build = isl.AstBuild.from_context(base.align_params(checks.assumed.get_space()))
        parts.append(f"({strip(p.expr(build.expr_from_set(checks.assumed)))})")
    for a, b in checks.disjoint:
        (a_lo, a_hi), (b_lo, b_hi) = (_bounds(p, scop, base, r) for r in (a, b))
        parts.append(f"({a_hi} <= {b_lo} || {b_hi} <= {a_lo})")
    for rows in checks.ordered:
        parts.append(_in_order(p, base, rows, prefix))
    return " && ".join(parts) or "1", p.macro_defs(), p.macro_undefs()


def _in_order(p: Printer, base: isl.Set, rows: Rows, prefix: str) -> str:
    """A GCC statement expression that is 1 where each touched row of *rows* ends below the next one's
    first touched element (a loop over the rows: their pointers are data)."""
    r, a = f"{prefix}_r", rows.array
    first, last, left, right = (f"({_value(p, base, x)})" for x in (rows.first, rows.last, rows.left, rows.right))
    return (f"({{ int {prefix}_in_order = 1; for (long {r} = {first}; {r} < {last}; {r}++) "
            f"if ((__UINTPTR_TYPE__)(&{a}[{r}][{right}] + 1) > (__UINTPTR_TYPE__)&{a}[{r} + 1][{left}]) "
            f"{{ {prefix}_in_order = 0; break; }} {prefix}_in_order; }})")


def _bounds(p: Printer, scop: Scop, base: isl.Set, r: Range) -> tuple[str, str]:
    """The addresses (as integers) of the first element of *r* and of the one after its last."""
    array = next(a for a in scop.arrays if a.name == r.array)

    def element(pma: isl.PwMultiAff) -> str:
        dims = [_value(p, base, pma.get_pw_aff(k)) for k in range(pma.dim(isl.dim_type.out))]
        if array.layout is not None:
            dims = array.layout.c_subscripts(dims)
        return f"&{r.array}{''.join(f'[{d}]' for d in dims)}"

    return f"(__UINTPTR_TYPE__){element(r.low)}", f"(__UINTPTR_TYPE__)({element(r.high)} + 1)"


def _value(p: Printer, base: isl.Set, pa: isl.PwAff) -> str:
    """The C text of *pa*, a function of the parameters, printed under the constants' context *base*."""
    build = isl.AstBuild.from_context(base.align_params(pa.get_space().params()))
    return strip(p.expr(build.expr_from_pw_aff(pa)))


def versioned(scop: Scop, checks: RuntimeChecks, optimized: str, original: str, indent: int, prefix: str) -> str:
    """The region as two versions (*optimized* printed at indent + 2, *original* as the user wrote it)."""
    cond, defs, undefs = condition(scop, checks, prefix)
    pad, pad1 = "  " * indent, "  " * (indent + 1)
    lines = [pad + "{", *defs, f"{pad1}if ({cond}) {{", *undefs, optimized.rstrip("\n"),
             f"{pad1}}} else {{", original.rstrip("\n"), f"{pad1}}}", pad + "}"]
    return "\n".join(lines) + "\n"
