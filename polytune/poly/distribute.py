"""Innermost distribution of data-dependent conditions: statements that the program wrote in separate
innermost loops, some of them under a data-dependent condition, get separate innermost loops again where
isl's scheduler fused them, the loops outside staying fused.

isl fuses the loops of consecutive nests that share data (proximity): unsharp masking's blur pass and its
threshold pass, `if (fabsf(src - blur) > threshold) dst = src + amount * diff; else dst = src;`, became one
(y, x) nest. gcc vectorizes the blur's x loop on its own, but not the threshold's: the branches compute in
floating point, which it does not evaluate speculatively under C's default floating-point semantics
(-ftrapping-math), and a store under a condition needs masked stores. Fused, neither is vectorized: 0.49x of
the original at 1 thread. Distributed at x under the fused y loop, the blur's row is read back from the
cache by the threshold's loop and the blur's loop is vectorized as in the original.

Which statements: those of one band whose innermost member runs statements from different innermost loops
of the original program (their original schedules differ before that depth; every statement of the band
with at least that many loops), some of them under a
data-dependent condition (the statement's body is an `if`, extract.py) and some not. The pieces are those
loops' statements in the original order, adjacent loops of the same kind kept together. The distribution
is made only where it keeps every dependence: within one iteration of the loops outside the innermost
member, none goes from a later piece to an earlier one (fission.py's test); the schedule is checked against
every dependence afterwards (legality.py), as every schedule is.
"""
from __future__ import annotations

import islpy as isl
from pycparser import c_ast

from .bands import loop_iterations
from .fission import forward, sequence_filters
from .islutil import bounded, sets_of
from .marks import ContractionMark, mark_of
from .scop import Scop, Statement


def conditional(st: Statement) -> bool:
    """Whether the statement runs under a data-dependent condition (its body is the guard's `if`)."""
    return isinstance(st.body, c_ast.If)


def pieces(node, scop: Scop, deps: isl.UnionMap) -> list[isl.UnionSet] | None:
    """For a band node: the statement domains of each piece, in order, where its last member should be
    distributed (module docstring); None where not."""
    stmts = sets_of(node.get_domain())
    if len(stmts) < 2 or (node.band_n_member() > 1 and not node.band_get_permutable()):
        return None  # (a band that is not permutable: the original order's, kept as it is)
    by_name = {st.name: st for st in scop.statements}
    if any(s.get_tuple_name() not in by_name for s in stmts):
        return None  # (a statement the region does not list: none is expected)
    named = [(by_name[s.get_tuple_name()], s) for s in stmts]
    if not any(conditional(st) for st, _ in named) or all(conditional(st) for st, _ in named):
        return None
    depth = node.get_schedule_depth() + node.band_n_member()
    if any(len(st.iterators) < depth for st, _ in named):
        return None  # a statement of fewer loops fused in (k-means' `index = 0` before its cluster loop)
    loops: dict[tuple, list[tuple[Statement, isl.Set]]] = {}
    for st, s in named:
        key = tuple(st.beta(m) for m in range(depth))  # the same: in the same loop at that depth
        if None in key:
            return None  # (no original order to go by)
        loops.setdefault(key, []).append((st, s))
    if len(loops) < 2:
        return None  # one loop of the program: fused as written
    out: list[tuple[bool, list[isl.Set]]] = []
    for key in sorted(loops):
        kind = any(conditional(st) for st, _ in loops[key])
        if out and out[-1][0] == kind:
            out[-1][1].extend(s for _, s in loops[key])
        else:
            out.append((kind, [s for _, s in loops[key]]))
    if len(out) < 2:
        return None
    names = [{s.get_tuple_name() for s in ss} for _, ss in out]
    if _shared_below(node.child(0), names):
        return None  # a loop inside runs both: the distribution belongs there
    order = [_union(ss) for _, ss in out]
    outer = loop_iterations(node, node.get_domain(), node.band_n_member() - 1)
    together = outer.apply_range(outer.reverse())  # instance pairs in one iteration of the outer loops
    return order if forward(together.intersect(deps), order) else None


def _shared_below(node, names: list[set[str]]) -> bool:
    """Whether some band in the subtree at *node* runs statements of two of the pieces *names*."""
    if node.get_type() == isl.schedule_node_type.band:
        here = {s.get_tuple_name() for s in sets_of(node.get_domain())}
        if sum(1 for piece in names if piece & here) >= 2:
            return True
    return any(_shared_below(node.child(i), names) for i in range(node.n_children()))


def _union(sets: list[isl.Set]) -> isl.UnionSet:
    """The statements' domains as one filter."""
    out = isl.UnionSet(sets[0])
    for s in sets[1:]:
        out = out.union(isl.UnionSet(s))
    return out


DISTRIBUTE_OPERATIONS = 2_000_000  # isl quota of the whole step (past it: the schedule as it was)


def distribute(schedule: isl.Schedule, scop: Scop, deps: isl.UnionMap) -> isl.Schedule:
    """*schedule* with the innermost members of its bands distributed where the module docstring says; as it
    was where isl cannot tell within DISTRIBUTE_OPERATIONS."""
    if not any(conditional(st) for st in scop.statements):
        return schedule
    try:
        return bounded(lambda: _distribute(schedule, scop, deps), DISTRIBUTE_OPERATIONS)
    except isl.Error:
        return schedule


def _distribute(schedule: isl.Schedule, scop: Scop, deps: isl.UnionMap) -> isl.Schedule:
    deps = deps.intersect_params(scop.context)

    def visit(node):
        if isinstance(mark_of(node), ContractionMark):
            return node
        if node.get_type() == isl.schedule_node_type.band:
            order = pieces(node, scop, deps)
            if order is not None:
                n = node.band_n_member()
                depth = node.get_tree_depth()
                inner = node.band_split(n - 1).child(0) if n > 1 else node
                node = inner.insert_sequence(sequence_filters(order))
                while node.get_tree_depth() > depth:
                    node = node.parent()
        for i in range(node.n_children()):
            node = visit(node.child(i)).parent()
        return node

    return visit(schedule.get_root()).get_schedule()
