"""Array expansion (poly/expand.py, `array_webs`): a temporary array rewritten and read within one iteration of
outer loops (doitgen's `sum[p]`) becomes an array indexed by those loops, where that makes a contraction of
the product inside it or a better schedule; the output stays the original's bit for bit, and the array keeps
its final values after the region."""
from __future__ import annotations

import json

import pytest
from conftest import compile_run
from progen import scratch_contraction_program

from polytune.cli import main
from polytune.pipeline import analyze
from polytune.poly.expand import array_webs, expand_webs

HEAD = """#include <stdio.h>
#ifndef NR
#define NR 9
#endif
#ifndef NQ
#define NQ 13
#endif
#ifndef NP
#define NP 21
#endif
static double A[NR][NQ][NP], C4[NP][NP], sum[NP + 3], t[NP], y[NP];
static void kernel(int nr, int nq, int np)
{
  int r, q, p, s;
#pragma scop
"""
TAIL = """#pragma endscop
}
int main(void)
{
  int r, q, p;
  for (r = 0; r < NR; r++)
    for (q = 0; q < NQ; q++)
      for (p = 0; p < NP; p++) A[r][q][p] = ((r * 7 + q * 3 + p) % 11) / 8.0 - 0.5;
  for (q = 0; q < NP; q++)
    for (p = 0; p < NP; p++) C4[q][p] = ((q * 5 + p * 2) % 13) / 16.0;
  for (p = 0; p < NP + 3; p++) sum[p] = -1.5 * p;
  for (p = 0; p < NP; p++) { t[p] = 0.25 * p; y[p] = 0; }
  kernel(NR, NQ, NP);
  double cs = 0;
  for (r = 0; r < NR; r++)
    for (q = 0; q < NQ; q++)
      for (p = 0; p < NP; p++) cs += A[r][q][p] * (r + 2 * q + 3 * p + 1);
  for (p = 0; p < NP + 3; p++) cs += sum[p] * (p + 7);
  for (p = 0; p < NP; p++) cs += t[p] * (p + 3) + y[p] * (p + 5);
  printf("checksum: %.17g\\n", cs);
  return 0;
}
"""
# PolyBench's doitgen with run-time sizes; `sum` (3 elements longer than written) is printed after the region
DOITGEN = """for (r = 0; r < nr; r++)
  for (q = 0; q < nq; q++) {
    for (p = 0; p < np; p++) {
      sum[p] = 0.0;
      for (s = 0; s < np; s++)
        sum[p] += A[r][q][s] * C4[s][p];
    }
    for (p = 0; p < np; p++)
      A[r][q][p] = sum[p];
  }
"""
# only the first np - 2 elements of `sum` are rewritten: the rest keep the values it had before the region
HALF = DOITGEN.replace("p < np; p++)", "p < np - 2; p++)")
# `t` already has an element per iteration of the loop around its uses: nothing to expand
INDEXED = """for (p = 0; p < np; p++) {
  t[p] = 0.0;
  for (s = 0; s < np; s++)
    t[p] += C4[p][s] * A[0][0][s];
  for (s = 0; s < np; s++)
    y[s] += C4[p][s] * t[p];
}
"""
# `t` carries its values from one r to the next (and from before the region): not expandable
CARRIED = """for (r = 0; r < nr; r++)
  for (p = 0; p < np; p++)
    t[p] = t[p] * 0.5 + A[r][0][p];
"""

# `t` is rewritten and read within each r, but nothing sums into it: no contraction to make (a time loop's
# scratch rows, benchmarks/unseen/blur.c's `tmp`)
ROWS = """for (r = 0; r < nr; r++) {
  for (p = 0; p < np; p++)
    t[p] = A[r][0][p] * 2.0;
  for (p = 1; p < np - 1; p++)
    A[r][1][p] = t[p - 1] + t[p + 1];
}
"""


def _write(tmp_path, body: str):
    src = tmp_path / "k.c"
    src.write_text(HEAD + body + TAIL)
    return src


def _optimize(tmp_path, src, *extra) -> tuple[str, dict]:
    out, rep = tmp_path / "k.opt.c", tmp_path / "k.json"
    assert main(["optimize", str(src), "-o", str(out), "--report", str(rep), "-q", *extra]) == 0
    return str(out), json.loads(rep.read_text())["scops"][0]


def _same_output(tmp_path, src, out, threads=(1, 2)) -> None:
    expected = compile_run(str(src), str(tmp_path / "orig"), ["-ffp-contract=off"], True)
    for n in threads:
        got = compile_run(out, str(tmp_path / f"opt{n}"), ["-ffp-contract=off"], True, threads=n)
        assert got == expected, n


def test_doitgens_sum_is_expanded_by_r_and_q_and_its_product_becomes_a_contraction(tmp_path):
    src = _write(tmp_path, DOITGEN)
    out, rep = _optimize(tmp_path, src)
    assert rep["expanded"] == ["sum"]
    assert rep["contractions"] == [{"statement": "S1", "rows": "q", "columns": "p", "k": "s", "outer": ["r"]}]
    text = open(out).read()
    # the batch loop r around the three parts, not three nests; one slice of the scratch array per thread
    assert "c_sum_x0_slice[0][c1][c2] = 0.0;" in text
    assert "sum[c" in text and "= sum_x0[" in text  # the final values copied back
    _same_output(tmp_path, src, out)


@pytest.mark.parametrize("sizes", [["-DNR=1", "-DNQ=1", "-DNP=1"], ["-DNR=3", "-DNQ=40", "-DNP=67"]])
def test_doitgen_expanded_prints_the_originals_results_at_odd_sizes(tmp_path, sizes):
    src = _write(tmp_path, DOITGEN)
    out, rep = _optimize(tmp_path, src, *sizes)
    assert rep["expanded"] == ["sum"]
    expected = compile_run(str(src), str(tmp_path / "orig"), ["-ffp-contract=off", *sizes], True)
    for n in (1, 2, 4):
        assert compile_run(out, str(tmp_path / f"opt{n}"), ["-ffp-contract=off", *sizes], True, threads=n) == expected


def test_elements_the_region_does_not_rewrite_keep_their_values(tmp_path):
    src = _write(tmp_path, HALF)
    out, rep = _optimize(tmp_path, src)
    assert rep.get("expanded") == ["sum"]
    _same_output(tmp_path, src, out)


def test_an_array_already_indexed_by_its_loops_is_not_a_candidate(tmp_path):
    a = analyze(str(_write(tmp_path, INDEXED))).scops[0]
    assert [w.scalar for w in array_webs(a.scop, a.deps)] == []


def test_an_array_whose_values_cross_iterations_is_not_a_candidate(tmp_path):
    src = _write(tmp_path, CARRIED)
    a = analyze(str(src)).scops[0]
    assert [w.scalar for w in array_webs(a.scop, a.deps)] == []
    out, _ = _optimize(tmp_path, src)
    _same_output(tmp_path, src, out)


def test_an_array_nothing_sums_into_is_not_a_candidate(tmp_path):
    src = _write(tmp_path, ROWS)
    a = analyze(str(src)).scops[0]
    assert [w.scalar for w in array_webs(a.scop, a.deps)] == []
    out, rep = _optimize(tmp_path, src)
    assert "expanded" not in rep
    _same_output(tmp_path, src, out)


def test_the_web_indexes_the_loops_its_subscripts_do_not_move(tmp_path):
    a = analyze(str(_write(tmp_path, DOITGEN))).scops[0]
    (web,) = array_webs(a.scop, a.deps)
    assert (web.scalar, web.depth, web.ndim, web.index) == ("sum", 2, 1, (0, 1))
    new = expand_webs(a.scop, [web])
    (scratch,) = new.scratch
    assert (scratch.scalar, scratch.ndim, scratch.element) == ("sum", 1, "sum[0]")
    writes = {st.name: [x.array for x in st.accesses if x.is_write] for st in new.statements}
    assert writes == {"S0": [scratch.name], "S1": [scratch.name], "S2": ["A"]}


def _random_scratch(tmp_path, seed: int) -> bool:
    """One random scratch-row product (tests/progen.py scratch_contraction_program) optimized by default and
    with small blocks: every element of C and of the scratch row identical at 1, 2 and 4 threads. Whether
    the scratch row was expanded."""
    prog = scratch_contraction_program(seed)
    src = tmp_path / "k.c"
    src.write_text(prog.source)
    want = compile_run(str(src), str(tmp_path / "orig"), ["-ffp-contract=off"], False)
    expanded = False
    for extra in ([], ["--blocks", "mr=4,nv=1,kc=5,mc=8,nc=16"]):
        out, rep = _optimize(tmp_path, src, *extra)
        expanded |= "t" in rep.get("expanded", ())
        for n in (1, 2, 4):
            got = compile_run(out, str(tmp_path / f"opt{n}"), ["-ffp-contract=off"], True, threads=n)
            assert got == want, (prog.summary, extra, n)
    return expanded


@pytest.mark.parametrize("seed", range(3))
def test_a_random_scratch_row_product_prints_what_the_original_prints(tmp_path, seed):
    _random_scratch(tmp_path, seed)


@pytest.mark.slow
def test_random_scratch_row_products_print_what_the_original_prints_and_most_are_expanded(tmp_path):
    expanded = [_random_scratch(tmp_path, seed) for seed in range(3, 60)]
    assert sum(expanded) >= len(expanded) // 2, sum(expanded)
