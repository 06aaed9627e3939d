"""What the optimized code of a region assumes and the output checks at run time (Polly's run-time checks
and assumption versioning): the region becomes `if (checks) { optimized } else { original }`.

- *Assumptions* on the parameters (`Scop.assumed`): delinearization's (poly/delinearize.py), that every
  inner subscript of a recovered view stays in its row (`0 <= j < n`, `lda >= K`). The check is the set
  itself, less what the context's constants imply (isl's gist), printed by isl's AST expression builder.
- *No overlap* of the arrays a caller may pass overlapping (`Scop.may_alias`: pointer parameters without
  `restrict`, frontend.unrestricted_params): per array the lowest and the highest element the region
  touches (isl's lexmin and lexmax of the elements its accesses reach over their domains: functions of
  the parameters, under the assumptions); per pair of which one is written, the address ranges
  [&lowest, &highest + 1) must be disjoint. The model takes differently named arrays for different memory;
  the check makes that true for the code that runs (`smooth(A, A)` runs the original).
- *Rows in order* of the arrays whose rows are pointers (`Scop.pointer_rows`: `double **A`, rows anywhere):
  each touched row's last touched element lies below the next row's first, so that the rows overlap
  neither each other (the model takes A[i][j] and A[i'][j] for different elements) nor, by the range check
  above, which takes the span from the first row to the last, another array. Rows in another order run the
  original.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from ..errors import UnsupportedError
from .islutil import CTX, bounded, isl_name, sets_of
from .scop import Scop

CHECK_OPERATIONS = 2_000_000  # (a safety net, as the other quotas)


@dataclass(frozen=True, eq=False)
class Range:
    """The elements of *array* the region touches lie between *low* and *high* (lexicographically; each a
    function of the parameters, one piece per case)."""

    array: str
    low: isl.PwMultiAff
    high: isl.PwMultiAff


@dataclass(frozen=True, eq=False)
class Rows:
    """The rows *first* to *last* of a two-dimensional array whose rows are pointers, of which the region
    touches the columns *left* to *right* (each a function of the parameters)."""

    array: str
    first: isl.PwAff
    last: isl.PwAff
    left: isl.PwAff
    right: isl.PwAff


@dataclass(frozen=True, eq=False)
class RuntimeChecks:
    """A region's run-time checks: the assumptions (a set of parameters; None: none), the pairs of arrays
    whose ranges must not overlap, and the arrays of pointer rows whose touched rows must follow each other
    in memory (each row's touched columns end before the next row's begin: the rows then overlap neither
    each other nor, within their range's bounds, anything outside it)."""

    assumed: isl.Set | None
    disjoint: tuple[tuple[Range, Range], ...]
    ordered: tuple[Rows, ...] = ()

    def __bool__(self) -> bool:
        return self.assumed is not None or bool(self.disjoint) or bool(self.ordered)

    def describe(self) -> str:
        """One line for notes and reports."""
        parts = []
        if self.assumed is not None:
            parts.append(f"assumptions {self.assumed}")
        if self.disjoint:
            parts.append("no overlap of " + ", ".join(f"{a.array} and {b.array}" for a, b in self.disjoint))
        if self.ordered:
            parts.append("the rows of " + ", ".join(r.array for r in self.ordered) + " in order in memory")
        return "; ".join(parts)


def constants_context(scop: Scop) -> isl.Set:
    """The context of the constants alone (the scop's context less its assumptions)."""
    fixed = " and ".join(f"{n} = {v}" for n, v in scop.constants.items()) or "true"
    return isl.Set(f"[{', '.join(scop.constants)}] -> {{ : {fixed} }}", context=CTX)


def runtime_checks(scop: Scop) -> RuntimeChecks:
    """The checks *scop*'s optimized code needs (empty, and false as a truth value, where it needs none).
    UnsupportedError where isl cannot compute them within its quota (the region is refused, not assumed)."""
    try:
        return bounded(lambda: _checks(scop), CHECK_OPERATIONS)
    except isl.Error:
        raise UnsupportedError("cannot compute the run-time checks of the region (its assumptions or the "
                               "ranges of its arrays) within isl's operation limit", scop.file,
                               scop.begin_line) from None


def _checks(scop: Scop) -> RuntimeChecks:
    assumed = None
    if scop.assumed is not None:
        base = constants_context(scop)
        gist = scop.assumed.align_params(base.get_space()).gist_params(base.align_params(scop.assumed.get_space()))
        if not gist.is_params() or not isl.Set.universe(gist.get_space()).is_subset(gist):
            assumed = gist.coalesce()
    ranges = {}
    for name in scop.may_alias:
        elems = _touched(scop, name)
        if elems is not None:
            ranges[name] = Range(name, elems.lexmin_pw_multi_aff(), elems.lexmax_pw_multi_aff())
    written = {a.name for a in scop.arrays if a.written}
    names = [n for n in scop.may_alias if n in ranges]
    pairs = tuple((ranges[a], ranges[b]) for k, a in enumerate(names) for b in names[k + 1:]
                  if a in written or b in written)
    ordered = []
    for name in scop.pointer_rows:
        elems = _touched(scop, name)
        if elems is not None:
            ordered.append(Rows(name, elems.dim_min(0), elems.dim_max(0), elems.dim_min(1), elems.dim_max(1)))
    return RuntimeChecks(assumed, pairs, tuple(ordered))


def _touched(scop: Scop, name: str) -> isl.Set | None:
    """The elements of array *name* the region's accesses reach (under the context); None where none."""
    touched = None
    for st in scop.statements:
        for a in st.accesses:
            if a.array == name:
                elems = a.relation.intersect_domain(st.domain).range()
                touched = elems if touched is None else touched.union(elems)
    if touched is None:
        return None
    found = [s for s in sets_of(isl.UnionSet(touched.coalesce())) if s.get_tuple_name() == isl_name(name)]
    if not found:
        return None
    elems = found[0].intersect_params(scop.context.align_params(found[0].get_space()))
    return None if elems.is_empty() else elems
