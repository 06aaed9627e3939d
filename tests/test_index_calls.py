"""Index helpers (rewrite/index_calls.py): a call to a function of the file that returns an integer expression of
its integer parameters in one statement (`idx(i, j, n)`, `clampi(v, lo, hi)`) is read as that expression, so the
nest it indexes is modelled (a flattened subscript, a clamp that the split makes); any other call stays a call."""
from __future__ import annotations

import pytest
from conftest import compile_run

from polytune.cli import main

HELPERS = r"""
#include <stdio.h>
#include <stdlib.h>
static inline int idx(int i, int j, int n) { return i * n + j; }
static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }
static long at(int i, int j, int n) { return idx(i, j, n); }
static void kernel(int n, int w, const float *a, const float *b, float *c, const float *src, float *dst)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float s = 0.0f;
            for (int k = 0; k < n; k++)
                s += a[idx(i, k, n)] * b[at(k, j, n)];
            c[idx(i, j, n)] = s;
        }
    for (int y = 0; y < w; y++)
        for (int x = 0; x < w; x++) {
            float acc = 0.0f;
            for (int k = -2; k <= 2; k++)
                acc += src[y * w + clampi(x + k, 0, w - 1)];
            dst[y * w + x] = acc;
        }
}
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 70, w = argc > 2 ? atoi(argv[2]) : 90;
    float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n), *c = malloc(sizeof(float) * n * n);
    float *src = malloc(sizeof(float) * w * w), *dst = malloc(sizeof(float) * w * w);
    for (int i = 0; i < n * n; i++) { a[i] = (float)(i % 7) / 8.0f; b[i] = (float)(i % 5) / 4.0f; }
    for (int i = 0; i < w * w; i++) src[i] = (float)(i % 11) / 16.0f;
    kernel(n, w, a, b, c, src, dst);
    double cs = 0;
    for (int i = 0; i < n * n; i++) cs += c[i] * (i % 3 + 1);
    for (int i = 0; i < w * w; i++) cs += dst[i] * (i % 5 + 1);
    printf("checksum: %.17g\n", cs);
    return 0;
}
"""


def test_index_helpers_calls_are_read_as_their_expressions_and_the_results_are_the_originals(tmp_path, capsys):
    src, out = tmp_path / "helpers.c", tmp_path / "helpers.opt.c"
    src.write_text(HELPERS)
    assert main(["optimize", str(src), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "found: loop nest of lines 9-22" in err, err  # (both nests: one region)
    region = out.read_text().split("static void kernel", 1)[1].split("int main", 1)[0]
    region = region[:region.index("} else {")]  # (the optimized code: the original follows the checks' else)
    assert "idx(" not in region and "at(" not in region and "clampi(" not in region
    assert any("src[" in line and "?" not in line for line in region.splitlines())  # the middle of the split
    for args in (("70", "90"), ("1", "1"), ("3", "2"), ("9", "5")):
        want = compile_run(str(src), str(tmp_path / "orig"), ["-ffp-contract=off"], False, args=args)
        for threads in (1, 2):
            got = compile_run(str(out), str(tmp_path / "opt"), ["-ffp-contract=off"], True, threads, args=args)
            assert got == want, (args, threads)


@pytest.mark.parametrize("helper, why", [
    ("static int W = 8;\nstatic int idx(int i, int j, int n) { return i * W + j; }", "reads a global"),
    ("static int idx(int i, int j, int n) { int r = i * n; return r + j; }", "two statements"),
    ("static int idx(int i, int j, float n) { return i * (int)n + j; }", "a float parameter"),
    ("static double idx(int i, int j, int n) { return i * n + j; }", "a double result"),
])
def test_a_function_that_is_no_index_helper_stays_a_call(tmp_path, capsys, helper, why):
    src = tmp_path / "call.c"
    src.write_text(helper + "\nvoid f(int n, float *restrict a, const float *restrict b)\n{\n"
                   "    for (int i = 0; i < n; i++)\n        for (int j = 0; j < n; j++)\n"
                   "            a[i * n + j] = b[(int)idx(i, j, n)];\n}\n")
    assert main(["optimize", str(src), "-o", str(tmp_path / "call.opt.c")]) == 0
    err = capsys.readouterr().err
    assert "missed:" in err and "idx" in err, (why, err)
