"""A scalar privatized for a parallel loop must not be written by a statement that isl's AST builder prints
outside that loop: a grid update whose `d` a chain of branches assigns (corners, edges, interior), `d`
declared in the body. isl peeled the first corner's instance off before the tiled loops; its `d` was the
shared variable, and the first cell read the thread's uninitialized private copy (wrong results at 1 and 2
threads, found on a variant of benchmarks/realc/hotspot.c)."""
from __future__ import annotations

import pytest
from conftest import compile_run

from polytune.cli import main

GRID = """#include <stdio.h>
#include <stdlib.h>
static void step(int rows, int cols, const float *t, const float *p, float *out)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            float d;
            if (r == 0 && c == 0)
                d = p[0] + t[1] + t[cols] - 2.0f * t[0];
            else if (r == 0 && c == cols - 1)
                d = p[c] + t[c - 1] + t[c + cols] - 2.0f * t[c];
            else if (r == rows - 1 && c == 0)
                d = p[r * cols] + t[r * cols + 1] + t[(r - 1) * cols] - 2.0f * t[r * cols];
            else if (r == 0)
                d = p[c] + t[c + 1] + t[c - 1] - 2.0f * t[c];
            else if (c == 0)
                d = p[r * cols] + t[(r - 1) * cols] - t[r * cols];
            else
                d = p[r * cols + c] + t[(r - 1) * cols + c] + t[r * cols + c - 1] - 3.0f * t[r * cols + c];
            out[r * cols + c] = t[r * cols + c] + 0.25f * d;
        }
}
int main(int argc, char **argv)
{
    int rows = argc > 1 ? atoi(argv[1]) : 70, cols = argc > 2 ? atoi(argv[2]) : 90;
    float *t = malloc(sizeof(float) * rows * cols), *p = malloc(sizeof(float) * rows * cols);
    float *out = calloc(rows * cols, sizeof(float));
    for (int i = 0; i < rows * cols; i++) {
        t[i] = (float)((i * 7) % 19) / 4.0f;
        p[i] = (float)((i * 3) % 11) / 8.0f;
    }
    step(rows, cols, t, p, out);
    double cs = 0;
    for (int i = 0; i < rows * cols; i++)
        cs += out[i] * (i % 7 + 1);
    printf("checksum: %.17g\\n", cs);
    return 0;
}
"""


@pytest.mark.parametrize("extra", [(), ("--tile-sizes", "4,8")], ids=["default", "small-tiles"])
def test_a_scalar_assigned_by_a_chain_of_branches_keeps_its_value_in_every_cell(tmp_path, extra):
    src, out = tmp_path / "grid.c", tmp_path / "grid.opt.c"
    src.write_text(GRID)
    assert main(["optimize", "-q", str(src), "-o", str(out), *extra]) == 0
    for args in (("70", "90"), ("11", "13"), ("2", "3"), ("40", "1")):
        want = compile_run(str(src), str(tmp_path / "orig"), ["-ffp-contract=off"], True, 1, args=args)
        for threads in (1, 2, 3):
            got = compile_run(str(out), str(tmp_path / "opt"), ["-ffp-contract=off"], True, threads, args=args)
            assert got == want, (args, threads)
