"""Scalar expansion: a scalar whose values live within one iteration of its enclosing loops becomes an
array indexed by those loops, so that its anti and output dependences stop tying the iterations together.

`s = 0; for k: s += a[i][k] * b[k][j]; c[i][j] = s` reuses one memory cell for every (i, j): the anti and
output dependences through `s` keep the (i, j, k) band from being permutable, so the nest was not tiled,
and the k loop could not move outward. With `s` replaced by `s_x[i][j]` only the flow dependences remain.
OpenMP `private`/`lastprivate` (poly/parallel.py) already make such a loop parallel without changing the
schedule; expansion is what lets the scheduler reorder and tile, and it is applied only where that
shows (`expand`):

- a *web* of scalar s is a set of statements joined by s's value-based flow dependences; each web is
  expanded on its own (ludcmp's `w` has four), indexed by the loops all its statements share (their
  common prefix in the original 2d+1 schedule), and only when no read of the web takes its value from
  before the region;
- the array is allocated on the heap by the region (emit/c.py: a stack VLA of LARGE ludcmp's 2000 x 2000
  doubles is 32 MB, beyond the usual 8 MB stack), over the bounding box of the indices. Its size must be
  a constant under the context of at most `expansion_limit()` elements, or, where it depends on
  parameters, the web must already access some array at an element per index (c[i][j] for s_x[i][j]):
  the copy is then no larger than data the program already holds. Otherwise the web is not expanded;
- after the region, the element that the last write of s (in the original order) wrote is copied back
  into s, unless s is declared inside the region: code after the region reads what the original left
  there. The expanded region's output dependences leave that element holding that write's value. (As
  a statement of the region, the copy joined the scheduler's problem and skewed the matmul band.);
- legality: the expanded region's value-based flow dependences must be the original's, pair for pair
  (every read sees the same write instance), and the scheduler then respects all of the expanded
  region's dependences;
- choice: the expanded region is scheduled, tiled and marked like the original (make_schedule, Pluto's
  defaults); it is kept only when its hot statements become contractions printed as packed blocks
  (contraction.py), or get more parallel loops, more tiled dimensions (tiled for reuse, poly/reuse.py), fewer
  strided accesses along their innermost loops, or outer parallel loops (`_profile`), losing none of them;
  then each web (and each outer index dimension of a web) that can be left out without losing that is left
  out, the cheapest form first.
- arrays too (`array_webs`): doitgen's `sum[p]`, rewritten in every (r, q) and read only there, becomes
  `sum_x[r][q][p]`, its own subscripts after the loops that none of them moves; the statement
  `sum_x[r][q][p] += A[r][q][s] * C4[s][p]` is then a contraction with r as its batch loop (1.8x over the
  private `sum` at LARGE). After the region, each element of the array whose last write is expanded gets
  its final value back.
"""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass, replace

import islpy as isl
from pycparser import c_ast

from .contraction import Blocks, Contraction, accumulation, extents, isolate, recognize, worth_blocking
from .cost import Cost, schedule_cost
from .deps import Dependences, compute_dependences, flow_webs
from .islutil import CTX, bounded, isl_name, sets_of
from .legality import IllegalSchedule
from .original import original_schedule
from .privatize import array_flows, array_space
from .schedule import TiledSchedule, compute_base_schedule, make_schedule
from .scop import Access, Array, Scop, ScratchArray, Statement, common_loops

EXPANSION_LIMIT = 1 << 24  # elements of one expanded scalar whose size is a constant (128 MB of doubles)
EXPANSION_OPERATIONS = 5_000_000  # isl quota of building and checking one expanded region
SCRATCH_K = 48  # a product into an expanded scratch beyond L2 needs this many k steps (pays_for_scratch)
MAX_WEBS = 12  # more candidate webs than this: all of them or none (each trial reschedules the region)


def expansion_limit() -> int:
    """EXPANSION_LIMIT, or the environment's POLYTUNE_EXPANSION_LIMIT (tests of the fallback; 0 turns
    expansion off, parametric sizes included)."""
    return int(os.environ.get("POLYTUNE_EXPANSION_LIMIT", EXPANSION_LIMIT))


@dataclass(frozen=True)
class Web:
    """Statements joined by the flow dependences of one scalar (or array), and how many loops they all
    share. An array's web is indexed by the loops of the prefix that none of its subscripts there moves
    (*used*: those that do), before the array's own subscripts."""

    scalar: str
    statements: tuple[str, ...]
    depth: int  # loops of the common prefix (the index of the expanded array: depth - skip of them)
    skip: int = 0  # outer loops of the prefix left out of the index
    ndim: int = 0  # an array's dimensions (0: a scalar)
    used: frozenset[int] = frozenset()  # loops of the prefix the array's subscripts move (not in the index)

    @property
    def index(self) -> tuple[int, ...]:
        """The positions of the loops that index the expansion."""
        return tuple(k for k in range(self.skip, self.depth) if k not in self.used)


@dataclass(frozen=True, eq=False)
class Expansion:
    """An expanded region: its model, dependences and base schedule, and the webs expanded."""

    scop: Scop
    deps: Dependences
    base: isl.Schedule
    webs: tuple[Web, ...]


def webs(scop: Scop, deps: Dependences) -> list[Web]:
    """The expandable webs of the scalars *scop* writes: inside at least one common loop, every read's
    value written in the region."""
    if not deps.complete or deps.fallback:
        return []
    out = []
    for s, flow in (deps.scalars.flow.items() if deps.scalars is not None else ()):
        if s in deps.scalars.may_writes and not deps.scalars.may_writes[s].is_empty():
            continue  # written under a data-dependent condition: the copy back could take a stale element
        exposed = {x.get_tuple_name() for x in sets_of(deps.scalars.exposed[s])}
        for group in flow_webs(scop, s, flow):
            if any(st.name in exposed for st in group):
                continue
            depth = common_loops(group)
            if depth > 0:
                out.append(Web(s, tuple(st.name for st in group), depth))
    return out


def array_webs(scop: Scop, deps: Dependences) -> list[Web]:
    """The expandable webs of the arrays *scop* writes (doitgen's `sum[p]`, rewritten in every (r, q)):
    every read's value written in the region, no write under a data-dependent condition, each access a
    plain subscript of the array's own dimensions (not delinearized), and at least one common loop that
    no subscript of the web moves (an array already indexed by its loops, atax's `tmp[i]`, gains nothing)."""
    flows = array_flows(scop, deps) if deps.complete and not deps.fallback else None
    if flows is None:
        return []
    stmts = {st.name: st for st in scop.statements}
    out = []
    for name, info in flows.arrays.items():
        if info.flat or not info.writes.is_equal(info.must):
            continue
        exposed = {x.get_tuple_name() for x in sets_of(info.exposed)}
        for group in flow_webs(scop, name, info.flow):
            if any(st.name in exposed for st in group):
                continue
            depth = common_loops(group)
            accesses = [a for st in group for a in st.accesses if a.array == name]
            if depth == 0 or any(a.relation.dim(isl.dim_type.out) != info.ndim for a in accesses):
                continue
            used = frozenset(k for a in accesses for k in range(depth)
                             if a.relation.involves_dims(isl.dim_type.in_, k, 1))
            if any(sum(a.is_write for a in st.accesses if a.array == name) > 1 for st in group):
                continue  # (the copy back takes each element's last writer instance by its one write)
            web = Web(name, tuple(st.name for st in group), depth, ndim=info.ndim, used=used)
            if web.index and all(stmts[n].body is not None for n in web.statements) and \
                    any(_accumulates(stmts[n], name) for n in web.statements):
                out.append(web)
    return out


def _accumulates(st: Statement, name: str) -> bool:
    """Whether the statement sums into an element of array *name* (`W += E` and its forms: contraction.py),
    the statement that expanding an array is for (a time loop's scratch rows, unseen/blur.c's `tmp`, are
    not)."""
    acc = accumulation(st.body)
    if acc is None:
        return False
    base = acc[0]
    while isinstance(base, c_ast.ArrayRef):
        base = base.name
    return isinstance(base, c_ast.ID) and base.name == name


def _index_map(st: Statement, name: str, web: Web, within: bool = True) -> isl.Map:
    """``S[x0, ..., xn] -> name[x_skip, ..., x_depth-1]`` (the loops of ``web.index``), on the statement's
    domain (*within*) or on every point."""
    xs = [f"x{k}" for k in range(len(st.iterators))]
    text = f"{{ {st.name}[{', '.join(xs)}] -> {isl_name(name)}[{', '.join(xs[k] for k in web.index)}] }}"
    out = isl.Map(text, context=CTX).align_params(st.domain.get_space())
    return out.intersect_domain(st.domain) if within else out


def _array_access(index: isl.Map, access: isl.Map, name: str) -> isl.Map:
    """``S[x] -> name[index(x), e]`` of an access ``S[x] -> X[e]`` (its domain *index*'s and the access's)."""
    out = index.range_product(access).flatten_range().set_tuple_name(isl.dim_type.out, isl_name(name))
    for d in range(out.dim(isl.dim_type.in_)):  # (the iterators' names: contraction.py reads them)
        if access.has_dim_name(isl.dim_type.in_, d):
            out = out.set_dim_name(isl.dim_type.in_, d, access.get_dim_name(isl.dim_type.in_, d))
    return out


def _replaced(node: c_ast.Node, replace_node) -> c_ast.Node:
    """A copy of a statement body with each node for which ``replace_node(node)`` gives a node replaced by
    it (struct fields stay). Copied node by node, like the printer's clone: deepcopy takes several Python
    frames per level."""
    new = replace_node(node)
    if new is not None:
        return new
    out = copy.copy(node)
    for slot in getattr(out, "__slots__", ()):
        if isinstance(getattr(out, slot, None), list):
            setattr(out, slot, list(getattr(out, slot)))
    for name, child in node.children():
        if isinstance(node, c_ast.StructRef) and name == "field":
            continue
        child = _replaced(child, replace_node)
        if "[" in name:
            field, k = name[:-1].split("[")
            getattr(out, field)[int(k)] = child
        else:
            setattr(out, name, child)
    return out


def _rewritten(node: c_ast.Node, scalar: str, element) -> c_ast.Node:
    """A copy of a statement body with every identifier *scalar* replaced by ``element()``."""
    return _replaced(node, lambda n: element() if isinstance(n, c_ast.ID) and n.name == scalar else None)


def _element(name: str, subs: list, lower: tuple) -> c_ast.Node:
    """``name[i - lower0][j - lower1]`` of subscripts *subs* (iterator names or expressions; a lower bound
    that is not a constant is the variable name_lbK)."""
    out: c_ast.Node = c_ast.ID(name)
    for k, it in enumerate(subs):
        lo = lower[k]
        x = c_ast.ID(it) if isinstance(it, str) else it
        if isinstance(lo, int) and lo == 0:
            sub: c_ast.Node = x
        elif isinstance(lo, int):
            sub = c_ast.BinaryOp("-" if lo > 0 else "+", x, c_ast.Constant("int", str(abs(lo))))
        else:
            sub = c_ast.BinaryOp("-", x, c_ast.ID(f"{name}_lb{k}"))
        out = c_ast.ArrayRef(out, sub)
    return out


def _rewrite_body(body: c_ast.Node, scalar: str, name: str, iters: tuple[str, ...], lower: tuple) -> c_ast.Node:
    return _rewritten(body, scalar, lambda: _element(name, list(iters), lower))


class _NotPlain(Exception):
    """An array used other than by a full subscript of its dimensions (its address, a pointer)."""


def _rewritten_array(node: c_ast.Node, array: str, ndim: int, iters: tuple[str, ...], name: str,
                     lower: tuple) -> c_ast.Node:
    """A copy of a statement body with each ``array[e0]...[e_ndim-1]`` replaced by
    ``name[iters...][e0]...`` (shifted by *lower*); _NotPlain where the array appears otherwise."""
    def element(n: c_ast.Node) -> c_ast.Node | None:
        if isinstance(n, c_ast.ID) and n.name == array:
            raise _NotPlain(array)
        if not isinstance(n, c_ast.ArrayRef):
            return None
        subs, base = [], n
        while isinstance(base, c_ast.ArrayRef):
            subs.append(base.subscript)
            base = base.name
        if not (isinstance(base, c_ast.ID) and base.name == array):
            return None
        if len(subs) != ndim:
            raise _NotPlain(array)
        return _element(name, list(iters) + [_replaced(x, element) for x in reversed(subs)], lower)

    return _replaced(node, element)


def _fresh(base: str, taken: set[str]) -> str:
    k = 0
    while f"{base}_x{k}" in taken or any(n.startswith(f"{base}_x{k}_") for n in taken):
        k += 1
    return f"{base}_x{k}"


def _box(elements: isl.Set, context: isl.Set) -> tuple[tuple, tuple, int | None] | None:
    """Per dimension of the expanded array: lower bound and extent (PwAffs of the parameters, a lower
    bound an int where constant), and the number of elements where it is a constant."""
    ctx = context.align_params(elements.get_space())
    fixed = elements.intersect_params(ctx)
    lower, extent, count = [], [], 1
    one = isl.PwAff("{ [(1)] }", context=CTX)
    for d in range(elements.dim(isl.dim_type.set)):
        lo_v, hi_v = fixed.dim_min_val(d), fixed.dim_max_val(d)
        if lo_v.is_int() and hi_v.is_int():
            lo, n = lo_v.to_python(), hi_v.to_python() - lo_v.to_python() + 1
            lower.append(lo)
            extent.append(one.add_constant_val(isl.Val.int_from_si(CTX, n - 1)).align_params(ctx.get_space()))
            count = count * n if count is not None else None
            continue
        lo_pa, hi_pa = elements.dim_min(d), elements.dim_max(d)
        if lo_pa.is_empty() or hi_pa.is_empty():
            return None
        # outside the parameters where the set is empty: lower bound 0, extent 1
        zero = one.add_constant_val(isl.Val.int_from_si(CTX, -1)).align_params(lo_pa.get_space())
        lo_total = lo_pa.union_add(zero.intersect_domain(lo_pa.domain().complement()))
        n_pa = hi_pa.sub(lo_pa).add_constant_val(isl.Val.one(CTX)).union_max(one.align_params(hi_pa.get_space()))
        lower.append(_constant(lo_total.gist_params(ctx)) if _constant(lo_total.gist_params(ctx)) is not None
                     else lo_total.coalesce())
        extent.append(n_pa.coalesce())
        count = None
    return tuple(lower), tuple(extent), count


def _constant(pa: isl.PwAff) -> int | None:
    """The value of a function of the parameters that is the same constant on every piece (else None)."""
    values = {aff.get_constant_val().to_python() if aff.is_cst() else None for _, aff in pa.get_pieces()}
    return values.pop() if len(values) == 1 and None not in values else None


def _bounded_by_an_array(web_stmts: list[Statement], maps: dict, scalar: str, elements: isl.Set) -> bool:
    """Whether some access of the web reaches a different element of another array for every index of the
    expansion (where it runs at all): the expansion is then no larger than that array's part in use."""
    for st in web_stmts:
        for to_index in maps[st.name]:
            for a in st.accesses:
                if a.array == scalar or a.relation.dim(isl.dim_type.out) == 0:
                    continue
                rel = to_index.reverse().apply_range(a.relation.intersect_domain(st.domain))  # index -> element
                # (for the parameters where the access runs: deriche's `ym1 = 0` for every i, the access in
                # a j loop that may run no iteration)
                used = rel.domain()
                if elements.intersect_params(used.params()).is_subset(used) and rel.reverse().is_single_valued():
                    return True
    return False


def expand_webs(scop: Scop, chosen: list[Web], avoid: frozenset[str] = frozenset()) -> Scop | None:
    """*scop* with the scalars of *chosen* webs expanded (the statements rewritten; the element to copy
    back to the scalar after the region, unless it is declared inside it); None where a web's size is not
    bounded."""
    taken = set(scop.names_in_use) | set(avoid)
    stmts = {st.name: st for st in scop.statements}
    scratch = []
    for web in chosen:
        name = _fresh(web.scalar, taken)
        taken.add(name)
        group = [stmts[n] for n in web.statements]
        # per statement, each access of what is expanded -> its element of the expansion (a scalar's: one)
        if web.ndim:
            rels = {st.name: [_array_access(_index_map(st, name, web, within=False), a.relation, name)
                              for a in st.accesses if a.array == web.scalar] for st in group}
            maps = {n: [m.intersect_domain(stmts[n].domain) for m in ms] for n, ms in rels.items()}
        else:
            maps = {st.name: [_index_map(st, name, web)] for st in group}
        elements = None
        for ms in maps.values():
            for m in ms:
                elements = m.range() if elements is None else elements.union(m.range())
        elements = elements.coalesce()
        box = _box(elements, scop.context)
        if box is None:
            return None
        lower, extent, count = box
        if count is None and not _bounded_by_an_array(group, maps, web.scalar, elements):
            return None
        if count is not None and count > expansion_limit():
            return None
        for st in group:
            iters = tuple(st.iterators[k] for k in web.index)
            if web.ndim:
                new = iter(rels[st.name])
                accs = tuple(replace(a, array=name, relation=next(new)) if a.array == web.scalar else a
                             for a in st.accesses)
                try:
                    body = _rewritten_array(st.body, web.scalar, web.ndim, iters, name, lower)
                except _NotPlain:
                    return None
            else:
                accs = tuple(Access(name, maps[st.name][0], a.is_write) if a.array == web.scalar else a
                             for a in st.accesses)
                body = _rewrite_body(st.body, web.scalar, name, iters, lower)
            stmts[st.name] = replace(st, accesses=accs, body=body)
        if web.scalar in scop.local_names:
            last = None
        elif web.ndim:
            last = _last_elements(scop, web, group, maps)
        else:
            last = _last_element(scop, web, group, maps)
        scratch.append(ScratchArray(name, web.scalar, lower, extent, last, web.ndim))
        taken |= {f"{name}_lb{k}" for k in range(len(lower))}
    statements = tuple(stmts.values())
    used = {a.array for st in statements for a in st.accesses}
    arrays = tuple(a for a in scop.arrays if a.name in used)
    arrays += tuple(Array(s.name, len(s.lower), True) for s in scratch)
    return replace(scop, statements=statements, arrays=arrays, names_in_use=frozenset(taken),
                   scratch=scop.scratch + tuple(scratch))


def _last_elements(scop: Scop, web: Web, group: list[Statement], maps: dict) -> isl.Set:
    """The elements of an array's expansion that hold the array's final values: for each element of the
    array whose last write (in the original order) is one of *web*'s, the element that write wrote."""
    writes = scop.writes.intersect_range(array_space(scop, web.scalar))  # instance -> element of the array
    last_time = writes.reverse().apply_range(scop.schedule).lexmax()  # element -> its last write's time
    lasts = last_time.apply_range(scop.schedule.reverse()).range()  # the instances writing last
    out = None
    for st in group:
        for a, m in zip((a for a in st.accesses if a.array == web.scalar), maps[st.name]):
            if not a.is_write:
                continue
            for x in sets_of(isl.UnionMap(m).intersect_domain(lasts).range()):
                out = x if out is None else out.union(x)
    if out is None:
        return isl.Set.empty(maps[group[0].name][0].get_space().range())
    return out.coalesce()


def _last_element(scop: Scop, web: Web, group: list[Statement], maps: dict) -> isl.Set:
    """The element of the expansion that the last write of the scalar (in the original order) wrote,
    where that write belongs to *web*; empty for the parameters where another write is the last."""
    one = isl.UnionSet(isl.Set(f"{{ {isl_name(web.scalar)}[] }}", context=CTX))
    writes = scop.writes.intersect_range(one.align_params(scop.writes.get_space())).domain()
    points = sets_of(scop.schedule.intersect_domain(writes).range())
    last = points[0]
    for p in points[1:]:
        last = last.union(p)
    last = last.lexmax()
    ours = isl.UnionSet.empty(writes.get_space())
    for st in group:
        ours = ours.union(isl.UnionSet(st.domain))
    lasts = scop.schedule.intersect_domain(writes.intersect(ours)).intersect_range(isl.UnionSet(last)).domain()
    out = isl.Set.empty(maps[group[0].name][0].get_space().range())
    for (m,) in maps.values():
        for x in sets_of(isl.UnionMap(m).intersect_domain(lasts).range()):
            out = out.union(x)
    return out.coalesce()


def _same_flow(scop: Scop, deps: Dependences, new: Scop, new_deps: Dependences) -> bool:
    """Whether every read of the expanded region takes its value from the same write instance as before."""
    if not new_deps.complete or new_deps.fallback:
        return False
    return new_deps.flow.is_equal(deps.flow)


@dataclass(frozen=True)
class Profile:
    """How good a schedule is for the hot statements: per statement, its parallel loop's class (2: an
    ordinary parallel loop, 1: a tile wavefront's, 0: none), then totals of those classes, of the tiled
    band members, of minus the strided accesses along innermost loops (poly/cost.py's bad accesses), and of
    minus the parallel loops' depths."""

    classes: tuple[int, ...]
    totals: tuple[int, int, int, int]
    contractions: int = 0  # hot statements printed as packed blocks (contraction.py: doitgen's, expanded)

    def at_least(self, other: Profile) -> bool:
        """More contractions, or as many and no statement's parallel loop gets worse, no tiled member is lost
        and no access walks down a column that did not: no trade of one for another. (With the totals
        compared in order, deriche's expanded nests, fused by isl into tile wavefronts, beat their original
        outer parallel loops: 0.1x; and leaving out one of ludcmp's LU webs traded 4 tiled members for one
        parallel loop.) A contraction's packed code is blocked and parallel by itself."""
        if self.contractions != other.contractions:
            return self.contractions > other.contractions
        return (all(a >= b for a, b in zip(self.classes, other.classes)) and self.totals[1] >= other.totals[1]
                and self.totals[2] >= other.totals[2])

    def beats(self, other: Profile) -> bool:
        return self.at_least(other) and (self.contractions > other.contractions or self.totals > other.totals)


def _profile(scop: Scop, deps: Dependences, base: isl.Schedule, ts: TiledSchedule, hot: list[str]) -> Profile:
    """(deriche's column passes: the scalars expanded along the columns let the row loop run outside, unit
    stride inside; unexpanded, each thread walked its column down the rows, 0.4x of the expanded code.)"""
    classes, tiled, depth = [], 0, 0
    for s in hot:
        bands = [b for b in ts.bands if s in b.statements]
        tiled += sum(b.members for b in bands if b.tiled and b.for_reuse)  # (not tiles for the printer)
        marked = [b for b in bands if b.parallel_loop]
        classes.append(0 if not marked else 1 if marked[0].wavefront else 2)
        if marked:
            kind, k = marked[0].parallel_loop.split()
            depth += marked[0].depth + int(k) + (marked[0].members if kind == "point" else 0)
    # (statements of full dimension only: hotspot's edges, `r == 0` or `c == col - 1`, are lines of the grid
    # whose innermost loop may walk a column at no cost)
    full = frozenset(st.name for st in scop.statements if st.name in hot and _full_dimensional(st.domain))
    strided = schedule_cost(scop, deps, ts, reductions=False, only=full).bad_accesses
    blocked = 0
    if any(recognize(scop, st, deps) for st in scop.statements if st.name in hot):
        # (those the isolation finds legal: householder's `w[k][j]`, expanded, is a contraction whose
        # row loop k also runs the update of its operand A)
        blocked = sum(c.statement in hot and pays_for_scratch(scop, c)
                      for c in isolate(base, scop, deps, Blocks(), worth_blocking)[1])
    return Profile(tuple(classes), (sum(classes), tiled, -strided, -depth), blocked)


def pays_for_scratch(scop: Scop, c: Contraction, l2: int | None = None) -> bool:
    """Whether a product summed into an expanded scratch array repays streaming it: the scratch is cleared,
    summed into and read back from memory (about 32 bytes of traffic per element), where the original's
    scalar or row stayed in L1, against 2 k flops of product per element. Below SCRATCH_K steps of k, a
    scratch larger than L2 costs more than the packed product gains (small_rows: 400,000 rows of 24 by a
    24 x 24 matrix, its 24-wide accumulator row expanded by the rows: 0.50x of gcc's build of the original at
    1 thread, 0.88x at 2 on dev box B; the original's order with the row loop parallel: 1.0x and 1.4-1.8x).
    A product into one of the program's own arrays, or with unknown sizes, pays."""
    st = scop.statement(c.statement)
    scratch = {s.name: s for s in scop.scratch}.get(st.writes[0].array)
    k = extents(scop, st, c)["k"]
    if scratch is None or k is None or k >= SCRATCH_K:
        return True
    cells = 1
    for e in scratch.extent:
        n = e if isinstance(e, int) else _constant(e.gist_params(scop.context.align_params(e.get_space())))
        if n is None:
            return False  # (sized by the parameters: as large as the data)
        cells *= n
    if l2 is None:
        from ..machine import cache_sizes  # (the machine the code is built for: -march=native)
        l2 = cache_sizes()[2]
    return 8 * cells <= l2


def _full_dimensional(domain: isl.Set) -> bool:
    """Whether no equality of the domain's affine hull involves its iterators (`c = col - 1` does)."""
    n = domain.dim(isl.dim_type.set)
    return not any(c.is_equality() and any(not c.get_coefficient_val(isl.dim_type.set, k).is_zero()
                                           for k in range(n))
                   for c in domain.affine_hull().get_constraints())


def _schedule(scop: Scop, deps: Dependences, base: isl.Schedule | None = None) -> tuple[isl.Schedule, TiledSchedule]:
    base = base if base is not None else compute_base_schedule(scop, deps)
    return base, make_schedule(scop, deps, base=base, unroll=0, reuse=True)


def expand(scop: Scop, deps: Dependences, base: isl.Schedule,
           avoid: frozenset[str] = frozenset()) -> Expansion | None:
    """The expanded region, when expanding scalars gives its hot statements a better schedule (module
    docstring); None otherwise. All webs first; if that is better than none, each nest's webs, then each
    web (up to MAX_WEBS), then each outer index loop is left out where the profile stays as good; if not,
    each nest's webs are tried on their own and kept where they improve it (expanding all of deriche's
    let isl fuse its row and column nests into tile wavefronts). Then the arrays' webs, all together, kept
    only where they make more contractions (an array expanded for tiles alone cost householder 6% at 2
    threads and a 24-wide row buffer a scratch array the size of the output); each is left out again
    where the others make as many."""
    limit = expansion_limit() > 0
    candidates = webs(scop, deps) if limit else []
    arrays = array_webs(scop, deps) if limit else []
    if not candidates and not arrays:
        return None
    hot_depth = max(len(st.iterators) for st in scop.statements)
    hot = [st.name for st in scop.statements if len(st.iterators) == hot_depth]
    try:
        unexpanded = _schedule(scop, deps, base)[1]
        best: tuple[Profile, Expansion | None] = (_profile(scop, deps, base, unexpanded, hot), None)
        webs_chosen: list[Web] = []
        picked = _scalars(scop, deps, candidates, best, avoid, hot) if candidates else None
        if picked is not None:
            best, webs_chosen = picked
        if arrays:
            trial = _attempt(scop, deps, webs_chosen + arrays, avoid, hot)
            if trial is not None and trial[1] is not None and trial[0].contractions > best[0].contractions:
                best, webs_chosen = trial, webs_chosen + arrays
                for web in arrays if len(arrays) > 1 else ():
                    fewer = [w for w in webs_chosen if w is not web]
                    trial = _attempt(scop, deps, fewer, avoid, hot)
                    if trial is not None and trial[1] is not None and trial[0].at_least(best[0]):
                        best, webs_chosen = trial, fewer
        ex = best[1]
        if ex is not None:
            written = _written_cost(scop, deps, unexpanded)
            if written is not None and not schedule_cost(ex.scop, ex.deps, _schedule(ex.scop, ex.deps, ex.base)[1]) \
                    < written:
                # the program's own loops, unexpanded, rank first and the expansion is no better by the
                # model: no expansion (hotspot's rows, parallel with `delta` private, against isl's shifted
                # edges that left no loop parallel; the columns-only expansion beat isl's schedule and ran
                # at 0.5x of the original, its band turned to column tiles down the rows)
                return None
        return ex
    except isl.Error:
        return None


def _written_cost(scop: Scop, deps: Dependences, unexpanded: TiledSchedule) -> Cost | None:
    """The cost of the region's own loops (poly/original.py) where the model ranks them before isl's
    schedule of the unexpanded region, *unexpanded* (None otherwise)."""
    if not deps.complete:
        return None
    try:
        written = schedule_cost(scop, deps, make_schedule(scop, deps, base=original_schedule(scop, deps), unroll=0,
                                                          reuse=True))
    except (IllegalSchedule, isl.Error):
        return None
    return written if written < schedule_cost(scop, deps, unexpanded) else None


def _scalars(scop: Scop, deps: Dependences, candidates: list[Web], original: tuple, avoid: frozenset[str],
             hot: list[str]) -> tuple[tuple, list[Web]] | None:
    """The scalars' webs to expand (expand's docstring) with their (profile, expansion); None: none."""
    statements = {st.name: st for st in scop.statements}
    nests: dict[int | None, list[Web]] = {}
    for w in candidates:
        nests.setdefault(statements[w.statements[0]].beta(0), []).append(w)
    best = original
    chosen: list[Web] = []
    every = _attempt(scop, deps, candidates, avoid, hot)
    if every is not None and every[0].beats(best[0]):
        best, chosen = every, list(candidates)
        steps = [[w for w in ws] for ws in nests.values()] if len(nests) > 1 else []
        steps += [[w] for w in candidates] if len(candidates) <= MAX_WEBS else []
        for leave in steps:
            if not all(w in chosen for w in leave):
                continue
            trial = _attempt(scop, deps, [w for w in chosen if w not in leave], avoid, hot)
            if trial is not None and trial[1] is not None and trial[0].at_least(best[0]):
                best, chosen = trial, [w for w in chosen if w not in leave]
    elif len(nests) > 1:
        for ws in nests.values():
            trial = _attempt(scop, deps, chosen + ws, avoid, hot)
            if trial is not None and trial[0].beats(best[0]):
                best, chosen = trial, chosen + ws
    if not chosen:
        return None
    if len(chosen) <= MAX_WEBS:
        for web in list(chosen):  # outer loops of the index that can be left out
            for skip in range(1, web.depth):
                k = chosen.index(web)
                fewer = chosen[:k] + [replace(web, skip=skip)] + chosen[k + 1:]
                trial = _attempt(scop, deps, fewer, avoid, hot)
                if trial is None or not trial[0].at_least(best[0]):
                    break
                chosen, best, web = fewer, trial, fewer[k]
    return best, chosen


def _attempt(scop: Scop, deps: Dependences, chosen: list[Web], avoid: frozenset[str],
             hot: list[str]) -> tuple[Profile, Expansion | None] | None:
    """The profile of the region with *chosen* webs expanded and that expansion (None: not legal or
    bounded). No web: the original region's profile."""
    if not chosen:
        return _profile(scop, deps, *_schedule(scop, deps), hot), None
    new = bounded(lambda: expand_webs(scop, chosen, avoid), EXPANSION_OPERATIONS)
    if new is None:
        return None
    new_deps = compute_dependences(new)
    if not bounded(lambda: _same_flow(scop, deps, new, new_deps), EXPANSION_OPERATIONS):
        return None
    try:
        base, ts = _schedule(new, new_deps)
    except IllegalSchedule:  # (the tiler's own check refused its result for the expanded region: not taken)
        return None
    return _profile(new, new_deps, base, ts, hot), Expansion(new, new_deps, base, tuple(chosen))
