"""The base printer of isl ASTs as C-like text, shared by the C, CUDA and Triton emitters.

`Printer` prints expressions (with `min`/`max`/`floord` as helper macros under a fresh prefix, defined
before the region and #undef'd after it), blocks, ifs, plain for loops and the statements' original C
bodies with the loop iterators replaced by the AST's expressions for them. A target subclasses it:
`emit/c.py` adds the OpenMP and ivdep pragmas of the schedule's marks, `emit/cuda.py` the kernels.
"""
from __future__ import annotations

import copy
import re

import islpy as isl
from pycparser import c_ast, c_generator

from ..poly.scop import Scop

_T = isl.ast_expr_op_type
# Loop counters are 64-bit: with `int` counters, gcc cannot prove that a subscript such as
# `A[-2 * c4 + c7]` (sign-extended to 64 bits) moves by one element per iteration, and it either gives up
# vectorizing the loop or vectorizes it with gathers (heat-3d's time-tiled code ran 2.6x slower).
COUNTER_TYPE = "long"

_BINARY = {_T.add: "+", _T.sub: "-", _T.mul: "*", _T.div: "/", _T.pdiv_q: "/", _T.pdiv_r: "%",
           _T.zdiv_r: "%", _T.eq: "==", _T.le: "<=", _T.lt: "<", _T.ge: ">=", _T.gt: ">",
           _T.and_: "&&", _T.and_then: "&&", _T.or_: "||", _T.or_else: "||"}


def fresh_prefix(scop: Scop, avoid: frozenset[str] = frozenset(), wanted: str = "c") -> str:
    """A name prefix such that no identifier of the region or of the file (*avoid*: its macros too) looks
    like prefix<digits> or prefix_*."""
    names = scop.names_in_use | avoid
    for cand in [wanted, "t", "pt_c", "polytune_c"] + [f"pt{k}_c" for k in range(100)]:
        pat = re.compile(rf"^{re.escape(cand)}(\d+|_.*)$")
        if not any(pat.match(n) for n in names):
            return cand
    raise AssertionError("no fresh name prefix")  # pragma: no cover


class Printer:
    """isl AST -> lines of C-like text (see the module docstring). *pragma*, threaded through `node` and
    `for_`, is what an enclosing mark asks of the next loop (emit/c.py); this printer ignores it."""

    def __init__(self, scop: Scop, prefix: str):
        self.scop = scop
        self.prefix = prefix
        self.macro = f"{prefix}_"  # pt_floord etc. use the same fresh prefix
        self.gen = c_generator.CGenerator()
        self.lines: list[str] = []
        self.used_macros: set[str] = set()
        self.param_names = {p: p for p in scop.params}
        self.renamed: dict[str, str] = {}  # other names of the statement bodies to rewrite (GPU targets)
        self.counter_type = COUNTER_TYPE  # the type of the loop counters (a tiled CUDA kernel's index type)
        self.head: list[str] = []  # declarations the region's block needs before its loops (run_number)
        # the last statement printed: (its line's index, its body, the line), for emit_statement
        self._last_statement: tuple[int, c_ast.Node, str] | None = None

    def run_number(self) -> str:
        """The name of a number that differs between any two runs of the region (the region's block counts
        its runs, atomically: a function may run on several threads at once), declared in the block's head."""
        name = f"{self.prefix}_run"
        declaration = f"const unsigned long {name} = __atomic_add_fetch(&{name}s, 1, __ATOMIC_RELAXED);"
        if declaration not in self.head:
            self.head += [f"static unsigned long {name}s;", declaration]
        return name

    # ---- expressions ---------------------------------------------------------------------------------
    def expr(self, e: isl.AstExpr) -> str:
        t = e.get_type()
        if t == isl.ast_expr_type.int:
            return e.int_get_val().to_str()
        if t == isl.ast_expr_type.id:
            name = e.id_get_id().get_name()
            if name in self.scop.constants:
                return str(self.scop.constants[name])
            if name in self.scop.derived:  # a product of parameters (poly/delinearize.py)
                return f"({self.scop.derived[name]})"
            name = _c_name(name, self.scop.params)
            # generated bounds count in signed arithmetic (`-n + 2`): an unsigned parameter would wrap
            return f"((long){name})" if name in self.scop.unsigned else name
        op = e.op_get_type()
        args = [e.op_get_arg(i) for i in range(e.op_get_n_arg())]
        if op in _BINARY:
            a, b = (self.expr(x) for x in args)
            return f"({a} {_BINARY[op]} {b})"
        if op == _T.minus:
            return f"(-{self.expr(args[0])})"
        if op in (_T.min, _T.max):
            name = self.macro + ("min" if op == _T.min else "max")
            self.used_macros.add(name)
            out = self.expr(args[0])
            for x in args[1:]:
                out = f"{name}({out}, {self.expr(x)})"
            return out
        if op == _T.fdiv_q:
            name = self.macro + "floord"
            self.used_macros.add(name)
            return f"{name}({self.expr(args[0])}, {self.expr(args[1])})"
        if op in (_T.cond, _T.select):
            return f"({self.expr(args[0])} ? {self.expr(args[1])} : {self.expr(args[2])})"
        if op == _T.call:
            return f"{self.expr(args[0])}({', '.join(self.expr(x) for x in args[1:])})"
        raise NotImplementedError(f"isl AST operator {op}")  # pragma: no cover

    def macro_defs(self) -> list[str]:
        m = self.macro
        defs = {
            m + "floord": f"#define {m}floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))",
            m + "min": f"#define {m}min(x, y) (((x) < (y)) ? (x) : (y))",
            m + "max": f"#define {m}max(x, y) (((x) > (y)) ? (x) : (y))",
        }
        return [defs[k] for k in sorted(self.used_macros)]

    def macro_undefs(self) -> list[str]:
        return [f"#undef {name}" for name in sorted(self.used_macros)]

    # ---- statements ----------------------------------------------------------------------------------
    def emit(self, text: str, indent: int) -> None:
        self.lines.append("  " * indent + text)

    def node(self, n: isl.AstNode, indent: int, pragma=None) -> None:
        t = n.get_type()
        if t == isl.ast_node_type.block:
            for child in list_(n.block_get_children()):
                self.node(child, indent, pragma)
        elif t == isl.ast_node_type.for_:
            self.for_(n, indent, pragma)
        elif t == isl.ast_node_type.if_:
            self.emit(f"if ({strip(self.expr(n.if_get_cond()))}) {{", indent)
            self.node(n.if_get_then_node(), indent + 1, pragma)
            if n.if_has_else_node():
                self.emit("} else {", indent)
                self.node(n.if_get_else_node(), indent + 1, pragma)
            self.emit("}", indent)
        elif t == isl.ast_node_type.mark:
            self.mark(n, indent, pragma)
        elif t == isl.ast_node_type.user:
            self.user_node(n, indent)
        else:  # pragma: no cover
            raise NotImplementedError(f"isl AST node {t}")

    def mark(self, n: isl.AstNode, indent: int, pragma) -> None:
        """A mark node: its subtree as it is."""
        self.node(n.mark_get_node(), indent, pragma)

    def for_(self, n: isl.AstNode, indent: int, pragma) -> None:
        it = self.expr(n.for_get_iterator())
        init, cond, inc = (strip(self.expr(x)) for x in (n.for_get_init(), n.for_get_cond(), n.for_get_inc()))
        step = f"{it}++" if inc == "1" else f"{it} += {inc}"
        self.emit(f"for ({self.counter_type} {it} = {init}; {cond}; {step}) {{", indent)
        self.node(n.for_get_body(), indent + 1, pragma)
        self.emit("}", indent)

    def body_arg(self, text: str) -> str:
        """A statement iterator's value *text* as the statement's body reads it."""
        return text if re.fullmatch(r"-?\w+", text) else f"({text})"

    def user_node(self, n: isl.AstNode, indent: int) -> None:
        """A statement's node (a target may read its annotation)."""
        self.user(n.user_get_expr(), indent)

    def user(self, call: isl.AstExpr, indent: int) -> None:
        name = call.op_get_arg(0).id_get_id().get_name()
        st = self.scop.statement(name)
        args = [strip(self.expr(call.op_get_arg(i + 1))) for i in range(call.op_get_n_arg() - 1)]
        subst = dict(zip(st.iterators, map(self.body_arg, args)))
        subst.update(self.renamed)
        body = substitute(st.body, subst)
        self.emit_statement(body, indent)

    def emit_statement(self, body: c_ast.Node, indent: int) -> None:
        """A statement body's line; where the line before it is the previous statement's, at the same
        indent, and the two are `if (c) x;` and `if (!(c)) y;` with x writing nothing c reads, the one line
        `if (c) { x; } else { y; }` (extract splits a data-dependent if/else into two guarded statements;
        printed apart they evaluate c twice and take two branches: unsharp's update ran 10-15% slower)."""
        last = self._last_statement
        if last is not None and last[0] == len(self.lines) - 1 and self.lines[-1] == last[2]:
            joined = else_pair(self.gen, last[1], body)
            if joined is not None:
                self.lines[-1] = "  " * indent + joined
                self._last_statement = None
                return
        self.emit(statement_text(self.gen, body), indent)
        self._last_statement = (len(self.lines) - 1, body, self.lines[-1])


def else_pair(gen: c_generator.CGenerator, first: c_ast.Node, second: c_ast.Node) -> str | None:
    """`if (c) { x; } else { y; }` for the statements `if (c) x;` and `if (!(c)) y;` where x assigns no
    name that c reads (c then has the same value for both); None otherwise."""
    if not (isinstance(first, c_ast.If) and isinstance(second, c_ast.If) and first.iffalse is None
            and second.iffalse is None and isinstance(second.cond, c_ast.UnaryOp) and second.cond.op == "!"):
        return None
    cond = gen.visit(first.cond)
    if gen.visit(second.cond.expr) != cond or _assigned_names(first.iftrue) & _names(first.cond):
        return None
    return f"if ({cond}) {{ {statement_text(gen, first.iftrue)} }} else {{ {statement_text(gen, second.iftrue)} }}"


class _Names(c_ast.NodeVisitor):
    def __init__(self):
        self.names: set[str] = set()
        self.assigned: set[str] = set()

    def visit_ID(self, n):
        self.names.add(n.name)

    def visit_Assignment(self, n):
        self.assigned |= _base_names(n.lvalue)
        self.generic_visit(n)

    def visit_UnaryOp(self, n):
        if n.op in ("++", "--", "p++", "p--"):
            self.assigned |= _base_names(n.expr)
        self.generic_visit(n)


def _base_names(lvalue: c_ast.Node) -> set[str]:
    """The names an assignment to *lvalue* may change: its array's or struct's (`A[i][k]`: A, `s.x`: s), every
    name of a dereferenced pointer's expression (`*(p + i)`: p and i)."""
    while isinstance(lvalue, (c_ast.ArrayRef, c_ast.StructRef)):
        lvalue = lvalue.name
    return {lvalue.name} if isinstance(lvalue, c_ast.ID) else _names(lvalue)


def _names(node: c_ast.Node) -> set[str]:
    v = _Names()
    v.visit(node)
    return v.names


def _assigned_names(node: c_ast.Node) -> set[str]:
    """The names the assignments (and increments) of *node* may change (`_base_names`)."""
    v = _Names()
    v.visit(node)
    return v.assigned


def statement_text(gen: c_generator.CGenerator, body: c_ast.Node) -> str:
    """A statement body as one line of C: `x = ...;`, or under its data-dependent condition (extract keeps
    it as an `if` node) `if (c) x = ...;`."""
    if isinstance(body, c_ast.If):
        return f"if ({gen.visit(body.cond)}) {statement_text(gen, body.iftrue)}"
    return gen.visit(body) + ";"


def strip(text: str) -> str:
    """Drop one pair of outer parentheses (OpenMP's canonical loop form wants `c <= e`, not `(c <= e)`)."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for k, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and k < len(text) - 1:
            return text
    return text[1:-1]


def list_(lst) -> list:
    """The nodes of an isl AstNodeList as a Python list."""
    return [lst.get_at(i) for i in range(lst.n_ast_node())]


def _c_name(isl_id: str, params: tuple[str, ...]) -> str:
    # isl names of C identifiers that clash with isl keywords carry a trailing '_' (islutil.isl_name).
    if isl_id.endswith("_") and isl_id[:-1] in params:
        return isl_id[:-1]
    return isl_id


class _Subst(c_ast.NodeVisitor):
    def __init__(self, subst: dict[str, str]):
        self.subst = subst

    def generic_visit(self, node):
        for name, child in list(node.children()):
            if isinstance(child, c_ast.ID) and child.name in self.subst:
                replace_child(node, name, c_ast.ID(self.subst[child.name], coord=child.coord))
            else:
                self.visit(child)


def replace_child(node, name: str, new) -> None:
    """Set the child of a pycparser node by the name `children()` gives it (`expr`, `args[2]`)."""
    m = re.match(r"^(\w+)\[(\d+)\]$", name)
    if m:
        getattr(node, m.group(1))[int(m.group(2))] = new
    else:
        setattr(node, name, new)


def _clone(node: c_ast.Node) -> c_ast.Node:
    """A copy of a pycparser tree (copy.deepcopy takes about five Python frames per level, and a
    statement of 160 terms exceeded the recursion limit)."""
    out = copy.copy(node)
    for slot in getattr(out, "__slots__", ()):
        if isinstance(getattr(out, slot, None), list):
            setattr(out, slot, list(getattr(out, slot)))  # lists of children are not shared with *node*
    for name, child in node.children():
        replace_child(out, name, _clone(child))
    return out


def substitute(body: c_ast.Node, subst: dict[str, str]) -> c_ast.Node:
    """A copy of a statement body with the identifiers of *subst* replaced."""
    body = _clone(body)
    if isinstance(body, c_ast.ID) and body.name in subst:  # pragma: no cover
        return c_ast.ID(subst[body.name])
    _Subst(subst).visit(body)
    return body


def param_expr(scop: Scop, pa: isl.PwAff) -> isl.AstExpr:
    """An AST expression for a function of the parameters (a 0-d set or params domain), simplified under
    the region's context: what the host code computes for grid bounds and array extents."""
    ctx = scop.context.align_params(pa.get_space())
    pa = pa.align_params(ctx.get_space())
    if not pa.get_domain_space().is_params():
        pa = pa.project_domain_on_params()  # a function of the parameters alone, as the build wants
    return isl.AstBuild.from_context(ctx).expr_from_pw_aff(pa.gist_params(ctx))
