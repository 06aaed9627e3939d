"""The CUDA target: GPU mapping (unit tests on the isl side), the emitted code (compiled with nvcc where
it is installed), and, on a machine with an NVIDIA GPU (marked `gpu`), results and tuning."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
from conftest import EMU_CXXFLAGS, KERNELS, ROOT, checksum_line, compile_run, emu_header

from polytune.cli import main
from polytune.emit.cuda import check_block, kernel_block
from polytune.errors import UsageError
from polytune.measure.cache import gpu_id
from polytune.measure.cuda import block_problem, parse_ptxas
from polytune.pipeline import analyze

GPU_DIR = os.path.join(ROOT, "benchmarks", "gpu")
GPU_SMALL = {
    "matmul_vanilla": ["-DN=20"], "matmul_unroll": ["-DN=20"], "matmul_interchange": ["-DN=20"],
    "stencil2d_vanilla": ["-DN=19"], "stencil2d_unroll": ["-DN=19"], "stencil2d_interchange": ["-DN=19"],
    "reduction_vanilla": ["-DN=20"], "reduction_unroll": ["-DN=20"], "reduction_interchange": ["-DN=20"],
    "stencil3d_ns": ["-DN=13"], "softmax": ["-DN=13"],
}
# benchmarks/pluto files that are valid C++ (the others declare C99 variable-length array parameters,
# which C++, and so nvcc, does not have).
PLUTO_CXX = ["2d_bidirec", "depthwise", "gemm_bias_relu", "gemm_bilinear", "gemver", "heat-3d", "matmul",
             "maxpool", "mvt", "seidel-2d"]
PLUTO_SMALL = ["-DN=13", "-DTSTEPS=3", "-DNC=3", "-DD=7"]
NVCC = shutil.which("nvcc")


def _has_gpu() -> bool:
    return bool(gpu_id())  # the check the CUDA tuner makes


needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")


def _checksum(line: str) -> float:
    return float(line.split(":")[1])


def _kernels(path, defines):
    return analyze(path, defines=tuple(d[2:] for d in defines)).scops[0].gpu.kernels


# ---- mapping -----------------------------------------------------------------------------------------
def test_matmul_maps_i_j_and_puts_j_on_x():
    for name in ("matmul_vanilla", "matmul_interchange"):
        ks = _kernels(os.path.join(GPU_DIR, name + ".c"), GPU_SMALL[name])
        assert all(k.depth == 0 and k.mapped == 2 for k in ks), name
        # C[i][j]: consecutive j are consecutive addresses, so the j loop (inner member) is x
        assert all(k.axes == (1, 0) for k in ks), (name, [k.axes for k in ks])


def test_stencil_time_loop_stays_on_host():
    ks = _kernels(os.path.join(KERNELS, "jacobi-2d.c"), PLUTO_SMALL)
    assert [(k.depth, k.mapped) for k in ks] == [(1, 2), (1, 2)]


def test_reduction_interchange_maps_the_rows():
    ks = _kernels(os.path.join(GPU_DIR, "reduction_interchange.c"), GPU_SMALL["reduction_interchange"])
    assert all(k.mapped == 1 for k in ks)
    assert any(k.depth == 0 for k in ks)  # the row loop i, outermost, though the source has j outside


def test_sequential_nest_runs_in_one_thread(tmp_path):
    src = tmp_path / "prefix.c"
    src.write_text("double A[100];\nvoid f(int n) {\n  int i;\n#pragma scop\n  for (i = 1; i < n; i++)\n"
                   "    A[i] = A[i - 1] + A[i];\n#pragma endscop\n}\n")
    ks = analyze(str(src)).scops[0].gpu.kernels
    assert [(k.depth, k.mapped) for k in ks] == [(0, 0)]


def test_triangular_kernel_bounds_follow_host_loop():
    ks = _kernels(os.path.join(KERNELS, "lu.c"), PLUTO_SMALL)
    mapped = [k for k in ks if k.mapped]
    assert mapped and all(k.depth >= 1 for k in mapped)
    # bounds depend on the host loop (the first outer dim), not just on the parameters
    assert any(k.bounds(0, [True] * k.depth)[0].involves_dims(__import__("islpy").dim_type.in_, 0, 1)
               for k in mapped)


# ---- block shapes ------------------------------------------------------------------------------------
def test_block_shapes():
    assert kernel_block(1, (32, 32)) == (1024, 1, 1)
    assert kernel_block(2, (32, 8, 4)) == (32, 32, 1)
    assert kernel_block(3, (8, 8)) == (8, 8, 1)
    assert kernel_block(0, (32, 32)) == (1, 1, 1)
    check_block((24, 40))
    for bad in [(2048,), (64, 32), (1, 1, 128), (0, 4), (1, 2, 3, 4)]:
        with pytest.raises(UsageError):
            check_block(bad)
    assert block_problem((32, 64), [2], 0).startswith("2048 threads")
    assert "registers" in block_problem((32, 32), [2], 128)
    assert block_problem((32, 32), [2], 32) == ""


def test_parse_ptxas():
    text = """ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_90'
ptxas info    : Function properties for _Z3fooPf
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers
ptxas info    : Compiling entry function '_Z3barPf' for 'sm_90'
ptxas info    : Function properties for _Z3barPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 30 registers, used 0 barriers
"""
    r = parse_ptxas(text)
    assert r == {"_Z3fooPf": {"registers": 255, "spill": 8}, "_Z3barPf": {"registers": 30, "spill": 0}}


def test_cli_rejects_bad_block(tmp_path, capsys):
    out = tmp_path / "x.cu"
    src = os.path.join(GPU_DIR, "matmul_vanilla.c")
    assert main(["optimize", src, "-DN=20", "--target", "cuda", "--block", "64,32", "-o", str(out)]) == 2
    assert "at most 1024 threads" in capsys.readouterr().err
    assert not out.exists()


def test_cli_writes_cuda_and_report(tmp_path):
    out, rep = tmp_path / "mm.cu", tmp_path / "mm.json"
    src = os.path.join(GPU_DIR, "matmul_vanilla.c")
    assert main(["optimize", src, "-DN=20", "--target", "cuda", "--block", "16,8", "-o", str(out),
                 "--report", str(rep)]) == 0
    text = out.read_text()
    assert "__global__" in text and "<<<" in text and "dim3 pt_block(16, 8, 1)" in text
    assert "__launch_bounds__(128)" in text
    r = json.loads(rep.read_text())
    assert r["target"] == "cuda" and r["scops"][0]["kernels"][0]["axes"] == ["y", "x"]
    # everything outside the region is untouched
    orig = open(src).read()
    tail = orig[orig.index("#pragma endscop") + len("#pragma endscop"):]
    assert text.endswith(tail)


# ---- nvcc (no GPU needed) ------------------------------------------------------------------------------
def _cases():
    for name, d in sorted(GPU_SMALL.items()):
        yield os.path.join(GPU_DIR, name + ".c"), d
    for name in PLUTO_CXX:
        yield os.path.join(KERNELS, name + ".c"), PLUTO_SMALL


CASES = list(_cases())
# The default suite builds one GPU benchmark of each kind with nvcc (the emulated test below runs every
# variant's output); the other variants' and the Pluto kernels' builds are a long sweep (-m slow, CI's slow line).
NVCC_FAST = ("matmul_vanilla", "stencil2d_vanilla", "reduction_vanilla", "softmax")
NVCC_CASES = [pytest.param(*c, id=os.path.basename(c[0])[:-2],
                           marks=[] if c[0].startswith(GPU_DIR) and os.path.basename(c[0])[:-2] in NVCC_FAST
                           else [pytest.mark.slow]) for c in CASES]
# Every kernel with the default block shape by default; the odd and the 1x1 shapes are a long sweep (-m slow).
SLOW_BLOCKS = [None, pytest.param("24,40", marks=pytest.mark.slow), pytest.param("1,1", marks=pytest.mark.slow)]
# heat-3d and depthwise, whose emulated builds take several times the others', run under -m slow (CI's slow line);
# by default test_cuda_mappings runs heat-3d's CUDA output emulated with every array staged.
EMULATED_SLOW = ("heat-3d", "depthwise")


@needs_nvcc
@pytest.mark.parametrize("src,defines", NVCC_CASES)
def test_nvcc_compiles_generated_cuda(src, defines, tmp_path):
    out = tmp_path / "k.cu"
    assert main(["optimize", src, *defines, "--target", "cuda", "-o", str(out)]) == 0
    proc = subprocess.run([NVCC, "-arch=sm_90", "-O1", "-c", str(out), "-o", str(tmp_path / "k.o"),
                           "-Xcompiler", "-w", *defines], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


def emulate(cu_text: str) -> str:
    """The CUDA program rewritten to run on the CPU with tests/data/cuda_emu.h (conftest.emu_header's copy)."""
    text = re.sub(r"(\w+(?:<\w+>)?)<<<([^;]*?), ([\w.]+)>>>\((.*?)\);", r"PT_EMU_LAUNCH(\2, \3, \1, \4);", cu_text)
    assert "<<<" not in text
    return f'#include "{emu_header()}"\n' + text


@pytest.mark.parametrize("src,defines", [
    pytest.param(*c, id=os.path.basename(c[0])[:-2],
                 marks=[pytest.mark.slow] if c[0].startswith(KERNELS) and os.path.basename(c[0])[:-2] in EMULATED_SLOW
                 else []) for c in CASES])
@pytest.mark.parametrize("block", SLOW_BLOCKS)
def test_cuda_output_emulated_on_cpu_matches(src, defines, block, tmp_path):
    """Host code, launch bounds, grid-stride loops and guards, run sequentially on the CPU."""
    ref = _checksum(checksum_line(compile_run(src, str(tmp_path / "ref"), defines, False)))
    out = tmp_path / "k.cu"
    assert main(["optimize", src, *defines, "--target", "cuda", "-o", str(out),
                 *(["--block", block] if block else [])]) == 0
    emu = tmp_path / "emu.cpp"
    emu.write_text(emulate(out.read_text()))
    exe = tmp_path / "emu"
    subprocess.run(["g++", *EMU_CXXFLAGS, "-x", "c++", str(emu), "-o", str(exe), *defines], check=True,
                   capture_output=True)
    got = _checksum(checksum_line(subprocess.run([str(exe)], check=True, capture_output=True, text=True,
                                                 timeout=120).stdout))
    assert got == pytest.approx(ref, rel=1e-6, abs=1e-9), (got, ref)


@needs_nvcc
@pytest.mark.slow  # (9 s of nvcc; test_pblayout builds a tuning build with nvcc by default)
def test_nvcc_compiles_the_tuning_build(tmp_path):
    from polytune.emit.c import generate_dump
    from polytune.measure.cuda import SERVE_PRELUDE
    from polytune.pipeline import OptimizeOptions, generate_cuda
    src, defines = os.path.join(KERNELS, "heat-3d.c"), PLUTO_SMALL
    program = analyze(src, defines=tuple(d[2:] for d in defines))
    dumps = [generate_dump(a.scop, indent=3, avoid=program.identifiers) for a in program.scops]
    text = SERVE_PRELUDE + generate_cuda(program, OptimizeOptions(target="cuda"), serve=True, dumps=dumps)
    (tmp_path / "s.cu").write_text(text)
    proc = subprocess.run([NVCC, "-arch=sm_90", "-O1", "-c", str(tmp_path / "s.cu"), "-o", str(tmp_path / "s.o"),
                           "-Xcompiler", "-w", *defines], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


# ---- on the GPU --------------------------------------------------------------------------------------
BLOCKS = [None, "8,8", "24,40", "1024,1", "1,1"]


@pytest.mark.gpu
@pytest.mark.parametrize("src,defines", CASES, ids=[os.path.basename(c[0])[:-2] for c in CASES])
@pytest.mark.parametrize("block", BLOCKS)
def test_gpu_results_match_cpu(src, defines, block, tmp_path):
    if NVCC is None or not _has_gpu():
        pytest.skip("needs nvcc and an NVIDIA GPU")
    ref = _checksum(checksum_line(compile_run(src, str(tmp_path / "ref"), defines, False)))
    out = tmp_path / "k.cu"
    assert main(["optimize", src, *defines, "--target", "cuda", "-o", str(out),
                 *(["--block", block] if block else [])]) == 0
    exe = tmp_path / "k"
    subprocess.run([NVCC, "-O3", "-arch=native", str(out), "-o", str(exe), "-Xcompiler", "-w", *defines],
                   check=True, capture_output=True)
    got = _checksum(checksum_line(subprocess.run([str(exe)], check=True, capture_output=True, text=True,
                                                 timeout=120).stdout))
    assert got == pytest.approx(ref, rel=1e-5, abs=1e-9), (got, ref)


@pytest.mark.gpu
def test_gpu_tune_block_shape(tmp_path):
    if NVCC is None or not _has_gpu():
        pytest.skip("needs nvcc and an NVIDIA GPU")
    src = os.path.join(GPU_DIR, "matmul_vanilla.c")
    rep, out = tmp_path / "r.json", tmp_path / "best.cu"
    code = main(["tune", src, "-DN=256", "--target", "cuda", "--no-cache", "--max-evals", "8",
                 "--report", str(rep), "-o", str(out)])
    assert code == 0
    r = json.loads(rep.read_text())
    assert r["target"] == "cuda" and r["best"]["median"] > 0
    names = [p["name"] for p in r["space"]]
    assert dict(zip(names, r["seed"]["config"])) | {"tiling": 0} == dict(zip(names, r["seed"]["config"]))
    kinds = {e["error"] for e in r["evaluations"]}
    assert "wrong_answer" not in kinds and "runtime" not in kinds
    best = dict(zip(names, r["best"]["config"]))
    block = (best["block_x"], best["block_y"]) if best["tiling"] != 1 else None
    assert block is None or re.search(rf"dim3 pt_block\({block[0]}, {block[1]}, 1\)", out.read_text())
    if r["best"]["config"] != r["seed"]["config"]:
        assert r["program_gain"]["program_gain"] > 0 and "kernel_gain" in r["program_gain"]


@pytest.mark.skipif(_has_gpu(), reason="checks the message on machines without a GPU")
def test_tune_cuda_without_gpu_is_a_clear_error(capsys):
    src = os.path.join(GPU_DIR, "reduction_vanilla.c")
    assert main(["tune", src, "-DN=16", "--target", "cuda", "--no-cache"]) == 2
    assert "needs an NVIDIA GPU" in capsys.readouterr().err
