"""The GPU benchmark inputs (benchmarks/gpu/): polytune accepts each one and its output computes what the original does.

At the small sizes of benchmarks/gpu/SIZES.md: optimize, compile original and output with gcc, compare the checksum
lines. Also: the variants of one kernel that sum in the same order agree bit for bit, the files are valid C++ (nvcc
compiles them as C++), and the unrolled files refuse a size that is not a multiple of 4.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from conftest import ROOT, checksum_line, compile_run

from polytune.cli import main

GPU = os.path.join(ROOT, "benchmarks", "gpu")
# Small sizes (benchmarks/gpu/SIZES.md): every kernel runs in milliseconds; multiples of 4 where a loop over N is
# unrolled by 4, N > 8 where a radius-4 stencil needs an interior.
SMALL = {
    "matmul_vanilla": ["-DN=20"],
    "matmul_unroll": ["-DN=20"],
    "matmul_interchange": ["-DN=20"],
    "stencil2d_vanilla": ["-DN=19"],
    "stencil2d_unroll": ["-DN=19"],
    "stencil2d_interchange": ["-DN=19"],
    "reduction_vanilla": ["-DN=20"],
    "reduction_unroll": ["-DN=20"],
    "reduction_interchange": ["-DN=20"],
    "stencil3d_ns": ["-DN=13"],
    "softmax": ["-DN=13"],
}
# Variants with the same summation order per element (stencil2d_interchange sums in another order).
SAME_RESULT = [("matmul_vanilla", "matmul_unroll", "matmul_interchange"),
               ("stencil2d_vanilla", "stencil2d_unroll"),
               ("reduction_vanilla", "reduction_unroll", "reduction_interchange")]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    d = tmp_path_factory.mktemp("gpuref")
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = checksum_line(compile_run(os.path.join(GPU, name + ".c"), str(d / name), SMALL[name], False))
        return cache[name]

    return get


def test_every_file_listed():
    assert sorted(f[:-2] for f in os.listdir(GPU) if f.endswith(".c")) == sorted(SMALL)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_gpu_benchmark_optimized_matches(name, reference, tmp_path):
    out = tmp_path / f"{name}.polytune.c"
    assert main(["optimize", os.path.join(GPU, name + ".c"), *SMALL[name], "-o", str(out)]) == 0
    got = checksum_line(compile_run(str(out), str(tmp_path / "exe"), SMALL[name], True))
    assert got == reference(name)


@pytest.mark.parametrize("group", SAME_RESULT, ids=lambda g: g[0].split("_")[0])
def test_variants_agree(group, reference):
    assert len({reference(name) for name in group}) == 1


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")
def test_valid_cplusplus():
    for name, flags in SMALL.items():
        r = subprocess.run(["g++", "-x", "c++", "-fsyntax-only", "-Wall", "-Wno-unknown-pragmas", *flags,
                            os.path.join(GPU, name + ".c")], capture_output=True, text=True)
        assert r.returncode == 0 and not r.stderr, f"{name}: {r.stderr}"


@pytest.mark.parametrize("name,flags", [("matmul_unroll", ["-DN=22"]), ("reduction_unroll", ["-DN=20", "-DM=22"])])
def test_unroll_requires_multiple_of_4(name, flags):
    r = subprocess.run(["gcc", "-fsyntax-only", *flags, os.path.join(GPU, name + ".c")], capture_output=True, text=True)
    assert r.returncode != 0 and "multiple of 4" in r.stderr
