"""Scalar replacement (poly/promote.py, emit/c.py): an element an innermost loop keeps touching lives in a
scalar along the loop, and the program's results stay the same to the last bit."""
from __future__ import annotations

import re

from conftest import compile_run

from polytune.pipeline import OptimizeOptions, analyze, generate

DECL = "void f(int n, double A[60][60], double B[60][60], double x[60], double y[60], double t[60])"
MAIN = """
#include <stdio.h>
double A[60][60], B[60][60], x[60], y[60], t[60];
int main(void) {
  for (int i = 0; i < 60; i++) {
    x[i] = (i % 7) * 0.25 + 1; y[i] = i * 0.5; t[i] = 1.0 / (i + 1);
    for (int j = 0; j < 60; j++) { A[i][j] = ((i * j) % 11) * 0.125 + (i == j ? 4 : 0); B[i][j] = (i + 2 * j) % 5; }
  }
  f(53, A, B, x, y, t);
  for (int i = 0; i < 60; i++) printf("%a %a %a %a\\n", x[i], y[i], t[i], A[i][i % 60]);
  return 0;
}
"""


def _optimized(tmp_path, body: str) -> tuple[str, str]:
    """(the region's optimized text, the original program's source)."""
    src = f"{DECL} {{\n  int i, j;\n#pragma scop\n{body}\n#pragma endscop\n}}\n"
    p = tmp_path / "k.c"
    p.write_text(src)
    return generate(analyze(str(p)), OptimizeOptions(schedule="pluto")).text, src  # (written for Pluto's schedule)


def _same_results(tmp_path, body: str) -> str:
    """The optimized text, after checking that it computes what the original does (bit for bit)."""
    text, src = _optimized(tmp_path, body)
    (tmp_path / "orig.c").write_text(src + MAIN)
    (tmp_path / "opt.c").write_text(text + MAIN)
    flags = ["-ffp-contract=off"]
    expected = compile_run(str(tmp_path / "orig.c"), str(tmp_path / "orig"), flags, False)
    assert compile_run(str(tmp_path / "opt.c"), str(tmp_path / "opt"), flags, True) == expected
    return text


def _innermost_bodies(text: str) -> list[str]:
    """The statements of every loop whose body has no inner loop."""
    return [m.group(1) for m in re.finditer(r"for \(long [^{]*\{\n((?:(?!\s*(?:for|if|\{|\})).*\n)+)\s*\}", text)]


def _loaded_once_and_never_stored(text: str, array: str) -> None:
    """Some element of *array* is copied into a scalar before a loop, and no scalar is stored back into it."""
    m = re.search(rf"__typeof__\({array}((?:\[[^]]+\])+)\) (\w+) = {array}\[", text)
    assert m, text
    assert not re.search(rf"{array}(?:\[[^]]+\])+ = {m.group(2)};", text)


def test_the_sums_of_a_row_reduction_live_in_scalars_along_the_row(tmp_path):
    # gesummv: tmp[i] and y[i] are the same element in every iteration of the j loop
    text = _same_results(tmp_path, "for (i = 0; i < n; i++) { t[i] = 0; y[i] = 0;\n"
                                   " for (j = 0; j < n; j++) { t[i] = A[i][j] * x[j] + t[i];\n"
                                   "   y[i] = B[i][j] * x[j] + y[i]; }\n"
                                   " y[i] = 1.5 * t[i] + 1.2 * y[i]; }")
    inner = [b for b in _innermost_bodies(text) if "A[" in b]
    assert inner and all("t[" not in b and "y[" not in b for b in inner), text
    m = re.search(r"__typeof__\(t\[(\w+)\]\) (\w+) = t\[\1\];", text)
    assert m, text
    assert re.search(rf"\n\s*t\[{m.group(1)}\] = {m.group(2)};", text)  # stored back after the loop


def test_an_element_beside_other_elements_of_its_array_that_never_meet_it_is_promoted(tmp_path):
    # trisolv: x[i] -= A[i][j] * x[j] for j < i: x[j] is never x[i] inside the loop
    text = _same_results(tmp_path, "for (i = 0; i < n; i++) { x[i] = y[i];\n"
                                   " for (j = 0; j < i; j++) x[i] -= A[i][j] * x[j];\n"
                                   " x[i] = x[i] / A[i][i]; }")
    inner = [b for b in _innermost_bodies(text) if "A[" in b and "-=" in b]
    assert inner and all(re.search(r"\w+ -= A\[\w+\]\[\w+\] \* x\[\w+\]", b) for b in inner), text


def test_an_element_another_reference_of_its_array_may_touch_stays_in_memory(tmp_path):
    # x[j] runs over x[i] itself (j = i): the loop reads the value it wrote earlier through x[j]
    text = _same_results(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j < n; j++)\n"
                                   "  x[i] = x[i] * 0.5 + x[j] * A[i][j];")
    assert "__typeof__(x[" not in text, text


def test_a_read_only_element_is_loaded_once_and_never_stored(tmp_path):
    text = _same_results(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j < n; j++)\n"
                                   "  B[i][j] = A[i][j] / t[i];")
    _loaded_once_and_never_stored(text, "t")


def test_an_element_read_only_in_a_ternarys_branch_is_not_loaded_before_the_loop(tmp_path):
    # at i = 0 the program never reads t[i - 1]: a load before the j loop would read t[-1] (a choice that
    # alternates along j: no loop makes it, poly/split.py leaves the statement as it is)
    text = _same_results(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j < n; j++)\n"
                                   "  B[i][j] = (i > 0 && j % 2 == 0 ? t[i - 1] : 0.0) + A[i][j];")
    assert "? (t[" in text and "__typeof__(t[" not in text, text


def test_an_element_the_statement_reads_anyway_is_loaded_though_a_branch_reads_it_too(tmp_path):
    # nussinov's `t[i] = t[i] >= x ? t[i] : x`: the condition reads t[i] in every iteration
    text = _same_results(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j < n; j++)\n"
                                   "  t[i] = t[i] >= A[i][j] ? t[i] : A[i][j];")
    assert "__typeof__(t[" in text, text


def test_a_loop_that_may_run_no_iteration_loads_no_element(tmp_path):
    # at i = 0 the j loop is empty: the element is read only behind a test that the loop runs
    text = _same_results(tmp_path, "for (i = 0; i < n; i++) for (j = 0; j < i; j++)\n"
                                   "  t[i] = t[i] + A[i][j];")
    lines = text.splitlines()
    k = next(k for k, line in enumerate(lines) if "__typeof__(t[" in line)
    assert lines[k - 1].strip().startswith("if ("), text


def test_an_element_of_an_array_the_loop_only_reads_is_loaded_once_beside_references_that_meet_it(tmp_path):
    # (syr2k's A[i][k] beside A[j][k], transposed) A[k][i] beside A[k][j], j <= i, which is A[k][i] at j = i;
    # nothing in the loop writes A
    text = _same_results(tmp_path, "for (i = 0; i < n; i++) for (int k = 0; k < n; k++) for (j = 0; j <= i; j++)\n"
                                   "  B[i][j] += A[k][j] * A[k][i];")
    _loaded_once_and_never_stored(text, "A")


def test_a_loop_whose_bounds_are_both_constants_gets_no_guard_comparing_them(tmp_path):
    """A promoted loop is entered under the test that it runs at least once; where its start and bound are
    both constants (batched_gemm's 16x16 products), that test (`if (0 <= 15)`) is not printed."""
    import os

    from polytune.emit.c import _holds
    assert _holds("0 <= 15") and _holds("(1) <= 31") and not _holds("16 <= 15") and not _holds("0 <= n")
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks", "unseen",
                        "batched_gemm.c")
    text = generate(analyze(path), OptimizeOptions()).text
    assert "__typeof__" in text  # the row of A is promoted
    assert not re.search(r"if \(\(?-?\d+\)? *(<=|<|>=|>|==) *\(?-?\d+\)?\)", text)
