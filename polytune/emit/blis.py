"""BLIS's structure for a contraction band (poly/contraction.py), printed in place of its loops.

    for jc in columns by NC:                 B's block of NC columns
      for pc in k by KC:                     pack B[pc:pc+KC, jc:jc+NC] into micro-panels of NR columns
        for ic in rows by MC:  (OpenMP)      pack A[ic:ic+MC, pc:pc+KC] into micro-panels of MR rows
          for jr, ir in the block by NR, MR: the micro-kernel: MR x NR elements of W in registers
                                             (MR x NV vectors) for the whole KC loop

The micro-kernel is written with GCC vector extensions (`vector_size`, which gcc and clang compile to the
widest FMA the -march has): each k step loads NV vectors of each B operand and broadcasts one element of
each A operand per row. W's element is loaded into its register before a block of k and stored after it,
and the core (the products) is added in k's order: every element sees the original's operations in the
original order (`W = W + alpha*A * B`, the operand `alpha*A` packed as the original computed it), so the
result is bit-identical to the original's under the same -ffp-contract. Edge tiles go through a small
buffer (loaded, computed by the same kernel, written back); in a triangular domain (syrk's j <= i) a tile
is skipped when a constraint fails at all its corners and goes through the buffer, its elements written
back under the domain's test, when some fail at some corners: the full tiles have no test at all.

Where the element types differ from the micro-kernel's (a float operand of a double sum, a long double W),
a compile-time test (`__builtin_types_compatible_p`) keeps the original loops, which are printed beside; so
does a run-time test where the product is small (PACK_WORK) or the blocks' piece of the domain is empty.

Block sizes: `Blocks` (the tuner's coordinates; 0 = the analytical model's value, `model_blocks`).
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, replace

import islpy as isl
from pycparser import c_ast

from .. import machine
from ..poly.contraction import Blocks, Contraction, domain_pieces, extents, ids_of, result_reads, summands
from ..poly.islutil import CTX, isl_name
from ..poly.parallel import parallel_work
from .heap import allocation
from .printer import list_, strip, substitute

# Below this many products (i x j x k, 64^3) the packed code's overhead (packing, its buffers, the threads
# woken for it) is not repaid: gemm with run-time sizes at N=32 on the development machine, 1 thread: packed
# 28-32 us, the loops 19 us, gcc's build of the original 8-10 us (2 threads under load: packed 16x slower).
# Below it, at run time, the loops under the mark run instead, in the order (i, k, j). From 64^3 up the
# packed code was within noise of the loops or ahead (N=64-128) and ahead beyond. The environment's
# POLYTUNE_PACK_WORK replaces it (the tests set 0, so that their small sizes still run the packed code).
PACK_WORK = 1 << 18


def pack_work() -> int:
    """PACK_WORK, or the environment's POLYTUNE_PACK_WORK."""
    return int(os.environ.get("POLYTUNE_PACK_WORK", PACK_WORK))


# the element types the micro-kernel is written for (vectors of other types, _Bool or long double, are
# not valid GCC vector types): W's type where it is one of these, else double (and then the test fails)
_VECTOR_TYPES = ("float", "double", "int", "long", "unsigned int", "unsigned long", "short", "long long")


FMA_LATENCY = 5  # cycles of a dependent FMA (Haswell, Zen 1: 5; Skylake: 4): the conservative one


def micro_tile(registers: int | None = None, fma: int | None = None, lanes: int | None = None) -> tuple[int, int]:
    """(mr, nv) of the micro-kernel after Low et al. ("Analytical modeling is enough for high-performance
    BLIS", TOMS 2016): enough independent accumulators to hide the FMA latency, mr * nr >= lanes *
    FMA_LATENCY * FMA units; nr = ceil(sqrt(that) / lanes) vectors (a square-ish tile loads the fewest
    operands per FMA); then as many rows as the registers hold beside the nv vectors of B and one
    broadcast of A (mr * nv + nv + 1 <= registers), at most 16. *lanes*: 8-byte elements per vector.
    AVX2 with 16 registers, one 256-bit FMA per cycle (Zen 1): 6 x 2 vectors (6 x 8 doubles, BLIS's
    haswell and zen kernels)."""
    regs = registers or machine.vector_registers()
    units = fma or machine.fma_units()
    vl = lanes or max(1, machine.vector_bytes() // 8)
    need = vl * FMA_LATENCY * units
    nv = max(1, math.ceil(math.sqrt(need) / vl))
    mr = max(1, math.ceil(need / (nv * vl)))
    while (mr + 1) * nv + nv + 1 <= regs and mr < 16:
        mr += 1
    while mr * nv + nv + 1 > regs and mr > 1:
        mr -= 1
    return mr, nv


def fitted_rows(mr: int, nv: int, na: int, nb: int, registers: int | None = None) -> int:
    """At most *mr* rows, as many as the vector registers hold beside the micro-kernel's operands of one k
    step: mr x nv accumulators, nb x nv vectors of B, na broadcasts of A (micro_tile counts one of each: with
    syr2k's two products, 14 x 2 + 4 + 2 registers of 32 spilled, and syr2k ran at 56% of OpenBLAS)."""
    regs = registers or machine.vector_registers()
    while mr > 1 and mr * nv + nb * nv + na > regs:
        mr -= 1
    return mr


def model_blocks() -> Blocks:
    """The model's blocks for this machine: (mr, nv) from the registers (`micro_tile`); kc so that a micro-panel
    of B (kc x nr) takes half of L1 (the A micro-panel and W's tile stream through the rest); mc so that
    the packed A block (mc x kc) takes half of L2; nc so that the packed B panel (kc x nc) takes half of
    L3. kc, mc and nc are in bytes here (divided by the element size in the C code, `_sizes`)."""
    mr, nv = micro_tile()
    caches = machine.cache_sizes()
    return Blocks(True, mr, nv, caches[1] // 2, caches[2] // 2, caches[3] // 2)


@dataclass
class _Names:
    p: str

    def __getattr__(self, name: str) -> str:
        return f"{self.p}_{name}"


class _Linear:
    """Affine constraints of the domain with the row and column loops as coefficients and the rest (the
    parameters, the outer loops) as printed C text."""

    def __init__(self, printer, b: isl.BasicSet, ctx: isl.Set, dims: dict[str, int]):
        self.printer, self.b, self.ctx, self.dims = printer, b, ctx, dims

    def rest(self, con: isl.Constraint) -> str:
        aff = con.get_aff()
        for d in range(aff.dim(isl.dim_type.in_)):
            aff = aff.set_coefficient_val(isl.dim_type.in_, d, isl.Val.zero(CTX))
        pa = isl.PwAff.from_aff(aff).project_domain_on_params()
        return self.text(pa)

    def text(self, pa: isl.PwAff) -> str:
        ctx = self.ctx.align_params(pa.get_space())
        pa = pa.align_params(ctx.get_space())
        return strip(self.printer.expr(isl.AstBuild.from_context(ctx).expr_from_pw_aff(pa.gist_params(ctx))))


def _bounds(b: isl.BasicSet, d: int) -> tuple[isl.PwAff, isl.PwAff]:
    """The least and greatest value of set dimension *d* of *b* as functions of the parameters."""
    s = isl.Set.from_basic_set(b)
    n = s.dim(isl.dim_type.set)
    others = [x for x in range(n) if x != d]
    for x in reversed(others):
        s = s.project_out(isl.dim_type.set, x, 1)
    return s.dim_min(0), s.dim_max(0)


def _first_call(n: isl.AstNode) -> isl.AstExpr | None:
    t = n.get_type()
    if t == isl.ast_node_type.user:
        return n.user_get_expr()
    if t == isl.ast_node_type.block:
        for c in list_(n.block_get_children()):
            found = _first_call(c)
            if found is not None:
                return found
        return None
    if t == isl.ast_node_type.for_:
        return _first_call(n.for_get_body())
    if t == isl.ast_node_type.if_:
        return _first_call(n.if_get_then_node())
    if t == isl.ast_node_type.mark:
        return _first_call(n.mark_get_node())
    return None


def _contiguous_along(node: c_ast.Node, loop: str) -> bool:
    """Whether the operand's first array reference has *loop* in its last subscript (reads along it are
    contiguous)."""
    while isinstance(node, (c_ast.BinaryOp, c_ast.UnaryOp, c_ast.Cast)):
        if isinstance(node, c_ast.BinaryOp):
            left = _first_ref(node.left)
            node = node.left if left is not None else node.right
        else:
            node = node.expr
    ref = _first_ref(node)
    if ref is None:
        return False
    ids: set[str] = set()

    class V(c_ast.NodeVisitor):
        def visit_ID(self, n):
            ids.add(n.name)

    V().visit(ref.subscript)
    return loop in ids


def _first_ref(node: c_ast.Node) -> c_ast.ArrayRef | None:
    if isinstance(node, c_ast.ArrayRef):
        return node
    for _, child in node.children():
        found = _first_ref(child)
        if found is not None:
            return found
    return None


def print_contraction(printer, mark, n: isl.AstNode, indent: int, parallel: bool) -> None:
    """The packed, blocked code of the contraction under the AST mark node *n* (its child: the original
    loops, printed as the fallback), through *printer* (emit/c.py's). *parallel*: OpenMP inside it (False
    where an enclosing loop is parallel already, or without OpenMP)."""
    c: Contraction = mark.contraction
    scop = printer.scop
    st = scop.statement(c.statement)
    child = n.mark_get_node()
    call = _first_call(child)
    blocks = mark.blocks or Blocks()
    model = model_blocks()
    blk = replace(blocks, **{f: getattr(model, f) for f in ("mr", "nv", "kc", "mc", "nc") if not getattr(blocks, f)})
    x = _Names(printer.prefix)
    outer_param = {o: f"{x.p}_o{k}" for k, o in enumerate(c.outer)}
    b = domain_pieces(scop, st, c, lambda o: outer_param[o])
    emit = printer.emit
    gen = printer.gen
    args = [strip(printer.expr(call.op_get_arg(k + 1))) for k in range(call.op_get_n_arg() - 1)]
    outer_values = {o: args[st.iterators.index(o)] for o in c.outer}

    def at(node: c_ast.Node, values: dict[str, str]) -> str:
        subst = {o: outer_param[o] for o in c.outer}
        subst.update({it: v if re.fullmatch(r"-?\w+", v) else f"({v})" for it, v in values.items()})
        subst.update(printer.renamed)
        return gen.visit(printer.sliced(substitute(node, subst)))

    zeros = {v: "0" for v in st.iterators}
    ctx = scop.context.align_params(b.get_space())
    lin = _Linear(printer, b, isl.Set.universe(b.get_space().params()).intersect_params(ctx), {})
    pos = {b.get_dim_name(isl.dim_type.set, d): d for d in range(b.dim(isl.dim_type.set))}
    di, dj, dk = (pos[isl_name(v)] for v in (c.i, c.j, c.k))
    ranges = {}
    for name, d in (("i", di), ("j", dj), ("k", dk)):
        lo, hi = _bounds(b, d)
        ranges[name] = (lin.text(lo), lin.text(hi))
    ij_cons, param_cons = [], []
    ik_cons, jk_cons = [], []  # (the row's or column's coefficient, k's, the rest): k's triangles
    for con in b.get_constraints():
        ci = con.get_coefficient_val(isl.dim_type.set, di).to_python()
        cj = con.get_coefficient_val(isl.dim_type.set, dj).to_python()
        ck = con.get_coefficient_val(isl.dim_type.set, dk).to_python()
        if ck:
            if ci or cj:  # (never both: contraction._domain_ok)
                (ik_cons if ci else jk_cons).append((ci or cj, ck, lin.rest(con)))
            continue
        rest = lin.rest(con)
        if ci or cj:
            # a bound of the box itself needs no test (the tiles lie in the box)
            if not (ci and cj):
                continue
            ij_cons.append((ci, cj, rest))
        else:
            param_cons.append(f"({rest}) {'==' if con.is_equality() else '>='} 0")

    na, nb = len(c.a_operands), len(c.b_operands)
    vb = machine.vector_bytes()
    pack_a = blocks.pack_a
    # W op core as one update (the original's order), or one per product where the user allows reassociation
    updates = summands(c.core, c.op) if blocks.reassociate else ((c.op, c.core),)

    # ---- the block ---------------------------------------------------------------------------------
    i0 = indent
    emit(f"{{ /* contraction {c.statement}: packed blocks of ({c.i}, {c.j}, {c.k}) (emit/blis.py) */", i0)
    i1 = i0 + 1
    w0 = at(c.write_node, zeros)
    generic = ", ".join(f"{t}: ({t})0" for t in _VECTOR_TYPES)
    emit(f"typedef __typeof__(_Generic(({w0}), {generic}, default: (double)0)) {x.T};", i1)
    emit(f"typedef {x.T} {x.V} __attribute__((vector_size({vb})));", i1)
    same = [f"__builtin_types_compatible_p(__typeof__({w0}), {x.T})"]
    same += [f"__builtin_types_compatible_p(__typeof__({at(o.node, zeros)}), {x.T})" for o in c.operands]
    emit(f"if ({' && '.join(same)}) {{", i1)
    i2 = i1 + 1
    for o in c.outer:
        emit(f"const long {outer_param[o]} = {outer_values[o]};", i2)
    emit(f"const long {x.i0} = {ranges['i'][0]}, {x.i1} = ({ranges['i'][1]}) + 1;", i2)
    emit(f"const long {x.j0} = {ranges['j'][0]}, {x.j1} = ({ranges['j'][1]}) + 1;", i2)
    emit(f"const long {x.k0} = {ranges['k'][0]}, {x.k1} = ({ranges['k'][1]}) + 1;", i2)
    guard = [f"{x.i0} < {x.i1}", f"{x.j0} < {x.j1}", f"{x.k0} < {x.k1}"] + param_cons
    if pack_work() > 0:  # small products run the loops (the else below)
        guard.append(f"({x.i1} - {x.i0}) * ({x.j1} - {x.j0}) * ({x.k1} - {x.k0}) >= {pack_work()}L")
    emit(f"if ({' && '.join(guard)}) {{", i2)
    i3 = i2 + 1
    mr, nv = blk.mr, blk.nv
    if not blocks.mr:  # the model's rows, as many as the registers hold beside this product's operands
        mr = fitted_rows(mr, nv, len(_slots(c)[0]), len(_slots(c)[1]))
    emit(f"enum {{ {x.MR} = {mr}, {x.VL} = {vb} / sizeof({x.T}), {x.NR} = {nv} * {x.VL}, "
         f"{x.NA} = {na}, {x.NB} = {nb} }};", i3)
    _sizes(emit, x, blk, blocks, i3, model.mc)
    emit(f"const long {x.KC} = {x.kcm} < {x.k1} - {x.k0} ? {x.kcm} : {x.k1} - {x.k0};", i3)
    emit(f"const long {x.NC} = {x.ncm} < {x.j1} - {x.j0} + {x.NR} - 1 ? {x.ncm} / {x.NR} * {x.NR} + "
         f"({x.ncm} < {x.NR}) * {x.NR} : ({x.j1} - {x.j0} + {x.NR} - 1) / {x.NR} * {x.NR};", i3)
    emit(f"long {x.MC} = {x.mcm} < {x.i1} - {x.i0} + {x.MR} - 1 ? {x.mcm} / {x.MR} * {x.MR} + "
         f"({x.mcm} < {x.MR}) * {x.MR} : ({x.i1} - {x.i0} + {x.MR} - 1) / {x.MR} * {x.MR};", i3)
    if c.unit_columns:
        wi1 = at(c.write_node, {c.i: "1", c.j: "0", c.k: "0"})
        wi0 = at(c.write_node, {c.i: "0", c.j: "0", c.k: "0"})
        emit(f"const long {x.crs} = (long)(&{wi1} - &{wi0});", i3)
    work = f"({x.i1} - {x.i0}) * ({x.j1} - {x.j0}) * ({x.k1} - {x.k0}) >= {parallel_work()}L"
    if parallel:
        emit("#ifdef _OPENMP", 0)
        emit("extern int omp_get_max_threads(void);", i3)
        # a block of rows for every thread (where rows differ in work, the threads balance it through groups
        # of columns taken heaviest first, below: smaller blocks of rows would read B's panel once more per
        # block, which at 16 threads outruns the shared cache)
        emit(f"if ({work}) {{  /* a block of rows for every thread */", i3)
        emit(f"const long {x.share} = (({x.i1} - {x.i0} + omp_get_max_threads() - 1) / omp_get_max_threads() "
             f"+ {x.MR} - 1) / {x.MR} * {x.MR};", i3 + 1)
        emit(f"if ({x.share} < {x.MC}) {x.MC} = {x.share};", i3 + 1)
        emit("}", i3)
        emit("#endif", 0)
    snap = _snapshot(printer, emit, x, scop, st, c, outer_param, lin, at, i3, work if parallel else None)
    if snap is not None:  # the operands read W's array from the snapshot
        c = snap
    a_ops, b_ops = c.a_operands, c.b_operands
    run = _kept_panel(printer, scop, c, parallel, snap is None and not jk_cons,
                      _one_block(scop, st, c, blk, blocks, vb, model.mc))
    # (a B panel kept between runs is this contraction's own: another's packing would overwrite it)
    _pooled(emit, x.Braw, f"sizeof({x.T}) * {x.NB} * {x.KC} * {x.NC} + 64", i3, None if run else printer)
    emit(f"{x.T} *const {x.Bp} = ({x.T} *)({x.Braw} + (64 - (unsigned long){x.Braw} % 64) % 64);", i3)
    if run is not None:
        # this thread's B panel from the previous iteration of the batch loops, where it holds this block
        emit(f"static __thread unsigned long {x.Brun}; static __thread const void *{x.Bat}; "
             f"static __thread long {x.Bkey}[4];", i3)
    if parallel:
        emit(f"#pragma omp parallel if({work})", i3)
    emit("{", i3)
    i4 = i3 + 1
    if pack_a:
        _pooled(emit, x.Araw, f"sizeof({x.T}) * {x.NA} * {x.KC} * {x.MC} + 64", i4, printer)
        emit(f"{x.T} *const {x.Ap} = ({x.T} *)({x.Araw} + (64 - (unsigned long){x.Araw} % 64) % 64);", i4)
    emit(f"for (long {x.jc} = {x.j0}; {x.jc} < {x.j1}; {x.jc} += {x.NC}) {{", i4)
    i5 = i4 + 1
    emit(f"const long {x.nc} = {x.NC} < {x.j1} - {x.jc} ? {x.NC} : {x.j1} - {x.jc};", i5)
    emit(f"for (long {x.pc} = {x.k0}; {x.pc} < {x.k1}; {x.pc} += {x.KC}) {{", i5)
    i6 = i5 + 1
    emit(f"const long {x.kc} = {x.KC} < {x.k1} - {x.pc} ? {x.KC} : {x.k1} - {x.pc};", i6)
    # pack B: micro-panel q holds, for each k, NB operands of NR columns
    if parallel:
        emit("#pragma omp for schedule(static)", i6)
    if run is not None:
        emit(f"if (!({x.Brun} == {run} && {x.Bat} == (const void *){x.Bp} && {x.Braw} == {x.Braw}_kept && "
             f"{x.Bkey}[0] == {x.jc} && {x.Bkey}[1] == {x.pc} && {x.Bkey}[2] == {x.nc} && "
             f"{x.Bkey}[3] == {x.kc})) {{", i6)
        emit(f"{x.Brun} = {run}; {x.Bat} = {x.Bp}; {x.Bkey}[0] = {x.jc}; {x.Bkey}[1] = {x.pc}; "
             f"{x.Bkey}[2] = {x.nc}; {x.Bkey}[3] = {x.kc};", i6)
    emit(f"for (long {x.jr} = 0; {x.jr} < {x.nc}; {x.jr} += {x.NR}) {{", i6)
    i7 = i6 + 1
    emit(f"{x.T} *const {x.q} = {x.Bp} + {x.jr} * {x.kc} * {x.NB};", i7)
    emit(f"const long {x.cols} = {x.NR} < {x.nc} - {x.jr} ? {x.NR} : {x.nc} - {x.jr};", i7)
    for t, o in enumerate(b_ops):
        val = _tested(at(o.node, {c.j: f"{x.jc} + {x.jr} + {x.cc}", c.k: f"{x.pc} + {x.pp}"}), jk_cons,
                      f"{x.jc} + {x.jr} + {x.cc}", f"{x.pc} + {x.pp}")
        dst = f"{x.q}[({x.pp} * {x.NB} + {t}) * {x.NR} + {x.cc}]"
        if _contiguous_along(o.node, c.j) or not _contiguous_along(o.node, c.k):
            emit(f"for (long {x.pp} = 0; {x.pp} < {x.kc}; {x.pp}++) {{", i7)
            emit(f"for (long {x.cc} = 0; {x.cc} < {x.cols}; {x.cc}++) {dst} = {val};", i7 + 1)
            emit(f"for (long {x.cc} = {x.cols}; {x.cc} < {x.NR}; {x.cc}++) {dst} = 0;", i7 + 1)
            emit("}", i7)
        else:
            emit(f"for (long {x.cc} = 0; {x.cc} < {x.cols}; {x.cc}++)", i7)
            emit(f"for (long {x.pp} = 0; {x.pp} < {x.kc}; {x.pp}++) {dst} = {val};", i7 + 1)
            emit(f"for (long {x.cc} = {x.cols}; {x.cc} < {x.NR}; {x.cc}++)", i7)
            emit(f"for (long {x.pp} = 0; {x.pp} < {x.kc}; {x.pp}++) {dst} = 0;", i7 + 1)
    emit("}", i6)
    if run is not None:
        emit("}", i6)
    if parallel:
        # the threads share (row block, group of column micro-panels) pairs, row blocks first: one group (all
        # the columns) where there are as many row blocks as threads, else as many groups as it takes to give
        # every thread work (a batch of 16 inputs through a wide layer: one row block); a thread packs the A
        # block of the pairs it takes (again where another thread has it too)
        if ik_cons:  # only the row blocks with a step of k in this block (trmm's first k block: its first rows)
            _active_rows(emit, x, ik_cons, i6)
            emit(f"const long {x.nic} = {x.nb}, {x.njr} = ({x.nc} + {x.NR} - 1) / {x.NR};", i6)
        else:
            emit(f"const long {x.nic} = ({x.i1} - {x.i0} + {x.MC} - 1) / {x.MC}, "
                 f"{x.njr} = ({x.nc} + {x.NR} - 1) / {x.NR};", i6)
        # where the pairs differ in work (a triangle: trmm's first rows sum over all of a k block, its last
        # over none; syrk's rows over more columns each), four pairs a thread (groups of at least four
        # micro-panels), taken heaviest first: the last pairs taken are the lightest, and fill the threads
        uneven = bool(ij_cons or ik_cons or jk_cons)
        emit(f"long {x.ng} = 1;", i6)
        emit("#ifdef _OPENMP", 0)
        emit("extern int omp_get_num_threads(void);", i6)
        # (one thread: the whole rows of a row block, each A block packed once; uneven pairs taken heaviest
        # first alternate row blocks, and one thread packed each A block again for each of its groups)
        emit(f"{x.ng} = {'omp_get_num_threads() == 1 ? 1 : ' if uneven else ''}"
             f"({'4 * ' if uneven else ''}omp_get_num_threads() + {x.nic} - 1) / ({x.nic} > 0 ? {x.nic} : 1);", i6)
        emit("#endif", 0)
        most = f"({x.njr} + 3) / 4" if uneven else x.njr
        emit(f"if ({x.ng} > {most}) {x.ng} = {most};", i6)
        emit(f"const long {x.per} = ({x.njr} + {x.ng} - 1) / {x.ng} * {x.NR};  /* columns of a group */", i6)
        if uneven:
            _heaviest_first(emit, x, ij_cons, ik_cons, jk_cons, i6)
        if pack_a:
            emit(f"long {x.packed} = -1;  /* the row block this thread's A block holds */", i6)
        emit("#pragma omp for schedule(dynamic, 1)", i6)
        emit(f"for (long {x.t} = 0; {x.t} < {x.nic} * {x.ng}; {x.t}++) {{", i6)
        task = x.t
        if uneven:
            task = x.u
            emit(f"const long {x.u} = {x.ord}[{x.t}];", i7)
        emit(f"const long {x.ic} = {x.i0} + ({x.fb} + {task} / {x.ng}) * {x.MC};" if ik_cons else
             f"const long {x.ic} = {x.i0} + {task} / {x.ng} * {x.MC};", i7)
    elif ik_cons:
        _active_rows(emit, x, ik_cons, i6)
        emit(f"for (long {x.ic} = {x.i0} + {x.fb} * {x.MC}; {x.ic} < {x.i0} + ({x.fb} + {x.nb}) * {x.MC}; "
             f"{x.ic} += {x.MC}) {{", i6)
    else:
        emit(f"for (long {x.ic} = {x.i0}; {x.ic} < {x.i1}; {x.ic} += {x.MC}) {{", i6)
    emit(f"const long {x.mc} = {x.MC} < {x.i1} - {x.ic} ? {x.MC} : {x.i1} - {x.ic};", i7)
    if pack_a:
        if parallel:
            emit(f"if ({x.packed} != {x.ic}) {{", i7)
            emit(f"{x.packed} = {x.ic};", i7)
        emit(f"for (long {x.ir} = 0; {x.ir} < {x.mc}; {x.ir} += {x.MR}) {{", i7)
        i8 = i7 + 1
        emit(f"{x.T} *const {x.q} = {x.Ap} + {x.ir} * {x.kc} * {x.NA};", i8)
        emit(f"const long {x.rows} = {x.MR} < {x.mc} - {x.ir} ? {x.MR} : {x.mc} - {x.ir};", i8)
        for t, o in enumerate(a_ops):
            val = _tested(at(o.node, {c.i: f"{x.ic} + {x.ir} + {x.rr}", c.k: f"{x.pc} + {x.pp}"}), ik_cons,
                          f"{x.ic} + {x.ir} + {x.rr}", f"{x.pc} + {x.pp}")
            dst = f"{x.q}[({x.pp} * {x.NA} + {t}) * {x.MR} + {x.rr}]"
            if _contiguous_along(o.node, c.k):
                emit(f"for (long {x.rr} = 0; {x.rr} < {x.rows}; {x.rr}++)", i8)
                emit(f"for (long {x.pp} = 0; {x.pp} < {x.kc}; {x.pp}++) {dst} = {val};", i8 + 1)
                emit(f"for (long {x.rr} = {x.rows}; {x.rr} < {x.MR}; {x.rr}++)", i8)
                emit(f"for (long {x.pp} = 0; {x.pp} < {x.kc}; {x.pp}++) {dst} = 0;", i8 + 1)
            else:
                emit(f"for (long {x.pp} = 0; {x.pp} < {x.kc}; {x.pp}++) {{", i8)
                emit(f"for (long {x.rr} = 0; {x.rr} < {x.rows}; {x.rr}++) {dst} = {val};", i8 + 1)
                emit(f"for (long {x.rr} = {x.rows}; {x.rr} < {x.MR}; {x.rr}++) {dst} = 0;", i8 + 1)
                emit("}", i8)
        emit("}", i7)
        if parallel:
            emit("}", i7)
    if parallel:
        emit(f"const long {x.jg} = {task} % {x.ng} * {x.per}, {x.jg1} = {x.jg} + {x.per} < {x.nc} ? "
             f"{x.jg} + {x.per} : {x.nc};", i7)
        emit(f"for (long {x.jr} = {x.jg}; {x.jr} < {x.jg1}; {x.jr} += {x.NR}) {{", i7)
    else:
        emit(f"for (long {x.jr} = 0; {x.jr} < {x.nc}; {x.jr} += {x.NR}) {{", i7)
    i8 = i7 + 1
    emit(f"for (long {x.ir} = 0; {x.ir} < {x.mc}; {x.ir} += {x.MR}) {{", i8)
    i9 = i8 + 1
    emit(f"const long {x.I} = {x.ic} + {x.ir}, {x.J} = {x.jc} + {x.jr};", i9)
    emit(f"const long {x.rows} = {x.MR} < {x.i1} - {x.I} ? {x.MR} : {x.i1} - {x.I};", i9)
    emit(f"const long {x.cols} = {x.NR} < {x.j1} - {x.J} ? {x.NR} : {x.j1} - {x.J};", i9)
    full = [f"{x.rows} == {x.MR}", f"{x.cols} == {x.NR}"]
    empty = []
    for ci, cj, rest in ij_cons:
        lo_i, hi_i = (x.I, f"{x.I} + {x.rows} - 1") if ci > 0 else (f"{x.I} + {x.rows} - 1", x.I)
        lo_j, hi_j = (x.J, f"{x.J} + {x.cols} - 1") if cj > 0 else (f"{x.J} + {x.cols} - 1", x.J)
        least = f"{_term(ci, lo_i)} + {_term(cj, lo_j)} + ({rest})"
        most = f"{_term(ci, hi_i)} + {_term(cj, hi_j)} + ({rest})"
        full.append(f"{least} >= 0")
        empty.append(f"{most} < 0")
    if empty:
        emit(f"if ({' || '.join(empty)}) continue;", i9)
    ranged = bool(ik_cons or jk_cons)
    if ranged:
        _k_ranges(emit, x, ik_cons, jk_cons, i9)
    inside = " && ".join(f"{_term(ci, x.ii)} + {_term(cj, x.jj)} + ({rest}) >= 0" for ci, cj, rest in ij_cons)
    emit(f"const int {x.full} = {' && '.join(full)};", i9)
    emit(f"{x.T} {x.tile}[{x.MR} * {x.NR}] __attribute__((aligned(64)));", i9)
    emit(f"{x.T} *{x.cp};", i9)
    emit(f"long {x.rs};", i9)
    wij = at(c.write_node, {c.i: x.ii, c.j: x.jj})
    if c.unit_columns:
        emit(f"if ({x.full}) {{", i9)
        emit(f"{x.cp} = &{at(c.write_node, {c.i: x.I, c.j: x.J})};", i9 + 1)
        emit(f"{x.rs} = {x.crs};", i9 + 1)
        emit("} else {", i9)
    else:
        emit("{", i9)
    i10 = i9 + 1
    emit(f"{x.cp} = {x.tile};", i10)
    emit(f"{x.rs} = {x.NR};", i10)
    emit(f"for (long {x.rr} = 0; {x.rr} < {x.MR}; {x.rr}++)", i10)
    emit(f"for (long {x.cc} = 0; {x.cc} < {x.NR}; {x.cc}++) {{", i10 + 1)
    emit(f"const long {x.ii} = {x.I} + {x.rr}, {x.jj} = {x.J} + {x.cc};", i10 + 2)
    cond = f"{x.rr} < {x.rows} && {x.cc} < {x.cols}" + (f" && {inside}" if inside else "")
    emit(f"{x.tile}[{x.rr} * {x.NR} + {x.cc}] = {cond} ? {wij} : 0;", i10 + 2)
    emit("}", i10 + 1)
    emit("}", i9)
    if ranged and not jk_cons:  # the steps where only some rows are inside, in the registers, row by row
        _kernel(emit, x, c, updates, mr, nv, pack_a, at, i9, (x.kalo, x.kahi), ik_cons)
    elif ranged:  # each element's own k before the tile's common range, the kernel over it, and after it
        _ragged(emit, x, c, updates, pack_a, at, ik_cons, jk_cons, x.kalo, x.klo, i9)
        emit(f"if ({x.klo} < {x.khi})", i9)
        _kernel(emit, x, c, updates, mr, nv, pack_a, at, i9, (x.klo, x.khi))
        _ragged(emit, x, c, updates, pack_a, at, ik_cons, jk_cons, x.khi, x.kahi, i9)
    else:
        _kernel(emit, x, c, updates, mr, nv, pack_a, at, i9)
    emit(f"if ({x.cp} == {x.tile})", i9)
    emit(f"for (long {x.rr} = 0; {x.rr} < {x.rows}; {x.rr}++)", i9 + 1)
    emit(f"for (long {x.cc} = 0; {x.cc} < {x.cols}; {x.cc}++) {{", i9 + 2)
    emit(f"const long {x.ii} = {x.I} + {x.rr}, {x.jj} = {x.J} + {x.cc};", i9 + 3)
    if inside:
        emit(f"if ({inside})", i9 + 3)
    emit(f"{wij} = {x.tile}[{x.rr} * {x.NR} + {x.cc}];", i9 + 3 + bool(inside))
    emit("}", i9 + 2)
    emit("}", i8)  # ir
    emit("}", i7)  # jr
    emit("}", i6)  # ic (or the pairs)
    emit("}", i5)  # pc
    emit("}", i4)  # jc
    if pack_a:
        emit(f"if ({x.Araw} != {x.Araw}_kept) __builtin_free({x.Araw});", i4)
    emit("}", i3)  # parallel
    emit(f"if ({x.Braw} != {x.Braw}_kept) __builtin_free({x.Braw});", i3)
    if snap is not None:
        emit(f"__builtin_free({x.S});", i3)
    emit("} else {", i2)  # guard: a small or empty product, or parameters outside the blocks' piece
    printer.node(child, i3, None)
    emit("}", i2)
    emit("} else {", i1)
    printer.node(child, i2, None)
    emit("}", i1)
    emit("}", i0)


def _one_block(scop, st, c: Contraction, blk: Blocks, asked: Blocks, vector_bytes: int, l2_budget: int) -> bool:
    """Whether B may be one (k block, column block) of the packed code: False only where its known trip
    counts exceed the block sizes of _sizes (kc elements from the model's bytes over a micro-panel row, nc
    the smallest the model gives, with 8-byte elements). Unknown sizes may (doitgen's, function parameters)."""
    e = extents(scop, st, c)
    if e["k"] is None or e["j"] is None:
        return True
    kc = asked.kc or max(1, blk.kc // (blk.nv * vector_bytes))
    nc = asked.nc or max(1, min(blk.nc, l2_budget) // (kc * 8))
    return e["k"] <= kc and e["j"] <= nc


def _kept_panel(printer, scop, c: Contraction, parallel: bool, plain: bool, one_block: bool) -> str | None:
    """The region's run number (a variable the region's block declares) where a thread may keep its packed B
    panel from one iteration of the contraction's outer loops to the next; None where it may not. It may
    where the product sits in a batch loop and is not parallel inside (the batch loop is: doitgen's r, whose
    150 iterations each packed the same 160 x 160 block of C4), and B's operands read neither the batch loops
    nor anything the region writes: the panel of one (column block, k block) is then the same for the whole
    run. *plain*: no snapshot of W and no triangle of the columns with k (their packing reads more than B).
    *one_block*: B is one block (only the last block packed is kept: a B of several would be packed again
    in every iteration, and the test around its packing cost 2-4% at 1 thread on rowbuf_transform and
    matmul_llmc, code that gained nothing from it)."""
    if parallel or not plain or not c.outer or not one_block:
        return None
    written = {a.array for st in scop.statements for a in st.writes}
    reads: set[str] = set()
    for o in c.b_operands:
        reads |= ids_of(o.node)
    if reads & (written | set(c.outer)):
        return None
    return printer.run_number()


def _snapshot(printer, emit, x: _Names, scop, st, c: Contraction, outer_param: dict, lin: _Linear, at,
              indent: int, parallel_if: str | None) -> Contraction | None:
    """Where operands read W's array (trmm's B[k][j] beside `B[i][j] +=`, k > i: contraction.result_reads),
    a copy S of the rows of W's array they read (its first subscript's range, the outer loops fixed), taken
    before the packed code writes any; *c* with those operands reading S (same subscripts). None where no
    operand reads W's array. (The original reads each of those elements before the statement writes it:
    contraction._operands_read_before_writes.)"""
    if not c.reads_result or c.in_place:
        return None
    warray = st.writes[0].array
    reads = result_reads(st)
    rel = reads[0]
    for r in reads[1:]:
        rel = rel.union(r)
    rel = rel.intersect_params(scop.context.align_params(rel.get_space()))
    for o in sorted(c.outer, key=lambda o: -st.iterators.index(o)):  # outer loops to parameters, last first
        p = rel.dim(isl.dim_type.param)
        rel = rel.move_dims(isl.dim_type.param, p, isl.dim_type.in_, st.iterators.index(o), 1)
        rel = rel.set_dim_name(isl.dim_type.param, p, outer_param[o])
    rows = rel.range()
    n = rows.dim(isl.dim_type.set)
    rows = rows.project_out(isl.dim_type.set, 1, n - 1) if n > 1 else rows
    lo, hi = lin.text(rows.dim_min(0)), lin.text(rows.dim_max(0))
    base = c.write_node
    while isinstance(base, c_ast.ArrayRef):
        base = base.name
    w = at(base, {})
    for line in allocation(f"__typeof__(&{w}[0]) const {x.S}", f"sizeof({w}[0]) * (({hi}) + 1)", x.S):
        emit(line, 0 if line.startswith("#") else indent)
    if parallel_if:  # (row by row on the threads: its fresh pages are written where they fault)
        emit(f"#pragma omp parallel for if({parallel_if})", indent)
        emit(f"for (long {x.rr} = {lo}; {x.rr} <= {hi}; {x.rr}++)", indent)
        emit(f"__builtin_memcpy(&{x.S}[{x.rr}], &{w}[{x.rr}], sizeof({w}[0]));", indent + 1)
    else:
        emit(f"__builtin_memcpy(&{x.S}[{lo}], &{w}[{lo}], sizeof({w}[0]) * (({hi}) - ({lo}) + 1));", indent)
    ops = tuple(replace(o, node=substitute(o.node, {warray: x.S})) for o in c.operands)
    return replace(c, operands=ops)


# The packing buffers a thread keeps between runs of one contraction's code, up to this many bytes each
# (BLIS's memory pool): a fresh buffer over glibc's mmap threshold (128 KB) is mapped and faulted in page by
# page on every run, which inside a batch loop is every iteration (doitgen LARGE, 1 thread: 0.040 s with a
# fresh A and B buffer for each of its 150 r, 0.030 s with the kept ones). Larger ones are freed after each run.
KEEP_BYTES = 64 << 20


def _pooled(emit, raw: str, size: str, indent: int, shared=None) -> None:
    """`raw`: a buffer of *size* bytes, the one this thread kept from an earlier run where it is large enough
    (raw_kept, raw_kept_n: thread-local statics), else a new one, kept where under KEEP_BYTES. *shared* (the
    region's printer): the statics are the region's, declared in its block's head, so that the contractions
    of a region, which run one after another on a thread, fill one buffer (3mm's three products: its pages
    faulted in once, not three times; 1.01-1.02x at 1 thread on the EPYC dev box, LARGE); None: this block's own."""
    declaration = f"static __thread char *{raw}_kept; static __thread unsigned long {raw}_kept_n;"
    if shared is None:
        emit(declaration, indent)
    elif declaration not in shared.head:
        shared.head.append(declaration)
    emit(f"const unsigned long {raw}_n = {size};", indent)
    emit(f"char *{raw} = {raw}_kept;", indent)
    emit(f"if ({raw}_kept_n < {raw}_n) {{", indent)
    emit(f"{raw} = __builtin_malloc({raw}_n);", indent + 1)
    emit(f"if (!{raw}) __builtin_abort();", indent + 1)
    emit(f"if ({raw}_n <= {KEEP_BYTES}UL) {{ __builtin_free({raw}_kept); {raw}_kept = {raw}; "
         f"{raw}_kept_n = {raw}_n; }}", indent + 1)
    emit("}", indent)


def _term(coefficient: int, value: str) -> str:
    return f"({value})" if coefficient == 1 else f"-({value})"


def _holds(cons: list, v: str, k: str) -> str:
    """C test of k's triangle constraints (coefficient of the row or column *v*, of *k*, the rest)."""
    return " && ".join(f"{_term(cv, v)} + {_term(ck, k)} + ({rest}) >= 0" for cv, ck, rest in cons)


def _tested(value: str, cons: list, v: str, k: str) -> str:
    """*value*, packed only where (v, k) meets k's triangle constraints (0 elsewhere: never used, and the
    operand is never read where the original does not read it)."""
    return f"({_holds(cons, v, k)}) ? {value} : 0" if cons else value


def _active_rows(emit, x: _Names, ik_cons: list, indent: int) -> None:
    """fb, nb: the first row block (of MC rows from i0) and the number of row blocks that hold a row meeting
    every constraint of k's triangle with the rows for some k of the block [pc, pc + kc): each constraint
    `cv * i + ck * k + rest >= 0` bounds i by its most permissive k."""
    emit(f"long {x.ia} = {x.i0}, {x.ib} = {x.i1};  /* the rows with a step of k in this block */", indent)
    last = f"{x.pc} + {x.kc} - 1"
    for cv, ck, rest in ik_cons:
        if cv > 0:  # i >= -ck * k - rest, least at k's end (ck = 1) or start
            lo = f"-({last}) - ({rest})" if ck > 0 else f"{x.pc} - ({rest})"
            emit(f"if ({lo} > {x.ia}) {x.ia} = {lo};", indent)
        else:  # i <= ck * k + rest, greatest at k's end (ck = 1) or start
            hi = f"{last} + ({rest})" if ck > 0 else f"-{x.pc} + ({rest})"
            emit(f"if (({hi}) + 1 < {x.ib}) {x.ib} = ({hi}) + 1;", indent)
    emit(f"const long {x.fb} = {x.ia} < {x.ib} ? ({x.ia} - {x.i0}) / {x.MC} : 0, {x.nb} = {x.ia} < {x.ib} ? "
         f"({x.ib} - 1 - {x.i0}) / {x.MC} - {x.fb} + 1 : 0;", indent)


def _heaviest_first(emit, x: _Names, ij_cons: list, ik_cons: list, jk_cons: list, indent: int) -> None:
    """ord: the pairs (row block, group of columns) of this k block, heaviest first. A pair's work is
    estimated from its k steps inside the triangles at nine points (its corners, the middles of its sides,
    its centre; three where the triangles read only its rows or only its columns) times its size; every
    thread sorts alike (integers, the same steps), so that ord is one permutation for the loop they share."""
    emit(f"const long {x.nt} = {x.nic} * {x.ng};", indent)
    emit(f"long {x.ord}[{x.nt} > 0 ? {x.nt} : 1], {x.wt}[{x.nt} > 0 ? {x.nt} : 1];", indent)
    emit(f"for (long {x.u} = 0; {x.u} < {x.nt}; {x.u}++) {{", indent)
    i1 = indent + 1
    first = f"({x.fb} + {x.u} / {x.ng})" if ik_cons else f"({x.u} / {x.ng})"
    emit(f"const long {x.I} = {x.i0} + {first} * {x.MC}, {x.J} = {x.jc} + {x.u} % {x.ng} * {x.per};", i1)
    emit(f"const long {x.rows} = ({x.MC} < {x.i1} - {x.I} ? {x.MC} : {x.i1} - {x.I}), "
         f"{x.cols} = ({x.per} < {x.jc} + {x.nc} - {x.J} ? {x.per} : {x.jc} + {x.nc} - {x.J});", i1)
    emit(f"long {x.s} = 0;", i1)
    # three points along the rows, the columns, where a constraint reads them (one elsewhere: all alike)
    by_rows, by_cols = bool(ij_cons or ik_cons), bool(ij_cons or jk_cons)
    emit(f"for (int {x.a} = 0; {x.a} < {3 if by_rows else 1} && {x.rows} > 0 && {x.cols} > 0; {x.a}++)", i1)
    emit(f"for (int {x.b} = 0; {x.b} < {3 if by_cols else 1}; {x.b}++) {{", i1 + 1)
    i3 = i1 + 2
    points = ([f"{x.ii} = {x.I} + ({x.rows} - 1) * {x.a} / 2"] if by_rows else []) + \
        ([f"{x.jj} = {x.J} + ({x.cols} - 1) * {x.b} / 2"] if by_cols else [])
    emit(f"const long {', '.join(points)};", i3)
    inside = [f"{_term(ci, x.ii)} + {_term(cj, x.jj)} + ({rest}) >= 0" for ci, cj, rest in ij_cons]
    if inside:
        emit(f"if (!({' && '.join(inside)})) continue;", i3)
    emit(f"long {x.klo} = {x.pc}, {x.khi} = {x.pc} + {x.kc} - 1;", i3)
    for cons, v in ((ik_cons, x.ii), (jk_cons, x.jj)):
        for cv, ck, rest in cons:
            f = f"{_term(cv, v)} + ({rest})"
            if ck > 0:  # k >= -f
                emit(f"if (-({f}) > {x.klo}) {x.klo} = -({f});", i3)
            else:  # k <= f
                emit(f"if (({f}) < {x.khi}) {x.khi} = {f};", i3)
    emit(f"if ({x.khi} >= {x.klo}) {x.s} += {x.khi} - {x.klo} + 1;", i3)
    emit("}", i1 + 1)
    emit(f"{x.wt}[{x.u}] = {x.rows} > 0 && {x.cols} > 0 ? {x.s} * {x.rows} * {x.cols} * "
         f"{(1 if by_rows else 3) * (1 if by_cols else 3)} : 0;", i1)
    emit(f"{x.ord}[{x.u}] = {x.u};", i1)
    emit("}", indent)
    # a shell sort (gaps halving): descending weight
    emit(f"for (long {x.gap} = {x.nt} / 2; {x.gap} > 0; {x.gap} /= 2)", indent)
    emit(f"for (long {x.a} = {x.gap}; {x.a} < {x.nt}; {x.a}++) {{", indent + 1)
    i2 = indent + 2
    emit(f"const long {x.v} = {x.ord}[{x.a}];", i2)
    emit(f"long {x.b} = {x.a};", i2)
    emit(f"for (; {x.b} >= {x.gap} && {x.wt}[{x.ord}[{x.b} - {x.gap}]] < {x.wt}[{x.v}]; {x.b} -= {x.gap}) "
         f"{x.ord}[{x.b}] = {x.ord}[{x.b} - {x.gap}];", i2)
    emit(f"{x.ord}[{x.b}] = {x.v};", i2)
    emit("}", indent + 1)


def _k_ranges(emit, x: _Names, ik_cons: list, jk_cons: list, indent: int) -> None:
    """klo, khi: the block's k steps (pp) where every element of the tile (rows x cols at I, J) is inside
    k's triangle constraints; kalo, kahi: those where some element may be (each constraint at its best
    corner). A tile with no such step is skipped. For `cv * v + ck * k + rest >= 0` (ck = +-1) over the tile's
    v in [lo, hi]: f = cv * v + rest takes its least and greatest values at the ends, and k >= -f (ck = 1)
    or k <= f (ck = -1)."""
    emit(f"long {x.klo} = 0, {x.khi} = {x.kc}, {x.kalo} = 0, {x.kahi} = {x.kc};", indent)
    for cons, lo, count in ((ik_cons, x.I, x.rows), (jk_cons, x.J, x.cols)):
        ends = (lo, f"{lo} + {count} - 1")
        for cv, ck, rest in cons:
            least, most = (f"{_term(cv, v)} + ({rest})" for v in (ends if cv > 0 else ends[::-1]))
            if ck > 0:  # pp >= -f - pc
                for var, f in ((x.klo, least), (x.kalo, most)):
                    emit(f"if (-({f}) - {x.pc} > {var}) {var} = -({f}) - {x.pc};", indent)
            else:  # pp <= f - pc
                for var, f in ((x.khi, least), (x.kahi, most)):
                    emit(f"if (({f}) - {x.pc} + 1 < {var}) {var} = ({f}) - {x.pc} + 1;", indent)
    emit(f"if ({x.kalo} >= {x.kahi}) continue;", indent)
    emit(f"if ({x.klo} >= {x.khi}) {x.klo} = {x.khi} = {x.kahi};", indent)


def _slots(c: Contraction) -> tuple[dict[int, int], dict[int, int]]:
    """For the A and for the B operands: each operand's number in *c*'s core (its @a<n> or @b<n>) -> its place
    among its side's operands (in the packs and c.a_operands / c.b_operands)."""
    a = [n for n, o in enumerate(c.operands) if o.side == "a"]
    b = [n for n, o in enumerate(c.operands) if o.side == "b"]
    return {n: t for t, n in enumerate(a)}, {n: t for t, n in enumerate(b)}


def _filled(term: str, x: _Names, a_suffix: str, b_suffix: str) -> str:
    """*term* (a core's text with @a<n>/@b<n> placeholders) with the kernel's operand variables in them:
    `{p}_a<n>{a_suffix}`, `{p}_b<n>{b_suffix}` (the row's and the vector's suffix in the micro-kernel)."""
    term = re.sub(r"@a(\d+)", f"{x.p}_a\\1{a_suffix}", term)
    return re.sub(r"@b(\d+)", f"{x.p}_b\\1{b_suffix}", term)


def _ragged(emit, x: _Names, c: Contraction, updates: tuple, pack_a: bool, at, ik_cons: list, jk_cons: list,
            start: str, stop: str, indent: int) -> None:
    """The k steps [start, stop) of the tile element by element, each under k's triangle constraints, in
    k's order: the same operations on each element as the kernel's lanes (scalars instead of vectors)."""
    a_pos, b_pos = _slots(c)
    emit(f"for (long {x.pp} = {start}; {x.pp} < {stop}; {x.pp}++)", indent)
    emit(f"for (long {x.rr} = 0; {x.rr} < {x.rows}; {x.rr}++) {{", indent + 1)
    i2 = indent + 2
    kk = f"{x.pc} + {x.pp}"
    if ik_cons:
        emit(f"if (!({_holds(ik_cons, f'{x.I} + {x.rr}', kk)})) continue;", i2)
    for k, t in a_pos.items():
        if pack_a:
            val = f"{x.Ap}[{x.ir} * {x.kc} * {x.NA} + ({x.pp} * {x.NA} + {t}) * {x.MR} + {x.rr}]"
        else:
            val = at(c.a_operands[t].node, {c.i: f"{x.I} + {x.rr}", c.k: kk})
        emit(f"const {x.T} {x.p}_a{k} = {val};", i2)
    emit(f"for (long {x.cc} = 0; {x.cc} < {x.cols}; {x.cc}++) {{", i2)
    i3 = i2 + 1
    if jk_cons:
        emit(f"if (!({_holds(jk_cons, f'{x.J} + {x.cc}', kk)})) continue;", i3)
    for k, t in b_pos.items():
        emit(f"const {x.T} {x.p}_b{k} = {x.Bp}[{x.jr} * {x.kc} * {x.NB} + ({x.pp} * {x.NB} + {t}) * {x.NR} + "
             f"{x.cc}];", i3)
    w = f"{x.cp}[{x.rr} * {x.rs} + {x.cc}]"
    for op, term in updates:
        emit(f"{w} = {w} {op} {_filled(term, x, '', '')};", i3)
    emit("}", i2)
    emit("}", indent + 1)


def _sizes(emit, x: _Names, blk: Blocks, asked: Blocks, indent: int, l2_budget: int) -> None:
    """kcm, mcm, ncm: the block sizes in elements. The model's are byte budgets (model_blocks) divided by
    the panel's other extent times the element size; tuned ones are element counts. Where the rows fit one
    row block, the model's nc keeps the packed B panel in L2 (*l2_budget* bytes, as mc's) instead of L3:
    BLIS sizes it for L3 because every row block reuses it, but one row block reads each micro-panel only
    right after packing it (dense_batch, 16 rows x 8,192 columns x 512: 0.010 s with nc = 512 against
    0.024 s with the panel of all 8,192 columns, 12.6 MB)."""
    def size(field: str, budget_of: str) -> str:
        v = getattr(asked, field)
        if v:
            return str(v)
        return f"{getattr(blk, field)}L / ({budget_of} * (long)sizeof({x.T}))"

    # a micro-panel holds NB operands of B (NA of A) for each k: syr2k's two products fill twice the bytes
    # of gemm's (the model's kc of one operand left its B micro-panels 32 KB, all of the L1 of dev box C)
    b_kc, a_kc = f"{x.kcm} * {x.NB}", f"{x.kcm} * {x.NA}"
    emit(f"const long {x.kcm} = {size('kc', f'{x.NR} * {x.NB}')} > 0 ? {size('kc', f'{x.NR} * {x.NB}')} : 1;",
         indent)
    emit(f"const long {x.mcm} = {size('mc', a_kc)} > 0 ? {size('mc', a_kc)} : 1;", indent)
    emit(f"long {x.ncm} = {size('nc', b_kc)} > 0 ? {size('nc', b_kc)} : 1;", indent)
    if not asked.nc:
        l2 = f"{l2_budget}L / ({b_kc} * (long)sizeof({x.T}))"
        emit(f"if ({x.i1} - {x.i0} <= {x.mcm} && {l2} < {x.ncm}) {x.ncm} = {l2} > 0 ? {l2} : 1;", indent)


def _kernel(emit, x: _Names, c: Contraction, updates: tuple, mr: int, nv: int, pack_a: bool, at, indent: int,
            steps: tuple[str, str] | None = None, ik_cons: list | None = None) -> None:
    """The micro-kernel: W's mr x nr tile at cp (rows rs apart) in mr x nv vector registers, updated with
    the core for each k of the block (or the block's steps [start, stop) of *steps*), in k's order. With
    *ik_cons* (k's triangle bounded by the rows alone), *steps* are [kalo, kahi): the steps [klo, khi),
    where every row is inside, run unguarded, and those before and after them update a row's registers
    only where its row is inside (a row's lanes share its k range; the elements outside are never touched,
    as in the original)."""
    a_pos, b_pos = _slots(c)
    emit("{", indent)
    i1 = indent + 1
    acc = [[f"{x.p}_c{r}_{v}" for v in range(nv)] for r in range(mr)]
    emit(f"{x.V} {', '.join(a for row in acc for a in row)};", i1)
    for r in range(mr):
        for v in range(nv):
            emit(f"__builtin_memcpy(&{acc[r][v]}, {x.cp} + {r} * {x.rs} + {v} * {x.VL}, sizeof({x.V}));", i1)
    if c.unit_columns:
        # the next tile down this column of tiles, read ahead (W's rows lie far apart: a tile's rows each
        # miss the cache, and the kernel's first FMAs wait for them); only within this row block (the next
        # one may be another thread's), and for reading (a write prefetch takes the lines from the thread
        # writing them: 2-7% slower at 16 threads on the H100 machine's Xeon). H200 machine's Xeon, LARGE,
        # 1 thread: symm 1.14x, trmm 1.12x, 2mm, gemm, syrk 1.04-1.05x; 16 threads 0.98-1.05x (noise)
        emit(f"if ({x.cp} != {x.tile} && {x.ir} + {x.MR} < {x.mc}) {{", i1)
        for r in range(mr):
            for v in range(nv):
                emit(f"__builtin_prefetch((const void *)((__UINTPTR_TYPE__){x.cp} + (unsigned long)(({mr + r}) * "
                     f"{x.rs} + {v} * {x.VL}) * sizeof({x.T})), 0, 3);", i1 + 1)
        emit("}", i1)
    panel = f"{x.Bp} + {x.jr} * {x.kc} * {x.NB}"
    start, stop = steps or ("0", x.kc)
    skip = f" + {start} * {len(b_pos)} * {nv}" if steps else ""
    emit(f"const {x.V} *{x.bq} = (const {x.V} *)__builtin_assume_aligned({panel}, sizeof({x.V})){skip};", i1)
    if pack_a:
        skip = f" + {start} * {x.NA} * {x.MR}" if steps else ""
        emit(f"const {x.T} *{x.aq} = {x.Ap} + {x.ir} * {x.kc} * {x.NA}{skip};", i1)
    else:
        rows = [f"{x.p}_row{r}" for r in range(mr)]
        for r in range(mr):
            emit(f"const long {rows[r]} = {x.I} + ({r} < {x.rows} ? {r} : 0);", i1)
    nb = len(b_pos)

    def loop(lo: str, hi: str, guarded: bool) -> None:
        emit(f"for (long {x.pp} = {lo}; {x.pp} < {hi}; {x.pp}++) {{", i1)
        i2 = i1 + 1
        for k, t in b_pos.items():
            for v in range(nv):
                emit(f"const {x.V} {x.p}_b{k}_{v} = {x.bq}[{t} * {nv} + {v}];", i2)
        for r in range(mr):
            i3 = i2
            if guarded:
                # (unpacked A: a padding row reads row I's operand, so it tests row I's step)
                row = f"{x.I} + {r}" if pack_a else f"{x.p}_row{r}"
                emit(f"if ({_holds(ik_cons or [], row, f'{x.pc} + {x.pp}')}) {{", i2)
                i3 = i2 + 1
            for k, t in a_pos.items():
                if pack_a:
                    val = f"{x.aq}[{t} * {x.MR} + {r}]"
                else:
                    val = at(c.a_operands[t].node, {c.i: f"{x.p}_row{r}", c.k: f"{x.pc} + {x.pp}"})
                emit(f"const {x.T} {x.p}_a{k}_{r} = {val};", i3)
            for v in range(nv):
                for op, term in updates:
                    emit(f"{acc[r][v]} = {acc[r][v]} {op} {_filled(term, x, f'_{r}', f'_{v}')};", i3)
            if guarded:
                emit("}", i2)
        emit(f"{x.bq} += {nb} * {nv};", i2)
        if pack_a:
            emit(f"{x.aq} += {len(a_pos)} * {x.MR};", i2)
        emit("}", i1)

    if ik_cons:
        loop(start, x.klo, True)
        loop(x.klo, x.khi, False)
        loop(x.khi, stop, True)
    else:
        loop(start, stop, False)
    for r in range(mr):
        for v in range(nv):
            emit(f"__builtin_memcpy({x.cp} + {r} * {x.rs} + {v} * {x.VL}, &{acc[r][v]}, sizeof({x.V}));", i1)
    emit("}", indent)
