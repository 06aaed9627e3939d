"""C/OpenMP code for a scheduled Scop, printed from isl's AST by our own walker.

Statement bodies are the original C expressions with the loop iterators replaced by the AST's
expressions for them; helper macros get a fresh prefix and are #undef'd after the region.
"""
from __future__ import annotations

import re
from dataclasses import replace

import islpy as isl
from pycparser import c_ast

from ..errors import UnsupportedError
from ..poly.astcheck import check_ast
from ..poly.islutil import CTX, ISL_LOCK, bounded, isl_name, sets_of
from ..poly.marks import ContractionMark, IvdepMark, ParallelMark, SimdMark, mark_of, marks_of
from ..poly.parallel import parallel_work, with_work
from ..poly.promote import Occurrence, ast_text, promotable, refs_of, replace_refs
from ..poly.schedule import TiledSchedule
from ..poly.scop import Scop
from ..poly.slices import ThreadSlice, UnfoldedSlice, thread_slices
from ..poly.split import split_choices
from ..poly.tilestore import TileBuffer, offset_exprs, tile_buffers
from .heap import allocation
from .printer import COUNTER_TYPE, Printer, fresh_prefix, param_expr, replace_child, strip, substitute
from .printer import list_ as _list  # (a test replaces it to feed _in_order plain lists)


class _OpenMPPrinter(Printer):
    """The base printer plus what the schedule's marks ask for: `#pragma omp parallel for` with its private
    scalars, schedule clause and private array copies, `#pragma omp simd`, `#pragma GCC ivdep`."""

    def __init__(self, scop: Scop, parallel: bool, ivdep: bool, prefix: str, tiled: TiledSchedule | None = None,
                 buffers: tuple[TileBuffer, ...] = (), offsets: list | None = None,
                 slices: tuple[ThreadSlice, ...] = ()):
        super().__init__(scop, prefix)
        self.tiled = tiled  # for the private copies of arrays its marks name
        self.buffers = {b.name: b for b in buffers}  # scratch arrays stored per tile (poly/tilestore.py)
        self.offsets = offsets or []  # build_ast's table of their offsets, by statement node annotation
        self.rebase: dict[str, tuple] = {}  # the offsets at the statement being printed
        self.parallel = parallel
        self.ivdep = ivdep
        self.counters: list[str] = []  # the counters of the loops being printed, outermost first
        self.replacing: list[dict[int, str]] | None = None  # per statement of the loop printed: see promote
        self.scalars = 0  # promoted elements so far (their names: prefix_0, prefix_1, ...)
        self.in_parallel = 0  # OpenMP parallel loops around the code being printed
        self.slices = {x.name: x for x in slices}  # scratch arrays stored per thread (poly/slices.py)
        self.threaded_slices = False  # whether a parallel loop picks slices by thread (their count: scratch_lines)

    def mark(self, n: isl.AstNode, indent: int, pragma) -> None:
        mark = mark_of(n)
        if isinstance(mark, ContractionMark):
            from .blis import print_contraction  # (blis prints through this printer)
            print_contraction(self, mark, n, indent, self.parallel and not self.in_parallel)
            return
        inner = None
        buffers = self.private_buffers(n, mark.depth) if isinstance(mark, ParallelMark) else ()
        private = self.private(mark.private + buffers, mark.lastprivate) \
            if isinstance(mark, (ParallelMark, SimdMark)) else ""
        if isinstance(mark, (ParallelMark, SimdMark)) and mark.lastprivate \
                and not self.writes_every_iteration(n.mark_get_node(), set(mark.lastprivate)):
            mark = None  # the loop stays sequential: see writes_every_iteration
        if isinstance(mark, (ParallelMark, SimdMark)) and self.scalars_outside(n, mark, buffers):
            first = self.peeled_first(n, mark, buffers) if isinstance(mark, ParallelMark) else None
            if first is None:
                mark = None  # the loop stays sequential: see scalars_outside
            else:  # each thread's copy starts from the value the peeled first instances left
                kept = tuple(x for x in mark.private if x not in first)
                private = self.private(kept, ()) + f" firstprivate({', '.join(first)})"
        if isinstance(mark, ParallelMark) and self.parallel:
            clause = f" schedule({mark.clause})" if mark.clause else ""
            clause += COLLAPSE if mark.collapse == 2 else ""  # (dropped where the nest is not perfect: loop)
            inner = (f"{self.prefix}{mark.depth}", f"#pragma omp parallel for{private}{clause}", (),
                     mark.arrays, mark.work,  # arrays: private copies (poly/privatize.py)
                     None if mark.alternative is None else (
                         f"{self.prefix}{mark.alternative}",
                         f"#pragma omp parallel for"
                         f"{self.private(mark.private + self.private_buffers(n, mark.alternative), mark.lastprivate)}"
                         f"{COLLAPSE if mark.alternative_collapse == 2 else ''}",
                         (), (), None), mark.alternative_per_thread)
        elif isinstance(mark, SimdMark) and self.ivdep:
            inner = (f"{self.prefix}{mark.depth}", f"#pragma omp simd{private}")
        elif isinstance(mark, IvdepMark) and self.ivdep:
            inner = (f"{self.prefix}{mark.depth}", "#pragma GCC ivdep", mark.order)
        self.node(n.mark_get_node(), indent, inner or pragma)

    def private_buffers(self, n: isl.AstNode, depth: int) -> tuple[str, ...]:
        """The tile buffers (poly/tilestore.py) that a parallel loop at schedule *depth* (marked by mark node
        *n*) makes private: those of statements inside it whose elements live within one of its iterations
        (the loop is one of the buffer's prefix). A parallel loop inside the prefix shares the buffer: its
        threads touch different elements of one iteration, stored in different cells, and the loop may be
        entered again within the iteration (a private copy would start uninitialized each time)."""
        if not self.buffers:
            return ()
        inside = set(statements_in(n.mark_get_node()))
        return tuple(b.name for b in self.buffers.values() if b.statements & inside and depth < b.depth)

    def scalars_outside(self, n: isl.AstNode, mark, buffers: tuple[str, ...]) -> bool:
        """Whether a statement under mark node *n* but outside the loops it marks (counter at the mark's
        depth) accesses one of the scalars the mark privatizes (or arrays, or its tile *buffers*). The
        privatization holds for the band's instances, all inside the loop in the schedule; isl's AST builder
        may still print some of them before or after the loop (a single first instance peeled off: the corner
        of a stencil whose `delta` a chain of branches assigns), whose value the loop's private copies would
        never see."""
        names = set(mark.private) | set(mark.lastprivate) | set(buffers)
        if isinstance(mark, ParallelMark):  # (the arrays it gives each thread a copy of)
            names |= set(mark.arrays)
        if not names:
            return False
        loops = {f"{self.prefix}{mark.depth}"}
        if isinstance(mark, ParallelMark) and mark.alternative is not None:
            loops.add(f"{self.prefix}{mark.alternative}")
        return any(not loops.intersection(around) and any(a.array in names for a in self.scop.statement(
            _statement_name(x)).accesses) for x, around in _statement_nodes(n.mark_get_node()))

    def peeled_first(self, n: isl.AstNode, mark: ParallelMark, buffers: tuple[str, ...]) -> tuple[str, ...] | None:
        """Where the statements under mark node *n* that sit outside its loop (scalars_outside) are all printed
        before it and touch only scalars the mark makes private (not lastprivate, arrays or buffers): the
        private scalars they write, which the loop takes as firstprivate. Privatization holds for the band's
        instances as scheduled, all inside the loop; isl printed a first one before it (hotspot's corner,
        which assigns the `delta` the first row reads), and each thread's copy starting from the value it left
        is what the first iteration reads; the others write before they read. None where such a statement
        comes after the loop or touches another name, or the mark has lastprivate scalars, private arrays or
        an alternative loop."""
        if mark.alternative is not None or mark.lastprivate or mark.arrays or buffers:
            return None
        loop, names = f"{self.prefix}{mark.depth}", set(mark.private)
        first: list[str] = []
        seen_loop = False
        for x, around in _statement_nodes(n.mark_get_node()):
            if loop in around:
                seen_loop = True
                continue
            accesses = self.scop.statement(_statement_name(x)).accesses
            if not any(a.array in names for a in accesses):
                continue
            if seen_loop:
                return None
            first += [a.array for a in accesses if a.is_write and a.array in names and a.array not in first]
        return tuple(first)

    def writes_every_iteration(self, loop: isl.AstNode, scalars: set[str]) -> bool:
        """Whether every iteration the generated *loop* runs writes each of *scalars*: a statement writing
        it sits in the loop's body outside any inner `if` or `for`. OpenMP's `lastprivate` takes the value
        of the loop's last iteration; isl may generate a loop whose range is wider than the statements'
        (a guard inside drops the extra iterations), so that the last iteration writes nothing and the
        thread's uninitialized private copy would be copied back."""
        if loop.get_type() != isl.ast_node_type.for_:
            return False
        written: set[str] = set()

        def walk(x: isl.AstNode) -> None:
            t = x.get_type()
            if t == isl.ast_node_type.block:
                for child in _list(x.block_get_children()):
                    walk(child)
            elif t == isl.ast_node_type.mark:
                walk(x.mark_get_node())
            elif t == isl.ast_node_type.user:
                st = self.scop.statement(x.user_get_expr().op_get_arg(0).id_get_id().get_name())
                written.update(a.array for a in st.must_writes)

        walk(loop.for_get_body())
        return scalars <= written

    def private(self, private: tuple[str, ...], lastprivate: tuple[str, ...]) -> str:
        """The OpenMP clauses of a parallel or simd mark: `private` for scalars dead after the loop,
        `lastprivate` for the others (their final value is the last iteration's). gcc does not vectorize
        an `omp simd` loop whose accumulator is lastprivate both there and in the enclosing parallel loop."""
        return "".join(f" {kind}({', '.join(names)})" for kind, names in (("private", private),
                                                                          ("lastprivate", lastprivate)) if names)

    def for_(self, n: isl.AstNode, indent: int, pragma: tuple[str, str] | None) -> None:
        it = self.expr(n.for_get_iterator())
        reentry = bool(self.counters) and self.counters[-1] == it  # the serial or parallel copy of a loop
        if not reentry:
            self.counters.append(it)
        try:
            omp = bool(pragma) and pragma[0] == it and pragma[1].startswith("#pragma omp")
            promoted = None if omp or self.replacing is not None else self.promotions(n, it)
            if not promoted:
                self.loop(n, indent, pragma)
                return
            # (scalar replacement, poly/promote.py) the loop runs at least once: its elements exist
            init, cond = (strip(self.expr(x)) for x in (n.for_get_init(), n.for_get_cond()))
            start = init if re.fullmatch(r"-?\w+", init) else f"({init})"
            first = re.sub(rf"\b{re.escape(it)}\b", start, cond)
            self.emit("{" if _holds(first) else f"if ({first}) {{", indent)
            for name, text, _ in promoted[0]:
                self.emit(f"__typeof__({text}) {name} = {text};", indent + 1)
            self.replacing = promoted[1]
            try:
                self.loop(n, indent + 1, pragma)
            finally:
                self.replacing = None
            for name, text, written in promoted[0]:
                if written:
                    self.emit(f"{text} = {name};", indent + 1)
            self.emit("}", indent)
        finally:
            if not reentry:
                self.counters.pop()

    def promotions(self, n: isl.AstNode, it: str):
        """The array elements the loop *n* (counter *it*) can keep in scalars (poly/promote.py): ([(scalar,
        element as printed, whether the loop writes it)], for each statement printed in the body the
        references to replace: {reference index: scalar}), or None. Only a loop whose body is statements
        (no inner loop or condition: each runs in every iteration) is considered."""
        calls: list[isl.AstExpr] = []
        rebases: list[dict] = []

        def flat(x: isl.AstNode) -> bool:
            t = x.get_type()
            if t == isl.ast_node_type.block:
                return all(flat(c) for c in _list(x.block_get_children()))
            if t == isl.ast_node_type.user:
                calls.append(x.user_get_expr())
                rebases.append(self.offsets_at(x))
                return True
            return t == isl.ast_node_type.mark and flat(x.mark_get_node())  # (a mark on no loop prints nothing)

        if not flat(n.for_get_body()) or not calls:
            return None
        occurrences, printed = [], []
        for call, rebase in zip(calls, rebases):
            st = self.scop.statement(call.op_get_arg(0).id_get_id().get_name())
            refs, bare = refs_of(st.body)
            iters = tuple(ast_text(call.op_get_arg(i + 1)) for i in range(call.op_get_n_arg() - 1))
            occurrences.append(Occurrence(st.name, iters, tuple(refs), frozenset(bare)))
            printed.append(refs_of(self.statement_body(call, rebase))[0])
        found = promotable(self.scop, occurrences, self.counters[:-1], it)
        scalars, replace = [], [dict() for _ in calls]
        for keys in (sorted(g) for array in sorted(found) for g in found[array]):
            k, r = keys[0]
            ref = printed[k][r]
            text = ref.array + "".join(f"[{s}]" for s in ref.subscripts)
            if re.search(rf"\b{re.escape(it)}\b", text):
                continue  # the element is printed with the loop's counter (cancelling): not outside the loop
            name = f"{self.prefix}_{self.scalars}"
            self.scalars += 1
            scalars.append((name, text, any(occurrences[k].refs[r].write for k, r in keys)))
            for k, r in keys:
                replace[k][r] = name
        return (scalars, replace) if scalars else None

    def statement_body(self, call: isl.AstExpr, rebase: dict | None = None):
        """The statement's C body with the AST's expressions for its iterators (as the base printer's), its
        elements of tile buffers relative to the tile (*rebase*: their offsets at this node, `offsets_at`)."""
        st = self.scop.statement(call.op_get_arg(0).id_get_id().get_name())
        args = [strip(self.expr(call.op_get_arg(i + 1))) for i in range(call.op_get_n_arg() - 1)]
        subst = dict(zip(st.iterators, (a if re.fullmatch(r"-?\w+", a) else f"({a})" for a in args)))
        subst.update(self.renamed)
        body = substitute(st.body, subst)
        for name, exprs in (rebase or {}).items():
            body = _rebased(body, name, [strip(self.expr(e)) for e in exprs],
                            next(a.lower for a in self.scop.scratch if a.name == name))
        return self.sliced(body)

    def sliced(self, body: c_ast.Node) -> c_ast.Node:
        """*body* (its names substituted) with each element of a thread-sliced array in the slice its loop
        picked (`slice_pointers`): the first subscript 0. UnfoldedSlice where no loop picked one."""
        if not self.slices:
            return body
        pointers = {self.renamed.get(name): name for name in self.slices}

        def visit(node: c_ast.Node) -> None:
            subs, base = [], node
            while isinstance(base, c_ast.ArrayRef):
                subs.append(base)
                base = base.name
            if subs and isinstance(base, c_ast.ID):
                if base.name in self.slices:
                    raise UnfoldedSlice(base.name)
                if base.name in pointers:
                    subs[-1].subscript = c_ast.Constant("int", "0")
                for ref in subs:
                    visit(ref.subscript)
                return
            for _, child in node.children():
                visit(child)

        visit(body)
        return body

    def slice_pointers(self, n: isl.AstNode, it: str, parallel_loop: bool, indent: int) -> dict[str, str]:
        """At the top of the outermost loop's body: for each thread-sliced array its statements there access,
        a pointer to the slice this iteration uses (the thread's, or the copied-back slot in the iteration
        whose slice holds the final value). Returns the renaming of the statement bodies."""
        if not self.slices or it != f"{self.prefix}0":
            return {}
        names = set(statements_in(n.for_get_body()))
        used = [a for a in self.slices.values()
                if any(x.array == a.name for st in self.scop.statements if st.name in names for x in st.accesses)]
        if not used:
            return {}
        slot = f"{self.prefix}_slot"
        if parallel_loop:
            self.threaded_slices = True
            self.emit("#ifdef _OPENMP", 0)
            self.emit("extern int omp_get_thread_num(void);", indent)
            self.emit(f"const {COUNTER_TYPE} {slot} = omp_get_thread_num();", indent)
            self.emit("#else", 0)
            self.emit(f"const {COUNTER_TYPE} {slot} = 0;", indent)
            self.emit("#endif", 0)
        else:
            self.emit(f"const {COUNTER_TYPE} {slot} = 0;", indent)
        out = {}
        for a in used:
            ptr = f"{self.prefix}_{a.name}_slice"
            at = slot if a.last is None else \
                f"{it} == ({strip(self.expr(param_expr(self.scop, a.last)))}) ? {a.name}_slots - 1 : {slot}"
            self.emit(f"__typeof__({a.name}[0]) *const {ptr} = {a.name} + ({at});", indent)
            out[a.name] = ptr
        return out

    def offsets_at(self, n: isl.AstNode) -> dict:
        """The offsets of the tile buffers that statement node *n* accesses (build_ast's annotation)."""
        if not self.offsets:
            return {}
        try:
            name = n.get_annotation().get_name()
        except isl.Error:
            return {}  # (no annotation)
        return self.offsets[int(name[len(self.prefix) + 3:])]

    def user_node(self, n: isl.AstNode, indent: int) -> None:
        self.rebase = self.offsets_at(n)
        try:
            self.user(n.user_get_expr(), indent)
        finally:
            self.rebase = {}

    def user(self, call: isl.AstExpr, indent: int) -> None:
        body = self.statement_body(call, self.rebase)
        if self.replacing is not None:
            body = replace_refs(body, self.replacing.pop(0))
        self.emit_statement(body, indent)

    def loop(self, n: isl.AstNode, indent: int, pragma: tuple[str, str] | None) -> None:
        """The loop *n* with the pragma an enclosing mark asks for."""
        it = self.expr(n.for_get_iterator())
        init, cond, inc = (strip(self.expr(x)) for x in (n.for_get_init(), n.for_get_cond(), n.for_get_inc()))
        step = f"{it}++" if inc == "1" else f"{it} += {inc}"
        close, base = 0, indent
        private_arrays: tuple[str, ...] = ()
        copies: list = []
        collapse_at = None  # the line of a pragma with COLLAPSE
        if pragma and pragma[0] == it and len(pragma) > 4:
            pragma, large = _with_if(pragma, it, init, cond)
            if large:
                # the parallel loop where its run is large enough, the same loop serially otherwise (OpenMP's
                # `if` clause still enters a serialized region: jacobi-1d's 1,000 of them cost 0.7 ms, 0.9 ms
                # with plain branches against gcc's 0.9 ms)
                if _per_thread(pragma):  # (the condition reads the thread count, which exists only under OpenMP)
                    self.emit("#ifdef _OPENMP", 0)
                    self.emit(f"extern int {THREADS}(void);", indent)
                    self.emit(f"if ({large}) {{", indent)
                    self.emit("#else", 0)
                    self.emit("if (1) {", indent)
                    self.emit("#endif", 0)
                else:
                    self.emit(f"if ({large}) {{", indent)
                self.for_(n, indent + 1, pragma[:4])
                self.emit("} else {", indent)
                self.for_(n, indent + 1, pragma[5] if len(pragma) > 5 else None)  # (a single tile: the
                # alternative loop inside runs in parallel, ParallelMark.alternative)
                self.emit("}", indent)
                return
        parallel_loop = bool(pragma) and pragma[0] == it and pragma[1].startswith("#pragma omp parallel")
        if pragma and pragma[0] == it:
            private_arrays = pragma[3] if len(pragma) > 3 else ()
            ivdep = pragma[1] == "#pragma GCC ivdep"
            unroll = ""
            if not ivdep or (_in_order(n.for_get_body(), pragma[2])
                             and not _distributable_beside(n.for_get_body(), self.scop)):
                bound = re.fullmatch(rf"{re.escape(it)} (<=|<) (.+)", cond) if ivdep else None
                if bound:
                    # gcc drops the annotation ("ignoring loop annotation") when the exit test is a
                    # conditional expression (c_min): compare with a bound computed before the loop
                    self.emit("{", indent)
                    self.emit(f"const {COUNTER_TYPE} {self.prefix}_ub = {bound.group(2)};", indent)
                    cond = f"{it} {bound.group(1)} {self.prefix}_ub"
                    close = 1
                    if _peeled_whole(init, bound.group(1), bound.group(2)):
                        # gcc peels a loop of at most 16 iterations completely before it vectorizes, and
                        # then vectorizes the loop around it across the copies, or not at all: 16 x 16
                        # matrix products (benchmarks/unseen/batched_gemm.c) ran 2.3x slower than the
                        # original. Kept a loop, it is vectorized along its own iterations, as wanted.
                        unroll = "#pragma GCC unroll 1"
                if "lastprivate(" in pragma[1]:
                    # OpenMP leaves a lastprivate variable unspecified after a loop that runs no iteration
                    # (gcc copies the uninitialized private copy back): enter the loop only when it runs.
                    first = re.sub(rf"\b{re.escape(it)}\b", f"({init})", cond)
                    self.emit("{" if _holds(first) else f"if ({first}) {{", indent)
                    close += 1
                    indent += 1
                copies = self.copies_at(it, private_arrays) if not ivdep else []
                if copies:
                    # one buffer per thread for each privatized array, allocated in the parallel region
                    self.emit("#pragma omp parallel", indent)
                    self.emit("{", indent)
                    close += 1
                    for c in copies:
                        rows = strip(self.expr(param_expr(self.scop, c.rows)))
                        buf = f"{self.prefix}_{c.name}_copy"
                        self.emit(f"__typeof__({c.name}[0]) *const {buf} = "
                                  f"__builtin_malloc(sizeof({c.name}[0]) * {_at_least_one(rows)});", indent)
                        self.emit(f"if (!{buf}) __builtin_abort();", indent)
                    self.emit(pragma[1].replace("omp parallel for", "omp for"), indent)
                else:
                    collapse_at = len(self.lines) if COLLAPSE in pragma[1] else None
                    self.emit(pragma[1], indent)
                if unroll:
                    self.emit(unroll, indent)
            pragma = None
        self.emit(f"for ({COUNTER_TYPE} {it} = {init}; {cond}; {step}) {{", indent)
        renamed = self.renamed
        if copies:
            self.renamed = {**renamed, **self.private_copies(it, copies, indent + 1)}
        sliced = self.slice_pointers(n, it, parallel_loop, indent + 1)
        if sliced:
            self.renamed = {**self.renamed, **sliced}
        self.in_parallel += parallel_loop
        self.node(n.for_get_body(), indent + 1, pragma)
        self.in_parallel -= parallel_loop
        self.renamed = renamed
        self.emit("}", indent)
        if collapse_at is not None:
            self.lines[collapse_at:] = _collapsed(self.lines[collapse_at:], it, init, cond, indent)
        for c in copies:
            self.emit(f"__builtin_free({self.prefix}_{c.name}_copy);", indent)
        for _ in range(close):
            indent -= 1 if indent > base else 0
            self.emit("}", indent)

    def copies_at(self, it: str, wanted: tuple[str, ...]) -> list:
        """The private copies (poly/privatize.py) of the loop with counter *it*, named in its mark."""
        depth = int(it[len(self.prefix):])
        return [c for c in self.tiled.private_arrays.get(depth, ()) if c.name in wanted] if self.tiled else []

    def private_copies(self, it: str, copies: list, indent: int) -> dict[str, str]:
        """In the parallel loop's body: a pointer to the thread's copy of each privatized array, or to the
        array itself in the loop's last iteration (which leaves the array as the sequential loop does).
        Returns the renaming of the statement bodies."""
        out = {}
        for c in copies:
            last = strip(self.expr(param_expr(self.scop, c.last)))
            ptr = f"{self.prefix}_{c.name}"
            self.emit(f"__typeof__({c.name}[0]) *const {ptr} = {it} == ({last}) ? {c.name} : {ptr}_copy;", indent)
            out[c.name] = ptr
        return out


def _rebased(body: c_ast.Node, name: str, offsets: list[str], lower: tuple) -> c_ast.Node:
    """*body* with each element of scratch array *name* stored in its tile buffer: subscript k, printed by
    expansion as `x - lower_k` (poly/expand.py `_element`), becomes `x - offset_k`."""
    def sub(x: c_ast.Node, k: int) -> c_ast.Node:
        lo = lower[k]
        lb = f"{name}_lb{k}"
        if isinstance(lo, int) and lo == 0:
            base = x
        elif isinstance(x, c_ast.BinaryOp) and (
                (x.op == "-" and isinstance(x.right, c_ast.ID) and x.right.name == lb)
                or (isinstance(lo, int) and isinstance(x.right, c_ast.Constant) and x.right.value == str(abs(lo))
                    and x.op == ("-" if lo > 0 else "+"))):
            base = x.left
        else:
            base = c_ast.BinaryOp("+", x, c_ast.ID(str(lo) if isinstance(lo, int) else lb))
        return c_ast.BinaryOp("-", base, c_ast.ID(f"({offsets[k]})"))

    def visit(node: c_ast.Node) -> c_ast.Node:
        subs, base = [], node
        while isinstance(base, c_ast.ArrayRef):
            subs.append(base)
            base = base.name
        if subs and isinstance(base, c_ast.ID) and base.name == name:
            for k, ref in enumerate(reversed(subs)):  # (outermost subscript first)
                ref.subscript = sub(visit(ref.subscript), k)
            return node
        for child_name, child in node.children():
            replace_child(node, child_name, visit(child))
        return node

    return visit(body)


COLLAPSE = " collapse(2)"
_FOR = re.compile(r"for \(\w+ (\w+) = (.*); (.*); (\w+)\+\+\) \{")


COLLAPSE_LEAST = 8  # iterations per thread of the outer loop under which the collapsed nest runs


def _collapsed(lines: list[str], it: str, init: str, cond: str, indent: int) -> list[str]:
    """A parallel loop printed with COLLAPSE (*lines*: its pragma, then the loop at *indent*): where the nest
    is a perfect pair (`_perfect_pair`), the collapsed loop where the outer loop has fewer than
    COLLAPSE_LEAST iterations per OpenMP thread at run time on more than one thread, the loop as it was
    otherwise: gcc recomputes what the inner loop's body derives from the outer counter at every inner
    iteration (im2col's channel arithmetic, 0.95x with 27 or more channels; on one thread, where collapsing
    buys nothing, matmul_llmc ran 0.88x and downsample 0.86x on the H100 machine's Xeon). The loop without
    the clause where the nest is not a pair."""
    plain = [lines[0].replace(COLLAPSE, ""), *lines[1:]]
    bound = re.fullmatch(rf"{re.escape(it)} (<=|<) (.+)", cond)
    if not _perfect_pair(lines[1:], it, indent, _next_counter(it)) or not bound:
        return plain
    trips = f"{_operand(bound.group(2))}{'' if init == '0' else f' - {_operand(init)}'}" \
        f"{' + 1' if bound.group(1) == '<=' else ''}"
    pad, more = "  " * indent, "  "
    return ["#ifdef _OPENMP", f"{pad}extern int omp_get_max_threads(void);",
            f"{pad}if (omp_get_max_threads() > 1 && {trips} < {COLLAPSE_LEAST} * omp_get_max_threads()) {{",
            *(more + x for x in lines), f"{pad}}} else", "#endif", f"{pad}{{", *(more + x for x in plain), f"{pad}}}"]


def _next_counter(it: str) -> str:
    """The counter of the schedule dimension after *it*'s (`c3` -> `c4`)."""
    stem = it.rstrip("0123456789")
    return f"{stem}{int(it[len(stem):]) + 1}"


def _perfect_pair(lines: list[str], it: str, indent: int, inner_it: str) -> bool:
    """Whether the printed loop *lines* (its `for` line to its closing brace, at *indent*) hold one loop and
    nothing else, the loop of counter *inner_it* (the member the mark found parallel: isl prints no loop for a
    member of one iteration, and the loop inside is then another member's), counting by one, whose bounds do
    not read the outer counter *it*, with a loop inside it:
    what OpenMP's collapse(2) needs (a rectangular, perfect nest; pragmas, blocks or statements between the
    two loops break it) and what it is for."""
    pad = "  " * (indent + 1)
    outer = _FOR.fullmatch(lines[0].strip()) if lines else None
    inner = _FOR.fullmatch(lines[1].strip()) if len(lines) > 1 and lines[1].startswith(pad + "for (") else None
    if outer is None or inner is None or outer.group(1) != it or inner.group(1) != inner_it:
        return False
    if re.search(rf"\b{re.escape(it)}\b", inner.group(2) + " " + inner.group(3)):
        return False
    at_level = [k for k, line in enumerate(lines[1:-1], 1) if line.startswith(pad) and not line.startswith(pad + " ")]
    return at_level == [1, len(lines) - 2] and lines[-2] == pad + "}" and any("for (" in x for x in lines[2:-2])


PEELED = range(8, 17)  # trip counts that gcc -O3 peels completely (max-completely-peel-times is 16) and that
# vectorize into at least two vectors of doubles of AVX2 (below 8 the vector loop would not gain much)


def _at_least_one(extent: str) -> str:
    """An allocation's extent, at least 1: a parametric extent is 0 or less for the parameter values where the
    region touches no element (n = 1 in random program 83098: `n - 2` rows, malloc of a negative size, then
    the abort on its null result), and the region still allocates before its loops."""
    if re.fullmatch(r"-?\d+", extent.strip()):
        return str(max(1, int(extent)))
    return f"(({extent}) > 0 ? ({extent}) : 1)"


_CONSTANT_TEST = re.compile(r"\(?\s*\(?(-?\d+)\)?\s*(<=|<|>=|>|==)\s*\(?(-?\d+)\)?\s*\)?")


def _holds(cond: str) -> bool:
    """Whether *cond* compares two integer constants and holds (a loop's first test where both its start
    and its bound are constants: `0 <= 15`), so that no guard need be printed."""
    m = _CONSTANT_TEST.fullmatch(cond.strip())
    if m is None:
        return False
    a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
    return {"<=": a <= b, "<": a < b, ">=": a >= b, ">": a > b, "==": a == b}[op]


def _peeled_whole(init: str, op: str, bound: str) -> bool:
    """Whether the loop from *init* while `op bound` has a constant trip count in PEELED: two integers, or the
    bound the start plus an integer (a full tile of 16 points)."""
    last = 0 if op == "<=" else -1
    try:
        trip = int(bound) - int(init) + 1 + last
    except ValueError:
        m = re.fullmatch(rf"\(?{re.escape(init)}\)? \+ (\d+)", strip(bound))
        if not m:
            return False
        trip = int(m.group(1)) + 1 + last
    return trip in PEELED


def _with_if(pragma: tuple, it: str, init: str, cond: str) -> tuple[tuple | None, str]:
    """(the pragma, the condition under which a run is large enough to be parallel: "" for always) of a
    parallel loop, so that a run of fewer than PARALLEL_WORK statement instances (poly/parallel.py; its
    trip count, from the AST's bounds, times the work of one iteration) stays serial. No condition where
    the work is unknown or every run is large enough, no pragma (None) where every run is too small (the
    bounds are constants). A loop with an alternative (ParallelMark.alternative) is parallel only where it
    runs two iterations or more, or, for an alternative per thread (ParallelMark.alternative_per_thread),
    ALTERNATIVE_LEAST iterations per OpenMP thread or more, or a multiple of the threads (the condition then
    calls THREADS)."""
    work = pragma[4]
    alternative = len(pragma) > 5 and pragma[5] is not None
    bound = re.fullmatch(rf"{re.escape(it)} (<=|<) (.+)", cond)
    if not bound or not (work or alternative):
        return pragma, ""
    least = -(-parallel_work() // work) if work else 0  # iterations of a run that pays for its parallel region
    if alternative:
        least = max(least, 2)  # one iteration (one tile) runs its alternative loop in parallel instead
    if least <= 1:
        return pragma, ""
    ub, inclusive = bound.group(2), bound.group(1) == "<="
    if re.fullmatch(r"-?\d+", init) and re.fullmatch(r"-?\d+", ub):
        return (pragma if int(ub) - int(init) + inclusive >= least else None), ""
    # the loop runs (ub - init + [<=]) iterations
    start = "" if init == "0" else f" - {_operand(init)}"
    large = f"{_operand(ub)}{start} >= {least - inclusive}"
    if _per_thread(pragma):
        # fewer iterations than threads leave threads idle, and a few more than them unequal shares (3
        # channels on 2 threads: one ran two): the alternative loop inside has the iterations to share. An
        # equal share stays outside (4 images of llm.c's batch on 4 threads: the loops inside, 0.74x)
        trips = f"{_operand(ub)}{start}{' + 1' if inclusive else ''}"
        large += f" && ({trips} >= {ALTERNATIVE_LEAST} * {THREADS}() || ({trips}) % {THREADS}() == 0)"
    return pragma, large


def _per_thread(pragma: tuple) -> bool:
    """Whether the loop's pragma has an alternative per thread (ParallelMark.alternative_per_thread)."""
    return len(pragma) > 6 and pragma[5] is not None and bool(pragma[6])


ALTERNATIVE_LEAST = 2  # iterations per thread of a loop with an alternative from which it runs in parallel
# (and where its iterations share equally among the threads), its alternative otherwise
THREADS = "omp_get_max_threads"


def _operand(x: str) -> str:
    """*x* as an operand of a subtraction: parenthesized unless it is a name, a number or one group."""
    if re.fullmatch(r"\w+", x):
        return x
    depth = 0
    for k, ch in enumerate(x):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and k < len(x) - 1:
            return f"({x})"
    return x if x.startswith("(") else f"({x})"


def _in_order(body: isl.AstNode, pairs: tuple) -> bool:
    """Whether, in the printed body of a loop, every statement *a* of a pair (a, b) comes before every b."""
    if not pairs:
        return True
    seen = statements_in(body)
    for a, b in pairs:
        first_b = min((k for k, s in enumerate(seen) if s == b), default=None)
        last_a = max((k for k, s in enumerate(seen) if s == a), default=None)
        if first_b is not None and last_a is not None and last_a > first_b:
            return False
    return True


def _distributable_beside(body: isl.AstNode, scop: Scop) -> bool:
    """Whether the loop's body has a statement that gcc's loop distribution may turn into a library call (it
    stores a value that reads no array, `x[i] = 0`, or copies one array element, `x[i] = y[i]`: memset and
    memcpy patterns at -O3) beside other accesses to its arrays in the same iteration (another statement, or
    another copy of it, as unroll-and-jam prints them). gcc 12 distributes such a loop under `#pragma GCC
    ivdep` into library calls and a loop in an order that breaks the dependences within one iteration: a jam of
    deriche's rows, with the expanded scalars' `ym1_x0[j] = 0` beside `ym1_x0[j] = y1[i][j]`, printed wrong
    values at -O3, right ones at -O2, without the pragma or with -fno-tree-loop-distribute-patterns. Such a
    loop gets no pragma: gcc then checks the overlaps at run time."""
    seen = statements_in(body)
    stmts = {st.name: st for st in scop.statements}
    touched: dict[str, list[str]] = {}  # array -> the statement occurrences that access it
    for name in seen:
        for array in {a.array for a in _array_accesses(stmts[name])}:
            touched.setdefault(array, []).append(name)
    return any(_library_pattern(stmts[name]) and any(len(touched[a.array]) > 1 for a in _array_accesses(stmts[name]))
               for name in set(seen))


def _array_accesses(st) -> list:
    return [a for a in st.accesses if a.relation.dim(isl.dim_type.out) > 0]


def _library_pattern(st) -> bool:
    """Whether the statement is `x[...] = c` (a constant or a scalar) or `x[...] = y[...]`: what gcc's loop
    distribution may replace by memset or memcpy."""
    b = st.body
    if not (isinstance(b, c_ast.Assignment) and b.op == "="):
        return False
    r = b.rvalue
    while isinstance(r, c_ast.Cast) or (isinstance(r, c_ast.UnaryOp) and r.op in ("-", "+")):
        r = r.expr
    arrays = _array_accesses(st)
    if sum(a.is_write for a in arrays) != 1:
        return False
    if isinstance(r, (c_ast.Constant, c_ast.ID)) and len(arrays) == 1:
        return True
    return isinstance(r, (c_ast.ArrayRef, c_ast.ID)) and len(arrays) == 2


def _statement_nodes(body: isl.AstNode, around: tuple[str, ...] = ()):
    """Each statement node of a printed loop body, in the order printed (each occurrence), with the counters
    of the for loops around it inside *body* (outermost first)."""
    t = body.get_type()
    if t == isl.ast_node_type.block:
        for child in _list(body.block_get_children()):
            yield from _statement_nodes(child, around)
    elif t == isl.ast_node_type.if_:
        yield from _statement_nodes(body.if_get_then_node(), around)
        if body.if_has_else_node():
            yield from _statement_nodes(body.if_get_else_node(), around)
    elif t == isl.ast_node_type.for_:
        yield from _statement_nodes(body.for_get_body(), around + (body.for_get_iterator().id_get_id().get_name(),))
    elif t == isl.ast_node_type.mark:
        yield from _statement_nodes(body.mark_get_node(), around)
    elif t == isl.ast_node_type.user:
        yield body, around


def _statement_name(n: isl.AstNode) -> str:
    return n.user_get_expr().op_get_arg(0).id_get_id().get_name()


def statements_in(body: isl.AstNode) -> list[str]:
    """The statements of a printed loop body, in the order they are printed (each occurrence)."""
    return [_statement_name(x) for x, _ in _statement_nodes(body)]


# isl quota of one region's AST build: a safety net against builds of a minute and more, not a budget (10-12 s
# on the dev box). PolyBench's 30 kernels and benchmarks/pluto at their default tiles take at most 3 million
# operations; fdtd-2d's point band (4 statements, skewed, `separate`) at unequal time tiles took 5-8 million
# (16x64x128, 5 s), 8-10 million (32x128x16, 11 s) and over 60 million (64x16x32, 67 s). Past the quota the
# point loops are not separated: built once, with guards (64x16x32: 1 s more), but such code can be much
# slower (16x64x128: 1.37x the separated code's time, 2 threads), so the quota stays above what those need.
AST_OPERATIONS = 10_000_000


def without_separation(schedule: isl.Schedule) -> isl.Schedule:
    """*schedule* with no band's `separate` option (nor an isolated part's): isl then builds each point loop
    once, its pieces behind guards, in a fraction of the operations."""
    drop = isl.UnionSet("{ separate[x]; [isolate[] -> separate[x]] }", context=CTX)

    def visit(node):
        if node.get_type() == isl.schedule_node_type.band:
            node = node.band_set_ast_build_options(node.band_get_ast_build_options().subtract(drop))
        for i in range(node.n_children()):
            node = visit(node.child(i)).parent()
        return node
    return visit(schedule.get_root()).get_schedule()


def build_ast(scop: Scop, tiled: TiledSchedule, prefix: str, scale_strides: bool = True,
              buffers: tuple[TileBuffer, ...] = (), offsets: list | None = None) -> isl.AstNode:
    """The isl AST of *tiled*'s schedule, iterators named *prefix*0, 1, ... *scale_strides* False keeps
    every loop's values those of the schedule (the GPU targets map loop values to thread and block ids:
    isl otherwise divides a loop whose values have a stride by it, per statement, so that two statements
    of one band would land on different threads). *buffers* (poly/tilestore.py): each statement node that
    accesses one is annotated with an id `prefix_tbK`, K indexing *offsets*, where K's entry is {buffer name:
    its offsets as AST expressions at that node}."""
    build = isl.AstBuild.from_context(scop.context)
    depth = _max_depth(tiled.schedule)
    ids = isl.IdList.alloc(CTX, depth)
    for k in range(depth):
        ids = ids.add(isl.Id(f"{prefix}{k}", context=CTX))
    build = build.set_iterators(ids)
    if buffers:
        def annotate(node: isl.AstNode, b: isl.AstBuild) -> isl.AstNode:
            # (an exception must not reach isl, which would go on with no node: None in *offsets* instead)
            name = node.user_get_expr().op_get_arg(0).id_get_id().get_name()
            try:
                here = {x.name: offset_exprs(x, b) for x in buffers if name in x.statements}
            except (isl.Error, ValueError, TypeError):
                offsets.append(None)
                return node
            if not here:
                return node
            offsets.append(here)
            return node.set_annotation(isl.Id(f"{prefix}_tb{len(offsets) - 1}", context=CTX))
        build, _keep = build.set_at_each_domain(annotate)  # (the handle keeps the callback alive)
    # A lastprivate scalar takes the value of the loop's last iteration, which must then run a statement.
    # isl drops a guard that inner loops' bounds make redundant (an `if (n >= 2)` around a loop whose body
    # is empty at n = 1), so that a generated loop may run iterations without statements: keep the guards.
    exact = any(isinstance(m, (ParallelMark, SimdMark)) and m.lastprivate for m in marks_of(tiled.schedule))
    with ISL_LOCK:  # the AST builder's options are the process's (islutil.ISL_LOCK)
        old = CTX.get_ast_build_exploit_nested_bounds()
        old_scale = CTX.get_ast_build_scale_strides()
        CTX.set_ast_build_exploit_nested_bounds(0 if exact else old)
        CTX.set_ast_build_scale_strides(old_scale if scale_strides else 0)
        try:
            schedule = with_work(tiled.schedule, scop.context)
            try:
                return bounded(lambda: build.node_from_schedule(schedule), AST_OPERATIONS)
            except isl.Error:
                # past the quota (or where isl fails on it): the same schedule, its point loops not separated
                plain = without_separation(schedule)
                return bounded(lambda: build.node_from_schedule(plain), AST_OPERATIONS)
        finally:
            CTX.set_ast_build_exploit_nested_bounds(old)
            CTX.set_ast_build_scale_strides(old_scale)


def _max_depth(schedule: isl.Schedule) -> int:
    m = schedule.get_map()
    out = [0]
    m.foreach_map(lambda x: out.append(x.dim(isl.dim_type.out)))
    return max(out) + 8


class _DumpPrinter(Printer):
    """Loops over every element a region writes, each handed to ``polytune_dump``."""

    generic = False  # (generate_dump's)

    def user(self, call: isl.AstExpr, indent: int) -> None:
        name = call.op_get_arg(0).id_get_id().get_name()
        array = next(a for a in self.scop.arrays if isl_name(a.name) == name)
        dims = [strip(self.expr(call.op_get_arg(i + 1))) for i in range(call.op_get_n_arg() - 1)]
        if array.layout is not None:  # a delinearized array: its C subscripts
            dims = array.layout.c_subscripts(dims)
        subs = "".join(f"[{d}]" for d in dims)
        x = f"{array.name}{subs}"
        if self.generic:  # (a pointer's value differs between runs: skipped)
            self.emit(f"_Generic(({x}), {ARITHMETIC}, default: polytune_skip)({x});", indent)
        else:
            self.emit(f"polytune_dump((double)({x}));", indent)


# C's arithmetic types, each of which a call to `polytune_dump(double)` converts: _Generic's associations
ARITHMETIC = ", ".join(f"{t}: polytune_dump" for t in (
    "_Bool", "char", "signed char", "unsigned char", "short", "unsigned short", "int", "unsigned int", "long",
    "unsigned long", "long long", "unsigned long long", "float", "double", "long double"))


def generate_dump(scop: Scop, indent: int = 1, avoid: frozenset[str] = frozenset(), generic: bool = False) -> str:
    """C code that feeds every element the region writes, in a fixed order, to ``polytune_dump``: not the
    scalars declared inside it (out of scope after it: box_blur's `sum`), nor those no code reads after it
    (frontend.dead_after: private to the optimized code's threads, their last values differ). *generic* (C, not
    C++): an element of no arithmetic type (a pointer: `conn[k] = store + k * n`) goes to ``polytune_skip``."""
    prefix = fresh_prefix(scop, avoid)
    written = scop.writes.range().intersect_params(scop.context)
    lines: list[str] = []
    gone = scop.local_names | scop.dead_after
    for s in sorted(sets_of(written), key=lambda x: x.get_tuple_name()):
        if s.get_tuple_name() in gone:
            continue
        n = s.dim(isl.dim_type.set)
        sched = isl.UnionMap(_identity_schedule(s))
        build = isl.AstBuild.from_context(scop.context)
        ids = isl.IdList.alloc(CTX, n)
        for k in range(n):
            ids = ids.add(isl.Id(f"{prefix}{k}", context=CTX))
        ast = build.set_iterators(ids).node_from_schedule_map(sched)
        p = _DumpPrinter(scop, prefix)
        p.generic = generic
        p.node(ast, indent + 1)
        lines += p.macro_defs() + p.lines + p.macro_undefs()
    return "\n".join(["  " * indent + "{"] + lines + ["  " * indent + "}"]) + "\n"


def _identity_schedule(s: isl.Set) -> isl.Map:
    """{ X[a, b] -> [a, b] } on the set *s*."""
    return isl.Map.identity(isl.Space.map_from_set(s.get_space())).intersect_domain(s) \
        .reset_tuple_id(isl.dim_type.out)


def generate_region(scop: Scop, tiled: TiledSchedule, parallel: bool = True, ivdep: bool = True,
                    indent: int = 1, avoid: frozenset[str] = frozenset(),
                    deps: isl.UnionMap | None = None, check: bool = True) -> str:
    """The C text that replaces the region (from '#pragma scop' to '#pragma endscop' inclusive). With
    *check*, isl's AST is read back first (poly/astcheck.py: every instance once, *deps* kept, parallel
    loops free of them); CodegenMismatch where it is not."""
    prefix = fresh_prefix(scop, avoid)
    # (the statements whose clamps a loop makes: poly/split.py; the parallel loops' work counted before, on the
    # statements as they are: over the copies' cells it took isl 13 s on a nest with divisions in its bounds; the
    # marks keep it, so build_ast does not count it again)
    if any(st.choices for st in scop.statements):
        tiled = replace(tiled, schedule=with_work(tiled.schedule, scop.context))
        split = split_choices(scop, tiled.schedule)
        if split is not None:
            scop, tiled = split.scop, replace(tiled, schedule=split.schedule)
            deps = None if deps is None else split.renamed(deps)
    buffers = tile_buffers(scop, tiled.schedule)
    slices = thread_slices(scop, tiled.schedule, buffers)
    offsets: list[dict | None] = []
    try:
        ast = build_ast(scop, tiled, prefix, buffers=buffers, offsets=offsets)
        if None in offsets:  # an offset isl could not print: the scratch arrays on the heap, as they were
            buffers, offsets = (), []
            ast = build_ast(scop, tiled, prefix)
    except isl.Error:
        raise UnsupportedError("isl's code generator failed on this region's schedule", scop.file,
                               scop.begin_line) from None
    if check:
        check_ast(ast, scop, deps, parallel, prefix)
    p = _OpenMPPrinter(scop, parallel, ivdep, prefix, tiled, buffers, offsets, slices)
    try:
        try:
            p.node(ast, indent + 1)
        except UnfoldedSlice:  # (an access outside the loop that picks the slices: whole arrays, as before)
            p = _OpenMPPrinter(scop, parallel, ivdep, prefix, tiled, buffers, offsets)
            p.node(ast, indent + 1)
    except RecursionError:
        raise UnsupportedError("an expression of the region is nested too deeply to print", scop.file,
                               scop.begin_line) from None
    body = p.lines
    head = ["  " * indent + "{"]
    head += ["  " * (indent + 1) + d for d in scop.hoisted_decls]
    alloc, free = scratch_lines(p, scop, p.buffers)
    head += ["  " * (indent + 1) + d for d in alloc + p.head]
    tail = ["  " * (indent + 1) + d for d in free]
    return "\n".join(head + p.macro_defs() + body + tail + p.macro_undefs() + ["  " * indent + "}"]) + "\n"


def thread_versions(parallel_code: str, serial_code: str, indent: int) -> str:
    """One region of two versions: *parallel_code* where OpenMP runs it on more than one thread, else
    *serial_code* (its tiles in their own order, without the wavefront that the parallel version's order is
    for: a wavefront visits tiles along diagonals, where a tile's rows do not follow the last tile's).
    Compiled without OpenMP, only the serial version is there; with OpenMP, the serial version is a parallel
    region of one thread (ONE_THREAD_REGION), so that the compiler outlines it into a function of its own as it
    does the parallel version."""
    i1 = "  " * (indent + 1)
    return "\n".join(["  " * indent + "{", "#ifdef _OPENMP", *(i1 + d for d in OMP_DECLARATIONS),
                      i1 + f"if ({MORE_THAN_ONE_THREAD})", parallel_code.rstrip("\n"), i1 + "else",
                      i1 + ONE_THREAD_REGION, "#endif", serial_code.rstrip("\n"), "  " * indent + "}"]) + "\n"


def wide_condition(scop: Scop, bands, prefix: str) -> str | None:
    """The C condition under which the wide tiles of *bands* (BandInfo.wide_tiles) leave an anti-diagonal a
    tile for every thread: every member has more values than its tile size times the threads less one. None
    where a member's number of values needs min or max to print (the wide tiles are then kept alone)."""
    p = Printer(scop, prefix)
    parts = []
    for b in bands:
        for span, size in b.wide_tiles:
            parts.append(f"({strip(p.expr(param_expr(scop, span)))}) > {size}L * (omp_get_max_threads() - 1)")
    return None if p.macro_defs() else " && ".join(parts)


def wide_or_narrow(condition: str, wide_code: str, narrow_code: str, indent: int) -> str:
    """The parallel code of a region with wide wavefront tiles where *condition* holds (enough of them on an
    anti-diagonal for the threads), else the same with tiles of 32 (pipeline._narrow_version)."""
    pad = "  " * indent
    return "\n".join([f"{pad}if ({condition}) {{", wide_code.rstrip("\n"), f"{pad}}} else {{",
                      narrow_code.rstrip("\n"), f"{pad}}}"]) + "\n"


# Whether a parallel loop at this point would run on more than one thread. omp_get_max_threads() alone is
# the team size asked for: with OMP_THREAD_LIMIT=1, or inside a parallel region where nesting is off, it
# says 2 or more while every parallel loop runs on one thread, and the wavefront version ran there.
OMP_DECLARATIONS = ("extern int omp_get_max_threads(void);", "extern int omp_get_thread_limit(void);",
                    "extern int omp_get_active_level(void);", "extern int omp_get_max_active_levels(void);")
MORE_THAN_ONE_THREAD = ("omp_get_max_threads() > 1 && omp_get_thread_limit() > 1 && "
                        "omp_get_active_level() < omp_get_max_active_levels()")
# The one-thread version of a region as a parallel region that the thread meeting it runs alone (if(0): no other
# thread joins): gcc and clang compile a parallel region's body as a function of its own, where the registers are
# the loop nest's alone. Left in its function (PolyBench's kernels are inlined into main), gcc 12 kept the
# diamond tiles' row pointers on the stack and reloaded them in the vector loop; outlined, jacobi-2d LARGE ran
# 1.43x faster at one thread, fdtd-2d 1.32x, heat-3d 1.15x (docs/DESIGN.md, "The one-thread version's own
# function"). Entering it costs what a parallel loop's entry costs at one thread (about 0.4 us), which the
# parallel version pays too.
ONE_THREAD_REGION = "#pragma omp parallel if(0)"


def scratch_lines(p: Printer, scop: Scop, buffers: dict) -> tuple[list[str], list[str]]:
    """The allocation (before the region's loops) and the release (after them) of the arrays that scalar
    expansion introduced (poly/expand.py): on the heap, since at LARGE sizes they exceed a thread's
    stack; rows as a pointer to a (variably modified) row type, so that the bodies index them as
    `s_x0[i][j]`; the element type is the scalar's own (`__typeof__`). Those in *buffers* (name -> TileBuffer,
    poly/tilestore.py) are one tile's elements on the stack instead."""
    alloc: list[str] = []
    free: list[str] = []
    for a in scop.scratch:
        dims = [strip(p.expr(param_expr(scop, e))) for e in a.extent]
        for k, lo in enumerate(a.lower):
            if not isinstance(lo, int):
                alloc.append(f"const {COUNTER_TYPE} {a.name}_lb{k} = {strip(p.expr(param_expr(scop, lo)))};")
        if a.name in buffers:  # one tile's elements, on the stack (private to each thread: `mark`)
            extents = "".join(f"[{e}]" for e in buffers[a.name].extents)
            alloc.append(f"__typeof__({a.element}) {a.name}{extents};")
            continue
        rows = "".join(f"[{_at_least_one(d)}]" for d in dims[1:])
        decl = f"(*const {a.name}){rows}" if rows else f"*const {a.name}"
        count = _at_least_one(dims[0])
        sliced = p.slices.get(a.name)
        if sliced is not None:  # one slice per thread, and one for the iteration copied back (poly/slices.py)
            extra = " + 1" if sliced.last is not None else ""
            if p.threaded_slices:
                alloc += ["#ifdef _OPENMP", "extern int omp_get_max_threads(void);",
                          f"const {COUNTER_TYPE} {a.name}_slots = omp_get_max_threads(){extra};", "#else",
                          f"const {COUNTER_TYPE} {a.name}_slots = 1{extra};", "#endif"]
            else:
                alloc.append(f"const {COUNTER_TYPE} {a.name}_slots = 1{extra};")
            count = f"{a.name}_slots"
        alloc += allocation(f"__typeof__({a.element}) {decl}", f"sizeof(*{a.name}) * {count}", a.name)
        if a.copied_back(scop.context):
            free += _copy_back(scop, a, p.prefix, sliced is not None)
        free.append(f"__builtin_free({a.name});")
    return alloc, free


class _CopyBackPrinter(Printer):
    """`scalar = array[...]` for the one element of a scratch array that holds the scalar's final value
    (`X[e] = array[...][e]` for each element of an expanded array X that holds X's final value)."""

    def __init__(self, scop: Scop, prefix: str, scratch, sliced: bool = False):
        super().__init__(scop, prefix)
        self.scratch = scratch
        self.sliced = sliced  # stored per thread: the element is in the last slot (poly/slices.py)

    def user(self, call: isl.AstExpr, indent: int) -> None:
        a = self.scratch
        xs = [strip(self.expr(call.op_get_arg(k + 1))) for k in range(call.op_get_n_arg() - 1)]
        subs = [x if isinstance(lo, int) and lo == 0 else
                f"({x}) - ({lo if isinstance(lo, int) else f'{a.name}_lb{k}'})"
                for k, (x, lo) in enumerate(zip(xs, a.lower))]
        if self.sliced:
            subs[0] = f"{a.name}_slots - 1"
        own = xs[len(xs) - a.ndim:]  # (an array's own subscripts, unshifted: the element of X it holds)
        self.emit(f"{a.scalar}{''.join(f'[{x}]' for x in own)} = {a.name}{''.join(f'[{x}]' for x in subs)};", indent)


def _copy_back(scop: Scop, a, prefix: str, sliced: bool = False) -> list[str]:
    """The copy of the scalar's final value from its scratch array (isl prints the condition under which
    the last write is one of the expanded statements', and the element's subscripts)."""
    n = a.last.dim(isl.dim_type.set)
    build = isl.AstBuild.from_context(scop.context)
    ids = isl.IdList.alloc(CTX, n)
    for k in range(n):
        ids = ids.add(isl.Id(f"{prefix}{k}", context=CTX))
    ast = build.set_iterators(ids).node_from_schedule_map(isl.UnionMap(_identity_schedule(a.last)))
    p = _CopyBackPrinter(scop, prefix, a, sliced)
    p.node(ast, 0)
    if p.used_macros:  # (defined before the region's loops only when they use them too)
        return ["{"] + p.macro_defs() + p.lines + p.macro_undefs() + ["}"]
    return p.lines
