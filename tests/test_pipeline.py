"""Differential tests: every benchmark kernel, optimized with many tile sizes, computes what the original does."""
from __future__ import annotations

import json
import os

import pytest
from conftest import KERNELS, SMALL, checksum_line, compile_run

from polytune.cli import main
from polytune.pipeline import OptimizeOptions, analyze, generate

NAMES = sorted(f[:-2] for f in os.listdir(KERNELS) if f.endswith(".c"))
# {1, 2, 3, 7, 32, 64, larger than the problem}; several sizes per run so each band gets mixed sizes.
TILINGS = ["1", "2", "3", "7", "32", "64", "100", "3,7,2,64,1,5"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    d = tmp_path_factory.mktemp("ref")
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = checksum_line(compile_run(os.path.join(KERNELS, name + ".c"), str(d / name), SMALL, False))
        return cache[name]

    return get


# Every kernel under every tiling runs under -m slow; the default suite keeps three that cover a time-tiled
# stencil, a triangular nest and a matrix-vector product with its reduction (the default suite's time budget).
ALL_TILINGS_FAST = {"jacobi-2d", "lu", "mvt"}


@pytest.mark.parametrize("name", [n if n in ALL_TILINGS_FAST else pytest.param(n, marks=pytest.mark.slow)
                                  for n in NAMES])
def test_kernel_all_tilings(name, reference, tmp_path):
    src = os.path.join(KERNELS, name + ".c")
    program = analyze(src, defines=tuple(d[2:] for d in SMALL))
    expected = reference(name)
    for tiles in TILINGS:
        for parallel in (True, False) if tiles in ("7", "3,7,2,64,1,5") else (True,):
            sizes = tuple(int(t) for t in tiles.split(","))
            text = generate(program, OptimizeOptions(tile_sizes=sizes * 6, parallel=parallel)).text
            out = tmp_path / f"{name}_{tiles.replace(',', '_')}_{parallel}.c"
            out.write_text(text)
            got = checksum_line(compile_run(str(out), str(tmp_path / "exe"), SMALL, parallel))
            assert got == expected, f"{name} tiles={tiles} parallel={parallel}"


# The outer schedule of every kernel by default but three whose analysis, AST and gcc build take several times
# the others' (the default suite's time budget): they run under -m slow (CI's slow line).
OUTER_SLOW = {"self_attention", "depthwise", "heat-3d"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in OUTER_SLOW else n for n in NAMES])
def test_kernel_outer_schedule(name, reference, tmp_path):
    """The outer-parallel schedule (--schedule outer) computes what the original does, with odd tiles too."""
    src = os.path.join(KERNELS, name + ".c")
    program = analyze(src, defines=tuple(d[2:] for d in SMALL))
    for sizes in ((32,), (3, 7, 2, 64, 1, 5)):
        text = generate(program, OptimizeOptions(tile_sizes=sizes * 6, schedule="outer")).text
        out = tmp_path / f"{name}_{len(sizes)}.c"
        out.write_text(text)
        got = checksum_line(compile_run(str(out), str(tmp_path / "exe"), SMALL, True))
        assert got == reference(name), f"{name} sizes={sizes}"


def test_outer_schedule_keeps_the_time_loop_outside(tmp_path):
    """jacobi-2d: the default time-tiles with a wavefront; --schedule outer leaves t sequential outside
    and parallelizes a tile loop of the space band inside it."""
    import json
    src = os.path.join(KERNELS, "jacobi-2d.c")
    bands = {}
    for sched in ("pluto", "outer"):
        rep = tmp_path / f"{sched}.json"
        assert main(["optimize", src, *SMALL, "--schedule", sched, "-o", str(tmp_path / f"{sched}.c"),
                     "--report", str(rep)]) == 0
        bands[sched] = json.loads(rep.read_text())["scops"][0]["bands"]
    assert any(b["wavefront"] for b in bands["pluto"])
    assert not any(b["wavefront"] for b in bands["outer"])
    assert bands["outer"][0]["parallel_loop"] is None and bands["outer"][1]["parallel_loop"] == "tile 0"


def test_untiled_kernels(reference, tmp_path):
    for name in ("jacobi-2d", "lu", "gemver"):
        out = tmp_path / f"{name}.c"
        assert main(["optimize", os.path.join(KERNELS, name + ".c"), *SMALL, "--no-tile", "-o", str(out)]) == 0
        assert checksum_line(compile_run(str(out), str(tmp_path / "exe"), SMALL, True)) == reference(name)


def test_report_and_structure(tmp_path):
    """gemm's product is a contraction printed as packed blocks; without blocks it gets a 3-d tiled band with a
    parallel tile loop and the i,k,j point order; seidel a wavefront."""
    import json
    rep = tmp_path / "r.json"
    assert main(["optimize", os.path.join(KERNELS, "gemm.c"), "-o", str(tmp_path / "g.c"), "--report", str(rep)]) == 0
    r = json.loads(rep.read_text())["scops"][0]
    assert [(c["statement"], c["rows"], c["columns"], c["k"]) for c in r["contractions"]] == [("S1", "i", "j", "k")]
    assert main(["optimize", os.path.join(KERNELS, "gemm.c"), "-o", str(tmp_path / "g.c"), "--report", str(rep),
                 "--tile-sizes", "16,32,8", "--blocks", "off"]) == 0
    r = json.loads(rep.read_text())["scops"][0]
    tiled = [b for b in r["bands"] if b["tiled"]]
    assert tiled and tiled[0]["members"] == 3 and tiled[0]["tile_sizes"] == [16, 32, 8]
    assert tiled[0]["parallel_loop"] == "tile 0" and not tiled[0]["wavefront"]
    assert tiled[0]["point_loop_order"][-1] == 1  # j innermost: stride-1 on C and B
    code = (tmp_path / "g.c").read_text()
    assert "#pragma omp parallel for" in code
    assert main(["optimize", os.path.join(KERNELS, "seidel-2d.c"), "-o", str(tmp_path / "s.c"),
                 "--report", str(rep)]) == 0
    r = json.loads(rep.read_text())["scops"][0]
    assert any(b["wavefront"] and b["tiled"] for b in r["bands"])


def test_outside_text_is_preserved(tmp_path):
    src = os.path.join(KERNELS, "jacobi-2d.c")
    out = tmp_path / "j.c"
    assert main(["optimize", src, "-o", str(out)]) == 0
    orig = open(src).read().splitlines()
    new = out.read_text().splitlines()
    b = next(i for i, line in enumerate(orig) if "#pragma scop" in line)
    e = next(i for i, line in enumerate(orig) if "#pragma endscop" in line)
    assert new[:b] == orig[:b]
    assert new[len(new) - (len(orig) - e - 1):] == orig[e + 1:]


def _polybench_style(tmp_path):
    """A PolyBench-style program: sizes from a header (-I), _PB_N chained to N, a type macro, a
    function-like macro in the body."""
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "sizes.h").write_text("#ifndef N\n#define N 24\n#endif\n#define _PB_N N\n#define DATA_TYPE double\n"
                                 "#define SCALAR_VAL(x) x\n#define COLS 24\n")
    src = tmp_path / "pb.c"
    src.write_text('#include <stdio.h>\n#include "sizes.h"\nstatic DATA_TYPE A[N][N], x[N];\n'
                   "int main(void) {\n  int i, j;\n"
                   "  for (i = 0; i < N; i++) { x[i] = i % 5; for (j = 0; j < N; j++) A[i][j] = (i + 2 * j) % 7; }\n"
                   "#pragma scop\n  for (i = 0; i < _PB_N; i++)\n    for (j = 0; j < _PB_N; j++)\n"
                   "      x[i] = x[i] + SCALAR_VAL(0.5) * A[i][j] * x[j]; /* COLS */\n#pragma endscop\n"
                   '  for (i = 0; i < N; i++) printf("%.17g\\n", x[i]);\n  return 0;\n}\n')
    return src, inc


def test_macro_values_are_checked_where_the_output_compiles(tmp_path):
    """Sizes set by macros are built into the generated code; the output checks, with the preprocessor,
    that it is compiled with the values it was generated for: with other -D values it stops with an
    #error naming the macro instead of computing something else."""
    import subprocess
    src, inc = _polybench_style(tmp_path)
    out = tmp_path / "pb.opt.c"
    assert main(["optimize", str(src), "-I", str(inc), "-o", str(out)]) == 0
    text = out.read_text()
    assert "#if (_PB_N) != (24)" in text and "#error" in text
    assert "(DATA_TYPE)" not in text and "(SCALAR_VAL)" not in text  # a type, a function-like macro
    assert "(COLS)" not in text  # named in a comment only
    flags = [f"-I{inc}"]
    want = compile_run(str(src), str(tmp_path / "orig"), flags, False)
    assert compile_run(str(out), str(tmp_path / "opt"), flags, True) == want
    # the same output compiled for another size: a compile error, not a wrong answer
    bad = subprocess.run(["gcc", "-fopenmp", f"-I{inc}", "-DN=30", str(out), "-o", str(tmp_path / "bad")],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "generated this code for _PB_N == 24" in bad.stderr
    # optimized for that size, it compiles and matches
    assert main(["optimize", str(src), "-I", str(inc), "-D", "N=30", "-o", str(out)]) == 0
    assert "#if (_PB_N) != (30)" in out.read_text()
    flags.append("-DN=30")
    assert compile_run(str(out), str(tmp_path / "opt30"), flags, True) == \
        compile_run(str(src), str(tmp_path / "orig30"), flags, False)


LINEARIZED = """#include <stdio.h>
#include <stdlib.h>
#define N 45
static void mm(const double *restrict a, const double *restrict b, double *restrict c)
{
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      c[i * N + j] = 0.0;
      for (int k = 0; k < N; k++)
        c[i * N + j] += a[i * N + k] * b[k * N + j];
    }
#pragma endscop
}
int main(void)
{
  double *a = malloc(sizeof(double) * N * N), *b = malloc(sizeof(double) * N * N);
  double *c = malloc(sizeof(double) * N * N), cs = 0.0;
  for (int i = 0; i < N * N; i++) { a[i] = (i % 7) * 0.5 - 1.0; b[i] = (i % 5) * 0.25; }
  mm(a, b, c);
  for (int i = 0; i < N * N; i++) cs += c[i] * (1 + i % 3);
  printf("checksum %.17g\\n", cs);
  return 0;
}
"""


def test_linearized_arrays_are_tiled(tmp_path):
    """`c[i * N + j]` with N a macro: the output dependence from row i to row i + 1 (j >= N) cannot occur
    for N's value and must not keep the scheduler from one permutable band (it did: i, j and k were
    three bands, and the nest was not tiled)."""
    src = tmp_path / "lin.c"
    src.write_text(LINEARIZED)
    out, rep = tmp_path / "lin.opt.c", tmp_path / "r.json"
    assert main(["optimize", str(src), "--tile-sizes", "8,16,4", "--blocks", "off", "-o", str(out), "--report",
                 str(rep)]) == 0  # (the product tiled as a band, not packed as a contraction)
    band = json.loads(rep.read_text())["scops"][0]["bands"][0]
    assert band["members"] == 3 and band["tiled"] and band["permutable"]
    assert compile_run(str(out), str(tmp_path / "o"), ["-ffp-contract=off"], True) == \
        compile_run(str(src), str(tmp_path / "r"), ["-ffp-contract=off"], True)


def test_overlapping_array_parameters_are_checked_at_run_time(tmp_path, capsys):
    """C lets a caller pass one array for two parameters (`smooth(A, A)`): for parameters not declared
    restrict, the output checks that the ranges the region touches do not overlap and runs the original code
    where they do (a note says so); restrict ones need no check."""
    body = ("{\n  int i, j;\n#pragma scop\n  for (i = 1; i < N - 1; i++)\n    for (j = 1; j < N - 1; j++)\n"
            "      out[i][j] = 0.25 * (in[i - 1][j] + in[i + 1][j] + w[0]);\n#pragma endscop\n}\n")
    for params, checked in (("double out[N][N], double in[N][N], const double *w", "in and out, out and w"),
                            ("double out[restrict N][N], double (*restrict in)[N], const double *w", None)):
        src = tmp_path / "s.c"
        src.write_text(f"#define N 40\nvoid smooth({params})\n" + body)
        assert main(["optimize", str(src), "-o", str(tmp_path / "s.opt.c")]) == 0
        err = capsys.readouterr().err
        lines = [x for x in err.splitlines() if "warning" in x or "note" in x]
        if checked:
            assert lines == [f"{src}:5: note: the optimized code runs where a run-time check holds, the original "
                             f"code otherwise: no overlap of {checked}"]
        else:
            assert not lines, err


def test_const_declarations_inside_the_region_are_hoisted_assignable(tmp_path):
    """`const double aik = A[i][k];` in the region is hoisted as `double aik;` and assigned where it stood
    (with `const` kept, the output did not compile: the assignment, and scalar expansion's array of it)."""
    src = tmp_path / "c.c"
    src.write_text("#include <stdio.h>\n#define N 50\ndouble A[N][N], B[N][N], C[N][N];\nint main(void) {\n"
                   "  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) "
                   "{ A[i][j] = (i + j) % 5; B[i][j] = (i * j) % 3; C[i][j] = 0; }\n#pragma scop\n"
                   "  for (int i = 0; i < N; i++)\n    for (int k = 0; k < N; k++) {\n"
                   "      const double aik = A[i][k];\n      double *const unused = 0;\n"
                   "      for (int j = 0; j < N; j++)\n        C[i][j] += aik * B[k][j];\n    }\n#pragma endscop\n"
                   "  double s = 0; for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) s += C[i][j] * (i + 1);\n"
                   "  printf(\"%g\\n\", s);\n}\n")
    out = tmp_path / "c.opt.c"
    assert main(["optimize", str(src), "-o", str(out)]) == 0
    assert compile_run(str(out), str(tmp_path / "o"), ["-ffp-contract=off"], True) == \
        compile_run(str(src), str(tmp_path / "r"), ["-ffp-contract=off"], True)
