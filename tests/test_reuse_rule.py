"""The model's tiling rule (poly/reuse.py): a band is tiled only where a reuse it carries would otherwise miss the
cache. A band that carries no reuse (a streaming map), or only reuses whose footprint between two uses is one row
(a separable filter's passes, a layer norm's weight vector), runs untiled in its best order, its scalars private,
and computes what the original computes. Tiled where the footprint is more than a row (a matrix product's B)."""
from __future__ import annotations

import json
import os

import islpy as isl
from conftest import ROOT, checksum_line, compile_run

from polytune.cli import main
from polytune.pipeline import OptimizeOptions, analyze, generate
from polytune.poly.reuse import reuse_carriers
from polytune.poly.schedule import compute_base_schedule

MAIN = """
int main(void) {{
  for (int i = 0; i < {size}; i++) {init}
  {call};
  double s = 0;
  for (int i = 0; i < {outsize}; i++) s += {out}[i] * (1 + i % 7);
  printf("checksum: %.12e\\n", s);
  return 0;
}}
"""

DOWNSAMPLE = """#include <stdio.h>
static float src[3 * 40 * 36], dst[3 * 20 * 18];
static void down(const float *s, float *d, const int *dims) {
  for (int c = 0; c < dims[0]; c++)
    for (int y = 0; y < dims[1] / 2; y++)
      for (int x = 0; x < dims[2] / 2; x++) {
        const int k = (c * dims[1] + 2 * y) * dims[2] + 2 * x;
        d[(c * (dims[1] / 2) + y) * (dims[2] / 2) + x] =
            0.25f * (s[k] + s[k + 1] + s[k + dims[2]] + s[k + dims[2] + 1]);
      }
}
""" + MAIN.format(size=3 * 40 * 36, init="src[i] = (i * 7 % 13) * 0.5f;",
                  call="int dims[3] = {3, 40, 36}; down(src, dst, dims)", outsize=3 * 20 * 18, out="dst")

LAYERNORM = """#include <stdio.h>
#include <math.h>
static float inp[4 * 6 * 50], out[4 * 6 * 50], weight[50], bias[50], mean[24];
static void norm(const float *in, float *o, int B, int T, int C) {
  for (int b = 0; b < B; b++)
    for (int t = 0; t < T; t++) {
      const float *x = in + b * T * C + t * C;
      float m = 0.0f;
      for (int i = 0; i < C; i++) m += x[i];
      m = m / C;
      float v = 0.0f;
      for (int i = 0; i < C; i++) { float d = x[i] - m; v += d * d; }
      float s = 1.0f / sqrtf(v / C + 1e-5f);
      for (int i = 0; i < C; i++) o[b * T * C + t * C + i] = s * (x[i] - m) * weight[i] + bias[i];
      mean[b * T + t] = m;
    }
}
""" + MAIN.format(size=4 * 6 * 50,
                  init="{ inp[i] = (i * 11 % 17) * 0.25f; if (i < 50) { weight[i] = 1 + i % 3; bias[i] = i % 5; } }",
                  call="norm(inp, out, 4, 6, 50)", outsize=4 * 6 * 50, out="out")

GAUSS = """#include <stdio.h>
static const float g5[5] = {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};
static float img[37 * 41], tmp[37 * 41], res[37 * 41];
static void blur(const float *s, float *t, float *d, int w, int h) {
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      float acc = 0.0f;
      for (int k = -2; k <= 2; k++) {
        int xx = x + k;
        if (xx < 0) xx = 0;
        if (xx > w - 1) xx = w - 1;
        acc += g5[k + 2] * s[y * w + xx];
      }
      t[y * w + x] = acc;
    }
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      float acc = 0.0f;
      for (int k = -2; k <= 2; k++) {
        int yy = y + k;
        if (yy < 0) yy = 0;
        if (yy > h - 1) yy = h - 1;
        acc += g5[k + 2] * t[yy * w + x];
      }
      d[y * w + x] = acc;
    }
}
""" + MAIN.format(size=37 * 41, init="img[i] = (i * 5 % 11) * 0.5f;", call="blur(img, tmp, res, 41, 37)",
                  outsize=37 * 41, out="res")

MINPLUS = """#include <stdio.h>
static double A[40 * 30], Bm[30 * 50], C[40 * 50];
static void mm(const double *a, const double *b, double *c, int n, int m, int k) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      for (int p = 0; p < k; p++)
        c[i * m + j] = c[i * m + j] < a[i * k + p] + b[p * m + j]
            ? c[i * m + j] : a[i * k + p] + b[p * m + j];
}
""" + MAIN.format(size=40 * 30, init="{ A[i] = i % 9; Bm[i] = i % 4; C[i] = 20 + i % 3; }",
                  call="mm(A, Bm, C, 40, 50, 30)", outsize=40 * 50, out="C")


def _write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / f"{name}.c"
    path.write_text(text)
    return str(path)


def _model(path: str) -> tuple[list, str]:
    """The bands of the model's schedule of every region and the optimized text."""
    program = analyze(path)
    bands = [b for a in program.scops for b in a.tiled((), schedule="model").bands]
    return bands, generate(program, OptimizeOptions()).text


def _hot(program):
    """The region of the deepest statement (a file without pragmas has main's loops as regions too)."""
    return max(program.scops, key=lambda a: max(len(st.iterators) for st in a.scop.statements))


def _same_output(tmp_path, src: str, text: str) -> None:
    opt = tmp_path / "opt.c"
    opt.write_text(text)
    expected = checksum_line(compile_run(src, str(tmp_path / "orig"), [], False))
    assert checksum_line(compile_run(str(opt), str(tmp_path / "opt"), [], True)) == expected


def test_a_streaming_map_carries_no_reuse_and_stays_untiled(tmp_path):
    """A 2x downsample reads each input element once and writes each output once: no tile can shorten a reuse
    (tiled 32 x 32 x 32 it ran at 0.55x of gcc on benchmarks/realc/downsample.c)."""
    src = _write(tmp_path, "down", DOWNSAMPLE)
    bands, text = _model(src)
    assert bands and not any(b.tiled for b in bands)
    assert "#pragma omp parallel for" in text
    _same_output(tmp_path, src, text)


def test_a_reuse_within_one_row_leaves_the_band_untiled_and_its_scalars_private(tmp_path):
    """A layer norm reads weight[i] again for every row: the reuse waits one iteration of t, whose footprint is a
    row. Untiled, nothing buys expanding m, v or s into arrays: they stay private scalars of the row-parallel loop
    (expanded and tiled, 0.54x of gcc on benchmarks/realc/layernorm.c)."""
    src = _write(tmp_path, "norm", LAYERNORM)
    bands, text = _model(src)
    assert not any(b.tiled for b in bands)
    assert "_x0" not in text and "private(" in text
    _same_output(tmp_path, src, text)


def test_a_separable_filter_runs_its_row_pass_untiled_and_keeps_no_scratch_image(tmp_path):
    """The row pass's taps reuse within a row: untiled, its accumulator a private scalar. Neither pass expands the
    accumulator into a scratch image (the tiled code with a scratch value per pixel ran at 0.37x of gcc on
    benchmarks/realc/gaussian_clamp.c)."""
    src = _write(tmp_path, "gauss", GAUSS)
    program = analyze(src)
    bands = _hot(program).tiled((), schedule="model").bands
    row = [b for b in bands if "S1" in b.statements]  # acc += g5[k + 2] * s[y * w + xx]
    assert row and not any(b.tiled for b in row)
    text = generate(program, OptimizeOptions()).text
    assert "acc_x1" not in text and "(*const acc_x0)[" not in text  # (at most one row of accumulators)
    _same_output(tmp_path, src, text)


def test_a_min_plus_product_is_tiled_where_a_whole_operand_is_reused_across_its_rows(tmp_path):
    """(i, j, p): b is read again for every i, after a whole matrix: that reuse needs tiles."""
    src = _write(tmp_path, "mm", MINPLUS)
    program = analyze(src)
    assert any(b.tiled for b in _hot(program).tiled((), schedule="model").bands)
    _same_output(tmp_path, src, generate(program, OptimizeOptions()).text)


def test_reuse_carriers_are_the_innermost_members_each_array_waits_for(tmp_path):
    """A min-plus product (i, j, p): b waits one i (0), a one j (1), c one p (the innermost: not counted); the
    downsample reuses nothing."""
    for text, expected in ((MINPLUS, {0, 1}), (DOWNSAMPLE, set())):
        a = _hot(analyze(_write(tmp_path, "k", text)))
        root = compute_base_schedule(a.scop, a.deps).get_root()
        node = root
        while node.get_type() != isl.schedule_node_type.band:
            node = node.child(0)
        assert node.band_n_member() == 3
        assert reuse_carriers(a.scop, node) == frozenset(expected)


def test_a_band_whose_inner_loops_gcc_peels_keeps_its_order_unjammed(tmp_path, monkeypatch):
    """benchmarks/unseen/batched_gemm.c, 20,000 products of 16 x 16 x 16: no reuse misses the cache and every
    loop inside the batch loop has 16 iterations, which gcc peels completely; as written, k inside j, gcc
    vectorizes j around the peeled k with C's row in registers (1.01x of gcc's build of the original at 1 thread
    on dev box B, where the stride order, j inside k, ran 0.86x and its batch loop jammed by 4 0.68x)."""
    path = os.path.join(ROOT, "benchmarks", "unseen", "batched_gemm.c")
    monkeypatch.setenv("POLYTUNE_BLOCK_MIN_BYTES", str(1 << 40))  # (as optimize: three 16 x 16 fit in L1)
    out, report = tmp_path / "opt.c", tmp_path / "r.json"
    assert main(["optimize", path, "-DNB=37", "-o", str(out), "--report", str(report)]) == 0
    bands = json.loads(report.read_text())["scops"][0]["bands"]
    band = next(b for b in bands if b["members"] == 4)
    assert not band["tiled"] and band["point_loop_order"] == [0, 1, 2, 3] and band["unroll_jam"] is None
    want = checksum_line(compile_run(path, str(tmp_path / "ref"), ["-DNB=37"], openmp=False))
    for threads in (1, 2):
        assert checksum_line(compile_run(str(out), str(tmp_path / "opt"), ["-DNB=37"], True, threads)) == want
