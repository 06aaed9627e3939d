"""Arrays whose rows are pointers (`double **A`, Numerical Recipes' dmatrix, Rodinia's `float **conn`): each row
may lie anywhere, so the optimized code runs only where the rows it touches follow each other in memory without
overlapping (poly/versioning.py `Rows`, a loop over the row pointers in the run-time check); rows in another
order, two rows on the same memory, or a row inside another array of the region run the original. Also: an
overlap check's bound that isl prints as a conditional is one term of the flattened subscript."""
from __future__ import annotations

import re
import subprocess

import pytest

from polytune.cli import main
from polytune.frontend import pointer_row_arrays
from polytune.poly.scop import Layout

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>

void step(double **A, double *B, int n, int m)
{
#pragma scop
    for (int i = 1; i < n; i++)
        for (int j = 0; j < m; j++) {
            A[i][j] = A[i][j] + 0.5 * A[i - 1][j];
            B[i * m + j] = 2.0 * A[i][j] + B[(i - 1) * m + j];
        }
#pragma endscop
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]), m = atoi(argv[2]), layout = atoi(argv[3]);
    double *store = malloc(sizeof(double) * n * m), *B = malloc(sizeof(double) * n * m);
    double **A = malloc(sizeof(double *) * n);
    for (int i = 0; i < n; i++)
        A[i] = store + (long)(layout == 1 ? n - 1 - i : i) * m;  /* 1: the rows in reverse order */
    if (layout == 2)
        A[2] = A[1];  /* two rows on one memory */
    if (layout == 3)
        A[n - 1] = B + m;  /* the last row inside B, which the region writes */
    for (int k = 0; k < n * m; k++) {
        store[k] = (k % 13) / 7.0;
        B[k] = (k % 5) / 3.0;
    }
    step(A, B, n, m);
    double cs = 0;
    for (int k = 0; k < n * m; k++)
        cs += store[k] * (1 + k % 3) + B[k] * (1 + k % 7);
    printf("checksum: %.17g path: %d\n", cs, opt_path);
    return 0;
}
"""


def test_declarations_with_rows_of_pointers_are_found():
    text = "void f(float *in, float **conn, int n) { double *rows[8]; double **restrict A; const double *const *B; }"
    assert pointer_row_arrays(text) == {"conn", "rows", "A", "B"}


def test_a_conditional_bound_is_one_term_of_a_flattened_subscript():
    layout = Layout(0, ("(n1 + 1)", "1"))
    assert layout.c_subscripts(["s", "(n1 >= 1) ? n1 : 0"]) == ["(s) * ((n1 + 1)) + ((n1 >= 1) ? n1 : 0)"]
    assert layout.c_subscripts(["s", "c3 + 1"]) == ["(s) * ((n1 + 1)) + c3 + 1"]


@pytest.mark.parametrize("threads", ["1", "2"])
def test_rows_out_of_order_shared_or_inside_another_array_run_the_original(tmp_path, threads):
    src, out = tmp_path / "rows.c", tmp_path / "rows.opt.c"
    src.write_text("int opt_path = -1;\n" + PROGRAM)
    assert main(["optimize", str(src), "-q", "-o", str(out)]) == 0
    text = out.read_text()
    assert "_in_order" in text and "#pragma omp" in text
    # (the test's own marker: which version of the region ran)
    head = re.search(r"^(\s*)if \((.*_in_order.*)\) \{$", text, re.M)
    assert head is not None
    text = text.replace(head.group(0), f"{head.group(1)}if ((opt_path = ({head.group(2)}))) {{")
    out.write_text(text)
    subprocess.run(["gcc", "-O2", str(src), "-o", str(tmp_path / "ref")], check=True)
    subprocess.run(["gcc", "-O2", "-fopenmp", str(out), "-o", str(tmp_path / "opt")], check=True)
    env = {"OMP_NUM_THREADS": threads, "PATH": "/usr/bin:/bin"}
    for layout, ran_optimized in (("0", 1), ("1", 0), ("2", 0), ("3", 0)):
        args = ["37", "29", layout]
        want = subprocess.run([str(tmp_path / "ref"), *args], capture_output=True, text=True, check=True).stdout
        got = subprocess.run([str(tmp_path / "opt"), *args], capture_output=True, text=True, check=True,
                             env=env).stdout
        assert got.split(" path:")[0] == want.split(" path:")[0], layout
        assert got.split("path: ")[1].strip() == str(ran_optimized), layout


def test_rows_of_pointers_below_rows_of_pointers_are_refused_in_one_line(tmp_path, capsys):
    src = tmp_path / "deep.c"
    src.write_text("void f(double ***A, double *B, int n)\n{\n#pragma scop\n  for (int i = 0; i < n; i++)\n"
                   "    for (int j = 0; j < n; j++)\n      for (int k = 0; k < n; k++)\n"
                   "        A[i][j][k] = A[i][j][k] + B[k];\n#pragma endscop\n}\n")
    assert main(["optimize", str(src), "-o", str(tmp_path / "out.c")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"{src}:3: the rows of 'A' are pointers and it has 3 subscripts: polytune checks rows of "
                   "pointers in two-dimensional arrays only"]
    assert not (tmp_path / "out.c").exists()
