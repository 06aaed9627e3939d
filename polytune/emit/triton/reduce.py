"""Recognizing reductions and dot products in a kernel's inner loops (see the package docstring)."""
from __future__ import annotations

import re

import islpy as isl
from pycparser import c_ast

from ..printer import list_
from .expr import _canonical, _CExpr, _flatten_blocks, _lift, _range, _static_extent, _t
from .forward import _loads


class _Reductions:
    """The kernel printer's inner loops with one accumulating statement: accumulation in registers,
    reductions over a block (tl.sum, tl.max), dot products (tl.dot), chunks of BLOCK_R (a mixin
    of kernel.py's _KernelPrinter, whose state it uses)."""

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
            self.emit(f"for {var} in {_range(lo, hi, inc, not self.edge_tile)}:", indent)
            for depth, (v2, lo2, hi2, inc2) in enumerate(inner, 1):
                self.emit(f"for {v2} in {_range(lo2, hi2, inc2, not self.edge_tile)}:", indent + depth)
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
        a K-blocked tl.dot of a [BLOCK_Y, BLOCK_K] tile by a [BLOCK_K, BLOCK_X] tile, in full float32
        precision ("ieee"), or on TF32 tensor cores ("tf32": operands rounded to 10-bit mantissas) where the
        user allowed it and both operands are float; never in a precision the user did not ask for."""
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
        # scalar factors (constants, numbers uniform over the program) scale the X tile: a product tile beside
        # the accumulator would double the registers (PolyBench gemm's alpha spilled at 128x128 on 8 warps)
        scale_a = all(isinstance(f, (c_ast.Constant, c_ast.ID)) and not self.is_vector(cx.visit(f)) for f in outside)
        types = (cx.ctype(left), cx.ctype(right))
        precision = "tf32" if self.allow_tf32 and types == ("float", "float") else "ieee"
        self.dots.append(precision if types == ("float", "float") else "double")
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
            if outside and scale_a:  # (alpha * X) * Y, as C evaluates `alpha * X[..] * Y[..]`: one tile, no second
                self.emit(f"{ta} = {ta} * " + " * ".join(f"({cx.visit(f)})" for f in outside), at + 1)
                self.emit(f"{acc} = tl.dot({ta}, {tb}, {acc}, input_precision=\"{precision}\", "
                          f"out_dtype={acc}.dtype)", at + 1)
            elif outside:
                prod = f"tl.dot({ta}, {tb}, input_precision=\"{precision}\")"
                for f in outside:
                    prod = f"{prod} * ({cx.visit(f)})"
                self.emit(f"{acc} = {acc} + {prod}", at + 1)
            else:  # accumulate inside the dot (one fused multiply-add per product, no second tile)
                # out_dtype is the accumulator's: Triton's default (float32) rejects a float64 one
                self.emit(f"{acc} = tl.dot({ta}, {tb}, {acc}, input_precision=\"{precision}\", out_dtype={acc}.dtype)",
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
        else:  # the enclosing guards' mask (one lane wide) stays: a chunk under `if` runs only where it holds
            self.emit(f"ZERO = {step} * 0", indent + 1)
            self.emit(f"MASK = {saved_m} & ({inside})", indent + 1)
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
