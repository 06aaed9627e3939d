"""Conditionals in subscripts, bounds and guards (`==`, `!=`, `&&`, `||`, `<` inside `?:`) are piecewise
affine: periodic-boundary stencils with `t % 2` buffers are optimized and compute what the original does."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import EMU_CXXFLAGS, checksum_line, compile_run
from test_cuda import emulate

from polytune.cli import main

PERIODIC_2D = r"""
#include <stdio.h>
#ifndef N
#define N 19
#endif
#ifndef T
#define T 5
#endif
static double A[2][N][N];
static double E[N][N];
static void kernel(void) {
  int t, i, j;
#pragma scop
  for (t = 0; t < T; t++) {
    for (i = 0; i < N; i++)
      for (j = 0; j < N; j++)
        A[(t + 1) % 2][i][j] = 0.2 * (A[t % 2][i][j] + A[t % 2][(i == 0) ? N - 1 : i - 1][j]
            + A[t % 2][(i == N - 1) ? 0 : i + 1][j] + A[t % 2][i][j != 0 ? j - 1 : N - 1]
            + A[t % 2][i][j < N - 1 ? j + 1 : 0]);
    for (i = (t == 0) ? 1 : 0; i < N; i++)
      for (j = 0; j < (i != 3 ? N : N - 2); j++)
        if (i != j && (j < 4 || i == N - 1))
          E[i][j] = E[i][j] * 0.5 + A[(t + 1) % 2][i < 8 ? i : 8][j];
  }
#pragma endscop
}
int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) { A[0][i][j] = (i * 7 + j * 3) % 11; E[i][j] = i - j; }
  kernel();
  double s = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) s += (A[T % 2][i][j] + E[i][j]) * (i + 2 * j + 1);
  printf("checksum: %.12e\n", s);
  return 0;
}
"""

PERIODIC_3D = r"""
#include <stdio.h>
#ifndef N
#define N 11
#endif
#ifndef T
#define T 4
#endif
static double A[2][N][N][N];
static void kernel(void) {
  int t, i, j, k;
#pragma scop
  for (t = 0; t < T; t++)
    for (i = 0; i < N; i++)
      for (j = 0; j < N; j++)
        for (k = 0; k < N; k++)
          A[(t + 1) % 2][i][j][k] = 0.125 * (2.0 * A[t % 2][i][j][k]
              + A[t % 2][(i == 0) ? N - 1 : i - 1][j][k] + A[t % 2][(i == N - 1) ? 0 : i + 1][j][k]
              + A[t % 2][i][(j > 0 && j <= N - 1) ? j - 1 : N - 1][k]
              + A[t % 2][i][(j == N - 1 || j < 0) ? 0 : j + 1][k]
              + A[t % 2][i][j][k != 0 ? k - 1 : N - 1] + A[t % 2][i][j][k < N - 1 ? k + 1 : 0]);
#pragma endscop
}
int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++) A[0][i][j][k] = (i * 7 + j * 3 + k * 5) % 13;
  kernel();
  double s = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++) s += A[T % 2][i][j][k] * (i + 2 * j + 3 * k + 1);
  printf("checksum: %.12e\n", s);
  return 0;
}
"""

# Double buffering written with bit operations, comparisons used as numbers.
BITS_1D = r"""
#include <stdio.h>
#ifndef N
#define N 29
#endif
#ifndef T
#define T 6
#endif
static double A[2][N + 2];
static void kernel(void) {
  int t, i;
#pragma scop
  for (t = 0; t < T; t++)
    for (i = 0; i < N; i++)
      A[(t + 1) & 1][i + (i == N - 1)] = 0.3 * (A[t & 1][(i > 0) * (i - 1)] + A[t & 1][i] + A[t & 1][(i + 1) >> 0])
                                        + 0.01 * A[t & 1][i << 1 >> 1];
#pragma endscop
}
int main(void) {
  for (int i = 0; i < N + 2; i++) { A[0][i] = (i * 7) % 5; A[1][i] = 0; }
  kernel();
  double s = 0;
  for (int i = 0; i < N + 2; i++) s += (A[0][i] + 2 * A[1][i]) * (i + 1);
  printf("checksum: %.12e\n", s);
  return 0;
}
"""

CASES = {"periodic_2d": PERIODIC_2D, "periodic_3d": PERIODIC_3D, "bits_1d": BITS_1D}
SHAPES = [[], ["--schedule", "outer"], ["--tile-sizes", "3,5,7,2,3"],
          ["--schedule", "outer", "--tile-sizes", "5,3,7,1,3"], ["--no-tile"]]


@pytest.fixture(params=sorted(CASES))
def kernel(request, tmp_path):
    src = tmp_path / f"{request.param}.c"
    src.write_text(CASES[request.param])
    return str(src), checksum_line(compile_run(str(src), str(tmp_path / "ref"), [], False))


# Each kernel with the default options by default but periodic_2d (10 s; its CUDA and Triton output is compared
# by default below), every other option set under -m slow (CI's slow line): the default suite's time budget.
@pytest.mark.parametrize("kernel,shape", [
    pytest.param(k, s, id=f"{k}-{'_'.join(s).replace('-', '') or 'default'}",
                 marks=[pytest.mark.slow] if s or k == "periodic_2d" else [])
    for k in sorted(CASES) for s in SHAPES], indirect=["kernel"])
def test_periodic_stencil_optimized_is_identical(kernel, shape, tmp_path):
    src, expected = kernel
    out = tmp_path / "opt.c"
    assert main(["optimize", src, *shape, "-o", str(out)]) == 0
    assert checksum_line(compile_run(str(out), str(tmp_path / "opt"), [], True)) == expected


def test_periodic_subscript_is_one_piecewise_access(tmp_path):
    """`A[(i == 0) ? N - 1 : i - 1]` is read at i - 1, and at N - 1 for i = 0: two pieces of one access."""
    import islpy as isl

    from polytune.pipeline import analyze
    src = tmp_path / "p.c"
    src.write_text(PERIODIC_2D)
    st = analyze(str(src)).scops[0].scop.statements[0]
    reads = [a.relation.intersect_domain(st.domain) for a in st.reads]
    want = isl.Map("[_pt_K19] -> { S0[t, i, j] -> A[o, i' = i - 1, j] : i > 0; S0[t, i = 0, j] -> A[o, "
                   "_pt_K19 - 1, j] }")
    assert any(r.project_out(isl.dim_type.out, 0, 1).is_equal(want.project_out(isl.dim_type.out, 0, 1)
                                                               .intersect_domain(st.domain)) for r in reads)


def test_cuda_prints_conditional_subscripts(kernel, tmp_path):
    """The CUDA program, run on the CPU through tests/data/cuda_emu.h, computes what the original does."""
    src, expected = kernel
    out = tmp_path / "k.cu"
    assert main(["optimize", src, "--target", "cuda", "-o", str(out)]) == 0
    emu = tmp_path / "emu.cpp"
    emu.write_text(emulate(out.read_text()))
    subprocess.run(["g++", *EMU_CXXFLAGS, "-x", "c++", str(emu), "-o", str(tmp_path / "emu")], check=True,
                   capture_output=True)
    got = subprocess.run([str(tmp_path / "emu")], check=True, capture_output=True, text=True, timeout=120).stdout
    assert float(checksum_line(got).split()[1]) == pytest.approx(float(expected.split()[1]), rel=1e-9)


# (periodic_3d's interpreted Triton run, 5 s, is under -m slow: the default suite's time budget)
@pytest.mark.parametrize("kernel", ["bits_1d", "periodic_2d", pytest.param("periodic_3d", marks=pytest.mark.slow)],
                         indirect=True)
def test_triton_prints_conditional_subscripts(kernel, tmp_path):
    """The Triton module (under the interpreter without a GPU) computes what the original does."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() and "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1":
        pytest.skip("triton was imported without TRITON_INTERPRET=1 on a machine without a GPU")
    os.environ.setdefault("TRITON_INTERPRET", "0" if torch.cuda.is_available() else "1")
    pytest.importorskip("triton")
    from conftest import TritonHarness

    from polytune.measure.c import BuildConfig
    from polytune.pipeline import analyze
    src, _ = kernel
    # The interpreter is slow: two time steps, and sizes that still reach every branch of the subscripts
    # (periodic_2d's `i < 8 ? i : 8` needs N > 8) and leave a partial tile in every dimension of 4x2x2 blocks.
    small = ("N=5", "T=2") if "periodic_3d" in src else ("N=9", "T=2")
    h = TritonHarness(analyze(src, defines=small), BuildConfig(defines=small), runs=1)
    try:
        h.measure_reference()
        for cfg in ({}, {"BLOCK_X": 4, "BLOCK_Y": 2, "BLOCK_Z": 2, "num_warps": 1}):
            m = h.measure(tuple(cfg.values()), tuple(cfg))
            assert m.ok, (cfg, m.error, m.detail)
    finally:
        h.close()


@pytest.mark.parametrize("subscript,want", [
    ("i & 3", "{ S0[i] -> A[o] : o = i mod 4 }"),
    ("i << 2", "{ S0[i] -> A[4i] }"),
    ("i >> 1", "{ S0[i] -> A[o] : o = floor(i / 2) }"),
    ("(i > 2) + 1", "{ S0[i] -> A[2] : i > 2; S0[i] -> A[1] : i <= 2 }"),
    ("i == 3", "{ S0[i] -> A[1] : i = 3; S0[i] -> A[0] : i != 3 }"),
    ("!i + (i != 5 && i < 7)", "{ S0[i] -> A[o] : (i = 0 and o = 2) or (0 < i < 7 and i != 5 and o = 1) or "
                               "((i = 5 or i >= 7) and o = 0) }"),
])
def test_comparisons_and_bit_operations_as_numbers(subscript, want, tmp_path):
    """A comparison used as a number is 1 or 0; `&` by 2^b - 1 is mod 2^b; shifts by constants are products
    and floor divisions (C's >> of a negative int is arithmetic in gcc)."""
    import islpy as isl

    from polytune.pipeline import analyze
    src = tmp_path / "s.c"
    src.write_text(f"double A[40], B[40];\nvoid f(void) {{\n#pragma scop\n  for (int i = 0; i < 20; i++)\n"
                   f"    B[i] = A[{subscript}];\n#pragma endscop\n}}\n")
    st = analyze(str(src)).scops[0].scop.statements[0]
    got = st.reads[0].relation.intersect_domain(st.domain)
    assert got.is_equal(isl.Map(want).intersect_domain(st.domain).align_params(got.get_space()))


@pytest.mark.parametrize("subscript", ["i | 1", "i & 5", "i ^ 1", "i << N"])
def test_other_bit_operations_are_refused_in_one_line(subscript, tmp_path, capsys):
    src = tmp_path / "s.c"
    src.write_text(f"double A[40], B[40];\nvoid f(int N) {{\n#pragma scop\n  for (int i = 0; i < 20; i++)\n"
                   f"    B[i] = A[{subscript}];\n#pragma endscop\n}}\n")
    assert main(["optimize", str(src), "-o", str(tmp_path / "o.c")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"{src}:5: non-affine subscript (operator")
