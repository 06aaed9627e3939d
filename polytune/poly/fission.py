"""Fission of a tiled band's point loops: where the statements of a band run one after another along a
member (for one iteration of the loops outside it, every instance of one statement comes before every
instance of the next), the band's tiles from that member inward become a sequence of one band per statement,
so that each statement's point loops are ordered and unrolled-and-jammed on their own.

gramschmidt's band (j, i') has the sums `R[k][j] += Q[i][k] * A[i][j]` at i' = i and the updates
`A[i][j] -= Q[i][k] * R[k][j]` at i' = m + i: fused, the updates' copies would share only loads, so the band
is not jammed, and each row of sums waits on the previous row's store of R[k][j]. Split under the parallel
j tiles, the sums' rows are jammed (their copies add into one R[k][j]) and the updates stay as they were, as
in Pluto's code (two nests under one parallel j-tile loop). The fusion was nominal: the two statements never
shared an iteration of the member.
"""
from __future__ import annotations

import functools

import islpy as isl

from .bands import band_nodes, loop_iterations, member_map
from .islutil import CTX, sets_of


def ordered_pieces(tile, first: int, deps: isl.UnionMap) -> tuple[int, list[isl.Set]] | None:
    """For a tiled band (*tile*, whose child is its point band, members in the original order) of two or
    more statements and no band below: the first member p >= *first* (p >= 1) along which the statements
    run one after another, with their domains in that order; or None. Along member p means: for every
    two instances of different statements in one iteration of the loops outside the band and of the tile
    loops 0..p-1, the earlier statement's value of member p is smaller. The split keeps every dependence
    forward: none goes from a later statement to an earlier one within one such iteration."""
    point = tile.child(0)
    n = tile.band_n_member()
    stmts = sets_of(point.get_domain())
    if len(stmts) < 2 or band_nodes(point.child(0)):
        return None
    dom = tile.get_domain()
    values = point.band_get_partial_schedule()
    for p in range(max(first, 1), n):
        outer = loop_iterations(tile, dom, p)
        together = outer.apply_range(outer.reverse())  # instance pairs in one iteration of those loops
        order = _statement_order(together, member_map(values, p, dom), stmts)
        if order is not None and forward(together.intersect(deps), order):
            return p, order
    return None


def _statement_order(together: isl.UnionMap, member: isl.UnionMap, stmts: list[isl.Set]) -> list[isl.Set] | None:
    """The statements sorted so that along *member* each one's instances come before the next one's
    wherever they meet in one iteration of the outer loops (*together*); None where two overlap."""
    lt = isl.UnionMap(isl.Map("{ [a] -> [b] : a < b }", context=CTX))

    def before(s: isl.Set, t: isl.Set) -> bool | None:
        pairs = together.intersect_domain(isl.UnionSet(s)).intersect_range(isl.UnionSet(t))
        values = pairs.apply_domain(member).apply_range(member)
        return None if values.is_empty() else values.is_subset(lt)  # None: they never meet

    n = len(stmts)
    rel = {(i, j): before(stmts[i], stmts[j]) for i in range(n) for j in range(n) if i != j}
    if all(b is None for b in rel.values()):
        return None  # no two statements meet: nothing is fused along this member
    if any(rel[i, j] is False and rel[j, i] is False for i in range(n) for j in range(i + 1, n)):
        return None  # two statements overlap along the member
    ordered = sorted(range(n), key=functools.cmp_to_key(lambda i, j: -1 if rel[i, j] else 1 if rel[j, i] else 0))
    # a total order: every pair that meets is in it (sorting alone trusts transitivity)
    if any(rel[j, i] for a, i in enumerate(ordered) for j in ordered[a + 1:]):
        return None
    return [stmts[i] for i in ordered]


def forward(deps: isl.UnionMap, order: list) -> bool:
    """Whether no dependence (within one iteration of the outer loops) goes from a later piece to an
    earlier one. Pieces: statement domains (isl.Set) or unions of them."""
    pieces = [_union_set(s) for s in order]
    for i, s in enumerate(pieces):
        for t in pieces[i + 1:]:
            if not deps.intersect_domain(t).intersect_range(s).is_empty():
                return False
    return True


def sequence_filters(order: list) -> isl.UnionSetList:
    """The filters of a sequence node, one per piece (an isl.Set or isl.UnionSet), in order."""
    out = isl.UnionSetList.alloc(CTX, len(order))
    for s in order:
        out = out.add(_union_set(s))
    return out


def _union_set(s) -> isl.UnionSet:
    return s if isinstance(s, isl.UnionSet) else isl.UnionSet(s)
