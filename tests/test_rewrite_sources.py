"""The source rewrites of polytune/rewrite/ (one module each): every rewritten nest gives the original's output
at 1 and 2 threads, marked with '#pragma scop' and found without it; what a rewrite cannot take is refused
with the reason at the right line."""
from __future__ import annotations

import pytest
from test_rewrite_aliases import refused, same_output

MAIN = """
int main(void) {
  static double A[N][N], B[N][N], x[N * N], y[N * N];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) { A[i][j] = (i * 7 + j * 3) % 11 - 5; B[i][j] = (i + 2 * j) % 5; }
  for (int p = 0; p < N * N; p++) { x[p] = p % 9 - 4; y[p] = p % 4; }
  kernel(A, B, x, y);
  double s = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) s += A[i][j] * (i + 1) + B[i][j] * (j + 2);
  for (int p = 0; p < N * N; p++) s += x[p] * (p % 13) + y[p];
  printf("%.17g\\n", s);
  return 0;
}
"""

HEAD = """#include <stdio.h>
#include <math.h>
#define N 48
struct grid { int n, m; double h; const int *lo; };
static const int dims[2] = {N - 2, N - 3};
"""

KERNELS = {
    # struct members in bounds and in the body, read once (rewrite/members.py)
    "struct members": ("struct grid g = {N, N - 1, 0.25, dims};", """
  for (int i = 1; i < g.n - 1; i++)
    for (int j = 1; j < g.m - 1; j++)
      B[i][j] = g.h * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);"""),
    "struct pointer members": ("struct grid gg = {N, N - 1, 0.25, dims}; struct grid *g = &gg;", """
  for (int i = g->lo[0]; i < g->n - 1; i++)
    for (int j = 1; j < g->m - 1; j++)
      B[i][j] = g->h * (A[i - 1][j] + A[i + 1][j]);"""),
    # array elements in bounds
    "array elements": ("", """
  for (int i = 0; i < dims[0]; i++)
    for (int j = 0; j < dims[1]; j++)
      A[i][j] = A[i][j] + B[i + 1][j + 2] * 0.5;"""),
    # conditions on a pointer or a floating-point value, read once as truth values
    "invariant conditions": ("const double *bias = &x[0]; double beta = 0.5;", """
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      double v = B[i][j];
      if (bias != 0)
        v += bias[j];
      A[i][j] = beta != 0.0 ? beta * A[i][j] + v : v;
    }"""),
    # halves of array elements (`dims[1] / 2`) in bounds, flat subscripts and an index scalar's value
    "halved elements": ("", """
  for (int r = 0; r < dims[0] / 2; r++)
    for (int c = 0; c < dims[1] / 2; c++) {
      const int s = (2 * r) * dims[1] + 2 * c;
      y[r * (dims[1] / 2) + c] = 0.25 * (x[s] + x[s + 1] + x[s + dims[1]] + x[s + dims[1] + 1]);
    }"""),
    # a product of two parameters in a bound
    "product": ("int w = N, h = N - 1;", """
  for (int p = 0; p < w * h; p++)
    y[p] = 2 * x[p] + y[p];"""),
    # index scalars (rewrite/index_scalars.py)
    "index scalars": ("", """
  for (int i = 0; i < N - 1; i++)
    for (int j = 0; j < N / 2; j++) {
      int ii = i + 1;
      long jj = 2 * j;
      int k = ii - 1;
      B[ii][jj] = A[k][j] * 0.5 + B[ii][jj];
    }"""),
    # pointers declared in the region (rewrite/pointers.py)
    "row pointers": ("", """
  for (int i = 1; i < N; i++) {
    double *row = A[i];
    const double *up = &B[i - 1][0];
    double *last = row + 1;
    for (int j = 0; j < N - 1; j++) {
      row[j] = row[j] + up[j] * 0.5;
      *(last + j) += 1;
    }
  }"""),
    # continue as a guard (rewrite/continues.py)
    "continue": ("", """
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      if (j > i)
        continue;
      A[i][j] = A[i][j] * 0.5 + B[j][i];
    }"""),
    # an index clamped to the edge after its declaration (rewrite/index_scalars.py), in a flat subscript
    "clamped index": ("int w = N, h = N - 3;", """
  for (int r = 0; r < h; r++)
    for (int c = 0; c < w; c++) {
      double acc = 0.0;
      for (int k = -2; k <= 2; k++) {
        int cc = c + k;
        if (cc < 0)
          cc = 0;
        if (cc > w - 1) {
          cc = w - 1;
        }
        acc += x[r * w + cc] * (k + 3);
      }
      y[r * w + c] = acc;
    }"""),
    # math functions pure by default
    "math": ("", """
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = sqrt(fabs(A[i][j])) + fmax(B[i][j], 1.0) + powf((float)B[j][i], 2.0f) + expf(-1.0f);"""),
    # OpenMP lines inside (rewrite/openmp.py)
    "openmp": ("", """
  omp_set_num_threads(2);
#pragma omp parallel for
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = A[i][j] + B[i][j];"""),
}


def program(name: str, pragmas: bool) -> str:
    setup, nest = KERNELS[name]
    omp = "#ifdef _OPENMP\n#include <omp.h>\n#else\nstatic void omp_set_num_threads(int n) { (void)n; }\n#endif\n" \
        if name == "openmp" else ""
    body = f"\n#pragma scop{nest}\n#pragma endscop\n" if pragmas else nest + "\n"
    return (HEAD + omp + "static void kernel(double A[N][N], double B[N][N], double x[N * N], double y[N * N]) {\n"
            f"  {setup}{body}}}\n" + MAIN)


@pytest.mark.parametrize("pragmas", [True, False], ids=["pragma", "found"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_a_rewritten_nest_gives_the_original_results(tmp_path, name, pragmas):
    text = program(name, pragmas)
    err = same_output(tmp_path, text, threads=(1, 2))
    if not pragmas:  # found at its first line (the OpenMP line before the loop belongs to it)
        lines = text.splitlines()
        head = next(k for k, x in enumerate(lines) if x.startswith("static void kernel"))
        first = next(k for k in range(head + 2, len(lines)) if lines[k].lstrip().startswith(("for", "#pragma omp")))
        assert f":{first + 1}: found: loop nest of lines {first + 1}-" in err, err


def test_openmp_lines_inside_a_region_are_dropped_with_a_note(tmp_path):
    err = same_output(tmp_path, program("openmp", True), threads=(1, 2))
    assert "'#pragma omp parallel for' dropped" in err and "'omp_set_num_threads(2)' moved before the region" in err


REFUSED = """#include <stdio.h>
struct grid { int n; double h; };
double A[40][40];
void kernel(struct grid *g, double *v) {
  int t = 3;
#pragma scop
  for (int i = 1; i < g->n; i++) {
    BODY
  }
#pragma endscop
}
int main(void) { struct grid g = {30, 0.5}; double v[40] = {0}; kernel(&g, v); printf("%g\\n", A[1][1]); return 0; }
"""


@pytest.mark.parametrize("body, why", [
    ("g->n = g->n - 1;\n    A[i][0] = 1;", "non-affine loop bound"),  # a member the region writes is not read once
    ("int k = i;\n    k = k + 1;\n    A[k][0] = 1;", "'k', which is written inside the scop"),
    ("double *p = A[i];\n    p = A[0];\n    p[1] = 2;", "'p' is used with 0 and with 1 subscripts"),
    ("if (i > 3) { A[i][0] = 1; continue; }\n    A[i][1] = 2;", "'continue' inside the scop"),
    ("\n#pragma omp critical\n    A[i][0] += 1;", "'#pragma omp critical' inside the region"),
], ids=["member-written", "index-assigned-again", "pointer-assigned-again", "continue-in-a-branch",
        "omp-critical"])
def test_what_a_rewrite_cannot_take_is_refused_at_its_line(tmp_path, body, why):
    line = refused(tmp_path, REFUSED.replace("BODY", body))
    assert why in line, line


GUARDED = """#include <stdio.h>
struct grid { int n; double h; };
double A[40][40];
static void kernel(const struct grid *g, int m) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < 40; j++)
      if (g != 0 && j < g->n)
        A[i][j] = g->h * (i + j);
}
int main(void) {
  struct grid g = {30, 0.5};
  kernel(&g, 40);
  kernel(0, 40);
  double s = 0;
  for (int i = 0; i < 40; i++)
    for (int j = 0; j < 40; j++) s += A[i][j] * (i + 1);
  printf("%.17g\\n", s);
  return 0;
}
"""


def test_a_member_read_under_a_condition_is_not_read_before_the_region(tmp_path):
    """`g->n` and `g->h` are read only where `g != 0`: reading them once before the region would
    dereference the null pointer of the second call. The nest is left as it is (missed), the program runs."""
    err = same_output(tmp_path, GUARDED, threads=(1, 2))
    assert ":5: missed: loop nest of lines 5-8 not optimized" in err, err


# an all-pairs loop that skips i == j: the struct's pointer members are read under the guard that
# `continue` becomes, the struct itself (`b->n` of the bounds) outside it; the scalars of the guarded body
# are written in every iteration of i but one where n is 1
PAIRS = """#include <stdio.h>
#include <math.h>
struct set { int n; double *x, *w, *out; };
static void kernel(struct set *b, double soft) {
  for (int i = 0; i < b->n; i++) {
    double acc = 0.0;
    for (int j = 0; j < b->n; j++) {
      if (j == i)
        continue;
      double d = b->x[j] - b->x[i];
      double r = b->w[j] / sqrt(d * d + soft);
      acc += d * r;
    }
    b->out[i] += acc;
  }
}
int main(void) {
  static double x[N], w[N], out[N];
  for (int k = 0; k < N; k++) { x[k] = (k * 7) % 11 - 5; w[k] = 1 + k % 3; out[k] = k; }
  struct set s = {N, x, w, out};
  kernel(&s, 0.5);
  double t = 0;
  for (int k = 0; k < N; k++) t += out[k] * (k + 1);
  printf("%.17g\\n", t);
  return 0;
}
"""


@pytest.mark.parametrize("n", [1, 2, 37])
def test_a_nest_that_skips_its_diagonal_is_found_and_parallel(tmp_path, n):
    """`if (j == i) continue;` guards the rest of the body: the members it reads (`b->x`) are read once
    before the region all the same (`b` is dereferenced outside the guard, by the bounds), and the scalars
    declared in the guarded body, dead after each iteration, are private to the parallel i loop although
    an iteration may write none of them (n = 1)."""
    text = f"#define N {n}\n" + PAIRS
    err = same_output(tmp_path, text, threads=(1, 2))
    assert ":6: found: loop nest of lines 6-16" in err, err
    assert "#pragma omp parallel for" in (tmp_path / "prog.opt.c").read_text()
    assert "original code otherwise: no overlap of b->out and b->w, b->out and b->x" in err, err  # as written


LIVE_AFTER = """#include <stdio.h>
#define N 9
double A[N][N], last;
int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) A[i][j] = (i * 5 + j) % 7;
  double d = -1.0;
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      if (j < i) {
        d = A[i][j] * 2.0;
        A[i][j] = d + 1.0;
      }
#pragma endscop
  printf("%.17g %.17g\\n", d, A[N - 1][N - 2]);
  return 0;
}
"""


def test_a_scalar_read_after_the_loop_keeps_the_last_write_where_an_iteration_skips_it(tmp_path):
    """`d` is read after the nest, and iteration i = 0 writes no `d`: whatever loop runs in parallel, the
    value printed is the sequential program's last one."""
    same_output(tmp_path, LIVE_AFTER, threads=(1, 2))


SWAP = """#include <stdio.h>
#include <stdlib.h>
static double *smooth(int n, int steps, double *u, double *v)
{
  double *cur = u, *next = v;
  for (int t = 1; t <= steps; t++) {
    for (int i = 1; i < n - 1; i++)
      next[i] = (cur[i - 1] + cur[i] + cur[i + 1]) / 3.0;
    double *tmp = cur;
    cur = next;
    next = tmp;
  }
  return cur;
}
int main(void)
{
  static double u[64], v[64];
  for (int steps = 0; steps < 6; steps++) {
    for (int i = 0; i < 64; i++) { u[i] = i % 5; v[i] = i % 3 - 1; }
    double *r = smooth(64, steps, u, v);
    double s = 0;
    for (int i = 0; i < 64; i++) s += r[i] * (i + 1) + u[i] * 3 + v[i] * 7;
    printf("%d %.17g %d\\n", steps, s, r == u);
  }
  double *r = smooth(64, 3, u, u);  /* one buffer for both: the original code runs */
  printf("%.17g %d\\n", r[10] + u[20], r == u);
  return 0;
}
"""


def test_a_time_loop_that_swaps_two_buffers_by_pointers_is_found_and_keeps_its_results(tmp_path):
    """`double *tmp = cur; cur = next; next = tmp;` ends each time step: even steps compute with the entry
    buffers, odd ones with them exchanged, and the pointers hold after the region what they held after the
    loop (an odd or even number of steps, none at all); the same buffer passed twice runs the original."""
    err = same_output(tmp_path, SWAP, threads=(1, 2))
    assert ":6: found: loop nest of lines 6-12" in err, err
    assert "'cur' and 'next' are swapped at the end of each iteration of 't'" in err, err
    assert "% 2) { double * " in (tmp_path / "prog.opt.c").read_text()


def test_a_swapped_pointer_assigned_again_in_the_loop_keeps_the_nest_refused(tmp_path):
    text = SWAP.replace("    double *tmp = cur;\n", "    if (t == 3) next = cur;\n    double *tmp = cur;\n")
    err = same_output(tmp_path, text, threads=(1,))
    assert ":6: missed: loop nest of lines 6-13 not optimized" in err, err
