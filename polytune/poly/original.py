"""The region's loops as written, as a base schedule the tiler and the parallel marks take like isl's.

isl's scheduler rebuilds the loop structure from the dependences alone, and where its choice is worse than
the program's own the cost model had nothing else to pick: hotspot's edge statements shifted by one row (no
parallel loop left), small_rows' three nests under the row loop fused along the columns with the 24-long
sum innermost. This schedule keeps the program's structure (Polly's starting point, and what a user's
`#pragma omp parallel for` assumed): a sequence node where the program runs statements or loops one after
the other, and one band per perfect nest of loops, its members merged while the band stays permutable: no
dependence that the outer loops do not carry goes backwards along any member. The members are the
statements' own loops, signs included (a loop that counts down runs its member negated), so the band's
order is the program's; tiling, point order and the OpenMP marks then go as for any base schedule
(schedule.make_schedule), and the final schedule is checked against every dependence there.
"""
from __future__ import annotations

import islpy as isl

from .deps import Dependences
from .fission import sequence_filters
from .islutil import bounded, maps_of
from .schedule import original_order
from .scop import Scop, Statement

ORIGINAL_OPERATIONS = 5_000_000  # isl quota of the permutability tests (past it: one band, nothing tiled)


def original_schedule(scop: Scop, deps: Dependences) -> isl.Schedule:
    """The base schedule of the region's own loop structure (module docstring); without dependences (the
    analysis ran out of its quota), the 2d+1 order as one band, as isl's scheduler's fallback gives it."""
    if not deps.complete:
        return original_order(scop)

    def build() -> isl.Schedule:
        node = isl.Schedule.from_domain(scop.domain).get_root().child(0)
        return _build(node, list(scop.statements), 0, deps.all.intersect_params(scop.context), None).get_schedule()

    try:
        return bounded(build, ORIGINAL_OPERATIONS)
    except isl.Error:  # (past the quota, or isl failed: the order as one band, which tiles nothing)
        return original_order(scop)


def _loop(st: Statement, level: int) -> isl.Map:
    """The statement's instances -> their value of its loop *level* in the original (2d+1) schedule."""
    m = st.schedule
    n = m.dim(isl.dim_type.out)
    return m.project_out(isl.dim_type.out, 2 * level + 2, n - 2 * level - 2) \
        .project_out(isl.dim_type.out, 0, 2 * level + 1)


def _members(stmts: list[Statement], levels: range) -> isl.UnionMap:
    """Each instance of *stmts* -> its loops *levels* (one output dimension each)."""
    out = None
    for st in stmts:
        m = None
        for level in levels:
            one = _loop(st, level)
            m = one if m is None else m.flat_range_product(one)
        part = isl.UnionMap.from_map(m)  # (not restricted to the domain: an empty one leaves no space)
        out = part if out is None else out.union(part)
    return out


def _forward(d: isl.UnionMap, member: isl.UnionMap) -> bool:
    """Whether no dependence of *d* goes backwards along *member* (one output dimension)."""
    values = d.apply_domain(member).apply_range(member)  # [x] -> [y]: the member's values at source and sink
    if values.is_empty():
        return True
    space = maps_of(values)[0].get_space().domain()
    return values.intersect(isl.UnionMap.from_map(isl.Map.lex_gt(space))).is_empty()


def _within(d: isl.UnionMap, stmts: list[Statement]) -> isl.UnionMap:
    """The dependences between instances of *stmts*."""
    names = {st.name for st in stmts}
    out = isl.UnionMap.empty(d.get_space())
    for m in maps_of(d):
        if m.get_tuple_name(isl.dim_type.in_) in names and m.get_tuple_name(isl.dim_type.out) in names:
            out = out.union(isl.UnionMap.from_map(m))
    return out


def _up(node, depth: int):
    """*node*'s ancestor at tree depth *depth*."""
    return node.ancestor(node.get_tree_depth() - depth)


def _build(node, stmts: list[Statement], level: int, d: isl.UnionMap, prefix: isl.UnionMap | None):
    """Insert at *node* (a leaf whose domain is *stmts*' instances) the structure of their loops from *level*
    down, *prefix* mapping each instance to its loops above; returns a node of the new tree."""
    depth = node.get_tree_depth()
    groups: dict[int, list[Statement]] = {}
    for st in stmts:
        groups.setdefault(st.beta(level) or 0, []).append(st)
    if len(groups) > 1:  # statements or loops one after the other
        order = [groups[k] for k in sorted(groups)]
        node = node.insert_sequence(sequence_filters([_domain(g) for g in order]))
        for k, g in enumerate(order):
            node = _up(_build(node.child(k).child(0), g, level, d, prefix), depth)
        return node
    if not any(len(st.iterators) > level for st in stmts):
        return node  # one statement, no loop left
    # one loop of the program around every statement of the group: a band of it and of the loops perfectly
    # nested in it, as long as the band stays permutable: no dependence between instances with equal outer
    # loops goes backwards along a member (along the first none does: the program runs that loop forward)
    inner = _within(d, stmts)
    if prefix is not None:
        inner = inner.intersect(prefix.apply_range(prefix.reverse()))
    last = level + 1
    while all(len(st.iterators) > last for st in stmts) and len({st.beta(last) or 0 for st in stmts}) == 1 \
            and _forward(inner, _members(stmts, range(last, last + 1))):
        last += 1
    band = _members(stmts, range(level, last))
    node = node.insert_partial_schedule(isl.MultiUnionPwAff.from_union_map(band)).band_set_permutable(1)
    return _build(node.child(0), stmts, last, d, _members(stmts, range(last)))


def _domain(stmts: list[Statement]) -> isl.UnionSet:
    """The instances of *stmts*."""
    out = None
    for st in stmts:
        part = isl.UnionSet(st.domain)
        out = part if out is None else out.union(part)
    return out
