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
class RuntimeChecks:
    """A region's run-time checks: the assumptions (a set of parameters; None: none) and the pairs of
    arrays whose ranges must not overlap."""

    assumed: isl.Set | None
    disjoint: tuple[tuple[Range, Range], ...]

    def __bool__(self) -> bool:
        return self.assumed is not None or bool(self.disjoint)

    def describe(self) -> str:
        """One line for notes and reports."""
        parts = []
        if self.assumed is not None:
            parts.append(f"assumptions {self.assumed}")
        if self.disjoint:
            parts.append("no overlap of " + ", ".join(f"{a.array} and {b.array}" for a, b in self.disjoint))
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
    if scop.may_alias:
        context = scop.context
        for name in scop.may_alias:
            touched = None
            for st in scop.statements:
                for a in st.accesses:
                    if a.array == name:
                        elems = a.relation.intersect_domain(st.domain).range()
                        touched = elems if touched is None else touched.union(elems)
            if touched is None:
                continue
            found = [s for s in sets_of(isl.UnionSet(touched.coalesce()))
                     if s.get_tuple_name() == isl_name(name)]
            if not found:
                continue
            elems = found[0].intersect_params(context.align_params(found[0].get_space()))
            if elems.is_empty():
                continue
            ranges[name] = Range(name, elems.lexmin_pw_multi_aff(), elems.lexmax_pw_multi_aff())
    written = {a.name for a in scop.arrays if a.written}
    names = [n for n in scop.may_alias if n in ranges]
    pairs = tuple((ranges[a], ranges[b]) for k, a in enumerate(names) for b in names[k + 1:]
                  if a in written or b in written)
    return RuntimeChecks(assumed, pairs)
