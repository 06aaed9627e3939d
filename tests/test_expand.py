"""Scalar expansion (poly/expand.py): a scalar whose values live within one iteration of outer loops
becomes an array indexed by them where that lets the nest be tiled or run in parallel; the output stays
the original's, bit for bit, and a scalar read after the region keeps its final value."""
from __future__ import annotations

import json
import os
import re

import pytest
from conftest import ROOT, compile_run

from polytune.cli import main
from polytune.pipeline import AnalyzedScop, analyze
from polytune.poly.deps import compute_dependences
from polytune.poly.expand import expand_webs, webs

HEAD = """#include <stdio.h>
#ifndef N
#define N 70
#endif
static double a[N][N], b[N][N], c[N][N], t[N], s = -7.5;
static void kernel(int n)
{
  int i, j, k;
#pragma scop
"""
TAIL = """#pragma endscop
}
int main(void)
{
  int i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) { a[i][j] = (i * 7 + j * 3) % 11 - 4.5; b[i][j] = (i + 2 * j) % 5 * 0.25; }
  kernel(N);
  double cs = 3 * s;
  for (i = 0; i < N; i++) { cs += t[i] * (i + 1); for (j = 0; j < N; j++) cs += c[i][j] * (i + 2 * j + 1); }
  printf("checksum: %.17g s: %.17g\\n", cs, s);
  return 0;
}
"""
DOT = ("for (i = 0; i < {n}; i++)\n  for (j = 0; j < {n}; j++) {{\n    s = 0;\n    for (k = 0; k < {n}; k++)\n"
       "      s += a[i][k] * b[k][j];\n    c[i][j] = s;\n  }}\n")
# no array has an element per (i, j): the expansion's size is not bounded by data the program holds
ROW_SUMS = ("for (i = 0; i < {n}; i++)\n  for (j = 0; j < {n}; j++) {{\n    s = 0;\n    for (k = 0; k < {n}; k++)\n"
            "      s += a[i][k] * b[k][j];\n    t[i] += s;\n  }}\n")
# the value crosses iterations of i: indexing s by i would read what no iteration wrote there
CARRIED = ("for (i = 0; i < {n}; i++) {{\n  if (i == 0)\n    s = 1;\n  s = s * 0.5 + a[i][0];\n"
           "  for (j = 0; j < {n}; j++)\n    c[i][j] = s * b[i][j];\n}}\n")
PB = os.path.join(ROOT, "tests", "data", "polybench")


def _write(tmp_path, body: str, n: str = "N"):
    src = tmp_path / "k.c"
    src.write_text(HEAD + body.format(n=n) + TAIL)
    return src


def _optimize(tmp_path, src, *extra) -> tuple[str, dict]:
    out, rep = tmp_path / "k.opt.c", tmp_path / "k.json"
    assert main(["optimize", str(src), "-o", str(out), "--report", str(rep), *extra]) == 0
    return str(out), json.loads(rep.read_text())["scops"][0]


def _same_output(tmp_path, src, out) -> None:
    expected = compile_run(str(src), str(tmp_path / "orig"), ["-ffp-contract=off"], True)
    got = compile_run(out, str(tmp_path / "opt"), ["-ffp-contract=off"], True)
    assert got == expected


def test_dot_product_nest_is_blocked_once_its_accumulator_is_expanded(tmp_path):
    """Expanded, `s_x0[i][j] += a[i][k] * b[k][j]` is a contraction: printed as packed blocks."""
    src = _write(tmp_path, DOT)
    out, rep = _optimize(tmp_path, src)
    assert rep["expanded"] == ["s"]
    assert "packed blocks of (i, j, k)" in open(out).read()
    _same_output(tmp_path, src, out)


def test_dot_product_nest_is_tiled_and_parallel_once_its_accumulator_is_expanded(tmp_path):
    src = _write(tmp_path, DOT)
    out, rep = _optimize(tmp_path, src, "--blocks", "off")
    assert rep["expanded"] == ["s"]
    band = next(b for b in rep["bands"] if "S1" in b["statements"] and b["tiled"])
    assert band["members"] >= 2 and band["parallel_loop"] is not None
    text = open(out).read()
    assert "s_x0[" in text and "#pragma omp parallel for" in text and "__builtin_free(s_x0)" in text
    _same_output(tmp_path, src, out)


def test_without_expansion_the_dot_product_nest_is_not_tiled(tmp_path):
    """The reason for expanding: the anti and output dependences of s keep the band from being permutable."""
    a = analyze(str(_write(tmp_path, DOT))).scops[0]
    assert a.expanded is not None
    original = AnalyzedScop(a.scop, a.deps, a.base)
    assert not any(b.tiled for b in original.tiled(()).bands)
    assert any(b.tiled and b.members >= 2 for b in a.tiled(()).bands)


def test_scalar_read_after_the_region_keeps_its_final_value(tmp_path):
    src = _write(tmp_path, DOT)
    out, rep = _optimize(tmp_path, src)
    assert rep["expanded"] == ["s"]
    assert "s = s_x0[" in open(out).read()
    _same_output(tmp_path, src, out)  # main prints s


def test_parametric_size_is_expanded_when_an_array_has_an_element_per_index(tmp_path):
    src = _write(tmp_path, DOT, n="n")
    out, rep = _optimize(tmp_path, src)
    assert rep["expanded"] == ["s"]
    _same_output(tmp_path, src, out)


def test_parametric_size_without_such_an_array_is_not_expanded(tmp_path):
    src = _write(tmp_path, ROW_SUMS, n="n")
    out, rep = _optimize(tmp_path, src)
    assert "expanded" not in rep
    _same_output(tmp_path, src, out)


def test_size_limit_falls_back_to_no_expansion(tmp_path, monkeypatch):
    src = _write(tmp_path, DOT)
    monkeypatch.setenv("POLYTUNE_EXPANSION_LIMIT", str(70 * 70 - 1))
    out, rep = _optimize(tmp_path, src)
    assert "expanded" not in rep and "s_x0" not in open(out).read()
    _same_output(tmp_path, src, out)
    monkeypatch.setenv("POLYTUNE_EXPANSION_LIMIT", str(70 * 70))
    assert _optimize(tmp_path, src)[1]["expanded"] == ["s"]


def test_value_carried_across_iterations_is_not_expanded(tmp_path):
    src = _write(tmp_path, CARRIED)
    a = analyze(str(src)).scops[0]
    assert a.expanded is None
    # indexing s by i would be the candidate, and it changes which write a read sees
    (web,) = webs(a.scop, a.deps)
    new = expand_webs(a.scop, [web])
    assert not compute_dependences(new).flow.is_equal(a.deps.flow)
    out, _ = _optimize(tmp_path, src)
    _same_output(tmp_path, src, out)


def test_ludcmp_w_has_four_webs_and_only_the_lu_nest_is_expanded():
    a = analyze(os.path.join(PB, "ludcmp.c")).scops[0]
    found = webs(a.scop, a.deps)
    assert [(w.scalar, len(w.statements), w.depth) for w in found] == [("w", 3, 2), ("w", 3, 2), ("w", 3, 1),
                                                                       ("w", 3, 1)]
    scratch = {x.name for x in a.cpu.scop.scratch}
    assert scratch and {x.scalar for x in a.cpu.scop.scratch} == {"w"}
    users = {st.name for st in a.cpu.scop.statements if any(acc.array in scratch for acc in st.accesses)}
    assert users and users <= set(found[0].statements) | set(found[1].statements)  # not the substitutions


@pytest.mark.parametrize("name,scalars", [
    pytest.param("ludcmp", {"w"}, marks=pytest.mark.slow),  # (as test_polybench's outputs of both: CI's slow line)
    pytest.param("deriche", {"ym1", "ym2", "xm1"}, marks=pytest.mark.slow),
    ("symm", {"temp2"})])
def test_polybench_scalars_are_expanded_or_private_and_the_output_is_identical(name, scalars, tmp_path):
    """Each scalar that carries a dependence across the outer loop is expanded, or made private to the parallel
    loop's threads where that gives as good a schedule (deriche's row nests: `lastprivate(xm1, ym1, ym2)`)."""
    src = os.path.join(PB, name + ".c")
    out, rep = _optimize(tmp_path, src)
    text = open(out).read()
    private = set(re.findall(r"private\(([^)]*)\)", text))
    private = {v.strip() for group in private for v in group.split(",")}
    assert scalars <= set(rep.get("expanded", ())) | private
    expected = compile_run(src, str(tmp_path / "orig"), ["-ffp-contract=off"], True)
    assert compile_run(out, str(tmp_path / "opt"), ["-ffp-contract=off"], True) == expected
