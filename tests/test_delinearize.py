"""Delinearization (poly/delinearize.py): flattened subscripts read as multi-dimensional arrays, with the
assumptions that make the view exact; end to end, the optimized program checks them at run time and runs
the original code where they fail. isl text is the specification (`is_equal`)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import islpy as isl
import pytest

from polytune.cli import main
from polytune.pipeline import analyze
from polytune.poly.delinearize import DelinearizeError, FlatAccess, Poly, delinearize

i, j, k, b, n, m, c, hw, lda = (Poly.name(x) for x in ("i", "j", "k", "b", "n", "m", "c", "hw", "lda"))
ONE = Poly.const(1)


def access(domain: str, iters: str, *pieces) -> FlatAccess:
    """An access of the statement with *domain* whose subscript is *pieces* ((guard, poly), or a poly)."""
    pieces = tuple(p if isinstance(p, tuple) else ("true", p) for p in pieces)
    return FlatAccess(isl.Set(domain), tuple(iters.split()), pieces)


def params(view, text: str) -> bool:
    """Whether the view's assumptions are the parameter set *text*."""
    want = isl.Set(text)
    return view.assumed.align_params(want.get_space()).is_equal(want.align_params(view.assumed.get_space()))


def same_map(got: isl.Map, text: str) -> bool:
    want = isl.Map(text)
    return got.align_params(want.get_space()).is_equal(want.align_params(got.get_space()))


def test_row_major_subscript_is_a_matrix_of_n_columns_exact_where_the_loops_stay_in_the_row():
    view = delinearize([access("[n] -> { S0[i, j] : 0 <= i < n and 0 <= j < n }", "i j", i * n + j)])
    assert view.strides == (("n",), ()) and view.sizes == (("n",),)
    assert same_map(view.maps[0], "[n] -> { S0[i, j] -> [i, j] }")
    assert params(view, "[n] -> { : }")  # the domain implies 0 <= j < n


def test_leading_dimension_needs_lda_at_least_the_inner_extent():
    view = delinearize([access("[M, K, lda] -> { S0[i, k] : 0 <= i < M and 0 <= k < K }", "i k", i * lda + k)])
    assert same_map(view.maps[0], "[lda] -> { S0[i, k] -> [i, k] }")
    assert params(view, "[M, K, lda] -> { : M <= 0 or K <= 0 or lda >= K }")


def test_three_levels_with_a_batch_offset():
    """x[((b*c + i)*hw) + j] -> x[b][i][j] with sizes [*][c][hw]."""
    view = delinearize([access("[B, c, hw] -> { S0[b, i, j] : 0 <= b < B and 0 <= i < c and 0 <= j < hw }",
                               "b i j", (b * c + i) * hw + j)])
    assert view.strides == (("c", "hw"), ("hw",), ()) and view.sizes == (("c",), ("hw",))
    assert same_map(view.maps[0], "[B, c, hw] -> { S0[b, i, j] -> [b, i, j] }")
    assert params(view, "[B, c, hw] -> { : }")


def test_a_row_length_that_is_a_sum_is_one_stride():
    """`in + s*(n1 + 1) + k` (Rodinia backprop's rows of n1 + 1 inputs) reaches delinearization as s*n1 + s + k:
    its rows are n1 + 1 long ([s][k]), not n1 ([s][s + k] of n1 columns, exact for no sample but the first)."""
    s, n1, S = (Poly.name(x) for x in ("s", "n1", "S"))
    view = delinearize([access("[S, n1] -> { S0[s, k] : 0 <= s < S and 0 <= k <= n1 }", "s k", s * n1 + s + k),
                        access("[S, n1] -> { S1[s] : 0 <= s < S }", "s", s * (n1 + ONE))])
    assert view.strides == (("(n1 + 1)",), ()) and view.sizes == (("(n1 + 1)",),)
    assert same_map(view.maps[0], "[n1] -> { S0[s, k] -> [s, k] }")
    assert same_map(view.maps[1], "[n1] -> { S1[s] -> [s, 0] }")
    assert params(view, "[S, n1] -> { : S <= 0 or n1 >= 0 }")  # (S1's column 0 is in a row of n1 + 1)


def test_a_diagonal_beside_the_rows_keeps_rows_of_n():
    """cholesky's L[i*n + i] beside L[j*n + k]: i*n + i is the diagonal [i][i] of rows of n, not a row of n + 1
    (whose stride would not nest with n)."""
    view = delinearize([access("[n] -> { S0[i] : 0 <= i < n }", "i", i * n + i),
                        access("[n] -> { S1[j, k] : 0 <= j < n and 0 <= k < j }", "j k", j * n + k)])
    assert view.strides == (("n",), ())
    assert same_map(view.maps[0], "[n] -> { S0[i] -> [i, i] }")


def test_a_sum_times_a_parameter_is_one_stride_of_both():
    """x[(b*(c + 1) + i)*hw + j]: b's coefficient hw*c + hw is hw times the sum (c + 1)."""
    view = delinearize([access("[B, c, hw] -> { S0[b, i, j] : 0 <= b < B and 0 <= i <= c and 0 <= j < hw }",
                               "b i j", (b * (c + ONE) + i) * hw + j)])
    assert view.strides == (("(c + 1)", "hw"), ("hw",), ()) and view.sizes == (("(c + 1)",), ("hw",))
    assert same_map(view.maps[0], "[B, c, hw] -> { S0[b, i, j] -> [b, i, j] }")
    assert params(view, "[B, c, hw] -> { : }")


def test_a_clamped_column_is_the_last_element_of_its_row_not_before_the_next_row():
    """`x[y*w + (c < 0 ? 0 : c > w - 1 ? w - 1 : c)]` with c = x + k: its piece `y*w + w - 1` is [y][w - 1]
    (the same address as [y + 1][-1]), which stays in its row: no assumption."""
    w, y, x_ = Poly.name("w"), Poly.name("y"), Poly.name("x")
    dom = "[h, w] -> { S1[y, x, k] : 0 <= y < h and 0 <= x < w and -2 <= k <= 2 }"
    view = delinearize([access(dom, "y x k", ("x + k < 0", y * w), ("x + k >= 0 and x + k > w - 1", y * w + w - ONE),
                               ("x + k >= 0 and x + k <= w - 1", y * w + x_ + k))])
    assert same_map(view.maps[0], "[h, w] -> { S1[y, x, k] -> [y, 0] : x + k < 0; S1[y, x, k] -> [y, w - 1] : "
                                  "x + k > w - 1 and x + k >= 0; S1[y, x, k] -> [y, x + k] : 0 <= x + k <= w - 1 }")
    assert params(view, "[h, w] -> { : }")


def test_constant_terms_and_parameter_offsets_go_to_their_rows():
    """A[(i + 1)*n + j - 1] is A[i + 1][j - 1]: exact only where j - 1 stays in the row (never at j = 0)."""
    view = delinearize([access("[n] -> { S0[i, j] : 0 <= i < n - 1 and 1 <= j < n }", "i j",
                               (i + ONE) * n + j - ONE)])
    assert same_map(view.maps[0], "[n] -> { S0[i, j] -> [i + 1, j - 1] }")
    assert params(view, "[n] -> { : }")


def test_accesses_of_one_array_agree_on_its_view():
    """A[i*n + j] and A[j] (row 0) and A[n*n - n + j] (the last row, n - 1): one view of n columns."""
    dom = "[n] -> { S0[i, j] : 0 <= i < n and 0 <= j < n }"
    view = delinearize([access(dom, "i j", i * n + j), access(dom.replace("S0", "S1"), "i j", j),
                        access(dom.replace("S0", "S2"), "i j", n * n - n + j)])
    assert same_map(view.maps[1], "[n] -> { S1[i, j] -> [0, j] }")
    assert same_map(view.maps[2], "[n] -> { S2[i, j] -> [n - 1, j] }")
    assert params(view, "[n] -> { : }")


def test_strides_that_do_not_nest_are_refused():
    dom = "[n, m] -> { S0[i, j] : 0 <= i < n and 0 <= j < m }"
    with pytest.raises(DelinearizeError, match="neither a multiple"):
        delinearize([access(dom, "i j", i * n + j), access(dom, "i j", i * m + j)])


def test_a_product_of_iterators_is_refused():
    with pytest.raises(DelinearizeError, match="product of loop iterators"):
        delinearize([access("[n] -> { S0[i, j] : 0 <= i < n and 0 <= j < n }", "i j", i * j * n)])


def test_constant_strides_alone_are_left_to_the_affine_model():
    assert delinearize([access("[n] -> { S0[i, j] : 0 <= i < n and 0 <= j < 64 }", "i j",
                               i * Poly.const(64) + j)]) is None


def test_a_product_of_parameters_as_a_size_becomes_a_parameter():
    """x[b*c*hw + j]: one row of c*hw elements per b; the size is a new parameter standing for c*hw."""
    view = delinearize([access("[B, c, hw] -> { S0[b, j] : 0 <= b < B and 0 <= j < hw }", "b j",
                               b * c * hw + j)])
    assert view.products == {("c", "hw"): "_pt_P0"}
    assert same_map(view.maps[0], "{ S0[b, j] -> [b, j] }")
    assert params(view, "[B, c, hw, _pt_P0] -> { : B <= 0 or hw <= 0 or _pt_P0 >= hw }")


def test_guarded_pieces_keep_their_guards():
    """A[(i < 4 ? i : 4)*n + j]: two pieces, each delinearized."""
    view = delinearize([access("[n] -> { S0[i, j] : 0 <= i < n and 0 <= j < n }", "i j",
                               ("i < 4", i * n + j), ("i >= 4", Poly.const(4) * n + j))])
    assert same_map(view.maps[0], "[n] -> { S0[i, j] -> [i, j] : i < 4; S0[i, j] -> [4, j] : i >= 4 }")


def test_the_scop_of_a_flat_gemm_has_2d_accesses_and_the_lda_assumption(tmp_path):
    src = tmp_path / "g.c"
    src.write_text(GEMM)
    scop = analyze(str(src)).scops[0].scop
    a = next(x for x in scop.arrays if x.name == "A")
    assert a.ndim == 2 and a.layout.strides == ("lda", "1")
    reads = [x.relation for st in scop.statements for x in st.reads if x.array == "A"]
    assert same_map(reads[0], "[lda] -> { S0[i, j, k] -> A[i, k] }")
    want = isl.Set("[M, N, K, lda, ldb, ldc] -> { : M <= 0 or N <= 0 or K <= 0 or "
                   "(lda >= K and ldb >= N and ldc >= N) }")
    got = scop.assumed.gist_params(isl.Set(f"[{', '.join(scop.constants)}] -> {{ : }}"))
    assert got.align_params(want.get_space()).is_equal(want.align_params(got.get_space()))


GEMM = """#include <stdio.h>
#include <stdlib.h>
void gemm(int M, int N, int K, int lda, int ldb, int ldc, double *restrict C, const double *restrict A,
          const double *restrict B)
{
#pragma scop
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < K; k++)
        C[i * ldc + j] += A[i * lda + k] * B[k * ldb + j];
#pragma endscop
}
int main(int argc, char **argv)
{
  int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]);
  int lda = atoi(argv[4]), ldb = atoi(argv[5]), ldc = atoi(argv[6]);
  int sa = M * lda + K + 8, sb = K * ldb + N + 8, sc = M * ldc + N + 8;
  double *A = malloc(sizeof(double) * sa), *B = malloc(sizeof(double) * sb), *C = malloc(sizeof(double) * sc);
  for (int x = 0; x < sa; x++) A[x] = (x % 11) * 0.25 - 1.0;
  for (int x = 0; x < sb; x++) B[x] = (x % 7) * 0.5;
  for (int x = 0; x < sc; x++) C[x] = (x % 3) * 0.125;
  gemm(M, N, K, lda, ldb, ldc, C, A, B);
  double s = 0;
  for (int x = 0; x < sc; x++) s += C[x] * (1 + x % 5);
  printf("%.17g\\n", s);
  return 0;
}
"""

BLUR = """#include <stdio.h>
#include <stdlib.h>
/* channels x rows x cols in one buffer, the rows `pitch` apart (pitch >= cols) */
static void blur(int ch, int rows, int cols, int pitch, const float *in, float *out)
{
#pragma scop
  for (int c = 0; c < ch; c++)
    for (int y = 1; y < rows - 1; y++)
      for (int x = 1; x < cols - 1; x++)
        out[(c * rows + y) * pitch + x] = (in[(c * rows + y - 1) * pitch + x] + in[(c * rows + y + 1) * pitch + x]
            + in[(c * rows + y) * pitch + x - 1] + in[(c * rows + y) * pitch + x + 1]) * 0.25f;
  for (int c = 0; c < ch; c++)
    for (int y = 1; y < rows - 1; y++)
      for (int x = 1; x < cols - 1; x++)
        if (out[(c * rows + y) * pitch + x] > 0.5f)
          out[(c * rows + y) * pitch + x] = 0.5f;
#pragma endscop
}
int main(int argc, char **argv)
{
  int ch = atoi(argv[1]), rows = atoi(argv[2]), cols = atoi(argv[3]), pitch = atoi(argv[4]);
  int size = ch * rows * pitch + cols + 8;
  float *in = malloc(sizeof(float) * size), *out = malloc(sizeof(float) * size);
  for (int x = 0; x < size; x++) { in[x] = (x % 13) * 0.0625f; out[x] = 0; }
  blur(ch, rows, cols, pitch, in, out);
  double s = 0;
  for (int x = 0; x < size; x++) s += out[x] * (1 + x % 3);
  printf("%.9g\\n", s);
  return 0;
}
"""


def _build(tmp_path: Path, text: str, options: tuple[str, ...] = ()) -> tuple[Path, Path, str]:
    src = tmp_path / "p.c"
    src.write_text(text)
    out = tmp_path / "p.opt.c"
    assert main(["optimize", str(src), "-o", str(out), *options]) == 0
    subprocess.run(["gcc", "-O2", str(src), "-o", str(tmp_path / "ref")], check=True)
    subprocess.run(["gcc", "-O2", "-fopenmp", str(out), "-o", str(tmp_path / "opt")], check=True)
    return tmp_path / "ref", tmp_path / "opt", out.read_text()


def _same_output(ref: Path, opt: Path, args: list[str]) -> None:
    want = subprocess.run([str(ref), *args], capture_output=True, text=True, check=True).stdout
    for threads in ("1", "2"):
        got = subprocess.run([str(opt), *args], capture_output=True, text=True, check=True,
                             env=dict(os.environ, OMP_NUM_THREADS=threads)).stdout
        assert got == want, (args, threads)


@pytest.mark.parametrize("options", [(), ("--tile-sizes", "5,3,7")])
def test_flat_gemm_with_leading_dimensions_is_tiled_and_right_where_lda_holds_or_not(tmp_path, options):
    """lda >= K holds: the optimized code (tiled, or packed blocks: a contraction) runs; lda < K (rows overlap)
    and ldc < N: the original runs."""
    ref, opt, text = _build(tmp_path, GEMM, options)
    assert ("#pragma omp parallel for" in text or "packed blocks" in text) and "(lda >= K)" in text.replace("((", "(")
    for args in ("13 17 11 11 17 17", "13 17 11 15 20 19", "13 17 11 7 17 17", "13 17 11 11 17 9",
                 "0 4 4 4 4 4", "1 1 1 1 1 1", "9 8 0 0 8 8"):
        _same_output(ref, opt, args.split())


def test_three_level_flat_stencil_with_a_data_dependent_clamp(tmp_path):
    ref, opt, text = _build(tmp_path, BLUR)
    assert "if (" in text and "#pragma omp parallel for" in text
    for args in ("3 11 9 9", "2 7 12 16", "2 7 12 5", "1 3 3 3", "0 5 5 5"):
        _same_output(ref, opt, args.split())


def test_gpu_targets_refuse_flattened_subscripts_in_one_line(tmp_path, capsys):
    src = tmp_path / "g.c"
    src.write_text(GEMM)
    assert main(["optimize", str(src), "--target", "cuda", "-o", str(tmp_path / "g.cu")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "GPU targets do not take arrays with flattened subscripts" in err[0]


THRESHOLD = """#include <stdio.h>
#include <stdlib.h>
static void threshold(int rows, int cols, const double *in, double *out, int *count)
{
#pragma scop
  for (int i = 0; i < rows; i++) {
    count[i] = 0;
    for (int j = 0; j < cols; j++)
      if (in[i * cols + j] > 0.5) {
        out[i * cols + j] = in[i * cols + j];
        count[i] += 1;
      }
  }
#pragma endscop
}
int main(int argc, char **argv)
{
  int rows = atoi(argv[1]), cols = atoi(argv[2]);
  double *in = malloc(sizeof(double) * (rows * cols + 1)), *out = malloc(sizeof(double) * (rows * cols + 1));
  int *count = malloc(sizeof(int) * (rows + 1));
  for (int x = 0; x < rows * cols; x++) { in[x] = (x % 9) * 0.125; out[x] = -1; }
  threshold(rows, cols, in, out, count);
  double s = 0;
  for (int x = 0; x < rows * cols; x++) s += out[x] * (x % 4);
  for (int x = 0; x < rows; x++) s += count[x];
  printf("%.17g\\n", s);
  return 0;
}
"""


def test_flat_array_read_by_a_condition_of_two_statements(tmp_path):
    """The condition's access of `in` belongs to both statements of its branch, each with its own domain."""
    src = tmp_path / "t.c"
    src.write_text(THRESHOLD)
    scop = analyze(str(src)).scops[0].scop
    for st in scop.statements[1:]:
        rel = next(x.relation for x in st.reads if x.array == "in")
        assert rel.get_tuple_name(isl.dim_type.in_) == st.name and rel.dim(isl.dim_type.out) == 2
    ref, opt, _ = _build(tmp_path, THRESHOLD)
    for args in ("17 13", "1 1", "0 3", "5 40"):
        _same_output(ref, opt, args.split())
