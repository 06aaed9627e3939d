"""Issue 34 item 6, parallelism that exists: an untiled parallel loop whose next loop is parallel too runs the
two as one OpenMP loop (`collapse(2)`, ParallelMark.collapse). A planar image's channel loop has 3 iterations:
on 2 threads one thread ran two channels while the other ran one (benchmarks/realc/box_blur.c's row pass).
Only where the nest is perfect and rectangular and the inner of the two loops is not the innermost one (the
vector loop stays a loop of its own), and at run time only where the outer loop has fewer than 8 iterations per
thread (emit/c.py COLLAPSE_LEAST: collapsed, gcc recomputes what the inner body derives from the outer counter)."""
from __future__ import annotations

import re

import pytest
from conftest import checksum_line, compile_run

from polytune.cli import main

HEAD = """#include <stdio.h>
#include <stdlib.h>
"""
MAIN = """
int main(int argc, char **argv) {
  int c = argc > 1 ? atoi(argv[1]) : 3, h = argc > 2 ? atoi(argv[2]) : 37, w = argc > 3 ? atoi(argv[3]) : 41;
  int r = 2;
  float *in = malloc(sizeof(float) * c * h * w), *out = malloc(sizeof(float) * c * h * w);
  for (int i = 0; i < c * h * w; i++) { in[i] = (i * 7 % 19) * 0.5f; out[i] = 0; }
  KERNEL;
  double s = 0;
  for (int i = 0; i < c * h * w; i++) s += out[i] * (1 + i % 5);
  printf("checksum: %.9e\\n", s);
  return 0;
}
"""
ROWS = HEAD + """
static void rows(const float *restrict in, float *restrict out, int c, int h, int w, int r) {
  for (int k = 0; k < c; k++)
    for (int y = 0; y < h; y++)
      for (int x = r; x < w - r; x++) {
        float sum = 0;
        for (int d = -r; d <= r; d++)
          sum += in[(k * h + y) * w + x + d];
        out[(k * h + y) * w + x] = sum;
      }
}
""" + MAIN.replace("KERNEL", "rows(in, out, c, h, w, r)")
MAP = HEAD + """
static void scale(const float *restrict in, float *restrict out, int c, int h, int w) {
  for (int k = 0; k < c; k++)
    for (int y = 0; y < h * w; y++)
      out[k * h * w + y] = 2 * in[k * h * w + y];
}
""" + MAIN.replace("KERNEL", "scale(in, out, c, h, w)")
TRIANGLE = HEAD + """
static void lower(int h, int w, float in[h][h][w], float out[h][h][w]) {
  for (int y = 0; y < h; y++)
    for (int x = 0; x <= y; x++)
      for (int j = 0; j < w; j++)
        out[y][x][j] = in[y][x][j] + 2 * in[x][y][j];
}
int main(int argc, char **argv) {
  int h = argc > 2 ? atoi(argv[2]) : 37, w = argc > 3 ? atoi(argv[3]) : 41;
  float (*in)[h][w] = malloc(sizeof(float) * h * h * w), (*out)[h][w] = calloc(h * h * w, sizeof(float));
  for (int y = 0; y < h; y++)
    for (int x = 0; x < h; x++)
      for (int j = 0; j < w; j++) in[y][x][j] = (y * 7 + x * 3 + j) % 19;
  lower(h, w, in, out);
  double s = 0;
  for (int y = 0; y < h; y++) for (int x = 0; x < h; x++) for (int j = 0; j < w; j++) s += out[y][x][j] * (1 + j % 5);
  printf("checksum: %.9e\\n", s);
  return 0;
}
"""
RUNNING = HEAD + """
static void running(const float *restrict in, float *restrict out, int c, int h, int w) {
  for (int k = 0; k < c; k++)
    for (int y = 1; y < h; y++)
      for (int x = 0; x < w; x++)
        out[(k * h + y) * w + x] = out[(k * h + y - 1) * w + x] + in[(k * h + y) * w + x];
}
""" + MAIN.replace("KERNEL", "running(in, out, c, h, w)")


def _optimized(tmp_path, name: str, text: str) -> tuple[str, str]:
    src, out = tmp_path / f"{name}.c", tmp_path / f"{name}.opt.c"
    src.write_text(text)
    assert main(["optimize", str(src), "-o", str(out), "-q"]) == 0
    return str(src), str(out)


def _kernel(out: str) -> str:
    """The optimized file's kernel function (main's loops are optimized too)."""
    text = open(out).read()
    return text[:text.index("int main")]


def _same_results(tmp_path, src: str, out: str) -> None:
    for args in (("3", "37", "41"), ("1", "5", "9"), ("2", "1", "40"), ("40", "5", "9")):
        want = checksum_line(compile_run(src, str(tmp_path / "ref"), [], openmp=False, args=args))
        for threads in (1, 2, 4):
            assert checksum_line(compile_run(out, str(tmp_path / "opt"), [], True, threads, args=args)) == want


def test_three_channels_and_their_rows_run_as_one_parallel_loop(tmp_path):
    src, out = _optimized(tmp_path, "rows", ROWS)
    text = open(out).read()
    pragma = re.search(r"#pragma omp parallel for[^\n]*collapse\(2\)\n\s*for \(long (\w+) = 0; \1 < c; \1\+\+\) \{\n"
                       r"\s*for \(long (\w+) = 0; \2 < h; \2\+\+\) \{\n", text)
    assert pragma, text
    assert "private(sum)" in pragma.group(0)
    # collapsed where the channels are fewer than 8 per thread; with more, the loop as before (both run below:
    # 40 channels on 1, 2 and 4 threads)
    assert "if (omp_get_max_threads() > 1 && c < 8 * omp_get_max_threads()) {" in text
    assert text.count("#pragma omp parallel for private(sum)\n") == 1
    _same_results(tmp_path, src, out)


@pytest.mark.parametrize("name,text", [("map", MAP), ("lower", TRIANGLE), ("running", RUNNING)],
                         ids=["the_vector_loop_of_a_map", "a_triangle", "a_loop_that_carries_a_dependence"])
def test_is_not_collapsed_into_the_parallel_loop(tmp_path, name, text):
    src, out = _optimized(tmp_path, name, text)
    kernel = _kernel(out)
    assert "#pragma omp parallel for" in kernel and "collapse" not in kernel
    _same_results(tmp_path, src, out)


def test_collapse_is_kept_only_on_a_perfect_rectangular_nest_with_a_loop_inside():
    from polytune.emit.c import _perfect_pair

    def pair(*body: str) -> bool:
        return _perfect_pair(["  for (long c0 = 0; c0 < n; c0++) {", *body, "  }"], "c0", 1, "c1")

    inner = ["      for (long c2 = 0; c2 < w; c2++) {", "        a[c0][c1][c2] = 0;", "      }"]
    rows = "    for (long c1 = 0; c1 < h; c1++) {"
    assert pair(rows, *inner, "    }")
    assert not pair("    for (long c1 = 0; c1 <= c0; c1++) {", *inner, "    }")
    assert not pair("    s = 0;", rows, *inner, "    }")
    assert not pair(rows, *inner, "    }", "    t = 1;")
    assert not pair(rows, "      a[c0][c1] = 0;", "    }")
    assert not pair("    for (long c1 = 0; c1 < h; c1 += 2) {", *inner, "    }")
    # the loop inside is not the member found parallel (isl printed no loop for a member of one iteration)
    assert not pair("    for (long c2 = 0; c2 < h; c2++) {", *inner, "    }")


def test_tile_loops_of_one_tile_each_run_with_the_tile_loop_inside_them(tmp_path):
    """llm.c's matmul (benchmarks/realc/matmul_llmc.c): 4 x 32 rows in tiles of 32 are one tile of each, and the
    output channels' tiles inside them ran on one thread; the batch tile loop and the single-tile copy's row
    tile loop each run as one loop with the tile loop inside."""
    import os

    from conftest import ROOT
    src = os.path.join(ROOT, "benchmarks", "realc", "matmul_llmc.c")
    out, report = str(tmp_path / "mm.opt.c"), tmp_path / "mm.json"
    # (the tiler's code: its expanded sum is a contraction, printed as packed blocks by default)
    assert main(["optimize", src, "-o", out, "-q", "--report", str(report), "--blocks", "off"]) == 0
    text = open(out).read()
    import json
    bands = [b for s in json.loads(report.read_text())["scops"] for b in s["bands"]]
    assert any(b["parallel_loop"] == "tile 0" and b["parallel_loop_collapse"] for b in bands)
    assert re.search(r"if \(omp_get_max_threads\(\) > 1 && "
                     r"\(c_floord\(\(B - 1\), 32\)\) \+ 1 < 8 \* omp_get_max_threads\(\)\) \{\n\s*"
                     r"#pragma omp parallel for collapse\(2\)\n", text), text
    assert re.search(r"if \(omp_get_max_threads\(\) > 1 && "
                     r"\(c_floord\(\(T - 1\), 32\)\) \+ 1 < 8 \* omp_get_max_threads\(\)\) \{\n\s*"
                     r"#pragma omp parallel for collapse\(2\)\n", text), text
    for args in (("2", "5", "19", "23"), ("4", "32", "40", "70"), ("3", "70", "9", "33")):
        want = compile_run(src, str(tmp_path / "ref"), [], openmp=False, args=args)
        for threads in (1, 2, 4):
            got = compile_run(out, str(tmp_path / "opt"), [], True, threads, args=args)
            assert got.split("hash")[-1] == want.split("hash")[-1]
