"""C/OpenMP code for a scheduled Scop, printed from isl's AST by our own walker.

Statement bodies are the original C expressions with the loop iterators replaced by the AST's
expressions for them; helper macros get a fresh prefix and are #undef'd after the region.
"""
from __future__ import annotations

import copy
import re

import islpy as isl
from pycparser import c_ast, c_generator

from ..poly.islutil import CTX, isl_name, sets_of
from ..poly.schedule import IVDEP_MARK, PARALLEL_MARK, SIMD_MARK, TiledSchedule
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


class _Printer:
    def __init__(self, scop: Scop, parallel: bool, ivdep: bool, prefix: str, tiled: TiledSchedule | None = None):
        self.scop = scop
        self.tiled = tiled  # for the private copies of arrays its marks name
        self.parallel = parallel
        self.ivdep = ivdep
        self.prefix = prefix
        self.macro = f"{prefix}_"  # pt_floord etc. use the same fresh prefix
        self.gen = c_generator.CGenerator()
        self.lines: list[str] = []
        self.used_macros: set[str] = set()
        self.param_names = {p: p for p in scop.params}
        self.renamed: dict[str, str] = {}  # other names of the statement bodies to rewrite (GPU targets)

    # ---- expressions ---------------------------------------------------------------------------------
    def expr(self, e: isl.AstExpr) -> str:
        t = e.get_type()
        if t == isl.ast_expr_type.int:
            return e.int_get_val().to_str()
        if t == isl.ast_expr_type.id:
            name = e.id_get_id().get_name()
            if name in self.scop.constants:
                return str(self.scop.constants[name])
            return _c_name(name, self.scop.params)
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

    def node(self, n: isl.AstNode, indent: int, pragma: tuple[str, str] | None = None) -> None:
        t = n.get_type()
        if t == isl.ast_node_type.block:
            for child in _list(n.block_get_children()):
                self.node(child, indent, pragma)
        elif t == isl.ast_node_type.for_:
            self.for_(n, indent, pragma)
        elif t == isl.ast_node_type.if_:
            self.emit(f"if ({_strip(self.expr(n.if_get_cond()))}) {{", indent)
            self.node(n.if_get_then_node(), indent + 1, pragma)
            if n.if_has_else_node():
                self.emit("} else {", indent)
                self.node(n.if_get_else_node(), indent + 1, pragma)
            self.emit("}", indent)
        elif t == isl.ast_node_type.mark:
            name, _, depth = n.mark_get_id().get_name().partition("@")
            depth, _, extra = depth.partition("@")
            inner = None
            if name == PARALLEL_MARK and self.parallel:
                extra, _, arrays = extra.partition("@")  # arrays: private copies (poly/privatize.py)
                arrays, _, clause = arrays.partition("@")  # the schedule clause, if not the default
                clause = f" schedule({clause})" if clause else ""
                inner = (f"{self.prefix}{depth}", f"#pragma omp parallel for{self.private(extra)}{clause}", (),
                         arrays)
            elif name == SIMD_MARK and self.ivdep:
                inner = (f"{self.prefix}{depth}", f"#pragma omp simd{self.private(extra)}")
            elif name == IVDEP_MARK and self.ivdep:
                inner = (f"{self.prefix}{depth}", "#pragma GCC ivdep",
                         tuple(tuple(p.split("<")) for p in extra.split(";") if p))
            self.node(n.mark_get_node(), indent, inner or pragma)
        elif t == isl.ast_node_type.user:
            self.user(n.user_get_expr(), indent)
        else:  # pragma: no cover
            raise NotImplementedError(f"isl AST node {t}")

    def private(self, names: str) -> str:
        """The OpenMP clauses for the scalars a loop privatizes (comma-separated): `private` for variables
        declared inside the region (dead after it), `lastprivate` for the others (their final value is
        the last iteration's). gcc does not vectorize an `omp simd` loop whose accumulator is lastprivate
        both there and in the enclosing parallel loop."""
        names = [x for x in names.split(",") if x]
        local = [x for x in names if x in self.scop.local_names]
        other = [x for x in names if x not in self.scop.local_names]
        return "".join(f" {kind}({', '.join(xs)})" for kind, xs in (("private", local), ("lastprivate", other)) if xs)

    def for_(self, n: isl.AstNode, indent: int, pragma: tuple[str, str] | None) -> None:
        it = self.expr(n.for_get_iterator())
        init, cond, inc = (_strip(self.expr(x)) for x in (n.for_get_init(), n.for_get_cond(), n.for_get_inc()))
        step = f"{it}++" if inc == "1" else f"{it} += {inc}"
        close = 0
        private_arrays = ""
        copies: list = []
        if pragma and pragma[0] == it:
            private_arrays = pragma[3] if len(pragma) > 3 else ""
            ivdep = pragma[1] == "#pragma GCC ivdep"
            if not ivdep or _in_order(n.for_get_body(), pragma[2]):
                bound = re.fullmatch(rf"{re.escape(it)} (<=|<) (.+)", cond) if ivdep else None
                if bound:
                    # gcc drops the annotation ("ignoring loop annotation") when the exit test is a
                    # conditional expression (c_min): compare with a bound computed before the loop
                    self.emit("{", indent)
                    self.emit(f"const {COUNTER_TYPE} {self.prefix}_ub = {bound.group(2)};", indent)
                    cond = f"{it} {bound.group(1)} {self.prefix}_ub"
                    close = 1
                copies = self.copies_at(it, private_arrays) if not ivdep else []
                if copies:
                    # one buffer per thread for each privatized array, allocated in the parallel region
                    self.emit("#pragma omp parallel", indent)
                    self.emit("{", indent)
                    close += 1
                    for c in copies:
                        rows = _strip(self.expr(param_expr(self.scop, c.rows)))
                        buf = f"{self.prefix}_{c.name}_copy"
                        self.emit(f"__typeof__({c.name}[0]) *const {buf} = "
                                  f"__builtin_malloc(sizeof({c.name}[0]) * ({rows}));", indent)
                        self.emit(f"if (!{buf}) __builtin_abort();", indent)
                    self.emit(pragma[1].replace("omp parallel for", "omp for"), indent)
                else:
                    self.emit(pragma[1], indent)
            pragma = None
        self.emit(f"for ({COUNTER_TYPE} {it} = {init}; {cond}; {step}) {{", indent)
        renamed = self.renamed
        if copies:
            self.renamed = {**renamed, **self.private_copies(it, copies, indent + 1)}
        self.node(n.for_get_body(), indent + 1, pragma)
        self.renamed = renamed
        self.emit("}", indent)
        for c in copies:
            self.emit(f"__builtin_free({self.prefix}_{c.name}_copy);", indent)
        for _ in range(close):
            self.emit("}", indent)

    def copies_at(self, it: str, names: str) -> list:
        """The private copies (poly/privatize.py) of the loop with counter *it*, named in its mark."""
        wanted = [x for x in names.split(",") if x]
        depth = int(it[len(self.prefix):])
        return [c for c in self.tiled.private_arrays.get(depth, ()) if c.name in wanted] if self.tiled else []

    def private_copies(self, it: str, copies: list, indent: int) -> dict[str, str]:
        """In the parallel loop's body: a pointer to the thread's copy of each privatized array, or to the
        array itself in the loop's last iteration (which leaves the array as the sequential loop does).
        Returns the renaming of the statement bodies."""
        out = {}
        for c in copies:
            last = _strip(self.expr(param_expr(self.scop, c.last)))
            ptr = f"{self.prefix}_{c.name}"
            self.emit(f"__typeof__({c.name}[0]) *const {ptr} = {it} == {last} ? {c.name} : {ptr}_copy;", indent)
            out[c.name] = ptr
        return out

    def user(self, call: isl.AstExpr, indent: int) -> None:
        name = call.op_get_arg(0).id_get_id().get_name()
        st = self.scop.statement(name)
        args = [_strip(self.expr(call.op_get_arg(i + 1))) for i in range(call.op_get_n_arg() - 1)]
        subst = dict(zip(st.iterators, (a if re.fullmatch(r"-?\w+", a) else f"({a})" for a in args)))
        subst.update(self.renamed)
        body = _substitute(st.body, subst)
        self.emit(self.gen.visit(body) + ";", indent)


def _in_order(body: isl.AstNode, pairs: tuple) -> bool:
    """Whether, in the printed body of a loop, every statement *a* of a pair (a, b) comes before every b."""
    if not pairs:
        return True
    seen: list[str] = []

    def walk(n: isl.AstNode) -> None:
        t = n.get_type()
        if t == isl.ast_node_type.block:
            for child in _list(n.block_get_children()):
                walk(child)
        elif t == isl.ast_node_type.if_:
            walk(n.if_get_then_node())
            if n.if_has_else_node():
                walk(n.if_get_else_node())
        elif t == isl.ast_node_type.for_:
            walk(n.for_get_body())
        elif t == isl.ast_node_type.mark:
            walk(n.mark_get_node())
        elif t == isl.ast_node_type.user:
            seen.append(n.user_get_expr().op_get_arg(0).id_get_id().get_name())

    walk(body)
    for a, b in pairs:
        first_b = min((k for k, s in enumerate(seen) if s == b), default=None)
        last_a = max((k for k, s in enumerate(seen) if s == a), default=None)
        if first_b is not None and last_a is not None and last_a > first_b:
            return False
    return True


def _strip(text: str) -> str:
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


def _list(lst) -> list:
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
                _replace_child(node, name, c_ast.ID(self.subst[child.name], coord=child.coord))
            else:
                self.visit(child)


def _replace_child(node, name: str, new) -> None:
    m = re.match(r"^(\w+)\[(\d+)\]$", name)
    if m:
        getattr(node, m.group(1))[int(m.group(2))] = new
    else:
        setattr(node, name, new)


def _substitute(body: c_ast.Node, subst: dict[str, str]) -> c_ast.Node:
    body = copy.deepcopy(body)
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


def build_ast(scop: Scop, tiled: TiledSchedule, prefix: str) -> isl.AstNode:
    build = isl.AstBuild.from_context(scop.context)
    depth = _max_depth(tiled.schedule)
    ids = isl.IdList.alloc(CTX, depth)
    for k in range(depth):
        ids = ids.add(isl.Id(f"{prefix}{k}", context=CTX))
    build = build.set_iterators(ids)
    return build.node_from_schedule(tiled.schedule)


def _max_depth(schedule: isl.Schedule) -> int:
    m = schedule.get_map()
    out = [0]
    m.foreach_map(lambda x: out.append(x.dim(isl.dim_type.out)))
    return max(out) + 8


class _DumpPrinter(_Printer):
    """Loops over every element a region writes, each handed to ``polytune_dump``."""

    def copies_at(self, it: str, names: str) -> list:
        """The private copies (poly/privatize.py) of the loop with counter *it*, named in its mark."""
        wanted = [x for x in names.split(",") if x]
        depth = int(it[len(self.prefix):])
        return [c for c in self.tiled.private_arrays.get(depth, ()) if c.name in wanted] if self.tiled else []

    def private_copies(self, it: str, copies: list, indent: int) -> dict[str, str]:
        """In the parallel loop's body: a pointer to the thread's copy of each privatized array, or to the
        array itself in the loop's last iteration (which leaves the array as the sequential loop does).
        Returns the renaming of the statement bodies."""
        out = {}
        for c in copies:
            last = _strip(self.expr(param_expr(self.scop, c.last)))
            ptr = f"{self.prefix}_{c.name}"
            self.emit(f"__typeof__({c.name}[0]) *const {ptr} = {it} == {last} ? {c.name} : {ptr}_copy;", indent)
            out[c.name] = ptr
        return out

    def user(self, call: isl.AstExpr, indent: int) -> None:
        name = call.op_get_arg(0).id_get_id().get_name()
        array = next(a.name for a in self.scop.arrays if isl_name(a.name) == name)
        subs = "".join(f"[{_strip(self.expr(call.op_get_arg(i + 1)))}]" for i in range(call.op_get_n_arg() - 1))
        self.emit(f"polytune_dump((double)({array}{subs}));", indent)


def generate_dump(scop: Scop, indent: int = 1, avoid: frozenset[str] = frozenset()) -> str:
    """C code that feeds every element the region writes, in a fixed order, to ``polytune_dump``."""
    prefix = fresh_prefix(scop, avoid)
    written = scop.writes.range().intersect_params(scop.context)
    lines: list[str] = []
    for s in sorted(sets_of(written), key=lambda x: x.get_tuple_name()):
        n = s.dim(isl.dim_type.set)
        sched = isl.UnionMap(_identity_schedule(s))
        build = isl.AstBuild.from_context(scop.context)
        ids = isl.IdList.alloc(CTX, n)
        for k in range(n):
            ids = ids.add(isl.Id(f"{prefix}{k}", context=CTX))
        ast = build.set_iterators(ids).node_from_schedule_map(sched)
        p = _DumpPrinter(scop, False, False, prefix)
        p.node(ast, indent + 1)
        lines += p.macro_defs() + p.lines + p.macro_undefs()
    return "\n".join(["  " * indent + "{"] + lines + ["  " * indent + "}"]) + "\n"


def _identity_schedule(s: isl.Set) -> isl.Map:
    """{ X[a, b] -> [a, b] } on the set *s*."""
    return isl.Map.identity(isl.Space.map_from_set(s.get_space())).intersect_domain(s) \
        .reset_tuple_id(isl.dim_type.out)


def generate_region(scop: Scop, tiled: TiledSchedule, parallel: bool = True, ivdep: bool = True,
                    indent: int = 1, avoid: frozenset[str] = frozenset()) -> str:
    """The C text that replaces the region (from '#pragma scop' to '#pragma endscop' inclusive)."""
    prefix = fresh_prefix(scop, avoid)
    ast = build_ast(scop, tiled, prefix)
    p = _Printer(scop, parallel, ivdep, prefix, tiled)
    p.node(ast, indent + 1)
    body = p.lines
    head = ["  " * indent + "{"]
    head += ["  " * (indent + 1) + d for d in scop.hoisted_decls]
    return "\n".join(head + p.macro_defs() + body + p.macro_undefs() + ["  " * indent + "}"]) + "\n"
