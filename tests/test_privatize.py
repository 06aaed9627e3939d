"""Scalars written inside a scop: privatized (OpenMP lastprivate) exactly when that is what the sequential
program computes, kept shared (and the loop sequential) otherwise."""
from __future__ import annotations

import re

import pytest
from conftest import compile_run

from polytune.cli import main

HEAD = """#include <stdio.h>
#include <math.h>
#define N 37
static double A[N], B[N], s, t;
static void kernel(void)
{
  int i, j;
#pragma scop
"""
TAIL = """#pragma endscop
}
int main(void)
{
  int i;
  for (i = 0; i < N; i++) { A[i] = (i * 7 % 11) - 3.5; B[i] = 0.5 * i; }
  s = 1.25; t = -2.0;
  kernel();
  double cs = s + 3 * t;
  for (i = 0; i < N; i++) cs += (i + 1) * B[i];
  printf("checksum: %.17g\\n", cs);
  return 0;
}
"""

CASES = {
    # a temporary written first in every iteration: private, and the last iteration's value is s's final value
    "temporary": ("for (i = 0; i < N; i++) {\n  s = A[i] * 2.0;\n  for (j = 0; j < N; j++)\n"
                  "    s = fmax(s, A[j] - i);\n  B[i] = s + 1.0;\n}\n", ["s"]),
    # two temporaries, as in a row softmax
    "two": ("for (i = 0; i < N; i++) {\n  s = 0.0;\n  t = A[i];\n  for (j = 0; j < N; j++)\n"
            "    s += A[j] * t;\n  B[i] = s / t;\n}\n", ["s", "t"]),
    # a running sum: the value flows between iterations, the loop stays sequential
    "carried": ("for (i = 0; i < N; i++) {\n  s += A[i];\n  B[i] = s;\n}\n", None),
    # read before written in each iteration: the previous iteration's value
    "read_first": ("for (i = 0; i < N; i++) {\n  B[i] = s;\n  s = A[i];\n}\n", None),
    # written only where i < 5: the loop may be privatized only over the iterations that write s (isl
    # gives those statements their own loop), so the last iteration's value is still the final one
    "partial": ("for (i = 0; i < N; i++) {\n  if (i < 5) {\n    s = A[i];\n    B[i] = s * s;\n  }\n"
                "  A[i] = A[i] + 1.0;\n}\n", "any"),
    # only read inside the loop: no privatization needed, the loop is parallel anyway
    "read_only": ("for (i = 0; i < N; i++)\n  B[i] = A[i] * s;\n", []),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_scalar_privatization(tmp_path, name):
    body, private = CASES[name]
    src = tmp_path / f"{name}.c"
    src.write_text(HEAD + body + TAIL)
    out = tmp_path / f"{name}.opt.c"
    assert main(["optimize", str(src), "-o", str(out)]) == 0
    code = out.read_text()
    pragmas = re.findall(r"#pragma omp parallel for(.*)", code)
    if private is None:
        assert not pragmas, pragmas
    elif private != "any":
        assert len(pragmas) == 1
        got = re.findall(r"lastprivate\((.*)\)", pragmas[0])
        assert (got[0].split(", ") if got else []) == private
    ref = compile_run(str(src), str(tmp_path / "ref"), [], openmp=False)
    for threads in (1, 2, 3):
        assert compile_run(str(out), str(tmp_path / "opt"), [], openmp=True, threads=threads) == ref
