"""32-bit index arithmetic in the CUDA kernels (polytune/emit/index_width.py): the `int` instance runs only where
every index fits, and the values decide at launch."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import EMU_CXXFLAGS
from test_cuda import emulate

from polytune.emit.cuda import CudaMapping
from polytune.emit.index_width import ARGUMENT, Bound, IndexWidth, constant
from polytune.pipeline import OptimizeOptions, analyze, cuda_program

GXX, GCC = shutil.which("g++"), shutil.which("gcc")
needs_gcc = pytest.mark.skipif(GXX is None or GCC is None, reason="needs gcc and g++")

# A product over 20x20 arrays whose loops run from a runtime offset m: with m = 3e9 the iterators do not fit
# in 32 bits, though every subscript (i - m) is small.
OFFSET = """#include <stdio.h>
static double A[20][20], B[20][20], C[20][20];
static void kernel(long m, long n)
{
  long i, j, l;
#pragma scop
  for (i = m; i < m + n; i++)
    for (j = m; j < m + n; j++) {
      C[i - m][j - m] = 0.0;
      for (l = 0; l < n; l++)
        C[i - m][j - m] += A[i - m][l] * B[l][j - m];
    }
#pragma endscop
}
int main(void)
{
  for (int i = 0; i < 20; i++)
    for (int j = 0; j < 20; j++) {
      A[i][j] = (i * 3 + j) % 7 - 3;
      B[i][j] = (i + 2 * j) % 5 - 2;
    }
  kernel(M, 20);
  double s = 0;
  for (int i = 0; i < 20; i++)
    for (int j = 0; j < 20; j++)
      s += C[i][j] * (1 + (i * 7 + j) % 13);
  printf("%.1f\\n", s);
  return 0;
}
"""
TILED = CudaMapping(block=(4, 4), points=(2, 2), reduction_tile=4)
FLAT = CudaMapping(block=(4, 4), flat=True)  # (whose mapped iterators were `int` whatever the values, until 2026-12)
MAPPINGS = [pytest.param(TILED, id="tiled"), pytest.param(FLAT, id="flat")]


def _cuda(tmp: Path, mapping: CudaMapping = TILED) -> str:
    src = tmp / "offset.c"
    src.write_text(OFFSET)
    program = analyze(str(src), defines=("M=0",))
    return cuda_program(program, OptimizeOptions(target="cuda"), mapping=mapping)[0]


def _run(cmd: list[str], exe: Path) -> subprocess.CompletedProcess:
    subprocess.run(cmd, check=True, capture_output=True)
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)


def _emulated(text: str, m: str, tmp: Path) -> subprocess.CompletedProcess:
    emu = tmp / f"emu_{m}.cpp"
    emu.write_text(emulate(text))
    return _run([GXX, *EMU_CXXFLAGS, f"-DM={m}", "-x", "c++", str(emu), "-o", str(tmp / f"emu_{m}")],
                tmp / f"emu_{m}")


@needs_gcc
@pytest.mark.parametrize("mapping", MAPPINGS)
@pytest.mark.parametrize("m", ["0", "3000000000L"])
def test_a_kernel_prints_the_original_values_at_small_and_at_64_bit_offsets(m, mapping, tmp_path):
    text = _cuda(tmp_path, mapping)
    expected = _run([GCC, "-O1", f"-DM={m}", str(tmp_path / "offset.c"), "-o", str(tmp_path / "orig")],
                    tmp_path / "orig")
    assert "<int><<<" in text and "<long><<<" in text and "_fits32(" in text  # chosen at launch
    got = _emulated(text, m, tmp_path)
    assert got.returncode == 0 and got.stdout == expected.stdout


@needs_gcc
@pytest.mark.parametrize("mapping", MAPPINGS)
def test_the_32_bit_instance_would_be_wrong_where_the_launch_check_refuses_it(mapping, tmp_path):
    forced = _cuda(tmp_path, mapping).replace("if (pt_fits32(", "if (1 || pt_fits32(")
    expected = _run([GCC, "-O1", "-DM=3000000000L", str(tmp_path / "offset.c"), "-o", str(tmp_path / "orig")],
                    tmp_path / "orig")
    got = _emulated(forced, "3000000000L", tmp_path)
    assert got.returncode != 0 or got.stdout != expected.stdout


def test_bounds_add_scale_and_keep_the_largest_operand():
    w = IndexWidth({"n": ARGUMENT})
    tile = Bound(3, 0)
    point = tile.scale(128).join(tile) + constant(255)
    w.define("p", point)
    assert w.peak == Bound(384, 255)
    assert w.fits((2**31 - 1 - 255) // 384) and not w.fits((2**31 - 1 - 255) // 384 + 1)
    assert w.static() is None  # depends on the arguments: decided at launch


def test_a_value_without_a_bound_keeps_64_bit_indices():
    w = IndexWidth({})
    w.define("k", constant(7))
    assert w.static() is True  # only constants: int, with no check at launch
    w.note(None)  # e.g. a product of two variables
    assert w.static() is False and not w.fits(0)


@pytest.mark.gpu
@pytest.mark.parametrize("mapping", MAPPINGS)
@pytest.mark.parametrize("m", ["0", "3000000000L"])
def test_on_the_gpu_both_instances_print_the_original_values(m, mapping, tmp_path):
    nvcc = shutil.which("nvcc")
    smi = shutil.which("nvidia-smi")
    if nvcc is None or GCC is None or smi is None or subprocess.run([smi], capture_output=True).returncode != 0:
        pytest.skip("needs nvcc, gcc and an NVIDIA GPU")
    text = _cuda(tmp_path, mapping)
    expected = _run([GCC, "-O1", f"-DM={m}", str(tmp_path / "offset.c"), "-o", str(tmp_path / "orig")],
                    tmp_path / "orig")
    (tmp_path / "k.cu").write_text(text)
    got = _run([nvcc, "-O1", "-arch=native", "-fmad=false", "-Xcompiler", "-w", f"-DM={m}", str(tmp_path / "k.cu"),
                "-o", str(tmp_path / "k")], tmp_path / "k")
    assert got.returncode == 0 and got.stdout == expected.stdout
