"""Regions without pragmas (detect.py): in a file with no '#pragma scop', or with --auto, the maximal loop
nests the model accepts are optimized where worth it; each nest found or missed is a remark at its line
(stderr and --report), and the output gives the original's results at 1 and 2 threads."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import compile_run
from test_random_nests import run_main

FILE = """#include <stdio.h>
#include <stdlib.h>
#define N 40
static double A[N][N], B[N][N], C[N][N];

static void kernels(int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      C[i][j] = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[k][j];
  int t = 0;
  while (t < 3) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        B[i][j] = (A[i - 1][j] + A[i + 1][j]) * 0.5;
    t++;
  }
  for (int i = 0; i < n; i++) { A[i][0] = i; } for (int i = 0; i < n; i++) B[i][1] = i;
  for (int i = 0; i < n; i++)
#if 1
    A[i][2] = B[i][2] + 1;
#endif
}

int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) { A[i][j] = (i * 3 + j) % 7; B[i][j] = (i + 5 * j) % 11; }
  kernels(N);
  double s = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      printf("%g %g\\n", C[i][j], B[i][j]);
      s += A[i][j];
    }
  printf("%g\\n", s);
  return 0;
}
"""


def optimize(tmp_path: Path, text: str, *options: str) -> tuple[str, dict]:
    """(stderr, report) of optimizing *text*; the output gives the original's results at 1 and 2 threads."""
    src, out, rep = tmp_path / "prog.c", tmp_path / "prog.opt.c", tmp_path / "report.json"
    src.write_text(text)
    rc, err = run_main(["optimize", str(src), "-o", str(out), "--report", str(rep), *options])
    assert rc == 0, err
    ref = compile_run(str(src), str(tmp_path / "ref"), [], openmp=False)
    for t in (1, 2):
        assert compile_run(str(out), str(tmp_path / "opt"), [], openmp=True, threads=t) == ref, out.read_text()
    return err.replace(f"{src}:", ""), json.loads(rep.read_text())


def test_a_file_without_pragmas_has_its_loop_nests_found_and_optimized(tmp_path):
    err, report = optimize(tmp_path, FILE)
    found = {r["line"]: r["message"] for r in report["regions_found"]}
    # the two adjacent nests of kernels() are one region; the stencil inside the while loop is found
    assert found[7].startswith("loop nest of lines 7-13 (2 statements)"), found
    assert 16 in found and found[16].startswith("loop nest of lines 16-18"), found
    assert 29 in found  # main()'s initialization (POLYTUNE_PARALLEL_WORK=0: any work is enough)
    assert len(report["scops"]) == len(found) and "polytune: " in err and "found without pragmas" in err
    assert "7: found: loop nest of lines 7-13" in err


def test_each_nest_not_taken_is_a_missed_remark_with_its_reason_at_its_line(tmp_path):
    err, report = optimize(tmp_path, FILE)
    missed = {r["line"]: r["message"] for r in report["missed"]}
    assert "'while' loop not optimized" in missed[15], missed
    assert "shares its first line with other code" in missed[21], missed
    assert "preprocessor lines inside the loop nest" in missed[22], missed
    assert "call to 'printf'" in missed[33] and "(line 35)" in missed[33], missed
    for line, message in missed.items():
        assert f"{line}: missed: {message}" in err


def test_the_inner_loops_of_a_refused_nest_are_remarked_once_for_the_same_reason(tmp_path):
    text = FILE.replace("      s += A[i][j];", "      s += A[i][j];\n      printf(\"%g\\n\", s);")
    _, report = optimize(tmp_path, text)
    printf = [r for r in report["missed"] if "printf" in r["message"]]
    assert [r["line"] for r in printf] == [33], printf


def test_regions_with_pragmas_keep_todays_behaviour(tmp_path):
    text = FILE.replace("  for (int i = 0; i < n; i++)\n    for (int j = 0; j < n; j++)\n      C[i][j] = 0;",
                        "#pragma scop\n  for (int i = 0; i < n; i++)\n    for (int j = 0; j < n; j++)\n"
                        "      C[i][j] = 0;\n#pragma endscop", 1)
    err, report = optimize(tmp_path, text)
    assert len(report["scops"]) == 1 and "missed" not in report and "found:" not in err


def test_auto_also_finds_the_nests_outside_the_pragma_regions(tmp_path):
    text = FILE.replace("  for (int i = 0; i < n; i++)\n    for (int j = 0; j < n; j++)\n      C[i][j] = 0;",
                        "#pragma scop\n  for (int i = 0; i < n; i++)\n    for (int j = 0; j < n; j++)\n"
                        "      C[i][j] = 0;\n#pragma endscop", 1)
    _, report = optimize(tmp_path, text, "--auto")
    lines = [s["lines"][0] for s in report["scops"]]
    assert lines[0] == 7 and 12 in lines and len(lines) == 1 + len(report["regions_found"])


def test_an_iterator_read_after_its_loop_is_a_missed_nest_not_an_error(tmp_path):
    text = """#include <stdio.h>
double A[100][100];
int main(void) {
  int i, j;
  for (i = 0; i < 100; i++)
    for (j = 0; j < 100; j++)
      A[i][j] = i + j;
  printf("%d %g\\n", i, A[3][4]);
  return 0;
}
"""
    _, report = optimize(tmp_path, text)
    assert [r["line"] for r in report["missed"]] == [5]
    assert "loop iterator 'i' is read after the region" in report["missed"][0]["message"]


@pytest.mark.parametrize("options", [[], ["--no-tile"], ["--schedule", "outer"], ["--no-parallel"]],
                         ids=lambda o: " ".join(o) or "default")
def test_found_regions_give_the_original_results_under_other_options(tmp_path, options):
    optimize(tmp_path, FILE, *options)


def test_statement_extents_follow_c_syntax():
    from polytune.functions import Token, statement_end
    code = "if ( a ) for ( i ; i ; i ) x ; else do { y ; } while ( b ) ; z ;"
    tokens = [Token(t, 1, 0, k + 1) for k, t in enumerate(code.split())]
    assert tokens[statement_end(tokens, 0)].column == code.split().index("z")  # the ';' before z
    assert statement_end(tokens, 4) == code.split().index("x") + 1


def test_a_function_with_gnu_attributes_is_read_and_its_nest_found(tmp_path):
    text = """#include <stdio.h>
static double A[300][300];
__attribute__((noinline)) static void __attribute__((hot)) fill(int n, double * __restrict__ a) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i][j] = a[i] + j;
}
int main(void) {
  double a[300];
  for (int i = 0; i < 300; i++) a[i] = i % 3;
  fill(300, a);
  printf("%g\\n", A[299][5] + A[3][4]);
  return 0;
}
"""
    _, report = optimize(tmp_path, text)
    assert [r["line"] for r in report["regions_found"]][:1] == [4], report

