"""Parallel loops and their marks: the exact parallelism test, scalars and arrays privatized to make a
loop parallel, the OpenMP schedule clause, and the omp parallel / omp simd / ivdep marks."""
from __future__ import annotations

import os
from dataclasses import replace

import islpy as isl

from .bands import band_nodes, child_bands, loop_iterations, member_map
from .islutil import CTX, maps_of
from .marks import IvdepMark, Mark, ParallelMark, SimdMark, mark_id, mark_of
from .point_order import changes_within, one_step
from .privatize import PrivateArray, array_flows, privatizable
from .reuse import largest_extents

Clauses = tuple[tuple[str, ...], tuple[str, ...]]  # the (private, lastprivate) scalars of a parallel or simd loop

# A parallel loop whose run has fewer statement instances than this runs serially (the C printer's branch
# to a serial copy, or no pragma where the count is a constant): at about a nanosecond per instance that is some
# 16 microseconds of work, against a few microseconds to start and join a parallel region. jacobi-1d
# (PolyBench LARGE: 500 time steps, 2000 points) ran at 0.19x of gcc with 2 threads, the regions
# costing more than the 4,000 instances of each.
PARALLEL_WORK = 16384


def parallel_work() -> int:
    """PARALLEL_WORK, or the environment's POLYTUNE_PARALLEL_WORK (the tests set 0, so that their small
    sizes still run the parallel code)."""
    return int(os.environ.get("POLYTUNE_PARALLEL_WORK", PARALLEL_WORK))


def _clauses(names: list[str], live: list[str]) -> Clauses:
    """The privatization part of a parallel or simd mark: (private, lastprivate) scalars."""
    return tuple(s for s in names if s not in live), tuple(live)


def _uncoupled_below(node, m: int, below: bool) -> bool:
    """Whether, for every statement, the ranges of the schedule dimensions inside band member *m* (the
    band's later members, and with *below* the loops below the band) do not depend on member m, the outer
    ones fixed: every iteration of m's loop then has the same loops inside (equal work, up to guards).
    Tile loops leave out the point loops below them, whose ranges move with every tile."""
    sched = loop_iterations(node, node.get_domain(), m + 1)
    n = node.band_n_member()
    mupa = node.band_get_partial_schedule()
    dom = node.get_domain()
    for k in range(m + 1, n):
        sched = sched.flat_range_product(member_map(mupa, k, dom))
    if below and node.n_children() and node.child(0).get_type() != isl.schedule_node_type.leaf:
        below = node.child(0).get_subtree_schedule_union_map().intersect_domain(dom)
        if not below.is_empty():
            sched = sched.flat_range_product(below)
    width_before = node.get_prefix_schedule_union_map().intersect_domain(dom)
    for mp in maps_of(sched.intersect_domain(dom)):
        pts = mp.range()
        pre = [x for x in maps_of(width_before.intersect_domain(isl.UnionSet(mp.domain())))]
        off = pre[0].dim(isl.dim_type.out) + m if pre else m
        total = pts.dim(isl.dim_type.set)
        if total <= off + 1:
            continue
        drop_m = pts.eliminate(isl.dim_type.set, off, 1)
        drop_later = pts.eliminate(isl.dim_type.set, off + 1, total - off - 1)
        if not drop_m.intersect(drop_later).is_subset(pts):
            return False
    return True


def iteration_work(node, m: int, context: isl.Set) -> int | None:
    """Statement instances in one iteration of band member *m*'s loop (m = -1: in one run of it), an upper
    bound: per statement, the product over the schedule dimensions inside the loop of their largest
    extent for fixed outer ones, summed over the statements below. None where an extent is not a
    constant (sizes not fixed by the context)."""
    dom = node.get_domain()
    pre = node.get_prefix_schedule_union_map().intersect_domain(dom)
    full = pre.flat_range_product(node.get_subtree_schedule_union_map().intersect_domain(dom))
    total = 0
    for mp in maps_of(full):
        outer = next(x for x in maps_of(pre) if x.get_tuple_name(isl.dim_type.in_) ==
                     mp.get_tuple_name(isl.dim_type.in_)).dim(isl.dim_type.out) + m + 1
        pts = mp.range().intersect_params(context.align_params(mp.get_space()))
        extents = largest_extents(isl.Map.from_range(pts).move_dims(isl.dim_type.in_, 0, isl.dim_type.out, 0, outer))
        if None in extents:
            return None
        count = 1
        for e in extents:
            count *= e
        total += count
    return total


def with_work(schedule: isl.Schedule, context: isl.Set) -> isl.Schedule:
    """The schedule with every parallel mark's `work` filled in (`iteration_work` of the loop it marks, the
    first member of the band below the mark)."""

    def walk(node):
        mark = mark_of(node)
        if isinstance(mark, ParallelMark) and mark.work is None and \
                node.child(0).get_type() == isl.schedule_node_type.band:
            work = iteration_work(node.child(0), 0, context)
            node = node.delete().insert_mark(mark_id(replace(mark, work=work)))
        for i in range(node.n_children()):
            node = walk(node.child(i)).parent()
        return node

    return walk(schedule.get_root()).get_schedule()


def without_alternatives(schedule: isl.Schedule) -> isl.Schedule | None:
    """The schedule with no parallel mark's alternative loop (ParallelMark.alternative); None where it has none."""
    found = False

    def walk(node):
        nonlocal found
        mark = mark_of(node)
        if isinstance(mark, ParallelMark) and mark.alternative is not None:
            found = True
            plain = replace(mark, alternative=None, alternative_collapse=1, alternative_per_thread=False)
            node = node.delete().insert_mark(mark_id(plain))
        for i in range(node.n_children()):
            node = walk(node.child(i)).parent()
        return node

    out = walk(schedule.get_root()).get_schedule()
    return out if found else None


def mark_member(node, m: int, mark: Mark):
    """Split the band so that member *m* starts a band and put a mark above that piece; returns the piece."""
    if m > 0:
        node = node.band_split(m).child(0)
    return node.insert_mark(mark_id(mark)).child(0)


class Parallelism:
    """The tiler's parallelism tests and marks (a mixin of tiling.py's Transformer, whose state it
    uses: scop, deps, scalars, private, private_arrays, copies, omp_schedule)."""

    def mark_vector(self, node, depth: int, jammed: bool = False):
        """Mark the band's last member for `#pragma GCC ivdep` when it is an innermost loop that carries no
        dependence against the order of the statements in its body: gcc may then vectorize it without
        the run-time overlap checks it adds for arrays it cannot tell apart (array parameters). A
        dependence carried from an earlier statement of the body to a later one (jacobi's B, written at
        j - 1 and read at j by the A statement) stays in order under vectorization; one from a statement
        to itself or to an earlier one does not. The mark lists the carried (source, sink) pairs; the C
        printer emits the pragma on a copy of the loop only where each source is printed before its
        sink. Returns the lowest band node."""
        last = node.band_n_member() - 1
        if len(band_nodes(node.child(0))) > jammed:  # an inner loop (the unrolled band of copies is none)
            return self.mark_outer_simd(node, last, depth)
        pairs = self.carried_pairs(node, last)
        if pairs is None:
            return node
        # the statement order inside the loop is the AST builder's: the printer checks the pairs
        return mark_member(node, last, IvdepMark(depth, tuple(sorted(pairs))))

    def mark_outer_simd(self, node, m: int, depth: int):
        """Mark band member *m*, a loop with inner loops, for `#pragma omp simd` (its scalars privatized as
        on a parallel loop: `private` or `lastprivate`, see the C printer) when it is parallel only once
        scalars are privatized (a scalar accumulator: `s = 0; for k: s += a[i][k] * b[k][j]; c[i][j] =
        s` in a j loop) and every access is invariant or unit-stride along it. gcc
        vectorizes such an outer loop on its own (a vector of accumulators), except inside an OpenMP
        parallel loop, where it does not (3.7x slower at 1 thread on a 1500^2 matmul); the pragma asks for
        it there too. Returns the lowest band node."""
        if self.scalars is None or self.is_parallel(node, m):
            return node
        private = self.privatizing(node, m)
        if private is None or not any(private):
            return node
        for moved in self.steps(node):
            if any(x is not None and not (changes_within(x[0], x[1], 1) and one_step(x[0])) for x in moved(m)):
                return node
        return mark_member(node, m, SimdMark(depth, *private))

    def carried_pairs(self, node, m: int) -> set[tuple[str, str]] | None:
        """The (source, sink) statement pairs of the dependences band member *m* carries; None if one of
        them goes from a statement to itself."""
        dom = node.get_domain()
        deps = self.deps.intersect_domain(dom).intersect_range(dom)
        if deps.is_empty():
            return set()
        before = loop_iterations(node, dom, m)
        upto = loop_iterations(node, dom, m + 1)
        carried = deps.intersect(before.apply_range(before.reverse())).subtract(
            upto.apply_range(upto.reverse()))
        pairs = set()
        for d in maps_of(carried):
            src, dst = d.get_tuple_name(isl.dim_type.in_), d.get_tuple_name(isl.dim_type.out)
            if src == dst:
                return None
            pairs.add((src, dst))
        return pairs

    def first_parallel(self, node, members) -> int | None:
        self.private_arrays = ()
        for m in members:
            if self.is_parallel(node, m):
                self.private = ((), ())
                return m
            private = self.privatizing(node, m)
            if private is not None:
                self.private = private
                return m
            arrays = self.privatizing_arrays(node, m)
            if arrays:
                self.private, self.private_arrays = ((), ()), arrays
                return m
        return None

    def privatizing_arrays(self, node, m: int) -> tuple[PrivateArray, ...]:
        """The scratch arrays whose private copies make band member *m* parallel (`poly/privatize.py`);
        () where none do. Scalars are not privatized along with them."""
        if self.deps_object is None:
            return ()
        if self._array_flows is None:
            self._array_flows = array_flows(self.scop, self.deps_object) or False
        if not self._array_flows:
            return ()
        dom = node.get_domain()
        copies = privatizable(self._array_flows, dom, loop_iterations(node, dom, m + 1), self.scop.context)
        if not copies:
            return ()
        deps = self._array_flows.without(frozenset(c.name for c in copies), self.deps_object)
        if not self.is_parallel(node, m, deps):
            return ()
        # only the copies whose dependences the loop carries are needed
        needed = tuple(c for c in copies if not self.is_parallel(
            node, m, self._array_flows.without(frozenset(x.name for x in copies if x != c), self.deps_object)))
        return needed or copies

    def schedule_clause(self, node, m: int, tiles: bool) -> str:
        """The OpenMP schedule of the parallel loop of band member *m*: '' (static blocks) unless the
        loops inside it have bounds that depend on it (a triangle: syrk's `j <= i`, cholesky, lu), where
        equal blocks of iterations are unequal work and one thread finishes long before the other. Then
        `dynamic,1` over tiles (few, large iterations), `static,1` over other loops (many small ones:
        a cyclic deal balances a triangle at no run-time cost)."""
        if self.omp_schedule == "static":
            return ""
        if self.omp_schedule == "dynamic":
            return "dynamic,1"
        if _uncoupled_below(node, m, below=not tiles):
            return ""
        return "dynamic,1" if tiles else "static,1"

    def collapsible(self, node, m: int) -> bool:
        """Whether the loop of band member *m*, marked parallel (first_parallel's clauses), and the member just
        inside it can run as one OpenMP loop (`collapse(2)`, ParallelMark.collapse): that member is parallel
        too, with no other clause than *m*'s and no private array copies, and it is not the innermost loop
        (whose vector loop a collapsed nest would lose; a tile band's point band is below it)."""
        n = node.band_n_member()
        if m + 1 >= n or self.private_arrays or self.private[1]:
            return False
        if m + 2 == n and not band_nodes(node.child(0)):
            return False
        return self.parallel_like(node, m + 1)

    def parallel_like(self, node, m: int) -> bool:
        """Whether band member *m* runs in parallel with the clauses first_parallel found for the marked loop
        (nothing private, or the same private scalars)."""
        return self.is_parallel(node, m) or (any(self.private) and self.privatizing(node, m) == self.private)

    def inner_parallel(self, node) -> bool:
        """Whether the band just below each path out of band *node* has a first member that runs in parallel
        with the clauses first_parallel found for *node*'s marked loop (the alternative of a loop over few
        iterations: ParallelMark.alternative), and not as the innermost loop (the vector loop, whose mark
        would replace the copy's pragma), and every statement of *node* is in one of them."""
        bands = child_bands(node)
        if not bands or self.private_arrays or any(b.band_n_member() < 2 and not band_nodes(b.child(0)) for b in bands):
            return False
        covered = bands[0].get_domain()
        for b in bands[1:]:
            covered = covered.union(b.get_domain())
        return node.get_domain().is_subset(covered) and all(self.parallel_like(b, 0) for b in bands)

    def outer_parallel(self, node) -> bool:
        """Whether the band's first member is parallel, privatizing scalars where needed."""
        return self.is_parallel(node, 0) or self.privatizing(node, 0) is not None

    def parallel_mark(self, depth: int, clause: str = "") -> ParallelMark:
        """The OpenMP mark of the loop at schedule *depth*, with the scalars it must privatize and the
        arrays it needs private copies of (their copies are kept in TiledSchedule.private_arrays)."""
        arrays = tuple(a.name for a in self.private_arrays)
        if arrays:
            self.copies[depth] = self.private_arrays
        return ParallelMark(depth, *self.private, arrays, clause)

    def privatizing(self, node, m: int) -> Clauses | None:
        """The (private, lastprivate) scalars (both empty: none needed) that, made private, let band
        member *m* run in parallel (None: none do).
        A scalar qualifies when, inside the loop, every value it carries is written and read in one
        iteration (its flow dependences in the subtree stay within an iteration and none comes from
        outside it, nor from before the region), and, where a read after the loop may take its value, every
        iteration writes it (so the last iteration's value is the sequential program's final value). Only
        its anti and output dependences are then dropped from the parallelism test. It is `private` when
        it is dead after the loop (declared inside the region, or dead after it: `Scop.dead_after`, and no
        read after the loop gets its value from the loop), `lastprivate` otherwise; the
        printer enters a loop with lastprivate scalars only when it runs (OpenMP leaves them unspecified
        after a loop of no iteration)."""
        if self.scalars is None or not self.is_parallel(node, m, self.scalars.without_false):
            return None
        dom = node.get_domain()
        prefix = loop_iterations(node, dom, m + 1)
        same = prefix.apply_range(prefix.reverse())
        iterations = prefix.range()
        out, live = [], []
        for s, flow in self.scalars.flow.items():
            writes = self.scalars.writes[s].intersect(dom)
            inside = flow.intersect_params(self.scop.context).intersect_range(dom)
            maybe = self.scalars.may_writes.get(s)
            if writes.is_empty() and (maybe is None or maybe.intersect(dom).is_empty()):
                continue  # not written in this loop: only read, nothing to privatize
            if not inside.is_subset(same) or not self.scalars.exposed[s].intersect(dom).is_empty():
                return None
            if s not in self.scop.local_names | self.scop.dead_after \
                    or not flow.intersect_domain(dom).subtract_range(dom) \
                    .intersect_params(self.scop.context).is_empty():
                # live after the loop: the last iteration must write it (a scalar dead after the loop, such
                # as one declared in a body guarded by `j != i`, may skip iterations)
                if not iterations.is_subset(prefix.intersect_domain(writes).range()):
                    return None
                live.append(s)
            out.append(s)
        return _clauses(out, live)

    def is_parallel(self, node, m: int, deps: isl.UnionMap | None = None) -> bool:
        """Exact test: no dependence between instances of this subtree that agree on every outer
        schedule dimension has a non-zero distance along band member *m*."""
        dom = node.get_domain()
        deps = (self.deps if deps is None else deps.intersect_params(self.scop.context))
        deps = deps.intersect_domain(dom).intersect_range(dom)
        if deps.is_empty():
            return True
        prefix = loop_iterations(node, dom, m)
        same = prefix.apply_range(prefix.reverse())
        deps = deps.intersect(same)
        if deps.is_empty():
            return True
        f = member_map(node.band_get_partial_schedule(), m, dom)
        dist = deps.apply_domain(f).apply_range(f).deltas()
        zero = isl.UnionSet(isl.Set("{ [0] }", context=CTX)).align_params(dist.get_space())
        return dist.is_subset(zero)

