"""Scratch arrays written inside a scop: a private copy per thread makes the outer loop parallel exactly
when every value the array carries stays within one iteration and the last iteration leaves the array as
the sequential loop does; otherwise the array stays shared and the loop sequential."""
from __future__ import annotations

import re

import pytest
from conftest import compile_run

from polytune.cli import main

HEAD = """#include <stdio.h>
#define R 23
#define P 19
static double A[R][P][P], C[P][P], sum[P], W[R][P];
static void kernel(int nr, int np)
{
  int r, q, p, s;
#pragma scop
"""
TAIL = """#pragma endscop
}
int main(void)
{
  int r, q, p;
  for (r = 0; r < R; r++) for (q = 0; q < P; q++) for (p = 0; p < P; p++) A[r][q][p] = ((r + 3 * q + 7 * p) % 13) - 4.5;
  for (q = 0; q < P; q++) for (p = 0; p < P; p++) { C[q][p] = ((q * p) % 7) * 0.25; }
  for (p = 0; p < P; p++) sum[p] = -1.0 - p;
  kernel(R, P);
  double cs = 0.0;
  for (r = 0; r < R; r++) for (q = 0; q < P; q++) for (p = 0; p < P; p++) cs += (1 + (r + q + p) % 5) * A[r][q][p];
  for (p = 0; p < P; p++) cs += (p + 1) * 3.0 * sum[p];
  for (r = 0; r < R; r++) for (p = 0; p < P; p++) cs += (r + 2) * W[r][p];
  printf("checksum: %.17g\\n", cs);
  return 0;
}
"""

DOITGEN = ("for (r = 0; r < nr; r++)\n  for (q = 0; q < np; q++) {\n    for (p = 0; p < np; p++) {\n"
           "      sum[p] = 0.0;\n      for (s = 0; s < np; s++)\n        sum[p] += A[r][q][s] * C[s][p];\n    }\n"
           "    for (p = 0; p < np; p++)\n      A[r][q][p] = sum[p];\n  }\n")

CASES = {
    # doitgen: sum[p] is scratch of each r iteration: the r loop is parallel with a private copy
    "doitgen": (DOITGEN, ["sum"]),
    # the scratch values of one r iteration are read in the next: sum carries a value, r stays sequential
    "carried": ("for (r = 0; r < nr; r++)\n  for (p = 0; p < np; p++) {\n    W[r][p] = sum[p];\n"
                "    sum[p] = A[r][0][p];\n  }\n", []),
    # the last iteration writes fewer elements than earlier ones: the final values of the others would
    # be lost, so no copy (the loop stays sequential)
    "shrinking": ("for (r = 0; r < nr; r++) {\n  for (p = 0; p < np - r; p++)\n    sum[p] = A[r][0][p];\n"
                  "  for (p = 0; p < np - r; p++)\n    W[r][p] = 2.0 * sum[p];\n}\n", []),
    # the last iteration writes everything (the others write less): a copy would be right, but isl
    # interchanges the loops (p outside, parallel without one); either way the results must be exact
    "growing": ("for (r = 0; r < nr; r++) {\n  for (p = 0; p < r && p < np; p++)\n    sum[p] = A[r][0][p];\n"
                "  for (p = 0; p < r && p < np; p++)\n    W[r][p] = 2.0 * sum[p];\n}\n", None),
    # a read of an element the iteration has not written (its value comes from before the loop)
    "exposed": ("for (r = 0; r < nr; r++) {\n  for (p = 1; p < np; p++)\n    sum[p] = A[r][0][p];\n"
                "  for (p = 0; p < np; p++)\n    W[r][p] = sum[p];\n}\n", []),
}


def _copies(code: str) -> list[str]:
    return sorted(set(re.findall(r"__typeof__\((\w+)\[0\]\) \*const \w+_copy", code)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_array_privatization_is_exactly_the_sequential_result(tmp_path, name, monkeypatch):
    # (without array expansion, which makes doitgen's `sum` a scratch array of its own indexed by r and q:
    # tests/test_expand_arrays.py; here the private copies alone)
    monkeypatch.setenv("POLYTUNE_EXPANSION_LIMIT", "0")
    body, private = CASES[name]
    src = tmp_path / f"{name}.c"
    src.write_text(HEAD + body + TAIL)
    out = tmp_path / f"{name}.opt.c"
    assert main(["optimize", str(src), "-o", str(out)]) == 0
    code = out.read_text()
    if private is not None:
        assert _copies(code) == private
    if private:
        # the outermost loop is the parallel one, in one parallel region
        assert code.count("#pragma omp parallel\n") == 1 and "#pragma omp for" in code
    ref = compile_run(str(src), str(tmp_path / "ref"), [], openmp=False)
    for threads in (1, 2, 3):
        assert compile_run(str(out), str(tmp_path / "opt"), [], openmp=True, threads=threads) == ref


def test_array_privatization_can_be_turned_off(tmp_path):
    from polytune.pipeline import analyze
    from polytune.poly.choice import ScheduleChoice, schedule_with
    src = tmp_path / "d.c"
    src.write_text(HEAD + DOITGEN + TAIL)
    a = analyze(str(src)).scops[0]
    on = schedule_with(a.scop, a.deps, ScheduleChoice())
    off = schedule_with(a.scop, a.deps, ScheduleChoice(privatize_arrays=False))
    assert [c.name for cs in on.private_arrays.values() for c in cs] == ["sum"]
    assert off.private_arrays == {}
