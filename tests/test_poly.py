"""Dependences and schedules as isl objects (compared with .is_equal), and the legality check."""
from __future__ import annotations

import re

import islpy as isl
import pytest

from polytune.pipeline import analyze
from polytune.poly.schedule import IllegalSchedule, check_legal


def _prog(tmp_path, body: str, decl: str = "double A[100][100], B[100][100], C[100][100];"):
    p = tmp_path / "k.c"
    p.write_text(f"{decl}\nvoid f(int n) {{\n  int i, j, k, t;\n#pragma scop\n{body}\n#pragma endscop\n}}\n")
    return analyze(str(p)).scops[0]


def test_matmul_dependences(tmp_path):
    a = _prog(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++)\n"
                        "  C[i][j] += A[i][k] * B[k][j];")
    expected = isl.UnionMap("[n] -> { S0[i, j, k] -> S0[i, j, k + 1] : 0 <= i < n and 0 <= j < n and "
                            "0 <= k <= n - 2 }")
    assert a.deps.flow.is_equal(expected)
    assert a.deps.output.is_equal(expected)
    # The read of C[i][j] in instance k belongs to the instance that the output dependence already orders
    # before k + 1, so no direct anti dependence remains.
    assert a.deps.anti.is_empty()


def test_jacobi_1d_skewed_band_is_legal_and_tiled(tmp_path):
    a = _prog(tmp_path, "for (t = 0; t < n; t++) {\n for (i = 1; i < n - 1; i++) B[0][i] = A[0][i-1] + "
                        "A[0][i] + A[0][i+1];\n for (i = 1; i < n - 1; i++) A[0][i] = B[0][i]; }")
    ts = a.tiled((8, 8))
    band = ts.tunable_bands[0]
    assert band.members == 2 and band.tile_sizes == (8, 8)
    flow = a.deps.flow
    assert not flow.is_empty()
    check_legal(ts.schedule, a.deps, a.scop)


def test_illegal_schedule_is_rejected(tmp_path):
    a = _prog(tmp_path, "for (i = 1; i < n; i++) A[0][i] = A[0][i-1] + 1.0;")
    rev = isl.Schedule.from_domain(a.scop.domain).insert_partial_schedule(
        isl.MultiUnionPwAff("[n] -> [{ S0[i] -> [(-i)] }]"))
    with pytest.raises(IllegalSchedule):
        check_legal(rev, a.deps, a.scop)
    fwd = isl.Schedule.from_domain(a.scop.domain).insert_partial_schedule(
        isl.MultiUnionPwAff("[n] -> [{ S0[i] -> [(i)] }]"))
    check_legal(fwd, a.deps, a.scop)


def test_domain_and_access(tmp_path):
    a = _prog(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j <= i; j += 2) if (i + j > 3) "
                        "B[i][j/2] = A[n-1-i][j];")
    st = a.scop.statements[0]
    dom = isl.Set("[n] -> { S0[i, j] : 0 <= i < n and 0 <= j <= i and j mod 2 = 0 and i + j > 3 }")
    assert st.domain.is_equal(dom)
    w = st.writes[0].relation.intersect_domain(st.domain)
    assert w.is_equal(isl.Map("[n] -> { S0[i, j] -> B[i, j/2] }").intersect_domain(dom))


def test_parallel_loop_detection(tmp_path):
    a = _prog(tmp_path, "for (i = 1; i < n; i++) for (j = 0; j < n; j++) A[i][j] = A[i-1][j] + 1.0;")
    ts = a.tiled((4, 4))
    b = ts.bands[0]
    # i carries the dependence; j is parallel: the OpenMP loop must be the tile loop of j.
    assert b.parallel_loop is not None and b.parallel_loop.startswith("tile ")
    k = int(b.parallel_loop.split()[1])
    member = isl.MultiUnionPwAff(b.schedule).get_at(k)
    assert isl.UnionMap.from_union_pw_aff(member).intersect_domain(a.scop.domain).is_equal(
        isl.UnionMap("[n] -> { S0[i, j] -> [j] }").intersect_domain(a.scop.domain))


def _members(a, statement: str) -> list[set[str]]:
    """The iterators each band member of *statement* in the base schedule involves."""
    from polytune.poly.schedule import _bands
    st = next(x for x in a.scop.statements if x.name == statement)
    dom = st.domain
    names = [dom.get_dim_name(isl.dim_type.set, i) for i in range(dom.dim(isl.dim_type.set))]
    out: list[set[str]] = []
    for node in _bands(a.base.get_root()):
        mupa = node.band_get_partial_schedule()
        for k in range(node.band_n_member()):
            upa = mupa.get_at(k).intersect_domain(isl.UnionSet(dom))
            if upa.domain().is_empty():
                continue
            pa = upa.extract_pw_aff(dom.get_space().from_domain().add_dims(isl.dim_type.out, 1))
            out.append({names[i] for _s, aff in pa.get_pieces() for i in range(len(names))
                        if not aff.get_coefficient_val(isl.dim_type.in_, i).is_zero()})
    return out


def test_short_inner_loops_are_not_skewed_into_spatial_loops(tmp_path):
    # Two 3x3 sweeps per time step (depthwise.c): isl's Pluto-like scheduler fuses them with the member
    # `y + ky`; the short tap loop ky must stay a loop of its own.
    body = ("for (t = 0; t < 10; t++) {\n"
            " for (i = 0; i < 60; i++) for (j = 0; j < 60; j++) { B[i+1][j+1] = 0.0;\n"
            "  for (k = 0; k < 3; k++) B[i+1][j+1] += A[i+k][j+1]; }\n"
            " for (i = 0; i < 60; i++) for (j = 0; j < 60; j++) { A[i+1][j+1] = 0.0;\n"
            "  for (k = 0; k < 3; k++) A[i+1][j+1] += B[i+k][j+1]; } }")
    a = _prog(tmp_path, body)
    members = _members(a, "S1")
    assert {"k"} in members and not any({"i", "k"} <= m for m in members), members
    check_legal(a.tiled((4, 4, 4)).schedule, a.deps, a.scop)


def test_time_skewing_is_kept_with_few_time_steps(tmp_path):
    # The time loop is outside: skewing i by t is Pluto's time tiling, even when t has 3 iterations.
    a = _prog(tmp_path, "for (t = 0; t < 3; t++) {\n for (i = 1; i < 99; i++) B[0][i] = A[0][i-1] + "
                        "A[0][i] + A[0][i+1];\n for (i = 1; i < 99; i++) A[0][i] = B[0][i]; }")
    assert any({"t", "i"} <= m for m in _members(a, "S0"))


def test_loop_counters_are_64_bit(tmp_path):
    # gcc vectorizes `A[-2 * c4 + c7]` with contiguous loads only when the counters are 64-bit.
    from polytune.pipeline import OptimizeOptions, generate
    p = tmp_path / "k.c"
    p.write_text("double A[100];\nvoid f(int n) {\n  int i;\n#pragma scop\n"
                 "for (i = 0; i < n; i++) A[i] = A[i] * 2.0;\n#pragma endscop\n}\n")
    text = generate(analyze(str(p)), OptimizeOptions()).text
    assert "for (long " in text and "for (int c" not in text


def _c(tmp_path, body: str, decl: str = "void f(int n, double A[100][100], double B[100][100])") -> str:
    from polytune.pipeline import OptimizeOptions, generate
    p = tmp_path / "v.c"
    p.write_text(f"{decl} {{\n  int i, j, t;\n#pragma scop\n{body}\n#pragma endscop\n}}\n")
    return generate(analyze(str(p)), OptimizeOptions()).text


def test_ivdep_on_innermost_loops_whose_dependences_run_forward(tmp_path):
    # jacobi-2d: the fused inner loop carries B from the first statement (at j) to the second (at j + 1)
    jacobi = ("for (t = 0; t < n; t++) {\n"
              " for (i = 1; i < n - 1; i++) for (j = 1; j < n - 1; j++)\n"
              "  B[i][j] = 0.2 * (A[i][j] + A[i][j-1] + A[i][j+1] + A[i+1][j] + A[i-1][j]);\n"
              " for (i = 1; i < n - 1; i++) for (j = 1; j < n - 1; j++)\n"
              "  A[i][j] = 0.2 * (B[i][j] + B[i][j-1] + B[i][j+1] + B[i+1][j] + B[i-1][j]); }")
    text = _c(tmp_path, jacobi)
    lines = text.splitlines()
    marked = [lines[k + 1] for k, x in enumerate(lines) if "#pragma GCC ivdep" in x]
    assert marked and all(x.strip().startswith("for (long ") for x in marked)
    # a loop that carries a dependence from a statement to itself (a recurrence along j): no pragma
    assert "ivdep" not in _c(tmp_path, "for (i = 0; i < n; i++) for (j = 1; j < n; j++)\n"
                                       "  A[i][j] = A[i][j-1] * 0.5 + B[i][j];")


def test_no_ivdep_where_gcc_could_turn_a_store_of_the_body_into_memset_beside_other_accesses(tmp_path):
    # gcc 12 at -O3 distributes such a loop under `#pragma GCC ivdep` into memset/memcpy calls and a loop in an
    # order that broke the dependences within one iteration (a jam of deriche's rows printed wrong values)
    text = _c(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j < n; j++) {\n"
                        "  A[i][j] = 0.0;\n  A[i][j] = A[i][j] + B[i][j] * 2.0;\n}")
    lines = text.splitlines()
    for k, x in enumerate(lines):
        if x.strip() == "#pragma GCC ivdep":
            body = "\n".join(lines[k + 1:k + 6])
            assert "= 0.0;" not in body, text
    # the same update alone keeps the pragma, and a zeroing loop alone too (nothing else touches its array)
    assert "ivdep" in _c(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j < n; j++)\n"
                                   "  A[i][j] = A[i][j] + B[i][j] * 2.0;")
    assert "ivdep" in _c(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j < n; j++)\n  A[i][j] = 0.0;")


def test_a_vector_loop_of_8_to_16_iterations_is_kept_a_loop_for_gcc_to_vectorize(tmp_path):
    # gcc -O3 peels a loop of at most 16 iterations completely before vectorizing it, then vectorizes the
    # loop around the copies or nothing: 16 x 16 matrix products ran 2.3x slower than the original
    def pragmas(body: str) -> list[str]:
        lines = _c(tmp_path, body).splitlines()
        return [lines[k + 1].strip() for k, x in enumerate(lines) if x.strip() == "#pragma GCC ivdep"]
    update = "for (i = 0; i < n; i++) for (j = 0; j < {}; j++)\n  A[i][j] = A[i][j] + B[i][j] * 2.0;"
    assert pragmas(update.format(16)) == ["#pragma GCC unroll 1"]
    assert pragmas(update.format(9)) == ["#pragma GCC unroll 1"]
    for short_or_long in ("4", "17", "n"):  # too short to gain from vectors, not peeled, or not known
        assert pragmas(update.format(short_or_long)) and "#pragma GCC unroll 1" not in pragmas(
            update.format(short_or_long))


def test_the_trip_count_of_a_full_tile_of_16_points_is_read_from_its_bounds():
    from polytune.emit.c import _peeled_whole
    assert _peeled_whole("16 * c2", "<=", "((16 * c2) + 15)")
    assert _peeled_whole("0", "<", "16") and not _peeled_whole("0", "<", "17")
    assert not _peeled_whole("32 * c2", "<=", "((32 * c2) + 31)")
    assert not _peeled_whole("16 * c2", "<=", "c_min((n - 1), ((16 * c2) + 15))")


def test_ivdep_respects_the_printed_statement_order():
    from polytune.emit.c import _in_order

    class Node:  # the few isl AST calls _in_order makes, for a block of user statements
        def __init__(self, kind, names=()):
            self.kind, self.names = kind, names

        def get_type(self):
            return self.kind

    import polytune.emit.c as c
    block = Node(isl.ast_node_type.block, ("S1", "S0"))
    old = c._list
    try:
        c._list = lambda children: children
        block.block_get_children = lambda: [_user(n) for n in block.names]
        assert _in_order(block, (("S1", "S0"),)) and not _in_order(block, (("S0", "S1"),))
        assert _in_order(block, ())
    finally:
        c._list = old


def _user(name):
    class Id:
        def get_name(self):
            return name

    class Arg:
        def id_get_id(self):
            return Id()

    class Expr:
        def op_get_arg(self, k):
            return Arg()

    class User:
        def get_type(self):
            return isl.ast_node_type.user

        def user_get_expr(self):
            return Expr()
    return User()


def test_time_tiled_stencils_get_concurrent_start(tmp_path):
    # jacobi-1d: (t, 2t + i) would need a pipelined wavefront; the time member becomes the mirror of
    # the space member, 2t - i (+ 1 for the second statement), so all tiles of a time level can start
    a = _prog(tmp_path, "for (t = 0; t < n; t++) {\n for (i = 1; i < n - 1; i++) B[0][i] = A[0][i-1] + "
                        "A[0][i] + A[0][i+1];\n for (i = 1; i < n - 1; i++) A[0][i] = B[0][i]; }")
    ts = a.tiled((8, 8))
    band = ts.tunable_bands[0]
    assert band.wavefront and band.concurrent_start and "2t - i" in band.schedule, band.schedule
    # the mirror of S1's 1 + 2t + i is 2t - i - 1; S1 reads what S0 wrote at i - 1, i, i + 1 in the same
    # step, so the least constant that keeps those distances >= 0 shifts it by 2
    assert "S1[t, i] -> [(1 + 2t - i)]" in band.schedule
    check_legal(ts.schedule, a.deps, a.scop)
    # Gauss-Seidel (reads the new A[i-1] and the old A[i+1]): no constants make the mirror legal
    g = _prog(tmp_path, "for (t = 0; t < n; t++) for (i = 1; i < n - 1; i++)\n"
                        "  A[0][i] = (A[0][i-1] + A[0][i] + A[0][i+1]) / 3.0;")
    gs = g.tiled((8, 8))
    assert " - i" not in gs.tunable_bands[0].schedule and not gs.tunable_bands[0].concurrent_start
    check_legal(gs.schedule, g.deps, g.scop)


MATMUL = "for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++)\n  C[i][j] += A[i][k] * B[k][j];"


def test_unroll_and_jam_of_the_loop_that_leaves_an_access_in_place(tmp_path):
    # matmul tiled as any band (blocks=None: not packed as a contraction), point loops (i, k, j): C[i][j] does
    # not move along k, so k is unrolled by 4 and its copies run inside the j loop (they share C's load and
    # store); i would only share B's load
    a = _prog(tmp_path, MATMUL)
    ts = a.tiled((32, 32, 32), blocks=None)
    band = ts.tunable_bands[0]
    assert band.point_order == (0, 2, 1) and band.unroll_jam == (1, 4)
    check_legal(ts.schedule, a.deps, a.scop)
    # the factor divides the tile: 2 where 4 does not, none where neither does; 0 switches it off
    assert a.tiled((32, 32, 6), blocks=None).tunable_bands[0].unroll_jam == (1, 2)
    assert a.tiled((32, 32, 7), blocks=None).tunable_bands[0].unroll_jam is None
    assert a.tiled((32, 32, 32), unroll_jam=0, blocks=None).tunable_bands[0].unroll_jam is None
    assert a.tiled((32, 32, 32), tile=False, blocks=None).bands[0].unroll_jam is None
    # matrix-vector product: A streams through memory (it moves along every loop); the copies of a row share
    # only B[0][j]'s load, which no statement of the band writes: rows are jammed (4 rows of A in flight per
    # load of B; forced tiles of 8000 x 8000: 0.046 s against 0.050 s on the dev box)
    v = _prog(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j < n; j++)\n  C[0][i] += A[i][j] * B[0][j];")
    assert v.tiled((32, 32), blocks=None).tunable_bands[0].unroll_jam == (0, 4)
    # (where the band writes what the copies would share, they are not jammed: test_jam_order.py's floyd)


def test_unroll_and_jam_moves_the_most_reused_loop_inside_the_loop_whose_bounds_it_sets(tmp_path):
    # trmm, point loops (k, i, j): B[i][j] stays in place along k, but k bounds i (i < k), so its copies
    # would need the inner bounds per copy; in the order (i, k, j) only j is inside k, and k is unrolled:
    # its copies add into one B[i][j] (poly/point_order.py's jam_order), not i's, which share a B[k][j] load
    # (tiled, not blocked: trmm is a contraction, printed as packed blocks by default)
    a = _prog(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = i + 1; k < n; k++)\n"
                        "  B[i][j] += A[k][i] * B[k][j];")
    ts = a.tiled((32, 32, 32), blocks=None)
    band = ts.tunable_bands[0]
    k, i = (band.point_order.index(m) for m in (1, 2))  # members of the band (j, k, i): their point positions
    assert band.point_order == (2, 1, 0) and band.unroll_jam == (k, 4), (band, i)
    check_legal(ts.schedule, a.deps, a.scop)


def test_unroll_and_jam_code_and_results(tmp_path):
    from conftest import compile_run

    from polytune.pipeline import OptimizeOptions, generate
    from polytune.poly.contraction import Blocks
    src = tmp_path / "mm.c"
    src.write_text("#include <stdio.h>\n#define N 13\nstatic double A[N][N], B[N][N], C[N][N];\n"
                   "int main(void) {\n  int i, j, k;\n  for (i = 0; i < N; i++) for (j = 0; j < N; j++) {\n"
                   "    A[i][j] = (i * 3 + j) % 7 - 2.5; B[i][j] = (i + 5 * j) % 11 * 0.5; C[i][j] = i - j; }\n"
                   "#pragma scop\n  for (i = 0; i < N; i++) for (j = 0; j < N; j++) for (k = 0; k < N; k++)\n"
                   "    C[i][j] += A[i][k] * B[k][j];\n#pragma endscop\n"
                   "  for (i = 0; i < N; i++) for (j = 0; j < N; j++) printf(\"%.17g\\n\", C[i][j]);\n"
                   "  return 0;\n}\n")
    want = compile_run(str(src), str(tmp_path / "orig"), [], False)
    program = analyze(str(src))
    for sizes in ((8, 8, 8), (5, 4, 2), (32, 32, 32)):  # 13 = 3 * 4 + 1: a partial block behind guards
        text = generate(program, OptimizeOptions(tile_sizes=sizes, blocks=Blocks(on=False))).text  # tiled
        # the blocks of u copies (without guards: isolated), then the last k (13 = 3 * 4 + 1 = 6 * 2 + 1)
        u = {8: 4, 2: 2, 32: 4}[sizes[2]]
        copies = 2 if "collapse(2)" in text else 1  # (the collapsed nest and the plain one: tests/test_collapse.py)
        assert text.count("C[c3][c5] += ") == (u + 1) * copies, (sizes, text)
        # each copy's A[i][k] is loaded once before the innermost loop (scalar replacement, poly/promote.py)
        full = "\n".join(rf"C\[c3\]\[c5\] \+= (\w+) \* B\[\(\({u} \* c4\) \+ {r}\)\]\[c5\];" for r in range(1, u))
        found = re.search(full, "\n".join(x.strip() for x in text.splitlines()))
        assert u == 2 or found, (sizes, text)
        for r in range(1, u if u > 2 else 1):
            assert f"{found.group(r)} = A[c3][(({u} * c4) + {r})];" in text, (sizes, text)
        out = tmp_path / "opt.c"
        out.write_text(text)
        assert compile_run(str(out), str(tmp_path / "opt"), [], True) == want, sizes
    from polytune.cli import main
    off = tmp_path / "off.c"
    assert main(["optimize", str(src), "--unroll-jam", "0", "--blocks", "off", "--tile-sizes", "8,8,8", "-o",
                 str(off)]) == 0
    text = off.read_text()
    assert text.count("C[c3][c5] += ") == (2 if "collapse(2)" in text else 1)
    assert main(["optimize", str(src), "--unroll-jam", "-1", "-o", str(tmp_path / "bad.c")]) == 2
    assert not (tmp_path / "bad.c").exists()


def test_short_point_loops_go_inside_the_strided_one():
    """depthwise's band (y, x, ky): x has the stride-1 accesses, ky three iterations. The point loops are
    y, x, ky: the taps of one output element add up in a register (gcc unrolls them) while x is
    vectorized; with x innermost every tap row re-read and re-wrote the output row (1.6x slower)."""
    import os

    from conftest import KERNELS
    p = analyze(os.path.join(KERNELS, "depthwise.c"), defines=("N=40", "NC=3", "TSTEPS=3"))
    ts = p.scops[0].tiled(())
    taps = [b for b in ts.tunable_bands if b.members == 3]
    assert taps and all(b.extents[2] == 3 and b.point_order == (0, 1, 2) for b in taps), ts.bands
    assert all(b.unroll_jam is None for b in taps)
    check_legal(ts.schedule, p.scops[0].deps, p.scops[0].scop)


def test_a_time_loop_of_one_tile_does_not_stand_for_the_parallel_loop(tmp_path):
    # blur's 5 time steps in tiles of 32: the time tile loop has one iteration, so it carries nothing and
    # looked parallel, and the band ran serially; the wavefront (or concurrent start) goes over the two
    # longer tile loops instead, and one of them carries the OpenMP loop
    body = ("for (t = 0; t < 5; t++) {\n"
            " for (i = 0; i < 100; i++) for (j = 1; j < 99; j++) B[i][j] = (A[i][j-1] + A[i][j] + A[i][j+1]) / 3.0;\n"
            " for (i = 1; i < 99; i++) for (j = 1; j < 99; j++) A[i][j] = (B[i-1][j] + B[i][j] + B[i+1][j]) / 3.0; }")
    a = _prog(tmp_path, body)
    ts = a.tiled((32, 32, 32), schedule="pluto")
    band = ts.bands[0]
    assert band.tiled and band.wavefront and band.parallel_loop not in (None, "tile 0"), band
    check_legal(ts.schedule, a.deps, a.scop)
