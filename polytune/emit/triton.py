"""Triton for a GPU-mapped schedule: a Python module with one ``@triton.jit`` kernel per kernel mark and a
launcher ``run(...)`` that takes the arrays as torch tensors and the scalars as numbers.

The mapping is the CUDA target's (``polytune.poly.gpu``); what differs is that a Triton program owns a
*block* of the mapped iterations: the mapped loops become program ids, and each program works on tensors
of ``BLOCK_X`` (x innermost, so loads along x are contiguous) by ``BLOCK_Y`` (by ``BLOCK_Z``) iterations.
Every guard on the way to a statement (the mapped loops' exact bounds, ``if``s, inner loops whose bounds
differ between the lanes) becomes a mask. Inner loops stay loops, run by the whole block; where their
bounds depend on the lane they run over the union of the lanes' ranges under a mask.

Two rewrites make the inner loops cheap:

- *accumulation in registers*: an inner loop whose body is one statement ``W op= e`` with ``W`` the same
  element on every iteration (and ``e`` not reading ``W``'s array) loads ``W`` once, accumulates in
  registers and stores once;
- *reductions over a block*: if, moreover, the loop is the only one left under a single mapped dimension
  and ``op`` is ``+=`` (or a max/min update), the loop is vectorized too: a program reduces ``BLOCK_R``
  iterations at once with ``tl.sum`` / ``tl.max`` (all of them when the extent fits: a persistent
  reduction, section 9.4 of the Triton chapter) and loops over the rest. This reassociates the sum; the
  results then match the sequential ones within a tolerance, not bit for bit.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import islpy as isl
from pycparser import c_ast

from ..errors import UnsupportedError
from ..poly.gpu import GpuSchedule, KernelInfo, bound_as_params
from ..poly.marks import KernelMark, mark_of
from ..poly.scop import Scop
from .c import build_ast
from .printer import Printer, fresh_prefix, list_, param_expr, strip

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
_CASTS = {"double": "tl.float64", "float": "tl.float32", "int": "tl.int32", "long": "tl.int64",
          "unsigned": "tl.uint32"}
AXES = "xyz"
FLOAT_NAMES = {"fp32": "float32", "fp64": "float64"}
DEFAULT_CONFIG = {"BLOCK_X": 64, "BLOCK_Y": 16, "BLOCK_Z": 1, "BLOCK_M": 4, "BLOCK_R": 1024, "BLOCK_K": 32,
                  "num_warps": 4, "num_stages": 2, "FUSE": 0}


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


@dataclass(frozen=True)
class TritonRegion:
    kernels: str
    launcher: str  # the body of run(...) for this region
    arguments: tuple[str, ...]  # run()'s parameters for this region
    tiles: dict[str, str]  # kernel name -> elements of its largest tiles (an expression over cfg)
    reads: frozenset[str] = frozenset()  # the launch parameters its kernels and launcher read


@dataclass(frozen=True)
class TritonModule:
    """A generated module and the launch parameters it reads (a tuner varies only those)."""

    text: str
    reads: frozenset[str]


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

    def __init__(self, k: _KernelPrinter, subst: dict[str, str]):
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
        parts = []
        for d, s in enumerate(subs):
            stride = f"s_{name}_{d}" if d < len(subs) - 1 else "1"
            parts.append(f"({self.visit(s)}) * {stride}" if stride != "1" else f"({self.visit(s)})")
        return name, f"{name} + {' + '.join(parts)}" + (" + ZERO" if zero else "")

    def load(self, node) -> str:
        name, addr = self.address(node, zero=False)
        words = set(re.findall(r"[A-Za-z_]\w*", addr)) - {name}
        if self.k.any_mask and all(w in self.k.uniform or w.startswith(f"s_{name}_") for w in words):
            # the same address in every lane (a stencil's weight): one scalar load, not a tile of copies
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
            return name
        if isinstance(n, c_ast.ArrayRef):
            return self.load(n)
        if isinstance(n, c_ast.BinaryOp):
            a, b = self.visit(n.left), self.visit(n.right)
            op = {"&&": "&", "||": "|"}.get(n.op, n.op)
            return f"({a} {op} {b})"
        if isinstance(n, c_ast.UnaryOp):
            if n.op == "-":
                return f"(-{self.visit(n.expr)})"
            if n.op == "+":
                return self.visit(n.expr)
            if n.op == "!":
                return f"({self.visit(n.expr)} == 0)"
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
            ty = next((v for k, v in _CASTS.items() if k in names.split()), None)
            if ty is None:
                raise UnsupportedError(f"Triton target: cast to '{names}'")
            return f"(({self.visit(n.expr)}) + ZERO).to({ty})"  # + ZERO: a loop counter is a Python int
        raise UnsupportedError(f"Triton target: C construct {type(n).__name__}")


class _KernelPrinter:
    """The subtree of one kernel mark as the body of a Triton program."""

    def __init__(self, scop: Scop, info: KernelInfo, scalars_on_device: set[str], prefix: str,
                 rn: dict[str, str]):
        self.scop = scop
        self.prefix = prefix
        self.rn = rn
        self.info = info
        self.scalars_on_device = scalars_on_device
        self.lines: list[str] = []
        self.arrays_used: set[str] = set()
        self.scalars_used: set[str] = set()
        self.names: dict[str, str] = dict(rn)  # isl iterator (and C name) -> Triton name
        self.vector: set[str] = set()  # names that are lane vectors
        self.mapped = {f"{prefix}{info.depth + j}": j for j in range(info.mapped)}
        self.bound: list[str] = []
        self.tmp = 0
        self.last_line: int | None = None  # of the statement being translated, for error messages
        # names that are one number for the whole program: parameters, read-only scalars, host loops,
        # sequential loop counters (added as they are emitted)
        self.uniform = {rn.get(p, p) for p in scop.params} | {f"{prefix}{k}" for k in range(info.depth)}
        self.uniform |= {rn.get(a.name, a.name) for a in scop.arrays if a.ndim == 0 and not a.written}
        self.any_mask: str | None = None  # "some lane is active", where a loop nest has computed it
        self.persistent = False  # constant-extent chunk loops as one chunk (BLOCK_R covers them)
        self.chunk_extents: list[int | None] = []  # of every chunk loop, None where not a constant

    def fresh(self, stem: str) -> str:
        self.tmp += 1
        return f"{stem}{self.tmp}"

    def emit(self, text: str, indent: int) -> None:
        self.lines.append("    " * indent + text)

    def expr(self, e: isl.AstExpr) -> str:
        return _py_expr(e, self.scop, self.names, kernel=True)

    def is_vector(self, text: str) -> bool:
        return any(re.search(rf"\b{re.escape(v)}\b", text) for v in self.vector)

    def prologue(self, indent: int) -> None:
        info = self.info
        axes = sorted(set(info.axes))
        shape = [f"BLOCK_{AXES[ax].upper()}" for ax in reversed(axes)]  # z, y, x: x last (contiguous)
        for ax in axes:
            self.emit(f"pid_{AXES[ax]} = tl.program_id({ax})", indent)
        for ax in axes:
            pos = len(axes) - 1 - axes.index(ax)
            idx = ", ".join(":" if k == pos else "None" for k in range(len(axes)))
            self.emit(f"g_{AXES[ax]} = (pid_{AXES[ax]} * BLOCK_{AXES[ax].upper()} + "
                      f"tl.arange(0, BLOCK_{AXES[ax].upper()}))" + (f"[{idx}]" if len(axes) > 1 else ""), indent)
            self.vector.add(f"g_{AXES[ax]}")
        if axes:
            self.emit(f"ZERO = tl.zeros([{', '.join(shape)}], dtype=tl.int32)", indent)
            inb = " & ".join(f"(g_{AXES[ax]} < n_{AXES[ax]})" for ax in axes)
            self.emit(f"MASK = (ZERO == 0) & {inb}", indent)
            self.vector |= {"ZERO", "MASK"}
        else:
            self.emit("ZERO = tl.zeros([1], dtype=tl.int32)", indent)
            self.emit("MASK = ZERO == 0", indent)
            self.vector |= {"ZERO", "MASK"}

    # ---- nodes ---------------------------------------------------------------------------------------
    def node(self, n: isl.AstNode, indent: int) -> None:
        t = n.get_type()
        if t == isl.ast_node_type.block:
            for child in list_(n.block_get_children()):
                self.node(child, indent)
        elif t == isl.ast_node_type.for_:
            self.for_(n, indent)
        elif t == isl.ast_node_type.if_:
            cond = self.expr(n.if_get_cond())
            saved = self.fresh("mask")
            self.emit(f"{saved} = MASK", indent)
            self.emit(f"MASK = {saved} & {_t(cond)}", indent)
            self.node(n.if_get_then_node(), indent)
            if n.if_has_else_node():
                self.emit(f"MASK = {saved} & ~{_t(cond)}", indent)
                self.node(n.if_get_else_node(), indent)
            self.emit(f"MASK = {saved}", indent)
        elif t == isl.ast_node_type.mark:
            self.node(n.mark_get_node(), indent)
        elif t == isl.ast_node_type.user:
            self.user(n.user_get_expr(), indent)
        else:  # pragma: no cover
            raise UnsupportedError(f"Triton target: isl AST node {t}")

    def _bounds(self, n: isl.AstNode, it: str) -> tuple[str, str, str]:
        init = self.expr(n.for_get_init())
        inc = self.expr(n.for_get_inc())
        cond = n.for_get_cond()
        op = cond.op_get_type()
        lhs = cond.op_get_arg(0)
        if op not in (_T.le, _T.lt) or lhs.get_type() != isl.ast_expr_type.id or \
                lhs.id_get_id().get_name() != it:
            raise UnsupportedError("Triton target: a loop condition isl did not write as 'c <= e'")
        end = self.expr(cond.op_get_arg(1))
        return init, (f"({end}) + 1" if op == _T.le else end), inc

    def for_(self, n: isl.AstNode, indent: int) -> None:
        it = n.for_get_iterator().id_get_id().get_name()
        init, end, inc = self._bounds(n, it)
        if it in self.mapped:
            j = self.mapped[it]
            g = f"g_{AXES[self.info.axes[j]]}"
            var = self.fresh("v")
            self.names[it] = var
            self.vector.add(var)
            saved = self.fresh("mask")
            self.emit(f"{var} = lo_{j} + {g}", indent)
            self.emit(f"{saved} = MASK", indent)
            step = f" & {_t(f'(({var}) - ({init})) % {inc} == 0')}" if inc != "1" else ""
            self.emit(f"MASK = {saved} & {_t(f'{var} >= {init}')} & {_t(f'{var} < {end}')}{step}", indent)
            self.bound.append(it)
            self.node(n.for_get_body(), indent)
            self.bound.pop()
            self.emit(f"MASK = {saved}", indent)
            return
        var = self.fresh("k")
        self.names[it] = var
        self.uniform.add(var)
        lane_dependent = self.is_vector(init) or self.is_vector(end)
        lo, hi = init, end
        in_range = f"{_t(f'{var} >= {init}')} & {_t(f'{var} < {end}')}"
        if lane_dependent:
            lo = f"tl.min(tl.where(MASK, {init}, 2147483647))"
            hi = f"tl.max(tl.where(MASK, {end}, -2147483647))"
            if inc != "1":  # the lanes start at different points: step by one, keep each lane's stride
                in_range += f" & {_t(f'(({var}) - ({init})) % {inc} == 0')}"
                inc = "1"
        body = n.for_get_body()
        if self.reduction(n, body, var, lo, hi, inc, in_range, lane_dependent, indent):
            return
        if not lane_dependent and inc == "1" and len(set(self.info.axes)) <= 1 and \
                self.chunked(body, var, lo, hi, indent):
            return
        self.emit(f"for {var} in {_range(lo, hi, inc)}:", indent)
        if lane_dependent:
            saved = self.fresh("mask")
            self.emit(f"{saved} = MASK", indent + 1)
            self.emit(f"MASK = {saved} & {in_range}", indent + 1)
        self.node(body, indent + 1)
        if lane_dependent:
            self.emit(f"MASK = {saved}", indent + 1)

    # ---- statements ----------------------------------------------------------------------------------
    def _statement(self, call: isl.AstExpr):
        name = call.op_get_arg(0).id_get_id().get_name()
        st = self.scop.statement(name)
        self.last_line = st.line
        args = [self.expr(call.op_get_arg(i + 1)) for i in range(call.op_get_n_arg() - 1)]
        return st, dict(zip(st.iterators, (a if re.fullmatch(r"-?\w+", a) else f"({a})" for a in args)))

    def _free_guard(self) -> str:
        # A mapped dim without a loop around this statement: the statement runs once, in lane 0.
        free = [j for it, j in self.mapped.items() if it not in self.bound]
        return "".join(f" & (g_{AXES[self.info.axes[j]]} == 0)" for j in free)

    def user(self, call: isl.AstExpr, indent: int) -> None:
        st, subst = self._statement(call)
        try:
            self._user(st, subst, indent)
        except UnsupportedError as e:
            if e.line is None:
                raise UnsupportedError(e.message, self.scop.file, st.line) from None
            raise

    def _user(self, st, subst: dict[str, str], indent: int) -> None:
        guard = self._free_guard()
        if guard:
            saved = self.fresh("mask")
            self.emit(f"{saved} = MASK", indent)
            self.emit(f"MASK = MASK{guard}", indent)
        self.assign(st.body, _CExpr(self, subst), indent)
        if guard:
            self.emit(f"MASK = {saved}", indent)

    def assign(self, body, cx: _CExpr, indent: int) -> None:
        if isinstance(body, c_ast.UnaryOp) and body.op in ("p++", "++", "p--", "--"):
            body = c_ast.Assignment("+=" if "+" in body.op else "-=", body.expr, c_ast.Constant("int", "1"))
        if not isinstance(body, c_ast.Assignment):
            raise UnsupportedError("Triton target: a statement that is not an assignment")
        if isinstance(body.rvalue, c_ast.Assignment):  # a = b = e: b = e, then a = b (b's value, in b's type)
            self.assign(body.rvalue, cx, indent)
            body = c_ast.Assignment(body.op, body.lvalue, body.rvalue.lvalue)
        target = body.lvalue
        if isinstance(target, c_ast.ArrayRef):
            name, addr = cx.address(target)
        elif isinstance(target, c_ast.ID) and target.name in self.scalars_on_device:
            name, addr = target.name, f"{self.rn.get(target.name, target.name)} + ZERO"
            self.arrays_used.add(name)
        else:
            raise UnsupportedError("Triton target: assignment to something other than an array element")
        rhs = cx.visit(body.rvalue)
        p = self.fresh("p")
        self.emit(f"{p} = {addr}", indent)
        if body.op == "=":
            value = rhs
        else:
            value = f"tl.load({p}, mask=MASK, other=0) {body.op[:-1]} ({rhs})"
        self.emit(f"tl.store({p}, {value}, mask=MASK)", indent)

    # ---- inner loops with one accumulating statement -----------------------------------------------
    def reduction(self, n, body, var, lo, hi, inc, in_range, lane_dependent, indent) -> bool:
        """Accumulations into one address, in a loop or a perfect nest of loops whose iterations all add
        into it (a stencil's taps), by one statement or by several in sequence (a body unrolled by hand):
        the value stays in registers over the whole nest, and the statements combine into it in their
        order, so the result is the sequential one."""
        inner = []  # (var, lo, hi, inc) of the nest's inner loops
        while True:
            if body.get_type() == isl.ast_node_type.block:
                kids = list_(body.block_get_children())
                if len(kids) != 1:
                    break
                body = kids[0]
            if body.get_type() != isl.ast_node_type.for_ or lane_dependent:
                break
            it2 = body.for_get_iterator().id_get_id().get_name()
            var2 = self.fresh("k")
            self.names[it2] = var2
            self.uniform.add(var2)
            lo2, hi2, inc2 = self._bounds(body, it2)
            if self.is_vector(lo2) or self.is_vector(hi2):
                return False
            inner.append((var2, lo2, hi2, inc2))
            body = body.for_get_body()
        stmts = _flatten_blocks(body)
        if not all(x.get_type() == isl.ast_node_type.user for x in stmts):
            return False
        terms = []  # (kind, rhs node, subst) of each statement, in order
        addr = None
        for x in stmts:
            st, subst = self._statement(x.user_get_expr())
            b = st.body
            if not isinstance(b, c_ast.Assignment):
                return False
            scalar = isinstance(b.lvalue, c_ast.ID) and b.lvalue.name in self.scalars_on_device
            if not (isinstance(b.lvalue, c_ast.ArrayRef) or scalar):
                return False
            op = _accumulation(b)
            if op is None:
                return False
            if scalar:
                target = b.lvalue
                here = f"{self.rn.get(target.name, target.name)} + ZERO"
                self.arrays_used.add(target.name)
            else:
                _, here = _CExpr(self, subst).address(b.lvalue)
                target = b.lvalue
                while isinstance(target, c_ast.ArrayRef):
                    target = target.name
            if any(re.search(rf"\b{re.escape(v)}\b", here) for v in [var] + [y[0] for y in inner]) or \
                    _reads_array(op[1], target.name) or (addr is not None and here != addr):
                return False
            addr = here
            terms.append((op[0], op[1], subst))
        if self._free_guard():
            return False
        rolled = self.reroll(terms, var, lo, hi, inc) if not lane_dependent and not inner else None
        if rolled is not None:  # a body unrolled by hand, as one statement over a step-1 loop
            terms, hi, inc = [terms[0]], rolled, "1"
        kind, rhs_node, subst = terms[0]
        single = len(terms) == 1
        vectorize = (single and not lane_dependent and not inner and len(set(self.info.axes)) <= 1 and inc == "1"
                     and kind in ("+", "max", "min"))
        p, acc = self.fresh("p"), self.fresh("acc")
        self.emit(f"{p} = {addr}", indent)
        self.emit(f"{acc} = tl.load({p}, mask=MASK, other=0)", indent)
        dot = (single and not lane_dependent and not inner and set(self.info.axes) == {0, 1} and inc == "1"
               and kind == "+" and self.dot_reduction(acc, rhs_node, subst, var, lo, hi, indent))
        if vectorize:
            self.vector_reduction(acc, kind, rhs_node, subst, var, lo, hi, indent)
        elif dot:
            pass
        else:
            if not lane_dependent:
                self.any_mask = self.fresh("any")
                self.emit(f"{self.any_mask} = tl.max(MASK.to(tl.int32)) != 0", indent)
            self.emit(f"for {var} in {_range(lo, hi, inc)}:", indent)
            for depth, (v2, lo2, hi2, inc2) in enumerate(inner, 1):
                self.emit(f"for {v2} in {_range(lo2, hi2, inc2)}:", indent + depth)
            if lane_dependent:  # loads only where the lane's own loop runs
                saved = self.fresh("mask")
                self.emit(f"{saved} = MASK", indent + 1)
                self.emit(f"MASK = {saved} & {in_range}", indent + 1)
            for kind, rhs_node, subst in terms:
                new = _combine(kind, acc, _CExpr(self, subst).visit(rhs_node))
                if lane_dependent:
                    new = f"tl.where({in_range}, {new}, {acc})"
                self.emit(f"{acc} = {new}", indent + 1 + len(inner))
            self.any_mask = None
            if lane_dependent:
                self.emit(f"MASK = {saved}", indent + 1)
        self.emit(f"tl.store({p}, {acc}, mask=MASK)", indent)
        return True

    def reroll(self, terms, var, lo, hi, inc) -> str | None:
        """The upper bound of the step-1 loop that a hand-unrolled body stands for, or None. The body's
        u statements must be one accumulation with the loop counter shifted by 0, 1, .., u-1, under a
        loop of step u: `for (k = lo; k < hi; k += 4) { s += a[k]; s += a[k+1]; .. }` runs the same
        additions, in the same order, as `for (k = lo; k < lo + 4 * ceil((hi - lo) / 4); k++) s += a[k]`.
        That form can then take the vector reduction or tl.dot, like any other loop."""
        u = len(terms)
        if u < 2 or inc != str(u) or len({t[0] for t in terms}) != 1:
            return None
        kind, node0, subst0 = terms[0]
        for i, (_, node, subst) in enumerate(terms):
            shifted = {k: re.sub(rf"\b{re.escape(var)}\b", f"({var} + {i})", v) for k, v in subst0.items()}
            if _canonical(_CExpr(self, shifted).visit(node0)) != _canonical(_CExpr(self, subst).visit(node)):
                return None
        return f"({lo}) + {u} * ((({hi}) - ({lo}) + {u - 1}) // {u})"

    def dot_reduction(self, acc, rhs_node, subst, var, lo, hi, indent) -> bool:
        """W[i][j] += (scalars *) X[.. i .. k ..] * Y[.. k .. j ..] under a 2-D mapping (i on y, j on x):
        a K-blocked tl.dot of a [BLOCK_Y, BLOCK_K] tile by a [BLOCK_K, BLOCK_X] tile (in full float32
        precision: TF32 would break the result check)."""
        factors = _factors(rhs_node)
        mapped = {self.info.axes[j]: self.names[it] for it, j in self.mapped.items() if it in self.names}
        if set(mapped) != {0, 1}:
            return False
        xv, yv = mapped[0], mapped[1]
        cx = _CExpr(self, subst)

        def uses(node, name):
            return bool(re.search(rf"\b{re.escape(name)}\b", cx.visit(node)))
        left = right = None
        outside = []
        for f in factors:
            if not uses(f, var):
                outside.append(f)
            elif isinstance(f, c_ast.ArrayRef) and uses(f, yv) and not uses(f, xv) and left is None:
                left = f
            elif isinstance(f, c_ast.ArrayRef) and uses(f, xv) and not uses(f, yv) and right is None:
                right = f
            else:
                return False
        if left is None or right is None:
            return False
        rk, kb, rm, cm = self.fresh("rk"), self.fresh("k"), self.fresh("rowmask"), self.fresh("colmask")
        full = self.fresh("full")
        a_sub = {k: re.sub(rf"\b{re.escape(var)}\b", f"{rk}[None, :]", v) for k, v in subst.items()}
        b_sub = {k: re.sub(rf"\b{re.escape(var)}\b", f"{rk}[:, None]", v) for k, v in subst.items()}
        _, a_addr = _CExpr(self, a_sub).address(left, zero=False)
        _, b_addr = _CExpr(self, b_sub).address(right, zero=False)

        def k_loop(start, stop, a_mask, b_mask, at):
            self.emit(f"for {kb} in range({start}, {stop}, BLOCK_K):", at)
            self.emit(f"{rk} = {kb} + tl.arange(0, BLOCK_K)", at + 1)
            ta, tb = self.fresh("a"), self.fresh("b")
            self.emit(f"{ta} = tl.load({a_addr}" + (f", mask={a_mask}, other=0)" if a_mask else ")"), at + 1)
            self.emit(f"{tb} = tl.load({b_addr}" + (f", mask={b_mask}, other=0)" if b_mask else ")"), at + 1)
            if outside:
                prod = f"tl.dot({ta}, {tb}, input_precision=\"ieee\")"
                for f in outside:
                    prod = f"{prod} * ({cx.visit(f)})"
                self.emit(f"{acc} = {acc} + {prod}", at + 1)
            else:  # accumulate inside the dot (one fused multiply-add per product, no second tile)
                # out_dtype is the accumulator's: Triton's default (float32) rejects a float64 one
                self.emit(f"{acc} = tl.dot({ta}, {tb}, {acc}, input_precision=\"ieee\", out_dtype={acc}.dtype)",
                          at + 1)

        # A tile whose every lane is in the domain (all but the edge tiles), over a K extent that whole
        # blocks cover, loads its blocks without masks: masks that Triton cannot analyze (the row and
        # column masks are reductions of MASK) would make it load B element by element, not in vectors.
        # (A third loop for a last partial K block raised register use until some configurations spilled.)
        self.emit(f"{full} = (tl.min(MASK.to(tl.int32)) != 0) & ((({hi}) - ({lo})) % BLOCK_K == 0)", indent)
        self.emit(f"if {full}:", indent)
        k_loop(lo, hi, "", "", indent + 1)
        self.emit("else:", indent)
        self.emit(f"{rm} = tl.max(MASK.to(tl.int32), axis=1)[:, None] != 0", indent + 1)
        self.emit(f"{cm} = tl.max(MASK.to(tl.int32), axis=0)[None, :] != 0", indent + 1)
        k_loop(lo, hi, f"{rm} & ({rk}[None, :] < {hi})", f"({rk}[:, None] < {hi}) & {cm}", indent + 1)
        return True

    def chunked(self, body, var, lo, hi, indent) -> bool:
        """A loop of element-wise statements and reductions, run BLOCK_R iterations at a time, statement
        by statement. Legal when nothing flows between different iterations except through the
        reductions: every array an element-wise statement writes is referenced with one and the same
        address throughout the body, and that address moves with the loop; a reduction's target is
        referenced by its own statement only."""
        kids = list_(body.block_get_children()) if body.get_type() == isl.ast_node_type.block else [body]
        if any(k.get_type() != isl.ast_node_type.user for k in kids):
            return False
        stmts = [self._statement(k.user_get_expr()) for k in kids]
        refs: dict[str, set[str]] = {}  # array -> the addresses it is referenced with
        count: dict[str, int] = {}  # array -> statements referencing it
        plan = []
        for st, subst in stmts:
            b = st.body
            if not isinstance(b, c_ast.Assignment):
                return False
            cx = _CExpr(self, subst)
            names = set()
            for node in _array_refs(b):
                name, addr = cx.address(node, zero=False)
                refs.setdefault(name, set()).add(addr)
                names.add(name)
            for name in names:
                count[name] = count.get(name, 0) + 1
            acc = _accumulation(b)
            target = b.lvalue
            while isinstance(target, c_ast.ArrayRef):
                target = target.name
            if not isinstance(target, c_ast.ID):
                return False
            if isinstance(b.lvalue, c_ast.ArrayRef):
                _, waddr = cx.address(b.lvalue, zero=False)
            elif target.name in self.scalars_on_device:
                waddr = self.rn.get(target.name, target.name)
            else:
                return False
            moves = bool(re.search(rf"\b{re.escape(var)}\b", waddr))
            if not moves and acc is not None and acc[0] in ("+", "max", "min") \
                    and not _reads_array(acc[1], target.name):
                plan.append(("reduce", st, subst, acc, target.name))
            elif moves and isinstance(b.lvalue, c_ast.ArrayRef) and _injective(b.lvalue, subst, var):
                plan.append(("each", st, subst, None, self.rn.get(target.name, target.name)))
            else:
                return False
        for kind, _st, _subst, _acc, name in plan:
            if kind == "each" and len(refs.get(name, ())) != 1:
                return False
            if kind == "reduce" and (count.get(self.rn.get(name, name), 0) != 1 or
                                     len(refs.get(self.rn.get(name, name), {""})) > 1):
                return False
        # emit: accumulators in registers around the chunk loop
        accs = {}
        for kind, st, subst, _acc, name in plan:
            if kind == "reduce":
                b = st.body
                addr = _CExpr(self, subst).address(b.lvalue)[1] if isinstance(b.lvalue, c_ast.ArrayRef) \
                    else f"{self.rn.get(name, name)} + ZERO"
                p, a = self.fresh("p"), self.fresh("acc")
                self.emit(f"{p} = {addr}", indent)
                self.emit(f"{a} = tl.load({p}, mask=MASK, other=0)", indent)
                accs[id(st)] = (p, a)
                self.arrays_used.add(name)
        at = len(self.lines)
        r, axes, lanes, saved = self.open_chunks(lo, hi, indent)
        stored: dict[str, str] = {}  # address -> the value this chunk stored there (forwarded, not reloaded)
        written = {name for _kind, _st, _subst, _acc, name in plan} | {self.rn.get(n, n) for *_, n in plan}
        hoisted: dict[str, str] = {}  # a load that does not move with the loop -> its value, loaded before it

        def lift(text):
            if axes:
                text = hoist(text)
            text = _lift(text, lanes) if axes else text
            for addr, value in stored.items():
                text = text.replace(f"tl.load({addr}, mask=MASK, other=0)", value)
            return text

        def hoist(text):
            """A row's own element (softmax's mx[i] in its j loop) is loaded once per row, before the chunk
            loop, when the loop writes nothing to that array; lanes past the loop's end never see it."""
            for start, end, addr, mask in reversed(_loads(text)):
                words = set(re.findall(r"[A-Za-z_]\w*", addr))
                if mask != "MASK" or r in words or not addr.endswith(" + ZERO") or \
                        re.findall(r"[A-Za-z_]\w*", addr)[0] in written:
                    continue
                load = text[start:end]
                if load not in hoisted:
                    h = self.fresh("h")
                    guard = "" if (_static_extent(lo, hi) or 0) > 0 else f" & {_t(f'({lo}) < ({hi})')}"
                    self.lines.insert(at, "    " * indent + f"{h} = tl.load({addr}, mask=MASK{guard}, other=0)")
                    hoisted[load] = f"{h}[:, None]"
                text = text[:start] + hoisted[load] + text[end:]
            return text
        for kind, st, subst, acc, _name in plan:
            inner = {k: re.sub(rf"\b{re.escape(var)}\b", r, v) for k, v in subst.items()}
            cx = _CExpr(self, inner)
            b = st.body
            if kind == "each":
                _, addr = cx.address(b.lvalue)
                rhs = cx.visit(b.rvalue)
                p, val = self.fresh("p"), self.fresh("t")
                self.emit(f"{p} = {lift(addr)}", indent + 1)
                old_value = lift(f"tl.load({addr}, mask=MASK, other=0)")
                self.emit(f"{val} = {lift(rhs)}" if b.op == "=" else
                          f"{val} = {old_value} {b.op[:-1]} ({lift(rhs)})", indent + 1)
                self.emit(f"tl.store({p}, {val}, mask=MASK)", indent + 1)
                stored[_lift(addr, lanes) if axes else addr] = val
            else:
                red_kind, rhs_node = acc
                self.reduce_chunk(red_kind, accs[id(st)][1], lift(cx.visit(rhs_node)), axes, indent + 1)
        self.close_chunks(saved, indent)
        for p, a in accs.values():
            self.emit(f"tl.store({p}, {a}, mask=MASK)", indent)
        return True

    def vector_reduction(self, acc, kind, rhs_node, subst, var, lo, hi, indent) -> None:
        """The loop's iterations become a new, innermost tensor axis of BLOCK_R lanes, reduced with
        tl.sum / tl.max / tl.min; the outer loop steps over blocks of BLOCK_R."""
        r, axes, lanes, saved = self.open_chunks(lo, hi, indent)
        inner = {k: re.sub(rf"\b{re.escape(var)}\b", r, v) for k, v in subst.items()}
        rhs = _CExpr(self, inner).visit(rhs_node)
        self.reduce_chunk(kind, acc, _lift(rhs, lanes) if axes else rhs, axes, indent + 1)
        self.close_chunks(saved, indent)

    def open_chunks(self, lo, hi, indent):
        """`for k in range(lo, hi, BLOCK_R)` with r its BLOCK_R lanes (a new innermost tensor axis when a
        dimension is mapped); MASK and ZERO take that axis, their old values saved for close_chunks.
        Returns r, the mapped axes, the lane vectors to lift to 2-D, and the saved names."""
        axes = sorted(set(self.info.axes))
        r, base = self.fresh("r"), self.fresh("k")
        extent = _static_extent(lo, hi)
        self.chunk_extents.append(extent)
        lane = "[None, :]" if axes else ""
        if self.persistent and extent is not None:
            # one chunk; lanes, ZERO and MASK written the same way for every loop of this extent
            step = self.fresh("lanes")
            self.emit("if True:", indent)
            self.emit(f"{step} = tl.arange(0, BLOCK_R){lane}", indent + 1)
            self.emit(f"{r} = ({lo}) + {step}", indent + 1)
            inside = f"{step} < {extent}"
        else:
            step = r
            self.emit(f"for {base} in range({lo}, {hi}, BLOCK_R):", indent)
            self.emit(f"{r} = {base} + tl.arange(0, BLOCK_R){lane}", indent + 1)
            inside = f"{r} < {hi}"
        lanes = [v for v in sorted(self.vector) if v not in ("ZERO", "MASK") and not v.startswith("g_")]
        saved_m, saved_z = self.fresh("mask"), self.fresh("zero")
        self.emit(f"{saved_m} = MASK", indent + 1)
        self.emit(f"{saved_z} = ZERO", indent + 1)
        if axes:
            self.emit(f"ZERO = {saved_z}[:, None] + ({step} * 0)", indent + 1)
            self.emit(f"MASK = {saved_m}[:, None] & ({inside})", indent + 1)
        else:
            self.emit(f"ZERO = {step} * 0", indent + 1)
            self.emit(f"MASK = ({inside})", indent + 1)
        return r, axes, lanes, (saved_m, saved_z)

    def close_chunks(self, saved, indent) -> None:
        self.emit(f"MASK = {saved[0]}", indent + 1)
        self.emit(f"ZERO = {saved[1]}", indent + 1)

    def reduce_chunk(self, kind, acc, rhs, axes, indent) -> None:
        """acc = acc (+, max, min) the reduction of rhs over the chunk's lanes, masked-off lanes neutral."""
        neutral = {"+": "0", "max": "float('-inf')", "min": "float('inf')"}[kind]
        red = {"+": "tl.sum", "max": "tl.max", "min": "tl.min"}[kind]
        val = self.fresh("t")
        self.emit(f"{val} = tl.where(MASK, {rhs}, {neutral})", indent)
        self.emit(f"{acc} = {_combine(kind, acc, f'{red}({val}, axis={1 if axes else 0})')}", indent)


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


def _range(lo: str, hi: str, inc: str) -> str:
    """A sequential loop: unrolled at compile time (tl.static_range) when its bounds are integer literals
    and it runs at most UNROLL_MAX times (a stencil's taps), a plain range otherwise."""
    a, b, c = _literal(lo), _literal(hi), _literal(inc)
    if a is not None and b is not None and c is not None:
        if c > 0 and 0 <= (b - a + c - 1) // c <= UNROLL_MAX:
            return f"tl.static_range({a}, {b}, {c})"
    return f"range({lo}, {hi}, {inc})"


_ASSIGN = re.compile(r"^(\s*)([A-Za-z_]\w*) = (.*)$")
_STORE = re.compile(r"^(\s*)tl\.store\((p\d+), (.*), mask=MASK\)$")
_WORD = re.compile(r"[A-Za-z_]\w*")
_LITERAL = re.compile(r"-?\d+(\.\d*)?(e-?\d+)?")


def forward_stores(lines: list[str]) -> list[str]:
    """Store-to-load forwarding and dead-store elimination inside one program, on the kernel's text.

    A statement that writes an element and a later one that reads it back under the same mask (a stencil's
    `B[i][j] = 0` before its accumulation, softmax's `mx[i] = A[i][0]` before the max) go through global
    memory; here the read takes the stored value instead, and a store that the same lanes overwrite with
    nothing reading the array in between is dropped. Values are tracked by the versions of every name
    they mention (a reassigned MASK, ZERO or index is another value); inside a loop only what the loop
    does not change survives, and nothing learnt inside a loop or an `if` is used after it."""
    return _flatten(_Forwarder().block(_nest(lines)))


def _nest(lines: list[str]) -> list:
    """Lines as a tree: a line ending in ':' owns the deeper-indented lines after it (`if True:` blocks are
    dissolved into the lines around them)."""
    out: list = []
    k = 0
    while k < len(lines):
        line = lines[k]
        k += 1
        if line.rstrip().endswith(":"):
            depth = len(line) - len(line.lstrip())
            j = k
            while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > depth):
                j += 1
            if line.strip() == "if True:":  # a block only for the indentation (one chunk): straight-line code
                out += _nest([x[4:] for x in lines[k:j]])
            else:
                out.append((line, _nest(lines[k:j])))
            k = j
        else:
            out.append(line)
    return out


def _flatten(tree: list) -> list[str]:
    out: list[str] = []
    for item in tree:
        if isinstance(item, tuple):
            out.append(item[0])
            out += _flatten(item[1])
        else:
            out.append(item)
    return out


def _loads(text: str) -> list[tuple[int, int, str, str | None]]:
    """(start, end, address, mask) of every `tl.load(...)` in *text*; mask is None unless the load has the
    form `tl.load(address, mask=M, other=0)`."""
    out = []
    for m in re.finditer(r"tl\.load\(", text):
        depth, k = 1, m.end()
        while k < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            k += 1
        args = _split_args(text[m.end():k - 1])
        plain = len(args) == 3 and args[1].startswith("mask=") and args[2] == "other=0"
        out.append((m.start(), k, args[0], args[1][5:] if plain else None))
    return out


def _split_args(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[start:k].strip())
            start = k + 1
    parts.append(text[start:].strip())
    return parts


_IMPURE = ("tl.load", "tl.atomic", "tl.rand")


def _is_affine(text: str) -> bool:
    """Integer arithmetic of names and integer literals only (`8192 + lanes3`, `k5 - 1`)."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    ok = (ast.Name, ast.Load, ast.BinOp, ast.UnaryOp, ast.Add, ast.Sub, ast.Mult, ast.USub)
    return all(isinstance(n, ok) or (isinstance(n, ast.Constant) and type(n.value) is int)
               for n in ast.walk(tree))


@dataclass
class _Fact:
    """What a program knows about one element: the value it stored there, under which mask."""

    value: str
    token: object  # the value's version when stored
    base: str  # the array
    names: frozenset  # every name the address, the mask and the value mention


class _Forwarder:
    """Tracks values by version: every assignment gives its name a new version, except a copy of a name
    (`mask2 = MASK`, `MASK = mask2`: the same version) and a pure expression seen before over the same
    versions (value numbering: two chunks' `MASK = mask[:, None] & (lanes < 4096)` are one value).
    Addresses compare in a normal form where integer names (`r16 = 4096 + lanes3`) are inlined."""

    def __init__(self):
        self.version: dict[str, object] = {}
        self.defs: dict[str, tuple[object, str]] = {}  # affine name -> (its version, its tokenized text)
        self.addr: dict[str, tuple[str, str]] = {}  # pN -> (address text, its key where defined)
        self.known: dict[tuple, _Fact] = {}  # (address key, MASK version) -> fact
        self.ids: dict[object, int] = {}
        self.counter = 0
        self.fresh = 0

    def new(self) -> int:
        self.counter += 1
        return self.counter

    def ver(self, name: str) -> object:
        """The version of *name*'s current value (a name never assigned here is an argument: one value)."""
        if name not in self.version:
            self.version[name] = self.new()
        return self.version[name]

    def tokenize(self, text: str) -> str:
        def sub(m):
            w = m.group(0)
            d = self.defs.get(w)
            if d is not None and d[0] == self.ver(w):
                return f"({d[1]})"
            return f"_v{self.ids.setdefault(self.ver(w), len(self.ids))}"
        return re.sub(r"(?<![.\w])[A-Za-z_]\w*", sub, text)

    def key(self, text: str) -> str:
        if text in self.addr:
            return self.addr[text][1]
        return _canonical(self.tokenize(text))

    def base(self, text: str) -> str:
        return _WORD.findall(self.addr[text][0] if text in self.addr else text)[0]

    def assign(self, name: str, value: str | None) -> None:
        if value is not None and re.fullmatch(r"[A-Za-z_]\w*", value):
            self.version[name] = self.ver(value)
            d = self.defs.get(value)
            if d is not None and d[0] == self.ver(value):
                self.defs[name] = d
            return
        if value is None or any(x in value for x in _IMPURE):
            self.version[name] = self.new()
        else:
            self.version[name] = "=" + _canonical(self.tokenize(value))
        if value is not None and _is_affine(value):
            self.defs[name] = (self.version[name], self.tokenize(value))
        if value is not None and re.fullmatch(r"p\d+", name):
            self.addr[name] = (value, _canonical(self.tokenize(value)))

    def effects(self, tree: list) -> tuple[set[str], set[str]]:
        """What running *tree* does: the names it leaves changed (a name it restores, as MASK after an
        inner loop, does not count) and the arrays it stores to or loads from."""
        for line in _flatten(tree):
            for w in _WORD.findall(line):
                self.ver(w)
        saved = dict(self.version), dict(self.addr), dict(self.defs)
        assigned: set[str] = set()
        touched: set[str] = set()
        for line in _flatten(tree):
            if "tl.atomic" in line:
                touched.add("*")
            for _s, _e, a, _m in _loads(line):
                touched.add(self.base(a))
            if (st := _STORE.match(line)) or (st := re.match(r"(\s*)tl\.store\(([^,]+),", line)):
                touched.add(self.base(st.group(2)))
            if m := _ASSIGN.match(line):
                assigned.add(m.group(2))
                self.assign(m.group(2), m.group(3))
            elif m := re.match(r"\s*for (\w+) in", line):
                assigned.add(m.group(1))
                self.assign(m.group(1), None)
        changed = {n for n in assigned if self.version.get(n) != saved[0].get(n)}
        self.version, self.addr, self.defs = saved
        return changed, touched

    def block(self, tree: list) -> list:
        out: list = []
        pending: dict[tuple, tuple[int, str]] = {}  # fact key -> (index in out, array) of an unread store
        for item in tree:
            if isinstance(item, tuple):
                header, body = item
                changed, touched = self.effects(body)
                header = self.rewrite(header)
                touched |= {self.base(a) for _s, _e, a, _m in _loads(header)}
                loop = header.lstrip().startswith(("for ", "while "))
                if loop:
                    # Iteration 2 starts from what iteration 1 left: what the body changes is unknown.
                    m = re.match(r"\s*for (\w+) in", header)
                    for n in changed | ({m.group(1)} if m else set()):
                        self.assign(n, None)
                    self.forget(changed, touched)
                pending = {k: v for k, v in pending.items() if v[1] not in touched and "*" not in touched}
                outer = dict(self.known)
                inner = self.block(body)
                for n in changed:
                    self.assign(n, None)  # the block may or may not have run
                self.known = outer
                self.forget(changed, touched)
                out.append((header, inner))
                continue
            if "tl.atomic" in item:
                self.known, pending = {}, {}
            line = self.rewrite(item)
            for _s, _e, a, _m in _loads(line):
                b = self.base(a)
                pending = {k: v for k, v in pending.items() if v[1] != b}
            st = _STORE.match(line)
            m = _ASSIGN.match(line)
            if st:
                indent, p, value = st.groups()
                if not (_LITERAL.fullmatch(value) or re.fullmatch(r"[A-Za-z_]\w*", value)):
                    name = f"fwd{self.fresh}"
                    self.fresh += 1
                    out.append(f"{indent}{name} = {value}")
                    self.assign(name, None)
                    value = name
                    line = f"{indent}tl.store({p}, {value}, mask=MASK)"
                b = self.base(p)
                k = (self.key(p), self.ver("MASK"))
                if k in pending:
                    out[pending[k][0]] = None  # the same lanes overwrite it and nobody read it in between
                self.forget(set(), {b})
                pending = {kk: v for kk, v in pending.items() if v[1] != b}
                names = set(_WORD.findall(self.addr[p][0] if p in self.addr else p)) | {"MASK", value}
                self.known[k] = _Fact(value, self.ver(value) if not _LITERAL.fullmatch(value) else value, b,
                                      frozenset(names))
                pending[k] = (len(out), b)
            elif re.match(r"\s*tl\.store\(", line):
                b = self.base(_split_args(line.strip()[len("tl.store("):-1])[0])
                self.forget(set(), {b})
                pending = {kk: v for kk, v in pending.items() if v[1] != b}
            elif m:
                self.assign(m.group(2), m.group(3))
            out.append(line)
        return [x for x in out if x is not None]

    def rewrite(self, line: str) -> str:
        """Replace each load of an element whose value this program stored by that value."""
        for start, end, a, mask in reversed(_loads(line)):
            if mask != "MASK":
                continue
            fact = self.known.get((self.key(a), self.ver("MASK")))
            if fact and fact.token == (fact.value if _LITERAL.fullmatch(fact.value) else self.ver(fact.value)):
                value = f"tl.where(MASK, {fact.value}, 0).to({self.base(a)}.dtype.element_ty)"
                line = line[:start] + value + line[end:]
        return line

    def forget(self, names: set[str], arrays: set[str]) -> None:
        """Drop what mentions *names* or lives in *arrays*."""
        self.known = {k: f for k, f in self.known.items()
                      if not (f.names & names or f.base in arrays or "*" in arrays)}


def _barriers(lines: list[str]) -> list[str]:
    """A barrier after every store to an array the kernel also loads from: the elements of one tensor
    can live in other threads than those of the next tensor that reads them (another shape, another
    layout), and Triton orders global memory between the threads of a program only at a barrier."""
    base = {}
    for line in lines:
        m = re.match(r"\s*(p\d+) = (\w+) \+", line)
        if m:
            base[m.group(1)] = m.group(2)
    loaded = set()
    for line in lines:
        for _start, _end, address, _mask in _loads(line):
            head = re.match(r"\w+", address)
            if head:
                loaded.add(base.get(head.group(0), head.group(0)))
    out = []
    for line in lines:
        out.append(line)
        m = re.match(r"(\s*)tl\.store\((p\d+),", line)
        if m and base.get(m.group(2)) in loaded:
            out.append(f"{m.group(1)}tl.debug_barrier()")
    return out


def _array_refs(node) -> list:
    """The outermost array references of a C expression (A[i][j] once, not also A[i])."""
    out = []

    class V(c_ast.NodeVisitor):
        def visit_ArrayRef(self, n):
            out.append(n)
            self.visit(n.subscript)  # subscripts can reference arrays too
            inner = n.name
            while isinstance(inner, c_ast.ArrayRef):
                self.visit(inner.subscript)
                inner = inner.name
    V().visit(node)
    return out


def _injective(ref: c_ast.ArrayRef, subst: dict[str, str], var: str) -> bool:
    """Some subscript of the reference is the loop counter plus a constant: distinct iterations write
    distinct elements."""
    from pycparser import c_generator
    gen = c_generator.CGenerator()
    while isinstance(ref, c_ast.ArrayRef):
        text = gen.visit(ref.subscript)
        for k, v in subst.items():
            text = re.sub(rf"\b{re.escape(k)}\b", v, text)
        if re.fullmatch(rf"[(\s]*{re.escape(var)}(\s*[-+]\s*\d+)?[)\s]*([-+]\s*\d+[)\s]*)*", text):
            return True
        ref = ref.name
    return False


def _factors(node) -> list:
    """The factors of a product (a single factor for anything else)."""
    if isinstance(node, c_ast.BinaryOp) and node.op == "*":
        return _factors(node.left) + _factors(node.right)
    return [node]


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


def _accumulation(b: c_ast.Assignment):
    """('+', rhs) for W += rhs; ('max', e) for W = fmax(W, e) or W = W > e ? W : e; None otherwise."""
    if b.op in ("+=", "-=", "*="):
        if b.op == "-=":
            return ("+", c_ast.UnaryOp("-", b.rvalue))
        return ("+" if b.op == "+=" else "*", b.rvalue)
    if b.op == "=" and isinstance(b.rvalue, c_ast.FuncCall) and isinstance(b.rvalue.name, c_ast.ID):
        fn = b.rvalue.name.name
        args = b.rvalue.args.exprs if b.rvalue.args else []
        kind = "max" if fn in ("fmax", "fmaxf", "max", "MAX") else "min" if fn in ("fmin", "fminf", "min", "MIN") \
            else None
        if kind and len(args) == 2 and _same(args[0], b.lvalue):
            return (kind, args[1])
        if kind and len(args) == 2 and _same(args[1], b.lvalue):
            return (kind, args[0])
    return None


def _same(a, b) -> bool:
    from pycparser import c_generator
    g = c_generator.CGenerator()
    return g.visit(a) == g.visit(b)


def _reads_array(node, name: str) -> bool:
    class V(c_ast.NodeVisitor):
        found = False

        def visit_ID(self, n):
            if n.name == name:
                V.found = True
    V().visit(node)
    return V.found


def _combine(kind: str, acc: str, value: str) -> str:
    if kind == "+":
        return f"{acc} + ({value})"
    if kind == "*":
        return f"{acc} * ({value})"
    return f"tl.{'maximum' if kind == 'max' else 'minimum'}({acc}, {value})"


class _HostPrinter:
    """The launcher: host loops in Python, one launch per kernel mark."""

    def __init__(self, scop: Scop, gs: GpuSchedule, prefix: str, scop_index: int):
        self.scop, self.gs, self.prefix, self.scop_index = scop, gs, prefix, scop_index
        self.rn = py_names(scop)
        self.loops: list[str] = []  # iterators of the host loops around the current node
        self.lines: list[str] = []
        self.kernels: list[str] = []
        self.tiles: dict[str, str] = {}  # kernel name -> elements of its largest tiles, over cfg
        self.reads: set[str] = set()  # launch parameters read by the kernels and their launches
        self.scalars_on_device = {a.name for a in scop.arrays if a.ndim == 0 and a.written}

    def emit(self, text: str, indent: int) -> None:
        self.lines.append("    " * indent + text)

    def expr(self, e: isl.AstExpr) -> str:
        return _py_expr(e, self.scop, self.rn, kernel=False)

    def node(self, n: isl.AstNode, indent: int) -> None:
        t = n.get_type()
        if t == isl.ast_node_type.block:
            for child in list_(n.block_get_children()):
                self.node(child, indent)
        elif t == isl.ast_node_type.for_:
            it = self.expr(n.for_get_iterator())
            init, inc = self.expr(n.for_get_init()), self.expr(n.for_get_inc())
            cond = n.for_get_cond()
            end = self.expr(cond.op_get_arg(1))
            if cond.op_get_type() == _T.le:
                end = f"({end}) + 1"
            self.emit(f"for {it} in range({init}, {end}{'' if inc == '1' else ', ' + inc}):", indent)
            self.loops.append(it)
            self.node(n.for_get_body(), indent + 1)
            self.loops.pop()
        elif t == isl.ast_node_type.if_:
            self.emit(f"if {self.expr(n.if_get_cond())}:", indent)
            self.node(n.if_get_then_node(), indent + 1)
            if n.if_has_else_node():
                self.emit("else:", indent)
                self.node(n.if_get_else_node(), indent + 1)
        elif isinstance(mark_of(n), KernelMark):
            self.launch(self.gs.kernel(mark_of(n)), n.mark_get_node(), indent)
        else:  # pragma: no cover
            raise UnsupportedError(f"Triton target: isl AST node {t} outside a kernel")

    def bound(self, pa: isl.PwAff) -> str:
        return _py_expr(param_expr(self.scop, pa), self.scop, self.rn, kernel=False)

    def kernel_body(self, info: KernelInfo, body: isl.AstNode, indent: int, persistent: bool) -> _KernelPrinter:
        kp = _KernelPrinter(self.scop, info, self.scalars_on_device, self.prefix, self.rn)
        kp.persistent = persistent
        kp.prologue(indent)
        try:
            kp.node(body, indent)
        except UnsupportedError as e:
            if e.line is None:
                raise UnsupportedError(e.message, self.scop.file, kp.last_line) from None
            raise
        return kp

    def launch(self, info: KernelInfo, body: isl.AstNode, indent: int) -> None:
        kp = self.kernel_body(info, body, 1, persistent=False)
        lines = kp.lines
        width = max((e for e in kp.chunk_extents if e is not None), default=None)
        if width is not None:
            # BLOCK_R covers every constant-extent chunk loop: each runs as one chunk, in straight-line
            # code, so that a row stored by one loop and read by the next stays in registers (softmax's
            # exp(A - max) into B, then B / sum). Triton compiles only the branch the constexpr selects.
            kq = self.kernel_body(info, body, 2, persistent=True)
            lines = [f"    if BLOCK_R >= {width}:"] + kq.lines + ["    else:"] + ["    " + x for x in kp.lines]
            kp.arrays_used |= kq.arrays_used
        text = "\n".join(_barriers(forward_stores(lines)))
        words = set(re.findall(r"[A-Za-z_]\w*", text))
        arrays = [a for a in self.scop.arrays if a.name in kp.arrays_used]
        strides = [f"s_{self.rn[a.name]}_{d}" for a in arrays for d in range(a.ndim - 1)]
        scalars = [p[:-1] if p.endswith("_") and p[:-1] in self.scop.params else p
                   for p in self.scop.params if p not in self.scop.constants]
        scalars += [a.name for a in self.scop.arrays if a.ndim == 0 and not a.written]
        scalars += [f"{self.prefix}{k}" for k in range(info.depth)]
        scalars = [self.rn.get(s, s) for s in dict.fromkeys(scalars)]
        scalars = [s for s in scalars if s in words]
        axes = sorted(set(info.axes))
        extra = [f"lo_{j}" for j in range(info.mapped)] + [f"n_{AXES[ax]}" for ax in axes]
        consts = ["BLOCK_X: tl.constexpr", "BLOCK_Y: tl.constexpr", "BLOCK_Z: tl.constexpr",
                  "BLOCK_R: tl.constexpr", "BLOCK_K: tl.constexpr"]
        # isl can emit a mark more than once (a loop split around a hole): each copy is its own kernel
        name = f"_kernel{self.scop_index}_{info.index}" + (f"_{len(self.kernels)}" if any(
            f"def _kernel{self.scop_index}_{info.index}(" in k for k in self.kernels) else "")
        # a floating scalar keeps its C precision (a Python float is an fp32 argument otherwise)
        back = {v: k for k, v in self.rn.items()}
        typed = [f"{x}: tl.{FLOAT_NAMES[self.scop.float_scalars[back.get(x, x)]]}"
                 if self.scop.float_scalars.get(back.get(x, x)) and back.get(x, x) not in self.scop.params else x
                 for x in scalars]
        params = [self.rn[a.name] for a in arrays] + strides + typed + extra
        self.kernels.append(f"@triton.jit\ndef {name}({', '.join(params + consts)}):\n{text}\n")
        present = [f"{self.prefix}{k}" in self.loops for k in range(info.depth)]
        host_names = [f"{self.prefix}{k}" for k in range(info.depth) if present[k]]
        for j in range(info.mapped):
            lo_pa, hi_pa = info.bounds(j, present)
            self.emit(f"lo_{j} = {self.bound(bound_as_params(lo_pa, host_names))}", indent)
            hi = self.bound(bound_as_params(hi_pa, host_names))
            self.emit(f"n_{AXES[info.axes[j]]} = ({hi}) - lo_{j} + 1", indent)
        cond = " and ".join(f"n_{AXES[ax]} > 0" for ax in axes) or "True"
        self.emit(f"if {cond}:", indent)
        blocks = _kernel_blocks(info.mapped, "BLOCK_R" in text)
        self.emit(f"bx, by, bz = {blocks}", indent + 1)
        self.tiles[name] = _tile_elements(blocks, "tl.dot(" in text, "BLOCK_R" in text)
        self.reads.update(re.findall(r"cfg\['(\w+)'\]", blocks))
        self.reads.update(n for n in ("BLOCK_R", "BLOCK_K") if f"tl.arange(0, {n})" in text)
        if "tl.dot(" in text:  # its tile size (tile_elements) counts BLOCK_X and BLOCK_Y
            self.reads.update(("BLOCK_X", "BLOCK_Y"))
        # ceiling division in plain integers (triton.cdiv costs ~2 us a call on the host); n_ > 0 here
        grid = [f"(n_{AXES[ax]} + {b} - 1) // {b}" if ax in axes else "1" for ax, b in enumerate(("bx", "by", "bz"))]
        args = [self.rn[a.name] for a in arrays]
        args += [f"{self.rn[a.name]}.stride({d})" for a in arrays for d in range(a.ndim - 1)]
        args += scalars + extra
        # the kernel's parameters are the arrays, the numbers, then the constexprs, in this order
        self.emit(f"_launch({name}, ({', '.join(grid)}), {_tuple(args[:len(arrays)])}, "
                  f"{_tuple(args[len(arrays):])}, (bx, by, bz, cfg['BLOCK_R'], cfg['BLOCK_K']), "
                  "cfg['num_warps'], cfg['num_stages'])", indent + 1)


def _tuple(items: list[str]) -> str:
    """A Python tuple display of the expressions."""
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _kernel_blocks(mapped: int, reduces: bool) -> str:
    """A kernel's block sizes from the configuration: BLOCK_X/Y/Z along its mapped dims, or BLOCK_M rows
    for a one-dimensional kernel whose rows are reduced as vectors of BLOCK_R lanes (its tiles are
    BLOCK_M x BLOCK_R: the row count is its own knob, not the width of an element-wise block)."""
    if mapped <= 0:
        return "1, 1, 1"
    if mapped == 1:
        return "cfg['BLOCK_M'], 1, 1" if reduces else "cfg['BLOCK_X'], 1, 1"
    if mapped == 2:
        return "cfg['BLOCK_X'], cfg['BLOCK_Y'], 1"
    return "cfg['BLOCK_X'], cfg['BLOCK_Y'], cfg['BLOCK_Z']"


def _tile_elements(blocks: str, dot: bool, reduces: bool) -> str:
    """The elements of a kernel's largest tiles, as an expression over cfg (for rejecting a
    configuration whose tiles cannot fit in registers before compiling it)."""
    rows = " * ".join(f"({b})" for b in blocks.split(", "))
    if dot:
        return f"{rows} + cfg['BLOCK_K'] * (cfg['BLOCK_X'] + cfg['BLOCK_Y'])"
    return f"{rows} * cfg['BLOCK_R']" if reduces else rows


def run_arguments(scop: Scop) -> tuple[str, ...]:
    """run()'s parameters: the arrays (and written scalars, as 1-element tensors), then the numbers."""
    used = {a.array for st in scop.statements for a in st.accesses}
    tensors = [a.name for a in scop.arrays if a.name in used and (a.ndim > 0 or a.written)]
    numbers = [p[:-1] if p.endswith("_") and p[:-1] in scop.params else p
               for p in scop.params if p not in scop.constants]
    numbers += [a.name for a in scop.arrays if a.ndim == 0 and not a.written]
    rn = py_names(scop)
    return tuple(rn.get(x, x) for x in dict.fromkeys(tensors + numbers))


def generate_triton_region(scop: Scop, gs: GpuSchedule, prefix: str, scop_index: int) -> TritonRegion:
    hp = _HostPrinter(scop, gs, prefix, scop_index)
    ast = build_ast(scop, gs, prefix)
    hp.node(ast, 1)
    return TritonRegion("\n\n".join(hp.kernels), "\n".join(hp.lines), run_arguments(scop), hp.tiles,
                        frozenset(hp.reads))


MODULE_HEAD = '''"""Triton kernels generated by polytune from {file}.

run{suffix}({args}, config=None) runs scop region {first}: pass the arrays as torch tensors (contiguous, on
the GPU; scalars the region writes as 1-element tensors) and the other values as numbers. config overrides
the launch configuration (block sizes, num_warps, num_stages).
"""
import triton
import triton.language as tl
from triton.language.extra import libdevice

CONFIG = {config}
_LAUNCHED = {{}}


def _device():
    try:
        return triton.runtime.driver.active.get_current_device()
    except RuntimeError:  # no GPU driver: Triton's interpreter
        return None


def _launch(kernel, grid, tensors, numbers, constexprs, num_warps, num_stages):
    """kernel[grid](*tensors, *numbers, *constexprs, num_warps=..., num_stages=...). Triton picks the
    compiled kernel from the arguments' values (dtypes, pointer alignment, integers equal to 1 or divisible
    by 16, integer widths); the one it picked is remembered for these exact values, and a launch with the
    same values calls it directly, without Triton's argument binding (about 8 us of host time a launch)."""
    device = _device()
    key = None
    if device is not None:
        key = (kernel, device, grid, constexprs, num_warps, num_stages, *[t.data_ptr() for t in tensors],
               *[t.dtype for t in tensors], *map(type, numbers), *numbers)
        fast = _LAUNCHED.get(key)
        if fast is not None:
            fast(*tensors, *numbers, *constexprs)
            return
    compiled = kernel[grid](*tensors, *numbers, *constexprs, num_warps=num_warps, num_stages=num_stages)
    if key is not None and hasattr(compiled, "launch_metadata"):  # a compiled kernel (not the interpreter)
        if len(_LAUNCHED) >= 4096:
            _LAUNCHED.clear()
        _LAUNCHED[key] = compiled[grid]
'''


def generate_triton_module(path: str, regions: list[tuple[Scop, GpuSchedule]], prefix: str,
                           config: dict | None = None) -> str:
    return triton_module(path, regions, prefix, config).text


def triton_module(path: str, regions: list[tuple[Scop, GpuSchedule]], prefix: str,
                  config: dict | None = None) -> TritonModule:
    """The module of every region (kernels, a launcher run_<k>() each) and the launch parameters it reads:
    the block sizes its launches read, BLOCK_R/BLOCK_K where a kernel steps by them, num_warps, num_stages."""
    parts = []
    runs = []
    tiles: dict[str, str] = {}
    reads: set[str] = {"num_warps", "num_stages"}
    for k, (scop, gs) in enumerate(regions):
        r = generate_triton_region(scop, gs, prefix, k)
        parts.append(r.kernels)
        tiles.update(r.tiles)
        reads |= r.reads
        runs.append(f"def run_{k}({', '.join(r.arguments)}, config=None):\n"
                    f"    \"\"\"Scop region {k} ({scop.file}:{scop.begin_line}-{scop.end_line}).\"\"\"\n"
                    f"    cfg = dict(CONFIG, **(config or {{}}))\n{r.launcher or '    pass'}\n")
    cfg = dict(DEFAULT_CONFIG, **(config or {}))
    first = regions[0][0] if regions else None
    head = MODULE_HEAD.format(file=path, suffix="", args=", ".join(run_arguments(first)) if first else "",
                              first=0, config=repr(cfg))
    tail = "\nrun = run_0\n" if regions else "\n"
    tail += ("\n\ndef tile_elements(config=None):\n"
             "    \"\"\"Elements of each kernel's largest tiles under a configuration.\"\"\"\n"
             "    cfg = dict(CONFIG, **(config or {}))\n"
             "    return {" + ", ".join(f"{k!r}: {v}" for k, v in tiles.items()) + "}\n")
    return TritonModule(head + "\n\n" + "\n\n".join(parts) + "\n\n" + "\n\n".join(runs) + tail, frozenset(reads))


# ---- the data bridge: the original region's inputs and outputs, for verifying Triton variants -------------
PROBE_PRELUDE = r"""/* polytune probe: writes what a scop region reads and writes */
#include <stdio.h>
#include <stdlib.h>
#define polytune_code(x) _Generic((x), float: "f4", double: "f8", int: "i4", unsigned: "u4", long: "i8", \
  unsigned long: "u8", long long: "i8", short: "i2", unsigned short: "u2", signed char: "i1", \
  unsigned char: "u1", char: "i1", default: "??")
static FILE *polytune_probe_meta;
static const char *polytune_probe_phase;
static void polytune_probe_begin(const char *phase)
{
  char path[4096];
  const char *dir = getenv("POLYTUNE_PROBE");
  if (!dir) dir = ".";
  snprintf(path, sizeof path, "%s/%s.meta", dir, phase);
  polytune_probe_meta = fopen(path, "w");
  polytune_probe_phase = phase;
  if (!polytune_probe_meta) { perror("polytune probe"); exit(2); }
}
static void polytune_probe_array(const char *name, const char *code, const void *p, size_t bytes,
                                 int ndim, const size_t *dims)
{
  char path[4096];
  const char *dir = getenv("POLYTUNE_PROBE");
  FILE *f;
  int k;
  if (!dir) dir = ".";
  snprintf(path, sizeof path, "%s/%s.%s.bin", dir, polytune_probe_phase, name);
  f = fopen(path, "wb");
  if (!f || fwrite(p, 1, bytes, f) != bytes) { perror("polytune probe"); exit(2); }
  fclose(f);
  fprintf(polytune_probe_meta, "array %s %s", name, code);
  for (k = 0; k < ndim; k++) fprintf(polytune_probe_meta, " %zu", dims[k]);
  fprintf(polytune_probe_meta, "\n");
}
static void polytune_probe_value(const char *kind, const char *name, const char *code, double v)
{
  fprintf(polytune_probe_meta, "%s %s %s %.17g\n", kind, name, code, v);
}
static void polytune_probe_end(void) { fclose(polytune_probe_meta); }
"""


def generate_probe(scop: Scop, phase: str, avoid: frozenset[str] = frozenset()) -> str:
    """C code writing, at the start ('in') or the end ('out') of the region, every array it touches
    (its rows 0 .. the largest first index any access reaches; written ones only for 'out'), the
    parameters and the scalars, each with its C type, for the Triton harness."""
    from .cuda import array_extent
    used = {a.array for st in scop.statements for a in st.accesses}
    lines = [f'polytune_probe_begin("{phase}");']
    printer = Printer(scop, fresh_prefix(scop, avoid))
    for a in scop.arrays:
        if (a.name not in used and (a.ndim > 0 or a.written)) or (phase == "out" and not a.written):
            continue
        if a.ndim == 0:
            kind = "written" if a.written else "scalar"
            if kind == "scalar" and phase == "out":
                continue
            lines.append(f'polytune_probe_value("{kind}", "{a.name}", polytune_code({a.name}), '
                         f'(double)({a.name}));')
            continue
        pa = array_extent(scop, a.name)
        if pa is None:
            continue
        ext = strip(printer.expr(param_expr(scop, pa)))
        elem = a.name + "[0]" * a.ndim
        dims = [f"(size_t)(({ext}) >= 0 ? ({ext}) + 1 : 0)"]  # negative where nothing is accessed
        for k in range(1, a.ndim):
            dims.append(f"sizeof({a.name}{'[0]' * k}) / sizeof({a.name}{'[0]' * (k + 1)})")
        lines.append(f"{{ const size_t pt_dims[] = {{{', '.join(dims)}}}; "
                     f'polytune_probe_array("{a.name}", polytune_code({elem}), (const void *){a.name}, '
                     f"pt_dims[0] * sizeof({a.name}[0]), {a.ndim}, pt_dims); }}")
    if phase == "in":
        for p in scop.params:
            if p in scop.constants:
                continue
            c = p[:-1] if p.endswith("_") and p[:-1] in scop.params else p
            lines.append(f'polytune_probe_value("param", "{c}", polytune_code({c}), (double)({c}));')
    lines.append("polytune_probe_end();")
    return "{\n" + "\n".join(printer.macro_defs() + ["  " + x for x in lines] + printer.macro_undefs()) + "\n}\n"
