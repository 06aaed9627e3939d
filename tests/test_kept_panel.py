"""A product in a batch loop keeps its packed B panel from one batch iteration to the next (emit/blis.py
`_kept_panel`): only where B's operands read neither the batch loops nor anything the region writes, and
never from one run of the region to the next (B may change between calls)."""
from __future__ import annotations

import pytest
from conftest import compile_run

from polytune.pipeline import OptimizeOptions, analyze, generate

FLAGS = ["-ffp-contract=off"]

# doitgen's shape in a function called twice, C4 changed between the calls; MODE picks what B reads
BATCH = """#include <stdio.h>
#define R 7
#define Q 37
#define P 45
static double A[R][Q][P], C4[P][P], S[R][Q][P], D[R][P][P], alpha = 1.0;
static void product(double A[R][Q][P], double C4[P][P], double S[R][Q][P], double D[R][P][P])
{
#pragma scop
  for (int r = 0; r < R; r++) {
    for (int q = 0; q < Q; q++)
      for (int p = 0; p < P; p++)
        S[r][q][p] = 0.0;
    for (int q = 0; q < Q; q++)
      for (int p = 0; p < P; p++)
        for (int s = 0; s < P; s++)
          S[r][q][p] += A[r][q][s] * OPERAND;
    WRITE
  }
#pragma endscop
}
int main(void) {
  for (int r = 0; r < R; r++) for (int q = 0; q < Q; q++) for (int p = 0; p < P; p++)
    A[r][q][p] = ((r * 5 + q * 3 + p) % 11) / 8.0;
  for (int r = 0; r < R; r++) for (int s = 0; s < P; s++) for (int p = 0; p < P; p++)
    D[r][s][p] = ((r + s * 7 + p * 2) % 13) / 16.0;
  double cs = 0;
  for (int call = 0; call < 2; call++) {
    for (int s = 0; s < P; s++) for (int p = 0; p < P; p++) C4[s][p] = ((s * 3 + p + 5 * call) % 9) / 4.0;
    product(A, C4, S, D);
    for (int r = 0; r < R; r++) for (int q = 0; q < Q; q++) for (int p = 0; p < P; p++)
      cs += S[r][q][p] * ((r + q + p + call) % 7);
  }
  printf("%.17g %.17g\\n", cs, alpha);
  return 0;
}
"""
MODES = {
    "read-only": ("C4[s][p]", "", True),
    "by-batch": ("D[r][s][p]", "", False),  # B changes with the batch loop
    "written": ("alpha * C4[s][p]", "alpha = alpha * 0.5 + 0.25;", False),  # a scalar each batch iteration changes
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_batch_product_keeps_its_b_panel_only_where_b_stays_the_same(mode, tmp_path):
    operand, write, kept = MODES[mode]
    src = tmp_path / "batch.c"
    src.write_text(BATCH.replace("OPERAND", operand).replace("WRITE", write))
    program = analyze(str(src))
    text = generate(program, OptimizeOptions()).text
    assert "packed blocks" in text or not kept  # (a batch loop that writes alpha is no contraction's today)
    assert ("_Brun" in text) == kept
    expected = compile_run(str(src), str(tmp_path / "ref"), FLAGS, True)
    out = tmp_path / "opt.c"
    out.write_text(text)
    for threads in (1, 2, 3):
        assert compile_run(str(out), str(tmp_path / "opt"), FLAGS, True, threads=threads) == expected, threads
