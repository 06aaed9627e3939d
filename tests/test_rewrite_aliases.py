"""Pointers defined before a region (rewrite/aliases.py): resolved to the array they point into, or the
region refused with one line; never taken for a separate array. Issue 33's third reproduction as written,
under every option set of tests/test_reliability_options.py at 1, 2 and 4 threads (parallel code forced on
by conftest's POLYTUNE_PARALLEL_WORK=0)."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import compile_run
from test_random_nests import run_main
from test_reliability_options import EACH, MATRIX

HERE = Path(__file__).parent
REPRO = (HERE / "data" / "realc" / "issue33_pointer_alias.c").read_text()


def _name(options: list[str]) -> str:
    return " ".join(options) or "default"


def same_output(tmp_path: Path, text: str, options: list[str] = (), threads=(1, 2, 4)) -> str:
    """Optimize *text* with *options*; the output's results at each thread count equal the original's.
    Returns polytune's stderr."""
    src, out = tmp_path / "prog.c", tmp_path / "prog.opt.c"
    src.write_text(text)
    rc, err = run_main(["optimize", str(src), "-o", str(out), *options])
    assert rc == 0, err
    ref = compile_run(str(src), str(tmp_path / "ref"), [], openmp=False)
    for t in threads:
        got = compile_run(str(out), str(tmp_path / "opt"), [], openmp=True, threads=t)
        assert got == ref, f"{_name(list(options))} at {t} thread(s):\n{out.read_text()}"
    return err


def refused(tmp_path: Path, text: str) -> str:
    """The one line of a refusal (exit 2, no output file)."""
    src, out = tmp_path / "prog.c", tmp_path / "prog.opt.c"
    src.write_text(text)
    rc, err = run_main(["optimize", str(src), "-o", str(out)])
    lines = err.splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith(f"{src}:"), (rc, err)
    assert not out.exists()
    return lines[0][len(str(src)) + 1:]


def test_issue_33_repro_3_prints_the_original_values(tmp_path):
    ref = compile_run(str(HERE / "data" / "realc" / "issue33_pointer_alias.c"), str(tmp_path / "ref"), [],
                      openmp=False)
    assert ref.splitlines()[3:5] == ["2.5625", "2.6875"]
    err = same_output(tmp_path, REPRO)
    assert "'p' points into 'B'" in err


@pytest.mark.parametrize("options", EACH)
def test_issue_33_repro_3_under_each_option(tmp_path, options):
    same_output(tmp_path, REPRO, options)


@pytest.mark.slow
@pytest.mark.parametrize("options", MATRIX, ids=_name)
def test_issue_33_repro_3_under_the_option_matrix(tmp_path, options):
    same_output(tmp_path, REPRO, options)


PROGRAM = """#include <stdio.h>
#include <stdlib.h>
double B[64], A[8][16];
int main(int argc, char **argv) {
  int n = 40, k = argc > 5 ? 1 : 3;
  DEFINE
  for (int q = 0; q < 64; q++) B[q] = q % 7;
  for (int q = 0; q < 128; q++) A[q / 16][q % 16] = q % 5;
#pragma scop
  for (int t = 0; t < 4; t++)
    for (int i = 1; i < n - 4; i++)
      BODY;
#pragma endscop
  for (int q = 0; q < 64; q++) printf("%.17g\\n", B[q]);
  for (int q = 0; q < 128; q++) printf("%.17g\\n", A[q / 16][q % 16]);
  return 0;
}
"""


@pytest.mark.parametrize("define, body", [
    ("double *p = B + k;", "p[i] = (B[i - 1] + B[i + 1]) * 0.5"),
    ("double *p = &B[k];", "B[i] = (p[i - 1] + p[i + 1]) * 0.5"),
    ("double *p = A[2];", "p[i % 16] = (A[2][(i + 1) % 16] + A[3][i % 16]) * 0.5"),
    ("double *p = A[1] + 1;", "p[i % 15] = (A[1][(i + 1) % 16] + A[2][i % 16]) * 0.5"),
    ("double *p; p = B;", "p[i] = (B[i - 1] + p[i + 1]) * 0.5"),
    ("double *r = B; double *p = r + 1;", "p[i] = (r[i - 1] + B[i + 1]) * 0.5"),
], ids=["plus-offset", "address-of-element", "row", "row-plus-offset", "assigned-once", "chain"])
def test_a_pointer_into_an_array_is_resolved_to_that_array(tmp_path, define, body):
    err = same_output(tmp_path, PROGRAM.replace("DEFINE", define).replace("BODY", body), threads=(1, 2))
    assert "points into" in err


def test_a_pointer_from_malloc_stays_an_array_of_its_own(tmp_path):
    text = PROGRAM.replace("DEFINE", "double *p = malloc(64 * sizeof(double)); for (int q = 0; q < 64; q++) "
                                     "p[q] = q;").replace("BODY", "B[i] = (p[i - 1] + p[i + 1]) * 0.5")
    err = same_output(tmp_path, text, threads=(1, 2))
    assert "points into" not in err


@pytest.mark.parametrize("define, body, why", [
    ("double *p = B; if (argc > 3) p = &A[0][0];", "p[i] = (B[i - 1] + B[i + 1]) * 0.5",
     "'p' may point into another array"),
    ("double *p = B + k; k = 2;", "p[i] = (B[i - 1] + B[i + 1]) * 0.5",
     "'p' points into 'B' at an offset that changes ('k'"),
    ("double *p = B; double **pp = &p;", "p[i] = (B[i - 1] + B[i + 1]) * 0.5",
     "'p' may point into another array (line 6: &p)"),
], ids=["two-targets", "moving-offset", "address-taken"])
def test_a_pointer_that_may_point_elsewhere_is_refused_at_its_use(tmp_path, define, body, why):
    line = refused(tmp_path, PROGRAM.replace("DEFINE", define).replace("BODY", body))
    assert line.startswith("12: ") and why in line, line
