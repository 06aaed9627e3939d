"""The kernels written after the schedules (benchmarks/unseen/), at small sizes: polytune's output prints the
original's checksum, with 1 and 2 threads, and with the tile sizes a tune may pick."""
from __future__ import annotations

import os
import subprocess

import pytest

from polytune.cli import main

UNSEEN = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "unseen")
SMALL = {  # sizes with partial tiles, in seconds or less
    "householder": ["-DM=70", "-DN=45", "-DK=9"],
    "blur": ["-DH=61", "-DW=53", "-DT=3"],
    "batched_gemm": ["-DNB=37"],
    "transpose_scale": ["-DN=75", "-DR=3"],
    "fir": ["-DC=3", "-DL=1000", "-DK=13"],
    "ttm": ["-DN=23"],
    "lcs": ["-DN=150"],
    "batched_small_gemm": ["-DNB=5", "-DM=13", "-DN=19", "-DK=11"],
    "edit_distance": ["-DN=150"],
    "mode1_product": ["-DNA=23", "-DNB=9", "-DNC=17", "-DND=29"],
    "gemm_tt": ["-DM=37", "-DN=41", "-DK=29"],
    "gemm_odd": ["-DM=67", "-DN=71", "-DK=59"],
    "int_matmul": ["-DM=47", "-DN=53", "-DK=61"],
    "dense_batch": ["-DBATCH=5", "-DNOUT=67", "-DNIN=41"],
    "iir_rows": ["-DNC=5", "-DW=301", "-DPASSES=3"],
    "rowbuf_transform": ["-DNBATCH=3", "-DNROW=29", "-DNIN=37", "-DNOUT=41"],
    "tensor_inplace": ["-DNA=7", "-DNB=11", "-DNC=37"],
    "proj_residual": ["-DNS=53", "-DNK=19", "-DNF=43"],
    "small_rows": ["-DNROW=301", "-DNIN=24", "-DNOUT=24"],
    "upsample_clamp": ["-DH=37", "-DW=29", "-DT=2"],
    "sobel_border": ["-DN=41", "-DT=2"],
    "fir_clamp": ["-DC=3", "-DL=1001", "-DK=13", "-DT=2"],
    "helper_blur": ["-DH=23", "-DW=41", "-DT=2"],
    "transitive_closure": ["-DN=71"],
    "widest_path": ["-DN=67"],
}


def same_checksum(want: str, got: str) -> bool:
    """The printed checksums agree: integers exactly; floating-point ones up to one unit of their last printed
    digit. A transformed contraction may sum each element's products in another grouping (register blocks,
    blocks of k); the rounding error of a reassociated sum of K products is at most about K * 2^-53 times the
    sum of their magnitudes, far below the 11th significant digit at these sizes (K < 100, data of one sign
    or mildly cancelling), so only the printed last digit's rounding may differ."""
    a, b = want.split()[-1], got.split()[-1]
    if "e" not in a.lower() and "." not in a:
        return a == b
    unit = 10.0 ** (int(a.lower().split("e")[1]) - 10) if "e" in a.lower() else 0.0
    return abs(float(a) - float(b)) <= 1.01 * unit


def _run(exe: str, threads: int) -> str:
    out = subprocess.run([exe], capture_output=True, text=True, timeout=60, check=True,
                         env=dict(os.environ, OMP_NUM_THREADS=str(threads))).stdout
    return next(line for line in out.splitlines() if line.startswith("checksum:"))


def test_every_unseen_kernel_has_its_small_sizes():
    assert sorted(SMALL) == sorted(f[:-2] for f in os.listdir(UNSEEN) if f.endswith(".c"))


@pytest.mark.parametrize("tiles", ["32", "16,8,16,8"])
@pytest.mark.parametrize("kernel", sorted(SMALL))
def test_an_unseen_kernel_prints_the_originals_checksum(tmp_path, kernel, tiles):
    src = os.path.join(UNSEEN, kernel + ".c")
    defs = SMALL[kernel]
    opt = str(tmp_path / "opt.c")
    assert main(["optimize", src, *defs, "--tile-sizes", tiles, "-o", opt, "-q"]) == 0
    for name, path in (("orig", src), ("opt", opt)):
        subprocess.run(["gcc", "-O3", "-fopenmp", *defs, path, "-o", str(tmp_path / name), "-lm"], check=True,
                       capture_output=True, text=True, timeout=120)
    want = _run(str(tmp_path / "orig"), 1)
    for threads in (1, 2, 4):
        got = _run(str(tmp_path / "opt"), threads)
        assert same_checksum(want, got), (threads, want, got)
