"""A region whose tiles run as a wavefront (no tile loop is parallel: the tiles of one anti-diagonal run at
once) has a second version for one thread, the same tiles in their own order: on one thread the wavefront
only costs locality (a tile's rows do not follow the last tile's). OpenMP's thread count picks the version
at run time; built without OpenMP, only the one-thread version is there."""
from __future__ import annotations

import json
import os

import pytest
from conftest import KERNELS, ROOT, checksum_line, compile_run

from polytune.cli import main
from polytune.emit.c import MORE_THAN_ONE_THREAD, ONE_THREAD_REGION
from polytune.pipeline import analyze

LCS = os.path.join(ROOT, "benchmarks", "unseen", "lcs.c")
SMALL = {"lcs": ["-DN=77"], "seidel-2d": ["-DN=45", "-DTSTEPS=5"], "lu": ["-DN=41"],
         "fdtd-2d": ["-DN=37", "-DTSTEPS=4"]}


def _source(name: str) -> str:
    return LCS if name == "lcs" else os.path.join(KERNELS, name + ".c")


def _optimize(tmp_path, name: str, *args: str) -> tuple[str, dict]:
    out, report = tmp_path / f"{name}.opt.c", tmp_path / f"{name}.json"
    assert main(["optimize", _source(name), "-o", str(out), "--report", str(report), *SMALL.get(name, []), *args]) == 0
    return out.read_text(), json.loads(report.read_text())


@pytest.mark.parametrize("name", sorted(SMALL))
def test_a_wavefront_region_has_a_version_for_one_thread_with_the_same_results(name, tmp_path):
    text, report = _optimize(tmp_path, name)
    (scop,) = report["scops"]
    assert scop["one_thread_version"] and any(b["wavefront"] for b in scop["bands"])
    assert text.count(f"if ({MORE_THAN_ONE_THREAD})") == 1
    # (the one-thread version a function of its own under OpenMP, as the parallel one is)
    assert text.count(ONE_THREAD_REGION) == 1 and "else\n" in text.split(ONE_THREAD_REGION)[0][-12:]
    out = tmp_path / "opt.c"
    out.write_text(text)
    want = checksum_line(compile_run(_source(name), str(tmp_path / "ref"), SMALL[name], openmp=False))
    for threads in (1, 2, 3):
        assert checksum_line(compile_run(str(out), str(tmp_path / "opt"), SMALL[name], True, threads)) == want
    assert checksum_line(compile_run(str(out), str(tmp_path / "opt"), SMALL[name], True, 2,
                                     env={"OMP_THREAD_LIMIT": "1"})) == want
    assert checksum_line(compile_run(str(out), str(tmp_path / "plain"), SMALL[name], openmp=False)) == want


def test_the_one_thread_version_has_the_same_tiles_without_the_wavefront():
    a = analyze(LCS, defines=("N=77",)).scops[0].cpu
    wave = a.tiled((16, 8))
    serial = a.tiled(wave.tile_sizes, wavefront=False)
    assert any(b.wavefront for b in wave.bands) and not any(b.wavefront for b in serial.bands)
    assert serial.tile_sizes == wave.tile_sizes == (16, 8)
    assert [b.point_order for b in serial.bands] == [b.point_order for b in wave.bands]
    assert [b.unroll_jam for b in serial.bands] == [b.unroll_jam for b in wave.bands]


def test_regions_without_a_wavefront_and_code_without_openmp_have_one_version(tmp_path):
    text, report = _optimize(tmp_path, "gemm", "-DN=20")  # (its packed product asks the thread count itself)
    assert not report["scops"][0]["one_thread_version"] and "omp_get_thread_limit" not in text
    text, report = _optimize(tmp_path, "lcs", "--no-parallel")
    assert not report["scops"][0]["one_thread_version"] and "omp_get_thread_limit" not in text


def test_no_parallel_code_has_the_one_thread_versions_diamond_tiles_and_no_pragma(tmp_path):
    """Without parallelism the tiler used to skip concurrent start: jacobi-2d's band got skewed rectangular
    tiles there (0.6x of gcc on one thread), diamond tiles in the default's one-thread version (1.5x)."""
    flags = ["-DN=41", "-DTSTEPS=6"]
    src = os.path.join(KERNELS, "jacobi-2d.c")
    out, report = tmp_path / "j.c", tmp_path / "j.json"
    assert main(["optimize", src, "-o", str(out), "--report", str(report), "--no-parallel", *flags]) == 0
    (band,) = json.loads(report.read_text())["scops"][0]["bands"]
    assert band["concurrent_start"] and not band["wavefront"] and band["parallel_loop"] is None
    assert "#pragma omp parallel" not in out.read_text()
    want = checksum_line(compile_run(src, str(tmp_path / "ref"), flags, openmp=False))
    assert checksum_line(compile_run(str(out), str(tmp_path / "opt"), flags, openmp=False)) == want


NESTED = r"""
#include <stdio.h>
#define N 61
static void align(int n, int s[N][N], const int a[N], const int b[N]) {
  int i, j;
#pragma scop
  for (i = 1; i < n; i++)
    for (j = 1; j < n; j++)
      s[i][j] = (s[i-1][j-1] + (a[i] == b[j] ? 2 : -1)) > (s[i-1][j] > s[i][j-1] ? s[i-1][j] : s[i][j-1]) - 1
                ? s[i-1][j-1] + (a[i] == b[j] ? 2 : -1) : (s[i-1][j] > s[i][j-1] ? s[i-1][j] : s[i][j-1]) - 1;
#pragma endscop
}
static int s[4][N][N], a[4][N], b[4][N];
int main(void) {
  for (int p = 0; p < 4; p++)
    for (int i = 0; i < N; i++) {
      a[p][i] = (i * 7 + p) % 5; b[p][i] = (i * 3 + 2 * p) % 5;
      for (int j = 0; j < N; j++) s[p][i][j] = i == 0 || j == 0 ? -(i + j) : 0;
    }
  /* the user's own parallel loop: inside it, the region's one-thread version (a nested region of one thread) */
#pragma omp parallel for
  for (int p = 0; p < 4; p++)
    align(N, s[p], a[p], b[p]);
  long sum = 0;
  for (int p = 0; p < 4; p++)
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) sum += (long)s[p][i][j] * (i + 3 * j + p);
  printf("%ld\n", sum);
  return 0;
}
"""


def test_the_one_thread_version_runs_inside_the_users_parallel_loop(tmp_path):
    src = tmp_path / "nested.c"
    src.write_text(NESTED)
    out = tmp_path / "nested.opt.c"
    assert main(["optimize", str(src), "-o", str(out), "-q"]) == 0
    text = out.read_text()
    assert text.count(ONE_THREAD_REGION) == 1 and f"if ({MORE_THAN_ONE_THREAD})" in text
    want = compile_run(str(src), str(tmp_path / "ref"), [], openmp=False)
    for threads in (1, 2, 4):
        assert compile_run(str(out), str(tmp_path / "opt"), [], True, threads) == want
        assert compile_run(str(out), str(tmp_path / "nest"), [], True, threads,
                           env={"OMP_MAX_ACTIVE_LEVELS": "2"}) == want  # (nesting on: the parallel version)
