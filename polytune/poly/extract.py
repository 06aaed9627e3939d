"""Build a Scop (isl sets and maps) from a parsed region; reject what lies outside the polyhedral model."""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

import islpy as isl
from pycparser import c_ast, c_generator

from ..errors import UnsupportedError
from ..frontend import MIN_MAX, Region, c_spelling, int_type
from ..purity import PURE_FUNCTIONS
from .delinearize import DelinearizeError, FlatAccess, Poly, delinearize
from .islutil import CTX, isl_name
from .scop import Access, Array, Layout, Scop, Statement

_LITERAL = re.compile(r"\(?-?\d+\)?")  # an integer piece: its products stay affine
_TRUTH_OPS = frozenset({"<", "<=", ">", ">=", "==", "!=", "&&", "||"})
CONSTANT_PARAM_MIN = 8  # smaller constants stay literal; isl's scheduler is slow on constant bounds
_ASSIGN_OPS = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
_GEN = c_generator.CGenerator()
_NONE = object()
# the types whose values C converts in a cast or an assignment to a narrower range: (least, greatest)
_NARROW = {"char": (-128, 127), "signed char": (-128, 127), "unsigned char": (0, 255), "short": (-32768, 32767),
           "unsigned short": (0, 65535), "_Bool": (0, 1)}


class NonAffine(Exception):
    """An expression is not (quasi-)affine in the iterators and parameters."""


def _line(node: c_ast.Node | None, default: int) -> int:
    coord = getattr(node, "coord", None)
    return coord.line if coord is not None and coord.line else default


@dataclass
class _Loop:
    iterator: str
    sign: int  # +1 increasing, -1 decreasing


@dataclass
class _Builder:
    region: Region
    stmts: list = field(default_factory=list)
    params: dict = field(default_factory=dict)  # C name -> first line used
    param_uses: dict = field(default_factory=dict)  # C name -> what its first use reads (`reading`)
    reading: str = "loop bound"  # what the integer expression being read is: "loop bound", "subscript",
    # or "condition:x < 0"
    array_dims: dict = field(default_factory=dict)  # name -> ndim
    written: set = field(default_factory=set)
    hoisted: dict = field(default_factory=dict)  # name -> C declaration text
    iterators_all: set = field(default_factory=set)
    iterator_lines: dict = field(default_factory=dict)  # iterator assigned by a loop's init -> first line
    idents: set = field(default_factory=set)
    consts: dict = field(default_factory=dict)  # large integer constant -> parameter name
    where: list = field(default_factory=list)  # the constraints under which the expression being read runs
    # (node, iterators, where, pieces, why, unsigned names): an expression that must not be negative where
    # it runs; why: "value" (unsigned arithmetic), "down" (an unsigned iterator's step past 0), the name of
    # the unsigned iterator it initializes, the operation that converts it to unsigned, or a Cast (to an
    # unsigned type; to char or short, whose range it must be in: _NARROW)
    unsigned: list = field(default_factory=list)
    scoped: dict = field(default_factory=dict)  # name -> C type (c_spelling) of the names the region
    # declares, a loop's iterator while its loop is read; None for a type that is not arithmetic
    iterator_types: dict = field(default_factory=dict)  # statement name -> {iterator: its C type}
    flat: dict = field(default_factory=dict)  # array -> first line of a flattened (polynomial) subscript
    scopes: dict = field(default_factory=dict)  # id(ArrayRef) -> (iterators, where) where it was read
    polys: dict = field(default_factory=dict)  # id(ArrayRef) -> its last subscript as guarded polynomials
    guards: list = field(default_factory=list)  # the data-dependent conditions around the statement walked
    guarded: set = field(default_factory=set)  # statements under a data-dependent condition (may-writes)
    assigned: frozenset = frozenset()  # every name the region assigns (its conditions on them are data)
    cond_statements: set = field(default_factory=set)  # id of each `if` whose condition is a statement
    branch: list = field(default_factory=list)  # the conditions of the ternaries between values whose branch
    # is being read (`i > 0 ? A[i - 1] : 0`: A[i - 1] is read only where i > 0)
    taken: dict = field(default_factory=dict)  # id(ArrayRef) -> the conjunction of *branch* where it was read
    choices: dict = field(default_factory=dict)  # id of a ternary or min/max call read as pieces -> the
    # condition (isl text over the statement's iterators) under which it takes its first operand

    # ---- errors -------------------------------------------------------------------------------------
    def fail(self, node: c_ast.Node | None, msg: str) -> UnsupportedError:
        return UnsupportedError(msg, self.region.file, _line(node, self.region.begin_line))

    # ---- affine expressions as isl text ---------------------------------------------------------------
    # An integer expression is a list of pieces (guard, expr), disjoint guards in isl's constraint syntax:
    # C's ternaries and truncating divisions split into guarded pieces; an access's subscripts become
    # isl piecewise quasi-affine functions of these pieces (`_access_map`).
    def pieces(self, e: c_ast.Node, iters: tuple[str, ...]) -> list[tuple[str, str]]:
        out = self._pieces(e, iters)
        if isinstance(e, (c_ast.BinaryOp, c_ast.UnaryOp)) and e.op in ("+", "-", "*") \
                and (self.ctype(e) or (0, False))[1]:
            # C computes it modulo 2^bits: the model (integers) holds only where its value is not negative
            self.record(e, iters, out, "value")
        if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-", "*", "/", "%"):
            self.converted(e, iters)
        return out

    def converted(self, e: c_ast.BinaryOp, iters: tuple[str, ...]) -> None:
        """A signed operand that C converts to unsigned (`i < n`, `n - k` with n unsigned, k int) keeps its
        value only where it is not negative: recorded for the check."""
        a, b = self.ctype(e.left), self.ctype(e.right)
        if a is None or b is None or not _convert(a, b)[1]:
            return
        for side, t in ((e.left, a), (e.right, b)):
            if not t[1] and _const(side) is None or (_const(side) or 0) < 0:
                self.record(side, iters, self._pieces(side, iters), e)

    def record(self, node: c_ast.Node, iters: tuple[str, ...], pieces, why, where: list | None = None) -> None:
        """An expression that must not be negative (or, for a narrowing cast, must be in its type's range)
        where it runs: checked by `_check_unsigned` once the parameters are known."""
        names = {i for i in iters if self.wraps(i)}  # the names whose values are not negative
        names |= {n for n in self.region.scalar_types if self.wraps(n) and n not in self.scoped and n not in iters}
        self.unsigned.append((node, iters, list(self.where if where is None else where), pieces, why,
                              frozenset(names)))

    def unsigned_iterator(self, var: str, lb_expr: c_ast.Node, lbs, iters) -> None:
        """An unsigned iterator starts at its lower bound modulo 2^bits: the bound must not be negative."""
        if self.wraps(var) and not (self.ctype(lb_expr) or (0, False))[1]:
            self.record(lb_expr, iters, lbs, var)

    def wraps(self, var: str) -> bool:
        """Whether variable *var* has an unsigned type: below 0 it wraps around (unsigned char and unsigned
        short too, though their values promote to int)."""
        return (self.int_of(var) or (0, False))[1] or (self.c_type(var) or "").startswith("unsigned ")

    def c_type(self, name: str) -> str | None:
        """The C type (frontend.c_spelling) of variable *name* where the expression being read is: the
        region's own declarations (a loop's iterator inside its loop), else those in scope at the region."""
        if name in self.scoped:
            return self.scoped[name]
        return self.region.scalar_types.get(name)

    def int_of(self, name: str) -> tuple[int, bool] | None:
        """(bits, unsigned) of integer variable *name* (c_type); None if not an integer or not known."""
        t = self.c_type(name)
        return int_type(t.split()) if t else None

    def decl_type(self, decl: c_ast.Decl) -> str | None:
        """The C type of a declaration of the region (typedefs resolved), None where not arithmetic."""
        t = decl.type
        if not (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)):
            return None
        words = [w2 for w in t.type.names for w2 in self.region.typedef_words.get(w, (w,))]
        return c_spelling(words)

    def ctype(self, e: c_ast.Node) -> tuple[int, bool] | None:
        """(bits, unsigned) of an integer expression by C's usual arithmetic conversions (LP64); None where
        not an integer (or not known: names declared nowhere in the file count as int)."""
        if isinstance(e, c_ast.Constant):
            if _const(e) is None:
                return None
            suffix = e.value.lower()
            bits = 64 if "l" in suffix or abs(_const(e)) > 2 ** 31 - 1 else 32
            return bits, "u" in suffix
        if isinstance(e, c_ast.ID):
            return self.int_of(e.name) or (32, False)
        if isinstance(e, c_ast.Cast):
            return int_type(_GEN.visit(e.to_type).split())
        if isinstance(e, c_ast.UnaryOp):
            t = self.ctype(e.expr)
            return (32, False) if e.op == "!" else t if t is None or t[0] == 64 else (32, t[1])
        if isinstance(e, c_ast.BinaryOp):
            if e.op in _TRUTH_OPS:
                return 32, False
            a, b = self.ctype(e.left), self.ctype(e.right)
            if a is None or b is None:
                return None
            if e.op in ("<<", ">>"):
                return a
            return _convert(a, b)
        if isinstance(e, c_ast.TernaryOp):
            a, b = self.ctype(e.iftrue), self.ctype(e.iffalse)
            return None if a is None or b is None else _convert(a, b)
        return 32, False

    def _pieces(self, e: c_ast.Node, iters: tuple[str, ...]) -> list[tuple[str, str]]:
        if isinstance(e, c_ast.Constant):
            value = _const(e)
            if value is None:
                raise NonAffine(f"non-integer constant {e.value}")
            if abs(value) >= CONSTANT_PARAM_MIN:
                # Large constants (sizes fixed by macros) become parameters fixed by the context: isl's
                # scheduler is orders of magnitude slower on large constant bounds (heat-3d: minutes).
                name = self.consts.setdefault(abs(value), f"_pt_K{abs(value)}")
                return [("true", name if value > 0 else f"(-{name})")]
            return [("true", str(value))]
        if isinstance(e, c_ast.ID):
            self.idents.add(e.name)
            if e.name not in iters and e.name in self.region.float_scalars:
                raise NonAffine(f"'{e.name}' is a floating-point value")
            if e.name not in iters:
                self.params.setdefault(e.name, _line(e, self.region.begin_line))
                self.param_uses.setdefault(e.name, self.reading)
            return [("true", isl_name(e.name))]
        if isinstance(e, c_ast.UnaryOp):
            if e.op == "-":
                return [(g, f"(-{x})") for g, x in self.pieces(e.expr, iters)]
            if e.op == "+":
                return self.pieces(e.expr, iters)
            if e.op == "!":
                return self.truth_value(e, iters)
            raise NonAffine(f"operator '{e.op}'")
        if isinstance(e, c_ast.Cast):
            out = self.pieces(e.expr, iters)
            to, spelling = self.ctype(e), c_spelling(_GEN.visit(e.to_type).split())
            if to is not None and (to[1] and not (self.ctype(e.expr) or (0, False))[1] or spelling in _NARROW):
                self.record(e, iters, out, e)  # a negative value cast to unsigned, a char out of its range
            return out
        if isinstance(e, c_ast.BinaryOp) and e.op in _TRUTH_OPS:
            return self.truth_value(e, iters)
        if isinstance(e, c_ast.BinaryOp) and e.op in ("<<", ">>", "&"):
            k = _const(e.right)
            if e.op == "&" and k is not None and k >= 0 and (k + 1) & k == 0:  # a mask 2^b - 1: mod 2^b
                return [(g, f"(({x}) mod {k + 1})") for g, x in self.pieces(e.left, iters)]
            if e.op != "&" and k is not None and 0 <= k < 31:  # * 2^k, floor(/ 2^k): an arithmetic shift
                return [(g, f"({x} * {2 ** k})" if e.op == "<<" else f"floor(({x})/{2 ** k})")
                        for g, x in self.pieces(e.left, iters)]
            raise NonAffine(f"operator '{e.op}' by {'a non-constant' if k is None else _GEN.visit(e.right)}")
        if isinstance(e, c_ast.BinaryOp) and e.op not in ("+", "-", "*", "/", "%"):
            raise NonAffine(f"operator '{e.op}'")
        if isinstance(e, c_ast.BinaryOp):
            if e.op == "*" and _const(e.left) is None and _const(e.right) is None:
                left, right = self.pieces(e.left, iters), self.pieces(e.right, iters)
                if all(_LITERAL.fullmatch(x) for _, x in left) or all(_LITERAL.fullmatch(x) for _, x in right):
                    return _combine(left, right, lambda a, b: f"({a} * {b})")  # `(i > 0) * (i - 1)`
            if e.op in ("*", "/", "%") and _const(e.right) is None and not (e.op == "*" and
                                                                            _const(e.left) is not None):
                raise NonAffine("product of two variables" if e.op == "*" else f"'{e.op}' by a non-constant")
            if e.op == "*":  # keep the constant factor literal: a parameter times an iterator is not affine
                lc, rc = _const(e.left), _const(e.right)
                if rc is not None:
                    return [(g, f"({x} * {rc})") for g, x in self.pieces(e.left, iters)]
                return [(g, f"({lc} * {x})") for g, x in self.pieces(e.right, iters)]
            left = self.pieces(e.left, iters)
            right = self.pieces(e.right, iters) if e.op in ("+", "-") else []
            if e.op in ("+", "-"):
                return _combine(left, right, lambda a, b: f"({a} {e.op} {b})")
            d = _const(e.right)
            if not d:
                raise NonAffine("division by zero")
            out = []
            for g, a in left:
                # C truncates toward zero; isl's floor rounds down: split on the sign of the dividend.
                q_pos, q_neg = f"floor(({a})/{abs(d)})", f"(-floor((-({a}))/{abs(d)}))"
                for sign_guard, q in ((f"{a} >= 0", q_pos), (f"{a} < 0", q_neg)):
                    if e.op == "/":
                        val = q if d > 0 else f"(-{q})"
                    else:
                        val = f"(({a}) - {abs(d)} * {q})"
                    out.append((_and(g, sign_guard), val))
            return out
        if isinstance(e, c_ast.TernaryOp):
            c = self.condition(e.cond, iters)
            self.choices[id(e)] = c
            return [(_and(c, g), x) for g, x in self.pieces(e.iftrue, iters)] + \
                   [(_and(f"not ({c})", g), x) for g, x in self.pieces(e.iffalse, iters)]
        if isinstance(e, c_ast.FuncCall) and isinstance(e.name, c_ast.ID) \
                and e.name.name in MIN_MAX and e.args and len(e.args.exprs) == 2:
            x, y = (self.pieces(a, iters) for a in e.args.exprs)
            cmp = "<=" if e.name.name.lower() == "min" else ">="
            self.choices[id(e)] = " or ".join(f"({_and(_and(ga, gb), f'{a} {cmp} {b}')})" for ga, a in x for gb, b in y)
            return _combine(x, y, lambda a, b: f"{e.name.name.lower()}({a}, {b})")
        if isinstance(e, c_ast.FuncCall) and isinstance(e.name, c_ast.ID) and e.name.name in ("floord", "ceild") \
                and e.args and len(e.args.exprs) == 2 and (_const(e.args.exprs[1]) or 0) > 0:
            d = _const(e.args.exprs[1])  # Pluto's (and CLooG's) integer division rounding down / up
            if e.name.name == "floord":
                return [(g, f"floor(({x})/{d})") for g, x in self.pieces(e.args.exprs[0], iters)]
            return [(g, f"(-floor((-({x}))/{d}))") for g, x in self.pieces(e.args.exprs[0], iters)]
        if isinstance(e, c_ast.ArrayRef):
            raise NonAffine("array element")
        if isinstance(e, c_ast.FuncCall):
            raise NonAffine("function call")
        raise NonAffine(type(e).__name__)

    def poly_pieces(self, e: c_ast.Node, iters: tuple[str, ...]) -> list[tuple[str, Poly]]:
        """A subscript as guarded polynomials in the iterators and parameters, products kept (`i*n + j`: for
        delinearization); NonAffine for anything else (divisions, array elements, calls)."""
        if isinstance(e, c_ast.Constant):
            value = _const(e)
            if value is None:
                raise NonAffine(f"non-integer constant {e.value}")
            return [("true", Poly.const(value))]
        if isinstance(e, c_ast.ID):
            self.idents.add(e.name)
            if e.name not in iters and e.name in self.region.float_scalars:
                raise NonAffine(f"'{e.name}' is a floating-point value")
            if e.name not in iters:
                self.params.setdefault(e.name, _line(e, self.region.begin_line))
            return [("true", Poly.name(e.name))]
        if isinstance(e, c_ast.Cast):
            return self.poly_pieces(e.expr, iters)
        if isinstance(e, c_ast.UnaryOp) and e.op in ("-", "+"):
            return [(g, -x if e.op == "-" else x) for g, x in self.poly_pieces(e.expr, iters)]
        if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-", "*"):
            left, right = self.poly_pieces(e.left, iters), self.poly_pieces(e.right, iters)
            op = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}[e.op]
            return [(_and(ga, gb), op(a, b)) for ga, a in left for gb, b in right]
        if isinstance(e, c_ast.TernaryOp):
            c = self.condition(e.cond, iters)
            self.choices[id(e)] = c
            return [(_and(c, g), x) for g, x in self.poly_pieces(e.iftrue, iters)] + \
                   [(_and(f"not ({c})", g), x) for g, x in self.poly_pieces(e.iffalse, iters)]
        raise NonAffine(f"operator '{e.op}'" if isinstance(e, (c_ast.BinaryOp, c_ast.UnaryOp)) else type(e).__name__)

    def flat_pieces(self, ref: c_ast.ArrayRef, e: c_ast.Node, iters: tuple[str, ...]) -> list[tuple[str, Poly]]:
        """`poly_pieces` of access *ref*'s subscript *e*, each guarded by the ternaries' branches *ref* is read in."""
        taken = self.taken.get(id(ref), "true")
        return [(_and(g, taken), x) for g, x in self.poly_pieces(e, iters)]

    def truth_value(self, e: c_ast.Node, iters: tuple[str, ...]) -> list[tuple[str, str]]:
        """A comparison or logical expression used as an integer: 1 where it holds, 0 elsewhere."""
        c = self.condition(e, iters)
        return [(f"({c})", "1"), (f"not ({c})", "0")]

    def condition(self, e: c_ast.Node, iters: tuple[str, ...]) -> str:
        if isinstance(e, c_ast.BinaryOp):
            if e.op in ("&&", "||"):
                op = "and" if e.op == "&&" else "or"
                return f"(({self.condition(e.left, iters)}) {op} ({self.condition(e.right, iters)}))"
            cmp = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "=", "!=": "!="}.get(e.op)
            if cmp:
                self.converted(e, iters)
                terms = []
                for (ga, a), (gb, b) in ((x, y) for x in self.pieces(e.left, iters)
                                         for y in self.pieces(e.right, iters)):
                    rel = f"({a} < {b} or {a} > {b})" if cmp == "!=" else f"{a} {cmp} {b}"
                    terms.append(_and(_and(ga, gb), rel))
                return " or ".join(f"({t})" for t in terms)
        if isinstance(e, c_ast.UnaryOp) and e.op == "!":
            return f"not ({self.condition(e.expr, iters)})"
        # A plain integer expression used as a truth value.
        return " or ".join(f"({_and(g, f'({x} < 0 or {x} > 0)')})" for g, x in self.pieces(e, iters))

    # ---- walking statements --------------------------------------------------------------------------
    def walk(self, node, loops: list[_Loop], conds: list[str]) -> None:
        if node is None or isinstance(node, (c_ast.EmptyStatement, c_ast.Pragma)):
            return
        if isinstance(node, c_ast.Compound):
            for item in node.block_items or []:
                if isinstance(item, (c_ast.EmptyStatement, c_ast.Pragma)):
                    continue
                if isinstance(item, c_ast.Decl) and item.init is None:
                    self.declare(item)
                    continue
                self.walk(item, loops, conds)
            return
        if isinstance(node, c_ast.For):
            self.walk_for(node, loops, conds)
        elif isinstance(node, c_ast.If):
            iters = tuple(lp.iterator for lp in loops)
            self.where = conds
            self.reading = f"condition:{_GEN.visit(node.cond)}"
            try:
                if _names(node.cond, iters) & self.assigned:
                    raise NonAffine("reads a value the region writes")
                c = self.condition(node.cond, iters)
            except NonAffine:
                self.data_condition(node, loops, conds)
                return
            self.walk(node.iftrue, loops, conds + [c])
            if node.iffalse is not None:
                self.walk(node.iffalse, loops, conds + [f"not ({c})"])
        elif isinstance(node, c_ast.Decl):
            self.declare(node)
            if node.init is not None:
                if isinstance(node.init, c_ast.InitList):
                    raise self.fail(node, "initializer list inside the scop")
                assign = c_ast.Assignment("=", c_ast.ID(node.name, coord=node.coord), node.init,
                                          coord=node.coord)
                self.statement(assign, loops, conds, key=id(node))
        elif isinstance(node, c_ast.DeclList):
            for d in node.decls:
                self.walk(d, loops, conds)
        elif isinstance(node, (c_ast.Assignment, c_ast.UnaryOp, c_ast.FuncCall, c_ast.ExprList)):
            self.statement(node, loops, conds, key=id(node))
        else:
            what = {c_ast.While: "'while' loop", c_ast.DoWhile: "'do-while' loop", c_ast.Goto: "'goto'",
                    c_ast.Label: "label", c_ast.Break: "'break'", c_ast.Continue: "'continue'",
                    c_ast.Return: "'return'", c_ast.Switch: "'switch'"}.get(type(node))
            raise self.fail(node, f"{what or type(node).__name__ + ' statement'} inside the scop "
                                  "is not supported")

    def data_condition(self, node: c_ast.If, loops: list[_Loop], conds: list[str]) -> None:
        """An `if` whose condition depends on data (array elements, values the region writes, floating-point
        values): each statement of its branches runs under it (its reads are the statement's, its writes
        may-writes), as pet and PPCG model it. Conjuncts of a plain `a && b` that are affine go to the
        domains."""
        iters = tuple(lp.iterator for lp in loops)
        if _assigned(node.cond):
            raise self.fail(node, f"the condition of this 'if' has a side effect: {_GEN.visit(node.cond)}")
        data, affine = [node.cond], []
        if node.iffalse is None:
            data = []
            for part in _conjuncts(node.cond):
                try:
                    if _names(part, iters) & self.assigned:
                        raise NonAffine("data")
                    affine.append(self.condition(part, iters))
                except NonAffine:
                    data.append(part)
        guard = data[0] if len(data) == 1 else _conjunction(data)
        # Each statement of the branches evaluates the condition again, which gives C's value where no
        # statement of them writes what it reads, or where the branch is one statement run once per
        # evaluation (`if (x[i] < 0) x[i] = 0;`). Otherwise (`if (d < best) { best = d; arg = c; }`) the
        # condition is evaluated once, into a variable of the region, as C does; the branches read it.
        single = node.iffalse is None and _statements(node.iftrue) == 1
        if not single and _names(guard, ()) & (_assigned(node.iftrue) | _assigned(node.iffalse)):
            k = 0
            while re.search(rf"\b_pt_cond{k}\b", self.region.text) or f"_pt_cond{k}" in self.hoisted:
                k += 1
            tmp = f"_pt_cond{k}"
            self.hoisted[tmp] = f"int {tmp};"
            self.idents.add(tmp)
            self.statement(c_ast.Assignment("=", c_ast.ID(tmp, coord=node.coord), c_ast.BinaryOp(
                "!=", guard, c_ast.Constant("int", "0"), coord=node.coord), coord=node.coord),
                loops, conds + affine, key=id(node))
            self.cond_statements.add(id(node))
            guard = c_ast.ID(tmp, coord=node.coord)
        self.guards.append(guard)
        try:
            self.walk(node.iftrue, loops, conds + affine)
        finally:
            self.guards.pop()
        if node.iffalse is not None:
            self.guards.append(c_ast.UnaryOp("!", guard, coord=guard.coord))
            try:
                self.walk(node.iffalse, loops, conds)
            finally:
                self.guards.pop()

    def declare(self, decl: c_ast.Decl) -> None:
        """Hoist a declaration of the region to its start, without its initializer (which becomes an
        assignment) and so without a top-level `const` (`const double a = x[k];` is assigned there)."""
        self.scoped[decl.name] = self.decl_type(decl)
        bare = copy.copy(decl)
        bare.init = None
        if decl.init is not None:
            bare.quals = [q for q in decl.quals if q != "const"]
            if isinstance(decl.type, (c_ast.TypeDecl, c_ast.PtrDecl)):
                bare.type = copy.copy(decl.type)
                bare.type.quals = [q for q in decl.type.quals if q != "const"]
        text = _GEN.visit(bare) + ";"
        old = self.hoisted.get(decl.name)
        if old is not None and old != text:
            raise self.fail(decl, f"'{decl.name}' is declared twice with different types inside the scop")
        self.hoisted[decl.name] = text

    def walk_for(self, node: c_ast.For, loops, conds) -> None:
        iters = tuple(lp.iterator for lp in loops)
        init = node.init
        if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None:
            var, lb_expr = init.decls[0].name, init.decls[0].init
        elif isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
            var, lb_expr = init.lvalue.name, init.rvalue
        else:
            raise self.fail(node, "unsupported 'for' initialization (need 'i = expr' or 'int i = expr')")
        if var in iters:
            raise self.fail(node, f"loop iterator '{var}' reused by a nested loop")
        step = _step(node.next, var)
        if step is None or step == 0:
            raise self.fail(node, f"unsupported 'for' increment (need {var}++, {var}--, {var} += c "
                                  "with a constant c)")
        if node.cond is None:
            raise self.fail(node, "'for' loop without a condition")
        if isinstance(node.cond, c_ast.BinaryOp) and node.cond.op in ("!=", "=="):
            raise self.fail(node, f"loop condition with '{node.cond.op}' is not supported (need <, <=, > or >=)")
        self.iterators_all.add(var)
        outer = self.scoped.get(var, _NONE)
        if isinstance(init, c_ast.DeclList):  # in C, the iterator has the type it is declared with here
            self.scoped[var] = self.decl_type(init.decls[0])
        try:
            self.walk_loop(node, var, step, lb_expr, loops, conds)
        finally:  # after the loop, its iterator's name means what it meant before
            if outer is _NONE:
                self.scoped.pop(var, None)
            else:
                self.scoped[var] = outer

    def walk_loop(self, node: c_ast.For, var: str, step: int, lb_expr: c_ast.Node, loops, conds) -> None:
        iters = tuple(lp.iterator for lp in loops)
        init = node.init
        new_iters = iters + (var,)
        if not isinstance(init, c_ast.DeclList):
            self.iterator_lines.setdefault(var, _line(node, self.region.begin_line))
        v = isl_name(var)
        rel = ">=" if step > 0 else "<="
        stride = "" if abs(step) == 1 else " and exists (e0 : {v} = {lb} + {step} * e0)"
        try:
            self.where = conds
            self.reading = "loop bound"
            lbs = self.pieces(lb_expr, iters)
            self.unsigned_iterator(var, lb_expr, lbs, iters)
            first = " or ".join(f"({_and(g, f'{v} {rel} {lb}' + stride.format(v=v, lb=lb, step=step))})"
                                for g, lb in lbs)
            self.where = conds + [first]
            checks = len(self.unsigned)
            cond = self.condition(node.cond, new_iters)
            # C evaluates the condition at the start and after each trip, where it held one step before:
            # what it converts to unsigned needs to be non-negative there only (`j >= i` with an int j
            # counting down and an unsigned i is never evaluated at j < i - 1)
            start = " or ".join(f"({_and(g, f'{v} = {lb}')})" for g, lb in lbs)
            before = re.sub(rf"(?<![\w.]){re.escape(v)}(?![\w.])", f"({v} - {step})", cond)
            self.unsigned[checks:] = [(n, it, conds + [first, f"({start}) or ({before})"], p, why, names)
                                      for n, it, _, p, why, names in self.unsigned[checks:]]
        except NonAffine as e:
            raise self.fail(node, f"non-affine loop bound ({e}): "
                                  f"for ({_GEN.visit(init)}; {_GEN.visit(node.cond)}; ...)") from None
        c = [first, cond]
        if step < 0 and self.wraps(var):  # i-- from 0 wraps around
            self.record(node, new_iters, [("true", f"{v} - 1")], "down", conds + c)
        self.walk(node.stmt, loops + [_Loop(var, 1 if step > 0 else -1)], conds + c)

    def statement(self, expr: c_ast.Node, loops: list[_Loop], conds: list[str], key: int) -> None:
        iters = tuple(lp.iterator for lp in loops)
        line = _line(expr, self.region.begin_line)
        name = f"S{len(self.stmts)}"
        accesses: list[tuple[str, list[str], bool, c_ast.Node]] = []
        self.where = conds
        self.collect(expr, iters, accesses, is_write=False, top=True)
        if self.guards:  # under data-dependent conditions: they are read, and the writes may not happen
            for g in self.guards:
                self.collect(g, iters, accesses, is_write=False)
            guard = self.guards[0] if len(self.guards) == 1 else _conjunction(self.guards)
            expr = c_ast.If(guard, expr, None, coord=expr.coord)
            self.guarded.add(name)
        self.stmts.append((name, iters, list(conds), [lp.sign for lp in loops], expr, line, accesses, key))
        self.iterator_types[name] = {i: self.c_type(i) for i in iters}

    def collect(self, e, iters, out, is_write: bool, top: bool = False) -> None:
        """Record the accesses of expression *e* into *out* as (array, subscripts, is_write, node)."""
        if e is None or isinstance(e, c_ast.Constant):
            return
        if isinstance(e, c_ast.Assignment):
            if e.op not in _ASSIGN_OPS:
                raise self.fail(e, f"assignment operator '{e.op}'")
            self.lvalue(e.lvalue, iters, out, read_too=e.op != "=")
            self.collect(e.rvalue, iters, out, False)
            return
        if isinstance(e, c_ast.UnaryOp):
            if e.op in ("++", "--", "p++", "p--"):
                self.lvalue(e.expr, iters, out, read_too=True)
                return
            if e.op == "*":
                raise self.fail(e, "pointer dereference inside the scop is not supported")
            if e.op == "&":
                raise self.fail(e, "taking an address inside the scop is not supported")
            if e.op == "sizeof":
                return
            self.collect(e.expr, iters, out, False)
            return
        if isinstance(e, c_ast.ArrayRef):
            self.array_ref(e, iters, out, is_write)
            return
        if isinstance(e, c_ast.ID):
            self.idents.add(e.name)
            if e.name in iters:
                if is_write:
                    raise self.fail(e, f"loop iterator '{e.name}' is assigned inside the loop body")
                return
            self.note_array(e, e.name, 0)
            out.append((e.name, [], is_write, e))
            return
        if isinstance(e, c_ast.BinaryOp):
            self.collect(e.left, iters, out, False)
            self.collect(e.right, iters, out, False)
            return
        if isinstance(e, c_ast.TernaryOp):
            c = self.value_condition(e.cond, iters)
            if c is None:
                for sub in (e.cond, e.iftrue, e.iffalse):
                    self.collect(sub, iters, out, False)
                return
            self.choices[id(e)] = c
            for sub, branch in ((e.iftrue, c), (e.iffalse, f"not ({c})")):
                self.branch.append(branch)
                try:
                    self.collect(sub, iters, out, False)
                finally:
                    self.branch.pop()
            return
        if isinstance(e, c_ast.Cast):
            self.collect(e.expr, iters, out, False)
            return
        if isinstance(e, c_ast.ExprList):
            for sub in e.exprs:
                self.collect(sub, iters, out, False, top=top)
            return
        if isinstance(e, c_ast.FuncCall):
            fname = e.name.name if isinstance(e.name, c_ast.ID) else None
            declared = fname in self.region.pure_functions and fname not in PURE_FUNCTIONS
            if fname not in PURE_FUNCTIONS and not declared:
                name = fname or _GEN.visit(e.name)
                raise self.fail(e, f"call to '{name}' inside the scop: its side effects are unknown (if it has "
                                   f"none, declare it __attribute__((pure)) in the file or pass --pure {name})")
            if top:
                raise self.fail(e, f"call to '{fname}' as a statement has no effect")
            for a in (e.args.exprs if e.args else []):
                if declared and isinstance(a, (c_ast.ID, c_ast.ArrayRef)):
                    self.call_argument(a, iters, out)
                else:
                    self.collect(a, iters, out, False)
            return
        if isinstance(e, c_ast.StructRef):
            raise self.fail(e, "struct member access inside the scop is not supported")
        if isinstance(e, c_ast.CompoundLiteral):
            raise self.fail(e, "compound literal inside the scop is not supported")
        raise self.fail(e, f"unsupported expression ({type(e).__name__}) inside the scop")

    def value_condition(self, cond: c_ast.Node, iters: tuple[str, ...]) -> str | None:
        """The condition of a ternary between values (`i > 0 ? A[i - 1] : 0`) as isl text where it is affine
        in the iterators and parameters (its branches' elements are then read only where they are taken); None
        where it reads data (elements, floating-point values, what the region writes) or has a side effect."""
        names = _names(cond, iters)
        if _assigned(cond) or names & self.assigned or any(self.int_of(n) is None for n in names):
            return None  # (a pointer's test, `p != NULL`, is no parameter either)
        reading, params, uses, checks = self.reading, dict(self.params), dict(self.param_uses), len(self.unsigned)
        self.reading = f"condition:{_GEN.visit(cond)}"
        try:
            c = self.condition(cond, iters)
            if len(self.unsigned) == checks:
                return c
        except NonAffine:
            pass
        finally:
            self.reading = reading
        # names it met are no parameters; a value C converts to unsigned in it (`i > k`, unsigned i, int k) is
        # no check of the region's: the condition stays a value, as C computes it
        self.params, self.param_uses = params, uses
        del self.unsigned[checks:]
        return None

    def lvalue(self, e, iters, out, read_too: bool) -> None:
        if isinstance(e, c_ast.ArrayRef):
            self.array_ref(e, iters, out, True)
            if read_too:
                self.array_ref(e, iters, out, False)
        elif isinstance(e, c_ast.ID):
            if e.name in iters:
                raise self.fail(e, f"loop iterator '{e.name}' is assigned inside the loop body")
            self.idents.add(e.name)
            self.note_array(e, e.name, 0)
            out.append((e.name, [], True, e))
            if read_too:
                out.append((e.name, [], False, e))
        elif isinstance(e, c_ast.UnaryOp) and e.op == "*":
            raise self.fail(e, "pointer dereference inside the scop is not supported")
        else:
            raise self.fail(e, f"unsupported assignment target ({type(e).__name__})")

    def array_ref(self, e: c_ast.ArrayRef, iters, out, is_write: bool) -> None:
        subs = []
        node = e
        while isinstance(node, c_ast.ArrayRef):
            subs.append(node.subscript)
            node = node.name
        subs.reverse()
        if not isinstance(node, c_ast.ID):
            raise self.fail(e, f"unsupported array base '{_GEN.visit(node)}' (pointer arithmetic or call)")
        self.idents.add(node.name)
        self.reading = "subscript"
        pieces = []
        self.scopes[id(e)] = (iters, list(self.where))
        taken = _conjunction_text(self.branch)  # (the ternaries' branches it is read in: only there)
        if taken != "true":
            self.taken[id(e)] = taken
        for k, s in enumerate(subs):
            try:
                pieces.append([(_and(g, taken), x) for g, x in self.pieces(s, iters)])
            except NonAffine as err:
                try:  # the last subscript may be flattened by hand (`A[i*n + j]`): poly/delinearize.py
                    if k < len(subs) - 1:
                        raise
                    self.polys[id(e)] = self.flat_pieces(e, s, iters)
                except NonAffine:
                    raise self.fail(e, f"non-affine subscript ({err}): {_GEN.visit(e)}") from None
                self.flat.setdefault(node.name, _line(e, self.region.begin_line))
                pieces.append(None)  # (the view's dimensions, once every access of the array is known)
        self.note_array(e, node.name, len(subs))
        out.append((node.name, pieces, is_write, e))

    def call_argument(self, e: c_ast.ID | c_ast.ArrayRef, iters, out) -> None:
        """An argument of a user's pure function: an array passed by name is read whole, a row `A[i]` of a
        2-d array reads the row, an element reads the element (the array's rank is known once the whole
        region is read: `_Slice`)."""
        if isinstance(e, c_ast.ID) and e.name in iters:
            return
        subs, node = [], e
        while isinstance(node, c_ast.ArrayRef):
            subs.append(node.subscript)
            node = node.name
        if not isinstance(node, c_ast.ID):
            raise self.fail(e, f"unsupported array base '{_GEN.visit(node)}' (pointer arithmetic or call)")
        self.idents.add(node.name)
        self.reading = "subscript"
        pieces = _Slice()
        for s in reversed(subs):
            try:
                pieces.append(self.pieces(s, iters))
            except NonAffine as err:
                raise self.fail(e, f"non-affine subscript ({err}): {_GEN.visit(e)}") from None
        out.append((node.name, pieces, False, e))

    def note_array(self, node, name: str, ndim: int) -> None:
        old = self.array_dims.setdefault(name, ndim)
        if old != ndim:
            raise self.fail(node, f"'{name}' is used with {old} and with {ndim} subscripts")


def _names(e: c_ast.Node, iters: tuple[str, ...]) -> set[str]:
    """The variables an expression reads (array names included; not called functions, not *iters*)."""
    out: set[str] = set()

    def visit(n: c_ast.Node) -> None:
        if isinstance(n, c_ast.ID):
            if n.name not in iters:
                out.add(n.name)
            return
        if isinstance(n, c_ast.FuncCall):
            if n.args is not None:
                visit(n.args)
            return
        if isinstance(n, c_ast.StructRef):
            visit(n.name)
            return
        for _, child in n.children():
            visit(child)

    visit(e)
    return out


def _assigned(e: c_ast.Node | None) -> set[str]:
    """The variables a statement or expression assigns (the base name of an assigned element)."""
    out: set[str] = set()

    def base(n: c_ast.Node) -> None:
        while isinstance(n, (c_ast.ArrayRef, c_ast.StructRef)):
            n = n.name
        while isinstance(n, c_ast.UnaryOp) and n.op == "*":
            n = n.expr
        if isinstance(n, c_ast.ID):
            out.add(n.name)

    def visit(n: c_ast.Node | None) -> None:
        if n is None:
            return
        if isinstance(n, c_ast.Assignment):
            base(n.lvalue)
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"):
            base(n.expr)
        elif isinstance(n, c_ast.Decl) and n.name:
            out.add(n.name)
        for _, child in n.children():
            visit(child)

    visit(e)
    return out


def _statements(e: c_ast.Node | None) -> int:
    """How many statements a branch runs per evaluation of its condition, at least (a loop counts as 2)."""
    if e is None or isinstance(e, (c_ast.EmptyStatement, c_ast.Pragma)):
        return 0
    if isinstance(e, (c_ast.For, c_ast.While, c_ast.DoWhile)):
        return 2
    if isinstance(e, c_ast.Compound):
        return sum(_statements(x) for x in e.block_items or [])
    if isinstance(e, c_ast.If):  # (both branches: each statement evaluates the conditions around it again)
        return _statements(e.iftrue) + _statements(e.iffalse)
    if isinstance(e, c_ast.Decl):
        return 1 if e.init is not None else 0
    return 1


def _conjuncts(e: c_ast.Node) -> list[c_ast.Node]:
    if isinstance(e, c_ast.BinaryOp) and e.op == "&&":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def _conjunction(parts: list[c_ast.Node]) -> c_ast.Node:
    out = parts[0]
    for p in parts[1:]:
        out = c_ast.BinaryOp("&&", out, p, coord=out.coord)
    return out


def _and(a: str, b: str) -> str:
    if a == "true":
        return b
    if b == "true":
        return a
    return f"({a}) and ({b})"


class _Slice(list):
    """The leading subscripts of an array passed to a user's pure function: it reads every element below."""


def _conjunction_text(conds: list[str]) -> str:
    out = "true"
    for c in conds:
        out = _and(out, f"({c})")
    return out


def _choices(b, expr: c_ast.Node, head: str, domain: isl.Set) -> tuple:
    """For each choice of *expr* (its ternaries and min/max calls in pre-order: `choice_nodes`), the instances of
    the statement (*head*: ``[params] -> { S[i, ...]``) where it takes its first operand; None where it was not
    read as pieces (a choice between values, or a condition on data). () where none was."""
    out = []
    for node in choice_nodes(expr):
        c = b.choices.get(id(node))
        try:
            out.append(None if c is None else isl.Set(f"{head} : {c} }}", context=CTX).intersect(domain))
        except isl.Error:
            out.append(None)
    return tuple(out) if any(x is not None for x in out) else ()


def choice_nodes(expr: c_ast.Node) -> list:
    """The ternaries and two-operand min/max calls of *expr*, in pre-order (a copy of *expr* has its own, in the
    same order: `Statement.choices` holds one entry for each)."""
    out = []

    def visit(n: c_ast.Node) -> None:
        if isinstance(n, c_ast.TernaryOp) or isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) \
                and n.name.name in MIN_MAX and n.args is not None and len(n.args.exprs) == 2:
            out.append(n)
        for _, child in n.children():
            visit(child)

    visit(expr)
    return out


def _access_map(head: str, array: str, subs: list[list[tuple[str, str]]], ndim: int | None = None) -> isl.Map:
    """``S[i, ...] -> A[...]`` from each subscript's guarded pieces (*head*: ``[params] -> { S[i, ...]``): every
    subscript is an isl piecewise quasi-affine function, the union of its pieces over their (disjoint) guards."""
    if ndim is not None and ndim > len(subs):  # the elements of a row, or of the whole array
        free = ", ".join(f"_pt_o{k}" for k in range(ndim - len(subs)))
        rest = isl.Map(f"{head} -> [{free}] }}", context=CTX)
        return (_access_map(head, "", subs).flat_range_product(rest) if subs else rest) \
            .set_tuple_name(isl.dim_type.out, array)
    if not subs:
        return isl.Map(f"{head} -> {array}[] }}", context=CTX)
    rel = None
    for pieces in subs:
        pa = None
        for guard, expr in pieces:
            piece = isl.PwAff(f"{head} -> [({expr})] : {guard} }}", context=CTX)
            pa = piece if pa is None else pa.union_add(piece)
        m = isl.Map.from_pw_aff(pa)
        rel = m if rel is None else rel.flat_range_product(m)
    return rel.set_tuple_name(isl.dim_type.out, array)


def _combine(left, right, op) -> list[tuple[str, str]]:
    return [(_and(ga, gb), op(a, b)) for ga, a in left for gb, b in right]


def _convert(a: tuple[int, bool], b: tuple[int, bool]) -> tuple[int, bool]:
    """C's usual arithmetic conversions of two integer types (bits, unsigned), after promotion to int."""
    if a[1] == b[1]:
        return max(a[0], b[0]), a[1]
    u, s = (a, b) if a[1] else (b, a)
    return u if u[0] >= s[0] else s  # a wider signed type holds every value of the unsigned one


def _const(e) -> int | None:
    if isinstance(e, c_ast.Constant) and e.type.startswith(("int", "long", "unsigned")):
        v = e.value.rstrip("uUlL")
        if len(v) > 1 and v[0] == "0" and v[1] not in "xXbB":
            return int(v, 8)
        return int(v, 0)
    if isinstance(e, c_ast.UnaryOp) and e.op == "-":
        v = _const(e.expr)
        return -v if v is not None else None
    return None


def _step(nxt, var: str) -> int | None:
    if isinstance(nxt, c_ast.UnaryOp) and isinstance(nxt.expr, c_ast.ID) and nxt.expr.name == var:
        return {"++": 1, "p++": 1, "--": -1, "p--": -1}.get(nxt.op)
    if isinstance(nxt, c_ast.Assignment) and isinstance(nxt.lvalue, c_ast.ID) and nxt.lvalue.name == var:
        if nxt.op in ("+=", "-="):
            c = _const(nxt.rvalue)
            return None if c is None else (c if nxt.op == "+=" else -c)
        if nxt.op == "=" and isinstance(nxt.rvalue, c_ast.BinaryOp) and nxt.rvalue.op in ("+", "-"):
            r = nxt.rvalue
            if isinstance(r.left, c_ast.ID) and r.left.name == var:
                c = _const(r.right)
                return None if c is None else (c if r.op == "+" else -c)
            if r.op == "+" and isinstance(r.right, c_ast.ID) and r.right.name == var:
                return _const(r.left)
    return None


def _positions(body: c_ast.Compound, cond_statements: frozenset | set = frozenset()) -> dict[int, list[int]]:
    """Textual position of every statement-producing node per loop level (the even dims of 2d+1); an `if`
    in *cond_statements* (ids) produces its condition's statement before its branches."""
    out: dict[int, list[int]] = {}

    def level(stmt, prefix: list[int]) -> None:
        counter = [0]

        def visit(node) -> None:
            if node is None or isinstance(node, (c_ast.EmptyStatement, c_ast.Pragma)):
                return
            if isinstance(node, c_ast.Compound):
                for item in node.block_items or []:
                    visit(item)
            elif isinstance(node, c_ast.If):
                if id(node) in cond_statements:
                    out[id(node)] = prefix + [counter[0]]
                    counter[0] += 1
                visit(node.iftrue)
                visit(node.iffalse)
            elif isinstance(node, c_ast.For):
                level(node.stmt, prefix + [counter[0]])
                counter[0] += 1
            elif isinstance(node, c_ast.DeclList):
                for d in node.decls:
                    visit(d)
            elif isinstance(node, c_ast.Decl) and node.init is None:
                return
            else:
                out[id(node)] = prefix + [counter[0]]
                counter[0] += 1

        visit(stmt)

    level(body, [])
    return out


def _check_iterators_used_outside(b: _Builder) -> None:
    """A loop iterator read where it is not the counter of an enclosing loop (after its loop: C gives it
    the exit value) is not a constant of the region: refuse it rather than read the value it had before."""
    uses = [(line, p) for p, line in b.params.items() if p in b.iterators_all]
    uses += [(_line(node, line), array) for (_, _, _, _, _, line, accesses, _) in b.stmts
             for (array, _, _, node) in accesses if array in b.iterators_all]
    if uses:
        line, name = min(uses)
        raise UnsupportedError(f"loop iterator '{name}' is read outside its loop (its value after the loop "
                               "is not modeled)", b.region.file, line)


def _cast_iterators(expr: c_ast.Node, types: dict[str, str | None]) -> c_ast.Node:
    """The statement with each loop iterator cast to its declared C type (*types*: None where it is not
    known, left as it is) wherever it is a value, outside subscripts: the generated loops count in their own `long`
    counters (emit/printer.py's COUNTER_TYPE), and C's usual arithmetic conversions must be the
    original's (`int i` minus `unsigned un` is unsigned; `(i - 9) % 1009` with `unsigned i` wraps;
    `x / 2` with `double x` does not truncate). A subscript is an integer in the model, the same
    whatever the counter's type: the unsigned check keeps its unsigned parts non-negative, and signed
    overflow is undefined; it keeps the counter (gcc vectorizes the long index)."""
    casts = {i: t for i, t in types.items() if t is not None}
    if not casts:
        return expr

    class Cast(c_ast.NodeVisitor):
        def generic_visit(self, node):
            for name, child in node.children():
                if isinstance(node, c_ast.ArrayRef) and name == "subscript":
                    continue
                if isinstance(child, c_ast.ID) and child.name in casts:
                    cast = c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(
                        None, [], None, c_ast.IdentifierType(casts[child.name].split()))), child)
                    set_child(node, name, cast)
                else:
                    self.visit(child)

    expr = _clone(expr)
    Cast().visit(expr)
    return expr


def _clone(node: c_ast.Node) -> c_ast.Node:
    """A copy of a pycparser tree, without recursion (copy.deepcopy took five Python frames per level, and
    a statement of 160 terms exceeded the recursion limit)."""
    root = copy.copy(node)
    todo = [root]
    while todo:
        out = todo.pop()
        for slot in getattr(out, "__slots__", ()):
            if isinstance(getattr(out, slot, None), list):
                setattr(out, slot, list(getattr(out, slot)))  # lists of children are not shared
        for name, child in out.children():
            new = copy.copy(child)
            set_child(out, name, new)
            todo.append(new)
    return root


def set_child(node: c_ast.Node, name: str, value: c_ast.Node) -> None:
    """Replace the child that pycparser's children() calls *name* (`args`, `exprs[2]`)."""
    m = re.fullmatch(r"(\w+)\[(\d+)\]", name)
    if m:
        getattr(node, m.group(1))[int(m.group(2))] = value
    else:
        setattr(node, name, value)


def _check_iterators_read_after(b: _Builder) -> None:
    """A loop iterator of the enclosing scope that the program reads after the region holds the exit value
    of the last loop that ran; the optimized code's loops count in their own variables and leave it as it
    was: refused (an iterator declared in its loop, or assigned before that read, is fine)."""
    live = sorted((line, name) for name, line in b.iterator_lines.items()
                  if name in b.region.read_after and name not in b.hoisted)
    if live:
        line, name = live[0]
        raise UnsupportedError(f"loop iterator '{name}' is read after the region (its value after the loops is "
                               f"not computed by the optimized code): declare it in the loop (for (int {name} "
                               "= ...)) or assign it before that use", b.region.file, line)


def _check_unsigned(b: _Builder, params: list[str], ptext: str, context: isl.Set) -> None:
    """Refuse unsigned arithmetic whose value may be negative where it runs (`i - 3` at i < 3, `n - 1` at
    n = 0, a negative int compared with an unsigned): C wraps it around modulo 2^bits; the model does not."""
    for node, iters, where, pieces, why, unsigned_names in b.unsigned:
        names = [isl_name(i) for i in iters]
        known = [isl_name(n) for n in unsigned_names]
        nonneg = [f"{n} >= 0" for n in known if n in names or n in params]
        low, high = 0, None
        if isinstance(why, c_ast.Cast) and (spelling := c_spelling(_GEN.visit(why.to_type).split())) in _NARROW:
            low, high = _NARROW[spelling]
        for guard, value in pieces:
            out = f"{value} < {low}" if high is None else f"({value} < {low} or {value} > {high})"
            cons = " and ".join(f"({c})" for c in [*where, *nonneg, guard, out])
            try:
                bad = isl.Set(f"{ptext} -> {{ [{', '.join(names)}] : {cons} }}", context=CTX)
                bad = bad.intersect_params(context.align_params(bad.get_space()))
                negative = not bad.is_empty()
            except isl.Error:
                negative = True
            if not negative:
                continue
            wrap = "C wraps it around modulo 2^N, polytune's model does not; use a signed type (int, long)"
            text = _GEN.visit(node) if not isinstance(node, c_ast.For) else ""
            if why == "down":
                raise b.fail(node, f"the unsigned loop iterator '{iters[-1]}' counts down past 0: {wrap}")
            if why == "value":
                unsigned = sorted(n for n in unsigned_names if re.search(rf"\b{re.escape(n)}\b", text))
                raise b.fail(node, f"'{text}' may be negative, in unsigned arithmetic "
                                   f"({', '.join(unsigned) or 'an operand'} unsigned): {wrap}")
            if isinstance(why, str):
                raise b.fail(node, f"the unsigned loop iterator '{why}' starts at '{text}', which may be "
                                   f"negative: {wrap}")
            if isinstance(why, c_ast.Cast) and high is not None:
                raise b.fail(node, f"'{_GEN.visit(why.expr)}' may be outside the range of "
                                   f"'{_GEN.visit(why.to_type)}' ({low} to {high}) in '{text}': C converts it, "
                                   "polytune's model does not")
            if isinstance(why, c_ast.Cast):
                raise b.fail(node, f"'{_GEN.visit(why.expr)}' may be negative and is cast to unsigned in "
                                   f"'{text}': {wrap}")
            raise b.fail(node, f"'{text}' may be negative and is converted to unsigned in "
                               f"'{_GEN.visit(why)}': {wrap}")


def build_scop(region: Region) -> Scop:
    """Model *region* with isl; raises UnsupportedError (file:line) for constructs outside the model."""
    b = _Builder(region, assigned=frozenset(_assigned(region.body)))
    try:
        b.walk(region.body, [], [])
    except RecursionError:
        raise UnsupportedError("an expression or nest of the region is too deep to analyze", region.file,
                               region.begin_line) from None
    if not b.stmts:
        raise UnsupportedError("the scop region contains no statement", region.file, region.begin_line)
    written = set()
    for (_, _, _, _, _, _, accesses, _) in b.stmts:
        written |= {a for (a, _, w, _) in accesses if w}
    _flat_subscripts(b)
    _check_iterators_used_outside(b)
    _check_iterators_read_after(b)
    for p, line in b.params.items():
        use = b.param_uses.get(p, "loop bound")
        if p in written and use.startswith("condition:"):
            raise UnsupportedError(f"non-affine condition in 'if' (depends on data: '{p}' is written inside the "
                                   f"scop): {use.removeprefix('condition:')}", region.file, line)
        use = "condition" if use.startswith("condition:") else use
        if p in written:
            raise UnsupportedError(f"{use} uses '{p}', which is written inside the scop (not affine)",
                                   region.file, line)
        if p in b.array_dims and b.array_dims[p] > 0:
            raise UnsupportedError(f"'{p}' is an array but is used in a {use}",
                                   region.file, line)
    params = tuple(sorted(b.params))
    constants = {name: value for value, name in sorted(b.consts.items())}
    ptext = "[" + ", ".join([isl_name(p) for p in params] + list(constants)) + "]"
    context = isl.Set(f"{ptext} -> {{ : {' and '.join(f'{n} = {v}' for n, v in constants.items()) or 'true'} }}",
                      context=CTX)
    _check_unsigned(b, [isl_name(p) for p in params], ptext, context)
    positions = _positions(region.body, b.cond_statements)
    depth = max(len(it) for (_, it, *_rest) in b.stmts)
    width = 2 * depth + 1
    domains = {}
    for (name, iters, conds, _signs, _expr, line, _accesses, _key) in b.stmts:
        vars_ = ", ".join(isl_name(i) for i in iters)
        cons = " and ".join(f"({c})" for c in conds) or "true"
        try:
            domains[name] = isl.Set(f"{ptext} -> {{ {name}[{vars_}] : {cons} }}", context=CTX)
        except isl.Error:
            raise UnsupportedError("cannot model the iteration domain (its bounds and conditions are not "
                                   "piecewise quasi-affine)", region.file, line) from None
    views, products, assumed = _views(b, domains)
    statements = []
    for (name, iters, _conds, signs, expr, line, accesses, key) in b.stmts:
        vars_ = ", ".join(isl_name(i) for i in iters)
        domain = domains[name]
        pos = positions[key]
        sched = []
        for k in range(len(iters)):
            sched += [str(pos[k]), ("" if signs[k] > 0 else "-") + isl_name(iters[k])]
        sched.append(str(pos[len(iters)]))
        sched += ["0"] * (width - len(sched))
        schedule = isl.Map(f"{ptext} -> {{ {name}[{vars_}] -> [{', '.join(sched)}] }}", context=CTX)
        accs = []
        for (array, subs, is_write, node) in accesses:
            ndim = b.array_dims.get(array, len(subs)) if isinstance(subs, _Slice) else None
            if ndim is not None and ndim < len(subs):
                raise UnsupportedError(f"'{array}' is used with {ndim} and with {len(subs)} subscripts",
                                       region.file, _line(node, line))
            if array not in written and not subs and not ndim:
                continue  # a read-only scalar is a constant of the region
            try:
                if array in views:  # delinearized: the C subscripts before the last, then the view's
                    outer = _access_map(f"{ptext} -> {{ {name}[{vars_}]", "", subs[:-1]) if len(subs) > 1 else None
                    view = views[array][1][name, id(node)]
                    rel = view if outer is None else outer.align_params(view.get_space()).flat_range_product(
                        view.align_params(outer.get_space()))
                    rel = rel.set_tuple_name(isl.dim_type.out, isl_name(array))
                else:
                    rel = _access_map(f"{ptext} -> {{ {name}[{vars_}]", isl_name(array), subs, ndim)
            except isl.Error:
                raise UnsupportedError(f"cannot model the access {_GEN.visit(node)} (its subscripts are not "
                                       "piecewise quasi-affine)", region.file, _line(node, line)) from None
            accs.append(Access(array, rel, is_write, may=is_write and name in b.guarded))
        statements.append(Statement(name, iters, domain, schedule, _cast_iterators(expr, b.iterator_types[name]), line,
                                    tuple(accs), _choices(b, expr, f"{ptext} -> {{ {name}[{vars_}]", domain)))
    runs = [st for st in statements if not st.domain.intersect_params(context).is_empty()]
    if runs:  # a statement that runs for no parameter value is dead code (the GPU mapping failed on one)
        statements = runs
    arrays = tuple(Array(n, d, n in written) if n not in views else
                   Array(n, d - 1 + len(views[n][0]), n in written,
                         Layout(d - 1, tuple(_c_product(m) for m in views[n][0])))
                   for n, d in sorted(b.array_dims.items()))
    if assumed is not None:
        context = context.align_params(assumed.get_space()).intersect(assumed.align_params(context.get_space()))
    # (one subscript reads or writes the row pointers themselves: no rows)
    rows = tuple(a.name for a in arrays if a.name in region.pointer_rows and a.ndim > 1 and a.layout is None)
    deep = next((a for a in arrays if a.name in rows and a.ndim > 2), None)
    if deep is not None:
        raise UnsupportedError(f"the rows of '{deep.name}' are pointers and it has {deep.ndim} subscripts: "
                               "polytune checks rows of pointers in two-dimensional arrays only", region.file,
                               region.begin_line)
    # (rows of pointers may point into any array of the region: all are checked against them)
    shared = tuple(a.name for a in arrays if a.ndim > 0 and (a.name in region.shared_params or rows))
    return Scop(region.file, region.begin_line, region.end_line, params, constants, context,
                tuple(statements), arrays,
                tuple(b.hoisted.values()), frozenset(b.idents | b.iterators_all | set(b.hoisted)),
                region.source_hash, region.float_scalars, frozenset(b.hoisted),
                unsigned=frozenset(p for p in params if (region.int_types.get(p) or (0, False))[1]),
                c_types={**region.array_types, **region.scalar_types,
                         **{n: t for n, t in b.scoped.items() if n in b.hoisted and t}},
                prelude=region.prelude,
                epilogue=region.epilogue,
                derived={name: _c_product(m) for m, name in products.items()}, assumed=assumed,
                may_alias=shared if len(shared) >= 2 and any(a.written for a in arrays if a.name in shared) else (),
                pointer_rows=rows, dead_after=region.dead_after)


def _c_product(m: tuple[str, ...]) -> str:
    """A product of C names as C text, computed in 64 bits (`(long)c * hw`); "1" for the empty product."""
    return " * ".join([f"(long){m[0]}", *m[1:]]) if len(m) > 1 else (m[0] if m else "1")


def _flat_subscripts(b: _Builder) -> None:
    """Every access of an array that some access indexes with a flattened subscript gets its last subscript
    as polynomials (b.polys), for the array's view; an array also used otherwise is refused."""
    for (_, _, _, _, _, line, accesses, _) in b.stmts:
        for (array, subs, _w, node) in accesses:
            if array not in b.flat:
                continue
            if isinstance(subs, _Slice) or not isinstance(node, c_ast.ArrayRef):
                raise UnsupportedError(f"'{array}' is indexed with flattened subscripts and used whole here "
                                       "(not modeled)", b.region.file, _line(node, line))
            if id(node) in b.polys:
                continue
            its, where = b.scopes[id(node)]
            b.where = where
            try:
                b.polys[id(node)] = b.flat_pieces(node, node.subscript, its)
            except NonAffine as err:
                raise UnsupportedError(f"'{array}' is indexed with flattened subscripts, and here with one that "
                                       f"is not a polynomial ({err}): {_GEN.visit(node)}", b.region.file,
                                       _line(node, line)) from None


def _views(b: _Builder, domains: dict) -> tuple[dict, dict, isl.Set | None]:
    """The delinearized arrays' views: array -> (strides, {(statement, id(access node)): S[i] -> [dims]}); the
    parameters standing for products; the assumptions of all views (None: there are none)."""
    views: dict = {}
    products: dict = {}
    assumed = None
    for array, first in sorted(b.flat.items()):
        keys, flats = [], []
        for (name, iters, _, _, _, _, accesses, _) in b.stmts:
            for (a, _subs, _w, node) in accesses:
                if a == array and (name, id(node)) not in keys:  # (a condition's node is in several statements)
                    keys.append((name, id(node)))
                    flats.append(FlatAccess(domains[name], iters, tuple(b.polys[id(node)])))
        try:
            view = delinearize(flats, products)
        except (DelinearizeError, isl.Error) as err:
            why = str(err) if isinstance(err, DelinearizeError) else "isl cannot model its view"
            raise UnsupportedError(f"cannot recover the dimensions of '{array}' from its flattened subscripts: "
                                   f"{why}", b.region.file, first) from None
        if view is None:
            raise UnsupportedError(f"non-affine subscript of '{array}' (no parametric row length to recover "
                                   "its dimensions from)", b.region.file, first)
        products = view.products
        views[array] = (view.strides, dict(zip(keys, view.maps)))
        assumed = view.assumed if assumed is None else assumed.align_params(view.assumed.get_space()) \
            .intersect(view.assumed.align_params(assumed.get_space()))
    return views, products, assumed
