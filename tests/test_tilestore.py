"""Tile-sized storage for expanded scalars (poly/tilestore.py): an accumulator expanded so that its band could
be tiled lives within one iteration of the tile loops, and is stored there, per thread, instead of in an
array of the whole iteration space."""
from __future__ import annotations

import os
import re

import pytest
from conftest import ROOT, compile_run

from polytune.cli import main
from polytune.pipeline import OptimizeOptions, analyze, schedules
from polytune.poly.tilestore import TILE_BUFFER_ELEMENTS, tile_buffers

# a vertical box filter of radius r over each plane: `acc` summed over 2r + 1 rows, declared in the body
COLUMN_PASS = """#include <stdio.h>
#include <stdlib.h>
static void column_pass(int planes, int h, int w, int r, const float *src, float *dst)
{
    for (int p = 0; p < planes; p++)
        for (int y = r; y < h - r; y++)
            for (int x = 0; x < w; x++) {
                float acc = 0;
                for (int d = -r; d <= r; d++)
                    acc += src[(p * h + y + d) * w + x];
                dst[(p * h + y) * w + x] = acc * 0.5f;
            }
}
int main(int argc, char **argv)
{
    int planes = argc > 1 ? atoi(argv[1]) : 3, h = argc > 2 ? atoi(argv[2]) : 70;
    int w = argc > 3 ? atoi(argv[3]) : 90, r = argc > 4 ? atoi(argv[4]) : 3;
    float *src = malloc(sizeof(float) * planes * h * w), *dst = calloc(planes * h * w, sizeof(float));
    for (int i = 0; i < planes * h * w; i++)
        src[i] = (float)((i * 7 + i / w * 3) % 23) / 8.0f;
    column_pass(planes, h, w, r, src, dst);
    double cs = 0;
    for (int i = 0; i < planes * h * w; i++)
        cs += dst[i] * (i % 13 + 1);
    printf("checksum: %.17g\\n", cs);
    free(src);
    free(dst);
    return 0;
}
"""
# the same filter whose sum is read after the nest: its last value is copied back from the expansion
LIVE_AFTER = COLUMN_PASS.replace("                float acc = 0;\n", "                acc = 0;\n").replace(
    "static void column_pass(", "static float acc;\nstatic void column_pass(").replace(
    '    printf("checksum: %.17g\\n", cs);', '    printf("checksum: %.17g %.9g\\n", cs, acc);')
SIZES = (("3", "70", "90", "3"), ("1", "9", "5", "1"), ("2", "40", "33", "7"), ("5", "8", "61", "0"))


def _buffers(tmp_path, source: str, opts: OptimizeOptions = OptimizeOptions()):
    src = tmp_path / "k.c"
    src.write_text(source)
    program = analyze(str(src))
    a, ts = program.scops[0], schedules(program, opts)[0]  # (column_pass's nest: the file's first)
    return a.cpu.scop, tile_buffers(a.cpu.scop, ts.schedule)


def test_an_accumulator_expanded_for_tiling_is_stored_per_tile(tmp_path):
    scop, buffers = _buffers(tmp_path, COLUMN_PASS)
    assert [s.scalar for s in scop.scratch] == ["acc"]
    (b,) = buffers
    assert b.name == scop.scratch[0].name
    # every element lives within one iteration of the tile loops of (p, y, x), not of the rows' tiles
    assert b.depth == 3
    assert b.extents == (32, 32, 32) and len(b.statements) == 3


def test_the_tile_of_a_buffer_follows_the_tile_sizes(tmp_path):
    _, (b,) = _buffers(tmp_path, COLUMN_PASS, OptimizeOptions(tile_sizes=(2, 3, 5)))
    assert b.extents == (2, 3, 5)


def test_a_scalar_read_after_the_region_keeps_its_whole_expansion(tmp_path):
    """Its final value is copied back from the element of the last write, after the loops."""
    scop, buffers = _buffers(tmp_path, LIVE_AFTER)
    assert [s.scalar for s in scop.scratch] == ["acc"] and buffers == ()


def test_an_expansion_larger_than_the_limit_per_tile_stays_on_the_heap(tmp_path, monkeypatch):
    monkeypatch.setattr("polytune.poly.tilestore.TILE_BUFFER_ELEMENTS", 32 * 32 * 32 - 1)
    assert _buffers(tmp_path, COLUMN_PASS)[1] == ()
    assert TILE_BUFFER_ELEMENTS >= 32 * 32 * 32


def test_the_region_s_buffers_together_stay_under_the_stack_limit(tmp_path, monkeypatch):
    """Two filter passes, each with its accumulator: both stored per tile, or only the first where the
    region's limit holds one."""
    two = COLUMN_PASS.replace(
        "                dst[(p * h + y) * w + x] = acc * 0.5f;\n            }\n",
        "                dst[(p * h + y) * w + x] = acc * 0.5f;\n            }\n"
        "    for (int p = 0; p < planes; p++)\n        for (int y = r; y < h - r; y++)\n"
        "            for (int x = 0; x < w; x++) {\n                float acc2 = 0;\n"
        "                for (int d = -r; d <= r; d++)\n                    acc2 += dst[(p * h + y + d) * w + x];\n"
        "                src[(p * h + y) * w + x] = acc2;\n            }\n")
    assert "acc2" in two
    assert len(_buffers(tmp_path, two)[1]) == 2
    monkeypatch.setattr("polytune.poly.tilestore.REGION_BUFFER_ELEMENTS", 32 * 32 * 32)
    assert len(_buffers(tmp_path, two)[1]) == 1


def _optimized(tmp_path, source: str, *extra: str) -> str:
    src, out = tmp_path / "f.c", tmp_path / "f.opt.c"
    src.write_text(source)
    assert main(["optimize", "-q", str(src), "-o", str(out), *extra]) == 0
    return out.read_text()


def test_the_buffer_is_a_private_array_of_the_tile_indexed_from_the_tile_loops(tmp_path):
    text = _optimized(tmp_path, COLUMN_PASS)
    assert re.search(r"__typeof__\(acc\) acc_x0\[32\]\[32\]\[32\];", text), text
    assert "__builtin_malloc(sizeof(*acc_x0)" not in text and "__builtin_free(acc_x0)" not in text
    assert re.search(r"#pragma omp parallel for private\([^)]*acc_x0", text), text
    # the offsets are the tile loops' affine starts (gcc hoists them), not max(r, 32 * c1)
    assert re.search(r"acc_x0\[c\d+ - \(32 \* c\d+\)\]\[c\d+ - \(32 \* c\d+\)\]\[c\d+ - \(32 \* c\d+\)\]", text)


@pytest.mark.parametrize("extra", [(), ("--tile-sizes", "2,3,5"), ("--tile-sizes", "8,1,16"),
                                   ("--unroll-jam", "8")], ids=["default", "odd", "thin", "jam8"])
def test_per_tile_storage_prints_what_the_original_prints(tmp_path, extra):
    text = _optimized(tmp_path, COLUMN_PASS, *extra)
    assert "acc_x0" in text
    opt = tmp_path / "opt.c"
    opt.write_text(text)
    for args in SIZES:
        want = compile_run(str(tmp_path / "f.c"), str(tmp_path / "orig"), ["-ffp-contract=off"], True, 1, args=args)
        for threads in (1, 2, 3):
            got = compile_run(str(opt), str(tmp_path / "opt"), ["-ffp-contract=off"], True, threads, args=args)
            assert got == want, (args, threads)


def test_a_parallel_loop_inside_the_tile_loops_shares_the_buffer(tmp_path):
    """Random program 1015: one column tile (n <= 32), so its point loop runs in parallel, entered again for
    every row; private there, each entry's copy started uninitialized and the column sums were lost. (Its
    first nest, a 4-tap window `A[i + k][j + 1]`, now keeps its loops and the model no longer expands the
    column sum beside it, poly/cost.py: the same program with that nest reading `A[k][j + 1]` still does.)"""
    import sys
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from progen import local_scalar_program
    from test_random_programs import C_VARIANTS, check_program

    assert check_program(1015, list(C_VARIANTS), make=local_scalar_program, threads=(1, 2, 4)) == 3 * len(C_VARIANTS)
    source = local_scalar_program(1015).source
    assert "A[i + k][j + 1] * 0.25" in source
    source = source.replace("A[i + k][j + 1] * 0.25", "A[k][j + 1] * 0.25")
    text = _optimized(tmp_path, source)
    inner = [line for line in text.splitlines() if "omp parallel for" in line]
    assert any("sum_x0" in line for line in inner) and not all("sum_x0" in line for line in inner), inner
    (tmp_path / "g.c").write_text(source)
    want = compile_run(str(tmp_path / "g.c"), str(tmp_path / "ref"), [], openmp=False)
    for threads in (1, 2, 4):
        assert compile_run(str(tmp_path / "f.opt.c"), str(tmp_path / "opt"), [], True, threads) == want
