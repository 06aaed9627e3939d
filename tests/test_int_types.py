"""C's integer types and conversions in the output (issue 33): the generated loops count in `long`, so a
statement must see each loop iterator in its declared type (`int i - unsigned un` is unsigned; `(i - 9) %
1009` with `unsigned i` wraps), and the type of an iterator is its own declaration's, whatever its start
looks like (`for (unsigned i = (1); ...)`). Each program prints what the original prints (and, for the
issue's reproductions, what the issue expects) under every option set of tests/test_reliability_options.py,
at 1, 2 and 4 threads, with the parallel code forced on (POLYTUNE_PARALLEL_WORK=0).

The default suite runs the issue's programs under ``EACH`` (the default and ``FAST``; the rest of ``ONE_EACH``
under ``-m slow``) and the others under ``FAST``; ``-m slow`` runs every program under ``ONE_EACH`` and ``MATRIX``.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import compile_run
from test_random_nests import run_main
from test_reliability_options import EACH, FAST, MATRIX, ONE_EACH

REPRO_1 = r"""#include <stdio.h>
long A[8];
int main(void) {
#pragma scop
  for (unsigned i = (1); i < 5; i++)
    A[i] = (long)((i - 9) % 1009);
#pragma endscop
  for (int q = 0; q < 8; q++) printf("%ld\n", A[q]);
  return 0;
}
"""

REPRO_2 = r"""#include <stdio.h>
long A[8];
int main(void) {
  unsigned un = 3;
#pragma scop
  for (int i = 0; i < 3; i++)
    A[i] = i - un;
#pragma endscop
  for (int q = 0; q < 3; q++) printf("%ld\n", A[q]);
  return 0;
}
"""

# The issue's two programs, and the other starts of repro 1 it lists
ISSUE = {"repro_1_parenthesized_start": REPRO_1, "repro_2_int_minus_unsigned": REPRO_2}
ISSUE |= {f"repro_1_{name}": REPRO_1.replace("unsigned i = (1)", init) for name, init in [
    ("cast_start", "unsigned i = (unsigned)1"), ("parenthesized_expression", "unsigned i = (4 + 1) / 2"),
    ("size_t", "size_t i = (1)"), ("unsigned_long", "unsigned long i = (1)")]}
EXPECTED = {"repro_1_parenthesized_start": "0 375 376 377 378 0 0 0".replace(" ", "\n") + "\n",
            "repro_2_int_minus_unsigned": "4294967293\n4294967294\n4294967295\n"}

# The mechanism, beyond the issue's spellings
_MAIN = r"""
int main(void) {
  kernel(3, 5);
  for (int q = 0; q < 8; q++) printf("%ld %ld %.17g\n", A[q], B[q], D[q]);
  return 0;
}
"""
_HEAD = "#include <stdio.h>\n#include <stddef.h>\nlong A[8], B[8];\ndouble D[8];\n" \
    "static void kernel(unsigned un, long n) {\n  int i;\n#pragma scop\n"
OTHERS = {name: _HEAD + body + "#pragma endscop\n}\n" + _MAIN for name, body in {
              # sibling loops declare one name with two types; a loop over an outer `int i` after them
              "sibling_loops_of_two_types": "  for (unsigned i = 1; i < 5; i++)\n    A[i] = (long)((i - 9) % 1009);\n"
                                            "  for (int i = 0; i < 5; i++)\n    B[i] = (i - 9) % 1009 + (i < un);\n"
                                            "  for (i = 0; i < 3; i++)\n    D[i] = i - 9;\n",
              "unsigned_char_promotes_to_int": "  for (unsigned char c = 250; c < 255; c++)\n"
                                               "    A[c - 250] = c - 251;\n",
              "short_times_unsigned": "  for (short s = -3; s < 3; s++)\n    A[s + 3] = s * un;\n",
              "long_minus_unsigned_stays_signed": "  for (long k = 0; k < n; k++)\n    A[k] = k - un;\n",
              "double_iterator_divides_as_double": "  for (double x = 0; x < 5; x += 1)\n    D[(int)x] = x / 2;\n",
              # random integer program 43: `j >= i` converts j to unsigned; C never evaluates it at j < 0
              "signed_iterator_down_to_an_unsigned_bound": "  for (unsigned u = (4 + 1) / 2; u < un + 1; u += 2)\n"
                                                           "    for (char c = 3 - 1; c >= u; c -= 2)\n"
                                                           "      A[u + c] = c - un;\n",
              "unsigned_parameter_in_a_body": "  for (size_t k = 1; k < 6; k++)\n    B[k] = (long)(k * un - 16);\n",
          }.items()}
PROGRAMS = ISSUE | OTHERS


def _name(options: list[str]) -> str:
    return " ".join(options) or "default"


def check_program(tmp_path: Path, name: str, source: str, options: list[str], expected: str | None = None,
                  monkeypatch=None) -> Path:
    """*source* optimized under *options* (parallel code forced on) prints what the original prints (and
    *expected*, if given) at 1, 2 and 4 threads; returns the output file."""
    if monkeypatch is not None:
        monkeypatch.setenv("POLYTUNE_PARALLEL_WORK", "0")
    src, out = tmp_path / f"{name}.c", tmp_path / f"{name}.opt.c"
    src.write_bytes(source.encode())
    rc, err = run_main(["optimize", str(src), "-o", str(out), *options])
    assert rc == 0, err
    ref = compile_run(str(src), str(tmp_path / "ref"), [], openmp=False)
    if expected is not None:
        assert ref == expected, ref
    for threads in (1, 2, 4):
        got = compile_run(str(out), str(tmp_path / "opt"), [], openmp=True, threads=threads)
        assert got == ref, f"{_name(options)} at {threads} thread(s):\n{out.read_text()}"
    return out


@pytest.mark.parametrize("options", EACH)
@pytest.mark.parametrize("name", sorted(ISSUE))
def test_issue_33_integer_programs_print_what_the_original_prints(tmp_path, monkeypatch, name, options):
    check_program(tmp_path, name, PROGRAMS[name], options, EXPECTED.get(name), monkeypatch)


@pytest.mark.parametrize("options", FAST, ids=_name)
@pytest.mark.parametrize("name", sorted(OTHERS))
def test_iterators_compute_in_their_declared_types(tmp_path, monkeypatch, name, options):
    check_program(tmp_path, name, PROGRAMS[name], options, None, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("options", ONE_EACH + MATRIX, ids=_name)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_integer_programs_under_the_option_matrix(tmp_path, monkeypatch, name, options):
    check_program(tmp_path, name, PROGRAMS[name], options, EXPECTED.get(name), monkeypatch)


def test_every_iterator_is_cast_to_its_declared_type_outside_subscripts(tmp_path):
    out = check_program(tmp_path, "sibling", PROGRAMS["sibling_loops_of_two_types"], [])
    text = out.read_text()
    assert "(unsigned int) c" in text and "(int) c" in text  # one name, two loops, two types
    assert "A[(" not in text and "B[(" not in text  # subscripts keep the long counters


@pytest.mark.parametrize("decl, body, message", [
    ("int i;", "for (i = 0; i < 9; i++) A[i][(unsigned)(i - 3)] = 1;",
     "'i - 3' may be negative and is cast to unsigned in '(unsigned) (i - 3)'"),
    ("int i;", "for (i = 0; i < 9; i++) A[i][(unsigned char)(i + 250)] = 1;",
     "'i + 250' may be outside the range of 'unsigned char' (0 to 255)"),
])
def test_cast_that_changes_a_value_of_a_subscript_is_refused_in_one_line(decl, body, message, tmp_path, capsys):
    src, out = tmp_path / "w.c", tmp_path / "w.opt.c"
    src.write_text(f"double A[64][300];\nvoid f(void) {{\n  {decl}\n#pragma scop\n  {body}\n#pragma endscop\n}}\n")
    rc, err = run_main(["optimize", str(src), "-o", str(out)])
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith(f"{src}:5: ") and message in lines[0], err
    assert not out.exists()


def test_declarations_in_scope_are_those_of_the_enclosing_function_and_file():
    from polytune.frontend import _declared_scalars, in_scope
    text = ("int x; void g(unsigned x); int h(void) { unsigned y; return 0; }\n"
            "static void f(long n, size_t m) { int q, i; { unsigned z; } short w;\n"
            "  for (unsigned i = 0; i < 3; i++) q++;\n  for (unsigned k = (1), j = (2) + 3; k < 5; k++) {\n")
    got = _declared_scalars(in_scope(text))
    assert got == {"x": ("int",), "n": ("long",), "m": ("unsigned", "long"), "q": ("int",), "i": ("int",),
                   "w": ("short",), "k": ("unsigned",), "j": ("unsigned",)}
