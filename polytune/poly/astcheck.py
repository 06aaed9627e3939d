"""The AST that isl's builder made from a schedule, read back as sets and checked before it is printed.

isl's AST builder can print code that does not run its schedule: issue 33's tile wavefront over a strided
domain (`i -= 3` from a parameter) ran 111 of 126 instances. The smallest case found:
`{ S[i, j] -> [floor(i/2), floor((i + 2j)/3), i + 2j] : i mod 3 = 0 and 0 <= i <= 6 and 0 <= j <= 2 }`
gives a loop nest that runs 6 of the 9 points (isl takes the third dimension for one value per tile; with
constants in place of parameters the same happens). The schedule itself was legal: `legality.check_legal`
cannot see this. So the AST is read back here as what the printed C computes (`/` and `%` truncate, as C's
do, whatever isl assumed of their signs): per statement call, the counter values that reach it, the instance
it runs, and the time it runs at (block positions, branches and counters, outermost first). The checks: every
instance of the domain runs exactly once and no other; every dependence's source runs before its sink; and
a loop the printer marks `omp parallel for` without privatizing anything carries no dependence.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from ..errors import UnsupportedError
from .islutil import CTX, bounded, maps_of
from .marks import IvdepMark, ParallelMark, SimdMark, mark_of
from .scop import Scop

_T = isl.ast_expr_op_type
CHECK_OPERATIONS = 20_000_000  # isl operation quota of the check; past it the AST counts as not verified


class CodegenMismatch(UnsupportedError):
    """isl's AST does not run the schedule it was built from (an instance lost, run twice, or out of order)."""


class _Reader:
    """The AST as one relation per statement call: instance -> time, over the counters' values."""

    def __init__(self, scop: Scop, ast: isl.AstNode, parallel: bool, prefix: str):
        self.scop = scop
        self.parallel = parallel
        self.prefix = prefix
        self.iterators: list[str] = []
        _iterators(ast, self.iterators)
        params = scop.domain.get_space()
        names = [params.get_dim_name(isl.dim_type.param, k) for k in range(params.dim(isl.dim_type.param))]
        self.space = isl.Space.create_from_names(CTX, set=self.iterators, params=names)
        self.universe = isl.Set.universe(self.space)
        self.alternatives: set[str] = set()  # counters of ParallelMark.alternative loops
        self.collapsed: dict[str, str] = {}  # counter of a ParallelMark.collapse loop -> the loop's inside it
        self.calls: list[tuple[str, isl.Set, isl.PwMultiAff, list[isl.PwAff], int]] = []  # per statement call:
        # its statement, the counter values that reach it, the instance it runs, its time (_Call, unpadded)
        # and its innermost loop (a number per for node; -1: none)
        self.loop_nodes: list[int] = []  # the numbers of the for nodes around the node walked
        self.n_loop_nodes = 0
        self.loops: list[tuple[int, dict[int, int]]] = []  # per parallel loop: its time entry, and the
        # block positions on its path (time entry -> position): the time prefix of the calls inside it

    # ---- expressions, with the C printer's meaning ------------------------------------------------------
    def value(self, e: isl.AstExpr, where: isl.Set) -> isl.PwAff:
        """*e* as a function of the counters, evaluated at the points *where* (a superset of them)."""
        t = e.get_type()
        if t == isl.ast_expr_type.int:
            return self.constant(e.int_get_val().to_python())
        if t == isl.ast_expr_type.id:
            name = e.id_get_id().get_name()
            if name in self.iterators:
                return isl.PwAff.var_on_domain(isl.LocalSpace.from_space(self.space), isl.dim_type.set,
                                               self.iterators.index(name))
            k = self.space.find_dim_by_name(isl.dim_type.param, name)
            if k < 0:
                raise CodegenMismatch(f"the AST reads '{name}', neither a counter nor a parameter")
            return isl.PwAff.var_on_domain(isl.LocalSpace.from_space(self.space), isl.dim_type.param, k)
        op = e.op_get_type()
        args = [e.op_get_arg(i) for i in range(e.op_get_n_arg())]
        if op in (_T.cond, _T.select):
            c = self.condition(args[0], where)
            return c.indicator_function().cond(self.value(args[1], where.intersect(c)),
                                               self.value(args[2], where.subtract(c)))
        if op in _COMPARE or op in (_T.and_, _T.and_then, _T.or_, _T.or_else):
            return self.condition(e, where).indicator_function()
        v = [self.value(x, where) for x in args]
        if op == _T.add:
            return v[0].add(v[1])
        if op == _T.sub:
            return v[0].sub(v[1])
        if op == _T.mul:
            return v[0].mul(v[1])
        if op == _T.minus:
            return v[0].neg()
        if op in (_T.min, _T.max):
            out = v[0]
            for x in v[1:]:
                out = out.min(x) if op == _T.min else out.max(x)
            return out
        if op == _T.fdiv_q:  # the printer's floord macro
            return v[0].div(v[1]).floor()
        if op in (_T.pdiv_q, _T.div, _T.pdiv_r, _T.zdiv_r):
            # printed as C's `/` and `%`, which truncate: where the dividend is never negative (isl's
            # claim for pdiv, checked) they are floor division and modulo, which isl handles far faster
            # (issue 33's wavefront: 80 s with truncation's two pieces per division, 1 s without)
            divisor = e.op_get_arg(1).int_get_val().to_python() if args[1].get_type() == isl.ast_expr_type.int \
                else None
            nonneg = divisor is not None and divisor > 0 and \
                where.intersect(v[0].lt_set(self.constant(0))).is_empty()
            if op in (_T.pdiv_q, _T.div):
                return v[0].div(v[1]).floor() if nonneg else v[0].tdiv_q(v[1])
            return v[0].mod_val(isl.Val(divisor, CTX)) if nonneg else v[0].tdiv_r(v[1])
        raise CodegenMismatch(f"isl AST operator {op} is not read back")

    def condition(self, e: isl.AstExpr, where: isl.Set) -> isl.Set:
        if e.get_type() == isl.ast_expr_type.op:
            op = e.op_get_type()
            args = [e.op_get_arg(i) for i in range(e.op_get_n_arg())]
            if op in (_T.and_, _T.and_then):
                first = self.condition(args[0], where)
                return first.intersect(self.condition(args[1], where.intersect(first)))
            if op in (_T.or_, _T.or_else):
                first = self.condition(args[0], where)
                return first.union(self.condition(args[1], where.subtract(first)))
            if op in _COMPARE:
                return self.compare(op, args[0], args[1], where)
        return self.value(e, where).non_zero_set()

    def compare(self, op, a: isl.AstExpr, b: isl.AstExpr, where: isl.Set) -> isl.Set:
        """`a op b`, a bound by a min or max split into its terms: `c <= min(x, y)` is one conjunction,
        where the comparison of the min's pieces would be a union of two (loop bounds are mostly such)."""
        for side, other, splits in ((b, a, {_T.le: _T.min, _T.lt: _T.min, _T.ge: _T.max, _T.gt: _T.max}),
                                    (a, b, {_T.le: _T.max, _T.lt: _T.max, _T.ge: _T.min, _T.gt: _T.min})):
            if side.get_type() == isl.ast_expr_type.op and side.op_get_type() == splits.get(op):
                out = self.universe
                for k in range(side.op_get_n_arg()):
                    term = side.op_get_arg(k)
                    out = out.intersect(self.compare(op, other, term, where) if side is b
                                        else self.compare(op, term, other, where))
                return out
        x, y = self.value(a, where), self.value(b, where)
        return getattr(x, _COMPARE[op])(y)

    def constant(self, c: int) -> isl.PwAff:
        return isl.PwAff.zero_on_domain(isl.LocalSpace.from_space(self.space)).add_constant_val(isl.Val(c, CTX))

    # ---- the tree ---------------------------------------------------------------------------------------
    def walk(self, n: isl.AstNode, where: isl.Set, time: list[isl.PwAff], bound: list[str],
             marked: str | None) -> None:
        t = n.get_type()
        if t == isl.ast_node_type.block:
            children = n.block_get_children()
            for k in range(children.n_ast_node()):
                self.walk(children.get_at(k), where, time + [self.constant(k)], bound, marked)
        elif t == isl.ast_node_type.mark:
            mark = mark_of(n)
            if isinstance(mark, ParallelMark):  # the printer's `#pragma omp parallel for` on this counter
                plain = self.parallel and not (mark.private or mark.lastprivate or mark.arrays)
                marked = f"{self.prefix}{mark.depth}" if plain else None
                if plain and mark.collapse == 2:  # (collapse(2): the loop inside it runs in parallel too)
                    self.collapsed[f"{self.prefix}{mark.depth}"] = f"{self.prefix}{mark.depth + 1}"
                if self.parallel and mark.alternative is not None:  # (in the copy for a single iteration)
                    alternatives = {f"{self.prefix}{mark.alternative}"}
                    if plain and mark.alternative_collapse == 2:  # (and the loop inside it)
                        alternatives.add(f"{self.prefix}{mark.alternative + 1}")
                    self.alternatives |= alternatives
                    self.walk(n.mark_get_node(), where, time, bound, marked)
                    self.alternatives -= alternatives
                    return
            elif isinstance(mark, (SimdMark, IvdepMark)):
                marked = None
            self.walk(n.mark_get_node(), where, time, bound, marked)
        elif t == isl.ast_node_type.if_:
            cond = self.condition(n.if_get_cond(), where)
            # (an entry for the branch: the then and else branches never run at one time prefix, and with it
            # the constant entries of a time tell which subtree it is in)
            self.walk(n.if_get_then_node(), where.intersect(cond).coalesce(), time + [self.constant(0)], bound,
                      marked)
            if n.if_has_else_node():
                self.walk(n.if_get_else_node(), where.subtract(cond).coalesce(), time + [self.constant(1)],
                          bound, marked)
        elif t == isl.ast_node_type.for_:
            name = n.for_get_iterator().id_get_id().get_name()
            k = self.iterators.index(name)
            counter = isl.PwAff.var_on_domain(isl.LocalSpace.from_space(self.space), isl.dim_type.set, k)
            step = n.for_get_inc().int_get_val().to_python()
            init = n.for_get_init()
            inside = where.intersect(self.compare(_T.ge, n.for_get_iterator(), init, where))
            inside = inside.intersect(self.condition(n.for_get_cond(), inside)).coalesce()  # (the exit test is
            # evaluated there and at one more value)
            if step != 1:
                start = self.value(init, where)
                inside = inside.intersect(counter.sub(start).mod_val(isl.Val(step, CTX)).zero_set())
            if name == marked or name in self.alternatives:
                self.loops.append((len(time), {k: x.as_aff().get_constant_val().to_python()
                                               for k, x in enumerate(time) if x.is_cst()}))
            self.loop_nodes.append(self.n_loop_nodes)
            self.n_loop_nodes += 1
            self.walk(n.for_get_body(), inside, time + [counter], bound + [name],
                      self.collapsed.get(name) if name == marked else marked)
            self.loop_nodes.pop()
        elif t == isl.ast_node_type.user:
            self.call(n.user_get_expr(), where, time, bound)
        else:  # pragma: no cover
            raise CodegenMismatch(f"isl AST node {t} is not read back")

    def call(self, e: isl.AstExpr, where: isl.Set, time: list[isl.PwAff], bound: list[str]) -> None:
        name = e.op_get_arg(0).id_get_id().get_name()
        for k, it in enumerate(self.iterators):  # counters of loops not around the call are 0
            if it not in bound:
                where = where.fix_val(isl.dim_type.set, k, isl.Val(0, CTX))
        args = [self.value(e.op_get_arg(i + 1), where) for i in range(e.op_get_n_arg() - 1)]
        self.calls.append((name, where, _function(args, self.space, name), time,
                           self.loop_nodes[-1] if self.loop_nodes else -1))


@dataclass(frozen=True, eq=False)
class _Call:
    """One statement call of the AST: the counter values that reach it (under the context), the instance it
    runs there and the time it runs at (block positions, branches and counters, outermost first, padded
    with 0s to the longest time of the AST), each a function of the counters."""

    statement: str
    where: isl.Set
    instance: isl.PwMultiAff
    time: isl.PwMultiAff
    loop: int  # its innermost loop (a number per for node of the AST; -1: none)


_COMPARE = {_T.eq: "eq_set", _T.le: "le_set", _T.lt: "lt_set", _T.ge: "ge_set", _T.gt: "gt_set"}


def _iterators(n: isl.AstNode, out: list[str]) -> None:
    t = n.get_type()
    if t == isl.ast_node_type.block:
        children = n.block_get_children()
        for k in range(children.n_ast_node()):
            _iterators(children.get_at(k), out)
    elif t == isl.ast_node_type.mark:
        _iterators(n.mark_get_node(), out)
    elif t == isl.ast_node_type.if_:
        _iterators(n.if_get_then_node(), out)
        if n.if_has_else_node():
            _iterators(n.if_get_else_node(), out)
    elif t == isl.ast_node_type.for_:
        name = n.for_get_iterator().id_get_id().get_name()
        if name not in out:
            out.append(name)
        _iterators(n.for_get_body(), out)


def _function(values: list[isl.PwAff], space: isl.Space, name: str | None = None) -> isl.PwMultiAff:
    """The function from the counters (*space*) to the tuple of *values* (named *name*)."""
    target = isl.Space.map_from_set(space).drop_dims(isl.dim_type.out, 0, space.dim(isl.dim_type.set)) \
        .add_dims(isl.dim_type.out, len(values))
    listed = isl.PwAffList.alloc(CTX, len(values))
    for v in values:
        listed = listed.add(v)
    f = isl.MultiPwAff.from_pw_aff_list(target, listed)
    return isl.PwMultiAff.from_multi_pw_aff(f.set_tuple_name(isl.dim_type.out, name) if name else f)


def check_ast(ast: isl.AstNode, scop: Scop, deps: isl.UnionMap | None, parallel: bool = True,
              prefix: str = "c") -> None:
    """Raise CodegenMismatch unless *ast* runs every instance of *scop*'s domain exactly once (under its
    context), each source of *deps* (None: not known) before its sink, and no dependence across the
    iterations of a loop marked parallel that privatizes nothing (when *parallel*: the printer marks it).
    Past the isl operation quota: CodegenMismatch as well (not verified)."""
    try:
        bounded(lambda: _check(ast, scop, deps, parallel, prefix), CHECK_OPERATIONS)
    except isl.Error:
        raise CodegenMismatch("the check of isl's generated code exceeded its isl operation limit", scop.file,
                              scop.begin_line) from None


def _check(ast: isl.AstNode, scop: Scop, deps: isl.UnionMap | None, parallel: bool, prefix: str) -> None:
    # Every test is the emptiness of a set of counter values (or of pairs of them), the instances and times
    # substituted as functions of the counters (preimages): no counter is projected out, except for the
    # instances each call covers (_covered), where the cost was (lu_lda: 56 s of a 60 s optimize).
    r = _Reader(scop, ast, parallel, prefix)
    r.walk(ast, r.universe, [], [], None)
    context = scop.context
    width = max((len(time) for _, _, _, time, _ in r.calls), default=0)
    calls: dict[str, list[_Call]] = {}
    for name, where, instance, time, loop in r.calls:
        calls.setdefault(name, []).append(_Call(
            name, where.intersect_params(context.align_params(where.get_space())), instance,
            _function(time + [r.constant(0)] * (width - len(time)), r.space), loop))
    for st in scop.statements:  # statement by statement: over the whole union, isl took minutes
        domain = st.domain.intersect_params(context.align_params(st.domain.get_space()))
        mine = calls.get(st.name, [])
        if not all(c.where.is_subset(domain.preimage_pw_multi_aff(c.instance)) for c in mine):
            raise CodegenMismatch(f"isl's generated code runs instances of {st.name} outside its domain",
                                  scop.file, scop.begin_line)
        ran = [c.where.apply(isl.Map.from_pw_multi_aff(c.instance)) for c in mine]
        same = isl.Map.identity(isl.Space.map_from_set(domain.get_space()))
        earlier = isl.Map.lex_lt(r.space)
        # two counter values of one call that run one instance; an instance two calls run
        if any(not _pairs(same, c, c).intersect(earlier).is_empty() for c in mine) or \
                any(not ran[i].intersect(ran[k]).is_empty() for i in range(len(ran)) for k in range(i)):
            raise CodegenMismatch(f"isl's generated code runs some instance of {st.name} twice", scop.file,
                                  scop.begin_line)
        if not _covered(domain, ran, [c.loop for c in mine]):
            raise CodegenMismatch(f"isl's generated code loses instances of {st.name}", scop.file,
                                  scop.begin_line)
    if deps is None or width == 0:
        return
    # the pairs of counter values (of a source's call, of a sink's) whose instances a dependence joins
    joined = [(c, other, pairs) for m in maps_of(deps.intersect_params(context))
              for c in calls.get(m.get_tuple_name(isl.dim_type.in_), [])
              for other in calls.get(m.get_tuple_name(isl.dim_type.out), [])
              for pairs in [_pairs(m, c, other)] if not pairs.is_empty()]

    def meet(relation: isl.Map) -> bool:
        """Whether some joined pair's times are in *relation* (time -> time)."""
        return any(not pairs.intersect(relation.preimage_domain_pw_multi_aff(c.time)
                                       .preimage_range_pw_multi_aff(other.time)).is_empty()
                   for c, other, pairs in joined)
    # (emptiness of an intersection, not a subset test: isl's subtraction of the ordered pairs took minutes)
    if meet(isl.Map.lex_ge(isl.Space.set_alloc(CTX, 0, width))):
        raise CodegenMismatch("isl's generated code runs a dependence's sink before its source",
                              scop.file, scop.begin_line)
    for entry, path in r.loops:
        if any(meet(c) for c in _carried(entry, path, width)):
            raise CodegenMismatch("a loop printed as parallel carries a dependence in isl's generated code",
                                  scop.file, scop.begin_line)


def _pairs(relation: isl.Map, c: _Call, other: _Call) -> isl.Map:
    """The pairs (counters of call *c*, counters of call *other*) whose instances *relation* joins."""
    return relation.preimage_domain_pw_multi_aff(c.instance).preimage_range_pw_multi_aff(other.instance) \
        .intersect_domain(c.where).intersect_range(other.where)


def _carried(entry: int, path: dict[int, int], width: int) -> list[isl.Map]:
    """Time pairs inside the loop at time entry *entry* (the block positions of its *path*), equal before
    that entry and unequal there: the pairs the loop carries (two maps: less, greater)."""
    t = [f"t{k}" for k in range(width)]
    u = [f"u{k}" for k in range(width)]
    same = "".join(f"{t[k]} = {u[k]} and " + (f"{t[k]} = {path[k]} and " if k in path else "") for k in range(entry))
    return [isl.Map(f"{{ [{', '.join(t)}] -> [{', '.join(u)}] : {same}{t[entry]} {op} {u[entry]} }}", context=CTX)
            for op in ("<", ">")]


def _covered(domain: isl.Set, ran: list[isl.Set], loops: list[int]) -> bool:
    """Whether the sets *ran* (the instances of a statement's calls, in the AST's order, each in the loop
    *loops* names) cover *domain*. The calls of one loop after another (consecutive calls in one loop, their
    union coalesced: unrolled copies, the pieces of a separated loop) are taken out of the domain, coalesced
    after each: less the union of all at once, isl took minutes (lu_lda's unrolled and jammed wavefront: 64
    calls of the update, 56 s); one by one the rest stays a few pieces, as each loop takes what the loops
    before it left. Sets with existentially quantified variables (a wavefront's tile counters that no floor
    of the instance gives) are not subtracted, which took isl minutes as well: what the others leave must be
    a subset of their union (isl's subset test finds a point outside without computing the difference)."""
    groups: list[isl.Set] = []
    for k, x in enumerate(ran):
        if k and loops[k] == loops[k - 1]:
            groups[-1] = groups[-1].union(x)
        else:
            groups.append(x)
    rest, later = domain, isl.Set.empty(domain.get_space())
    for x in groups:
        x = x.coalesce()
        if any(b.remove_unknown_divs().dim(isl.dim_type.div) < b.dim(isl.dim_type.div) for b in x.get_basic_sets()):
            later = later.union(x)
            continue
        rest = rest.subtract(x).coalesce()
        if rest.plain_is_empty():
            return True
    return rest.is_subset(later.coalesce())


__all__ = ["CHECK_OPERATIONS", "CodegenMismatch", "check_ast"]
