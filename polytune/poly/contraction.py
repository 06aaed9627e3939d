"""Contraction bands: statements `C[..] += f(A[..], B[..])` that BLIS's structure computes (emit/blis.py).

A statement is a *contraction* when (all read from the polyhedral representation, not from source text):
- it accumulates into one element: `W += E`, `W -= E`, `W = W + E`, `W = W - E` or `W = E + W`;
- exactly one of its loops, *k*, moves no subscript of W (the reduction), and its own dependences
  (isl's, from the statement to itself) move no loop but k, forward: each element's sum runs in k's order;
- E splits into *operands*, maximal subexpressions that depend only on (rows, k) or only on (columns, k)
  (alpha * A[i][k], B[k][j]), joined by +, - and * into a *core* that has both kinds (the products);
  the loops of W split into rows (loops the A side reads), columns (the B side's) and the rest (outer:
  a batch loop, a second free index), from the operands' subscripts;
- no operand reads W's array, and its domain, with the outer loops fixed, is one convex polyhedron with
  coefficients 0 or +-1 (rectangles, triangles `j <= i`), each of k's bounds involving at most one of the
  rows and columns (symm's `k < i`, trmm's `k > i`: the packed code runs the micro-kernel over the k where
  a whole tile is inside and each element's own k before and after it).

The dependence condition makes the rows and columns parallel and any blocking of (rows, columns, k)
legal; the core evaluated per k with W's element held in a register across a block of k keeps each
element's operations exactly (the same products, added in k's order). `isolate` gives each contraction a
subtree of its own (fission from the statements its outermost band shares it with, checked against every
dependence): a band of its outer loops, a `ContractionMark`, and a band of its (row, column, k) loops
that the tiler leaves alone and the C printer replaces by the packed, blocked code.
"""
from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass, field, replace

import islpy as isl
from pycparser import c_ast, c_generator

from .bands import member_of, single_aff
from .deps import Dependences
from .islutil import CTX, isl_name, sets_of
from .legality import IllegalSchedule, check_legal
from .marks import ContractionMark, mark_id
from .scop import Scop, Statement, common_loops

_GEN = c_generator.CGenerator()
_CORE_OPS = frozenset({"+", "-", "*"})
MAX_CORE = 12  # nodes of the core (syr2k's two products: 7)


@dataclass(frozen=True)
class Blocks:
    """How contraction bands are printed (emit/blis.py): *on* False leaves them to the tiler like any band.
    Block sizes: 0 takes the analytical model's value (emit/blis.py model_blocks). *mr* rows by *nv* vectors
    of columns per micro-kernel; *kc*, *mc*, *nc* in elements; *pack_a* False reads A's operands in place (B
    is always packed: its vectors must be contiguous)."""

    on: bool = True
    mr: int = 0
    nv: int = 0
    kc: int = 0
    mc: int = 0
    nc: int = 0
    pack_a: bool = True
    # a sum of products added to W one product at a time (W += x * y; W += z * w for W += x * y + z * w):
    # one FMA each, where the original's order needs a product, an FMA and an add (syr2k). The results
    # differ from the original's in rounding: only where the user asks (optimize/tune --reassociate)
    reassociate: bool = False


# The tuner's coordinates of the packed code (targets/c.py adds them where a program has contraction bands):
# 0 is the model's value; nv counts vectors (nr = nv x the vector's lanes).
BLOCK_COORDINATES: dict[str, tuple] = {
    "blocked": (True, False), "mr": (0, 4, 6, 8), "nv": (0, 1, 2, 3), "kc": (0, 128, 256, 512),
    "mc": (0, 48, 96, 192, 384), "nc": (0, 1024, 2048, 4096), "pack_a": (True, False),
}


def blocks_of(values: dict) -> Blocks:
    """Blocks from coordinate values by name (missing: the default)."""
    names = {"blocked": "on"}
    return Blocks(**{names.get(k, k): v for k, v in values.items() if k in BLOCK_COORDINATES})


def parse_blocks(text: str) -> Blocks:
    """`optimize --blocks`: `off`, or NAME=VALUE items (mr=6,nv=2,kc=256,mc=96,nc=2048,pack_a=1)."""
    from ..errors import UsageError
    if text.strip() == "off":
        return Blocks(on=False)
    values: dict = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        key, eq, value = item.partition("=")
        if not eq or key not in (*BLOCK_COORDINATES, "reassociate"):
            raise UsageError(f"bad --blocks item '{item}' (off, or NAME=VALUE with NAME one of "
                             f"{', '.join(BLOCK_COORDINATES)}, reassociate)")
        if key in ("blocked", "pack_a", "reassociate"):
            values[key] = value.lower() in ("1", "true", "yes", "on")
        elif value.isdigit():
            values[key] = int(value)
        else:
            raise UsageError(f"bad --blocks item '{item}': {key} takes a non-negative integer")
    return replace(blocks_of(values), reassociate=values.get("reassociate", False))  # (not a tuner coordinate)


def blocks_text(b: Blocks) -> str:
    """*b* as optimize's --blocks takes it."""
    if not b.on:
        return "off"
    return ",".join(f"{k}={int(getattr(b, k)) if isinstance(getattr(b, k), bool) else getattr(b, k)}"
                    for k in ("mr", "nv", "kc", "mc", "nc", "pack_a")) + (",reassociate=1" if b.reassociate else "")


def summands(core: str, op: str) -> tuple[tuple[str, str], ...]:
    """The updates `W = W op' term`, one per product of *core* (a Contraction's core: operands and
    parenthesized `(l + r)`, `(l - r)`, `(l * r)`, `(-x)`), that together make `W = W op core` when the
    sum is reassociated: ((p + q) - r) under + gives (+, p), (+, q), (-, r). A core that is one product gives
    itself."""
    flip = {"+": "-", "-": "+"}

    def top(inner: str) -> tuple[int, str] | None:
        depth = 0
        for n, ch in enumerate(inner):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and inner[n:n + 3] in (" + ", " - ", " * "):
                return n, inner[n + 1]
        return None

    def walk(text: str, sign: str) -> list[tuple[str, str]]:
        if text.startswith("(") and text.endswith(")"):
            inner = text[1:-1]
            found = top(inner)
            if found is not None and found[1] in "+-":
                n, o = found
                return walk(inner[:n], sign) + walk(inner[n + 3:], sign if o == "+" else flip[sign])
            if found is None and inner.startswith("-"):
                return walk(inner[1:], flip[sign])
        return [(sign, text)]

    return tuple(walk(core, op))


@dataclass(frozen=True)
class Operand:
    """A subexpression the packing evaluates once per (row, k) (side "a") or per (k, column) (side "b")."""

    side: str
    text: str  # the C text, in the statement's iterators
    node: c_ast.Node = field(compare=False, repr=False, default=None)  # the same as pycparser's tree


@dataclass(frozen=True)
class Contraction:
    """What the blocked code needs to know of one contraction statement (names are C iterators)."""

    statement: str
    outer: tuple[str, ...]  # the statement's other loops, in their order (outside the blocked code)
    i: str  # the rows: the loop of the A side
    j: str  # the columns: the B side, W's contiguous subscript where it has one
    k: str  # the reduction
    write: str  # W's C text
    op: str  # "+" or "-": W = W op core
    core: str  # C text with the operands as @a0, @b0, ... (placeholders)
    operands: tuple[Operand, ...]
    unit_columns: bool  # W's elements of consecutive columns are adjacent (its last subscript is j + ...)
    write_node: c_ast.Node = field(compare=False, repr=False, default=None)
    reads_result: bool = False  # an operand reads W's array (trmm): the packed code reads a copy of its rows
    # ... or W's array itself, where its packing of B's blocks in order comes before every write of what they
    # read (result_packed_in_place: trmm's rows below)
    in_place: bool = False

    @property
    def a_operands(self) -> tuple[Operand, ...]:
        return tuple(o for o in self.operands if o.side == "a")

    @property
    def b_operands(self) -> tuple[Operand, ...]:
        return tuple(o for o in self.operands if o.side == "b")


def ids_of(node: c_ast.Node) -> set[str]:
    """The identifiers an expression reads (a struct member's base only)."""
    out: set[str] = set()

    class V(c_ast.NodeVisitor):
        def visit_ID(self, n):
            out.add(n.name)

        def visit_StructRef(self, n):  # (a.x: only the base is a variable)
            self.visit(n.name)

    V().visit(node)
    return out


def _pure(node: c_ast.Node) -> bool:
    """Whether an operand is plain arithmetic on array elements, scalars and constants (no call, no
    assignment, no increment): the packing may evaluate it anywhere the original did."""
    if isinstance(node, (c_ast.ID, c_ast.Constant)):
        return True
    if isinstance(node, c_ast.ArrayRef):
        return _pure(node.name) and _pure(node.subscript)
    if isinstance(node, c_ast.BinaryOp):
        return _pure(node.left) and _pure(node.right)
    if isinstance(node, c_ast.UnaryOp):
        return node.op in ("-", "+") and _pure(node.expr)
    if isinstance(node, c_ast.Cast):
        return _pure(node.expr)
    return False


def accumulation(body: c_ast.Node) -> tuple[c_ast.Node, str, c_ast.Node] | None:
    """(W, op, E) of `W += E`, `W -= E`, `W = W + E`, `W = W - E`, `W = E + W`; None otherwise."""
    if not isinstance(body, c_ast.Assignment) or not isinstance(body.lvalue, c_ast.ArrayRef):
        return None
    w = body.lvalue
    if body.op in ("+=", "-="):
        return w, body.op[0], body.rvalue
    r = body.rvalue
    if body.op == "=" and isinstance(r, c_ast.BinaryOp) and r.op in ("+", "-"):
        text = _GEN.visit(w)
        if _GEN.visit(r.left) == text:
            return w, r.op, r.right
        if r.op == "+" and _GEN.visit(r.right) == text:
            return w, "+", r.left  # (IEEE addition commutes exactly)
    return None


def _write_loops(st: Statement) -> tuple[set[str], str | None, bool]:
    """The loops W's subscripts move, the loop of its last subscript with coefficient 1 (None where there is
    none), and whether that loop appears in the last subscript only."""
    w = st.writes[0].relation.gist_domain(st.domain)  # (the subscripts' own dependence on the loops)
    n_in = w.dim(isl.dim_type.in_)
    if n_in != len(st.iterators):
        return {""}, None, False
    # (by position: the relation's input dimensions are the statement's loops, named or not: expand.py's
    # rewritten accesses leave them unnamed)
    moved = {st.iterators[d] for d in range(n_in) if w.involves_dims(isl.dim_type.in_, d, 1)}
    last, only = None, False
    try:
        pma = isl.PwMultiAff.from_map(w)
    except isl.Error:
        return moved, None, False
    n_out = w.dim(isl.dim_type.out)
    if pma.n_piece() != 1 or n_out == 0:
        return moved, None, False
    pieces: list = []
    pma.foreach_piece(lambda _set, ma: pieces.append(ma))
    ma = pieces[0]
    for d in range(n_in):
        if ma.get_at(n_out - 1).get_coefficient_val(isl.dim_type.in_, d).to_python() == 1:
            name = st.iterators[d]
            others = [ma.get_at(o).get_coefficient_val(isl.dim_type.in_, d).to_python() for o in range(n_out - 1)]
            last, only = name, not any(others)
            break
    return moved, last, only


def _split(node: c_ast.Node, deps_of, a_side: set[str], b_side: set[str], operands: list, size: list):
    """The core of *node* (C text with @a<n>/@b<n> placeholders) with its operands appended to *operands*;
    None where it does not split into operands joined by + - *."""
    deps = deps_of(node)
    if deps is not None and _pure(node):
        for side, allowed in (("a", a_side), ("b", b_side)):
            if deps <= allowed:
                operands.append(Operand(side, _GEN.visit(node), node))
                return f"@{side}{len(operands) - 1}"
    size[0] += 1
    if size[0] > MAX_CORE:
        return None
    if isinstance(node, c_ast.BinaryOp) and node.op in _CORE_OPS:
        left = _split(node.left, deps_of, a_side, b_side, operands, size)
        right = left and _split(node.right, deps_of, a_side, b_side, operands, size)
        return right and f"({left} {node.op} {right})"
    if isinstance(node, c_ast.UnaryOp) and node.op == "-":
        inner = _split(node.expr, deps_of, a_side, b_side, operands, size)
        return inner and f"(-{inner})"
    return None


def recognize(scop: Scop, st: Statement, deps: Dependences | None = None) -> Contraction | None:
    """The statement as a contraction (module docstring), or None. With *deps*, its dependences on itself
    are checked too (isolate always passes them)."""
    acc = accumulation(st.body)
    if acc is None or len(st.writes) != 1 or st.writes[0].relation.dim(isl.dim_type.out) == 0:
        return None
    w, op, e = acc
    iters = set(st.iterators)
    moved, last, last_only = _write_loops(st)
    if "" in moved or not moved <= iters:
        return None
    ks = [x for x in st.iterators if x not in moved]
    if len(ks) != 1:
        return None
    k = ks[0]
    warray = st.writes[0].array

    # an operand may read W's array where no element it reads is written by the statement before it reads
    # it (trmm's B[k][j] for k > i): the packed code reads a snapshot taken before it (emit/blis.py)
    reads = result_reads(st)

    def deps_of(node: c_ast.Node) -> set[str] | None:
        names = ids_of(node)
        if warray in names and reads is None:
            return None  # an operand reading W's array: not a contraction
        return names & iters

    free = [x for x in st.iterators if x in moved]
    best = None
    for roles in itertools.product("oab", repeat=len(free)):
        rows = {x for x, r in zip(free, roles) if r == "a"}
        cols = {x for x, r in zip(free, roles) if r == "b"}
        if not rows or not cols:
            continue
        outer = {x for x, r in zip(free, roles) if r == "o"}
        operands: list[Operand] = []
        core = _split(e, deps_of, rows | outer | {k}, cols | outer | {k}, operands, [0])
        if core is None or not any(o.side == "a" for o in operands) or not any(o.side == "b" for o in operands):
            continue
        # every row loop read by some A operand, every column loop by some B operand
        used_a = set().union(*(_ids_text(o.text) & iters for o in operands if o.side == "a"))
        used_b = set().union(*(_ids_text(o.text) & iters for o in operands if o.side == "b"))
        if not (rows <= used_a and cols <= used_b and k in used_a | used_b):
            continue
        score = (len(outer), roles)
        if best is None or score < best[0]:
            best = (score, rows, cols, outer, core, operands)
    if best is None:
        return None
    _, rows, cols, outer, core, operands = best
    if last in rows:  # the vectors run along W's contiguous subscript: swap the sides
        rows, cols = cols, rows
        operands = [Operand("b" if o.side == "a" else "a", o.text, o.node) for o in operands]
        core = core.replace("@a", "@x").replace("@b", "@a").replace("@x", "@b")
    order = {x: n for n, x in enumerate(st.iterators)}
    j = last if last in cols else max(cols, key=order.get)
    # the row loop: the one whose subscript of W is nearest the contiguous one
    i = max(rows, key=order.get)
    outer_loops = tuple(x for x in st.iterators if x not in (i, j, k))
    c = Contraction(st.name, outer_loops, i, j, k, _GEN.visit(w), op, core, tuple(operands),
                    last == j and last_only, w)
    if not _domain_ok(scop, st, c):
        return None
    reads_w = any(warray in ids_of(o.node) for o in c.operands)
    if reads_w and not _operands_read_before_writes(st, c, warray, reads, e):
        return None
    if deps is not None and not own_dependences_ok(st, c, deps, without_anti=reads_w):
        return None
    return replace(c, reads_result=True, in_place=result_packed_in_place(st, c, warray, reads)) if reads_w else c


def _array_refs(node: c_ast.Node, name: str) -> list[c_ast.ArrayRef]:
    """The outermost references `name[..]..[..]` in *node*."""
    out: list[c_ast.ArrayRef] = []

    class V(c_ast.NodeVisitor):
        def visit_ArrayRef(self, n):
            base = n
            while isinstance(base, c_ast.ArrayRef):
                base = base.name
            if isinstance(base, c_ast.ID) and base.name == name:
                out.append(n)
            else:
                self.generic_visit(n)

    V().visit(node)
    return out


def _subscripts(ref: c_ast.ArrayRef) -> int:
    n = 0
    while isinstance(ref, c_ast.ArrayRef):
        ref, n = ref.name, n + 1
    return n


def result_reads(st: Statement) -> list[isl.Map] | None:
    """The statement's reads of its written array other than the accumulation's own read of W (trmm's
    B[k][j] beside `B[i][j] +=`), where each is told apart from it: one read relation equal to the write's,
    every other read a distinct reference whose C subscripts are the relation's dimensions (not a flattened
    array). None where there is none, or where they cannot be told apart."""
    acc = accumulation(st.body)
    if acc is None or len(st.writes) != 1:
        return None
    warray = st.writes[0].array
    w = st.writes[0].relation.intersect_domain(st.domain)
    reads = [a.relation.intersect_domain(st.domain) for a in st.reads if a.array == warray]
    same = [r for r in reads if r.is_equal(w)]
    others = [r for r in reads if not r.is_equal(w)]
    refs = _array_refs(acc[2], warray)
    n_out = w.dim(isl.dim_type.out)
    if not others or len(same) != 1 or len(others) != len(refs) or \
            any(_subscripts(r) != n_out for r in refs + [acc[0]]):
        return None
    return others


def _operands_read_before_writes(st: Statement, c: Contraction, warray: str, reads: list[isl.Map] | None,
                                 e: c_ast.Node) -> bool:
    """Whether no element the operands read of W's array (*reads*: `result_reads`; *e*: the accumulation's
    added expression) is written by the statement at an earlier instance (in the original order): every
    operand then reads the value the array had before the statement's first instance, which a snapshot taken
    there holds. The element W itself in an operand is never that."""
    if reads is None or any(_GEN.visit(r) == c.write for r in _array_refs(e, warray)):
        return False
    w = st.writes[0].relation.intersect_domain(st.domain)
    before = st.schedule.lex_lt_map(st.schedule)  # x -> y: x runs before y
    return all(w.apply_range(r.reverse()).intersect(before).is_empty() for r in reads)


def result_packed_in_place(st: Statement, c: Contraction, warray: str, reads: list[isl.Map] | None) -> bool:
    """Whether the packed code may pack the operands that read W's array from the array itself, without a
    snapshot: they are all on B's side, and every element they read at a column j and step k is written only
    at a column j' >= j and a step k' >= k (in the same outer iterations). The code packs B's block of the
    columns jc and the steps pc before it writes anything in that block (a barrier between them), and takes
    the column blocks and the k blocks in ascending order: each element is packed before the write that
    changes it, as the original reads it before that write (trmm: B[k][j] written at its row k, at the steps
    k' > k)."""
    if reads is None or any(warray in ids_of(o.node) for o in c.a_operands):
        return False
    w = st.writes[0].relation.intersect_domain(st.domain)
    names = [isl_name(x) for x in st.iterators]
    later = [n + "_w" for n in names]
    cons = [f"{y} >= {x}" if it in (c.j, c.k) else f"{y} = {x}"
            for x, y, it in zip(names, later, st.iterators) if it in (c.j, c.k) or it in c.outer]
    for r in reads:
        pairs = r.apply_range(w.reverse())  # (an instance reading an element) -> (one writing it)
        ok = isl.Map(f"[{_params_text(pairs)}] -> {{ {st.name}[{', '.join(names)}] -> {st.name}[{', '.join(later)}] : "
                     f"{' and '.join(cons) or '0 = 0'} }}", context=CTX)
        if not pairs.is_subset(ok):
            return False
    return True


def _ids_text(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", text))


def own_dependences_ok(st: Statement, c: Contraction, deps: Dependences, without_anti: bool = False) -> bool:
    """Whether every dependence of the statement on itself stays within one element (all loops but k equal)
    and goes forward along k: rows and columns are then parallel, and blocks of k keep k's order.
    *without_anti*: the flow and output dependences only (an operand reading W's array reads a snapshot, so
    its reads order nothing; the accumulation's own read of W is within its element)."""
    if not deps.complete:
        return False
    space = st.domain.get_space()
    rel = deps.flow.union(deps.output) if without_anti else deps.all
    own = rel.extract_map(isl.Space.map_from_domain_and_range(space, space))
    if own.is_empty():
        return True
    delta = own.intersect_params(_context_like(own)).deltas()
    names = [isl_name(x) for x in st.iterators]
    cons = " and ".join(f"{n} = 0" for n, x in zip(names, st.iterators) if x != c.k)
    kname = isl_name(c.k)
    ok = isl.Set(f"[{_params_text(delta)}] -> {{ {st.name}[{', '.join(names)}] : "
                 f"{cons + ' and ' if cons else ''}{kname} >= 0 }}", context=CTX)
    return delta.is_subset(ok)


def _params_text(x: isl.Map | isl.Set) -> str:
    """*x*'s parameter names, comma-separated: the `[..] ->` of a set or map written over the same space."""
    return ", ".join(x.get_dim_name(isl.dim_type.param, p) for p in range(x.dim(isl.dim_type.param)))


def _context_like(m: isl.Map) -> isl.Set:
    return isl.Set.universe(isl.Space.params_alloc(CTX, 0)).align_params(m.get_space())


def domain_pieces(scop: Scop, st: Statement, c: Contraction, name_of=None) -> isl.BasicSet | None:
    """The statement's domain under the context, with the outer loops as parameters (named by *name_of*,
    outer loop -> parameter name): one basic set with no existentials, or None."""
    name_of = name_of or _outer_param
    dom = st.domain.intersect_params(scop.context.align_params(st.domain.get_space()))
    outer_pos = [st.iterators.index(x) for x in c.outer]
    # outer loops to parameters, the last ones first (positions stay valid)
    for n, pos in sorted(zip(c.outer, outer_pos), key=lambda t: -t[1]):
        p = dom.dim(isl.dim_type.param)
        dom = dom.move_dims(isl.dim_type.param, p, isl.dim_type.set, pos, 1)
        dom = dom.set_dim_name(isl.dim_type.param, p, name_of(n))
    dom = dom.coalesce().detect_equalities().remove_redundancies()
    pieces = dom.get_basic_sets()
    if len(pieces) != 1:
        return None
    b = pieces[0]
    if b.dim(isl.dim_type.div) != 0:
        return None
    return b


def _outer_param(name: str) -> str:
    return f"__outer_{name}"


def _domain_ok(scop: Scop, st: Statement, c: Contraction) -> bool:
    """The domain is one convex polyhedron (outer loops fixed) whose constraints have coefficients 0 or +-1
    on the row, column and k loops, each of k's constraints involving at most one of the row and column
    loops (a triangle between k and the rows, as symm's `k < i` and trmm's `k > i`, or the columns; never
    all three), and no equality fixes a row, column or k."""
    b = domain_pieces(scop, st, c)
    if b is None:
        return False
    pos = {b.get_dim_name(isl.dim_type.set, d): d for d in range(b.dim(isl.dim_type.set))}
    di, dj, dk = (pos[isl_name(x)] for x in (c.i, c.j, c.k))
    for con in b.get_constraints():
        co = [con.get_coefficient_val(isl.dim_type.set, d).to_python() for d in (di, dj, dk)]
        if any(abs(x) > 1 for x in co):
            return False
        if con.is_equality() and any(co):
            return False
        if co[2] and co[0] and co[1]:
            return False
    return True


def extents(scop: Scop, st: Statement, c: Contraction) -> dict[str, int | None]:
    """The trip counts of the row, column and k loops where they are constants (outer loops fixed: the
    largest over them), else None."""
    dom = st.domain.intersect_params(scop.context.align_params(st.domain.get_space()))
    out: dict[str, int | None] = {}
    for role, x in (("i", c.i), ("j", c.j), ("k", c.k)):
        d = st.iterators.index(x)
        s = dom
        lo, hi = s.dim_min(d), s.dim_max(d)
        try:
            lo_v = lo.min_val() if lo.is_cst() else None
            hi_v = hi.max_val() if hi.is_cst() else None
        except isl.Error:
            lo_v = hi_v = None
        out[role] = hi_v.sub(lo_v).to_python() + 1 if lo_v is not None and hi_v is not None \
            and lo_v.is_int() and hi_v.is_int() else None
    return out


def worth_blocking(scop: Scop, st: Statement, c: Contraction, l1: int | None = None) -> bool:
    """The model's verdict on one contraction: packed blocks pay unless known trip counts leave nothing
    to block (fewer than 4 k steps, fewer than 16 elements of W per outer iteration), or the three
    matrices of one outer iteration fit in half the L1 cache together (8-byte elements): the plain loops
    then find every operand in L1, and the packing's copies and the partial tiles of small sizes cost
    more than the micro-kernel saves (benchmarks/unseen/batched_gemm.c, 16 x 16 x 16: 0.78x of gcc's
    build of the original blocked, 1.3x tiled). Unknown sizes count as large. The environment's
    POLYTUNE_BLOCK_MIN_BYTES replaces the half of L1 (the tests set 0: their sizes are small)."""
    e = extents(scop, st, c)
    if e["k"] is not None and e["k"] < 4:
        return False
    if e["i"] is not None and e["j"] is not None and e["i"] * e["j"] < 16:
        return False
    if None in e.values():
        return True
    least = os.environ.get("POLYTUNE_BLOCK_MIN_BYTES")
    if least is None:
        from ..machine import cache_sizes  # (the machine the code is built for: -march=native)
        least = (l1 or cache_sizes()[1]) // 2
    return 8 * (e["i"] * e["k"] + e["k"] * e["j"] + e["i"] * e["j"]) > int(least)


# ---------------------------------------------------------------------------------------- the tree


def _outermost_band(node: isl.ScheduleNode, name: str):
    """The outermost band node of the subtree whose domain holds statement *name*, or None."""
    if node.get_type() == isl.schedule_node_type.band:
        return node if name in _stmts(node) else None
    for k in range(node.n_children()):
        child = node.child(k)
        if name in _stmts(child):
            found = _outermost_band(child, name)
            if found is not None:
                return found
    return None


def _stmts(node: isl.ScheduleNode) -> set[str]:
    return {s.get_tuple_name() for s in sets_of(node.get_domain())}


def _filter(scop: Scop, names: list[str]) -> isl.UnionSet:
    out = isl.UnionSet.empty(scop.domain.get_space())
    for st in scop.statements:
        if st.name in names:
            out = out.union(isl.UnionSet.from_set(st.domain))
    return out


def _band_of(st: Statement, loops: tuple[str, ...]) -> isl.MultiUnionPwAff:
    names = [isl_name(x) for x in st.iterators]
    params = ", ".join(st.domain.get_dim_name(isl.dim_type.param, p)
                       for p in range(st.domain.dim(isl.dim_type.param)))
    out = ", ".join(isl_name(x) for x in loops)
    umap = isl.UnionMap(f"[{params}] -> {{ {st.name}[{', '.join(names)}] -> [{out}] }}",
                        context=CTX).intersect_domain(isl.UnionSet.from_set(st.domain))
    return isl.MultiUnionPwAff.from_union_map(umap)


def _constant_member(band: isl.ScheduleNode, m: int) -> bool:
    """Whether member *m* of *band* takes one value for each statement (a dimension that orders nothing)."""
    upa = band.band_get_partial_schedule().get_at(m)
    return all(member_of(upa, st).is_cst() for st in sets_of(band.get_domain()))


def _without_constant_members(band: isl.ScheduleNode) -> isl.ScheduleNode:
    """*band* (a copy of a band for the statements split from a contraction: gemm's `C *= beta` keeps the
    band (i, j, k) as (i, j, 0)) without its members that are constant for every statement, which would
    otherwise be tiled and tuned as loops; the node at the same place."""
    if band.get_type() != isl.schedule_node_type.band:
        return band
    for m in reversed(range(band.band_n_member())):
        if band.band_n_member() == 1 or not _constant_member(band, m):
            continue
        if m > 0:
            band = band.band_split(m).child(0)  # members m.. below the first m
        if band.band_n_member() > 1:
            band = band.band_split(1)  # member m alone, the rest below it
        band = band.delete()  # (its child now at its place)
        if m > 0:
            band = band.parent()
    return band


# Where a contraction goes among the statements it shares its outermost band with (`_isolated`): between
# those before it in the region's text and those after it; after all of them (symm: `C[k][j] += ..` for
# i > k must follow `C[i][j] = beta * C[i][j] + ..` of the element's own row, which is later in the text);
# before all of them. isolate takes the first the dependences allow.
PLACES = ("text", "last", "first")


def _isolated(schedule: isl.Schedule, scop: Scop, st: Statement, c: Contraction, mark: ContractionMark,
              place: str = "text"):
    """*schedule* with *st* split from the other statements of its outermost band (placed as *place* says:
    PLACES) and its subtree replaced by: a band of its outer loops, the mark, a band of (i, j, k). None where
    the statement is in no band, or where *place* gives the order *text* gives already."""
    node = _outermost_band(schedule.get_root(), st.name)
    if node is None:
        return None
    here = _stmts(node)
    if here == {st.name} and place != "text":
        return None  # (alone: one placement)
    if here != {st.name}:
        order = [s.name for s in scop.statements]
        before = [s for s in order if s in here and order.index(s) < order.index(st.name)]
        after = [s for s in order if s in here and order.index(s) > order.index(st.name)]
        text = [g for g in (before, [st.name], after) if g]
        groups = {"text": text, "last": [before + after, [st.name]], "first": [[st.name], before + after]}[place]
        groups = [g for g in groups if g]
        if place != "text" and groups == text:
            return None  # (the same order as the text's)
        filters = isl.UnionSetList.alloc(CTX, len(groups))
        for g in groups:
            filters = filters.add(_filter(scop, g).intersect(node.get_domain()))
        seq = node.insert_sequence(filters)
        for k in range(len(groups)):  # the others' copies of the band: their members constant there dropped
            if groups[k] != [st.name]:
                seq = _without_constant_members(seq.child(k).child(0)).parent().parent()
        node = seq.child(groups.index([st.name])).child(0)
    leaf = node.cut()
    # (i, k, j): the order the packed code's fallback runs in (emit/blis.py: small products and pieces the
    # blocks do not cover), each k a sweep along the row j that gcc vectorizes, as BLAS-shaped C is written
    band = leaf.insert_partial_schedule(_band_of(st, (c.i, c.k, c.j)))
    marked = band.insert_mark(mark_id(mark))
    if c.outer:
        marked = marked.insert_partial_schedule(_band_of(st, c.outer))
    return marked.get_schedule()


def isolate(schedule: isl.Schedule, scop: Scop, deps: Dependences, blocks: object = None,
            wanted=None) -> tuple[isl.Schedule, tuple[Contraction, ...]]:
    """*schedule* with every contraction statement (module docstring) in a subtree of its own under a
    `ContractionMark` carrying *blocks* (the block sizes: emit/blis.py), where that split is legal (checked
    against every dependence, one statement at a time). *wanted* (Contraction -> bool) may refuse some
    (the model: too small to gain). Returns the schedule and the contractions marked."""
    if not deps.complete:
        return schedule, ()
    found: list[Contraction] = []
    for st in scop.statements:
        c = recognize(scop, st, deps)
        if c is None or (wanted is not None and not wanted(scop, st, c)):
            continue
        new = _legal_isolation(schedule, scop, st, c, ContractionMark(st.name, c, blocks), deps)
        if new is None:
            continue
        schedule = new
        found.append(c)
        fused = _outer_fused(schedule, scop, st, c)
        if fused is not None:
            try:
                check_legal(fused, deps, scop)
                schedule = fused
            except IllegalSchedule:
                pass
    return schedule, tuple(found)


def _legal_isolation(schedule: isl.Schedule, scop: Scop, st: Statement, c: Contraction, mark: ContractionMark,
                     deps: Dependences) -> isl.Schedule | None:
    """The first of `_isolated`'s placements (PLACES) that every dependence allows, or None."""
    for place in PLACES:
        try:
            new = _isolated(schedule, scop, st, c, mark, place)
        except isl.Error:
            continue
        if new is None:
            continue
        try:
            check_legal(new, deps, scop)
        except IllegalSchedule:
            continue
        return new
    return None


def _outer_fused(schedule: isl.Schedule, scop: Scop, st: Statement, c: Contraction) -> isl.Schedule | None:
    """*schedule* with the contraction's outer loops (its batch loops, the outermost of its own loops) taken
    out of the sequence the contraction sits in, as one band above it, where every statement of that
    sequence sits in those same loops of the program and each part's first members are them. doitgen's
    `for r: { sum[q][p] = 0; sum[q][p] += A[r][q][s] * C4[s][p]; A[r][q][p] = sum[q][p] }`, its scratch
    indexed by r (expand.py), was otherwise three nests over every r, each streaming the whole scratch
    array (0.062 s at LARGE against 0.048 s fused). None where the sequence does not have that shape."""
    n = len(c.outer)
    if n == 0 or tuple(st.iterators[:n]) != c.outer:
        return None
    node = schedule.get_root().child(0)
    if node.get_type() != isl.schedule_node_type.sequence or node.n_children() < 2:
        return None
    node = node.sequence_splice_children()  # (the parts isolate split a band into, at the top level)
    stmts = {x.name: x for x in scop.statements}
    here = _stmts(node)
    names = [stmts[x] for x in here if x in stmts]
    if len(names) != len(here) or common_loops(names) < n or \
            any(tuple(x.iterators[:n]) != c.outer for x in names):
        return None
    for k in range(node.n_children()):  # each part: its first n members the outer loops, then dropped
        part = node.child(k).child(0)
        if part.get_type() == isl.schedule_node_type.band and part.band_n_member() >= n and \
                _leading(part, n, stmts):
            if part.band_n_member() > n:
                part = part.band_split(n)
            node = part.delete().parent().parent()
        else:
            return None
    return node.insert_partial_schedule(_band_of_all(names, n)).get_schedule()


def _leading(band: isl.ScheduleNode, n: int, stmts: dict) -> bool:
    """Whether the first *n* members of *band* are each statement's first *n* loops, as written."""
    mupa = band.band_get_partial_schedule()
    for m in range(n):
        for dom in sets_of(band.get_domain()):
            aff = single_aff(mupa.get_at(m), dom)
            if aff is None or not aff.get_constant_val().is_zero() or \
                    any(not aff.get_coefficient_val(isl.dim_type.param, p).is_zero()
                        for p in range(aff.dim(isl.dim_type.param))) or \
                    any(aff.get_coefficient_val(isl.dim_type.in_, d).to_python() != (1 if d == m else 0)
                        for d in range(aff.dim(isl.dim_type.in_))) or aff.dim(isl.dim_type.div) > 0:
                return False
    return True


def _band_of_all(statements: list, n: int) -> isl.MultiUnionPwAff:
    """The partial schedule ``S[x] -> [x0, ..., x_n-1]`` of every statement given."""
    mupa = None
    for x in statements:
        m = _band_of(x, tuple(x.iterators[:n]))
        mupa = m if mupa is None else mupa.union_add(m)
    return mupa


def statements_in(schedule: isl.Schedule) -> list[str]:
    """(for tests) the statements of a schedule's domain."""
    return sorted(s.get_tuple_name() for s in sets_of(schedule.get_domain()))


__all__ = ["BLOCK_COORDINATES", "Blocks", "Contraction", "Operand", "accumulation", "blocks_of", "blocks_text",
           "domain_pieces", "extents", "isolate", "own_dependences_ok", "parse_blocks", "recognize", "worth_blocking"]
