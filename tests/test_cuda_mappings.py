"""Tiled CUDA mappings (several points per thread, registers, shared-memory tiles with a strip-mined
reduction loop), run on the CPU through tests/data/cuda_emu.h (threads as coroutines, so barriers and
shared memory behave as on the GPU) and compared with the original program: random nests under random
mappings, partial tiles, triangular domains."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import islpy as isl
import pytest
from conftest import EMU_CXXFLAGS, KERNELS, ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nestgen import programs
from test_cuda import emulate

from polytune.emit.cuda import CudaMapping, generate_cuda_region, mapping_space, resource_problem
from polytune.errors import UsageError
from polytune.pipeline import OptimizeOptions, analyze, generate_cuda
from polytune.poly.gpu import plan_tiled

GXX = shutil.which("g++")
GCC = shutil.which("gcc")
needs_gcc = pytest.mark.skipif(GXX is None or GCC is None, reason="needs gcc and g++")
GPU_DIR = os.path.join(ROOT, "benchmarks", "gpu")
NVCC = shutil.which("nvcc")
ALL = ("A", "B", "C", "s", "x", "y", "data", "cov", "mean")


def _run(cmd: list[str], exe: Path) -> bytes:
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    return subprocess.run([str(exe)], check=True, capture_output=True, timeout=120).stdout


def cuda_text(path: str, mapping: CudaMapping, defines: tuple[str, ...] = ()) -> str:
    return generate_cuda(analyze(path, defines=defines), OptimizeOptions(target="cuda"), mapping=mapping)


def check_mapping(source: str, mapping: CudaMapping, what: str = "", defines: tuple[str, ...] = (),
                  exact: bool = True, gpu: bool = False) -> str:
    """The program's CUDA output under *mapping*, emulated (or, with *gpu*, compiled with nvcc without
    fused multiply-adds and run on the GPU), prints what the original prints; returns the CUDA text."""
    with tempfile.TemporaryDirectory(prefix="polytune-map-") as d:
        tmp = Path(d)
        src, emu = tmp / "nest.c", tmp / "emu.cpp"
        src.write_text(source)
        flags = [f"-D{x}" for x in defines]
        expected = _run([GCC, "-O1", *flags, str(src), "-o", str(tmp / "orig"), "-lm"], tmp / "orig")
        text = cuda_text(str(src), mapping, defines)
        if gpu:
            (tmp / "k.cu").write_text(text)
            got = _run([NVCC, "-O3", "-arch=native", "-fmad=false", "-Xcompiler", "-w", *flags, str(tmp / "k.cu"),
                        "-o", str(tmp / "k"), "-lm"], tmp / "k")
        else:
            emu.write_text(emulate(text))
            got = _run([GXX, *EMU_CXXFLAGS, *flags, "-x", "c++", str(emu), "-o", str(tmp / "emu"), "-lm"], tmp / "emu")
        if exact and (mapping is None or mapping.reduction != "warp"):
            assert got == expected, f"CUDA output differs ({what}, {mapping})\n{text}"
        elif exact:  # a warp's lanes add in another order: every printed value within rounding
            g, e = got.split(), expected.split()
            assert len(g) == len(e) and all(float(a) == pytest.approx(float(b), rel=1e-9, abs=1e-12)
                                            for a, b in zip(g, e)), f"CUDA output differs ({what}, {mapping})\n{text}"
        else:
            g = [float(x.split(b":")[-1]) for x in got.split(b"\n") if x.startswith(b"checksum")]
            e = [float(x.split(b":")[-1]) for x in expected.split(b"\n") if x.startswith(b"checksum")]
            assert g == pytest.approx(e, rel=1e-5), (what, mapping)
        return text


mappings = st.builds(
    CudaMapping,
    block=st.sampled_from([(1, 1), (3, 2), (5,), (2, 2, 2), (4, 4)]),
    points=st.sampled_from([(1,), (2,), (1, 3), (2, 2), (3, 1, 2), (4, 2), (8,)]),
    shared=st.sampled_from([None, ALL, ()]),
    reduction_tile=st.sampled_from([1, 2, 3, 32]),
    registers=st.booleans(),
    reduction=st.sampled_from(["thread", "warp"]),
    tile=st.sampled_from(["auto", "all"]),  # auto: kernels tiled and kernels left flat in one region
    flat_block=st.sampled_from([(), (3, 2), (7,)]),
    vector=st.sampled_from([1, 4]),  # runs of 4 x points where a kernel's x points are a multiple of 4
    fuse=st.booleans(),  # the fused GPU schedule (statements that share reads in one kernel)
    flat=st.sampled_from([False, False, True]),
)


@pytest.mark.slow
@needs_gcc
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(prog=programs(), mapping=mappings)
def test_random_nest_under_random_mapping_prints_the_same_values(prog, mapping):
    check_mapping(prog.source, mapping, prog.summary)


MATMUL = open(os.path.join(GPU_DIR, "matmul_vanilla.c")).read()


@needs_gcc
@pytest.mark.parametrize("mapping", [
    CudaMapping(block=(16, 16), points=(2, 2), reduction_tile=8),  # 32x32 tiles over N=20: partial tiles
    CudaMapping(block=(8, 4), points=(1, 3), reduction_tile=7),  # 8x12 tiles, a K strip that does not divide N
    CudaMapping(block=(4, 4), points=(4, 4), shared=(), reduction_tile=5),
    CudaMapping(block=(32, 8), points=(1, 4), registers=False),
    CudaMapping(block=(4, 4), points=(4, 2), reduction_tile=3, vector=4),  # runs of 4 points along x
    CudaMapping(block=(2, 4), points=(8, 2), reduction_tile=4, vector=4, min_blocks=2),
])
def test_matmul_mapping_with_partial_tiles(mapping):
    text = check_mapping(MATMUL, mapping, "matmul", ("N=20",), exact=False)
    assert ("__syncthreads();" in text) == (mapping.shared != ())
    assert ("pt_reg_C" in text) == mapping.registers


def test_default_mapping_stages_gemm_operands_and_keeps_c_in_registers():
    text = cuda_text(os.path.join(GPU_DIR, "matmul_vanilla.c"), None, ("N=64",))
    assert "__shared__" in text and "pt_sh_A" in text and "pt_sh_B" in text and "pt_sh_C" not in text
    assert "pt_reg_C[4][1]" in text  # a 32x32 tile on a 32x8 block: 4 points per thread
    assert "pt_sh_A[32][32]" in text and "pt_sh_B[32][32]" in text  # strips of 32
    assert "__launch_bounds__(256)" in text
    two = cuda_text(os.path.join(GPU_DIR, "matmul_vanilla.c"), CudaMapping(block=(16, 16), points=(8, 8),
                                                                           reduction_tile=8, min_blocks=2), ("N=64",))
    assert "__launch_bounds__(256, 2)" in two


def test_default_mapping_of_a_stencil_keeps_the_32x32_tile():
    text = cuda_text(os.path.join(GPU_DIR, "stencil2d_vanilla.c"), None, ("N=64",))
    # its 8x8 taps are no long reduction: 4 points on a 32x8 block, the tile and its halo staged whole
    assert "__launch_bounds__(256)" in text and "pt_reg_B[4][1]" in text and "pt_sh_A[39][39]" in text


SYRK_TRI = """#include <stdio.h>
#define N 19
#define M 11
double A[M][N], C[N][N];
int main(void)
{
  int i, j, k;
  for (i = 0; i < M; i++) for (j = 0; j < N; j++) A[i][j] = (double)((i * 7 + j * 3) % 17) * 0.125 - 1.0;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) C[i][j] = 0.5;
#pragma scop
  for (i = 0; i < N; i++)
    for (j = i; j < N; j++) {
      C[i][j] = C[i][j] * 0.25;
      for (k = 0; k < M; k++)
        C[i][j] += A[k][i] * A[k][j];
    }
#pragma endscop
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) printf("%.17g\\n", C[i][j]);
  return 0;
}
"""


COV_TRI = """#include <stdio.h>
#define N 21
#define M 17
double data[N][M], cov[M][M];
int main(void)
{
  int i, j, k;
  for (i = 0; i < N; i++) for (j = 0; j < M; j++) data[i][j] = (double)((i * 7 + j * 3) % 17) * 0.125 - 1.0;
#pragma scop
  for (i = 0; i < M; i++)
    for (j = i; j < M; j++) {
      cov[i][j] = 0.0;
      for (k = 0; k < N; k++)
        cov[i][j] += data[k][i] * data[k][j];
      cov[i][j] /= (N - 1.0);
      cov[j][i] = cov[i][j];
    }
#pragma endscop
  for (i = 0; i < M; i++) for (j = 0; j < M; j++) printf("%.17g\\n", cov[i][j]);
  return 0;
}
"""


@needs_gcc
@pytest.mark.parametrize("mapping", [
    CudaMapping(block=(8, 4), points=(1, 2), reduction_tile=4, tile="all"),
    CudaMapping(block=(4, 4), points=(2, 2), reduction_tile=5, tile="all"),
])
def test_covariance_stages_data_in_the_strip_mined_loop_of_a_sequence(mapping):
    """The reduction loop sits between statements (cov = 0; the k loop; cov /= n; cov[j][i] = cov[i][j]):
    it is still strip-mined and data staged, on a triangular domain (tiling forced: see the next test)."""
    text = check_mapping(COV_TRI, mapping, "covariance")
    assert "pt_sh_data" in text and "__syncthreads();" in text


@needs_gcc
@pytest.mark.parametrize("mapping", [None, CudaMapping(block=(8, 4), points=(1, 2), reduction_tile=4)])
def test_default_leaves_flat_a_reduction_whose_result_cannot_live_in_registers(mapping):
    """covariance's cov[j][i] = cov[i][j] gives each point two elements of cov: no registers, so a tile's
    points would read and write global memory in every iteration of the k loop (0.44x on an H200). The
    default tiles only where that pays: the k loop's kernel keeps one point per thread on the flat block,
    the loop inside its guard, while the element-wise kernel (cov = 0 in its own kernel, where there is one)
    stays tiled."""
    text = check_mapping(COV_TRI, mapping, "covariance")
    kernel = next(k for k in text.split("__global__")[1:] if "data[" in k)
    assert "__syncthreads" not in kernel and "pt_r0" not in kernel and "threadIdx.y" in kernel
    assert "__launch_bounds__(1024)" in kernel


@needs_gcc
@pytest.mark.parametrize("mapping", [
    CudaMapping(block=(8, 4), points=(1, 2), reduction_tile=4),
    CudaMapping(block=(3, 5), points=(2, 3), reduction_tile=32),
    CudaMapping(block=(16,), points=(3,), reduction_tile=2),
])
def test_triangular_domain_with_shared_tiles_and_registers(mapping):
    text = check_mapping(SYRK_TRI, mapping, "triangular")
    assert "pt_sh_A" in text and "__syncthreads();" in text and "pt_reg_C" in text



def _unrolled_strips(text: str) -> int:
    """How many staged strip loops the text unrolls (the full tiles' copies)."""
    lines = text.split("\n")
    return sum(1 for a, b in zip(lines, lines[1:])
               if a.strip() == "#pragma unroll" and b.strip().startswith("for (pt_I "))


@needs_gcc
@pytest.mark.parametrize("mapping,n", [
    (CudaMapping(block=(4, 4), points=(2, 2), reduction_tile=4), 20),  # 8x8 tiles: 4 full ones, partial ones
    (CudaMapping(block=(4, 2), points=(1, 3), reduction_tile=3), 24),  # 4x6 tiles, strips of 3: every tile full
    (CudaMapping(block=(4, 4), points=(2, 1), reduction_tile=5), 23),  # a last strip of 3
    (CudaMapping(block=(2, 2), points=(2, 2), shared=()), 10),  # full tiles without a staged strip
])
def test_full_tiles_run_unchecked_and_partial_tiles_keep_their_checks(mapping, n):
    text = check_mapping(MATMUL, mapping, "matmul", (f"N={n}",), exact=False)
    kernel = text[text.index("__global__"):text.index("#undef")]
    assert "__syncthreads();" in kernel or mapping.shared == ()
    if mapping.shared != ():
        assert _unrolled_strips(kernel) == 1
        # the full tiles' staging copies have no check
        assert any(x.strip().startswith("pt_sh_A[") for x in kernel.split("\n"))
    # the same values as the previous code, every point checked
    old = check_mapping(MATMUL, replace(mapping, full_tiles=False), "matmul", (f"N={n}",), exact=False)
    assert _unrolled_strips(old) == 0


@needs_gcc
@pytest.mark.parametrize("mapping", [
    CudaMapping(block=(2, 2), points=(1, 2), reduction_tile=4),  # tiles inside the triangle are full
    CudaMapping(block=(2, 2), points=(1, 1), reduction_tile=3, shared=()),
])
def test_triangular_domain_with_full_and_partial_tiles(mapping):
    text = check_mapping(SYRK_TRI, mapping, "triangular")
    if mapping.shared != ():
        assert _unrolled_strips(text) >= 1


LOOP_FROM_ONE = """#include <stdio.h>
#define N 8
double A[N + 6][N + 6];
int main(void)
{
  int i, j, k, n = N;
  for (i = 0; i < N + 6; i++) for (j = 0; j < N + 6; j++) A[i][j] = (double)((i * 7 + j * 3) % 17) * 0.125 - 1.0;
#pragma scop
  for (i = 0; i <= n - 1; i++)
    for (k = 0; k <= n - 1; k++)
      A[i + 1][i + 1] = A[i + 1][i + 1] * 0.5 + A[i + 2][i + 1] * 0.25 + (double)(i) * 0.0625 + 1.0;
  for (i = 1; i <= n - 1; i++)
    A[i + 1][i + 3] += A[i + 1][i + 3] * 0.125;
#pragma endscop
  for (i = 0; i < N + 6; i++) for (j = 0; j < N + 6; j++) printf("%.17g\\n", A[i][j]);
  return 0;
}
"""


@needs_gcc
def test_a_full_tile_is_checked_where_isl_left_part_of_its_condition_to_the_point_loop():
    """Generator seed (random nests, block 2,2,2): the loop from 1 fills the tile 0..7 only from n = 8 on
    and i >= 1; isl printed the full copy's `pt0 >= 1` as the point loop's lower bound, which the full copy
    does not check: the copy runs under the full condition itself."""
    check_mapping(LOOP_FROM_ONE, CudaMapping(block=(2, 2, 2)), "loop from 1")


def test_full_tiles_are_the_tiles_isl_proves_full():
    prog = analyze(os.path.join(GPU_DIR, "matmul_vanilla.c"), defines=("N=64",))
    a = prog.scops[0]
    tiled = plan_tiled(a.scop, a.deps, a.gpu, CudaMapping(block=(16, 16), points=(8, 8), reduction_tile=8), (16, 16))
    (plan,) = tiled.plans.values()
    want = isl.Set("[n] -> { [t0, t1, s] : t0 >= 0 and 128t0 + 128 <= n and t1 >= 0 and 128t1 + 128 <= n "
                   "and s >= 0 and 8s + 8 <= n }")
    assert plan.full.is_equal(want.align_params(plan.full.get_space()))

@needs_gcc
@pytest.mark.parametrize("name", ["matmul", "gemver", "mvt", "heat-3d", "gemm_bias_relu", "2d_bidirec"])
def test_pluto_kernels_with_every_array_staged(name):
    """(the benchmarks/pluto files that are valid C++)"""
    path = os.path.join(KERNELS, name + ".c")
    defines = ("N=13", "TSTEPS=3", "NC=3", "D=7")
    arrays = tuple({a.name for s in analyze(path, defines=defines).scops for a in s.scop.arrays})
    mapping = CudaMapping(block=(4, 2), points=(2, 3), shared=arrays, reduction_tile=3)
    check_mapping(open(path).read(), mapping, name, defines, exact=False)


def test_shared_tiles_over_the_limit_are_rejected_before_running():
    program = analyze(os.path.join(GPU_DIR, "matmul_vanilla.c"), defines=("N=256",))
    a = program.scops[0]
    big = generate_cuda_region(a.scop, a.gpu, mapping=CudaMapping(block=(32, 32), points=(4, 4), reduction_tile=64),
                               deps=a.deps)
    assert "shared-memory tiles" in resource_problem(big, element_bytes=4)
    ok = generate_cuda_region(a.scop, a.gpu, mapping=CudaMapping(block=(32, 8), points=(1, 4)), deps=a.deps)
    assert resource_problem(ok, element_bytes=4) == ""
    regs = generate_cuda_region(a.scop, a.gpu, mapping=CudaMapping(block=(8, 8), points=(8, 16), shared=()),
                                deps=a.deps)
    assert "registers" in resource_problem(regs)


def test_the_default_mapping_on_a_users_block_fits_the_device():
    """--block 1024,1 on matmul: the default's staged tiles (32 x 1024 elements of B) would exceed the 48 KB
    of shared memory a block gets (nvcc: "uses too much shared data"); the default drops what does not fit."""
    program = analyze(os.path.join(GPU_DIR, "matmul_vanilla.c"), defines=("N=20",))
    a = program.scops[0]
    for block in ((1024, 1), (1024,), (32, 32), (256, 4)):
        region = generate_cuda_region(a.scop, a.gpu, block, deps=a.deps)
        assert resource_problem(region) == "", block
    staged = generate_cuda_region(a.scop, a.gpu, (32, 8), deps=a.deps)
    assert "__shared__" in staged.kernels  # a block that fits keeps its shared-memory tiles


def test_bad_mappings_are_usage_errors():
    program = analyze(os.path.join(GPU_DIR, "matmul_vanilla.c"), defines=("N=64",))
    a = program.scops[0]
    for bad in (CudaMapping(points=(0,)), CudaMapping(block=(64, 32)), CudaMapping(reduction_tile=0),
                CudaMapping(vector=0)):
        with pytest.raises(UsageError):
            generate_cuda_region(a.scop, a.gpu, mapping=bad, deps=a.deps)


@needs_gcc
@pytest.mark.parametrize("mapping,n", [
    (CudaMapping(block=(4, 4), points=(4, 2), reduction_tile=4, vector=4), 32),  # full tiles only
    (CudaMapping(block=(4, 2), points=(8, 1), reduction_tile=3, vector=4), 21),  # partial tiles, strips
    (CudaMapping(block=(4, 4), points=(2, 2), reduction_tile=4, vector=4), 20),  # 2 x points: no runs of 4
])
def test_a_threads_points_in_runs_of_adjacent_columns_compute_the_same_product(mapping, n):
    """CudaMapping.vector: a thread's x points in runs of 4 adjacent columns (one vector load from the staged
    row of B) instead of one column every block x apart; where the x points are no multiple of 4 the kernel
    keeps the strided points."""
    text = check_mapping(MATMUL, mapping, "matmul", (f"N={n}",), exact=False)
    kernel = text[text.index("__global__"):text.index("#undef")]
    runs = mapping.points[0] % 4 == 0
    assert ("threadIdx.x * 4 + pt_r1 % 4" in kernel) == runs
    assert ("__shared__ __align__(16)" in kernel) == runs


STENCIL3D = open(os.path.join(GPU_DIR, "stencil3d_ns.c")).read()


@needs_gcc
@pytest.mark.parametrize("mapping", [CudaMapping(fuse=True, flat=True, block=(8, 2, 2)),
                                     CudaMapping(fuse=True, block=(4, 2, 2), points=(2, 1, 1)),
                                     CudaMapping(fuse=True, block=(3, 2), points=(2, 2), tile="all")])
def test_the_fused_schedule_runs_the_three_flux_statements_in_one_kernel(mapping):
    # stencil3d_ns's statements share only reads: PPCG's schedule gives a kernel each, the fused one a kernel
    # for the three (partial tiles at N=13: 5 interior points a dimension)
    text = check_mapping(STENCIL3D, mapping, "stencil3d_ns fused", defines=("N=13",), exact=False)  # (prints a time)
    assert text.count("__global__") == 1
    assert cuda_text(os.path.join(GPU_DIR, "stencil3d_ns.c"), CudaMapping(), ("N=13",)).count("__global__") == 3


@needs_gcc
@pytest.mark.parametrize("mapping", [CudaMapping(fuse=True, flat=True, block=(16,)),
                                     CudaMapping(fuse=True, block=(4,), points=(3,), tile="all")])
def test_mvt_fused_reads_its_matrix_by_rows_and_by_columns_in_one_kernel(mapping):
    path = os.path.join(KERNELS, "mvt.c")
    text = check_mapping(open(path).read(), mapping, "mvt fused", ("N=13",), exact=False)
    assert text.count("__global__") == 1


@needs_gcc
@pytest.mark.parametrize("mapping", [CudaMapping(fuse=True, block=(6,), points=(2,), shared=()),
                                     CudaMapping(fuse=True, block=(3, 2), points=(2, 1))])
def test_a_tile_printed_in_several_copies_stores_only_what_each_copy_holds(mapping):
    # random program 1146 (tests/progen.py), fused: isl prints one 12-point tile in a copy that computes one
    # point of A's statement; its store of A, guarded by the statement's domain, wrote the other points'
    # registers, never set there, over the values an earlier copy had stored (now: loaded first)
    from progen import program
    check_mapping(program(1146).source, mapping, "random program 1146")


@needs_gcc
def test_the_emulation_is_built_without_the_host_compilers_wrong_induction_variables():
    # random program 1845: every mapping's emulation printed 4 wrong values when g++ 12.2 built it at -O1 (its
    # induction-variable optimization), the right ones at -O0 or with -fno-ivopts (conftest.EMU_CXXFLAGS)
    from progen import program
    check_mapping(program(1845).source, None, "random program 1845")


def test_mapping_space_has_the_schedule_as_a_dimension_where_fusing_gives_other_kernels():
    def space(name):
        program = analyze(os.path.join(GPU_DIR, name + ".c"), defines=("N=16",))
        return dict(mapping_space([(a.scop, a.gpu) for a in program.scops],
                                  [(a.scop, a.gpu_fused) for a in program.scops]))
    assert space("stencil3d_ns")["fuse"] == (0, 1)
    assert "fuse" not in space("matmul_vanilla")  # one statement group either way


def test_mapping_space_lists_the_tunable_dimensions():
    program = analyze(os.path.join(GPU_DIR, "matmul_vanilla.c"), defines=("N=64",))
    space = dict(mapping_space([(a.scop, a.gpu) for a in program.scops]))
    assert {"block_x", "block_y", "points_x", "points_y", "reduction_tile", "shared_A", "shared_B",
            "registers", "min_blocks", "vector_x", "tiling"} <= set(space)
    assert "shared_C" not in space  # written in the kernel: never staged


WARP_SOURCES = ["reduction_vanilla", "reduction_unroll", "reduction_interchange"]
WARP_SHAPES = [((64,), (1,)), ((96,), (3,)), ((32, 2), (2,))]


# By default each source with one shape and each shape with one source (a Latin square); the other six
# pairs run under -m slow (CI's slow line).
@needs_gcc
@pytest.mark.parametrize("block,points,name", [
    pytest.param(block, points, name, id=f"block{b}-points{b}-{name}",
                 marks=[] if b == n else [pytest.mark.slow])
    for b, (block, points) in enumerate(WARP_SHAPES) for n, name in enumerate(WARP_SOURCES)])
def test_row_reductions_shared_by_a_warp(name, block, points):
    src = open(os.path.join(GPU_DIR, name + ".c")).read()
    text = check_mapping(src, CudaMapping(block=block, points=points, reduction="warp"), name, ("N=37", "M=44"),
                         exact=False)
    assert "__shfl_down_sync" in text


def test_warp_reduction_falls_back_where_a_statement_is_not_a_sum():
    src = """double A[40][40], s[40];
void f(void) {
#pragma scop
  for (int i = 0; i < 40; i++) {
    s[i] = 1.0;
    for (int j = 0; j < 40; j++)
      s[i] = s[i] * 0.5 + A[i][j];
  }
#pragma endscop
}
"""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.c")
        with open(path, "w") as f:
            f.write(src)
        text = cuda_text(path, CudaMapping(block=(64,), reduction="warp"))
    assert "__shfl_down_sync" not in text and "pt_reg_s" in text



@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
@pytest.mark.parametrize("name,mapping", [
    ("matmul_vanilla", CudaMapping(block=(16, 16), points=(4, 4), reduction_tile=16)),
    ("reduction_vanilla", CudaMapping(block=(256,), points=(2,), reduction="warp")),
])
def test_nvcc_compiles_tiled_tuning_builds(name, mapping, tmp_path):
    """The serve build (one per configuration for tiled mappings: the block is built in) compiles for sm_90."""
    from polytune.emit.c import generate_dump
    from polytune.measure.cuda import SERVE_PRELUDE
    program = analyze(os.path.join(GPU_DIR, name + ".c"), defines=("N=256",))
    dumps = [generate_dump(a.scop, indent=3, avoid=program.identifiers) for a in program.scops]
    text = SERVE_PRELUDE + generate_cuda(program, OptimizeOptions(target="cuda"), serve=True, dumps=dumps,
                                         mapping=mapping)
    assert "__syncthreads" in text or "__shfl_down_sync" in text
    (tmp_path / "s.cu").write_text(text)
    proc = subprocess.run([NVCC, "-arch=sm_90", "-O1", "-c", str(tmp_path / "s.cu"), "-o", str(tmp_path / "s.o"),
                           "-Xcompiler", "-w", "-DN=256"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_mapping_benchmark_generates_and_compiles_without_a_gpu(tmp_path):
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "cuda_mappings.py"), "--out", str(out),
                           "--quick", "--compile-only", "--kernels", "matmul_vanilla", "--jobs", "2"],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    rows = json.loads(out.read_text())["kernels"][0]["rows"]
    assert [r["variant"] for r in rows][:2] == ["previous (flat, default block)", "default"]
    assert all("error" not in r and r["registers"] > 0 for r in rows)
    assert rows[1]["smem_bytes"] > 0 and rows[0]["smem_bytes"] == 0


# The two benchmark scripts read PolyBench/C 4.2.1 as distributed (its polybench.c and headers), where they
# default to finding it: $POLYBENCH or /work/polybench.
POLYBENCH_TREE = os.environ.get("POLYBENCH", "/work/polybench")
needs_polybench = pytest.mark.skipif(not os.path.isfile(os.path.join(POLYBENCH_TREE, "utilities", "polybench.c")),
                                     reason=f"PolyBench/C 4.2.1 not found at {POLYBENCH_TREE} (set POLYBENCH)")


@pytest.mark.slow
@needs_gcc
@needs_polybench
def test_matmul_benchmark_runs_old_and_new_code_on_the_emulator(tmp_path):
    """benchmarks/cuda_matmul.py end to end with an nvcc that builds for the emulation header: every row
    verified, and a verdict on the default's gain over the old default in the program."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "nvcc").write_text(f"#!/bin/sh\nexec {sys.executable} {ROOT}/tests/data/fake_nvcc.py \"$@\"\n")
    (bin_ / "nvcc").chmod(0o755)
    out = tmp_path / "r.json"
    env = dict(os.environ, PYTHONPATH=ROOT, PATH=f"{bin_}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "cuda_matmul.py"), "--out", str(out),
                           "--kernels", "matmul_vanilla,gemm", "--dataset", "MINI", "--gpu-size", "20",
                           "--rounds", "2", "--no-fixed", "--jobs", "2", "--program-rounds", "3"],
                          capture_output=True, text=True, env=env, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    for k in json.loads(out.read_text())["kernels"]:
        assert [r["variant"] for r in k["rows"]] == ["default", "old default", "old 128x128 on 16x16, K8"]
        assert all(r["verified"] == "ok" and r["kernel_ms_median"] > 0 for r in k["rows"]), k["rows"]
        assert k["gain"]["verdict"] in ("holds", "does not hold", "undecided")
        assert k["gain"]["source"] == "program rounds" and k["gain"]["rounds"] == 3


def _cuda_matmul():
    import importlib.util
    spec = importlib.util.spec_from_file_location("cuda_matmul", os.path.join(ROOT, "benchmarks", "cuda_matmul.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_matmul_benchmark_variants_are_labels_with_commas_inside_or_all():
    cm = _cuda_matmul()
    assert cm.parse_variants("default,old default") == ["default", "old default"]
    assert cm.parse_variants("old 128x128 on 16x16, K8,default, 2 blocks/SM,default") == [
        "old 128x128 on 16x16, K8", "default, 2 blocks/SM", "default"]
    assert cm.parse_variants(",".join(cm.DEFAULT_VARIANTS)) == list(cm.DEFAULT_VARIANTS)
    assert len(cm.parse_variants("all")) == 21
    with pytest.raises(SystemExit, match="unknown variant 'nope'"):
        cm.parse_variants("default,nope")


def test_program_verdict_holds_where_the_region_saves_the_kernel_time_and_not_where_copies_eat_it():
    """Regions of 26 ms with 2 ms of noise shared by the round's pair and 0.3 ms each: 60 rounds resolve
    3%; a default whose region saves the 0.9 ms its kernel saves holds, one that saves nothing does not."""
    import numpy as np
    cm = _cuda_matmul()
    rng = np.random.default_rng(7)
    shared = rng.normal(0, 2.0, 60)
    old_k, new_k = [2.4] * 60, [1.5] * 60
    old_r = list(26 + shared + rng.normal(0, 0.3, 60))
    held = cm.program_verdict(old_k, new_k, old_r, list(25.1 + shared + rng.normal(0, 0.3, 60)))
    assert held["verdict"] == "holds" and held["resolution"] <= 0.03 and held["rounds"] == 60
    assert abs(held["predicted_gain"] - 26 / 25.1) < 0.01
    lost = cm.program_verdict(old_k, new_k, old_r, list(26.9 + shared + rng.normal(0, 0.3, 60)))
    assert lost["verdict"] == "does not hold"


def test_program_verdict_is_undecided_at_5_rounds_of_unshared_noise_and_says_how_many_would_tell():
    import numpy as np
    cm = _cuda_matmul()
    rng = np.random.default_rng(3)
    g = cm.program_verdict([2.4] * 5, [1.5] * 5, list(26 + rng.normal(0, 2.3, 5)), list(25.1 + rng.normal(0, 2.3, 5)))
    assert g["verdict"] == "undecided" and g["rounds_needed"] > 5 and g["resolution"] > 0.03


def test_matmul_benchmark_gain_table_gives_the_ratio_to_the_prediction_and_the_rounds():
    cm = _cuda_matmul()
    gain = {"kernel_gain": 1.6, "program_gain": 1.03, "program_gain_low": 1.01, "program_gain_high": 1.05,
            "predicted_gain": 1.035, "measured_over_predicted": (0.976, 0.995, 1.014), "rounds": 60,
            "source": "program rounds", "verdict": "holds", "resolution": 0.019}
    text = cm.table({"kernels": [{"kernel": "matmul_vanilla", "rows": [], "gain": gain}]})
    assert ("| matmul_vanilla | 1.600x | 1.030x (1.010-1.050) | 1.035x | 0.995 (0.976-1.014) | 60 (program rounds) "
            "| holds |") in text


def _gpu() -> bool:
    from polytune.measure.cache import gpu_id
    return NVCC is not None and bool(gpu_id())


@pytest.mark.gpu
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(prog=programs(), mapping=mappings)
def test_gpu_random_nest_under_random_mapping_prints_the_same_values(prog, mapping):
    if not _gpu():
        pytest.skip("needs nvcc and an NVIDIA GPU")
    check_mapping(prog.source, mapping, prog.summary, gpu=True)


@pytest.mark.gpu
@pytest.mark.parametrize("src,defines,mapping", [
    (MATMUL, ("N=300",), None),
    (MATMUL, ("N=300",), CudaMapping(block=(16, 16), points=(4, 4), reduction_tile=16)),
    (MATMUL, ("N=300",), CudaMapping(block=(16, 16), points=(8, 8), reduction_tile=8)),
    (MATMUL, ("N=512",), None),  # every tile full
    (MATMUL, ("N=300",), CudaMapping(block=(16, 16), points=(8, 8), reduction_tile=8, min_blocks=2)),
    (MATMUL, ("N=300",), CudaMapping(block=(8, 32), points=(3, 1), reduction_tile=7, registers=False)),
    (SYRK_TRI, (), CudaMapping(block=(8, 4), points=(1, 2), reduction_tile=4)),
    (COV_TRI, (), None),
    (COV_TRI, (), CudaMapping(block=(8, 4), points=(1, 2), reduction_tile=4, tile="all")),
    (open(os.path.join(GPU_DIR, "reduction_vanilla.c")).read(), ("N=1000", "M=777"),
     CudaMapping(block=(256,), points=(2,), reduction="warp")),
    (open(os.path.join(GPU_DIR, "reduction_interchange.c")).read(), ("N=1000", "M=777"),
     CudaMapping(block=(128,), reduction="warp")),
    (STENCIL3D, ("N=45",), CudaMapping(fuse=True, flat=True, block=(32, 4, 2))),
    (STENCIL3D, ("N=45",), CudaMapping(fuse=True, block=(32, 4, 2), points=(2, 1, 1))),
], ids=["matmul-default", "matmul-64", "matmul-128", "matmul-full", "matmul-2-blocks", "matmul-odd", "triangular",
        "cov-default", "cov-all-tiled", "rows-warp", "rows-warp-2", "stencil3d-fused-flat", "stencil3d-fused"])
def test_gpu_tiled_mappings_match_cpu(src, defines, mapping):
    if not _gpu():
        pytest.skip("needs nvcc and an NVIDIA GPU")
    check_mapping(src, mapping, "gpu", defines, exact=src in (SYRK_TRI, COV_TRI), gpu=True)


@pytest.mark.slow
@needs_gcc
@needs_polybench
def test_mapping_benchmark_tunes_and_times_on_the_emulator(tmp_path):
    """The whole benchmark (searches, compiles, interleaved rounds, verification) with an nvcc that builds for
    the emulation header and an nvidia-smi that names a GPU: every row verified, a tuned row per kernel."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "nvcc").write_text(f"#!/bin/sh\nexec {sys.executable} {ROOT}/tests/data/fake_nvcc.py \"$@\"\n")
    (bin_ / "nvidia-smi").write_text("#!/bin/sh\necho 'Emulated GPU, 0.0'\n")
    for f in bin_.iterdir():
        f.chmod(0o755)
    out = tmp_path / "r.json"
    env = dict(os.environ, PYTHONPATH=ROOT, PATH=f"{bin_}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "cuda_mappings.py"), "--out", str(out),
                           "--kernels", "reduction_vanilla,covariance", "--dataset", "MINI", "--gpu-size", "20",
                           "--tune-evals", "3", "--rounds", "1", "--jobs", "2"],
                          capture_output=True, text=True, env=env, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    for k in json.loads(out.read_text())["kernels"]:
        assert [r["variant"] for r in k["rows"]] == ["previous (flat, default block)", "default", "tuned"], k
        assert all(r["verified"] == "ok" and r["kernel_ms_median"] > 0 and r["region_ms_median"] > 0
                   for r in k["rows"]), k["rows"]
        assert k["tune"]["evals"] >= 1 and "error" not in k["tune"]
