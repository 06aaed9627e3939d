"""Data-dependent conditions (`if (x[i] > 0) y[i] = ...`) as pet and PPCG model them: the statement runs
under its condition, reads what the condition reads, and its writes are may-writes, which kill nothing.
Every transformation must keep them apart from definite writes (privatization, expansion, lastprivate)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import islpy as isl
import pytest

from polytune.cli import main
from polytune.pipeline import analyze


def _optimized_matches(tmp_path: Path, text: str, options: tuple[str, ...] = ()) -> str:
    """Optimize *text*, run both programs (1 and 2 threads): the same output; the optimized text."""
    src = tmp_path / "p.c"
    src.write_text(text)
    out = tmp_path / "p.opt.c"
    assert main(["optimize", str(src), "-o", str(out), *options]) == 0
    subprocess.run(["gcc", "-O2", str(src), "-o", str(tmp_path / "ref"), "-lm"], check=True)
    subprocess.run(["gcc", "-O2", "-fopenmp", str(out), "-o", str(tmp_path / "opt"), "-lm"], check=True)
    want = subprocess.run([str(tmp_path / "ref")], capture_output=True, text=True, check=True).stdout
    for threads in ("1", "2"):
        got = subprocess.run([str(tmp_path / "opt")], capture_output=True, text=True, check=True,
                             env=dict(os.environ, OMP_NUM_THREADS=threads)).stdout
        assert got == want, threads
    return out.read_text()


HEAD = "#include <stdio.h>\n#define N 61\ndouble x[N][N], y[N][N], z[N], w[N];\nint idx[N];\n"
MAIN = """int main(void) {{
  for (int i = 0; i < N; i++) {{ z[i] = (i % 5) * 0.5; w[i] = (i % 3) - 1.0; idx[i] = 0;
    for (int j = 0; j < N; j++) {{ x[i][j] = ((i * 7 + j * 3) % 11) * 0.1 - 0.4; y[i][j] = (i + j) % 2; }} }}
  {call}
  double s = 0;
  for (int i = 0; i < N; i++) {{
    s += z[i] * (i % 7) + w[i] + idx[i];
    for (int j = 0; j < N; j++) s += y[i][j] * (j % 3);
  }}
  printf("%.17g\\n", s);
  return 0;
}}
"""

PROGRAMS = {
    "if_else_clamp": """static void f(int n) {
#pragma scop
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (x[i][j] > 0.3) y[i][j] = x[i][j] * 2.0; else y[i][j] = -x[i][j];
#pragma endscop
}""",
    "relu_in_place": """static void f(int n) {
#pragma scop
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (x[i][j] < 0) x[i][j] = 0;
#pragma endscop
}""",
    "guarded_column_sums_with_affine_conjunct": """static void f(int n) {
#pragma scop
  for (int i = 0; i < n; i++) {
    z[i] = 0.0;
    for (int j = 0; j < n; j++)
      if (x[j][i] > 0.2 && j > 2)
        z[i] += x[j][i];
  }
#pragma endscop
}""",
    "recurrence_on_the_previous_element": """static void f(int n) {
#pragma scop
  for (int i = 1; i < n; i++)
    if (z[i - 1] > 1.0)
      z[i] = z[i] * 0.5 + z[i - 1] * 0.25;
#pragma endscop
}""",
    # a scalar written only under the condition: its reads may see the value from before (no private copy)
    "scalar_may_write_keeps_its_old_value": """static void f(int n) {
  double s = 0.5;
#pragma scop
  for (int i = 0; i < n; i++) {
    if (w[i] > 0) s = z[i];
    y[i][0] = s;
  }
#pragma endscop
  w[0] = s;
}""",
    # reset every row, accumulated under a condition: private to the row loop (lastprivate)
    "conditional_accumulation_lastprivate": """static void f(int n) {
  double s;
#pragma scop
  for (int i = 0; i < n; i++) {
    s = 0.0;
    for (int j = 0; j < n; j++)
      if (x[i][j] > 0) s += x[i][j];
    z[i] = s;
  }
#pragma endscop
  w[1] = s;
}""",
    # an array written only under a condition in each iteration: not private to the loop
    "array_may_write_not_private": """static void f(int n) {
#pragma scop
  for (int r = 0; r < n; r++) {
    for (int p = 0; p < n; p++)
      if (x[r][p] > 0.2) w[p] = x[r][p];
    for (int p = 0; p < n; p++)
      y[r][p] = w[p] * 0.5;
  }
#pragma endscop
}""",
    # argmin: the branch writes what the condition reads (evaluated once, into a variable)
    "argmin_evaluates_the_condition_once": """static void f(int n) {
#pragma scop
  for (int i = 0; i < n; i++) {
    double best = 1e30;
    int arg = 0;
    for (int j = 0; j < n; j++)
      if (x[i][j] < best) {
        best = x[i][j];
        arg = j;
      }
    idx[i] = arg;
    z[i] = best;
  }
#pragma endscop
}""",
    "else_branch_writes_what_the_condition_reads": """static void f(int n) {
#pragma scop
  for (int i = 0; i < n; i++)
    if (z[i] > 1.0) { y[i][0] = z[i]; } else { z[i] = 2.0; y[i][1] = z[i]; }
#pragma endscop
}""",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_data_dependent_condition_gives_the_original_results(name, tmp_path):
    _optimized_matches(tmp_path, HEAD + PROGRAMS[name] + "\n" + MAIN.format(call="f(N);"))


def test_a_may_write_kills_nothing(tmp_path):
    """S0 writes A[i], S1 may overwrite it, S2 reads it: the value may come from either (isl may-source)."""
    src = tmp_path / "k.c"
    src.write_text(HEAD + """void f(int n) {
#pragma scop
  for (int i = 0; i < n; i++) {
    z[i] = 1.0;
    if (w[i] > 0) z[i] = 2.0;
    y[i][0] = z[i];
  }
#pragma endscop
}
""")
    a = analyze(str(src)).scops[0]
    flow = a.deps.flow.intersect_params(a.scop.context)
    want = isl.UnionMap("[n] -> { S0[i] -> S2[i] : 0 <= i < n; S1[i] -> S2[i] : 0 <= i < n }")
    assert flow.intersect_range(isl.UnionSet("[n] -> { S2[i] }")).is_equal(want.align_params(flow.get_space()))
    s1 = a.scop.statement("S1")
    assert [x.may for x in s1.writes] == [True] and not a.scop.statement("S0").writes[0].may


def test_the_data_dependent_row_loop_stays_parallel(tmp_path):
    text = _optimized_matches(tmp_path, HEAD + PROGRAMS["if_else_clamp"] + "\n" + MAIN.format(call="f(N);"))
    assert "#pragma omp parallel for" in text and "if (x[" in text


def test_a_condition_whose_branch_writes_what_it_reads_is_evaluated_once(tmp_path):
    """Several statements under a condition, one writing the element it reads (in a loop): C reads it once,
    before the branch; the model as well (a variable of the region), and the results are the original's."""
    text = _optimized_matches(tmp_path, HEAD + """void f(int n) {
#pragma scop
  for (int i = 0; i < n; i++)
    if (x[i][i] > 0) {
      y[i][0] = x[i][i];
      for (int j = 0; j < n; j++)
        x[j][j] = x[j][j] * 0.5 - 0.1;
    }
#pragma endscop
}
""" + MAIN.format(call="f(N);"))
    assert "_pt_cond0 = (x[" in text


def test_an_if_else_split_into_two_guarded_statements_is_printed_as_one_if_else(tmp_path):
    """extract models the branches as two statements under c and !(c); printed next to each other they are
    one `if (c) { ... } else { ... }` again (one test of c, one branch), and the results are the original's."""
    text = _optimized_matches(tmp_path, HEAD + PROGRAMS["if_else_clamp"] + "\n" + MAIN.format(call="f(N);"))
    assert "if (x[c0][c1] > 0.3) { y[c0][c1] = x[c0][c1] * 2.0; } else { y[c0][c1] = -x[c0][c1]; }" in text
    assert "!(x[" not in text


def _if(cond: str, body: str):
    from pycparser import c_parser
    return c_parser.CParser().parse(f"void f(void) {{ if ({cond}) {body}; }}").ext[0].body.block_items[0]


@pytest.mark.parametrize("first, second, joined", [
    (_if("a[i] > t", "b[i] = 1"), _if("!(a[i] > t)", "b[i] = 2"), "if (a[i] > t) { b[i] = 1; } else { b[i] = 2; }"),
    (_if("a[i] > t", "a[i] = 0"), _if("!(a[i] > t)", "b[i] = 2"), None),  # the branch changes what c reads
    (_if("a[i] > t", "t++"), _if("!(a[i] > t)", "b[i] = 2"), None),
    (_if("a[i] > t", "b[i] = 1"), _if("!(a[i] >= t)", "b[i] = 2"), None),  # not c's negation
    (_if("a[i] > t", "b[i] = 1"), _if("a[i] <= t", "b[i] = 2"), None),  # (its complement, not written as !(c))
    (_if("a[i] > t", "if (u) b[i] = 1"), _if("!(a[i] > t)", "b[i] = 2"),
     "if (a[i] > t) { if (u) b[i] = 1; } else { b[i] = 2; }"),  # braces: the else stays the outer if's
])
def test_else_pair_joins_only_a_condition_and_its_negation_whose_branch_leaves_it_unchanged(first, second, joined):
    from pycparser import c_generator

    from polytune.emit.printer import else_pair
    assert else_pair(c_generator.CGenerator(), first, second) == joined
