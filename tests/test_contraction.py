"""Contraction bands (poly/contraction.py) and their packed, blocked code (emit/blis.py): which statements are
contractions and which are not, and the generated code's output identical to the original's under odd sizes,
sizes smaller than a block, transposed operands, triangular bounds, every block choice, 1, 2 and 4 threads."""
from __future__ import annotations

import os
import re
import subprocess

import pytest
from conftest import ROOT
from progen import contraction_program

from polytune.cli import main
from polytune.emit.blis import fitted_rows, micro_tile
from polytune.errors import UsageError
from polytune.machine import vector_registers
from polytune.pipeline import OptimizeOptions, analyze, generate
from polytune.poly.contraction import Blocks, isolate, parse_blocks, recognize
from polytune.poly.schedule import compute_base_schedule

POLYBENCH = os.path.join(ROOT, "tests", "data", "polybench")
HEAD = ("#define N 40\ndouble A[N][N], B[N][N], C[N][N], D[N][N], E[N][N][N], alpha;\n"
        "void f(int n) {\n  int i, j, k, l, t;\n")


def _region(tmp_path, body: str) -> str:
    path = tmp_path / "k.c"
    path.write_text(HEAD + "#pragma scop\n" + body + "\n#pragma endscop\n}\n")
    return str(path)


def _contractions(path: str) -> dict[str, object]:
    a = analyze(path).scops[0].cpu
    return {st.name: recognize(a.scop, st, a.deps) for st in a.scop.statements}


def _isolated(path: str) -> list[str]:
    a = analyze(path).scops[0].cpu
    _, found = isolate(a.base, a.scop, a.deps)
    return [c.statement for c in found]


def test_gemm_is_a_contraction_with_alpha_packed_with_its_operand(tmp_path):
    path = _region(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j < n; j++) {\n C[i][j] *= 0.5;\n"
                             " for (k = 0; k < n; k++) C[i][j] += alpha * A[i][k] * B[k][j]; }")
    c = _contractions(path)["S1"]
    assert (c.i, c.j, c.k, c.outer, c.op) == ("i", "j", "k", (), "+")
    assert [(o.side, o.text) for o in c.operands] == [("a", "alpha * A[i][k]"), ("b", "B[k][j]")]
    assert c.unit_columns and _contractions(path)["S0"] is None
    assert _isolated(path) == ["S1"]  # split from the beta scaling before it


def test_transposed_operands_and_result_are_contractions(tmp_path):
    path = _region(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++)\n"
                             "  C[j][i] = C[j][i] + A[k][i] * B[j][k];")
    c = _contractions(path)["S0"]
    assert c is not None and c.j == "i" and c.i == "j"  # the vectors run along C's contiguous subscript


def test_a_tensor_contraction_keeps_its_extra_free_loop_outside(tmp_path):
    path = _region(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (l = 0; l < n; l++)\n"
                             " for (k = 0; k < n; k++) E[i][j][l] += A[i][k] * E[k][j][l];")
    assert _contractions(path)["S0"] is None  # (E is both W and an operand)
    path = _region(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (l = 0; l < n; l++)\n"
                             " for (k = 0; k < n; k++) E[i][j][l] += D[i][k] * A[k][l];")
    c = _contractions(path)["S0"]
    assert c.outer == ("j",) and (c.i, c.j, c.k) == ("i", "l", "k")


def test_a_second_product_of_the_same_shape_is_one_contraction(tmp_path):
    path = _region(tmp_path, "for (i = 0; i < n; i++) for (k = 0; k < n; k++) for (j = 0; j <= i; j++)\n"
                             " C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];")
    c = _contractions(path)["S0"]
    assert c.core.count("*") == 2 and len(c.a_operands) == len(c.b_operands) == 2


@pytest.mark.parametrize("body,why", [
    ("for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++)\n"
     " C[i][j] += A[i][k] * B[k][j] * D[i][j];", "an extra read of an element of both rows and columns"),
    ("for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++) for (l = 0; l < n; l++)\n"
     " C[i][j] += E[i][k][l] * E[k][l][j];", "two reduction loops"),
    ("for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < i; k++)\n"
     " C[i][j] += A[k][i] * C[k][j];", "an operand reads rows of the result already updated (k < i)"),
    ("for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++)\n"
     " C[i][j] += A[i][k] * C[i][j];", "an operand reads the element the sum is building"),
    ("for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = i + 1; k < n; k++)\n"
     " C[i][j] += A[k][i] * C[k][j] * C[j][k];", "an operand reads the result's rows of columns j (k > i "
                                                  "does not keep them unwritten)"),
    ("for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++)\n"
     " C[i][j] += A[i][k] * B[k][j + i];", "an operand reads both the rows and the columns"),
    ("for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < i + j; k++)\n"
     " C[i][j] += A[i][k] * B[k][j];", "k's bound involves both the rows and the columns"),
    ("for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = n - 1; k >= 0; k--)\n"
     " C[i][j] += A[i][k] * B[k][j];", "k runs backwards: blocks of k in order would change each sum's order"),
    ("for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++)\n"
     " C[i][j] = A[i][k] * B[k][j];", "no accumulation"),
    ("for (i = 0; i < n; i++) for (j = 0; j < n; j++) for (k = 0; k < n; k++)\n"
     " C[i][j] += A[i][k] / B[k][j];", "the core is not a product"),
])
def test_statements_that_are_not_contractions(tmp_path, body, why):
    assert _contractions(_region(tmp_path, body))["S0"] is None, why


def test_a_contraction_whose_rows_feed_its_next_rows_is_not_split_out(tmp_path):
    """The outermost band holding the product also holds the statement that writes the next row of A from
    this row's result: the split would run all products first, which a dependence forbids, so it is not
    made. (In a time loop the product is no contraction at all: t sums into C too.)"""
    path = _region(tmp_path, "for (i = 0; i < n - 1; i++) {\n for (j = 0; j < n; j++)\n"
                             "  for (k = 0; k < n; k++) C[i][j] += A[i][k] * B[k][j];\n"
                             " for (k = 0; k < n; k++) A[i + 1][k] = C[i][k] * 0.5; }")
    assert _contractions(path)["S0"] is not None
    assert _isolated(path) == []
    timed = _region(tmp_path, "for (t = 0; t < 4; t++) for (i = 0; i < n; i++) for (j = 0; j < n; j++)\n"
                              "  for (k = 0; k < n; k++) C[i][j] += A[i][k] * B[k][j];")
    assert _contractions(timed)["S0"] is None


def test_trmm_packs_the_results_rows_below_from_the_array_itself(tmp_path):
    """trmm's B[k][j] (k > i) is read before its row is updated (at the steps k' > k): a contraction whose
    packed code packs those rows from the array itself, each k block before the block's writes and after
    the earlier blocks' (no snapshot of the array); symm's k < i triangle and its expanded temp2 are
    contractions too."""
    path = _region(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j < n; j++) {\n"
                             " for (k = i + 1; k < n; k++) C[i][j] += A[k][i] * C[k][j];\n C[i][j] *= alpha; }")
    c = _contractions(path)["S0"]
    assert c is not None and [o.text for o in c.b_operands] == ["C[k][j]"] and c.in_place
    assert _isolated(path) == ["S0"]
    for options in (OptimizeOptions(), OptimizeOptions(parallel=False)):
        text = generate(analyze(path), options).text
        assert "c_S" not in text and "= C[(c_pc + c_pp)][(c_jc + c_jr + c_cc)];" in text


def test_an_operand_reading_a_column_the_product_writes_earlier_reads_a_snapshot(tmp_path):
    """B[k][j - 1] beside B[i][j] += (tests/data/left_column.c): the element is written at column j - 1, in
    the block of columns before the one whose packing reads it where j starts a block: packed from the
    array, it would hold the updated value. A snapshot of the rows, taken before the product, holds the
    original's (every block choice)."""
    src = os.path.join(ROOT, "tests", "data", "left_column.c")
    sizes = ["-DM=23", "-DN=23"]
    want = _build_run(src, str(tmp_path / "orig"), ["-O1", *sizes], (1,))[0]
    for blocks in ("mr=2,nv=1,kc=3,mc=4,nc=4", "mr=4,nv=1,kc=5,mc=8,nc=8,pack_a=0"):
        out = tmp_path / "opt.c"
        assert main(["optimize", src, *sizes, "-o", str(out), "--blocks", blocks, "-q"]) == 0
        text = out.read_text()
        assert "packed blocks" in text and "__builtin_memcpy(&c_S[c_rr], &B[c_rr], sizeof(B[0]))" in text
        got = _build_run(str(out), str(tmp_path / "opt"), ["-O1", "-fopenmp", *sizes], (1, 2, 3))
        assert got == [want] * 3, blocks


def test_polybench_contractions_are_those_of_the_blas_shaped_kernels():
    found = {}
    for name in ("2mm", "3mm", "syrk", "syr2k", "covariance", "correlation", "trmm", "symm", "atax", "gramschmidt"):
        a = analyze(os.path.join(POLYBENCH, name + ".c")).scops[0].cpu
        found[name] = len(isolate(a.base, a.scop, a.deps)[1])
    assert found == {"2mm": 2, "3mm": 3, "syrk": 1, "syr2k": 1, "covariance": 1, "correlation": 1, "trmm": 1,
                     "symm": 2, "atax": 0, "gramschmidt": 0}


def test_the_micro_tile_follows_low_et_al():
    assert micro_tile(16, 1, 4) == (6, 2)  # AVX2, one 256-bit FMA per cycle (Zen 1): 6 x 8 doubles
    assert micro_tile(32, 2, 8) == (14, 2)  # AVX-512, two FMA units: BLIS's 14 x 16 (skx)
    mr, nv = micro_tile(16, 2, 4)
    assert mr * nv + nv + 1 <= 16 and mr * nv * 4 >= 4 * 5 * 2


def test_the_models_rows_leave_registers_for_every_operand_of_the_product():
    assert fitted_rows(14, 2, 1, 1, 32) == 14  # gemm: 28 accumulators, 2 vectors of B, a broadcast
    assert fitted_rows(14, 2, 2, 2, 32) == 13  # syr2k's two products: 4 vectors of B, two broadcasts
    assert fitted_rows(6, 2, 2, 2, 16) == 5 and fitted_rows(6, 2, 1, 1, 16) == 6
    text = generate(analyze(os.path.join(POLYBENCH, "syr2k.c")), OptimizeOptions()).text
    mr, nv = int(re.search(r"_MR = (\d+)", text).group(1)), int(re.search(r"_NR = (\d+) \*", text).group(1))
    assert mr * nv + 2 * nv + 2 <= vector_registers() and mr == fitted_rows(micro_tile()[0], nv, 2, 2)
    text = generate(analyze(os.path.join(POLYBENCH, "syr2k.c")), OptimizeOptions(blocks=parse_blocks("mr=14"))).text
    assert "_MR = 14," in text  # (rows given: kept)


def test_blocks_parse_and_off_leaves_the_band_to_the_tiler():
    assert parse_blocks("mr=4,nv=3,kc=64,pack_a=0") == Blocks(True, 4, 3, 64, 0, 0, False)
    prog = analyze(os.path.join(POLYBENCH, "syrk.c"))
    on = generate(prog, OptimizeOptions()).text
    off = generate(prog, OptimizeOptions(blocks=Blocks(on=False))).text
    assert "packed blocks" in on and "packed blocks" not in off


# ---- the generated code ------------------------------------------------------------------------------------
BLOCKS = ["", "mr=4,nv=1,kc=3,mc=5,nc=9", "mr=8,nv=3,kc=7,mc=16,nc=24,pack_a=0", "mr=6,nv=2,kc=1,mc=1,nc=1",
          "mr=1,nv=1,kc=256,mc=384,nc=4096", "off"]
SEEDS = range(24)  # (12-23: more of k's triangles, symm and trmm's shapes)


def _build_run(src: str, exe: str, flags: list[str], threads: tuple[int, ...]) -> list[str]:
    subprocess.run(["gcc", *flags, src, "-o", exe, "-lm"], check=True, capture_output=True, text=True, timeout=120)
    return [subprocess.run([exe], check=True, capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, OMP_NUM_THREADS=str(t))).stdout for t in threads]


@pytest.mark.parametrize("seed", SEEDS)
def test_random_contraction_prints_what_the_original_prints(tmp_path, seed):
    """Each random contraction (tests/progen.py contraction_program) under two block choices of the grid in
    turn, at 1, 2 and 4 threads: every element identical (each keeps its operations and their order)."""
    prog = contraction_program(seed)
    src = tmp_path / "k.c"
    src.write_text(prog.source)
    want = _build_run(str(src), str(tmp_path / "orig"), ["-O1"], (1,))[0]
    for blocks in (BLOCKS[seed % len(BLOCKS)], BLOCKS[(seed + 3) % len(BLOCKS)]):
        out = tmp_path / "opt.c"
        assert main(["optimize", str(src), "-o", str(out), *(["--blocks", blocks] if blocks else [])]) == 0
        text = out.read_text()
        assert ("packed blocks" in text) == (blocks != "off"), prog.summary
        for threads, got in zip((1, 2, 4), _build_run(str(out), str(tmp_path / "opt"), ["-O1", "-fopenmp"],
                                                      (1, 2, 4))):
            assert got == want, (prog.summary, blocks, threads)


@pytest.mark.parametrize("kernel", ["gemm_odd", "gemm_tt", "batched_small_gemm", "int_matmul"])
def test_fma_contraction_keeps_the_original_results(tmp_path, kernel):
    """-O3 -march=native (gcc contracts `c + a * b` into an FMA in both programs, the same way): the packed
    code's output is the original's, at sizes smaller than a block and odd ones."""
    src = os.path.join(ROOT, "benchmarks", "unseen", kernel + ".c")
    sizes = ["-DM=7", "-DN=13", "-DK=29", "-DNB=3"]
    want = _build_run(src, str(tmp_path / "orig"), ["-O3", "-march=native", *sizes], (1,))[0]
    out = tmp_path / "opt.c"
    assert main(["optimize", src, *sizes, "-o", str(out)]) == 0
    assert "packed blocks" in out.read_text()
    got = _build_run(str(out), str(tmp_path / "opt"), ["-O3", "-march=native", "-fopenmp", *sizes], (1, 2))
    assert [g.split("checksum")[1] for g in got] == [want.split("checksum")[1]] * 2


@pytest.mark.parametrize("kernel", ["trmm", "symm", "syrk", "syr2k"])
def test_the_packed_code_of_a_triangle_declares_nothing_it_does_not_use(tmp_path, kernel):
    """-Wall -Wextra: no warning names a variable of the packed code (its c_ names; the threads' shares of a
    triangle, the weights of its pairs, declare only what they read). The original's loop counters, no
    longer used by the loops that replace them, are the user's own declarations."""
    out = tmp_path / "k.c"
    assert main(["optimize", os.path.join(POLYBENCH, kernel + ".c"), "-o", str(out)]) == 0
    assert "c_ord" in out.read_text()
    r = subprocess.run(["gcc", "-O2", "-fopenmp", "-Wall", "-Wextra", "-c", str(out), "-o", str(tmp_path / "k.o")],
                       check=True, capture_output=True, text=True, timeout=120)
    assert not re.findall(r"warning: .*\bc_\w+", r.stderr), r.stderr


@pytest.mark.parametrize("kernel", ["trmm", "symm"])
def test_the_steps_where_some_rows_of_a_tile_leave_k_s_triangle_stay_in_the_registers(tmp_path, kernel):
    """symm's k < i, trmm's k > i: at a tile's diagonal steps only some of its rows are inside. Those rows
    update their registers under a test of their own row (one per row and step), instead of the whole tile
    stored and updated element by element in memory (a scalar loop per row and step: 13 steps x 14 rows
    of each diagonal tile with AVX-512)."""
    out = tmp_path / "k.c"
    assert main(["optimize", os.path.join(POLYBENCH, kernel + ".c"), "-o", str(out)]) == 0
    text = out.read_text()
    assert "for (long c_pp = c_kalo; c_pp < c_klo; c_pp++)" in text
    assert re.search(r"if \(-?\(c_I \+ 1\) \+ -?\(c_pc \+ c_pp\) ", text)  # row 1's own test
    assert not re.search(r"c_cp\[c_rr \* c_rs \+ c_cc\] = c_cp\[", text)


def test_the_base_schedule_is_left_for_the_tiler_without_blocks():
    a = analyze(os.path.join(POLYBENCH, "2mm.c")).scops[0].cpu
    base = compute_base_schedule(a.scop, a.deps)
    assert isolate(base, a.scop, a.deps, wanted=lambda *_: False)[1] == ()


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(24, 200))
def test_random_contraction_prints_what_the_original_prints_slow(tmp_path, seed):
    test_random_contraction_prints_what_the_original_prints(tmp_path, seed)


SIZED_GEMM = r"""#include <stdio.h>
#include <stdlib.h>
static void gemm(int n, double alpha, double C[n][n], double A[n][n], double B[n][n]) {
#pragma scop
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        C[i][j] += alpha * A[i][k] * B[k][j];
#pragma endscop
}
int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  double (*A)[n] = malloc(sizeof(double) * n * n), (*B)[n] = malloc(sizeof(double) * n * n);
  double (*C)[n] = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) { A[i][j] = (i * 7 + j) % 5 - 2; B[i][j] = (i + 3 * j) % 7 * 0.5; C[i][j] = i - j; }
  gemm(n, 1.5, C, A, B);
  double s = 0;
  for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) s += C[i][j] * ((i + 2 * j) % 3 + 1);
  printf("%.17g\n", s);
  return 0;
}
"""


def test_a_small_product_runs_the_loops_and_a_large_one_the_packed_blocks(tmp_path, monkeypatch):
    """At run time, products under PACK_WORK (64^3) take the loops under the mark, in the order (i, k, j); the
    others the packed blocks: both print what the original prints (run-time sizes 1 to 70)."""
    monkeypatch.delenv("POLYTUNE_PACK_WORK", raising=False)
    src, out = tmp_path / "g.c", tmp_path / "g.opt.c"
    src.write_text(SIZED_GEMM)
    assert main(["optimize", str(src), "-o", str(out)]) == 0
    text = out.read_text()
    assert ">= 262144L" in text and "packed blocks" in text
    for exe, path, flags in (("ref", src, []), ("opt", out, ["-fopenmp"])):
        subprocess.run(["gcc", "-O2", *flags, str(path), "-o", str(tmp_path / exe)], check=True)
    for n in ("1", "5", "63", "64", "70"):
        want = subprocess.run([str(tmp_path / "ref"), n], capture_output=True, text=True, check=True).stdout
        for threads in ("1", "2"):
            got = subprocess.run([str(tmp_path / "opt"), n], capture_output=True, text=True, check=True,
                                 env=dict(os.environ, OMP_NUM_THREADS=threads)).stdout
            assert got == want, (n, threads)


def test_the_machine_the_code_is_for_can_be_named_by_its_cpu_flags(tmp_path, monkeypatch):
    from polytune import machine
    monkeypatch.setenv("POLYTUNE_CPU_FLAGS", "avx512f avx2 avx fma")
    machine.cpu_flags.cache_clear()
    try:
        assert (machine.vector_bytes(), machine.vector_registers(), machine.fma_units()) == (64, 32, 2)
        assert micro_tile() == (14, 2)  # AVX-512's 14 x 16 doubles, whatever this machine has
        src = tmp_path / "g.c"
        src.write_text(open(os.path.join(ROOT, "benchmarks", "pluto", "gemm.c")).read())
        out = tmp_path / "g.opt.c"
        assert main(["optimize", str(src), "-o", str(out), "-q"]) == 0
        assert "vector_size(64)" in out.read_text()
    finally:
        monkeypatch.delenv("POLYTUNE_CPU_FLAGS")
        machine.cpu_flags.cache_clear()


def test_the_caches_of_the_machine_the_code_is_for_can_be_named(monkeypatch):
    from polytune import machine
    monkeypatch.setenv("POLYTUNE_CACHE_SIZES", "48K,2M,300M")
    machine.cache_sizes.cache_clear()
    try:
        assert machine.cache_sizes() == {1: 48 * 1024, 2: 2 << 20, 3: 300 << 20}
        monkeypatch.setenv("POLYTUNE_CACHE_SIZES", "48K,lots")
        machine.cache_sizes.cache_clear()
        with pytest.raises(UsageError, match="POLYTUNE_CACHE_SIZES='48K,lots': expected"):
            machine.cache_sizes()
    finally:
        monkeypatch.delenv("POLYTUNE_CACHE_SIZES")
        machine.cache_sizes.cache_clear()


def test_without_sysfs_cache_directories_the_caches_come_from_getconf(monkeypatch):
    """gVisor and some containers show no /sys/devices/system/cpu/cpu0/cache: glibc's getconf reads CPUID."""
    from polytune import machine
    seen = []

    def getconf(cmd, **kw):
        seen.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, "LEVEL1_ICACHE_SIZE                 32768\n"
                                           "LEVEL1_DCACHE_SIZE                 49152\nLEVEL2_CACHE_SIZE 2097152\n"
                                           "LEVEL3_CACHE_SIZE                  314572800\nLEVEL4_CACHE_SIZE\n", "")
    monkeypatch.delenv("POLYTUNE_CACHE_SIZES", raising=False)
    monkeypatch.setattr(machine.glob, "glob", lambda pattern: [])
    monkeypatch.setattr(machine.subprocess, "run", getconf)
    machine.cache_sizes.cache_clear()
    try:
        assert machine.cache_sizes() == {1: 49152, 2: 2097152, 3: 314572800}
        assert seen == [["getconf", "-a"]]
    finally:
        machine.cache_sizes.cache_clear()


def test_the_products_of_a_region_fill_one_packing_buffer_and_print_the_originals_arrays(tmp_path):
    """3mm's three products run one after another: one thread-local A buffer and one B buffer, declared in the
    region's head, serve all three (each product asks for its own size: a larger one replaces the kept one);
    doitgen's B panel, kept between the iterations of its batch loop, stays its product's own."""
    sizes = ["-DNI=37", "-DNJ=61", "-DNK=29", "-DNL=43", "-DNM=71"]
    src = os.path.join(POLYBENCH, "3mm.c")
    out = tmp_path / "3mm.opt.c"
    assert main(["optimize", src, *sizes, "-o", str(out)]) == 0
    text = out.read_text()
    assert text.count("packed blocks") == 3
    for raw in ("c_Araw", "c_Braw"):
        assert text.count(f"static __thread char *{raw}_kept;") == 1, raw
    want = _build_run(src, str(tmp_path / "orig"), ["-O1", *sizes], (1,))[0]
    assert _build_run(str(out), str(tmp_path / "opt"), ["-O1", "-fopenmp", *sizes], (1, 2, 3)) == [want] * 3
    out = tmp_path / "doitgen.opt.c"
    assert main(["optimize", os.path.join(POLYBENCH, "doitgen.c"), "-o", str(out)]) == 0
    text = out.read_text()
    site = text[:text.index("static __thread unsigned long c_Brun;")].rsplit("packed blocks", 1)[1]
    assert "static __thread char *c_Braw_kept;" in site  # (the kept panel's product: its own B buffer)
