"""Contractions on the GPU targets: TF32 only when the user asks (--allow-tf32), a library's tile as a
contraction's default launch configuration, and the share of copies in a CUDA region's time. CPU-side
(emission, the interpreter); GPU-only tests are marked `gpu`."""
from __future__ import annotations

import os
import re

import pytest
from conftest import KERNELS, ROOT

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # before triton is imported: it reads the variable then
    os.environ["TRITON_INTERPRET"] = "1"
pytest.importorskip("triton")

from polytune.cli import main  # noqa: E402
from polytune.emit.triton import DEFAULT_CONFIG  # noqa: E402
from polytune.emit.triton.host import CONTRACTION_CONFIG  # noqa: E402
from polytune.measure.c import BuildConfig  # noqa: E402
from polytune.measure.cuda import region_shares  # noqa: E402
from polytune.measure.triton import RTOL, RTOL_TF32, candidates  # noqa: E402
from polytune.pipeline import OptimizeOptions, analyze, generate_triton, triton_modules  # noqa: E402
from polytune.targets.triton import TritonTarget  # noqa: E402
from polytune.tune import TuneOptions, make_target, region_share_lines  # noqa: E402

GPU_DIR = os.path.join(ROOT, "benchmarks", "gpu")
POLYBENCH = os.path.join(ROOT, "tests", "data", "polybench")
MATMUL = os.path.join(GPU_DIR, "matmul_vanilla.c")


def _precisions(text: str) -> list[str]:
    return re.findall(r'tl\.dot\([^\n]*input_precision="(\w+)"', text)


def _module_config(text: str) -> dict:
    return eval(re.search(r"^CONFIG = (\{.*\})$", text, re.M).group(1))  # noqa: S307 - our own output


def test_allow_tf32_puts_every_float32_dot_on_tf32():
    text = generate_triton(analyze(MATMUL, defines=("N=12",)), OptimizeOptions(target="triton", allow_tf32=True))
    assert _precisions(text) and set(_precisions(text)) == {"tf32"}


@pytest.mark.parametrize("path,defines", [(MATMUL, ("N=12",)), (os.path.join(KERNELS, "gemm.c"), ("N=9",)),
                                          (os.path.join(POLYBENCH, "2mm.c"), ()),
                                          (os.path.join(POLYBENCH, "3mm.c"), ())],
                         ids=["matmul", "gemm", "2mm", "3mm"])
def test_without_allow_tf32_no_kernel_uses_tf32(path, defines):
    program = analyze(path, defines=defines)
    for fuse, mod in triton_modules(program, OptimizeOptions(target="triton")).items():
        assert _precisions(mod.text) and set(_precisions(mod.text)) == {"ieee"}, fuse
        assert "tf32" not in mod.text


def test_allow_tf32_leaves_double_contractions_in_full_precision():
    """PolyBench's 2mm in double: the user allowed TF32 for float32 data; double products stay ieee."""
    text = generate_triton(analyze(os.path.join(POLYBENCH, "2mm.c")), OptimizeOptions(target="triton",
                                                                                       allow_tf32=True))
    assert _precisions(text) and set(_precisions(text)) == {"ieee"}


def test_allow_tf32_on_the_command_line_reaches_the_kernel_text(tmp_path, capsys):
    plain, tf32 = tmp_path / "plain.py", tmp_path / "tf32.py"
    assert main(["optimize", MATMUL, "-D", "N=12", "--target", "triton", "-o", str(plain)]) == 0
    assert main(["optimize", MATMUL, "-D", "N=12", "--target", "triton", "--allow-tf32", "-o", str(tf32)]) == 0
    assert "tf32" not in plain.read_text() and set(_precisions(tf32.read_text())) == {"tf32"}
    # nothing else changes but the default tile (CONFIG)
    assert re.sub(r"^CONFIG = .*$", "", plain.read_text().replace('"ieee"', '"tf32"'), flags=re.M) == \
        re.sub(r"^CONFIG = .*$", "", tf32.read_text(), flags=re.M)


def test_allow_tf32_on_the_cuda_target_says_so_and_changes_nothing(tmp_path, capsys):
    plain, asked = tmp_path / "plain.cu", tmp_path / "asked.cu"
    assert main(["optimize", MATMUL, "-D", "N=64", "--target", "cuda", "-o", str(plain)]) == 0
    capsys.readouterr()
    assert main(["optimize", MATMUL, "-D", "N=64", "--target", "cuda", "--allow-tf32", "-o", str(asked)]) == 0
    assert "--allow-tf32 applies to the triton target only" in capsys.readouterr().err
    assert plain.read_text() == asked.read_text()
    assert not re.search(r"tf32|wmma|mma\.sync", asked.read_text(), re.I)


def test_tune_options_allow_tf32_reach_the_tuned_modules_and_loosen_only_float32_checks():
    program = analyze(MATMUL, defines=("N=12",))
    target = make_target(program, TuneOptions(target="triton", allow_tf32=True, cache=None),
                         BuildConfig(defines=("N=12",), runs=1))
    assert all(set(_precisions(m.text)) == {"tf32"} for m in target.modules.values())
    runner = target.runner()
    try:
        assert runner.rtol == RTOL_TF32 and RTOL_TF32["f8"] == RTOL["f8"] and RTOL_TF32["f4"] > RTOL["f4"]
    finally:
        runner.close()
    plain = make_target(program, TuneOptions(target="triton", cache=None), BuildConfig(defines=("N=12",), runs=1))
    runner = plain.runner()
    try:
        assert runner.rtol == RTOL
    finally:
        runner.close()


def test_a_float32_contraction_defaults_to_a_library_tile_and_the_tuner_starts_there():
    program = analyze(MATMUL, defines=("N=12",))
    text = generate_triton(program, OptimizeOptions(target="triton"))
    cfg = _module_config(text)
    assert {k: cfg[k] for k in CONTRACTION_CONFIG["float"]} == CONTRACTION_CONFIG["float"]
    assert (cfg["BLOCK_X"], cfg["BLOCK_Y"], cfg["BLOCK_K"], cfg["num_warps"], cfg["num_stages"]) == (64, 64, 32, 4, 3)
    tf32 = _module_config(generate_triton(program, OptimizeOptions(target="triton", allow_tf32=True)))
    assert (tf32["BLOCK_X"], tf32["BLOCK_Y"], tf32["BLOCK_K"], tf32["num_warps"], tf32["num_stages"]) == \
        (128, 128, 32, 8, 3)
    target = TritonTarget(program, OptimizeOptions(target="triton"), BuildConfig(defines=("N=12",), runs=1))
    space = target.space()
    seed = dict(zip(space.names, target.named_seed(space, "pluto")))
    assert {k: seed[k] for k in ("BLOCK_X", "BLOCK_Y", "BLOCK_K", "num_warps", "num_stages")} == \
        CONTRACTION_CONFIG["float"]


def test_scalar_factors_of_a_contraction_scale_its_left_tile_not_a_second_product_tile():
    """PolyBench gemm's `alpha * A[i][k] * B[k][j]`: (alpha * A tile) then one dot into the accumulator, as C
    evaluates it left to right; no `acc + tl.dot(..) * alpha` (a second tile of registers)."""
    text = generate_triton(analyze(os.path.join(KERNELS, "gemm.c"), defines=("N=9",)), OptimizeOptions(target="triton"))
    assert re.search(r"^\s*(a\d+) = \1 \* \(alpha\)$", text, re.M)
    assert "tl.dot(" in text and not re.search(r"acc\d+ \+ tl\.dot", text)


def test_a_double_contraction_defaults_to_smaller_tiles():
    cfg = _module_config(generate_triton(analyze(os.path.join(KERNELS, "gemm.c"), defines=("N=9",)),
                                         OptimizeOptions(target="triton")))
    assert {k: cfg[k] for k in CONTRACTION_CONFIG["double"]} == CONTRACTION_CONFIG["double"]
    assert cfg["BLOCK_X"] * cfg["BLOCK_Y"] < 128 * 128


def test_kernels_without_a_contraction_keep_the_general_default():
    cfg = _module_config(generate_triton(analyze(os.path.join(GPU_DIR, "stencil2d_vanilla.c"), defines=("N=13",)),
                                         OptimizeOptions(target="triton")))
    assert cfg == DEFAULT_CONFIG


def test_contraction_candidates_tune_tiles_warps_and_pipeline_stages():
    dot = candidates(["BLOCK_X", "BLOCK_Y", "BLOCK_K", "num_warps", "num_stages"])
    shapes = {(c["BLOCK_Y"], c["BLOCK_X"], c["BLOCK_K"], c["num_warps"], c["num_stages"]) for c in dot}
    assert {(128, 128, 32, 8, 3), (128, 128, 32, 8, 4), (256, 128, 32, 8, 3)} <= shapes
    assert {c["num_stages"] for c in dot} >= {3, 4} and {c["num_warps"] for c in dot} == {4, 8}


def test_tf32_contraction_verifies_under_the_interpreter(tmp_path, monkeypatch):
    """The whole path with --allow-tf32: probe, run, check (the interpreter computes in float32, so this
    checks the plumbing; the GPU test below checks TF32's own rounding against the tolerance)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    program = analyze(MATMUL, defines=("N=20",))
    target = TritonTarget(program, OptimizeOptions(target="triton", allow_tf32=True),
                          BuildConfig(defines=("N=20",), runs=1))
    runner = target.runner()
    try:
        runner.reference()
        names = target.space().names
        config = tuple({"BLOCK_X": 16, "BLOCK_Y": 16, "BLOCK_K": 16, "num_warps": 4, "num_stages": 2}[n]
                       for n in names)
        m = runner.measure_fresh(config, names)
        assert m.ok, m.detail
    finally:
        runner.close()


def test_region_shares_split_a_cuda_region_into_copies_kernels_and_frees():
    parts = [[6.0, 1.0, 2.0, 1.0], [12.0, 2.0, 4.0, 2.0], [6.0, 1.0, 2.0, 1.0]]
    sh = region_shares(parts)
    assert sh["copies"] == pytest.approx(0.8) and sh["kernels"] == pytest.approx(0.1)
    assert sh["copies_in"] == pytest.approx(0.6) and sh["copies_out"] == pytest.approx(0.2)
    assert sh["region_ms"] == pytest.approx(10.0)
    assert region_shares([]) is None and region_shares([[]]) is None
    line, = region_share_lines({"region_shares": {"best": sh}})
    assert line.startswith("best's region in the program: 10.000 ms, copies 80.0%") and "kernels 10.0%" in line


@pytest.mark.gpu
def test_gpu_tf32_matmul_passes_its_check_and_differs_from_full_float32(tmp_path, monkeypatch):
    if not torch.cuda.is_available():
        pytest.skip("needs an NVIDIA GPU")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    program = analyze(MATMUL, defines=("N=512",))
    results = {}
    for tf32 in (False, True):
        target = TritonTarget(program, OptimizeOptions(target="triton", allow_tf32=tf32),
                              BuildConfig(defines=("N=512",), runs=1))
        runner = target.runner()
        try:
            runner.reference()
            names = target.space().names
            m = runner.measure_fresh(target.named_seed(target.space(), "pluto"), names)
            assert m.ok, m.detail
            results[tf32] = runner.live["C"].clone()
        finally:
            runner.close()
    assert not torch.equal(results[False], results[True])  # TF32 rounding shows: the tensor cores ran


def test_measurements_with_and_without_tf32_are_cached_apart():
    from polytune.measure.cache import workload_key
    program = analyze(MATMUL, defines=("N=12",))
    build = BuildConfig(defines=("N=12",), runs=1)
    keys = {workload_key(program, build, OptimizeOptions(target="triton", allow_tf32=tf32)) for tf32 in (False, True)}
    assert len(keys) == 2


def test_the_contraction_benchmark_prints_its_tables_from_a_record():
    import subprocess
    import sys
    record = os.path.join(ROOT, "benchmarks", "results", "gpu_contraction_h200_r1.json")
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "gpu_contraction.py"), "--from-json",
                           record], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| matmul N=2048 |")]
    assert len(rows) == 3  # float32, TF32, the CUDA program's copy share
    assert "0.860 (0.86-0.86)" in rows[0] and "92.4%" in rows[2]


@pytest.mark.slow
def test_the_contraction_benchmark_runs_tiny_sizes_under_the_interpreter(tmp_path):
    """--quick: matmul N=32 in both precisions, every configuration verified (no GPU: no torch ratio)."""
    import json
    import subprocess
    import sys
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "gpu_contraction.py"), "--quick",
                           "--polybench-kernels", "", "--cuda-runs", "0", "--json", str(out)],
                          capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, TRITON_INTERPRET="1", XDG_CACHE_HOME=str(tmp_path)))
    assert proc.returncode == 0, proc.stderr[-2000:]
    row, = json.loads(out.read_text())["rows"]
    assert set(row["precisions"]) == {"ieee", "tf32"} and "error" not in row
    assert all(c["ok"] for p in row["precisions"].values() for c in p["configs"])
