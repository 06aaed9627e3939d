"""Point loops: their order (the best access strides innermost) and unroll-and-jam of one point
loop into the innermost one (register tiling)."""
from __future__ import annotations

import islpy as isl

from .bands import band_nodes, member_map, short_extent
from .islutil import CTX, maps_of, sets_of


class PointOrder:
    """The tiler's point-loop transformations (a mixin of tiling.py's Transformer, whose state it
    uses: scop, deps, point_rule, unroll)."""

    def stride_classes(self, point) -> list[list[float]]:
        """Per member of *point*, the stride class of each access as the member advances by one (the
        accesses whose advance stays in the domain): what point_order scores and jumps_rows reads."""
        out: list[list[float]] = [[] for _ in range(point.band_n_member())]
        for moved in self.steps(point):
            for m, classes in enumerate(out):
                classes += [_stride_class(*x) for x in moved(m) if x is not None]
        return out

    def point_order(self, point, extents: tuple[int | None, ...] = (),
                    classes: list[list[float]] | None = None) -> list[int]:
        """Member order for the point loops: the member with the best access strides goes innermost, or
        just outside the short loops of the band. A member of a few iterations (a filter's taps, known
        constant extent below SHORT_LOOP), other than the first member, goes inside the strided one:
        gcc unrolls it completely, and the taps of one output element then add up in a register while
        the strided loop is vectorized (depthwise: the row loop of the 3x3 taps had been outside the
        column loop, so every tap row re-read and re-wrote the output row). *classes*: stride_classes(point),
        where the caller has them."""
        n = point.band_n_member()
        if n < 2:
            return list(range(n))
        scores = [sum(c) for c in (classes if classes is not None else self.stride_classes(point))]
        # Highest score innermost; ties keep the later member innermost (the original order). With the
        # "vector" rule (Pluto's intra-tile choice), only among members along which no statement depends on
        # itself, where there are such: a reduction innermost is not vectorized (gcc keeps FP order).
        pool = list(range(n))
        if self.point_rule == "vector":
            pool = [m for m in range(n) if not self.carries_self(point, m)] or pool
        best = max(pool, key=lambda m: (scores[m], m))
        short = [] if short_extent(extents, best) else \
            [m for m in range(1, n) if m != best and short_extent(extents, m)]
        return [k for k in range(n) if k != best and k not in short] + [best] + short

    def sink_member(self, point) -> int | None:
        """The point member to move below the bands inside the point band (sink.py), or None: one that carries
        no dependence and along which no access jumps across rows, where some access jumps across rows along
        the innermost loop of a band inside (Householder's i sweeps down A's columns inside the (j, k) tile).
        The innermost such member (point_order puts the best strides last)."""
        inner = [b for b in band_nodes(point.child(0)) if not band_nodes(b.child(0))]
        if not inner:
            return None

        if not any(self.jumps_rows(b, b.band_n_member() - 1) for b in inner):
            return None
        return next((m for m in reversed(range(point.band_n_member()))
                     if not self.jumps_rows(point, m) and self.is_parallel(point, m)), None)

    def jumps_rows(self, node, m: int) -> bool:
        """Whether some access of band *node* jumps across rows when its member *m* advances by one."""
        return any(_stride_class(*x) < 0 for moved in self.steps(node) for x in moved(m) if x is not None)

    def carries_self(self, point, m: int) -> bool:
        """Whether point member *m*, run innermost, would carry a dependence of a statement on itself."""
        dom = point.get_domain()
        mupa = point.band_get_partial_schedule()
        pre = point.get_prefix_schedule_union_map().intersect_domain(dom)
        for k in range(point.band_n_member()):
            if k != m:
                pre = pre.flat_range_product(member_map(mupa, k, dom))
        deps = self.deps.intersect_domain(dom).intersect_range(dom).intersect(pre.apply_range(pre.reverse()))
        f = member_map(mupa, m, dom)
        carried = deps.subtract(f.apply_range(f.reverse()))
        return any(d.get_tuple_name(isl.dim_type.in_) == d.get_tuple_name(isl.dim_type.out)
                   for d in maps_of(carried))

    def steps(self, point):
        """statement_steps' functions alone."""
        return (moved for _, moved in self.statement_steps(point))

    def statement_steps(self, point):
        """For each statement of the band, the statement and a function of a member m that gives, for each
        access of the statement, its address changes when member m advances by one (the other members fixed)
        and its number of subscripts (None where no such advance stays in the domain)."""
        dom = point.get_domain()
        prefix = point.get_prefix_schedule_union_map().intersect_domain(dom)
        subtree = point.get_subtree_schedule_union_map().intersect_domain(dom)
        for st in self.scop.statements:
            sdom = [x for x in sets_of(dom) if x.get_tuple_name() == st.name]
            if not sdom:
                continue
            sd = isl.UnionSet(sdom[0])
            pre = prefix.intersect_domain(sd)
            # The complete schedule of this statement: outer dims, then this band's members, then inner dims.
            full = pre.flat_range_product(subtree.intersect_domain(sd))
            off = max(m.dim(isl.dim_type.out) for m in maps_of(pre))
            width = max(m.dim(isl.dim_type.out) for m in maps_of(full))
            yield st, (lambda m, full=full, sd=sd, st=st, off=off, width=width:
                       address_changes(full, sd, st, off + m, width))

    def jam_reuse(self, point, read_only: bool) -> list[int] | None:
        """Per point member but the innermost: how many accesses stay put along it while the innermost loop
        moves them (what its unrolled copies share: matmul's C[i][j] along k, a load and a store), or None
        where nothing is jammed (unroll-and-jam off, one member, a band below). Computed once per band: a
        permutation of the members other than the innermost permutes it (each member's advance is the same
        set of instance pairs in any order).
        Where an access moves along every member, it streams through memory and the tile does not reuse it;
        a member then counts only where every statement that moves along it has copies that share an element
        they write (bicg's and mvt's column sums `s[j] += r[i] * A[i][j]` along i: one load and store of
        s[j] per u rows, and u rows' loads in flight in each iteration, as Pluto's code jams them). It counts
        for nothing where a statement's copies share only loads of an array that some statement of the band
        writes: gramschmidt's `A[i][j] -= Q[i][k] * R[k][j]` beside its `R[k][j]` sums ran 1.3x slower jammed
        (dev box), and mvt's whole band 1.4x slower before scalar replacement kept the shared loads in
        registers. With *read_only*, loads of arrays that no statement of the band writes count (they stay in
        registers across the copies): gramschmidt's update alone, as a fission piece, jams `i` for `R[k][j]`
        (+6% on the dev box), gemver's `A[i][j] += u1[i] * v1[j] + u2[i] * v2[j]` jams `i` for `v1[j]` and
        `v2[j]` (+9-25%)."""
        n = point.band_n_member()
        if self.unroll < 2 or n < 2 or band_nodes(point.child(0)):
            return None
        reuse = [0] * (n - 1)
        writes = [True] * (n - 1)  # every statement moving along the member shares a written element
        streams = False
        steps = list(self.statement_steps(point))
        written = {a.array for st, _ in steps for a in st.writes}
        for st, moved in steps:
            changes = [moved(k) for k in range(n)]  # each one isl computation per access
            still = [[x is not None and _is_zero(*x) for x in ch] for ch in changes]
            reached = [[x is not None for x in ch] for ch in changes]
            if not all(any(s[a] or not r[a] for s, r in zip(still, reached)) for a in range(len(still[0]))):
                streams = True
            for m in range(n - 1):
                shared = [a for a, s in enumerate(still[m]) if s and not still[n - 1][a]]
                reuse[m] += len(shared)
                if any(reached[m]) and not any(st.accesses[a].is_write for a in shared) \
                        and not (read_only and shared and all(st.accesses[a].array not in written for a in shared)):
                    writes[m] = False
        if streams:
            reuse = [r if w else 0 for r, w in zip(reuse, writes)]
            return reuse if any(reuse) else None
        return reuse

    def jam_order(self, point, reuse: list[int]) -> list[int] | None:
        """A new order of the point members, the innermost kept, where the member unroll-and-jam would
        share most (jam_reuse) cannot be jammed where it is, because the bounds of a loop inside it depend
        on it, and can be just outside the innermost loop: there only the innermost loop is inside it. In
        trmm's band (k, i, j), k's copies share B[i][j] (a load and a store per copy) but i's bounds depend
        on k (i < k); in the order (i, k, j), as Pluto's, k is jammed and the copies add into one B[i][j]
        (4 FMAs, 5 loads, 1 store in place of 4 FMAs, 5 loads, 4 stores). Within a permutable band every
        order of the point loops is legal (and the schedule is checked with the rest). *reuse*: jam_reuse's.
        None: keep it."""
        n = point.band_n_member()
        if n < 3:
            return None
        top = max(range(n - 1), key=lambda k: (reuse[k], k))
        free = [reuse[k] for k in range(n - 1) if reuse[k] > 0 and _uncoupled(point, k)]
        if top == n - 2 or reuse[top] <= max(free, default=0):
            return None
        order = [k for k in range(n - 1) if k != top] + [top, n - 1]
        return order if _uncoupled(permute(point, order), n - 2) else None

    def unroll_jam(self, point, sizes: list[int], reuse: list[int] | None):
        """Unroll-and-jam (register tiling) of one point loop into the innermost one: point member m
        becomes floor(m / u) in the band, and a band of m alone, below the innermost member and unrolled
        by the AST builder, runs the u copies of the body in each iteration of the innermost loop. The
        member is the one along which most accesses do not move while the innermost loop moves them
        (matmul's C[i][j] along k): the u copies then share those loads and stores. Within a permutable
        band every dependence distance is non-negative along every member, so moving the copies inside
        is legal (and checked with the rest). Only where the bounds of the loops inside it do not depend
        on the member. *reuse*: jam_reuse's (None: nothing to jam). Returns the (possibly new) point band
        node and (member, factor) or None."""
        n = point.band_n_member()
        if reuse is None:
            return point, None
        # the member of most reuse among those whose inner loops' bounds do not depend on it (jam_order has
        # put the most reused one where its inner loops do not, where some order does)
        free = [k for k in range(n - 1) if reuse[k] > 0 and _uncoupled(point, k)]
        if not free:
            return point, None
        m = max(free, key=lambda k: (reuse[k], k))
        u = next((f for f in (self.unroll, 2) if f <= sizes[m] and sizes[m] % f == 0), None)
        if u is None:
            return point, None
        return jam(point, m, u), (m, u)

    def chains_jam(self, node):
        """Unroll-and-jam of an untiled permutable band of two or more members (one the reuse rule left
        untiled: nothing in it is reused across tiles) whose innermost loop is a reduction: the first outer
        member that carries no dependence is unrolled by u and its copies jammed into the innermost loop. A
        reduction along the innermost loop (a statement that depends on itself along it: atax's
        `tmp[i] = tmp[i] + A[i][j] * x[j]`) is one chain of dependent adds, each waiting for the previous one
        to finish; the u copies are u independent chains (one per row), each in its own order, and they share
        what does not move along the member (`x[j]`). Pluto's code for atax, bicg and gesummv jams 8 rows the
        same way. Returns the new band node and (member, factor), or the node and None."""
        n = node.band_n_member()
        if self.unroll < 2 or band_nodes(node.child(0)) or not self.carries_self(node, n - 1):
            return node, None
        m = next((k for k in range(n - 1) if self.is_parallel(node, k) and _uncoupled(node, k)), None)
        if m is None:
            return node, None
        if len(sets_of(node.get_domain())) > 1:
            # a statement constant along the innermost member (tmp[i] = 0 at j = 0) is peeled off its loop
            node = node.band_set_ast_build_options(isl.UnionSet("{ separate[x] }", context=CTX))
        return jam(node, m, self.unroll), (m, self.unroll)


def jam(point, m: int, u: int):
    """Band member *m* of *point* unrolled by *u* and jammed into the innermost member: m becomes
    floor(m / u) in the band, and a band of m alone below it, unrolled by the AST builder, runs the u copies.
    Returns the new band node (the band of copies is its child)."""
    mupa = point.band_get_partial_schedule()
    whole = mupa.get_at(m)
    outer = mupa.set_at(m, whole.scale_down_val(isl.Val.int_from_si(CTX, u)).floor())
    options = point.band_get_ast_build_options()
    full = _full_blocks(point, m, u)
    node = point.delete()
    node = node.insert_partial_schedule(isl.MultiUnionPwAff.from_union_pw_aff(whole))
    node = node.band_member_set_ast_loop_type(0, isl.ast_loop_type.unroll)
    node = node.insert_partial_schedule(outer).band_set_permutable(1)
    # The blocks where all u copies run are generated on their own (isl's isolate option), so their
    # copies need no guards; a partial block (at a bound that u does not divide, or a symbolic one)
    # gets its copies behind guards, outside the loops of full blocks.
    if not options.is_empty():  # the same options (separate) in the isolated part
        options = options.union(isl.UnionSet("{ [isolate[] -> separate[x]] }", context=CTX))
    return node.band_set_ast_build_options(options.union(full))


def _full_blocks(point, m: int, u: int) -> isl.UnionSet:
    """isl's isolate option for the point band after member *m* became floor(m / u): the (outer
    dimensions, members) points whose block of u values of member m all occur, for some statement."""
    n = point.band_n_member()
    sched = point.get_prefix_schedule_union_map().range_product(
        isl.UnionMap.from_multi_union_pw_aff(point.band_get_partial_schedule()))
    pts = sched.intersect_domain(point.get_domain()).range()
    full = None
    for wrapped in sets_of(pts):
        k = wrapped.unwrap().dim(isl.dim_type.in_)
        outer = ", ".join(f"p{i}" for i in range(k))
        blocks = ", ".join(f"b{i}" for i in range(n))
        here = None
        for r in range(u):
            moved = ", ".join(f"{u} * b{i} + {r}" if i == m else f"b{i}" for i in range(n))
            shift = isl.Map(f"{{ [[{outer}] -> [{blocks}]] -> [[{outer}] -> [{moved}]] }}", context=CTX)
            block = shift.align_params(wrapped.get_space()).intersect_range(wrapped).domain()
            here = block if here is None else here.intersect(block)
        full = here if full is None else full.union(here)
    return isl.UnionSet(full.coalesce().set_tuple_name("isolate"))


def address_changes(full: isl.UnionMap, sd: isl.UnionSet, st, pos: int,
           width: int) -> list[tuple[isl.UnionSet, int] | None]:
    """Address changes of the accesses of one statement when schedule dimension *pos* advances by one."""
    eq = " and ".join(f"q{k} = p{k}" + (" + 1" if k == pos else "") for k in range(width))
    step = isl.UnionMap(isl.Map(f"{{ [{', '.join(f'p{k}' for k in range(width))}] -> "
                                f"[{', '.join(f'q{k}' for k in range(width))}] : {eq} }}", context=CTX))
    nxt = full.apply_range(step.align_params(full.get_space())).apply_range(full.reverse())
    nxt = nxt.intersect_domain(sd).intersect_range(sd)
    if nxt.is_empty():
        return [None] * len(st.accesses)
    out = []
    for acc in st.accesses:
        a = isl.UnionMap(acc.relation)
        moved = nxt.apply_domain(a).apply_range(a)
        out.append(None if moved.is_empty() else (moved.deltas(), acc.relation.dim(isl.dim_type.out)))
    return out


def changes_within(deltas: isl.UnionSet, ndim: int, last: int) -> bool:
    """Whether every address change is zero in all subscripts but the last, and within [-last, last]
    in the last one (last = 0: the access does not move)."""
    if ndim == 0:
        return True
    names = [f"d{k}" for k in range(ndim)]
    rest = " and ".join([f"{x} = 0" for x in names[:-1]] + [f"-{last} <= {names[-1]} <= {last}"])
    box = isl.Set(f"{{ [{', '.join(names)}] : {rest} }}", context=CTX)
    return all((s.reset_tuple_id() if s.has_tuple_id() else s).is_subset(box.align_params(s.get_space()))
               for s in sets_of(deltas))


def one_step(deltas: isl.UnionSet) -> bool:
    """Whether an access moves by one and the same step wherever the loop advances: a clamped subscript
    (`src[y][min(max(x + k - 2, 0), w - 1)]`: steps of 0 at the edges, 1 inside) is not, and a vector loop
    forced over it gathers (realc gaussian_clamp: `omp simd` on its x loop ran 12% slower than gcc's own
    choice at 1 thread)."""
    return all(s.is_singleton() for s in sets_of(deltas))


def _is_zero(deltas: isl.UnionSet, ndim: int) -> bool:
    """Whether every address change is zero (the access does not move)."""
    return changes_within(deltas, ndim, 0)


def _uncoupled(point, m: int) -> bool:
    """Whether, for every statement, the ranges of the band members after *m* do not depend on member m
    (with the outer dimensions and the members before m fixed): the set of (outer, members) points is
    the intersection of its projection that drops m and its projection that drops the later members."""
    sched = point.get_prefix_schedule_union_map().flat_range_product(
        isl.UnionMap.from_multi_union_pw_aff(point.band_get_partial_schedule()))
    n = point.band_n_member()
    for mp in maps_of(sched.intersect_domain(point.get_domain())):
        pts = mp.range()
        off = pts.dim(isl.dim_type.set) - n
        drop_m = pts.eliminate(isl.dim_type.set, off + m, 1)
        drop_later = pts.eliminate(isl.dim_type.set, off + m + 1, n - 1 - m)
        if not drop_m.intersect(drop_later).is_subset(pts):
            return False
    return True


def _stride_class(deltas: isl.UnionSet, ndim: int) -> float:
    if ndim == 0:
        return 1.0
    sets = sets_of(deltas)
    if not sets:
        return 0.0
    # +1: temporal reuse, or stride 1 along the last subscript; -2: jumps across rows
    return 1.0 if changes_within(isl.UnionSet(sets[0]), ndim, 1) else -2.0


def permute(node, order: list[int]):
    mupa = node.band_get_partial_schedule()
    new = mupa
    for pos, src in enumerate(order):
        new = new.set_at(pos, mupa.get_at(src))
    node = node.delete()
    node = node.insert_partial_schedule(new)
    return node.band_set_permutable(1)
