"""Schedule marks as small typed objects: what a loop (or a GPU kernel's subtree) is marked for.

A mark node of the schedule tree carries an `isl.Id` whose name is the kind of mark and whose user object
is one of the frozen dataclasses below (`mark_id` makes the id, `mark_of` reads it back from a schedule or
AST mark node). islpy keeps a reference to the user object for as long as isl holds the id; isl's text
form of a schedule does not carry it (schedules are never printed and parsed back). Loop marks
name the schedule *depth* of the loop they are for: when that loop is degenerate (a single iteration) the
AST has no for node for it and the mark must not fall on an inner loop.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import islpy as isl

from .islutil import CTX


@dataclass(frozen=True)
class ParallelMark:
    """`#pragma omp parallel for` on the loop at schedule *depth*: the scalars it privatizes (`private`:
    dead after the loop, `lastprivate`: live), the arrays it needs private copies of (`poly/privatize.py`)
    and its schedule clause ("" for the default, static). *work*: statement instances in one iteration of
    the loop, an upper bound (None: not a known constant), for the printer's branch between the parallel
    loop and a serial copy. *alternative*: the schedule depth of a loop inside it, parallel without
    privatizing anything, that runs in parallel where this one has a single iteration at run time (a tile
    loop over a parametric extent that fits one tile: the printer's serial copy marks that loop). *collapse*: 2
    where the loop just inside it is parallel too (with the same clauses) and not innermost: the printer adds
    `collapse(2)` where the two loops are perfectly nested with bounds independent of the outer counter (3
    channels of an image on 2 threads: one thread ran two of them)."""

    kind: ClassVar[str] = "omp_parallel"
    depth: int
    private: tuple[str, ...] = ()
    lastprivate: tuple[str, ...] = ()
    arrays: tuple[str, ...] = ()
    clause: str = ""
    work: int | None = None
    alternative: int | None = None
    collapse: int = 1
    alternative_collapse: int = 1  # the same for the alternative loop (a tile loop) and the one inside it
    alternative_per_thread: bool = False  # the alternative runs below ALTERNATIVE_LEAST iterations a thread
    # (emit/c.py; the loops inside an untiled loop), else only where the loop has one iteration (one tile)


@dataclass(frozen=True)
class SimdMark:
    """`#pragma omp simd` on the loop at schedule *depth*, a loop with inner loops, with its scalars
    privatized as on a parallel loop."""

    kind: ClassVar[str] = "omp_simd"
    depth: int
    private: tuple[str, ...] = ()
    lastprivate: tuple[str, ...] = ()


@dataclass(frozen=True)
class IvdepMark:
    """`#pragma GCC ivdep` on the innermost loop at schedule *depth*, valid where each (source, sink)
    statement pair of *order* (the dependences the loop carries) is printed source first."""

    kind: ClassVar[str] = "ivdep"
    depth: int
    order: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class KernelMark:
    """The subtree of GPU kernel *index* (poly/gpu.py)."""

    kind: ClassVar[str] = "gpu_kernel"
    index: int


@dataclass(frozen=True)
class TileMark:
    """Below kernel *index*'s tile band: what one thread keeps in registers over its tile."""

    kind: ClassVar[str] = "gpu_tile"
    index: int


@dataclass(frozen=True)
class SharedMark:
    """Where kernel *index* stages its shared-memory tiles (inside the strip-mined reduction loop)."""

    kind: ClassVar[str] = "gpu_shared"
    index: int


@dataclass(frozen=True)
class FullMark:
    """Above the instances of kernel *index* whose tiles are full (poly/gpu.py's full-tile split): every
    point of the thread's tile (and every iteration of the staged strip, *strip* > 0) exists, so the
    point loops need no bounds check and the strip loop has *strip* iterations."""

    kind: ClassVar[str] = "gpu_full"
    index: int
    strip: int = 0


@dataclass(frozen=True)
class PointsMark:
    """Above kernel *index*'s point band, sunk to every leaf of the kernel at schedule *depth*."""

    kind: ClassVar[str] = "gpu_points"
    index: int
    depth: int


@dataclass(frozen=True)
class ReduceMark:
    """Above a reduction loop of kernel *index* that the lanes of a warp share."""

    kind: ClassVar[str] = "gpu_reduce"
    index: int


@dataclass(frozen=True, eq=False)
class ContractionMark:
    """Above the (row, column, k) band of a contraction statement (poly/contraction.py): the C printer
    prints the packed, blocked code for it (emit/blis.py) with these *blocks* (None: the model's)."""

    kind: ClassVar[str] = "contraction"
    statement: str
    contraction: object  # poly.contraction.Contraction
    blocks: object = None  # emit.blis.Blocks


Mark = ParallelMark | SimdMark | IvdepMark | KernelMark | TileMark | SharedMark | FullMark | PointsMark | ReduceMark \
    | ContractionMark
_MARKS = (ParallelMark, SimdMark, IvdepMark, KernelMark, TileMark, SharedMark, FullMark, PointsMark, ReduceMark,
          ContractionMark)


def mark_id(mark: Mark) -> isl.Id:
    """The isl id of a mark node for *mark*."""
    return isl.Id(mark.kind, user=mark, context=CTX)


def mark_of(node) -> Mark | None:
    """The typed mark of a schedule-tree or AST mark node (None for another node or another id)."""
    kind = isl.schedule_node_type.mark if isinstance(node, isl.ScheduleNode) else isl.ast_node_type.mark
    if node.get_type() != kind:
        return None
    user = node.mark_get_id().get_user()
    return user if isinstance(user, _MARKS) else None


def marks_of(schedule: isl.Schedule) -> list[Mark]:
    """Every typed mark of a schedule tree, depth first."""
    out: list[Mark] = []

    def walk(node) -> None:
        mark = mark_of(node)
        if mark is not None:
            out.append(mark)
        for i in range(node.n_children()):
            walk(node.child(i))

    walk(schedule.get_root())
    return out
