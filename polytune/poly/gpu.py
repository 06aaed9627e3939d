"""Map a schedule to a GPU: host loops, kernels, and the loops of each kernel that become threads.

The schedule comes from isl's scheduler with outer coincidence (parallel loops as far out as possible,
as PPCG does). Walking the tree from the root:

- a band whose first member is not parallel (exact test against the dependences, given every outer loop)
  stays on the host up to its first parallel member: a stencil's time loop becomes a host loop of launches;
- at a band whose first member is parallel, the run of parallel members that starts there (at most three)
  is mapped to the thread grid, one thread per iteration; everything below runs inside the thread, in the
  original schedule order;
- a subtree without any parallel loop runs in a single thread (it still has to run where the data is).

Each kernel is a mark node in the schedule tree above its mapped band. The mapped members get block axes
by their access strides (the member whose consecutive iterations touch consecutive addresses is x, so
warps coalesce), and bounds that are functions of the parameters and of the enclosing host loops: the
grid is sized from them and each thread re-checks the exact loop bounds.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from .deps import Dependences
from .islutil import CTX, maps_of, sets_of
from .schedule import _member_map, _Transformer, check_legal, compute_base_schedule
from .scop import Scop

KERNEL_MARK = "gpu_kernel"
MAX_MAPPED = 3


@dataclass(frozen=True, eq=False)
class KernelInfo:
    index: int
    depth: int  # number of enclosing band members (host loops); the mapped members start at this depth
    mapped: int  # number of band members mapped to threads; 0: one thread runs the subtree
    axes: tuple[int, ...]  # block axis of each mapped member (0 = x, 1 = y, 2 = z), outermost member first
    statements: tuple[str, ...]
    rel: tuple[isl.Map, ...]  # per mapped member: host loop values -> the member's values in the subtree

    def bounds(self, j: int, present: list[bool]) -> tuple[isl.PwAff, isl.PwAff]:
        """Lower and upper bound of mapped member *j* as functions of the parameters and of the host loops
        that the AST emitted as loops (*present*, one flag per host dim). isl drops a loop whose value is
        fixed by the outer ones; the bounds then range over every value it can take (the kernel re-checks
        the exact bounds)."""
        m = self.rel[j]
        for k in reversed(range(self.depth)):
            if not present[k]:
                m = m.project_out(isl.dim_type.in_, k, 1)
        return m.lexmin_pw_multi_aff().get_pw_aff(0), m.lexmax_pw_multi_aff().get_pw_aff(0)

    @property
    def mark(self) -> str:
        return f"{KERNEL_MARK}#{self.index}"


@dataclass(frozen=True, eq=False)
class GpuSchedule:
    schedule: isl.Schedule  # with one mark per kernel
    kernels: tuple[KernelInfo, ...]

    @property
    def max_mapped(self) -> int:
        return max((k.mapped for k in self.kernels), default=0)

    def kernel(self, mark: str) -> KernelInfo:
        return next(k for k in self.kernels if k.mark == mark)


def compute_gpu_base(scop: Scop, deps: Dependences, fuse: bool = False) -> isl.Schedule:
    """isl's scheduler asked for outer parallelism (coincident outer members), as PPCG does; *fuse*
    schedules whole components at once, so that fewer, fused kernels come out (one softmax kernel per
    row block instead of a row kernel and an element-wise one)."""
    return compute_base_schedule(scop, deps, outer_coincidence=True, whole_component=fuse)


def map_to_gpu(scop: Scop, deps: Dependences, base: isl.Schedule | None = None,
               max_mapped: int = MAX_MAPPED, fuse: bool = False) -> GpuSchedule:
    base = base if base is not None else compute_gpu_base(scop, deps, fuse)
    m = _Mapper(scop, deps, max_mapped)
    root = m.visit(base.get_root(), 0)
    schedule = root.get_schedule()
    check_legal(schedule, deps, scop)
    return GpuSchedule(schedule, tuple(m.kernels))


class _Mapper:
    def __init__(self, scop: Scop, deps: Dependences, max_mapped: int):
        self.scop = scop
        self.max_mapped = max(0, min(max_mapped, MAX_MAPPED))
        # The CPU transformer's exact parallel test and access-stride scoring, reused.
        self.t = _Transformer(scop, deps.all.intersect_params(scop.context), [], tile=False, parallel=True)
        self.kernels: list[KernelInfo] = []

    def visit(self, node: isl.ScheduleNode, depth: int) -> isl.ScheduleNode:
        """Map the subtree at *node*; return the node at the same tree position."""
        t = node.get_type()
        if t == isl.schedule_node_type.band:
            return self.band(node, depth)
        if t == isl.schedule_node_type.leaf:
            return self.kernel(node, depth, 0)
        if t in (isl.schedule_node_type.sequence, isl.schedule_node_type.set) and not self.has_parallel(node):
            return self.kernel(node, depth, 0)
        for i in range(node.n_children()):
            node = self.visit(node.child(i), depth).parent()
        return node

    def band(self, node: isl.ScheduleNode, depth: int) -> isl.ScheduleNode:
        n = node.band_n_member()
        if self.max_mapped == 0 or not self.has_parallel(node):
            return self.kernel(node, depth, 0)
        first = self.t.first_parallel(node, range(n))
        if first is None:  # every member stays on the host; a parallel loop is further in
            return self.visit(node.child(0), depth + n).parent()
        if first > 0:
            node = node.band_split(first)
            return self.visit(node.child(0), depth + first).parent()
        mapped = 1
        while mapped < min(n, self.max_mapped) and self.t.is_parallel(node, mapped):
            mapped += 1
        if mapped < n:
            node = node.band_split(mapped)
        return self.kernel(node, depth, mapped)

    def has_parallel(self, node: isl.ScheduleNode) -> bool:
        if node.get_type() == isl.schedule_node_type.band:
            if any(self.t.is_parallel(node, k) for k in range(node.band_n_member())):
                return True
        return any(self.has_parallel(node.child(i)) for i in range(node.n_children()))

    def kernel(self, node: isl.ScheduleNode, depth: int, mapped: int) -> isl.ScheduleNode:
        statements = tuple(sorted(s.get_tuple_name() for s in sets_of(node.get_domain())))
        rels: list[isl.Map] = []
        axes: tuple[int, ...] = ()
        if mapped:
            dom = node.get_domain().intersect_params(self.scop.context)
            prefix = node.get_prefix_schedule_union_map().intersect_domain(dom)
            mupa = node.band_get_partial_schedule()
            for k in range(mapped):
                maps = maps_of(prefix.reverse().apply_range(_member_map(mupa, k, dom)))
                merged = maps[0]
                for extra in maps[1:]:
                    merged = merged.union(extra)
                rels.append(merged)
            order = self.t.point_order(node)  # best stride last: that member becomes x
            rank = {member: len(order) - 1 - pos for pos, member in enumerate(order)}
            axes = tuple(rank[k] for k in range(mapped))
        info = KernelInfo(len(self.kernels), depth, mapped, axes, statements, tuple(rels))
        self.kernels.append(info)
        return node.insert_mark(isl.Id(info.mark, context=CTX))


def bound_as_params(pa: isl.PwAff, names: list[str]) -> isl.PwAff:
    """The bound with its outer-loop dims turned into parameters named *names* (the host iterators)."""
    npar = pa.dim(isl.dim_type.param)
    k = pa.dim(isl.dim_type.in_)
    out = pa.move_dims(isl.dim_type.param, npar, isl.dim_type.in_, 0, k)
    for j in range(k):
        out = out.set_dim_id(isl.dim_type.param, npar + j, isl.Id(names[j], context=CTX))
    return out
