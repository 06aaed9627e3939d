"""Band nodes of schedule trees: every band below a node, a member's expression and map per statement,
the iterations of a member's loop, and short loops (constant trip counts below SHORT_LOOP)."""
from __future__ import annotations

import islpy as isl

SHORT_LOOP = 8  # constant trip counts up to this are "short" (filter taps, unrolled widths)
PEELED_LOOP = 16  # gcc -O3 peels a loop of at most this many iterations completely (max-completely-peel-times)


def band_nodes(node) -> list:
    """Every band node below *node*, depth first (plain recursion: no isl callback can raise)."""
    out = [node] if node.get_type() == isl.schedule_node_type.band else []
    for i in range(node.n_children()):
        out += band_nodes(node.child(i))
    return out


def child_bands(node) -> list:
    """The bands just below *node* (through sequences, filters and marks: no band between)."""
    out = []
    for i in range(node.n_children()):
        child = node.child(i)
        if child.get_type() == isl.schedule_node_type.band:
            out.append(child)
        elif child.get_type() != isl.schedule_node_type.leaf:
            out += child_bands(child)
    return out


def short_extent(extents: tuple[int | None, ...], m: int) -> bool:
    """Whether band member *m* has a known constant trip count below SHORT_LOOP."""
    return m < len(extents) and extents[m] is not None and extents[m] < SHORT_LOOP


def is_short(st: isl.Set, i: int) -> bool:
    lo, hi = st.dim_min_val(i), st.dim_max_val(i)
    return lo.is_int() and hi.is_int() and hi.sub(lo).to_python() < SHORT_LOOP


def _pw_space(st: isl.Set) -> isl.Space:
    return st.get_space().from_domain().add_dims(isl.dim_type.out, 1)


def member_of(upa: isl.UnionPwAff, st: isl.Set) -> isl.PwAff:
    """One band member's expression for one statement."""
    return upa.intersect_domain(isl.UnionSet(st)).extract_pw_aff(_pw_space(st))


def single_aff(upa: isl.UnionPwAff, st: isl.Set) -> isl.Aff | None:
    """The affine expression of one band member for one statement, if it has a single piece."""
    pieces = member_of(upa, st).get_pieces()
    return pieces[0][1] if len(pieces) == 1 else None


def loop_iterations(node, dom, members: int) -> isl.UnionMap:
    """Each instance of *dom* -> its outer schedule dimensions followed by the band's first *members*
    members: two instances with the same image run in the same iteration of the loop of member
    members - 1."""
    prefix = node.get_prefix_schedule_union_map().intersect_domain(dom)
    mupa = node.band_get_partial_schedule()
    for k in range(members):
        prefix = prefix.flat_range_product(member_map(mupa, k, dom))
    return prefix


def member_map(mupa: isl.MultiUnionPwAff, k: int, dom: isl.UnionSet) -> isl.UnionMap:
    return isl.UnionMap.from_union_pw_aff(mupa.get_at(k)).intersect_domain(dom)
