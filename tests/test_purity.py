"""Functions of the file without side effects (polytune/purity.py): a nest calling one is found and keeps its
results; a function with a side effect, or reading memory its arguments do not show, stays a refusal."""
from __future__ import annotations

import pytest
from pycparser import c_parser
from test_rewrite_aliases import same_output

from polytune.purity import inferred_pure


def _defs(text: str):
    return [d for d in c_parser.CParser().parse(text).ext if d.__class__.__name__ == "FuncDef"]


@pytest.mark.parametrize("body, pure", [
    ("float f(float x) { return 1.0f / (1.0f + expf(-x)); }", True),
    ("int f(const float *p, int n, int r) { r -= n; if (r < 0 || r >= n) return 0; return p[r] > 0; }", True),
    ("int f(int a, int b) { int m = a; for (int k = 0; k < b; k++) m += k; return m; }", True),
    ("int f(int *p) { p[0] = 1; return 0; }", False),  # writes through a pointer
    ("int f(int a) { counter++; return a; }", False),  # writes a global
    ("int f(int a) { return a + table[a]; }", False),  # reads a global the caller does not pass
    ("int f(int a) { static int k; k += a; return k; }", False),  # keeps a state
    ("int f(int a) { return rand() + a; }", False),  # calls a function with side effects
    ("void f(int a) { (void)a; }", False),  # returns nothing: a call is a statement
    ("struct s { int n; }; int f(struct s *p) { return p->n; }", False),  # a member: memory not shown
    ("int f(int *p) { int *q = &p[1]; return *q; }", False),  # an address taken
])
def test_a_function_is_pure_where_its_body_shows_no_side_effect_and_no_hidden_read(body, pure):
    head = "int counter; int table[8]; float expf(float); int rand(void);\n"
    assert ("f" in inferred_pure(_defs(head + body))) == pure


def test_a_function_calling_a_pure_function_of_the_file_is_pure_and_one_calling_an_impure_one_is_not():
    text = """int rand(void);
int g(int a) { return a * 2; }
int f(int a) { return g(a) + 1; }
int h(int a) { return rand() + a; }
int k(int a) { return h(a); }
"""
    assert inferred_pure(_defs(text)) == {"f", "g"}


def test_a_function_defined_twice_is_not_taken_for_pure():
    text = "int f(int a) { return a; }\nint f(int a) { return a + 1; }\n"
    assert inferred_pure(_defs(text)) == frozenset()


HELPERS = """#include <stdio.h>
#include <math.h>
#define N 40
static float squash(float x)
{
    return 1.0f / (1.0f + expf(-x));
}
static float pixel(const float *im, int h, int w, int r, int c)
{
    r -= 1;
    c -= 1;
    if (r < 0 || c < 0 || r >= h || c >= w)
        return 0;
    return im[r * w + c];
}
static void kernel(int h, int w, const float *im, float *out)
{
    for (int r = 0; r < h + 2; r++)
        for (int c = 0; c < w + 2; c++)
            out[r * (w + 2) + c] = squash(pixel(im, h, w, r, c));
}
int main(void)
{
    static float im[N * N], out[(N + 2) * (N + 2)];
    for (int k = 0; k < N * N; k++) im[k] = (k % 13) * 0.25f - 1.5f;
    kernel(N - 3, N, im, out);
    double s = 0;
    for (int k = 0; k < (N + 2) * (N + 2); k++) s += out[k] * (k % 7 + 1);
    printf("%.9g\\n", s);
    return 0;
}
"""


def test_a_nest_calling_helpers_of_the_file_without_side_effects_is_found_and_keeps_its_results(tmp_path):
    err = same_output(tmp_path, HELPERS, threads=(1, 2))
    assert ":18: found: loop nest of lines 18-20" in err, err


def test_a_helper_that_counts_its_calls_keeps_the_nest_refused(tmp_path):
    text = HELPERS.replace("static float squash(float x)\n{\n", "static int calls;\nstatic float squash(float x)\n{\n"
                           "    calls++;\n")
    err = same_output(tmp_path, text, threads=(1,))
    assert ":20: missed: loop nest of lines 20-22 not optimized: call to 'squash' inside the loop nest" in err, err
