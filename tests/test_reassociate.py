"""`--reassociate` (poly/contraction.py Blocks.reassociate, emit/blis.py): a contraction whose statement adds a
sum of products adds them to the result one at a time, only where the user asks; without it every element
keeps the original's order."""
from __future__ import annotations

import subprocess

import pytest

from polytune.cli import build_parser, main, tune_options
from polytune.measure.c import BuildConfig
from polytune.measure.cache import workload_key
from polytune.pipeline import OptimizeOptions, analyze
from polytune.poly.contraction import Blocks, blocks_text, parse_blocks, summands
from polytune.tune import make_target

SYR2K = r"""#include <stdio.h>
#include <stdlib.h>
static void syr2k(int n, int m, double alpha, double C[n][n], double A[n][m], double B[n][m]) {
#pragma scop
  for (int i = 0; i < n; i++)
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++)
        C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k] - A[j][k] * B[i][k];
#pragma endscop
}
int main(int argc, char **argv) {
  int n = atoi(argv[1]), m = atoi(argv[2]);
  double (*A)[m] = malloc(sizeof(double) * n * m), (*B)[m] = malloc(sizeof(double) * n * m);
  double (*C)[n] = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n; i++)
    for (int k = 0; k < m; k++) { A[i][k] = (i * 7 + k) % 5 - 2; B[i][k] = (i + 3 * k) % 7 - 3; }
  for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) C[i][j] = i - j;
  syr2k(n, m, 2.0, C, A, B);
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += C[i][j] * (j % 3 + 1);
    printf("%.17g\n", s);
  }
  return 0;
}
"""


def test_a_sum_of_products_is_one_update_per_product_with_its_sign():
    assert summands("((@b0 * @a1) + (@b2 * @a3))", "+") == (("+", "(@b0 * @a1)"), ("+", "(@b2 * @a3)"))
    # W - ((p + q) - (-r)) = W - p - q - r
    assert summands("(((@b0 * @a1) + (@b2 * @a3)) - (-(@a4 * @b5)))", "-") == (
        ("-", "(@b0 * @a1)"), ("-", "(@b2 * @a3)"), ("-", "(@a4 * @b5)"))
    assert summands("(@a0 * @b1)", "+") == (("+", "(@a0 * @b1)"),)
    assert summands("(@a0 * (@b1 + @b2))", "+") == (("+", "(@a0 * (@b1 + @b2))"),)  # a product stays one


def test_reassociate_is_a_blocks_option_of_optimize_and_of_tune(tmp_path):
    b = parse_blocks("mr=4,reassociate=1")
    assert b.reassociate and b.mr == 4 and parse_blocks(blocks_text(b)) == b
    assert not parse_blocks("mr=4").reassociate
    src = tmp_path / "s.c"
    src.write_text(SYR2K)
    args = build_parser().parse_args(["tune", str(src), "--reassociate"])
    target = make_target(analyze(str(src)), tune_options(args))
    assert target.opts.blocks.reassociate  # every variant tune builds starts from it


def _run(exe, n: int, m: int, threads: int) -> str:
    return subprocess.run([str(exe), str(n), str(m)], capture_output=True, text=True, check=True, timeout=60,
                          env={"OMP_NUM_THREADS": str(threads), "PATH": "/usr/bin:/bin"}).stdout


@pytest.mark.parametrize("reassociate", [False, True])
def test_reassociated_products_are_added_one_at_a_time_and_give_the_sums_the_original_gives(
        tmp_path, monkeypatch, reassociate):
    """With integer-valued data every sum is exact whatever its order, so the reassociated program prints
    what the original prints, at sizes smaller than a block and larger, at 1, 2 and 3 threads; its kernel
    adds each product on its own line (three for this statement), the default one line per element."""
    monkeypatch.setenv("POLYTUNE_PACK_WORK", "1")  # the packed code at every size
    src, out = tmp_path / "s.c", tmp_path / "s.opt.c"
    src.write_text(SYR2K)
    assert main(["optimize", str(src), "-o", str(out), *(["--reassociate"] if reassociate else [])]) == 0
    text = out.read_text()
    assert "packed blocks" in text
    updates = [line for line in text.splitlines() if line.strip().startswith("c_c0_0 = c_c0_0")]
    assert [u.split("=", 1)[1].split()[1] for u in updates] == (["+", "+", "-"] if reassociate else ["+"])
    for exe, path, flags in (("ref", src, []), ("opt", out, ["-fopenmp"])):
        subprocess.run(["gcc", "-O2", *flags, str(path), "-o", str(tmp_path / exe)], check=True)
    for n, m in ((5, 3), (37, 70), (70, 301)):
        want = _run(tmp_path / "ref", n, m, 1)
        for threads in (1, 2, 3):
            assert _run(tmp_path / "opt", n, m, threads) == want, (n, m, threads)


def test_reassociate_for_another_target_says_it_does_not_apply(tmp_path, capsys):
    src = tmp_path / "s.c"
    src.write_text(SYR2K)
    assert main(["optimize", str(src), "--target", "cuda", "--reassociate", "-o", str(tmp_path / "s.cu")]) == 0
    assert "--reassociate applies to the c target's contraction kernels only" in capsys.readouterr().err


def test_measurements_with_and_without_reassociation_are_cached_apart(tmp_path):
    src = tmp_path / "s.c"
    src.write_text(SYR2K)
    program, build = analyze(str(src)), BuildConfig(runs=1)
    keys = {workload_key(program, build, OptimizeOptions(blocks=Blocks(reassociate=r))) for r in (False, True)}
    assert len(keys) == 2
