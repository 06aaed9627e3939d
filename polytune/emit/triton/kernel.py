"""The subtree of one kernel mark as the body of a Triton program: masks, loops, statements."""
from __future__ import annotations

import re

import islpy as isl
from pycparser import c_ast

from ...errors import UnsupportedError
from ...poly.gpu import KernelInfo
from ...poly.scop import Scop
from ..printer import list_
from .expr import _NARROW, _T, AXES, _CExpr, _py_expr, _range, _t
from .reduce import _Reductions


class _KernelPrinter(_Reductions):
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
        self.allow_tf32 = False  # float32 tl.dots on TF32 tensor cores (the user asked: --allow-tf32)
        self.dots: list[str] = []  # every tl.dot's kind: "float" (ieee), "tf32", "double"
        self.whole_tiles = False  # inside whole_tile_split: no second split
        # what MASK is made of on the way to whole_tile_split, as scalar conditions on the program's tile
        # (its grid bounds, the mapped loops' bounds that are one number for the program), or None where
        # some part is not (a bound that depends on another mapped loop, a step, a condition of the lanes)
        self.box: list[str] | None = []
        self.full_tile = False  # in its branch for whole tiles: every lane is active
        self.edge_tile = False  # in its branch for the other tiles

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
            self.box = [f"(pid_{AXES[ax]} * BLOCK_{AXES[ax].upper()} + BLOCK_{AXES[ax].upper()} <= n_{AXES[ax]})"
                        for ax in axes]
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
            if not self.whole_tiles:
                self.box = None  # (a condition on the way to the split: the tile test takes the mask's minimum)
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

    def whole_tile_split(self, body: isl.AstNode, indent: int) -> None:
        """The body under every mapped loop, twice: for a tile whose lanes are all in the domain (all but
        the edge tiles), with MASK a constant true, so that Triton drops the masks of its loads and stores
        (a masked load first zeroes its registers: 63 of stencil2d's 336 instructions per output), and for
        the others, masked. Statements that are not under every mapped loop stay masked. Not where the body
        reduces in chunks of BLOCK_R lanes or multiplies tiles with tl.dot: the chunks' masks stay, and the
        dot has its own unmasked loop for whole tiles."""
        start = len(self.lines)
        full = self.fresh("full")
        if self.box:
            # every lane's MASK holds iff the tile is inside the grid and inside each mapped loop's bounds,
            # which are one number for the program: its first and last lanes tell (scalar arithmetic, not a
            # reduction of MASK over the block, whose shared memory and barrier cost 11-15% of a stencil)
            self.emit(f"{full} = {' & '.join(self.box)}", indent)
        else:
            self.emit(f"{full} = tl.min(MASK.to(tl.int32)) != 0", indent)
        self.emit(f"if {full}:", indent)
        self.whole_tiles = self.full_tile = True
        self.emit("MASK = ZERO == 0", indent + 1)
        self.node(body, indent + 1)
        self.whole_tiles = self.full_tile = False
        if any("BLOCK_R" in line or "tl.dot(" in line for line in self.lines[start:]):
            del self.lines[start:]
            self.whole_tiles = True
            self.node(body, indent)
            self.whole_tiles = False
            return
        self.emit("else:", indent)
        # no second split inside (a mapped loop under a mapped loop); the edge tiles' loops are not unrolled:
        # all of a stencil's masked loads at once would take registers that whole tiles do not need
        # (stencil2d, 4 outputs per thread: spills in the masked copy only), and the edge tiles are few
        self.whole_tiles = self.edge_tile = True
        self.node(body, indent + 1)
        self.whole_tiles = self.edge_tile = False

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
            box = self.box
            if box is not None and not self.whole_tiles:
                if inc != "1" or self.is_vector(init) or self.is_vector(end):
                    self.box = None
                else:
                    ax = AXES[self.info.axes[j]]
                    first = f"lo_{j} + pid_{ax} * BLOCK_{ax.upper()}"
                    last = f"{first} + BLOCK_{ax.upper()} - 1"
                    self.box = [*box, f"({first} >= {init})", f"({last} < {end})"]
            self.bound.append(it)
            if len(self.bound) == self.info.mapped and not self.whole_tiles:
                self.whole_tile_split(n.for_get_body(), indent)
            else:
                self.node(n.for_get_body(), indent)
            self.bound.pop()
            if not self.whole_tiles and self.box is not None:
                self.box = box  # (a nest after this one: its own bounds)
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
        self.emit(f"for {var} in {_range(lo, hi, inc, not self.edge_tile)}:", indent)
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
        rhs = cx.number(body.rvalue)
        p = self.fresh("p")
        self.emit(f"{p} = {addr}", indent)
        if body.op == "=":
            value = rhs
        else:
            old = f"tl.load({p}, mask=MASK, other=0)"
            if cx.ctype(target) in _NARROW:  # C promotes a char or short element to int
                old = f"({old}).to(tl.int32)"
            op = cx.operator(body.op[:-1], cx.ctype(target), cx.ctype(body.rvalue), body)
            value = f"{old} {op} ({rhs})"
        self.emit(f"tl.store({p}, {value}, mask=MASK)", indent)
