"""The kernels written after the schedules (benchmarks/unseen/), at small sizes: polytune's output prints the
original's checksum, with 1 and 2 threads, and with the tile sizes a tune may pick."""
import os
import subprocess

import pytest

UNSEEN = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "unseen")
SMALL = {  # sizes with partial tiles, in seconds or less
    "householder": ["-DM=70", "-DN=45", "-DK=9"],
    "blur": ["-DH=61", "-DW=53", "-DT=3"],
    "batched_gemm": ["-DNB=37"],
    "transpose_scale": ["-DN=75", "-DR=3"],
    "fir": ["-DC=3", "-DL=1000", "-DK=13"],
    "ttm": ["-DN=23"],
    "lcs": ["-DN=150"],
}


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
    subprocess.run(["python3", "-m", "polytune", "optimize", src, *defs, "--tile-sizes", tiles, "-o", opt],
                   check=True, capture_output=True, text=True, timeout=120)
    for name, path in (("orig", src), ("opt", opt)):
        subprocess.run(["gcc", "-O3", "-fopenmp", *defs, path, "-o", str(tmp_path / name), "-lm"], check=True,
                       capture_output=True, text=True, timeout=120)
    want = _run(str(tmp_path / "orig"), 1)
    assert _run(str(tmp_path / "opt"), 1) == want
    assert _run(str(tmp_path / "opt"), 2) == want
