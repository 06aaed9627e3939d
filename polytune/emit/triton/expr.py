"""Expressions as Triton text: isl AST expressions, the statements' C expressions (array references as
masked loads), Python names for C names, and the small text helpers the printers share."""
from __future__ import annotations

import ast
import re

import islpy as isl
from pycparser import c_ast, c_generator

from ...errors import UnsupportedError
from ...frontend import MIN_MAX, c_spelling
from ...poly.scop import Scop
from ..printer import list_

_T = isl.ast_expr_op_type
_PY_BINARY = {_T.add: "+", _T.sub: "-", _T.mul: "*", _T.div: "//", _T.pdiv_q: "//", _T.fdiv_q: "//",
              _T.pdiv_r: "%", _T.zdiv_r: "%", _T.eq: "==", _T.le: "<=", _T.lt: "<", _T.ge: ">=", _T.gt: ">"}
_MATH = {"exp": "tl.exp", "expf": "tl.exp", "log": "tl.log", "logf": "tl.log", "sqrt": "tl.sqrt",
         "sqrtf": "tl.sqrt", "fabs": "tl.abs", "fabsf": "tl.abs", "abs": "tl.abs", "sin": "tl.sin",
         "sinf": "tl.sin", "cos": "tl.cos", "cosf": "tl.cos", "fmax": "tl.maximum", "fmaxf": "tl.maximum",
         "fmin": "tl.minimum", "fminf": "tl.minimum", "max": "tl.maximum", "min": "tl.minimum",
         "MAX": "tl.maximum", "MIN": "tl.minimum", "floor": "tl.floor", "floorf": "tl.floor",
         "ceil": "tl.ceil", "ceilf": "tl.ceil", "exp2": "tl.exp2", "log2": "tl.log2"}
# the rest of C's <math.h> that CUDA's libdevice has (float and double versions: libdevice dispatches on type)
_MATH.update({f + suffix: f"libdevice.{f}" for f in ("pow", "tanh", "erf", "erfc", "atan2", "log10", "fmod", "tan",
                                                     "atan", "asin", "acos", "sinh", "cosh", "expm1", "log1p", "cbrt",
                                                     "hypot", "copysign", "round", "trunc", "fma")
              for suffix in ("", "f")})
_MATH.update({"exp2f": "tl.exp2", "log2f": "tl.log2", "labs": "tl.abs", "__builtin_fabs": "tl.abs",
              "__builtin_sqrt": "tl.sqrt"})  # long double versions (powl, ...) have no Triton type
# C's arithmetic types (frontend.c_spelling) as Triton's: Triton converts mixed operands as C does (int32
# minus uint32 is uint32), so a value of its C type computes what the C statement computes
TL_TYPES = {"double": "tl.float64", "float": "tl.float32", "int": "tl.int32", "unsigned int": "tl.uint32",
            "long": "tl.int64", "unsigned long": "tl.uint64", "short": "tl.int16", "unsigned short": "tl.uint16",
            "char": "tl.int8", "signed char": "tl.int8", "unsigned char": "tl.uint8", "_Bool": "tl.int1"}
AXES = "xyz"
_GEN = c_generator.CGenerator()
_NARROW = {"short", "unsigned short", "char", "signed char", "unsigned char", "_Bool"}  # C promotes them to int
_FLOATS = {"double", "float", "long double"}
_TRUTH = {"<", "<=", ">", ">=", "==", "!=", "&&", "||"}


_INTERNAL = re.compile(r"^(ZERO|MASK|CONFIG|cfg|bx|by|bz|tl|triton|range|float|min|max|run(_\d+)?|_kernel.*|_launch|"
                       r"_LAUNCHED|_device|libdevice|"
                       r"(pid|g|lo|n|s)_.*|(mask|acc|h|k|lanes|p|r|t|v|zero|fwd)\d+)$")


def py_names(scop: Scop) -> dict[str, str]:
    """Python names for the region's C names: keywords and names the generated code uses get a '_'."""
    import keyword
    taken = set(scop.names_in_use)
    out = {}
    for name in sorted(taken):
        new = name
        while keyword.iskeyword(new) or new in ("True", "False", "None") or _INTERNAL.match(new) or \
                (new != name and new in taken):
            new += "_"
        out[name] = new
    return out


def _py_expr(e: isl.AstExpr, scop: Scop, names: dict[str, str], kernel: bool) -> str:
    """An isl AST expression as Python (launcher) or Triton (kernel) text."""
    t = e.get_type()
    if t == isl.ast_expr_type.int:
        return e.int_get_val().to_str()
    if t == isl.ast_expr_type.id:
        name = e.id_get_id().get_name()
        if name in scop.constants:
            return str(scop.constants[name])
        if name.endswith("_") and name[:-1] in scop.params:
            name = name[:-1]
        return names.get(name, name)
    op = e.op_get_type()
    args = [_py_expr(e.op_get_arg(i), scop, names, kernel) for i in range(e.op_get_n_arg())]
    if op == _T.fdiv_q and kernel:
        # floor division whatever '//' and '%' round to (Triton follows C, Python floors): subtract the
        # non-negative remainder first, then the division is exact
        a, b = args
        return f"(({a} - ((({a}) % {b} + {b}) % {b})) // {b})"
    if op in _PY_BINARY:
        return f"({args[0]} {_PY_BINARY[op]} {args[1]})"
    if op == _T.minus:
        return f"(-{args[0]})"
    if op in (_T.and_, _T.and_then):
        return f"({args[0]} & {args[1]})" if kernel else f"({args[0]} and {args[1]})"
    if op in (_T.or_, _T.or_else):
        return f"({args[0]} | {args[1]})" if kernel else f"({args[0]} or {args[1]})"
    if op in (_T.min, _T.max):
        if kernel:
            fn = "tl.minimum" if op == _T.min else "tl.maximum"
            out = args[0]
            for a in args[1:]:
                out = f"{fn}({out}, {a})"
            return out
        return f"{'min' if op == _T.min else 'max'}({', '.join(args)})"
    if op in (_T.cond, _T.select):
        return f"tl.where({args[0]}, {args[1]}, {args[2]})" if kernel else f"({args[1]} if {args[0]} else {args[2]})"
    raise UnsupportedError(f"Triton target: isl AST operator {op}")  # pragma: no cover


class _CExpr:
    """A statement's C expression as Triton text: array references become masked loads."""

    def __init__(self, k, subst: dict[str, str]):  # k: kernel.py's _KernelPrinter
        self.k = k
        self.subst = subst

    def address(self, node: c_ast.ArrayRef, zero: bool = True) -> tuple[str, str]:
        subs = []
        while isinstance(node, c_ast.ArrayRef):
            subs.append(node.subscript)
            node = node.name
        if not isinstance(node, c_ast.ID):
            raise UnsupportedError("Triton target: array reference through an expression")
        name = self.k.rn.get(node.name, node.name)
        self.k.arrays_used.add(node.name)
        subs.reverse()
        lane, same = [], []  # the parts that differ between lanes, and those equal in every lane
        for d, s in enumerate(subs):
            stride = f" * s_{name}_{d}" if d < len(subs) - 1 else ""
            varying, uniform = _split_terms(self.visit(s), self.k.is_vector)
            lane += [f"({varying}){stride}"] if varying else []
            same += [f"({uniform}){stride}"] if uniform else []
        # the element of the lane first, then one offset shared by all lanes (a tap of a stencil): the
        # lanes' pointers are computed once for all taps, and a constant offset goes into the load
        addr = f"{name} + {' + '.join(lane)}" if lane else name
        addr += f" + ({' + '.join(same)})" if same else ""
        return name, addr + (" + ZERO" if zero else "")  # (a load appends ZERO too: one text per address)

    def load(self, node) -> str:
        name, addr = self.address(node, zero=False)
        words = set(re.findall(r"[A-Za-z_]\w*", addr)) - {name}
        if self.k.any_mask and all(w in self.k.uniform or w.startswith(f"s_{name}_") for w in words):
            # the same address in every lane (a stencil's weight): one scalar load, not a tile of copies
            if self.k.full_tile:  # some lane is active: all are
                return f"tl.load({addr})"
            return f"tl.load({addr}, mask={self.k.any_mask}, other=0)"
        return f"tl.load({addr} + ZERO, mask=MASK, other=0)"

    def visit(self, n) -> str:
        if isinstance(n, c_ast.Constant):
            v = n.value.rstrip("fFlLuU") if n.type in ("float", "double") or n.value[-1] in "fF" else \
                n.value.rstrip("uUlL")
            return v
        if isinstance(n, c_ast.ID):
            if n.name in self.subst:
                return self.subst[n.name]
            name = self.k.rn.get(n.name, n.name)
            if n.name in self.k.scalars_on_device:
                self.k.arrays_used.add(n.name)
                return f"tl.load({name} + ZERO, mask=MASK, other=0)"
            self.k.scalars_used.add(n.name)
            t = self.k.scop.c_types.get(n.name, "")
            ty = "tl.int32" if t in _NARROW else TL_TYPES.get(t)
            if ty not in (None, "tl.float64", "tl.float32") and t != "int":
                # Triton types an integer argument by its value (int32 where it fits): an unsigned or long C
                # scalar is converted to its own type (a narrower one to int, as C promotes it), so that C's
                # conversions apply
                return f"(({name}) + ZERO).to({ty})"
            return name
        if isinstance(n, c_ast.ArrayRef):
            if self.ctype(n) in _NARROW:  # C promotes the element to int
                return f"({self.load(n)}).to(tl.int32)"
            return self.load(n)
        if isinstance(n, c_ast.BinaryOp):
            a, b = self.number(n.left), self.number(n.right)
            if n.op in _TRUTH:
                a, b = self.visit(n.left), self.visit(n.right)
            ta, tb = self.ctype(n.left), self.ctype(n.right)
            integer = n.right if ta in _FLOATS else n.left
            if n.op not in ("&&", "||") and (ta in _FLOATS) != (tb in _FLOATS) and None not in (ta, tb) \
                    and TL_TYPES.get(ta if ta in _FLOATS else tb) and not isinstance(integer, c_ast.Constant):
                # C converts the integer operand to the floating one's type; Triton computes a Python float
                # times an int32 tensor in float32 (maxpool's `0.01 * (dy - dx)` lost bits against C's double).
                # (An integer constant is a Python int, which takes the other operand's type as it is.)
                if ta in _FLOATS:
                    b = f"(({b}) + ZERO).to({TL_TYPES[ta]})"
                else:
                    a = f"(({a}) + ZERO).to({TL_TYPES[tb]})"
            return f"({a} {self.operator(n.op, ta, tb, n)} {b})"
        if isinstance(n, c_ast.UnaryOp):
            if n.op == "-":
                return f"(-{self.number(n.expr)})"
            if n.op == "+":
                return self.number(n.expr)
            if n.op == "!":
                return f"({self.number(n.expr)} == 0)"
            raise UnsupportedError(f"Triton target: unary operator '{n.op}'")
        if isinstance(n, c_ast.TernaryOp):
            return f"tl.where({self.visit(n.cond)}, {self.visit(n.iftrue)}, {self.visit(n.iffalse)})"
        if isinstance(n, c_ast.FuncCall):
            fn = n.name.name if isinstance(n.name, c_ast.ID) else ""
            if fn not in _MATH:
                raise UnsupportedError(f"Triton target: no Triton equivalent for '{fn}'")
            args = [self.visit(a) for a in (n.args.exprs if n.args else [])]
            if _MATH[fn].startswith("libdevice."):  # no type promotion in extern calls: C's, by hand
                ty = "tl.float32" if fn.endswith("f") and fn[:-1] in _MATH else "tl.float64"
                args = [f"tl.cast({a}, {ty})" for a in args]
            return f"{_MATH[fn]}({', '.join(args)})"
        if isinstance(n, c_ast.Cast):
            names = " ".join(getattr(n.to_type.type.type, "names", []) or [])
            t = c_spelling(names.split()) or ""
            ty = TL_TYPES.get(t)
            if ty is None:
                raise UnsupportedError(f"Triton target: cast to '{names}'")
            text = f"(({self.number(n.expr)}) + ZERO).to({ty})"  # + ZERO: a loop counter is a Python int
            return f"({text}).to(tl.int32)" if t in _NARROW else text  # C promotes a char or short to int
        raise UnsupportedError(f"Triton target: C construct {type(n).__name__}")

    def number(self, n) -> str:
        """*n* as Triton text where C uses it as a number: a comparison's truth value is an int (0 or 1), not
        Triton's int1 (which does not mix with integers in `%` and `/`)."""
        if isinstance(n, c_ast.BinaryOp) and n.op in _TRUTH or isinstance(n, c_ast.UnaryOp) and n.op == "!":
            return f"tl.where({self.visit(n)}, ZERO + 1, ZERO)"
        return self.visit(n)

    def operator(self, op: str, a: str | None, b: str | None, node=None) -> str:
        """The Triton operator for C's binary *op* between operands of C types *a* and *b*: `/` between
        integers truncates (Triton's `//`, which rounds toward zero as C does; its `/` gives a float)."""
        op = {"&&": "&", "||": "|"}.get(op, op)
        if op != "/" or a in _FLOATS or b in _FLOATS:
            return op
        if a is None or b is None:
            what = f" in '{_GEN.visit(node)}'" if node is not None else ""
            raise UnsupportedError(f"Triton target: a division{what} whose operands' types are not known "
                                   "(integer or floating)")
        return "//"

    def ctype(self, n) -> str | None:
        """The C type (frontend.c_spelling) of expression *n* by C's usual arithmetic conversions; None
        where not known."""
        if isinstance(n, c_ast.Constant):
            v = n.value.lower()
            if n.type in ("float", "double"):
                return "float" if v.endswith("f") else "double"
            if n.type == "char":
                return "int"
            if not n.type.startswith(("int", "long", "unsigned")):
                return None
            suffix = re.search(r"[ul]*$", v).group(0)
            return ("unsigned " if "u" in suffix else "") + ("long" if "l" in suffix else "int")
        if isinstance(n, c_ast.ID):
            return "long" if n.name in self.subst else self.k.scop.c_types.get(n.name)  # a counter: long
        if isinstance(n, c_ast.ArrayRef):
            base = n
            while isinstance(base, c_ast.ArrayRef):
                base = base.name
            return self.k.scop.c_types.get(base.name) if isinstance(base, c_ast.ID) else None
        if isinstance(n, c_ast.Cast):
            return c_spelling(" ".join(getattr(n.to_type.type.type, "names", []) or []).split())
        if isinstance(n, c_ast.UnaryOp):
            return "int" if n.op == "!" else _promote(self.ctype(n.expr))
        if isinstance(n, c_ast.BinaryOp):
            if n.op in _TRUTH:
                return "int"
            if n.op in ("<<", ">>"):
                return _promote(self.ctype(n.left))
            return _arith(self.ctype(n.left), self.ctype(n.right))
        if isinstance(n, c_ast.TernaryOp):
            return _arith(self.ctype(n.iftrue), self.ctype(n.iffalse))
        if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID):
            fn = n.name.name
            if fn in ("abs", "labs"):
                return "int" if fn == "abs" else "long"
            if fn in MIN_MAX and n.args and len(n.args.exprs) == 2:
                return _arith(*(self.ctype(a) for a in n.args.exprs))
            return "float" if fn.endswith("f") and fn[:-1] in _MATH else "double"
        return None


def _promote(t: str | None) -> str | None:
    return "int" if t in _NARROW else t


def _arith(a: str | None, b: str | None) -> str | None:
    """C's usual arithmetic conversions of two types (frontend.c_spelling), LP64; None if one is not known."""
    a, b = _promote(a), _promote(b)
    if a is None or b is None:
        return None
    if a in _FLOATS or b in _FLOATS:
        return "double" if "double" in (a, b) or "long double" in (a, b) else "float"
    (x, ux), (y, uy) = ((64 if "long" in t else 32, t.startswith("unsigned")) for t in (a, b))
    if ux == uy:
        bits, unsigned = max(x, y), ux
    else:
        u, s = (x, y) if ux else (y, x)  # the unsigned operand's width, the signed one's
        bits, unsigned = (u, True) if u >= s else (s, False)
    return ("unsigned " if unsigned else "") + ("long" if bits == 64 else "int")


_TIGHT = (ast.Name, ast.Constant, ast.Call, ast.Subscript, ast.Attribute)  # terms printed without parentheses
_TIGHT_OPS = (ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


def _split_terms(text: str, varies) -> tuple[str, str]:
    """An index expression as (the sum of its terms that *varies* says differ between lanes, the sum of the
    others), split over its top-level + and - (either may be ''). Not split where it is not such a sum."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return text, ""
    terms: list[tuple[int, ast.expr]] = []

    def walk(n, sign):
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub)):
            walk(n.left, sign)
            walk(n.right, sign if isinstance(n.op, ast.Add) else -sign)
        elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            walk(n.operand, -sign)
        else:
            terms.append((sign, n))
    walk(tree, 1)

    def join(items):
        out = ""
        for sign, n in items:
            t = ast.unparse(n)
            if not (isinstance(n, _TIGHT) or isinstance(n, ast.BinOp) and isinstance(n.op, _TIGHT_OPS)):
                t = f"({t})"  # binds less tightly than + (`i + (i == n - 1)`, `(i + 1) >> 1`): keep it whole
            elif sign < 0 and not out and not isinstance(n, _TIGHT):
                t = f"({t})"  # a leading minus binds tighter than % and //: -(k % 2) is not (-k) % 2
            out = (f"{out} + {t}" if sign > 0 else f"{out} - {t}") if out else (t if sign > 0 else f"-{t}")
        return out
    lane = [t for t in terms if varies(ast.unparse(t[1]))]
    return join(lane), join([t for t in terms if t not in lane])


UNROLL_MAX = 16


def _canonical(text: str) -> str:
    """A Python expression with its integer-affine parts (index arithmetic) in one normal form, so that
    `((k + 1) + 4)` and `(k + 5)` compare equal; anything else is compared as written."""

    def linear(n):  # {name or 1: coefficient}, or None if n is not integer-affine
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return {1: n.value}
        if isinstance(n, ast.Name):
            return {n.id: 1}
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            a = linear(n.operand)
            return None if a is None else {k: -v for k, v in a.items()}
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub, ast.Mult)):
            a, b = linear(n.left), linear(n.right)
            if a is None or b is None:
                return None
            if isinstance(n.op, ast.Mult):
                if set(a) == {1}:
                    a, b = b, a
                if set(b) != {1}:
                    return None
                return {k: v * b[1] for k, v in a.items()}
            sign = 1 if isinstance(n.op, ast.Add) else -1
            out = dict(a)
            for k, v in b.items():
                out[k] = out.get(k, 0) + sign * v
            return out
        return None

    class Normal(ast.NodeTransformer):
        def visit(self, n):
            form = linear(n) if isinstance(n, ast.expr) else None
            if form is not None and any(k != 1 for k in form):
                return ast.Constant(value=repr(sorted((str(k), v) for k, v in form.items() if v)))
            return self.generic_visit(n)

    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return text
    return ast.dump(Normal().visit(tree))


def _flatten_blocks(node: isl.AstNode) -> list:
    """The nodes a block runs in order, nested blocks opened."""
    if node.get_type() != isl.ast_node_type.block:
        return [node]
    return [x for kid in list_(node.block_get_children()) for x in _flatten_blocks(kid)]


def _range(lo: str, hi: str, inc: str, unroll: bool = True) -> str:
    """A sequential loop: unrolled at compile time (tl.static_range) when its bounds are integer literals
    and it runs at most UNROLL_MAX times (a stencil's taps), a plain range otherwise (or if not *unroll*)."""
    a, b, c = _literal(lo), _literal(hi), _literal(inc)
    if unroll and a is not None and b is not None and c is not None:
        if c > 0 and 0 <= (b - a + c - 1) // c <= UNROLL_MAX:
            return f"tl.static_range({a}, {b}, {c})"
    return f"range({lo}, {hi}, {inc})"


def _t(cond: str) -> str:
    """A condition as a boolean tensor of the block's shape (a scalar condition would be a Python bool,
    which does not combine with a mask)."""
    return f"(({cond}) + ZERO != 0)"


def _literal(text: str) -> int | None:
    """The value of integer literal arithmetic (digits, + - * and parentheses), else None."""
    if re.fullmatch(r"[\d\s()+\-*]+", text):
        return eval(text, {"__builtins__": {}})  # noqa: S307 - digits and + - * only
    return None


def _static_extent(lo: str, hi: str) -> int | None:
    """hi - lo where both are literal integer arithmetic, else None."""
    a, b = _literal(lo), _literal(hi)
    return None if a is None or b is None else max(0, b - a)


def _lift(text: str, lanes: list[str]) -> str:
    """Lane vectors of the mapped axis used inside a [BLOCK, BLOCK_R] expression get a trailing axis."""
    for v in lanes:
        text = re.sub(rf"\b{re.escape(v)}\b(?!\[)", f"{v}[:, None]", text)
    return text
