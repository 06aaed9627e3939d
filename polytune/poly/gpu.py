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

import math
from dataclasses import dataclass

import islpy as isl

from ..errors import UnsupportedError
from .bands import member_map
from .deps import Dependences
from .islutil import CTX, isl_name, maps_of, sets_of
from .legality import check_legal
from .marks import FullMark, KernelMark, PointsMark, ReduceMark, SharedMark, TileMark, mark_id, mark_of
from .schedule import compute_base_schedule
from .scop import Scop
from .tiling import Transformer

MAX_MAPPED = 3


@dataclass(frozen=True, eq=False)
class KernelInfo:
    index: int
    depth: int  # number of enclosing band members (host loops); the mapped members start at this depth
    mapped: int  # number of band members mapped to threads; 0: one thread runs the subtree
    axes: tuple[int, ...]  # block axis of each mapped member (0 = x, 1 = y, 2 = z), outermost member first
    statements: tuple[str, ...]
    rel: tuple[isl.Map, ...]  # per mapped member: host loop values -> the member's values in the subtree
    values: tuple[isl.UnionPwAff, ...] = ()  # per mapped member: each statement instance's value of it

    def member_value(self, j: int, statement: str) -> isl.PwAff | None:
        """Mapped member *j*'s value for the instances of *statement* (a function of its iterators and the
        parameters), or None if unknown."""
        if j >= len(self.values):
            return None
        found = []

        def visit(pa: isl.PwAff) -> None:
            if pa.get_domain_space().get_tuple_name(isl.dim_type.set) == statement:
                found.append(pa)

        self.values[j].foreach_pw_aff(visit)
        return found[0] if len(found) == 1 else None

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
    def mark(self) -> KernelMark:
        return KernelMark(self.index)


@dataclass(frozen=True, eq=False)
class GpuSchedule:
    schedule: isl.Schedule  # with one mark per kernel
    kernels: tuple[KernelInfo, ...]

    @property
    def max_mapped(self) -> int:
        return max((k.mapped for k in self.kernels), default=0)

    def kernel(self, mark: KernelMark) -> KernelInfo:
        return next(k for k in self.kernels if k.mark == mark)


def compute_gpu_base(scop: Scop, deps: Dependences, fuse: bool = False) -> isl.Schedule:
    """isl's scheduler asked for outer parallelism (coincident outer members), as PPCG does; *fuse*
    schedules whole components at once, so that fewer, fused kernels come out (one softmax kernel per
    row block instead of a row kernel and an element-wise one), with the statements that read the same
    data in one component (input reuse: the three flux statements of a stencil, one kernel instead of
    three that each load the same neighbours)."""
    return compute_base_schedule(scop, deps, outer_coincidence=True, whole_component=fuse, input_reuse=fuse)


def map_to_gpu(scop: Scop, deps: Dependences, base: isl.Schedule | None = None,
               max_mapped: int = MAX_MAPPED, fuse: bool = False) -> GpuSchedule:
    unsupported = gpu_unsupported(scop)
    if unsupported:
        raise UnsupportedError(f"the GPU targets do not take {unsupported} yet (the C target does)", scop.file,
                               scop.begin_line)
    deps = deps.in_order()
    base = base if base is not None else compute_gpu_base(scop, deps, fuse)
    m = _Mapper(scop, deps, max_mapped)
    root = m.visit(base.get_root(), 0)
    schedule = root.get_schedule()
    check_legal(schedule, deps, scop)
    return GpuSchedule(schedule, tuple(m.kernels))


def gpu_unsupported(scop: Scop) -> str:
    """What of *scop* the GPU emitters cannot print ("" where nothing): they print the arrays' C subscripts
    from the model's and run no run-time checks (arrays that may overlap are assumed not to there, as
    Pluto and PPCG assume)."""
    if any(a.layout is not None for a in scop.arrays) or scop.assumed is not None:
        return "arrays with flattened subscripts"
    if any(a.may for st in scop.statements for a in st.accesses):
        return "data-dependent conditions"
    return ""


class _Mapper:
    def __init__(self, scop: Scop, deps: Dependences, max_mapped: int):
        self.scop = scop
        self.max_mapped = max(0, min(max_mapped, MAX_MAPPED))
        # The CPU transformer's exact parallel test and access-stride scoring, reused.
        self.t = Transformer(scop, deps.all.intersect_params(scop.context), [], tile=False, parallel=True)
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
        values: tuple[isl.UnionPwAff, ...] = ()
        axes: tuple[int, ...] = ()
        dom = node.get_domain().intersect_params(self.scop.context)
        if mapped and dom.is_empty():  # the band never runs under the context: nothing to map
            mapped = 0
        if mapped:
            prefix = node.get_prefix_schedule_union_map().intersect_domain(dom)
            mupa = node.band_get_partial_schedule()
            for k in range(mapped):
                maps = maps_of(prefix.reverse().apply_range(member_map(mupa, k, dom)))
                merged = maps[0]
                for extra in maps[1:]:
                    merged = merged.union(extra)
                rels.append(merged)
            order = self.t.point_order(node)  # best stride last: that member becomes x
            rank = {member: len(order) - 1 - pos for pos, member in enumerate(order)}
            axes = tuple(rank[k] for k in range(mapped))
            values = tuple(mupa.get_union_pw_aff(k).intersect_domain(node.get_domain()) for k in range(mapped))
        info = KernelInfo(len(self.kernels), depth, mapped, axes, statements, tuple(rels), values)
        self.kernels.append(info)
        return node.insert_mark(mark_id(info.mark))


def bound_as_params(pa: isl.PwAff, names: list[str]) -> isl.PwAff:
    """The bound with its outer-loop dims turned into parameters named *names* (the host iterators)."""
    npar = pa.dim(isl.dim_type.param)
    k = pa.dim(isl.dim_type.in_)
    out = pa.move_dims(isl.dim_type.param, npar, isl.dim_type.in_, 0, k)
    for j in range(k):
        out = out.set_dim_id(isl.dim_type.param, npar + j, isl.Id(names[j], context=CTX))
    return out


# ---- tiled mappings: tiles of points per thread, registers, shared memory -------------------------------
# (their marks: TileMark, SharedMark, PointsMark, ReduceMark in poly/marks.py)


@dataclass(frozen=True)
class CudaMapping:
    """How the kernels of a region use the GPU: the tuning parameters of the CUDA target.

    *block*: threads per block x[,y[,z]] (() = the default for the deepest kernel; a kernel with fewer
    mapped loops folds the extra dims into its last one). *points*: points per thread along x[,y[,z]]
    (a kernel with fewer mapped loops ignores the extra ones); a block then covers a tile of block x
    points iterations. *shared*: arrays staged in shared memory (None: every read-only array
    reused across the threads of a block, where the kernel has a reduction loop; with *shared_reused*, of
    those the ones named, else the named ones wherever a kernel reads them only). *reduction_tile*: the
    strip of the reduction loop staged at once. *registers*: keep the elements a thread owns in registers
    over its tile where that is legal. *flat*: the previous mapping (one point per thread, grid-stride
    loops, nothing staged); the other fields but *block* are then ignored. *reduction* "warp": in a 1-D
    kernel whose inner loop accumulates into the thread's own element (a row reduction), the 32 lanes of
    a warp share each point's loop and combine their partial sums with shuffles (the block's threads /
    32 points per block); kernels where that is not possible keep one thread per point. *tile*: "auto"
    tiles only the kernels where tiling pays (KernelChoices.tiling_pays; the others keep the flat mapping
    on *flat_block*, () = the flat default block), "all" tiles every mapped kernel. *full_tiles*: the
    instances of full tiles (every point of the tile and of the staged strip exists, _full_tiles) get their
    own copy of the code, without bounds checks, the strip loop unrolled (False: the previous code, every
    point checked). *min_blocks*: the tiled kernels ask nvcc (__launch_bounds__) for registers that let this
    many blocks share a multiprocessor (2: at most 128 registers a thread for 256 threads, the other block
    hiding latency, at the risk of spills). *vector*: a thread's points along x in runs of this many
    adjacent points (the runs block x vector apart) instead of one point every block x apart, where the
    points along x are a multiple of it: the adjacent elements a thread reads from a staged strip (matmul's
    row of B) are then one vector load (the shared arrays aligned for it). *fuse*: the kernels of the
    whole-component schedule with input reuse (AnalyzedScop.gpu_fused: statements that read the same data
    in one kernel) instead of PPCG's."""

    block: tuple[int, ...] = ()
    points: tuple[int, ...] = ()
    shared: tuple[str, ...] | None = None
    reduction_tile: int = 32
    registers: bool = True
    flat: bool = False
    reduction: str = "thread"  # "warp": a warp per point of a 1-D kernel that reduces along an inner loop
    shared_reused: bool = False  # *shared* names arrays to stage where the default would (reused across threads)
    tile: str = "auto"  # "auto": only the kernels where tiling pays; "all": every mapped kernel
    flat_block: tuple[int, ...] = ()  # the block of the kernels a tiled mapping leaves flat (() = the default)
    full_tiles: bool = True  # full tiles apart: no bounds checks, the staged strip unrolled (False: checks everywhere)
    min_blocks: int = 1  # blocks of a tiled kernel that must fit on a multiprocessor at once (__launch_bounds__)
    vector: int = 1  # a thread's points along x in runs of this many adjacent points
    fuse: bool = False  # the fused GPU schedule's kernels (AnalyzedScop.gpu_fused)


def fold_axes(mapped: int, values: tuple[int, ...]) -> tuple[int, int, int]:
    """A kernel's (x, y, z) from the file's x[,y[,z]]: extra dims fold into the kernel's last one."""
    b = list(values) + [1] * (3 - len(values))
    if mapped <= 0:
        return (1, 1, 1)
    if mapped == 1:
        return (b[0] * b[1] * b[2], 1, 1)
    if mapped == 2:
        return (b[0], b[1] * b[2], 1)
    return (b[0], b[1], b[2])


@dataclass(frozen=True, eq=False)
class KernelPlan:
    """One kernel of a tiled mapping. Schedule depths: host loops 0..depth-1, tile loops (one per mapped
    member) depth..depth+mapped-1, then the kernel's own loops; the point band sits at every leaf."""

    info: KernelInfo
    block: tuple[int, int, int]
    points: tuple[int, ...]  # per mapped member
    tiles: tuple[int, ...]  # per mapped member: block extent x points
    private: tuple[str, ...]  # arrays held in registers over the tile
    private_inv: isl.UnionMap  # (host dims, mapped values) -> the kernel's instances (see private_access)
    shared: tuple[str, ...]  # arrays staged in shared memory
    shared_maps: tuple[isl.UnionMap, ...]  # per shared array: its accesses in the kernel
    stage_prefix: isl.UnionMap | None  # instance -> the schedule dims above the staging point
    stage_depth: int  # number of schedule dims above the staging point
    point_maps: tuple[isl.UnionMap, ...]  # per mapped member: statement instance -> its value
    thread_axes: tuple[int, ...] = ()  # per mapped member: the thread axis of its points (() = info.axes)
    warp: bool = False  # a warp per point: lanes split the reduction loop (ReduceMark)
    full: isl.Set | None = None  # the stage prefix values (schedule dims 0..stage_depth-1) of full tiles
    full_tiles: bool = False  # CudaMapping.full_tiles: full tiles apart, staging checks simplified
    vector: int = 1  # CudaMapping.vector where it applies to this kernel (its x points a multiple), else 1

    @property
    def axes(self) -> tuple[int, ...]:
        return self.thread_axes or self.info.axes

    @property
    def mark(self) -> KernelMark:
        return self.info.mark


@dataclass(frozen=True, eq=False)
class TiledGpu:
    schedule: isl.Schedule
    kernels: tuple[KernelInfo, ...]
    plans: dict  # kernel mark -> KernelPlan (mapped kernels only)

    @property
    def max_mapped(self) -> int:
        return max((k.mapped for k in self.kernels), default=0)

    def kernel(self, mark: KernelMark) -> KernelInfo:
        return next(k for k in self.kernels if k.mark == mark)


@dataclass(frozen=True)
class KernelChoices:
    """What a kernel could stage: the arrays eligible for registers and for shared memory, and the
    default shared ones (read-only, reused across threads, under a reduction loop)."""

    private: tuple[str, ...]
    shared: tuple[str, ...]
    shared_default: tuple[str, ...]
    reduction: bool  # the kernel has a loop below its mapped band
    warp: bool = False  # a 1-D kernel with a row reduction a warp can share (see CudaMapping.reduction)
    unregistered: tuple[str, ...] = ()  # arrays written under the loop that no register can hold
    long_reduction: bool = False  # the loop a staged strip would mine runs more than LONG_REDUCTION times

    @property
    def tiling_pays(self) -> bool:
        """Whether the tiled default beats one point per thread here. Not where a loop below the mapped band
        writes an array that cannot live in registers (covariance's cov, whose transposed copy
        cov[j][i] = cov[i][j] gives a point two elements): the points of a tile then sit inside that loop,
        each with its guard, so every iteration reads and writes global memory, where the flat mapping's one
        point per thread has the loop inside its guard and nvcc keeps the element in a register (PolyBench
        covariance on an H200: 2.94 ms tiled against 1.30 ms flat)."""
        return not (self.reduction and self.unregistered)


def _kernel_nodes(node: isl.ScheduleNode, out: list) -> None:
    mark = mark_of(node)
    if isinstance(mark, KernelMark):
        out.append(mark)
        return
    for i in range(node.n_children()):
        _kernel_nodes(node.child(i), out)


def _find_mark(node: isl.ScheduleNode, mark: KernelMark) -> isl.ScheduleNode | None:
    if mark_of(node) == mark:
        return node
    for i in range(node.n_children()):
        found = _find_mark(node.child(i), mark)
        if found is not None:
            return found
    return None


def _union_to_map(um: isl.UnionMap, array: str | None = None) -> isl.Map | None:
    maps = [m for m in maps_of(um) if array is None or m.get_tuple_name(isl.dim_type.out) == array]
    if not maps:
        return None
    out = maps[0]
    for m in maps[1:]:
        out = out.union(m)
    return out


def _accesses(scop: Scop, statements: tuple[str, ...], array: str, writes: bool | None = None) -> isl.UnionMap:
    um = isl.UnionMap.empty(scop.context.get_space())
    for st in scop.statements:
        if st.name in statements:
            for a in st.accesses:
                if a.array == array and (writes is None or a.is_write == writes):
                    um = um.union(isl.UnionMap(a.relation))
    return um.intersect_domain(scop.domain).intersect_params(scop.context)


def kernel_choices(scop: Scop, gs: GpuSchedule) -> dict[KernelMark, KernelChoices]:
    """Per mapped kernel (by mark): the arrays that can live in registers or shared memory."""
    out = {}
    root = gs.schedule.get_root()
    for info in gs.kernels:
        if not info.mapped:
            continue
        band = _find_mark(root, info.mark).child(0)
        out[info.mark] = _choices(scop, info, band)
    return out


def _choices(scop: Scop, info: KernelInfo, band: isl.ScheduleNode) -> KernelChoices:
    below = band.child(0)
    reduction = _has_band(below)
    prefix = below.get_prefix_schedule_union_map().intersect_domain(band.get_domain())
    inv = prefix.reverse()
    arrays = sorted({a.array for st in scop.statements if st.name in info.statements for a in st.accesses})
    ndim = {a.name: a.ndim for a in scop.arrays}
    private, shared, default, unregistered = [], [], [], []
    for name in arrays:
        if ndim.get(name, 0) == 0:
            continue
        acc = _accesses(scop, info.statements, isl_name(name))
        m = _union_to_map(inv.apply_range(acc))
        if m is None:
            continue
        written = not _accesses(scop, info.statements, isl_name(name), writes=True).is_empty()
        if written:
            # Each point's accesses reach one element, and no other point's: no thread can see it.
            if reduction and m.is_single_valued() and m.is_injective():
                private.append(name)
            elif reduction:
                unregistered.append(name)
        else:
            shared.append(name)
            if reduction and not m.is_injective():  # several threads read the same elements
                default.append(name)
    warp = False
    if info.mapped == 1 and reduction and private:
        written = {a.array for st in scop.statements if st.name in info.statements for a in st.writes}
        red = _reduction_band(below)
        # the loop's statements must be sums into the thread's element: checked where they are printed
        warp = red is not None and written <= set(private)
    return KernelChoices(tuple(private), tuple(shared), tuple(default), reduction, warp, tuple(unregistered),
                         _long_loop(scop, _strip_band(below)))


LONG_REDUCTION = 64


def _long_loop(scop: Scop, band: isl.ScheduleNode | None) -> bool:
    """Whether the first member of *band* takes more than LONG_REDUCTION values (or a number that grows
    with the parameters): matmul's k loop, not a stencil's 8 taps."""
    if band is None:
        return False
    dom = band.get_domain().intersect_params(scop.context)
    ranges = sets_of(member_map(band.band_get_partial_schedule(), 0, dom).range())
    if not ranges:
        return False
    rng = ranges[0]
    for r in ranges[1:]:
        rng = rng.union(r)
    try:
        extent = rng.dim_max(0).sub(rng.dim_min(0)).max_val()
    except isl.Error:
        return True
    return extent.is_infty() or not extent.is_int() or int(extent.to_str()) >= LONG_REDUCTION


def _reduction_band(node: isl.ScheduleNode) -> isl.ScheduleNode | None:
    """The kernel's one inner loop (a one-member band with no band below it), where the kernel's body
    is that band or a sequence with it as the only band; None otherwise."""
    def leaf_band(n):
        return (n.get_type() == isl.schedule_node_type.band and n.band_n_member() == 1
                and not _has_band(n.child(0)))
    if leaf_band(node):
        return node
    if node.get_type() != isl.schedule_node_type.sequence:
        return None
    found = None
    for i in range(node.n_children()):
        f = node.child(i)
        c = f.child(0)
        if c.get_type() == isl.schedule_node_type.leaf:
            continue
        if found is not None or not leaf_band(c):
            return None
        found = c
    return found


def _has_band(node: isl.ScheduleNode) -> bool:
    if node.get_type() == isl.schedule_node_type.band:
        return True
    return any(_has_band(node.child(i)) for i in range(node.n_children()))


def _multi_val(space: isl.Space, values) -> isl.MultiVal:
    mv = isl.MultiVal.zero(space)
    for k, v in enumerate(values):
        mv = mv.set_val(k, isl.Val(int(v), context=CTX))
    return mv


def plan_tiled(scop: Scop, deps: Dependences, gs: GpuSchedule, mapping: CudaMapping,
               block: tuple[int, ...]) -> TiledGpu:
    """The GPU schedule with each mapped kernel tiled for *mapping*: tile loops (blocks), the reduction
    loop strip-mined where arrays are staged, and the point band (threads x points) sunk to the leaves.
    Sinking is legal because the mapped members are parallel: instances of different points are
    independent, so only each point's own order must stay, which the order below the band keeps (the
    legality check runs on the result anyway)."""
    deps = deps.in_order()
    choices = kernel_choices(scop, gs)
    points = tuple(mapping.points) or (1,)
    root = gs.schedule.get_root()
    plans = {}
    names: list[KernelMark] = []
    _kernel_nodes(root, names)
    for name in names:
        info = gs.kernel(name)
        if not info.mapped:
            continue
        ch = choices[name]
        if mapping.tile == "auto" and not ch.tiling_pays:
            continue  # stays flat: see KernelChoices.tiling_pays
        kblock = fold_axes(info.mapped, block)
        kpoints = (tuple(points) + (1, 1, 1))[:info.mapped] + (1,) * (3 - info.mapped)  # extra axes: dropped
        pts = tuple(kpoints[ax] for ax in info.axes)
        tiles = tuple(kblock[ax] * kpoints[ax] for ax in info.axes)
        by_default = mapping.shared is None or mapping.shared_reused
        shared = ch.shared_default if mapping.shared is None else \
            tuple(a for a in (ch.shared_default if mapping.shared_reused else ch.shared) if a in mapping.shared)
        private = ch.private if mapping.registers else ()
        threads = math.prod(kblock)
        warp = mapping.reduction == "warp" and ch.warp and bool(private) and threads % 32 == 0
        thread_axes: tuple[int, ...] = ()
        if warp:  # lanes on x, one point per warp on y
            kblock = (32, threads // 32, 1)
            thread_axes = (1,)
            tiles = (kblock[1] * pts[0],)
            shared = ()
        band = _find_mark(root, name).child(0)
        # (host dims, mapped values) of each instance, before tiling: the private arrays' maps
        below = band.child(0)
        inv = below.get_prefix_schedule_union_map().intersect_domain(band.get_domain()).reverse()
        mupa = band.band_get_partial_schedule()
        dom = band.get_domain().intersect_params(scop.context)
        point_maps = tuple(member_map(mupa, k, dom) for k in range(info.mapped))
        tileband = band.band_tile(_multi_val(band.band_get_space(), tiles))
        pointband = tileband.child(0).insert_mark(mark_id(TileMark(info.index))).child(0)
        pmupa = pointband.band_get_partial_schedule()
        sub = pointband.delete()  # the point band's child, now right below the tile band
        if warp:
            sub = _mark_reduction(sub, info.index)
        stage = sub
        top = sub.get_tree_depth()
        strip = _strip_band(sub) if shared else None
        if strip is not None:
            if strip.band_n_member() > 1:
                strip = strip.band_split(1)
            strip = strip.band_tile(_multi_val(strip.band_get_space(), [max(1, mapping.reduction_tile)]))
            stage = strip.child(0)
        elif by_default:
            shared = ()  # by default only inside a strip-mined loop (a whole loop's footprint can be large)
        strip_size = max(1, mapping.reduction_tile) if strip is not None else 0
        full = _full_tiles(scop, stage, pmupa, info.depth, tiles, strip_size) \
            if mapping.full_tiles and not warp else None
        stage, sprefix = _insert_stage_marks(stage, full, info.index, strip_size, scop)
        stage_depth = stage.get_schedule_depth()
        shared_maps = [_accesses(scop, info.statements, isl_name(a)) for a in shared]
        node = stage
        while node.get_tree_depth() > top:
            node = node.parent()
        root = _sink_points(node, pmupa, info.index).get_schedule().get_root()
        xpoints = [pts[j] for j, ax in enumerate(thread_axes or info.axes) if ax == 0]
        vector = mapping.vector if not warp and xpoints and xpoints[0] % mapping.vector == 0 else 1
        plans[name] = KernelPlan(info, kblock, pts, tiles, tuple(private), inv, tuple(shared),
                                 tuple(shared_maps), sprefix, stage_depth, point_maps, thread_axes=thread_axes,
                                 warp=warp, full=full[1] if full is not None else None,
                                 full_tiles=mapping.full_tiles, vector=vector)
    schedule = root.get_schedule()
    check_legal(schedule, deps, scop)
    return TiledGpu(schedule, gs.kernels, plans)


def _leaves(node: isl.ScheduleNode, out: list) -> list:
    if node.get_type() == isl.schedule_node_type.leaf:
        out.append(node)
    for i in range(node.n_children()):
        _leaves(node.child(i), out)
    return out


def _full_tiles(scop: Scop, node: isl.ScheduleNode, points: isl.MultiUnionPwAff, depth: int,
                tiles: tuple[int, ...], strip: int) -> tuple[isl.UnionSet, isl.Set] | None:
    """The instances below *node* whose tile is full, and the values of the schedule dims above *node* (o)
    that make it full; None where no tile is full. A tile is full when, for each statement and each value
    of the loops between *node* and the points (mid), every point of the tile's box exists: member j of
    *points* over tiles[j] * o[depth + j] .. + tiles[j] - 1 and, when *node* is the loop of a staged strip
    (*strip* > 0 iterations, its tile number the last dim of o), that loop over its whole strip. The
    condition depends on o only, which the block's threads share (barriers stay uniform)."""
    nout = node.get_schedule_depth()
    m = len(tiles)
    pts = isl.UnionMap.from_multi_union_pw_aff(points)
    prefix = node.get_prefix_schedule_union_map().intersect_domain(node.get_domain())
    occupied = sets_of(prefix.range())
    if len(occupied) != 1:
        return None
    occ = occupied[0].intersect_params(scop.context)
    bad = None
    for leaf in _leaves(node, []):
        dom = leaf.get_domain().intersect_params(scop.context)
        if dom.is_empty():
            continue
        sched = leaf.get_prefix_schedule_union_map().intersect_domain(dom).flat_range_product(
            pts.intersect_domain(dom))
        for stmt in maps_of(sched):
            f = stmt.range()
            n = f.dim(isl.dim_type.set)
            nmid = n - nout - m
            if nmid < (1 if strip else 0):
                return None  # (not the shape this split is for)
            d = [f"d{k}" for k in range(n)]
            cons = [f"{t} * {d[depth + j]} <= {d[nout + nmid + j]} <= {t} * {d[depth + j]} + {t - 1}"
                    for j, t in enumerate(tiles)]
            # a statement at one value of the strip loop (gemm's C *= beta beside the sum) need not fill it
            iterates = bool(strip) and not _fixed_dim(f, nout)
            if iterates:
                cons.append(f"{strip} * {d[nout - 1]} <= {d[nout]} <= {strip} * {d[nout - 1]} + {strip - 1}")
            box = isl.Set(f"{{ [{', '.join(d)}] : {' and '.join(cons)} }}", context=CTX)
            box = box.align_params(f.get_space())
            f = f.align_params(box.get_space())
            box = box.reset_tuple_id() if box.has_tuple_id() else box
            f = f.reset_tuple_id() if f.has_tuple_id() else f
            # every (o, mid) that occurs, with each point of the box (and each iteration of the strip)
            g = f.project_out(isl.dim_type.set, nout + nmid, m)
            if iterates:
                g = g.project_out(isl.dim_type.set, nout, 1).insert_dims(isl.dim_type.set, nout, 1)
            g = g.add_dims(isl.dim_type.set, m).intersect(box)
            missing = g.subtract(f).project_out(isl.dim_type.set, nout, n - nout)
            missing = missing.align_params(occ.get_space())
            bad = missing if bad is None else bad.union(missing)
    if bad is None:
        return None
    good = occ.align_params(bad.get_space()).subtract(bad).coalesce()
    if good.is_empty():
        return None
    insts = prefix.intersect_range(isl.UnionSet(good)).domain()
    return insts, good


def _fixed_dim(f: isl.Set, k: int) -> bool:
    """Whether dim *k* of *f* takes one value for each value of the dims before it."""
    n = f.dim(isl.dim_type.set)
    m = isl.Map.from_range(f.project_out(isl.dim_type.set, k + 1, n - k - 1))
    m = m.move_dims(isl.dim_type.in_, 0, isl.dim_type.out, 0, k)
    return m.is_single_valued()


def _insert_stage_marks(stage: isl.ScheduleNode, full: tuple[isl.UnionSet, isl.Set] | None, index: int,
                        strip: int, scop: Scop) -> tuple[isl.ScheduleNode, isl.UnionMap]:
    """The SharedMark at *stage* and, with *full*, the full-tile split above it: a sequence of the full
    tiles' instances (under a FullMark) and the others, each branch with its own SharedMark. Returns the
    node at *stage*'s place and the staged instances' prefix schedule (the stage dims)."""
    top = stage.get_tree_depth()
    dom = stage.get_domain().intersect_params(scop.context)
    branches = []
    if full is None:
        branches.append((stage, False))
    else:
        insts = full[0].intersect(dom)
        rest = dom.subtract(insts)
        if rest.is_empty():
            branches.append((stage, True))
        else:
            seq = stage.insert_sequence(isl.UnionSetList.from_union_set(insts).add(rest))
            branches += [(seq.child(0).child(0), True), (seq.child(1).child(0), False)]
    sprefix = None
    node = branches[0][0]
    for k in range(len(branches)):
        if k:  # the other branch, from the sequence
            while node.get_tree_depth() > top:
                node = node.parent()
            node = node.child(k).child(0)
        if branches[k][1]:
            node = node.insert_mark(mark_id(FullMark(index, strip))).child(0)
        node = node.insert_mark(mark_id(SharedMark(index)))
        sdom = node.get_domain().intersect_params(scop.context)
        p = node.child(0).get_prefix_schedule_union_map().intersect_domain(sdom)
        sprefix = p if sprefix is None else sprefix.union(p)
    while node.get_tree_depth() > top:
        node = node.parent()
    return node, sprefix


def private_access(scop: Scop, plan: KernelPlan, k: int, statements: set[str],
                   writes: bool | None = None) -> isl.Map | None:
    """(host dims, mapped values) -> the element of private array *k* that the point's instances of
    *statements* access (only writes, only reads, or both), or None if they do not."""
    m = _union_to_map(plan.private_inv.apply_range(_accesses(scop, statements, isl_name(plan.private[k]), writes)))
    return None if m is None or m.is_empty() else m


def private_live_in(scop: Scop, plan: KernelPlan, k: int, statements: set[str]) -> bool:
    return _live_in(scop, statements, isl_name(plan.private[k]))


def _live_in(scop: Scop, statements, array: str) -> bool:
    """Whether a read of *array* by *statements* may see a value written before them (else the registers
    need no load: each point writes its element before reading it, as gemm's C = 0 before the sum)."""
    reads = _accesses(scop, statements, array, writes=False)
    if reads.is_empty():
        return False
    writes = _accesses(scop, statements, array, writes=True)
    flow = isl.UnionAccessInfo.from_sink(reads).set_must_source(writes).set_schedule_map(scop.schedule).compute_flow()
    return not flow.get_may_no_source().is_empty()


def _strip_band(node: isl.ScheduleNode) -> isl.ScheduleNode | None:
    """The loop to strip-mine for shared-memory tiles: *node* if it is a band, else the only band right
    below the filters of a sequence (covariance: cov = 0; the k loop; cov /= n), else None."""
    if node.get_type() == isl.schedule_node_type.band:
        return node
    if node.get_type() not in (isl.schedule_node_type.sequence, isl.schedule_node_type.set):
        return None
    bands = [node.child(i).child(0) for i in range(node.n_children())
             if node.child(i).child(0).get_type() == isl.schedule_node_type.band]
    return bands[0] if len(bands) == 1 else None


def _mark_reduction(node: isl.ScheduleNode, index: int) -> isl.ScheduleNode:
    """A mark above the kernel's reduction band (see _reduction_band); returns the node at *node*'s place."""
    if node.get_type() == isl.schedule_node_type.band:
        return node.insert_mark(mark_id(ReduceMark(index)))
    for i in range(node.n_children()):
        c = node.child(i).child(0)
        if c.get_type() == isl.schedule_node_type.band:
            return c.insert_mark(mark_id(ReduceMark(index))).parent().parent()
    return node


def _sink_points(node: isl.ScheduleNode, mupa: isl.MultiUnionPwAff, index: int) -> isl.ScheduleNode:
    """Put the point band (restricted to each leaf's instances) with a mark above it at every leaf below
    *node*; returns the node at the same position."""
    if node.get_type() == isl.schedule_node_type.leaf:
        dom = node.get_domain()
        if dom.is_empty():
            return node
        depth = node.get_schedule_depth()
        node = node.insert_partial_schedule(mupa.intersect_domain(dom))
        return node.insert_mark(mark_id(PointsMark(index, depth)))
    for i in range(node.n_children()):
        node = _sink_points(node.child(i), mupa, index).parent()
    return node


def staged_box(scop: Scop, plan: KernelPlan, k: int, statements: set[str], present: list[bool]
               ) -> tuple[isl.Map, list[isl.PwAff], list[int]] | None:
    """The footprint of shared array *k* of *plan* for one iteration of the staging point, from the
    accesses of *statements* (those under this copy of the staging point), as PPCG computes it: the
    elements accessed for fixed values of the schedule dims above the point (those the AST emitted,
    *present*), and a box over it: per array dim, the lowest element (a function of those dims) and a
    constant size. None when no access of *statements* reaches the array or the box is not bounded."""
    doms = isl.UnionSet.empty(scop.context.get_space())
    for st in scop.statements:
        if st.name in statements:
            doms = doms.union(isl.UnionSet(st.domain))
    acc = plan.shared_maps[k].intersect_domain(doms)
    m = _union_to_map(plan.stage_prefix.reverse().apply_range(acc))
    if m is None or m.is_empty():
        return None
    for d in reversed(range(len(present))):
        if not present[d]:
            m = m.project_out(isl.dim_type.in_, d, 1)
    los, sizes = [], []
    n = m.dim(isl.dim_type.out)
    for d in range(n):
        md = m.project_out(isl.dim_type.out, d + 1, n - d - 1).project_out(isl.dim_type.out, 0, d)
        lo = md.lexmin_pw_multi_aff().get_pw_aff(0)
        hi = md.lexmax_pw_multi_aff().get_pw_aff(0)
        try:
            size = hi.sub(lo).max_val()
        except isl.Error:  # bounds with integer divisions: isl's max_val wants plain affine pieces
            return None
        if not size.is_int():
            return None
        los.append(lo)
        sizes.append(int(size.to_str()) + 1)
    return m, los, sizes


def point_value(plan: KernelPlan, j: int, statement: str) -> isl.PwAff:
    """Mapped member *j* of *plan* as a function of *statement*'s iterators."""
    maps = [m for m in maps_of(plan.point_maps[j]) if m.get_tuple_name(isl.dim_type.in_) == statement]
    return maps[0].lexmin_pw_multi_aff().get_pw_aff(0)


def dims_as_params(obj, kind: isl.dim_type, names: list[str | None]):
    """*obj* with its *kind* dims turned into parameters named *names* (None: projected out)."""
    for d in reversed(range(len(names))):
        if names[d] is None:
            obj = obj.project_out(kind, d, 1)
    keep = [x for x in names if x is not None]
    npar = obj.dim(isl.dim_type.param)
    obj = obj.move_dims(isl.dim_type.param, npar, kind, 0, len(keep))
    for j, x in enumerate(keep):
        obj = obj.set_dim_id(isl.dim_type.param, npar + j, isl.Id(x, context=CTX))
    return obj
