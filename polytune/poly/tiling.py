"""Tiling: the visitor that tiles every permutable band of two or more members (tile loops outside,
point loops inside), with a tile wavefront or diamond tiles where no tile loop is parallel."""
from __future__ import annotations

from dataclasses import dataclass, replace

import islpy as isl

from .bands import PEELED_LOOP, band_nodes, loop_iterations, member_of, short_extent
from .deps import Dependences, ScalarInfo
from .diamond import concurrent_start
from .fission import ordered_pieces, sequence_filters
from .islutil import CTX, sets_of
from .marks import ContractionMark, mark_of
from .parallel import Clauses, Parallelism, mark_member
from .point_order import PointOrder, permute
from .privatize import PrivateArray
from .reuse import Reuse
from .scop import Scop
from .sink import sink

DEFAULT_TILE = 32
# The tiles of a two-member band that runs as a tile wavefront, where its sizes are not given (rows, width: the
# member of the innermost point loop takes the width). Each tile of a wavefront starts its rows' memory streams
# anew: rows of 32 ints (two cache lines) left the hardware prefetcher nothing to follow, and 32 x 32 tiles ran
# Needleman-Wunsch's int table at 0.8x of the original on 2 threads; 32 x 512 at 1.6x, edit distance and LCS
# 1.1-1.3x faster than with 32 x 32 (docs/DESIGN.md, "Wavefront tiles").
WAVEFRONT_TILES = (32, 512)
# The same band's tiles run in order (one thread): few rows, so that the rows' streams, which continue from a
# tile to the next, stay within what the prefetcher follows (32 rows of two arrays: 64 streams); 8 x 256 ran the
# three tables 1.03-1.4x faster than 32 x 32, whose one-thread code was at 0.95x of the original on nw.
ROW_TILES = (8, 256)
# The diamond (concurrent-start) time tiles of a stencil of two or more space dimensions: the tile along the
# innermost point loop, whose rows are vectorized and streamed. Rows of 32 doubles (4 AVX-512 vectors, skewed
# by the time step in every tile) ran jacobi-2d at 0.75x and fdtd-2d at 0.85x of rows of 128 at 1 thread on the
# H100 machine's Xeon, 0.92x of them at 16 threads (heat-3d: 0.90x at 16 threads, 1.02x at 1; PolyBench LARGE,
# 5 rounds, 2026-12-06); rows of 256 gained less (docs/DESIGN.md, "Diamond rows").
DIAMOND_ROW = 128
# Those shapes are for bands whose dependences reach only near cells (a distance of at most this along each
# member: a cell's west, north and north-west neighbours), whose only reuse is the row before.
NEAR = 2
# A band with farther dependences (Floyd-Warshall's (i, j) under k: row k and column k read by every row) runs
# its wavefront in the default tiles, and its tiles in order (one thread) in 8 rows by 64 (the width along the
# innermost point loop): gcc vectorizes each tile's rows but those of the tile holding column k (untiled, none:
# the row it writes holds the element it reads for all of them), and few rows keep the streams within what the
# prefetcher follows. PolyBench's floyd-warshall, LARGE, 1 thread: on the EPYC dev box (Zen 3) 5.0-5.6 s against
# 14-23 s in 32 x 32 (gcc's build of the original 13.5-16.7 s); on the H100 machine's Xeon 3.2-3.9 s against
# 3.9-4.2 s (8 x 256 ran 4.7 s there, 0.85x of 32 x 32; docs/DESIGN.md, "Wavefront tiles").
FAR_ROW_TILES = (8, 64)


@dataclass(frozen=True)
class BandInfo:
    """What was done to one band of the schedule, for reports and for the tuner."""

    index: int  # depth-first order of bands in the tree
    members: int
    depth: int  # number of enclosing band members
    statements: tuple[str, ...]
    permutable: bool
    tiled: bool
    tile_sizes: tuple[int, ...]
    schedule: str  # the band's partial schedule in isl notation (before tiling)
    parallel_loop: str | None  # "tile k" / "point k" / "loop k" for the OpenMP loop in this band, if any
    wavefront: bool
    point_order: tuple[int, ...]  # band member order of the point loops (innermost last)
    extents: tuple[int | None, ...] = ()  # trip count of each member's loop where it is a known constant
    concurrent_start: bool = False  # the time member was replaced by a mirrored one (diamond tiles)
    unroll_jam: tuple[int, int] | None = None  # (point member, factor) unrolled and jammed into the innermost
    # the member from which the band's tiles became a sequence of one band per statement (fission.py), each
    # with its own point order and jam (point_order and unroll_jam are then the first jammed piece's)
    sequence_at: int | None = None
    sunk: int | None = None  # the member whose point loop was moved below the bands inside (sink.py); point_order
    # then lists the others
    # "tile k" / "point k": the parallel loop where the marked tile loop has one iteration at run time (its
    # extent is a parameter's: 16 rows in tiles of 32 are one tile, no parallelism); None where there is none
    parallel_alternative: str | None = None
    # the parallel loop may run with the loop inside it as one loop (ParallelMark.collapse: collapse(2) where
    # the printed nest allows it and the outer loop has few iterations at run time)
    parallel_collapse: bool = False
    # False where the reuse rule found no reuse that needs the tiles and the band is tiled only so that the
    # printer separates a statement fused into it at one point (a degenerate member): no gain of locality
    for_reuse: bool = True
    # the tile sizes of the region's one-thread version (its tiles in order) where they differ from tile_sizes:
    # a wavefront band sized by default (WAVEFRONT_TILES; in order, ROW_TILES)
    one_thread_sizes: tuple[int, ...] = ()
    # a wavefront band tiled by WAVEFRONT_TILES: per member (its number of values, an isl.PwAff of the
    # parameters; its tile size), for the run-time choice between these tiles and 32's (pipeline._c_region)
    wide_tiles: tuple = ()


class Transformer(Parallelism, PointOrder, Reuse):
    """Tiles, reorders and parallelizes every band of a schedule tree (make_schedule's visitor)."""

    def __init__(self, scop: Scop, deps: isl.UnionMap, sizes: list[int], tile: bool, parallel: bool,
                 scalars: ScalarInfo | None = None, unroll: int = 0):
        self.scop, self.deps, self.sizes = scop, deps, sizes
        self.tile, self.parallel = tile, parallel
        self.unroll = unroll  # unroll-and-jam factor of the point loops (0: none)
        self.scalars = scalars  # privatizable scalars (OpenMP loops only; None: keep every scalar shared)
        self.private: Clauses = ((), ())  # the scalars to privatize in the last loop first_parallel found
        self.private_arrays: tuple[PrivateArray, ...] = ()  # arrays that loop needs a private copy of
        self.deps_object: Dependences | None = None  # for the per-array dependences (computed on first use)
        self._array_flows = None
        self.copies: dict[int, tuple[PrivateArray, ...]] = {}  # by the depth of their loop
        self.omp_schedule = "static"  # static | dynamic | auto (make_schedule's argument)
        self.point_rule = "stride"  # stride | vector (make_schedule's argument)
        self.reuse_rule = False  # tile only where tiling_pays (reuse.py; make_schedule's argument)
        self.wavefront = True  # a band with no parallel tile loop runs its tiles as a wavefront (False: in order)
        self.wide = True  # wavefront_sizes applies (False: a wavefront band's default sizes stay 32)
        self.bands: list[BandInfo] = []
        self.used_sizes: list[int] = []
        self.given = 0  # how many of used_sizes were given (the others are defaults)

    def next_sizes(self, n: int) -> list[int]:
        out = []
        for _ in range(n):
            if self.sizes:
                out.append(self.sizes.pop(0))
                self.given += 1
            else:
                out.append(DEFAULT_TILE)
        self.used_sizes += out
        return out

    def defaults_only(self, n: int) -> bool:
        """Whether none of the band's *n* sizes (the last taken by next_sizes) was given."""
        return self.given <= len(self.used_sizes) - n

    def wavefront_sizes(self, node, extents: tuple[int | None, ...],
                        sizes: list[int]) -> tuple[list[int], tuple[int, ...]] | None:
        """The tile sizes of a band of two members with no parallel tile loop (a wavefront, or one thread's
        tiles in order), where none of *sizes* was given and the band is innermost: where its dependences are
        near (NEAR), WAVEFRONT_TILES as a wavefront and ROW_TILES in order; where they are not, *sizes* (the
        defaults) as a wavefront and FAR_ROW_TILES in order; the width along the member of the innermost point
        loop. With them, the sizes of the same band's tiles in order (the one-thread version's) where they
        differ. None where sizes were given, or a known extent holds fewer than four of the new tiles (their
        wavefront would have too few to share; in order, the band keeps the defaults)."""
        n = len(sizes)
        if not self.wide or n != 2 or not self.defaults_only(n) or band_nodes(node.child(0)):
            return None
        inner = self.point_order(node, extents)[-1]

        def shaped(tiles: tuple[int, int]) -> list[int]:  # (rows, width): the width along the inner member
            return [tiles[1] if m == inner else tiles[0] for m in range(n)]
        wide, rows = (WAVEFRONT_TILES, ROW_TILES) if _near_dependences(node, self.deps) else (None, FAR_ROW_TILES)
        in_order = shaped(rows)
        wave = in_order if not (self.wavefront and self.parallel) else list(sizes) if wide is None else shaped(wide)
        if any(e is not None and e < 4 * s for shape in (wave, in_order) for e, s in zip(extents, shape)):
            return None
        return wave, (tuple(in_order) if in_order != wave else ())

    def visit(self, node: isl.ScheduleNode, inside_parallel: bool) -> isl.ScheduleNode:
        """Transform the subtree at *node*; return a node at the same tree depth as given. A band's marks name
        its loops by their depth, the number of schedule dimensions above them (``get_schedule_depth``: a
        tiled band above counts its tile and point members, a jam its band of copies; counting the bands
        above by their original members put the marks of a band below a tiled one at a depth no loop has,
        and the printer dropped them)."""
        depth = node.get_tree_depth()
        if isinstance(mark_of(node), ContractionMark):
            return node  # printed as packed blocks (emit/blis.py): no tiling, no marks below
        if node.get_type() == isl.schedule_node_type.band:
            node, found_parallel = self.transform_band(node, inside_parallel, node.get_schedule_depth())
            inside_parallel = inside_parallel or found_parallel
        for i in range(node.n_children()):
            node = self.visit(node.child(i), inside_parallel).parent()
        while node.get_tree_depth() > depth:
            node = node.parent()
        return node

    def transform_band(self, node, inside_parallel: bool, outer_members: int):
        """Tile, reorder and parallelize one band. Returns the lowest node made from it (whose children
        are the band's original children: with unroll-and-jam, the band of the unrolled copies, which is no
        band of the program's and is neither visited nor reported) and whether an OpenMP loop was placed."""
        n = node.band_n_member()
        permutable = bool(node.band_get_permutable())
        stmts = tuple(sorted(s.get_tuple_name() for s in sets_of(node.get_domain())))
        sched_text = str(node.band_get_partial_schedule())
        index = len(self.bands)
        untiled_order = None  # the member order of a band that the reuse rule leaves untiled
        peeled = False  # (that order kept: its inner loops peeled by gcc, unjammed)
        for_reuse = True
        if (self.tile and permutable and n >= 2 and self.reuse_rule
                and not any(s.is_empty() for s in sets_of(node.get_domain()))):  # (no instance to judge by)
            # judged as it would run: the best-stride member innermost (a permutable band needs no tiles to
            # be permuted; gaussian_clamp's column pass came out of isl as (x, y))
            extents = self.extents(node)
            order = self.point_order(node, extents)
            trial = permute(node, order) if order != list(range(n)) else node
            reason = self.tiling_reason(trial)
            # (tiles for parallelism, or where the rule cannot judge, are no gain of locality: expand.py)
            for_reuse = reason not in ("parallelism", "below")
            if reason is None:
                if _constant_outside_varying(trial):
                    # A statement fused into the band at one point of an outer member and along an inner one
                    # (doitgen's `sum[p] = 0` at s = 0 in (s, p)) keeps the tiles, whose point loops the printer
                    # separates from it: untiled, its guard sat in the innermost loop, which was left scalar
                    # (0.6x of the tiled code). (gesummv's `tmp[i] = 0`, constant along the inner j, is printed
                    # before the j loop.)
                    for_reuse = False
                elif _peeled_inside(extents) and not band_nodes(node.child(0)):
                    # every loop inside the first is one gcc peels completely, and no reuse misses the cache:
                    # the band keeps its order, which gcc vectorizes around the peeled copies (batched_gemm's
                    # 16 x 16 x 16 products: k inside j, C's row in registers; the stride order's j inside k
                    # stored the row at every k: 0.72x of gcc's build of the original on a Xeon, 0.87x on dev
                    # box B)
                    untiled_order, peeled = tuple(range(n)), True
                else:
                    node, untiled_order = trial, tuple(order)
        if not (self.tile and permutable and n >= 2) or untiled_order is not None:
            if not band_nodes(node.child(0)) and _has_degenerate_member(node):
                # (as for the point loops of tiles below: the guard of a statement fused in at one point of the
                # innermost loop, box_blur's `sum = 0` at d = -r, left it scalar)
                node = node.band_set_ast_build_options(isl.UnionSet("{ separate[x] }", context=CTX))
            jam, whole = None, node
            if self.tile and permutable and n >= 2 and not peeled:  # left untiled by the reuse rule (not by
                node, jam = self.chains_jam(node)  # --no-tile); jammed copies of the outer loop would leave gcc
                # scalar accumulators around the peeled ones (batched_gemm's batch by 4: 0.68x of the original)
            par = self.first_parallel(node, range(n)) if self.parallel and not inside_parallel else None
            collapse, alternative_name = False, None
            if par is not None:
                # (the clause as without the jam: its copies' loop, whose bounds follow the member, is no triangle)
                mark = self.parallel_mark(outer_members + par, self.schedule_clause(whole, par, False))
                if jam is None and self.collapsible(node, par):
                    mark, collapse = replace(mark, collapse=2), True
                elif jam is None and par == n - 1 and self.extents(node)[par] is None and self.inner_parallel(node):
                    # few iterations at run time (3 channels of an image, each a sequence of passes over
                    # its rows): the loops of the bands inside run in parallel instead (the printer's copy)
                    mark, alternative_name = replace(mark, alternative=outer_members + n,
                                                     alternative_per_thread=True), "loops inside"
                node = mark_member(node, par, mark)
            if par != n - 1:
                node = self.mark_vector(node, outer_members + n - 1, jammed=jam is not None)
            self.bands.append(BandInfo(index, n, outer_members, stmts, permutable, False, (), sched_text,
                                       None if par is None else f"loop {par}", False,
                                       untiled_order or tuple(range(n)), unroll_jam=jam, parallel_collapse=collapse,
                                       parallel_alternative=alternative_name))
            return (node.child(0) if jam else node), par is not None  # (below the jam: its band of copies)
        sizes = self.next_sizes(n)
        mv = _tile_values(node, sizes)
        tiled = node.band_tile(mv).band_set_permutable(1)  # tile band; its child: the point band
        wavefront = False
        diamond = None
        par = None
        one_thread_sizes: tuple[int, ...] = ()
        spans: tuple = ()
        extents = self.extents(node)
        if not inside_parallel:  # (without parallelism too: a band that would need a wavefront gets diamonds)
            many = _longer(extents, sizes)
            par = self.first_parallel(tiled, range(n))
            if par is not None and _single_tile(extents[par], sizes[par]) and len(many) >= 2 \
                    and self.first_parallel(tiled, many) is None:
                # only a tile loop of one iteration is parallel (a time loop of 5 steps in tiles of 32): a
                # wavefront over the two longer tile loops instead (blur: they had run serially)
                par = None
            if par is None:
                # no tile loop is parallel, a wavefront will be needed: prefer tiles that can start
                # concurrently (diamonds)
                diamond = concurrent_start(node, self.deps)
                if diamond is not None:
                    node = diamond
                    sched_text = str(node.band_get_partial_schedule())
                    extents = self.extents(node)
                    if n >= 3 and self.defaults_only(n):
                        # a stencil's time tiles: rows of DIAMOND_ROW along the innermost point loop
                        inner = self.point_order(node, extents)[-1]
                        sizes = [DIAMOND_ROW if m == inner else size for m, size in enumerate(sizes)]
                        self.used_sizes[-n:] = sizes
                        mv = _tile_values(node, sizes)
                    tiled = node.band_tile(mv).band_set_permutable(1)
                    par = self.first_parallel(tiled, range(n))
            wide = self.wavefront_sizes(node, extents, sizes) if par is None and diamond is None else None
            if wide is not None:
                # (the default sizes kept for the wavefront, only the one-thread version's differ: no wide tiles)
                widened = wide[0] != sizes
                (sizes, one_thread_sizes), self.used_sizes[-n:] = wide, wide[0]
                if self.wavefront and self.parallel and widened:
                    spans = _spans(node)
                tiled = node.band_tile(_tile_values(node, sizes)).band_set_permutable(1)
                many = _longer(extents, sizes)
            if par is None and self.wavefront and self.parallel:
                # over the first two tile loops of more than one iteration (a tile loop of one iteration in
                # the sum would leave the next one serial)
                tiled = _wavefront(tiled, *(many[:2] if len(many) >= 2 and diamond is None else (0, 1)))
                wavefront = True
                par = self.first_parallel(tiled, range(n))
            if not self.parallel:
                # one thread (--no-parallel): no loop marked, but the tiles are those of the parallel code's
                # one-thread version; diamond tiles in order ran jacobi-2d 2.4x faster than skewed ones
                par = None
        node = tiled
        if par is not None and _single_tile(extents[par], sizes[par]):
            # That tile loop has one iteration and prints as no loop: use a later parallel tile loop, or
            # else a parallel point loop, so the OpenMP pragma lands on a real loop.
            later = [m for m in range(par + 1, n) if not _single_tile(extents[m], sizes[m])]
            par = self.first_parallel(node, later) if self.parallel else None
            point_par = par is None
        else:
            point_par = False
        split = None
        # fission where the fused band has no jam whose copies share a written element (read-only sharing
        # alone does not outweigh the split: gramschmidt's band would jam j for Q[i][k] instead)
        if par is not None and not (point_par or wavefront or diamond is not None) and self.unroll >= 2 \
                and self.jam_reuse(node.child(0), read_only=False) is None:
            split = ordered_pieces(node, par + 1, self.deps)
        if split is not None:
            done = self.split_points(node, split, sizes, extents, outer_members, par)
            if done is not None:
                low, order, jam = done
                self.bands.append(BandInfo(index, n, outer_members, stmts, True, True, tuple(sizes), sched_text,
                                           f"tile {par}", False, tuple(order), extents, False, jam,
                                           sequence_at=split[0], for_reuse=for_reuse))
                return low, True
        point, order, reuse, sunk = self.order_points(node.child(0), extents, sink_ok=not point_par)
        node = point.parent()
        if _has_degenerate_member(node.child(0)) or len(sets_of(node.get_domain())) > 1:
            # Statements that do not vary along some point loop (gemm's C *= beta at k = 0) would otherwise
            # sit behind a guard in the innermost loop: let the AST builder peel them off.
            node = node.child(0).band_set_ast_build_options(
                isl.UnionSet("{ separate[x] }", context=CTX)).parent()
        alternative = alternative_name = None  # (the copy's parallel loop: schedule depth, report's name)
        alternative_tile = None  # (its member, where it is a tile loop)
        if par is not None and not point_par and not wavefront and diamond is None and extents[par] is None:
            # a parametric extent may fit one tile at run time (a batch of 16 in tiles of 32): the printer's
            # copy for a single tile runs a later parallel tile loop in parallel instead
            # (parallel with the scalars the loop's mark makes private: the copy's pragma has the same clause)
            tile_alt = next((m for m in range(par + 1, n) if not _single_tile(extents[m], sizes[m])
                             and self.parallel_like(node, m)), None)
            if tile_alt is not None:
                alternative, alternative_name = outer_members + tile_alt, f"tile {tile_alt}"
                alternative_tile = tile_alt
            elif par in order and sunk is None and not self.private_arrays:
                # no other tile loop to run in parallel: the point loop of the same member, whose iterations
                # are the tile's (16 channels of an IIR filter in tiles of 32: both threads get 8)
                alternative, alternative_name = outer_members + n + order.index(par), f"point {order.index(par)}"
        if par is not None:
            # (a tile wavefront's tiles are independent of the loops' shape: no clause there)
            clause = "" if wavefront or diamond is not None else self.schedule_clause(node, par, True)
            mark = self.parallel_mark(outer_members + par, clause)
            if alternative is not None:
                mark = replace(mark, alternative=alternative)
            if not (wavefront or diamond is not None or point_par):
                # the tile loop inside it, parallel too, runs as one loop with it where this one has few
                # iterations (ParallelMark.collapse; llm.c's matmul: 4 x 32 rows in tiles of 32 are one tile of
                # each, the 96 output tiles inside ran on one thread), and likewise for the copy's loop
                if self.collapsible(node, par):
                    mark = replace(mark, collapse=2)
                if alternative_tile is not None and self.collapsible(node, alternative_tile):
                    mark = replace(mark, alternative_collapse=2)
            node = mark_member(node, par, mark)
        point, jam = self.unroll_jam(node.child(0), [sizes[k] for k in order], reuse)
        desc = None if par is None else f"tile {par}"
        if point_par:
            ppar = self.first_parallel(point, range(n))
            if ppar is not None:
                point = mark_member(point, ppar, self.parallel_mark(outer_members + n + ppar,
                                                                     self.schedule_clause(point, ppar, False)))
                desc = f"point {ppar}"
        if not (point_par and desc is not None and desc == f"point {n - 1}"):
            point = self.mark_vector(point, point.get_schedule_depth() + point.band_n_member() - 1,
                                     jammed=jam is not None)
        self.bands.append(BandInfo(index, n, outer_members, stmts, True, True, tuple(sizes), sched_text,
                                   desc, wavefront, tuple(order), extents, diamond is not None, jam,
                                   sunk=sunk, parallel_alternative=alternative_name, for_reuse=for_reuse,
                                   parallel_collapse=par is not None and mark.collapse == 2,
                                   one_thread_sizes=one_thread_sizes,
                                   wide_tiles=tuple(zip(spans, sizes)) if spans else ()))
        return (point.child(0) if jam else point), desc is not None  # (below the jam: its band of copies)

    def order_points(self, point, extents, sink_ok: bool):
        """The point band *point* in its order (point_order), with a member moved below the bands inside it
        where that pays (sink.py; not with *sink_ok* False), and the member of most reuse moved where it can be
        jammed (jam_order). Returns the point band, the order of its members (band members, innermost last;
        a sunk one left out), what jam_reuse found for them (None: nothing to jam) and the sunk member."""
        n = point.band_n_member()
        order = self.point_order(point, extents)
        if order != list(range(n)):
            point = permute(point, order)
        sunk = None
        if sink_ok and band_nodes(point.child(0)):
            m = self.sink_member(point)
            if m is not None:  # that point loop runs innermost, below the bands inside (sink.py)
                point = sink(point, m)
                sunk = order[m]
                order = [order[k] for k in range(n) if k != m]
        # (not where the innermost point loop is a short one: the copies belong around the strided loop)
        reuse = None if short_extent(extents, order[-1]) else self.jam_reuse(point, read_only=True)
        jam_order = None if reuse is None else self.jam_order(point, reuse)
        if jam_order is not None:  # the member whose copies share most, moved where it can be jammed
            point = permute(point, jam_order)
            order = [order[k] for k in jam_order]
            reuse = [reuse[k] for k in jam_order[:-1]]
        return point, order, reuse, sunk

    def split_points(self, tile, split: tuple[int, list], sizes: list[int], extents, outer_members: int,
                     par: int):
        """The tile band *tile* marked parallel at member *par*, its members from split[0] inward made a
        sequence of one band per statement (fission.py), each statement's point loops ordered and jammed on
        their own. Returns the lowest node of the last piece, and the point order and (member, factor) of
        the first piece jammed; None where no piece is jammed (the split would bring nothing)."""
        n = tile.band_n_member()
        p, order = split
        node = mark_member(tile, par, self.parallel_mark(outer_members + par, self.schedule_clause(tile, par, True)))
        node = node.band_split(p - par).child(0).insert_sequence(sequence_filters(order))
        seq_depth = node.get_tree_depth()
        first = None
        for i in range(len(order)):
            while node.get_tree_depth() > seq_depth:
                node = node.parent()
            point = node.child(i).child(0).child(0)  # filter, tile members p.., points
            point, porder, reuse, _ = self.order_points(point, extents, sink_ok=False)
            point, jam = self.unroll_jam(point, [sizes[k] for k in porder], reuse)
            point = self.mark_vector(point, point.get_schedule_depth() + n - 1, jammed=jam is not None)
            if jam is not None and first is None:
                first = (porder, jam)
            node = point.child(0) if jam else point
        if first is None:
            return None
        return node, first[0], first[1]

    def extents(self, node) -> tuple[int | None, ...]:
        dom = node.get_domain().intersect_params(self.scop.context)
        mupa = node.band_get_partial_schedule()
        out: list[int | None] = []
        for k in range(node.band_n_member()):
            upa = mupa.get_at(k).intersect_domain(dom)
            lo, hi = upa.min_val(), upa.max_val()
            out.append(hi.sub(lo).to_python() + 1 if lo.is_int() and hi.is_int() else None)
        return tuple(out)


def _tile_values(node, sizes: list[int]):
    """The band's tile sizes as isl wants them (band_tile): one value per member, at least 1."""
    mv = isl.MultiVal.zero(node.band_get_space())
    for k, size in enumerate(sizes):
        mv = mv.set_val(k, isl.Val.int_from_si(CTX, max(1, int(size))))
    return mv


def _longer(extents: tuple[int | None, ...], sizes: list[int]) -> list[int]:
    """The members whose tile loop has more than one iteration (or may have)."""
    return [m for m in range(len(sizes)) if not _single_tile(extents[m], sizes[m])]


def _peeled_inside(extents: tuple[int | None, ...]) -> bool:
    """Whether every member after the first has a known trip count that gcc peels completely (PEELED_LOOP)."""
    return len(extents) >= 2 and all(e is not None and e <= PEELED_LOOP for e in extents[1:])


def _single_tile(extent: int | None, size: int) -> bool:
    return extent is not None and extent <= size


def _has_degenerate_member(node) -> bool:
    """Whether some statement of a multi-statement band is constant along some member."""
    stmts = sets_of(node.get_domain())
    if len(stmts) < 2:
        return False
    mupa = node.band_get_partial_schedule()
    for k in range(node.band_n_member()):
        upa = mupa.get_at(k)
        for st in stmts:
            if member_of(upa, st).is_cst():
                return True
    return False


def _constant_outside_varying(node) -> bool:
    """Whether some statement of the band is constant along one member and not along a member inside it."""
    mupa = node.band_get_partial_schedule()
    n = node.band_n_member()
    for st in sets_of(node.get_domain()):
        constant = [member_of(mupa.get_at(k), st).is_cst() for k in range(n)]
        if any(constant[a] and not constant[b] for a in range(n) for b in range(a + 1, n)):
            return True
    return False


def _spans(node) -> tuple:
    """Each member's number of values over the band's instances (isl.PwAff of the parameters)."""
    dom = node.get_domain()
    mupa = node.band_get_partial_schedule()
    out = []
    for k in range(node.band_n_member()):
        found = sets_of(isl.UnionMap.from_union_pw_aff(mupa.get_at(k)).intersect_domain(dom).range().coalesce())
        if len(found) != 1:
            return ()
        s = found[0].coalesce()
        out.append(s.dim_max(0).sub(s.dim_min(0)).add_constant_val(isl.Val.one(CTX)))
    return tuple(out)


def _near_dependences(node, deps: isl.UnionMap) -> bool:
    """Whether the band has dependences between its instances that agree on the loops outside it, and each one's
    distance along every member is at most NEAR."""
    dom = node.get_domain()
    prefix = loop_iterations(node, dom, 0)
    inside = deps.intersect_domain(dom).intersect_range(dom).intersect(prefix.apply_range(prefix.reverse()))
    if inside.is_empty():
        return False
    f = isl.UnionMap.from_multi_union_pw_aff(node.band_get_partial_schedule()).intersect_domain(dom)
    n = node.band_n_member()
    dims = ", ".join(f"d{k}" for k in range(n))
    bounds = " and ".join(f"-{NEAR} <= d{k} <= {NEAR}" for k in range(n))
    near = isl.Set(f"{{ [{dims}] : {bounds} }}", context=CTX)
    return all(d.is_subset(near.align_params(d.get_space()))
               for d in sets_of(inside.apply_domain(f).apply_range(f).deltas()))


def _wavefront(node, a: int = 0, b: int = 1):
    """Replace member *a* of a permutable band by the sum of members *a* and *b* (a < b): (t0, t1, ...) by
    (t0 + t1, t1, ...) by default. Member b is then parallel among the tiles of one wavefront."""
    mupa = node.band_get_partial_schedule()
    mupa = mupa.set_at(a, mupa.get_at(a).add(mupa.get_at(b)))
    node = node.delete()
    node = node.insert_partial_schedule(mupa)
    return node.band_set_permutable(1)
