"""Random affine loop nests (tests/nestgen.py) through the GPU targets, without a GPU.

CUDA: the generated program runs on the CPU through tests/data/cuda_emu.h (sequential blocks and
threads); a legal mapping keeps the order of the updates of each element, so the printed values must be
bit-identical to the original's. Triton: the module runs under TRITON_INTERPRET=1 on the original
program's own data and must match within the float64 tolerance (block reductions reassociate sums).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import EMU_CXXFLAGS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nestgen import programs
from test_cuda import emulate

from polytune.cli import main

# The default suite checks a few random nests per target; CI's random-nest line runs the same tests with
# POLYTUNE_EXAMPLES_SCALE=8 (eight times as many, other programs as well: hypothesis draws more).
SCALE = float(os.environ.get("POLYTUNE_EXAMPLES_SCALE", "1"))

GXX = shutil.which("g++")
GCC = shutil.which("gcc")
blocks = st.sampled_from([None, "1,1", "3,2", "5", "2,2,2"])


def _run(cmd: list[str], exe: Path) -> bytes:
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    return subprocess.run([str(exe)], check=True, capture_output=True, timeout=60).stdout


def check_cuda(source: str, block: str | None, what: str = "") -> None:
    """The program's CUDA output, run through the CPU emulation, prints exactly what the original prints."""
    with tempfile.TemporaryDirectory(prefix="polytune-gpunest-") as d:
        tmp = Path(d)
        src, cu, emu = tmp / "nest.c", tmp / "nest.cu", tmp / "emu.cpp"
        src.write_text(source)
        expected = _run([GCC, "-O1", str(src), "-o", str(tmp / "orig"), "-lm"], tmp / "orig")
        assert main(["optimize", str(src), "--target", "cuda", "-o", str(cu),
                     *(["--block", block] if block else [])]) == 0
        emu.write_text(emulate(cu.read_text()))
        got = _run([GXX, *EMU_CXXFLAGS, "-x", "c++", str(emu), "-o", str(tmp / "emu"), "-lm"], tmp / "emu")
        assert got == expected, f"CUDA output differs ({what}, block {block})\n{cu.read_text()}"


def check_triton(source: str, config: dict, what: str = "") -> None:
    """The program's Triton output matches the original on the original's own data."""
    from conftest import TritonHarness

    from polytune.measure.c import BuildConfig
    from polytune.pipeline import analyze
    with tempfile.TemporaryDirectory(prefix="polytune-gpunest-") as d:
        src = Path(d) / "nest.c"
        src.write_text(source)
        h = TritonHarness(analyze(str(src)), BuildConfig(), runs=1)
        try:
            h.measure_reference()
            m = h.measure(tuple(config.values()), tuple(config))
            assert m.ok, f"{m.error}: {m.detail} ({what})\n{h.text}"
        finally:
            h.close()


@pytest.mark.skipif(GXX is None or GCC is None, reason="needs gcc and g++")
@settings(max_examples=max(1, int(4 * SCALE)), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(prog=programs(), block=blocks)
def test_random_nest_cuda_emulated(prog, block):
    """The CUDA output of a random nest, run through the CPU emulation, prints the same values."""
    check_cuda(prog.source, block, prog.summary)


try:
    import torch
    if not torch.cuda.is_available():  # before triton is imported: it reads the variable then
        os.environ["TRITON_INTERPRET"] = "1"
    import triton  # noqa: F401
    HAVE_TRITON = True
except ImportError:  # pragma: no cover
    HAVE_TRITON = False


@pytest.mark.skipif(GCC is None or not HAVE_TRITON, reason="needs gcc, torch and triton")
@settings(max_examples=max(1, int(3 * SCALE)), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(prog=programs(), bx=st.sampled_from([1, 2, 4, 16]), br=st.sampled_from([2, 16]))
def test_random_nest_triton(prog, bx, br):
    """The Triton output of a random nest matches the original on its own data."""
    check_triton(prog.source, {"BLOCK_X": bx, "BLOCK_Y": 2, "BLOCK_Z": 1, "BLOCK_R": br, "BLOCK_K": 16},
                 prog.summary)


# Programs found by the generator (shrunk), one per bug fixed:
# - strided-lanes: the lanes of a strided inner loop start at different points (k = j - 1, k += 2);
#   stepping by 2 from the lowest start skipped the other parity (Triton).
# - dropped-host-loop: isl drops a host loop whose value the outer ones fix; the grid bounds named it.
# - macro-in-array-size: a device array's size used floord before the helper macros were defined (CUDA).
# - empty-domain: a statement that never runs left an array without any access to size it by.
# - negative-floor-division: isl's floord of a negative value printed as '//', which rounds toward zero
#   in Triton kernels.
# - conditional-lower-bound: a mapped loop's lower bound is a conditional expression; unparenthesized in
#   the CUDA guard `c >= a ? b : d && ...` it bound the wrong way.
# - guarded-chunk: a chunk loop (BLOCK_R iterations at a time) under an `if` in a kernel without mapped
#   dims set its lanes' mask without the guard's, so the branch for n < 3 ran at n = 5 too (Triton;
#   seed 10318).
REGRESSIONS = {
    "guarded-chunk": """#include <stdio.h>
#define N 5
double A[N + 6][N + 6], B[N + 6][N + 6];
double t = 0.5;
int main(void)
{
  int i, j;
  int n = N;
  for (i = 0; i < N + 6; i++) for (j = 0; j < N + 6; j++) {
    A[i][j] = (double)((i * 7 + j * 3) % 17) * 0.125 - 1.0;
    B[i][j] = (double)((i * 9 + j * 4 + 1) % 17) * 0.125 - 1.0;
  }
#pragma scop
  for (int i = 1; i <= 2; i++) {
    for (int j = 1; j <= n - 2; j++)
      t = B[j][i] * 0.5 + t * 0.25;
    A[i][i + 2] = t * 0.25 + B[i][i] * 0.5;
  }
#pragma endscop
  for (i = 0; i < N + 6; i++) for (j = 0; j < N + 6; j++) printf("%.17g\\n", A[i][j]);
  printf("%.17g\\n", t);
  return 0;
}
""",
    "conditional-lower-bound": """#include <stdio.h>

#define N 5
double A[N + 6][N + 6];
double s;

static void init(void)
{
  int i, j;
  for (i = 0; i < N + 6; i++)
    for (j = 0; j < N + 6; j++) {
      A[i][j] = (double)((i * 7 + j * 3 + 0) % 17) * 0.125 - 1.0;
    }
  s = 0.75;
}

static void print(void)
{
  int i, j;
  for (i = 0; i < N + 6; i++)
    for (j = 0; j < N + 6; j++)
      printf("%.17g\\n", A[i][j]);
  printf("%.17g\\n", s);
}

int main(void)
{
  int i, j, k;
  init();
#pragma scop
  for (int i = 0; i <= N - 1; i++)
    for (int j = 0; j <= N - 1; j += 2) {
      for (int k = j - 1; k <= N - 1; k++)
        s = s * 0.5 + (i - k) * 0.125 + 1.0;
    }
#pragma endscop
  print();
  return 0;
}
""",
    "negative-floor-division": """#include <stdio.h>
#define N 5
double A[N + 6][N + 6];
int main(void)
{
  int i, j, k;
  int n = N;
  for (i = 0; i < N + 6; i++) for (j = 0; j < N + 6; j++) A[i][j] = (double)((i * 7 + j * 3) % 17) * 0.125 - 1.0;
#pragma scop
  for (int i = 0; i <= n - 1; i = i + 3)
    for (int j = i - 1; j <= n - 1; j++) {
      for (int k = 0; k <= n - 1; k++)
        A[i + 1][i + 1] = A[i + 4][j + 1] * 0.5 + 1.0;
    }
#pragma endscop
  for (i = 0; i < N + 6; i++) for (j = 0; j < N + 6; j++) printf("%.17g\\n", A[i][j]);
  return 0;
}
""",
    "strided-lanes": """#include <stdio.h>
#define N 5
double A[N + 6][N + 6];
double s;
int main(void)
{
  int i, j, k;
  for (i = 0; i < N + 6; i++) for (j = 0; j < N + 6; j++) A[i][j] = (double)((i * 7 + j * 3) % 17) * 0.125 - 1.0;
  s = 0.75;
#pragma scop
  for (int i = 0; i <= N - 1; i++)
    for (int j = 0; j <= N - 1; j++) {
      for (int k = j - 1; k <= N - 1; k += 2)
        A[j + 1][i + 1] = s * 0.5 + (i - k) * 0.125 + 1.0;
    }
#pragma endscop
  for (i = 0; i < N + 6; i++) for (j = 0; j < N + 6; j++) printf("%g\\n", A[i][j]);
  return 0;
}
""",
    "dropped-host-loop": """#include <stdio.h>
#define N 6
double A[N + 6][N + 6];
int main(void)
{
  int i, j, k;
  for (i = 0; i < N + 6; i++) for (j = 0; j < N + 6; j++) A[i][j] = (double)((i * 7 + j * 3) % 17) * 0.125 - 1.0;
#pragma scop
  for (int i = 0; i <= N - 1; i++)
    for (int j = 0; j <= N - 1; j++) {
      for (int k = 0; k <= j - 1; k++) {
        A[i + 1][i + 1] += A[i + 1][i + 1] * 0.125;
        A[j + 4][i + 1] = A[k + 1][i + 2] * 0.5 + (i - k) * 0.125 + 1.0;
      }
    }
#pragma endscop
  for (i = 0; i < N + 6; i++) for (j = 0; j < N + 6; j++) printf("%.17g\\n", A[i][j]);
  return 0;
}
""",
    "macro-in-array-size": """#include <stdio.h>
#define N 7
double A[N + 6][N + 6];
int main(void)
{
  int i, j, k;
  int n = N;
  for (i = 0; i < N + 6; i++) for (j = 0; j < N + 6; j++) A[i][j] = (double)((i * 7 + j * 3) % 17) * 0.125 - 1.0;
#pragma scop
  for (int i = 0; i <= n - 1; i++)
    for (int j = 0; j <= n - 2; j++) {
      for (int k = 0; k <= n - 1; k += 2) {
        A[i + 1][i + 1] += A[i + 1][i + 1] * 0.125;
        A[i + 1][i + 1] = A[2 * k][i + 1] * 0.5 + (i - k) * 0.125 + 1.0;
      }
    }
  for (int i = 0; i <= n - 1; i++)
    A[i + 1][i + 1] = A[i + 1][i + 1] * 0.5 + (double)(i) * 0.0625 + 1.0;
#pragma endscop
  for (i = 0; i < N + 6; i++) for (j = 0; j < N + 6; j++) printf("%.17g\\n", A[i][j]);
  return 0;
}
""",
    "empty-domain": """double A[10][10];
double s;
int main(void) {
#pragma scop
  for (int i = 0; i <= 4; i++)
    for (int j = i; j <= i - 1; j++)
      A[i + 1][i + 1] = s * 0.5 + 1.0;
#pragma endscop
  return 0;
}
""",
}


@pytest.mark.skipif(GXX is None or GCC is None, reason="needs gcc and g++")
@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regression_cuda(name):
    check_cuda(REGRESSIONS[name], None, name)


@pytest.mark.skipif(GCC is None or not HAVE_TRITON, reason="needs gcc, torch and triton")
@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regression_triton(name):
    check_triton(REGRESSIONS[name], {"BLOCK_X": 4, "BLOCK_Y": 2}, name)


@pytest.mark.skipif(GCC is None or not HAVE_TRITON, reason="needs gcc, torch and triton")
@pytest.mark.parametrize("block_r", [1, 2])
def test_chunk_loop_under_a_guard_runs_only_where_the_guard_holds_triton(block_r):
    """The guarded-chunk regression with chunks of BLOCK_R iterations in a loop (the default BLOCK_R
    covers the loop in one chunk, in the kernel's other copy)."""
    check_triton(REGRESSIONS["guarded-chunk"], {"BLOCK_X": 4, "BLOCK_Y": 2, "BLOCK_R": block_r}, "guarded-chunk")
