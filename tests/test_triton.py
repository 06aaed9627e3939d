"""The Triton target. On machines without a GPU it runs under TRITON_INTERPRET=1 with CPU torch (small
sizes); GPU-only tests are marked `gpu`."""
from __future__ import annotations

import json
import os
import re
import tempfile

import pytest
from conftest import KERNELS, ROOT

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # before triton is imported: it reads the variable then
    os.environ["TRITON_INTERPRET"] = "1"
pytest.importorskip("triton")

from polytune.cli import main  # noqa: E402
from polytune.measure.c import BuildConfig  # noqa: E402
from polytune.pipeline import OptimizeOptions, analyze, generate_triton  # noqa: E402

GPU_DIR = os.path.join(ROOT, "benchmarks", "gpu")
TRITON_DATA = os.path.join(ROOT, "tests", "data", "triton")
GPU_SMALL = {
    "matmul_vanilla": ["N=12"], "matmul_unroll": ["N=12"], "matmul_interchange": ["N=12"],
    "stencil2d_vanilla": ["N=13"], "stencil2d_unroll": ["N=13"], "stencil2d_interchange": ["N=13"],
    "reduction_vanilla": ["N=12"], "reduction_unroll": ["N=12"], "reduction_interchange": ["N=12"],
    "stencil3d_ns": ["N=11"], "softmax": ["N=13"],
}
PLUTO = ["2d_bidirec", "cholesky", "conv2d", "depthwise", "fdtd-2d", "gemm", "gemm_bias_relu", "gemm_bilinear",
         "gemm_layernorm", "gemver", "heat-3d", "jacobi-2d", "lu", "matmul", "maxpool", "mvt", "seidel-2d",
         "self_attention", "softmax"]
PLUTO_SMALL = ["N=9", "TSTEPS=2", "NC=2", "D=5"]
CASES = [(os.path.join(GPU_DIR, k + ".c"), v) for k, v in sorted(GPU_SMALL.items())] + \
        [(os.path.join(KERNELS, k + ".c"), PLUTO_SMALL) for k in PLUTO]
IDS = [os.path.basename(c[0])[:-2] for c in CASES]
# The GPU benchmarks run by default; the Pluto kernels under the interpreter are a long sweep (-m slow). Every
# kernel's Triton code is still compiled ahead of time by default (test_every_kernel_compiles_for_the_gpu).
# stencil3d_ns, whose interpreted run takes several times the others', is in the sweep too.
SWEEP = [pytest.param(*c, id=i, marks=[] if c[0].startswith(GPU_DIR) and i != "stencil3d_ns" else [pytest.mark.slow])
         for c, i in zip(CASES, IDS)]
CONFIGS = [{}, {"BLOCK_X": 4, "BLOCK_Y": 2, "BLOCK_Z": 2, "BLOCK_M": 2, "BLOCK_R": 4, "num_warps": 1}]
ON_GPU = torch.cuda.is_available()
if ON_GPU:  # Triton compiles no tl.dot with a side under 16 (the interpreter runs them)
    CONFIGS.append({"BLOCK_X": 16, "BLOCK_Y": 16, "BLOCK_Z": 2, "BLOCK_M": 2, "BLOCK_R": 16, "BLOCK_K": 16,
                    "num_warps": 1})


@pytest.mark.parametrize("src,defines", SWEEP)
def test_triton_matches_the_original(src, defines):
    """Every benchmark kernel, on the original program's own data, for the default and a small odd
    launch configuration (partial blocks, reductions over several BLOCK_R chunks), with both schedules
    where fusing whole components gives other kernels (FUSE=1). On a GPU, a configuration may be rejected
    for its resources (register spills, tl.dot blocks under 16), and one more with 16-wide blocks runs."""
    from conftest import TritonHarness

    from polytune.measure import ErrorKind
    program = analyze(src, defines=tuple(defines))
    h = TritonHarness(program, BuildConfig(defines=tuple(defines)), runs=1)
    try:
        h.measure_reference()
        ran = 0
        for cfg in [dict(c, FUSE=f) for f in h.mods for c in CONFIGS]:
            names = tuple(cfg)
            m = h.measure(tuple(cfg.values()), names)
            assert m.ok or (ON_GPU and m.error is ErrorKind.RESOURCES), (cfg, m.error, m.detail)
            ran += m.ok
        assert ran
    finally:
        h.close()


def test_module_shape_and_cli(tmp_path):
    src = os.path.join(GPU_DIR, "softmax.c")
    out = tmp_path / "sm.py"
    assert main(["optimize", src, "-DN=9", "--target", "triton", "-o", str(out)]) == 0
    text = out.read_text()
    assert "@triton.jit" in text and "def run_0(" in text and "run = run_0" in text
    assert "tl.max(" in text  # the row maximum is a vectorized reduction
    # the exp-and-sum loop (two statements) runs BLOCK_R columns at a time; the stored exp values are
    # forwarded to the sum instead of reloaded, and stores read back later are followed by a barrier
    chunk = text[text.index("tl.exp("):]
    assert "tl.sum(" in chunk.split("\n\n")[0]
    # both loops have a constant extent: one copy of the kernel runs them as single chunks (when BLOCK_R
    # covers the row), the other loops over chunks
    assert "if BLOCK_R >= 9:" in text and text.count("tl.arange(0, BLOCK_R)") == 4
    assert "tl.debug_barrier()" in text
    compile(text, str(out), "exec")


def test_matmul_accumulates_in_registers_through_tl_dot():
    program = analyze(os.path.join(GPU_DIR, "matmul_vanilla.c"), defines=("N=12",))
    text = generate_triton(program, OptimizeOptions(target="triton"))
    # one load and one store of C around a K-blocked loop of tl.dot, in full precision
    loop = text[text.index("for k"):].split("\n\n")[0]
    assert "tl.dot(" in loop and 'input_precision="ieee"' in loop and "BLOCK_K" in loop
    assert loop.count("tl.store") == 1  # after the loop, not in it
    assert "tl.arange(0, BLOCK_K)" in text


@pytest.mark.parametrize("src,defines", [(os.path.join(GPU_DIR, "matmul_vanilla.c"), ("N=13",)),
                                         (os.path.join(KERNELS, "gemm.c"), ("N=13",))], ids=["matmul", "gemm"])
def test_whole_tiles_load_their_dot_blocks_without_masks(src, defines):
    """Tiles whose lanes are all in the domain, over a K extent that whole blocks cover, load their
    blocks unmasked; edge tiles and other extents keep the masked loop. N=13 with 4x4 tiles: both kinds
    of tiles; BLOCK_K=1 divides 13, 4 and 8 do not."""
    from conftest import TritonHarness
    configs = ({"BLOCK_X": 4, "BLOCK_Y": 4, "BLOCK_K": 1, "num_warps": 1},
               {"BLOCK_X": 4, "BLOCK_Y": 4, "BLOCK_K": 4, "num_warps": 1},
               {"BLOCK_X": 8, "BLOCK_Y": 4, "BLOCK_K": 8, "num_warps": 1})
    if ON_GPU:  # the same situations with blocks of 16 or more, at N=48
        defines = ("N=48",)
        configs = ({"BLOCK_X": 32, "BLOCK_Y": 32, "BLOCK_K": 16, "num_warps": 4},
                   {"BLOCK_X": 32, "BLOCK_Y": 32, "BLOCK_K": 32, "num_warps": 4},
                   {"BLOCK_X": 16, "BLOCK_Y": 32, "BLOCK_K": 16, "num_warps": 4})
    program = analyze(src, defines=defines)
    text = generate_triton(program, OptimizeOptions(target="triton"))
    assert re.search(r"= tl\.load\((?![^\n]*mask=)[^\n]*\[None, :\][^\n]*\)\n", text), text  # a load with no mask
    h = TritonHarness(program, BuildConfig(defines=defines), runs=1)
    try:
        h.measure_reference()
        for cfg in configs:
            m = h.measure(tuple(cfg.values()), tuple(cfg))
            assert m.ok, (cfg, m.error, m.detail)
    finally:
        h.close()


def test_lane_dependent_loops_are_masked_not_dotted():
    program = analyze(os.path.join(KERNELS, "lu.c"), defines=("N=9",))
    text = generate_triton(program, OptimizeOptions(target="triton"))
    assert "tl.dot(" not in text and "tl.min(tl.where(MASK" in text


def test_tune_triton_cli(tmp_path):
    src = os.path.join(GPU_DIR, "reduction_vanilla.c")
    rep, out = tmp_path / "r.json", tmp_path / "best.py"
    os.environ.setdefault("XDG_CACHE_HOME", str(tmp_path))
    assert main(["tune", src, "--param", "N=12", "--target", "triton", "--no-cache", "--max-evals", "4",
                 "--runs", "1", "--report", str(rep), "-o", str(out)]) == 0
    r = json.loads(rep.read_text())
    assert r["target"] == "triton" and r["best"]["median"] > 0
    assert r["triton"]["launch_choice"]["source"] in ("candidates", "cache")
    assert "CONFIG = {" in out.read_text()


@pytest.mark.gpu
def test_gpu_triton_tune_softmax(tmp_path):
    if not torch.cuda.is_available():
        pytest.skip("needs an NVIDIA GPU")
    src = os.path.join(GPU_DIR, "softmax.c")
    rep = tmp_path / "r.json"
    os.environ.setdefault("XDG_CACHE_HOME", str(tmp_path))
    assert main(["tune", src, "--param", "N=512", "--target", "triton", "--no-cache", "--max-evals", "6",
                 "--report", str(rep)]) == 0
    r = json.loads(rep.read_text())
    assert r["triton"]["device"] == "cuda" and r["best"]["median"] > 0
    assert not any(e["error"] == "wrong_answer" for e in r["evaluations"])


def test_unsupported_function_is_a_one_line_error(tmp_path, capsys):
    src = tmp_path / "th.c"
    src.write_text("#include <math.h>\ndouble A[100], B[100];\nvoid f(int n) {\n  int i;\n#pragma scop\n"
                   "  for (i = 0; i < n; i++)\n    B[i] = powl(A[i], 2.0L);\n#pragma endscop\n}\n")
    out = tmp_path / "th.py"
    assert main(["optimize", str(src), "--target", "triton", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"{src}:7: Triton target: no Triton equivalent for 'powl'"
    assert not out.exists()


def test_a_wrong_variant_is_rejected_not_timed():
    """The harness compares every variant with the original's outputs before timing it."""
    from conftest import TritonHarness

    from polytune.measure import ErrorKind
    program = analyze(os.path.join(GPU_DIR, "matmul_vanilla.c"), defines=("N=12",))
    h = TritonHarness(program, BuildConfig(defines=("N=12",)), runs=1)
    try:
        h.measure_reference()
        real = h.mod.run

        def run(A, B, C, n, config=None):  # the kernel's result, off by one in one element
            real(A, B, C, n, config=config)
            C[3, 5] += 1.0
        h.mod.run = run
        m = h.measure((), ())
        assert m.error == ErrorKind.WRONG_ANSWER and not m.times and "C: 1 of" in m.detail, m.detail
    finally:
        h.close()


def test_double_scalars_keep_their_precision():
    """Triton makes a Python float an fp32 argument: PolyBench gemm's `double beta` must be annotated."""
    program = analyze(os.path.join(KERNELS, "gemm.c"), defines=("N=9",))
    assert program.scops[0].scop.float_scalars == {"alpha": "fp64", "beta": "fp64"}
    text = generate_triton(program, OptimizeOptions(target="triton"))
    assert "alpha: tl.float64" in text and "beta: tl.float64" in text
    assert "ni: tl." not in text  # integer parameters stay as Triton types them


def test_declared_float_scalars():
    from polytune.frontend import declared_float_scalars
    text = ("static void k(int ni, double alpha, double beta, double C[ni][ni], float *p)\n{ double a, b = 2.0, c[3];"
            " float x; int b; long double q; double f(double y); const float r = 1; }")
    got = declared_float_scalars(text)
    assert {k: got[k] for k in ("alpha", "beta", "a", "x", "q", "r")} == \
        {"alpha": "fp64", "beta": "fp64", "a": "fp64", "x": "fp32", "q": "fp64", "r": "fp32"}
    assert not {"ni", "b", "c", "C", "p", "f"} & set(got)  # integers, arrays, pointers, functions
    got = declared_float_scalars("typedef double real_t; typedef float f32;\n"
                                 "void k(int n, real_t alpha, f32 beta, real_t C[n]) { real_t a; }")
    assert got == {"alpha": "fp64", "beta": "fp32", "a": "fp64"}  # typedefs of floating types


def test_stencil_taps_accumulate_in_registers_with_scalar_weights():
    program = analyze(os.path.join(GPU_DIR, "stencil2d_vanilla.c"), defines=("N=13",))
    text = generate_triton(program, OptimizeOptions(target="triton"))
    kernel = text[text.index("@triton.jit"):text.index("def run_0")]
    whole, edge = kernel[kernel.index("if full"):kernel.index("else:")], kernel[kernel.index("else:"):]
    # B[i][j] += W[di][dj] * A[i+di][j+dj] over the 8x8 taps: one load and one store of B around the nest,
    # unrolled in whole tiles, a loop in the edge tiles (their masked loads all at once spilled registers)
    for nest, loops in ((whole, ("tl.static_range(0, 8, 1)", "tl.static_range(-4, 4, 1)")),
                        (edge, ("range(0, (7) + 1, 1)", "range(-4, (3) + 1, 1)"))):
        nest = nest[nest.index(loops[0]):]
        assert loops[1] in nest and nest.count("tl.store(") == 1
        assert nest.count("tl.load(B") == 0
    # the weight's address is the same in every lane: a scalar load, masked by "some lane is active" on
    # the edge tiles, unmasked in whole tiles
    weight = edge[edge.index("tl.load(W + "):].split("other=0)")[0]
    assert "ZERO" not in weight and "mask=any" in weight, weight
    weight = whole[whole.index("tl.load(W + "):].split("\n")[0]
    assert "ZERO" not in weight.split(" * tl.load(A")[0] and "mask=any" not in weight, weight


def test_whole_tiles_run_without_masks_and_taps_are_constant_offsets():
    """Under every mapped loop, a tile whose lanes are all in the domain runs a copy of the body with MASK a
    constant true (Triton drops the masks), the others the masked copy; strides are constexprs, and a
    subscript's lane part comes before its part that is the same in every lane, so a tap's offset from
    the lane's element is a constant (stencil2d on sm_90: 232 instructions per output instead of 504)."""
    program = analyze(os.path.join(GPU_DIR, "stencil2d_vanilla.c"), defines=("N=13",))
    text = generate_triton(program, OptimizeOptions(target="triton"))
    kernel = text[text.index("@triton.jit"):text.index("def run_0")]
    assert "s_A_0: tl.constexpr" in kernel
    # whole or not: from the tile's first and last lanes (scalars), not a reduction of MASK over the block
    assert re.search(r"full\d+ = \(pid_x \* BLOCK_X \+ BLOCK_X <= n_x\) & ", kernel) and "tl.min(" not in kernel
    whole = kernel[kernel.index("if full"):kernel.index("else:")]
    assert "MASK = ZERO == 0" in whole
    tap = r"tl\.load\(A \+ \(v\d+\) \* s_A_0 \+ \(v\d+\) \+ \(\(k\d+ - 4\) \* s_A_0 \+ \(k\d+\)\) \+ ZERO"
    assert re.search(tap, whole), whole
    # a launch passes the strides with the constexprs
    assert "A.stride(0), B.stride(0), W.stride(0)), cfg['num_warps']" in text
    # chunked reductions keep one masked body: their chunk masks stay, whole tiles or not
    program = analyze(os.path.join(GPU_DIR, "softmax.c"), defines=("N=13",))
    text = generate_triton(program, OptimizeOptions(target="triton"))
    kernels = [k.split("\n\n\n")[0] for k in text.split("@triton.jit")[1:]]
    chunked = [k for k in kernels if "tl.arange(0, BLOCK_R)" in k]
    assert chunked and any("MASK = ZERO == 0" in k for k in kernels)
    assert not any("MASK = ZERO == 0" in k for k in chunked)


def test_a_tile_whose_bounds_depend_on_another_mapped_loop_is_tested_lane_by_lane(tmp_path):
    # j <= i: whether every lane of a tile is in the triangle is not a matter of its first and last lanes
    # on each axis alone: the tile test takes the minimum of MASK
    src = tmp_path / "tri.c"
    src.write_text("#define N 40\ndouble A[N][N], B[N][N];\nvoid f(void) {\n#pragma scop\n"
                   "  for (int i = 0; i < N; i++)\n    for (int j = 0; j <= i; j++)\n"
                   "      B[i][j] = 2.0 * A[i][j];\n#pragma endscop\n}\n")
    text = generate_triton(analyze(str(src)), OptimizeOptions(target="triton"))
    assert re.search(r"full\d+ = tl\.min\(MASK\.to\(tl\.int32\)\) != 0", text), text


def test_index_sums_split_into_lane_and_uniform_terms():
    from polytune.emit.triton.expr import _split_terms

    def lanes(t):
        return bool(re.search(r"\bv\d+\b", t))
    assert _split_terms("(v1 + ((k6 - 4)))", lanes) == ("v1", "k6 - 4")
    assert _split_terms("((k6 - 4) - v1) + 2 * v3", lanes) == ("-v1 + 2 * v3", "k6 - 4")
    assert _split_terms("v1 // 2 + n", lanes) == ("v1 // 2", "n")
    assert _split_terms("k + 1", lanes) == ("", "k + 1")
    assert _split_terms("tl.where(v1 > 0, v1, 0)", lanes) == ("tl.where(v1 > 0, v1, 0)", "")
    # a leading minus keeps a remainder or a quotient whole: -(k % 2) is not (-k) % 2 (random program 82344)
    assert _split_terms("(-(k4 % 2) + 2)", lanes) == ("", "-(k4 % 2) + 2")
    assert _split_terms("(-(v1 // 2) + k)", lanes) == ("-(v1 // 2)", "k")
    assert _split_terms("(-(2 * v1) + k)", lanes) == ("-(2 * v1)", "k")


def test_candidates_follow_the_kernel_shape():
    from polytune.measure.triton import candidates
    dot = candidates(["BLOCK_X", "BLOCK_Y", "BLOCK_K", "num_warps", "num_stages"])
    assert all(c["BLOCK_X"] >= 16 and c["BLOCK_Y"] >= 16 and c["BLOCK_K"] >= 16 for c in dot)
    rows = candidates(["BLOCK_M", "BLOCK_R", "num_warps", "num_stages"])
    assert {(c["BLOCK_M"], c["BLOCK_R"]) for c in rows} >= {(1, 4096), (128, 16)}
    both = candidates(["BLOCK_X", "BLOCK_Y", "BLOCK_M", "BLOCK_R", "num_warps", "num_stages", "FUSE"])
    assert {c["FUSE"] for c in both} == {0, 1} and len(both) == 2 * len(candidates(
        ["BLOCK_X", "BLOCK_Y", "BLOCK_M", "BLOCK_R", "num_warps", "num_stages"]))


def test_softmax_fused_schedule_is_a_tuning_choice():
    from polytune.pipeline import triton_variants
    from polytune.tune import TuneOptions, make_target
    program = analyze(os.path.join(GPU_DIR, "softmax.c"), defines=("N=9",))
    variants = triton_variants(program, OptimizeOptions(target="triton"))
    assert sorted(variants) == [0, 1]
    assert variants[0].count("@triton.jit") == 2 and variants[1].count("@triton.jit") == 1
    assert "cfg['BLOCK_M']" in variants[1]  # the fused row kernel: BLOCK_M rows x BLOCK_R lanes
    space = make_target(program, TuneOptions(target="triton")).space()
    assert "FUSE" in space.names and "BLOCK_M" in space.names


def test_oversized_tiles_are_rejected_before_compiling():
    from conftest import TritonHarness

    from polytune.measure import ErrorKind
    program = analyze(os.path.join(GPU_DIR, "reduction_vanilla.c"), defines=("N=12",))
    h = TritonHarness(program, BuildConfig(defines=("N=12",)), runs=1)
    try:
        h.measure_reference()
        m = h.measure((256, 4096, 1), ("BLOCK_M", "BLOCK_R", "num_warps"))  # 2^20 elements for 32 threads
        assert m.error == ErrorKind.RESOURCES and "per thread" in m.detail and not m.times
        assert h.measure((2, 16, 1), ("BLOCK_M", "BLOCK_R", "num_warps")).ok
    finally:
        h.close()


def test_dot_blocks_under_16_are_rejected_on_the_gpu_only(tmp_path):
    from polytune.measure.triton import load_module, tile_problem
    mods = {}
    for name, src in (("matmul", os.path.join(GPU_DIR, "matmul_vanilla.c")),
                      ("jacobi", os.path.join(KERNELS, "jacobi-2d.c"))):
        program = analyze(src, defines=("N=12", "TSTEPS=2"))
        mods[name] = load_module(generate_triton(program, OptimizeOptions(target="triton")), str(tmp_path))
    small = {"BLOCK_X": 8, "BLOCK_Y": 16, "BLOCK_K": 16}
    assert "tl.dot needs blocks of at least 16 (BLOCK_X=8)" in tile_problem(mods["matmul"], small, gpu=True)
    assert tile_problem(mods["matmul"], small, gpu=False) == ""  # the interpreter runs them
    assert tile_problem(mods["matmul"], {"BLOCK_X": 16, "BLOCK_Y": 16, "BLOCK_K": 16}, gpu=True) == ""
    assert tile_problem(mods["jacobi"], small, gpu=True) == ""  # no tl.dot


def test_chained_assignments():
    """`B[i][j] = C[i][j] = e` and `s = t = 0.5`: the inner assignment first, then the outer one takes the
    value the inner target holds (a double stored through a float is rounded in the float only)."""
    from conftest import TritonHarness
    src = os.path.join(TRITON_DATA, "chained.c")
    program = analyze(src, defines=("N=12",))
    h = TritonHarness(program, BuildConfig(defines=("N=12",)), runs=1)
    try:
        h.measure_reference()
        for cfg in CONFIGS:
            m = h.measure(tuple(cfg.values()), tuple(cfg))
            assert m.ok, (cfg, m.error, m.detail)
    finally:
        h.close()


def test_libdevice_functions(capsys):
    """pow, tanh, atan2, ... become CUDA libdevice calls (compiled in test_every_kernel_compiles_for_the_gpu);
    Triton's interpreter cannot call them, so tuning there stops with a one-line error."""
    src = os.path.join(TRITON_DATA, "math.c")
    text = generate_triton(analyze(src, defines=("N=12",)), OptimizeOptions(target="triton"))
    for f in ("pow", "tanh", "atan2", "log10", "cbrt", "erf", "hypot", "erfc", "copysign", "round", "fma", "trunc"):
        assert f"libdevice.{f}(" in text
    if ON_GPU:
        return
    assert main(["tune", src, "--param", "N=12", "--target", "triton", "--no-cache", "--max-evals", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("cannot run CUDA libdevice functions (atan2, cbrt, copysign, erf, erfc, fma, hypot, "
                        "log10, pow, round, tanh, trunc): "
                        "tune this program on an NVIDIA GPU") and "\n" not in err, err


def test_forget_compiled_clears_the_jit_caches():
    from types import SimpleNamespace

    from polytune.measure.triton import forget_compiled
    k = SimpleNamespace(device_caches={0: "compiled"})
    forget_compiled(SimpleNamespace(k=k, CONFIG={}))
    assert k.device_caches == {}


def test_the_launcher_reuses_what_triton_compiled_for_equal_argument_values(tmp_path):
    """run() launches through _launch: the compiled kernel Triton returned is called directly when every
    argument value (pointer, dtype, number and its type, grid, constexprs, warps, stages) is the one it was
    compiled for, and goes through Triton again when any differs. A fake kernel records both paths."""
    import numpy as np

    from polytune.measure.triton import forget_compiled, load_module
    program = analyze(os.path.join(GPU_DIR, "matmul_vanilla.c"), defines=("N=12",))
    mod = load_module(generate_triton(program, OptimizeOptions(target="triton")), str(tmp_path))
    slow, fast = [], []

    class Compiled:
        launch_metadata = None

        def __getitem__(self, grid):
            return lambda *args: fast.append((grid, args))

    class Kernel:
        def __getitem__(self, grid):
            def launch(*args, **options):
                slow.append((grid, args, options))
                return Compiled()
            return launch

    mod._kernel0_0 = Kernel()
    mod._device = lambda: 0
    a, b, c = (torch.zeros(12, 12) for _ in range(3))
    mod.run(a, b, c, 12)
    mod.run(a, b, c, 12)
    assert len(slow) == 1 and len(fast) == 1
    assert fast[0] == slow[0][:2]  # the same grid and arguments, constexprs included
    assert slow[0][2] == {"num_warps": 4, "num_stages": 3}  # a float32 contraction's default (CONTRACTION_CONFIG)
    mod.run(a, b, c.view(12, 12), 12)  # another tensor object over the same memory: same values
    assert len(slow) == 1 and len(fast) == 2
    for args, config in [((a, b, c.view(torch.int32), 12), None),  # another dtype at the same address
                         ((a, b, c.double(), 12), None),  # another dtype and address
                         ((a, b, torch.zeros(12, 12), 12), None),  # another address
                         ((a, b, c, np.int64(12)), None),  # another type of the same number
                         ((a, b, c, 11), None),  # another number
                         ((a, b, c, 12), {"num_warps": 8}),
                         ((a, b, c, 12), {"BLOCK_K": 16})]:
        mod.run(*args, config=config)
        assert len(slow) == 2 and len(fast) == 2, (args, config)
        slow.pop()
    forget_compiled(mod)
    mod.run(a, b, c, 12)
    assert len(slow) == 2 and len(fast) == 2


@pytest.mark.gpu
def test_gpu_repeated_launches_run_the_compiled_kernel_directly(tmp_path):
    """On the GPU the second run() with the same arguments takes the direct path, and computes the
    product of the data the tensors hold now (N=100: partial tiles)."""
    if not torch.cuda.is_available():
        pytest.skip("needs an NVIDIA GPU")
    from polytune.measure.triton import load_module
    program = analyze(os.path.join(GPU_DIR, "matmul_vanilla.c"), defines=("N=100",))
    mod = load_module(generate_triton(program, OptimizeOptions(target="triton")), str(tmp_path))
    a, b, c = (torch.rand(100, 100, device="cuda") for _ in range(3))
    for _ in range(3):
        a.copy_(torch.rand(100, 100))
        c.zero_()
        mod.run(a, b, c, 100, config={"BLOCK_X": 32, "BLOCK_Y": 32, "BLOCK_K": 16})
        torch.testing.assert_close(c, torch.matmul(a, b), rtol=1e-4, atol=1e-4)
    assert len(mod._LAUNCHED) == 1


def test_unrolled_accumulations_stay_in_registers():
    """A body unrolled by hand (four statements adding into B[i][j] per dj step) accumulates in registers,
    statement by statement in their order, with one load and one store of B around the nest."""
    program = analyze(os.path.join(GPU_DIR, "stencil2d_unroll.c"), defines=("N=13",))
    text = generate_triton(program, OptimizeOptions(target="triton"))
    kernel = text[text.index("@triton.jit"):text.index("def run_0")]
    for branch in kernel[kernel.index("if full"):].split("else:"):  # whole tiles, edge tiles
        nest = branch[branch.index("for k"):]
        assert nest.count("tl.store(") == 1 and "tl.load(B" not in nest
        assert len(re.findall(r"acc\d+ = acc\d+ \+", nest)) == 4


def test_parameters_of_the_other_schedule_are_not_measured_twice():
    """Under FUSE=1 softmax is one row kernel: BLOCK_X (the unfused element-wise kernel's) changes nothing,
    so a configuration differing only there reuses the measurement instead of compiling and timing again."""
    from conftest import TritonHarness
    program = analyze(os.path.join(GPU_DIR, "softmax.c"), defines=("N=9",))
    h = TritonHarness(program, BuildConfig(defines=("N=9",)), runs=1)
    try:
        h.measure_reference()
        names = ("BLOCK_X", "BLOCK_M", "FUSE")
        a = h.measure((16, 2, 1), names)
        b = h.measure((64, 2, 1), names)
        c = h.measure((64, 2, 0), names)
        assert a.ok and b.times == a.times and b.same_as == (16, 2, 1) and b.config == (64, 2, 1)
        assert c.ok and c.same_as is None  # FUSE=0 runs other kernels, which use BLOCK_X
    finally:
        h.close()


UNROLLED = """#include <stdio.h>
#define N 11
float A[N][N + 3], s[N];
static void kernel(int n)
{
  int i, k;
#pragma scop
  for (i = 0; i < n; i++) {
    s[i] = 0.0f;
    for (k = 0; k < n; k += 2) {
      s[i] += A[i][k] * 0.5f;
      s[i] += A[i][SECOND] * 0.5f;
    }
  }
#pragma endscop
}
int main(void)
{
  int i, k;
  for (i = 0; i < N; i++)
    for (k = 0; k < N + 3; k++)
      A[i][k] = (float)((i * 7 + k * 3) % 13) - 6.0f;
  kernel(N);
  double cs = 0.0;
  for (i = 0; i < N; i++)
    cs += (i + 1) * s[i];
  printf("checksum: %.10e\\n", cs);
  return 0;
}
"""


@pytest.mark.parametrize("second,rolled", [("k + 1", True), ("k + 2", False)])
def test_hand_unrolled_bodies_are_rerolled_only_when_equivalent(tmp_path, second, rolled):
    """`s += a[k]; s += a[k+1]` under `k += 2` is `s += a[k]` over every k (an odd n included: the
    original reads a[n] too): re-rolled, it becomes a vector reduction. Offsets 0 and 2 are not a
    re-rolled loop: they stay two accumulations in registers. Both give the original's result."""
    from conftest import TritonHarness
    src = tmp_path / "unrolled.c"
    src.write_text(UNROLLED.replace("SECOND", second))
    program = analyze(str(src))
    text = generate_triton(program, OptimizeOptions(target="triton"))
    assert ("tl.sum(" in text) == rolled
    h = TritonHarness(program, BuildConfig(), runs=1)
    try:
        h.measure_reference()
        for cfg in ({}, {"BLOCK_M": 2, "BLOCK_R": 4, "BLOCK_X": 4}):
            m = h.measure(tuple(cfg.values()), tuple(cfg))
            assert m.ok, (cfg, m.error, m.detail)
    finally:
        h.close()


def test_unrolled_matmul_becomes_a_dot():
    program = analyze(os.path.join(GPU_DIR, "matmul_unroll.c"), defines=("N=12",))
    text = generate_triton(program, OptimizeOptions(target="triton"))
    assert "tl.dot(" in text


def test_canonical_index_arithmetic():
    from polytune.emit.triton import _canonical as c
    assert c("tl.load(W + ((k + 1) + 4) * s)") == c("tl.load(W + (k + 5) * s)")
    assert c("2 * (k + 1) - k") == c("k + 2") and c("a[(k6 + 1)]") == c("a[((k6 + 1))]")
    assert c("x + (k + 1)") != c("x + (k + 2)") and c("k6 * 11") != c("k61 * 1")
    assert c("k * k") != c("k * 2")  # not affine: compared as written


def _fwd(text: str) -> list[str]:
    from polytune.emit.triton import forward_stores
    return forward_stores([x[4:] for x in text.strip("\n").split("\n")])


def test_a_stored_element_is_forwarded_and_the_dead_store_dropped():
    out = _fwd("""
    p1 = B + (v1) + ZERO
    tl.store(p1, 0.0, mask=MASK)
    p2 = B + (v1) + ZERO
    acc3 = tl.load(p2, mask=MASK, other=0)
    for k4 in range(0, n, 1):
        acc3 = acc3 + tl.load(A + (v1 + k4) + ZERO, mask=MASK, other=0)
    tl.store(p2, acc3, mask=MASK)""")
    assert "acc3 = tl.where(MASK, 0.0, 0).to(B.dtype.element_ty)" in out
    assert [x for x in out if x.startswith("tl.store")] == ["tl.store(p2, acc3, mask=MASK)"]


def test_forwarding_stops_where_the_element_may_have_changed():
    # another element of B stored in between (it may be the same one for another lane)
    out = _fwd("""
    p1 = B + (v1) + ZERO
    tl.store(p1, x, mask=MASK)
    p2 = B + (v1 + 1) + ZERO
    tl.store(p2, y, mask=MASK)
    z = tl.load(p1, mask=MASK, other=0)""")
    assert out[-1] == "z = tl.load(p1, mask=MASK, other=0)" and len(out) == 5
    # the stored value's name reassigned, the mask narrowed, or a loop that stores to B
    loop = "for k in range(0, n, 1):\n        p3 = B + (v1 + k) + ZERO\n        tl.store(p3, w, mask=MASK)"
    for between in ("x = x + 1", "MASK = MASK & (v1 > 0)", loop):
        out = _fwd(f"""
    p1 = B + (v1) + ZERO
    tl.store(p1, x, mask=MASK)
    {between}
    z = tl.load(p1, mask=MASK, other=0)""")
        assert out[-1] == "z = tl.load(p1, mask=MASK, other=0)", between
        assert "tl.store(p1, x, mask=MASK)" in out


def test_a_store_under_a_condition_or_in_a_loop_is_not_forwarded_after_it():
    for header in ("if c:", "for k in range(0, n, 1):"):
        out = _fwd(f"""
    p1 = B + (v1) + ZERO
    {header}
        tl.store(p1, x, mask=MASK)
    z = tl.load(p1, mask=MASK, other=0)""")
        assert out[-1] == "z = tl.load(p1, mask=MASK, other=0)"


def test_a_store_read_in_between_is_kept():
    out = _fwd("""
    p1 = B + (v1) + ZERO
    tl.store(p1, x, mask=MASK)
    w = tl.load(B + (v1 - 1) + ZERO, mask=MASK, other=0)
    tl.store(p1, w, mask=MASK)""")
    assert out.count("tl.store(p1, x, mask=MASK)") == 1


def test_a_mask_restored_after_an_inner_loop_is_the_same_mask():
    out = _fwd("""
    p1 = s + (v1) + ZERO
    tl.store(p1, 0.0, mask=MASK)
    for k in range(0, n, BLOCK_R):
        mask2 = MASK
        MASK = mask2[:, None] & (k < n)
        t = tl.load(A + (v1[:, None]) + k + ZERO, mask=MASK, other=0)
        MASK = mask2
    acc = tl.load(p1, mask=MASK, other=0)""")
    assert out[-1] == "acc = tl.where(MASK, 0.0, 0).to(s.dtype.element_ty)"


def test_an_element_two_statements_load_is_loaded_once_until_its_array_is_stored():
    out = _fwd("""
    p1 = X + (v1) + ZERO
    tl.store(p1, tl.load(u + (v1 + 1) + ZERO, mask=MASK, other=0) * 2, mask=MASK)
    p2 = Y + (v1) + ZERO
    tl.store(p2, tl.load(u + (v1 + 1) + ZERO, mask=MASK, other=0) + tl.load(w + (v1), mask=MASK, other=0), mask=MASK)
    p3 = u + (v1 + 1) + ZERO
    tl.store(p3, 0.0, mask=MASK)
    p4 = Z + (v1) + ZERO
    tl.store(p4, tl.load(u + (v1 + 1) + ZERO, mask=MASK, other=0), mask=MASK)""")
    text = "\n".join(out)
    assert out[1] == "ld0 = tl.load(u + (v1 + 1) + ZERO, mask=MASK, other=0)", text
    assert text.count("tl.load(u") == 1 and text.count("tl.load(w") == 1, text  # w: loaded by one line only
    assert "= ld0 + tl.load(w + (v1), mask=MASK, other=0)" in text
    # after the store to u, the element is the stored value (forwarded), not the loaded one
    assert out[-2].endswith("= tl.where(MASK, 0.0, 0).to(u.dtype.element_ty)"), text


def test_a_load_in_a_branch_or_under_another_mask_is_not_reused():
    load = "tl.load(u + (v1) + ZERO, mask=MASK, other=0)"
    out = _fwd(f"""
    if c:
        p1 = X + (v1) + ZERO
        tl.store(p1, {load}, mask=MASK)
        y = {load} * 2
    p2 = Y + (v1) + ZERO
    tl.store(p2, {load}, mask=MASK)
    MASK = MASK & (v1 > 0)
    z = {load}""")
    text = "\n".join(out)
    assert text.count(load) == 3 and "    y = ld0 * 2" in text, text  # in the branch, after it, narrower


def test_statements_that_read_the_same_neighbours_are_one_kernel_in_the_fused_schedule():
    # the three flux statements of stencil3d_ns share no dependence: isl's scheduler puts them in three
    # components (three kernels); with their common reads as proximity (FUSE=1) they are one kernel that
    # loads each neighbour once
    program = analyze(os.path.join(GPU_DIR, "stencil3d_ns.c"), defines=("N=11",))
    a = program.scops[0]
    assert len(a.gpu.kernels) == 3
    assert [k.statements for k in a.gpu_fused.kernels] == [("S0", "S1", "S2")]
    fused = generate_triton(program, OptimizeOptions(target="triton"), {"FUSE": 1})
    kernel = fused[fused.index("@triton.jit"):fused.index("def run_0")]
    full = kernel[:kernel.index("\n    else:\n")]
    loads = re.findall(r"tl\.load\(([^,]*),", full)
    # 8 taps on each axis: u, rho on all three, v along y, w along z, p along x
    assert len(loads) == len(set(loads)) == 8 * (3 + 3 + 1 + 1 + 1), loads


def test_softmax_row_values_are_loaded_once_per_row():
    # mx[i] and sm[i] do not move with j: one value per row, taken from the register that computed it,
    # not a load per element
    program = analyze(os.path.join(GPU_DIR, "softmax.c"), defines=("N=13",))
    text = generate_triton(program, OptimizeOptions(target="triton"), {"FUSE": 1})
    kernel = text[text.index("@triton.jit"):text.index("def run_0")]
    one_chunk, chunked = kernel.split("\n    else:\n")
    assert "if BLOCK_R >= 13:" in one_chunk
    loops = chunked[chunked.index("for k"):]
    assert "tl.load(mx" not in loops and "tl.load(sm" not in loops, kernel
    assert chunked.count("tl.store(p") == 4  # mx, sm, and B twice
    # with the row in one chunk, exp(A - max) stays in registers for the division: B is stored once
    # and never read back
    body = one_chunk[one_chunk.index("lanes"):]
    assert "tl.load(mx" not in body and "tl.load(sm" not in body and "tl.load(B" not in body, one_chunk
    assert one_chunk.count("tl.store(p") == 3



@pytest.mark.slow
def test_every_kernel_compiles_for_the_gpu():
    """Each kernel of each module (both schedules), as run() launches it on the original program's data,
    compiled ahead of time for sm_90 by Triton's own compiler (no GPU needed), under the default
    configuration and a mid-sized one: the CPU tests otherwise only run Triton's interpreter, which
    accepts kernels the compiler rejects (a float64 tl.dot accumulator without out_dtype). In a
    subprocess: a process that imported Triton for its interpreter cannot compile."""
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    extra = [(os.path.join(TRITON_DATA, f), ("N=12",)) for f in ("chained.c", "math.c")]
    cases = [f"{src}|{','.join(defines)}" for src, defines in CASES + extra]
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "triton_aot.py"), *cases], env=env,
                       capture_output=True, text=True, timeout=1200)
    if r.returncode == 3:
        pytest.skip(r.stdout.strip())
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert r.stdout.count(": ok") == len(cases), r.stdout


class _ReplayRunner:
    """measure_fresh answers from fixed times per configuration (a replayed runner: no GPU, no Triton)."""

    def __init__(self, times: dict):
        self.times = times
        self.calls: list[tuple] = []

    def measure_fresh(self, config, names):
        from polytune.measure.measurement import Measurement
        self.calls.append(tuple(config))
        return Measurement(tuple(config), (self.times[tuple(config)],))


@pytest.mark.parametrize("again,holds", [({(1,): 0.002, (2,): 0.001}, True), ({(1,): 0.002, (2,): 0.0019}, False)])
def test_triton_gain_is_measured_again_in_turn_and_reported(again, holds):
    from polytune.measure.measurement import Measurement
    from polytune.targets.triton import CONFIRM_ROUNDS, TritonTarget
    runner = _ReplayRunner(again)
    seed, best = Measurement((1,), (0.002,)), Measurement((2,), (0.001,))
    out, warnings = TritonTarget.confirm(None, runner, seed, best, ("BLOCK_X",))
    assert runner.calls == [(1,), (2,)] * CONFIRM_ROUNDS  # interleaved
    assert out["kernel_gain"] == pytest.approx(2.0) and out["holds"] == holds
    assert out["program_gain"] == pytest.approx(again[(1,)] / again[(2,)])
    assert bool(warnings) != holds


class _FakeGpu:
    """torch.cuda as spaced_time sees it, on a simulated clock (microseconds): the host takes *host_us* to
    enqueue a call, whose kernels then take *kernel_us* on the GPU; _sleep(cycles) keeps the GPU busy."""

    def __init__(self, host_us: float, kernel_us: float):
        self.host_us, self.kernel_us = host_us, kernel_us
        self.now = 0.0  # host clock
        self.gpu_free = 0.0  # when the GPU finishes what is queued
        self.sleeps: list[int] = []
        gpu = self

        class Event:
            def __init__(self, enable_timing=False):
                self.at = None

            def record(self):
                self.at = max(gpu.now, gpu.gpu_free)
                gpu.gpu_free = self.at

            def query(self):
                return self.at <= gpu.now

            def synchronize(self):
                gpu.now = max(gpu.now, self.at)

            def elapsed_time(self, other):
                return (other.at - self.at) / 1e3  # ms

        self.cuda = type("cuda", (), {})()
        self.cuda.Event = Event
        self.cuda.synchronize = lambda: setattr(self, "now", max(self.now, self.gpu_free))
        self.cuda._sleep = self._sleep

    def _sleep(self, cycles):
        from polytune.measure.triton import SPACER_CYCLES_PER_US
        self.sleeps.append(cycles)
        self.gpu_free = max(self.now, self.gpu_free) + cycles / SPACER_CYCLES_PER_US

    def call(self):
        self.now += self.host_us  # the launcher's host time, then the kernel is queued
        self.gpu_free = max(self.now, self.gpu_free) + self.kernel_us


def test_a_timed_run_counts_the_kernels_not_the_launchers_host_time():
    from polytune.measure.triton import SPACER_US, call_time, spaced_time
    gpu = _FakeGpu(host_us=30, kernel_us=45)
    restores = []
    t, spacer = spaced_time(gpu, gpu.call, lambda: restores.append(1))
    assert t == pytest.approx(45e-6) and spacer == SPACER_US and len(restores) == 1
    assert call_time(gpu, gpu.call, lambda: None) == pytest.approx(75e-6)  # a caller that waits sees both


def test_a_spacer_shorter_than_the_hosts_launch_is_lengthened_and_the_run_repeated():
    from polytune.measure.triton import SPACER_US, spaced_time
    gpu = _FakeGpu(host_us=3 * SPACER_US, kernel_us=45)
    restores = []
    t, spacer = spaced_time(gpu, gpu.call, lambda: restores.append(1))
    assert t == pytest.approx(45e-6)  # the GPU waited for the host in the first attempt: not counted
    assert spacer == 4 * SPACER_US and len(restores) == 2  # the inputs restored before the repeat


def test_without_a_spacer_kernel_the_call_is_timed_with_its_launch():
    from polytune.measure.triton import spaced_time
    gpu = _FakeGpu(host_us=30, kernel_us=45)
    del gpu.cuda._sleep
    t, _ = spaced_time(gpu, gpu.call, lambda: None)
    assert t == pytest.approx(75e-6)


def test_the_triton_report_states_the_gain_of_a_single_waited_call_beside_the_kernels_gain():
    from polytune.measure.measurement import Measurement
    from polytune.targets.triton import TritonTarget

    class Runner(_ReplayRunner):
        def measure_fresh(self, config, names):
            m = super().measure_fresh(config, names)
            return Measurement(m.config, m.times, extra={"call_ms": 1e3 * m.times[0] + 0.03})

    runner = Runner({(1,): 0.00009, (2,): 0.00006})
    out, _ = TritonTarget.confirm(None, runner, Measurement((1,), (0.00009,)), Measurement((2,), (0.00006,)), ("X",))
    assert out["program_gain"] == pytest.approx(1.5)
    assert out["call_gain"] == pytest.approx(0.12 / 0.09)  # the launcher's 30 us shrink the gain a caller sees


def test_a_subscript_split_into_lane_and_uniform_terms_keeps_each_term_whole():
    """`i + (i == n - 1)` split for the whole-tile copy printed `v1 + v1 == 8` (a comparison in Python)."""
    from polytune.emit.triton.expr import _split_terms
    lane = lambda t: "v1" in t  # noqa: E731
    assert _split_terms("v1 + (v1 == 8)", lane) == ("v1 + (v1 == 8)", "")
    assert _split_terms("c0 + (v1 << 1 >> 1)", lane) == ("(v1 << 1 >> 1)", "c0")
    assert _split_terms("c0 * 4 + v1 * 2 - 3", lane) == ("v1 * 2", "c0 * 4 - 3")
    for text in ("v1 + (v1 == 8)", "c0 + (v1 + 1 >> 1)", "-(v1 == 0) + c0 - (c0 & 1)"):
        varying, uniform = _split_terms(text, lane)
        for v1 in range(-3, 12):
            for c0 in range(3):
                env = {"v1": v1, "c0": c0}
                assert eval(f"({varying or 0}) + ({uniform or 0})", env) == eval(text, env), text


FAKE_MODULE = '''
import torch
CALLS = []
CONFIG = {"BLOCK_X": 64, "num_warps": 4, "num_stages": 2}


class _Kernel:
    def warmup(self, *args, grid, num_warps, num_stages):
        CALLS.append((args, grid, num_warps, num_stages))


_kernel0_0 = _Kernel()


def _launch(kernel, grid, tensors, numbers, constexprs, num_warps, num_stages):
    raise AssertionError("a compile worker launches nothing")


def run(A, n, config=None):
    cfg = dict(CONFIG, **(config or {}))
    _launch(_kernel0_0, ((n + cfg["BLOCK_X"] - 1) // cfg["BLOCK_X"],), (A,), (n,), (cfg["BLOCK_X"], A.stride(0)),
            cfg["num_warps"], cfg["num_stages"])
'''


def test_the_compile_step_compiles_each_kernel_for_the_launch_it_will_get_without_launching_it():
    """(A stand-in module: its kernel records what it is compiled for.) The compile worker runs run() on meta
    tensors of the candidate's shapes: each kernel compiled for the dtypes, values, constexprs and grid the
    timed launch will have; a failure is reported, not raised (the timer then compiles as it launches)."""
    import sys

    from polytune.measure.triton import TritonJob, warm_kernels
    args = (("A", ("tensor", "float32", (8, 300), (300, 1))), ("n", ("value", 300)))
    job = TritonJob((128,), ("BLOCK_X",), FAKE_MODULE, {"BLOCK_X": 128}, args)
    warmed = warm_kernels(job)
    assert warmed.detail == "" and warmed.config == (128,)
    mod = next(m for name, m in sys.modules.items() if name.startswith("polytune_triton_") and hasattr(m, "CALLS"))
    (args, grid, warps, stages), = mod.CALLS
    assert args == (torch.float32, 300, 128, 300) and grid == (3,) and (warps, stages) == (4, 2)
    broken = warm_kernels(TritonJob((1,), ("BLOCK_X",), FAKE_MODULE, {"BLOCK_X": 128},
                                    (("A", ("value", None)), ("n", ("value", 300)))))
    assert broken.detail.startswith("AttributeError")


def test_tune_triton_jobs_2_measures_algorithm_9_1s_candidates_on_the_workers(tmp_path, monkeypatch):
    """--jobs 2: the candidates (Algorithm 9.1's, then the climb's) go through the workers' pool, each
    verified and timed in the tuning process: the same candidates as with --jobs 1, every one verified."""
    from polytune.tune import TuneOptions, tune
    src = os.path.join(GPU_DIR, "reduction_vanilla.c")
    build = BuildConfig(defines=("N=12",), runs=1)
    reports = {}
    for jobs in (1, 2, None):
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / str(jobs)))  # (no remembered launch choice)
        reports[jobs] = tune(src, TuneOptions(target="triton", cache=None, max_evals=3, jobs=jobs), build).report
    one, two = (reports[j].to_json() for j in (1, 2))
    assert [c["config"] for c in one["triton"]["launch_choice"]["candidates"]] == \
        [c["config"] for c in two["triton"]["launch_choice"]["candidates"]]
    assert two["workers"]["jobs"] == 2 and reports[1].workers is None
    assert reports[None].workers is None  # (the triton target uses workers where --jobs asks for them)
    measured = [e for e in two["evaluations"] if e.get("same_as") is None and not e.get("cached")]
    assert measured and all(e["extra"]["worker"].endswith("/timer") for e in measured)
    assert not any(e["error"] == "wrong_answer" for e in two["evaluations"])


def _report_warm_dir(queue) -> None:
    from polytune.measure.triton import warm_dir
    queue.put(warm_dir())


@pytest.mark.parametrize("method", ["forkserver", "spawn"])
def test_a_compile_workers_module_directory_is_removed_when_the_worker_ends(method):
    import multiprocessing
    ctx = multiprocessing.get_context(method)
    queue = ctx.Queue()
    worker = ctx.Process(target=_report_warm_dir, args=(queue,))
    worker.start()
    path = queue.get(timeout=60)
    worker.join(60)
    assert worker.exitcode == 0 and path.startswith(os.path.join(tempfile.gettempdir(), "polytune-triton-warm-"))
    assert not os.path.exists(path)


def test_tune_triton_on_ray_is_refused_in_one_line(capsys):
    src = os.path.join(GPU_DIR, "reduction_vanilla.c")
    assert main(["tune", src, "--param", "N=12", "--target", "triton", "--no-cache", "--ray", "auto"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--ray needs a target that compiles and times apart" in err


def test_the_tuners_seed_of_a_contraction_prints_with_its_own_block_sizes():
    """A matmul's Triton space tunes BLOCK_X/BLOCK_Y/BLOCK_K, which the contraction defaults also name: the
    tuner's values win (they raised "dict() got multiple values for keyword argument 'BLOCK_X'")."""
    from polytune.tune import TuneOptions, make_target
    tgt = make_target(analyze(os.path.join(ROOT, "benchmarks", "pluto", "gemm.c")), TuneOptions(target="triton",
                                                                                                  cache=None))
    space = tgt.space()
    assert "BLOCK_X" in space.names
    for config in (tgt.seed(space, "pluto"), tuple(p.values[-1] for p in space.params)):
        text = tgt.variant(space.names, config).text
        block_x = dict(zip(space.names, config))["BLOCK_X"]
        assert f"'BLOCK_X': {block_x}" in text.replace('"', "'")


MIXED = """#include <stdio.h>
#define N 9
double A[N][N];
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] = (i * 3 + j) % 7;
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = 0.5 * A[i][j] + 0.01 * (i - j);
#pragma endscop
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) printf("%.17g\\n", A[i][j]);
  return 0;
}
"""


def test_a_double_constant_times_an_int_expression_is_computed_in_double(tmp_path):
    """C converts the int to double; Triton computes a Python float times an int32 tensor in float32
    (maxpool's `0.01 * (dy - dx)` lost bits against C's result): the int operand is converted first."""
    from conftest import TritonHarness
    src = tmp_path / "mixed.c"
    src.write_text(MIXED)
    program = analyze(str(src))
    assert ".to(tl.float64)" in generate_triton(program, OptimizeOptions())
    h = TritonHarness(program, BuildConfig(), runs=1)
    try:
        h.measure_reference()
        m = h.measure((0,), ("FUSE",))
        assert m.ok, (m.error, m.detail)
    finally:
        h.close()
