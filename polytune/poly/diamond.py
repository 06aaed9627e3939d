"""Diamond tiles (concurrent start): a time-tiled stencil band with its time member replaced by a
mirrored space member, so that all tiles of one time level can start at once."""
from __future__ import annotations

import islpy as isl

from .bands import loop_iterations, single_aff
from .islutil import CTX, maps_of, sets_of


def concurrent_start(node, deps: isl.UnionMap):
    """A time-tiled stencil band (t, s*t + i, ...) with its time member replaced by the mirror of the
    first space member, (s*t + i, s*t - i + c, ...): Pluto's diamond tiling (concurrent start).

    With the time member, the tile wavefront starts at one corner and the tiles of a wavefront are
    few (pipelined parallelism); with the two mirrored members, all tiles of one time level are
    independent. The constant c of each statement is the smallest that keeps every dependence
    distance along the new member non-negative (difference constraints between statements); the band
    stays permutable. None when the band does not have that shape or no constants work."""
    n = node.band_n_member()
    if n < 2:
        return None
    mupa = node.band_get_partial_schedule()
    dom = node.get_domain()
    mirror: dict[str, isl.Aff] = {}
    spaces: dict[str, isl.Set] = {}
    skewed = False  # some statement's first space member is time-skewed space (s*t + i)
    for st in sets_of(dom):
        h0, h1 = (single_aff(mupa.get_at(k), st) for k in (0, 1))
        if h0 is None or h1 is None:
            return None
        nd = st.dim(isl.dim_type.set)
        c0 = [h0.get_coefficient_val(isl.dim_type.in_, i).to_python() for i in range(nd)]
        if sorted(c0) != [0] * (nd - 1) + [1] or any(
                not h0.get_coefficient_val(isl.dim_type.param, k).is_zero()
                for k in range(h0.dim(isl.dim_type.param))):
            return None  # the first member is not one loop (the time loop)
        t = c0.index(1)
        slope = h1.get_coefficient_val(isl.dim_type.in_, t)
        if not slope.is_pos():
            return None  # the first space member is not skewed by time
        skewed = skewed or any(not h1.get_coefficient_val(isl.dim_type.in_, i).is_zero()
                               for i in range(nd) if i != t)
        mirror[st.get_tuple_name()] = h0.scale_val(slope.mul(isl.Val.int_from_si(CTX, 2))).sub(h1)
        spaces[st.get_tuple_name()] = st
    if not skewed:
        return None
    # dependences live in this band: between instances with the same outer schedule
    prefix = loop_iterations(node, dom, 0)
    deps = deps.intersect_domain(dom).intersect_range(dom).intersect(
        prefix.apply_range(prefix.reverse()))
    bound: dict[tuple[str, str], int] = {}
    for d in maps_of(deps):
        a, b = d.get_tuple_name(isl.dim_type.in_), d.get_tuple_name(isl.dim_type.out)
        dist = d.apply_domain(isl.Map.from_aff(mirror[a])).apply_range(isl.Map.from_aff(mirror[b])).deltas()
        low = dist.dim_min_val(0) if not dist.is_empty() else None
        if low is None:
            continue
        if not low.is_int():
            return None
        bound[(a, b)] = max(bound.get((a, b), -(1 << 30)), -low.to_python())
    # c_b - c_a >= bound[a, b]: the least non-negative solution by longest paths (Bellman-Ford)
    shift = dict.fromkeys(mirror, 0)
    for _ in range(len(shift) + 1):
        changed = False
        for (a, b), need in bound.items():
            if shift[b] - shift[a] < need:
                shift[b] = shift[a] + need
                changed = True
        if not changed:
            break
    else:
        return None  # a positive cycle: no constants make the mirror legal
    if any(v > 64 for v in shift.values()):
        return None
    member = None
    for name, aff in mirror.items():
        shifted = aff.add_constant_val(isl.Val.int_from_si(CTX, shift[name]))
        piece = isl.UnionPwAff(isl.PwAff.from_aff(shifted).intersect_domain(spaces[name]))
        member = piece if member is None else member.union_add(piece)
    new = mupa.set_at(0, mupa.get_at(1)).set_at(1, member.align_params(mupa.get_space()))
    return node.delete().insert_partial_schedule(new).band_set_permutable(1)
