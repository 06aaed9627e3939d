"""Index-set splitting of the statements whose subscripts choose (a clamp to the edge: `x + k < 0 ? 0 : x + k`,
`min(i + 1, n - 1)`): the schedule's loops are split where every choice is the same for a whole loop below, and
there the statement is a copy of its own whose body has the choices made.

An image filter clamps each tap's coordinate into the image; written as it is, every iteration of the vector
loop evaluates the clamps (and gathers through them), though only the few columns at the image's edges need
them. Given the final schedule, for each statement with choices (`Statement.choices`, the instances where each
takes its first operand), the outermost band member m is found at which some points of the schedule's prefix
(the loops down to m) see every choice the same over all the instances below them: the *uniform* prefixes. They
are split into cells, one for each combination of the choices; each cell becomes a copy of the statement (named
`S1_0`, `S1_1`, ...) whose body has its choices replaced by the operand taken, and the statement keeps the other
instances (the edges) with its body as it is. The band gets isl's `separate` option, so that the AST builder
generates a loop of its own for each cell and for the edges between them.

The instances, their schedule and so their order are unchanged (the schedule is pulled back over the renaming):
the split is legal under any schedule. A member is taken only where it and the members before it in its band run
loops as written (one iterator, no tile loop, no skewing: cells over those cost isl's code generation more than
the split gains, a tiled time loop 67 s instead of 6), where the prefixes that are not uniform are few along it
(each piece of them fewer than FEW along m whatever the parameters: the columns at the edges) and the uniform
ones are not: not where the choices are the same only for some parameters' values (`j < 4 ? j : 4` is uniform
along i only where n <= 4), and where each cell is pieces of the loop, not a stride of it."""
from __future__ import annotations

from dataclasses import dataclass, replace

import islpy as isl
from pycparser import c_ast

from .extract import _clone, choice_nodes
from .islutil import CTX, few_along, sets_of
from .marks import ContractionMark, IvdepMark, mark_id, mark_of, marks_of
from .scop import Scop, Statement

MAX_CELLS = 4  # copies of one statement (combinations of its choices): more are left as they are
FEW = 16  # values of a loop that are few: the columns at the edges left as written, where the sizes are constants


@dataclass(frozen=True)
class Split:
    """The region's statements with their copies, the schedule over them and the renaming of the old
    instances to the new (for the dependences: `renamed`)."""

    scop: Scop
    schedule: isl.Schedule
    renaming: isl.UnionMap

    def renamed(self, relation: isl.UnionMap) -> isl.UnionMap:
        """*relation* between instances (dependences) between the instances' new names."""
        return relation.apply_domain(self.renaming).apply_range(self.renaming)


def split_choices(scop: Scop, schedule: isl.Schedule) -> Split | None:
    """*scop* and *schedule* with the statements whose choices a loop of *schedule* can make split (see the
    module); None where there is none."""
    statements: list[Statement] = []
    origin: dict[str, str] = {}  # new statement -> the statement whose instances it has
    split = False
    packed = {m.statement for m in marks_of(schedule) if isinstance(m, ContractionMark)}
    for st in scop.statements:
        where = _split_member(scop, schedule, st) if st.choices and st.name not in packed else None
        if where is None:
            statements.append(st)
            origin[st.name] = st.name
            continue
        path, member, cells = where
        schedule = _with_option(schedule, path, member)
        rest = st.domain
        for k, cell in enumerate(cells):
            statements.append(_copy(st, f"{st.name}_{k}", cell))
            origin[f"{st.name}_{k}"] = st.name
            rest = rest.subtract(cell)
        if not rest.is_empty():
            statements.append(replace(st, domain=rest))
            origin[st.name] = st.name
        split = True
    if not split:
        return None
    renaming = None  # old instance -> new instance
    for st in statements:
        to_new = isl.Map.identity(isl.Space.map_from_set(st.domain.get_space())).intersect_range(st.domain) \
            .set_tuple_name(isl.dim_type.in_, origin[st.name])
        renaming = isl.UnionMap(to_new) if renaming is None else renaming.union(isl.UnionMap(to_new))
    try:
        new = schedule.pullback_union_pw_multi_aff(isl.UnionPwMultiAff.from_union_map(renaming.reverse()))
        new = new.intersect_domain(renaming.range())
    except isl.Error:
        return None
    names: dict[str, list[str]] = {}
    for name, old in origin.items():
        names.setdefault(old, []).append(name)
    return Split(replace(scop, statements=tuple(statements)), _with_orders(new, names), renaming)


def _with_orders(schedule: isl.Schedule, names: dict[str, list[str]]) -> isl.Schedule:
    """*schedule* with each ivdep mark's statement pairs (the order its loop's carried dependences need) over
    the statements' new names (*names*: old name -> new ones)."""
    def visit(node):
        mark = mark_of(node)
        if isinstance(mark, IvdepMark) and mark.order:
            order = tuple((x, y) for a, b in mark.order for x in names.get(a, [a]) for y in names.get(b, [b]))
            node = node.delete().insert_mark(mark_id(replace(mark, order=order)))
        for i in range(node.n_children()):
            node = visit(node.child(i)).parent()
        return node
    return visit(schedule.get_root()).get_schedule()


def _copy(st: Statement, name: str, cell: isl.Set) -> Statement:
    """Statement *st* on its instances *cell*, named *name*, its choices made."""
    body = _made(st.body, [None if c is None else _taken(c, cell) for c in st.choices])
    return replace(st, name=name, domain=cell.set_tuple_name(name),
                   schedule=st.schedule.set_tuple_name(isl.dim_type.in_, name),
                   accesses=tuple(replace(a, relation=a.relation.set_tuple_name(isl.dim_type.in_, name))
                                  for a in st.accesses),
                   body=body, choices=tuple(None if c is None else c.intersect(cell).set_tuple_name(name)
                                            for c in st.choices))


def _taken(first: isl.Set, cell: isl.Set) -> int | None:
    """0 where every instance of *cell* takes a choice's first operand (*first*: where it does), 1 where none
    does, None where both happen."""
    if cell.is_subset(first):
        return 0
    if cell.intersect(first).is_empty():
        return 1
    return None


def _made(body: c_ast.Node, taken: list) -> c_ast.Node:
    """A copy of *body* with each choice (choice_nodes' order) replaced by the operand *taken* says (0 or 1),
    or kept (None)."""
    body = _clone(body)
    nodes = choice_nodes(body)
    picked = {id(n): t for n, t in zip(nodes, taken) if t is not None}

    def pick(n: c_ast.Node) -> c_ast.Node:
        while id(n) in picked:
            t = picked[id(n)]
            if isinstance(n, c_ast.TernaryOp):
                n = n.iftrue if t == 0 else n.iffalse
            else:
                n = n.args.exprs[t]
        return n

    def visit(n: c_ast.Node) -> None:
        for attr in getattr(n, "__slots__", ()):
            v = getattr(n, attr, None)
            if isinstance(v, c_ast.Node):
                new = pick(v)
                if new is not v:
                    setattr(n, attr, new)
                visit(new)
            elif isinstance(v, list):
                for i, x in enumerate(v):
                    if isinstance(x, c_ast.Node):
                        v[i] = pick(x)
                        visit(v[i])

    box = c_ast.Compound([body])
    visit(box)
    return box.block_items[0]


def _split_member(scop: Scop, schedule: isl.Schedule, st: Statement):
    """(path to the band node, member, cells) where *st* is split, or None."""
    context = scop.context.align_params(st.domain.get_space())
    domain = st.domain.intersect_params(context)
    choices = [c.intersect_params(context) for c in st.choices if c is not None]
    for path, node in _bands(schedule.get_root(), ()):
        here = node.get_domain()
        if not any(s.get_tuple_name() == st.name for s in sets_of(here)):
            continue
        prefix = _of(node.get_prefix_schedule_union_map(), st.name)
        partial = _of(node.band_get_partial_schedule_union_map(), st.name)
        if prefix is None or partial is None:
            continue
        n = node.band_n_member()
        for m in range(n):
            if not _plain_member(node, m, st):
                break  # (a tile loop, a skewed one: cells over them cost isl more than the split gains)
            upto = partial.project_out(isl.dim_type.out, m + 1, n - m - 1)
            cells = _cells(prefix.flat_range_product(upto), domain, choices)
            if cells is not None:
                return path, m, cells
    return None


def _plain_member(node, m: int, st: Statement) -> bool:
    """Whether band member *m* runs one of the statement's loops as written: one iterator, step one or minus one, no
    division (not a tile loop, not a skewed one)."""
    upa = node.band_get_partial_schedule().get_at(m)
    pa = upa.extract_pw_aff(isl.Space.map_from_domain_and_range(
        st.domain.get_space(), isl.Space.set_alloc(CTX, 0, 1).align_params(st.domain.get_space())))
    ok = []

    def piece(_set, aff) -> None:
        coefficients = [aff.get_coefficient_val(isl.dim_type.in_, k).to_python()
                        for k in range(aff.dim(isl.dim_type.in_))]
        ok.append(aff.dim(isl.dim_type.div) == 0 and sorted(map(abs, coefficients))[-1:] == [1]
                  and sum(1 for c in coefficients if c) == 1)

    pa.foreach_piece(piece)
    return len(ok) == 1 and ok[0]


def _bands(node, path):
    """(path, node) of every band node below *node*, outermost first."""
    if node.get_type() == isl.schedule_node_type.band:
        yield path, node
    for k in range(node.n_children()):
        yield from _bands(node.child(k), path + (k,))


def _of(umap: isl.UnionMap, name: str) -> isl.Map | None:
    out = []
    umap.foreach_map(lambda m: out.append(m) if m.get_tuple_name(isl.dim_type.in_) == name else None)
    return out[0] if len(out) == 1 else None


def _cells(sched: isl.Map, domain: isl.Set, choices: list) -> list | None:
    """The instances of *domain* split by the prefixes of *sched* (its last dimension: the member) at which
    every choice is the same for all instances, one cell for each combination; None where no prefix is, or
    where the others are not few along the member."""
    sched = sched.intersect_domain(domain)
    points = sched.range()
    uniform = points
    sides = []
    for first in choices:
        yes, no = sched.intersect_domain(first).range(), sched.intersect_domain(domain.subtract(first)).range()
        sides.append((yes.subtract(no), no.subtract(yes)))
        uniform = uniform.intersect(sides[-1][0].union(sides[-1][1]))
    if uniform.is_empty() or few_along(uniform, uniform.dim(isl.dim_type.set) - 1, FEW) \
            or not few_along(points.subtract(uniform), points.dim(isl.dim_type.set) - 1, FEW):
        return None  # (none, a few columns only, or too many columns left as they are)
    cells = [uniform]
    for yes, no in sides:
        cells = [c for x in cells for c in (x.intersect(yes), x.intersect(no)) if not c.is_empty()]
        if len(cells) > MAX_CELLS:
            return None
    if not all(_intervals_along_last(c, points) for c in cells):
        return None  # (`j % 2 == 0 ? j : 0`: two loops of stride 2 would read what one loop reads in order)
    return [sched.intersect_range(c).domain().coalesce() for c in cells]


def _intervals_along_last(cell: isl.Set, points: isl.Set) -> bool:
    """Whether each piece of *cell* holds, for each value of the other dimensions, every point of *points* between
    its least and greatest value of the last dimension: pieces of a loop (the columns at both edges are two), not
    every other iteration."""
    n = cell.dim(isl.dim_type.set)
    after = isl.Map.lex_le(isl.Space.set_alloc(CTX, 0, 1).align_params(cell.get_space()))

    def by_outer(s: isl.Set) -> isl.Map:
        return isl.Map.from_range(s).move_dims(isl.dim_type.in_, 0, isl.dim_type.out, 0, n - 1)

    ok = []

    def check(b: isl.BasicSet) -> None:
        inside = by_outer(isl.Set.from_basic_set(b))
        between = inside.lexmin().apply_range(after).intersect(inside.lexmax().apply_range(after.reverse()))
        ok.append(between.intersect(by_outer(points)).is_subset(inside))

    cell.coalesce().foreach_basic_set(check)
    return all(ok)


def _with_option(schedule: isl.Schedule, path: tuple, member: int) -> isl.Schedule:
    """*schedule* with the band at *path* separating its member *member* (isl's `separate` option)."""
    node = schedule.get_root()
    for k in path:
        node = node.child(k)
    options = node.band_get_ast_build_options().union(isl.UnionSet(f"{{ separate[{member}] }}", context=CTX))
    return node.band_set_ast_build_options(options).get_schedule()
