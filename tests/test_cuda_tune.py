"""Tuning the CUDA mapping without a GPU: the target's space (every dimension changes the emitted code), its
seed (the default mapping), limits rejected before running, and whole searches on the CPU through
tests/data/fake_nvcc.py (an nvcc that builds for tests/data/cuda_emu.h), with the tuned gain re-measured
in the program. Times on the emulator say nothing about a GPU: these tests check the plumbing."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
from conftest import ROOT, emu_header

import polytune.measure.cuda as measure_cuda
from polytune.emit.cuda import default_config
from polytune.measure.cuda import CudaBuildConfig, CudaRunner, program_gain
from polytune.measure.measurement import ErrorKind, Measurement
from polytune.pipeline import OptimizeOptions, analyze, generate_cuda
from polytune.steps import this_process
from polytune.targets.cuda import CudaTarget
from polytune.tune import TuneOptions, tune


def _server():
    """The time step's serving process of this process (its WorkerState's)."""
    return this_process().part(measure_cuda.Serving).server


GPU_DIR = os.path.join(ROOT, "benchmarks", "gpu")
FAKE_NVCC = os.path.join(ROOT, "tests", "data", "fake_nvcc.py")
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None or shutil.which("gcc") is None, reason="needs gcc, g++")


def _target(name: str, defines: tuple[str, ...], **build) -> CudaTarget:
    path = os.path.join(GPU_DIR, name + ".c")
    b = CudaBuildConfig(cc=FAKE_NVCC, cflags=("-O1",), defines=defines, runs=1, **build)
    return CudaTarget(analyze(path, defines=defines), OptimizeOptions(target="cuda"), b)


@pytest.fixture
def emulated_gpu(monkeypatch):
    monkeypatch.setattr(measure_cuda, "gpu_id", lambda: "emulated")
    emu_header()  # the fake nvcc's builds include its precompiled copy


@pytest.fixture
def reduction(emulated_gpu):
    """reduction_vanilla (N=20, M=30) on the emulator: its target, space, seed (by name) and a runner whose
    reference is measured (closed afterwards)."""
    from types import SimpleNamespace
    t = _target("reduction_vanilla", ("N=20", "M=30"))
    space = t.space()
    runner = CudaRunner(t.program, t.build)
    try:
        runner.reference()
        yield SimpleNamespace(target=t, space=space, seed=dict(zip(space.names, t.seed(space))), runner=runner)
    finally:
        runner.close()


@pytest.mark.parametrize("name,defines", [("matmul_vanilla", ("N=24",)), ("reduction_vanilla", ("N=24", "M=40"))])
def test_every_dimension_of_the_space_changes_the_emitted_code(name, defines):
    """(the reduction tile with every array staged: it strip-mines the loop for the shared tiles; runs of 4
    adjacent x points where a thread has 4 of them)"""
    t = _target(name, defines)
    space = t.space()
    for k, p in enumerate(space.params):
        seed = t.seed(space)
        if p.name == "reduction_tile":
            seed = tuple(1 if n.startswith("shared_") else v for n, v in zip(space.names, seed))
        if p.name == "vector_x":
            seed = tuple(4 if n == "points_x" else v for n, v in zip(space.names, seed))
        threads = seed[0] * (seed[1] if space.names[1] == "block_y" else 1)
        other = next(v for v in p.values if v != seed[k] and (p.name != "block_x" or threads // seed[0] * v <= 1024))
        config = seed[:k] + (other,) + seed[k + 1:]
        variant, base = t.variant(space.names, config), t.variant(space.names, seed)
        assert variant.text != base.text and variant.key != base.key, (p.name, other)


@needs_gxx
def test_fused_mappings_are_built_and_measured_on_their_own(emulated_gpu):
    """The fused schedule's flat mapping cannot run on the search's one flat build (PPCG's kernels): it is
    compiled like a tiled mapping and served with its block; both verified against the original."""
    t = _target("stencil3d_ns", ("N=13",))
    space = t.space()
    assert "fuse" in space.names
    seed = dict(zip(space.names, t.seed(space)))
    assert seed["fuse"] == 0
    runner = t.runner()
    try:
        runner.reference()
        for tiling in (1, 0):  # flat, then tiled
            config = tuple(dict(seed, fuse=1, tiling=tiling)[n] for n in space.names)
            variant = t.variant(space.names, config)
            assert variant.build.fuse and variant.build.flat == (tiling == 1)
            m = runner.measure(variant)
            assert m.ok, m.detail
        assert len(runner.builds) == 2  # one build each, none of them the shared flat build
    finally:
        runner.close()


@pytest.mark.parametrize("name", ["matmul_vanilla", "reduction_vanilla", "softmax", "stencil2d_vanilla",
                                  "stencil3d_ns"])
def test_seed_emits_exactly_the_default_mapping(name):
    t = _target(name, ("N=32",))
    space = t.space()
    assert t.variant(space.names, t.seed(space)).text == generate_cuda(t.program, OptimizeOptions(target="cuda"))


def test_seed_is_the_default_mapping():
    t = _target("matmul_vanilla", ("N=24",))
    space = t.space()
    default = default_config([(a.scop, a.gpu) for a in t.program.scops])
    assert dict(zip(space.names, t.seed(space))) == default
    assert {"block_x", "block_y", "points_x", "points_y", "reduction_tile", "shared_A", "shared_B",
            "registers", "tiling"} <= set(space.names)
    assert space.params[space.names.index("tiling")].categories == ("auto", "none", "all")


def test_limits_reject_a_configuration_before_it_is_compiled():
    t = _target("matmul_vanilla", ("N=256",))
    runner = CudaRunner(t.program, t.build)
    space = t.space()
    seed = dict(zip(space.names, t.seed(space)))
    try:
        for change, why in (({"block_x": 1024, "block_y": 64}, "threads"),
                            ({"block_x": 32, "block_y": 32, "points_x": 4, "points_y": 4, "reduction_tile": 64},
                             "shared-memory tiles"),
                            ({"block_x": 32, "block_y": 32, "points_x": 8, "points_y": 8, "shared_A": 0,
                              "shared_B": 0}, "registers")):
            config = tuple({**seed, **change}[n] for n in space.names)
            m = runner.measure(t.variant(space.names, config))
            assert m.error == ErrorKind.RESOURCES and why in m.detail, (change, m)
        assert runner.builds == {}  # nothing was compiled
    finally:
        runner.close()


@needs_gxx
def test_tune_on_the_emulator_searches_mappings_and_rechecks_the_gain_in_the_program(emulated_gpu):
    build = CudaBuildConfig(cc=FAKE_NVCC, cflags=("-O1",), defines=("N=20",), runs=1)
    r = tune(os.path.join(GPU_DIR, "matmul_vanilla.c"), TuneOptions(target="cuda", cache=None, max_evals=4, jobs=1),
             build)
    rep = r.report.to_json()
    names = [p["name"] for p in rep["space"]]
    assert dict(zip(names, rep["seed"]["config"]))["tiling"] == 0 and rep["seed"]["error"] is None
    kinds = {e["error"] for e in rep["evaluations"]}
    assert "wrong_answer" not in kinds and "runtime" not in kinds and "compile" not in kinds
    assert rep["gpu"]["mapping_builds"] >= 1
    if rep["best"]["config"] != rep["seed"]["config"]:
        g = rep["program_gain"]
        assert len(g["seed_region_ms"]) == len(g["best_region_ms"]) == CudaTarget.program_runs
        assert g["program_gain"] > 0 and g["verdict"] in ("holds", "does not hold", "undecided")
        assert g["kernel_gain"] == pytest.approx(rep["seed"]["median"] / rep["best"]["median"])
    assert rep["best_build"]["cuda_mapping"]["block"]
    assert "__global__" in r.best_text


@needs_gxx
def test_a_kernel_gain_the_program_does_not_show_is_reported(emulated_gpu):
    """The same mapping twice, with a search that claimed a 1000x gain: the program shows none (on a noisy
    machine, nothing near it), so the report says the gain does not hold and gives both numbers."""
    t = _target("matmul_vanilla", ("N=16",))
    mapping = t.mapping(t.space().names, t.seed(t.space()))
    seed_m = Measurement((0,), (1.0,))
    best_m = Measurement((1,), (0.001,))
    out, warnings = program_gain(t.program, t.build, mapping, mapping, seed_m, best_m, runs=3)
    assert out["kernel_gain"] == pytest.approx(1000.0) and out["program_gain"] < 100 and not out["holds"]
    assert len(out["seed_region_ms"]) == len(out["best_region_ms"]) == 3
    assert len(warnings) == 1 and "does not hold in the program" in warnings[0]
    for shares in (out["region_shares"]["seed"], out["region_shares"]["best"]):  # where the region's time goes
        assert shares["copies"] == pytest.approx(shares["copies_in"] + shares["copies_out"], abs=0.05)
        assert 0 < shares["region_ms"] and 0 <= shares["copies"] <= 1


@needs_gxx
def test_tuned_flat_mapping_reads_its_block_from_the_shared_build(reduction):
    t, space, seed, runner = reduction.target, reduction.space, reduction.seed, reduction.runner
    flat = tuple({**seed, "tiling": 1, "block_x": 64}[n] for n in space.names)
    m = runner.measure(t.variant(space.names, flat))
    assert m.ok and m.config == flat and runner.builds == {} and runner.exe is not None
    tiled = tuple({**seed, "block_x": 64}[n] for n in space.names)
    assert runner.measure(t.variant(space.names, tiled)).ok and len(runner.builds) == 1


def test_gain_check_confirms_refutes_or_leaves_undecided():
    from polytune.measure.cuda import gain_check
    rng = np.random.default_rng(1)
    sk, bk = [10.0] * 9, [5.0] * 9
    seed_r = list(100 + rng.normal(0, 0.2, 9))
    # the region loses the kernel's 5 ms: the predicted 100/95
    held = gain_check(sk, bk, seed_r, list(95 + rng.normal(0, 0.2, 9)))
    assert held["predicted_gain"] == pytest.approx(100 / 95, rel=1e-2) and held["verdict"] == "holds"
    assert held["kernel_share"] == pytest.approx(0.1, rel=1e-2)
    assert held["program_gain_low"] < held["program_gain"] < held["program_gain_high"]
    # the region does not change: the kernel gain does not reach the program
    assert gain_check(sk, bk, seed_r, list(100 + rng.normal(0, 0.2, 9)))["verdict"] == "does not hold"
    # region times that vary by 10%: nothing to conclude
    noisy = gain_check(sk, bk, list(100 + rng.normal(0, 10, 9)), list(95 + rng.normal(0, 10, 9)))
    assert noisy["verdict"] == "undecided"


def test_registers_from_ptxas_are_matched_to_their_kernel_by_mangled_name():
    from polytune.measure.cuda import kernel_registers_problem
    ptxas = {"_Z13pt_kernel0_10IPfEvT_ll": {"registers": 255, "spill": 0},
             "_Z12pt_kernel0_1IPfEvT_ll": {"registers": 32, "spill": 0}}
    assert kernel_registers_problem(ptxas, {"pt_kernel0_1": 1024}) == ""
    assert "pt_kernel0_10: 1024 threads x 255" in kernel_registers_problem(ptxas, {"pt_kernel0_10": 1024})


@needs_gxx
def test_tune_cli_writes_the_best_mapping_and_its_report(emulated_gpu, tmp_path):
    import json

    from polytune.cli import main
    rep, out = tmp_path / "r.json", tmp_path / "best.cu"
    assert main(["tune", os.path.join(GPU_DIR, "reduction_vanilla.c"), "-DN=16", "-DM=24", "--target", "cuda",
                 "--cc", FAKE_NVCC, "--no-cache", "--max-evals", "3", "--runs", "1", "--report", str(rep),
                 "-o", str(out)]) == 0
    r = json.loads(rep.read_text())
    assert r["target"] == "cuda" and r["best"]["median"] > 0 and "cuda_mapping" in r["best_build"]
    assert [p["name"] for p in r["space"]][-1] == "tiling" and "__global__" in out.read_text()


def _replayed_gpu_times(monkeypatch) -> None:
    """Keep every candidate's real build, run and check; replace its kernel times by a function of its
    configuration (a replay: the same times whatever ran when)."""
    import dataclasses
    real = measure_cuda.Server.measure

    def replay(self, config, block, compile_time, reference_dump):
        m = real(self, config, block, compile_time, reference_dump)
        if not m.ok:
            return m
        cost = sum((k + 1) * int(v) for k, v in enumerate(config)) % 7
        return dataclasses.replace(m, times=(1e-3 * (1 + cost),) * len(m.times))

    monkeypatch.setattr(measure_cuda.Server, "measure", replay)


@needs_gxx
def test_cuda_candidates_compile_on_workers_and_take_the_path_of_one_worker(emulated_gpu, monkeypatch):
    """--jobs 2: tiled mappings compile in worker processes while one candidate is timed, the flat ones run the
    one shared build; with replayed times the search ends where it ends measuring one candidate at a time."""
    import dataclasses
    _replayed_gpu_times(monkeypatch)
    path = os.path.join(GPU_DIR, "reduction_vanilla.c")
    build = CudaBuildConfig(cc=FAKE_NVCC, cflags=("-O1",), defines=("N=20", "M=30"), runs=1)
    opts = TuneOptions(target="cuda", cache=None, max_evals=6, alpha=None, confirm_runs=0, jobs=1)
    one = tune(path, opts, build)
    two = tune(path, dataclasses.replace(opts, jobs=2), build)
    assert [(r.config, r.measurement.value) for r in one.search.evaluations] == \
        [(r.config, r.measurement.value) for r in two.search.evaluations]
    assert one.best_config == two.best_config
    rep = two.report.to_json()
    assert rep["workers"]["jobs"] == 2 and rep["workers"]["quiet"] is False  # compiles go on while kernels run
    kinds = {e["error"] for e in rep["evaluations"]}
    assert not kinds & {"wrong_answer", "runtime", "compile"}
    measured = [e for e in rep["evaluations"] if e["error"] is None and e.get("same_as") is None]
    assert measured and all(e["extra"]["worker"].endswith("/timer") for e in measured)
    assert {e["extra"]["compiled_on"].rsplit("/", 1)[-1] for e in measured} <= {"c0", "c1"}
    assert rep["gpu"]["mapping_builds"] >= 1


@needs_gxx
def test_cuda_compile_and_time_steps_verify_and_reuse_the_serving_process(reduction):
    """The two steps as a worker runs them: the job pickles; a flat candidate compiles nothing (the runner's
    shared build), a tiled one gets its own build; a block over the limits is rejected before anything runs;
    the time step checks the results (a wrong reference is a wrong answer) and keeps one serving process
    while the candidates run one build."""
    import pickle

    from polytune.measure.c import Reference
    from polytune.workers import Done
    t, space, seed, runner = reduction.target, reduction.space, reduction.seed, reduction.runner
    ref = runner.reference_data()

    def compiled(**change):
        job = runner.job(t.variant(space.names, tuple({**seed, **change}[n] for n in space.names)))
        return measure_cuda.compile_mapping(pickle.loads(pickle.dumps(job)))

    flat64, flat128 = compiled(tiling=1, block_x=64), compiled(tiling=1, block_x=128)
    assert flat64.exe == flat128.exe and flat64.digest == flat128.digest and flat64.block[0] == 64
    assert runner.builds == {} and runner.exe is not None  # compiled once, by the runner
    m = measure_cuda.time_mapping(ref, None, flat64)
    server = _server()
    assert m.ok and m.config == flat64.config
    assert measure_cuda.time_mapping(ref, None, flat128).ok and _server() is server
    tiled = compiled(block_x=64)
    assert tiled.digest != flat64.digest and runner.mapping_builds == 1
    assert measure_cuda.time_mapping(ref, None, tiled).ok and _server() is not server
    wrong = Reference(ref.dump + 1.0, None, None, ref.build)
    assert measure_cuda.time_mapping(wrong, None, tiled).error == ErrorKind.WRONG_ANSWER
    too_big = compiled(tiling=1, block_x=2048)  # (over 1024 threads a block)
    assert isinstance(too_big, Done) and too_big.value.error == ErrorKind.RESOURCES
    runner.close()
    assert _server() is None  # closing the runner stops the time step's serving process


@needs_gxx
def test_a_cuda_timing_runs_its_kernels_only_while_no_other_tune_on_the_machine_times(reduction):
    """The time step takes the machine-wide timer lock around its kernels (not around the serving process's
    start or the check): while another tune holds it, the kernels wait."""
    import fcntl
    import threading

    from polytune.steps import default_lock_path
    t, space, runner = reduction.target, reduction.space, reduction.runner
    compiled = measure_cuda.compile_mapping(runner.job(t.variant(space.names, t.seed(space))))
    done: list = []
    fd = os.open(default_lock_path(), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another tune times
        worker = threading.Thread(target=lambda: done.append(
            measure_cuda.time_mapping(runner.reference_data(), None, compiled)))
        worker.start()
        worker.join(1.0)
        assert not done and _server() is not None  # started, waiting for the lock
    finally:
        os.close(fd)  # (releases the lock)
    worker.join(60)
    assert done and done[0].ok


@needs_gxx
def test_gpu_workers_benchmark_runs_both_modes_on_the_emulator(tmp_path):
    """benchmarks/gpu_workers.py --quick: both modes tune the same random sample, the table compares them."""
    import json
    import subprocess
    import sys
    out = tmp_path / "gw.json"
    cmd = [sys.executable, os.path.join(ROOT, "benchmarks", "gpu_workers.py"), "--quick", "--kernels",
           "reduction_vanilla", "--jobs", "2", "--max-evals", "3", "--side-rounds", "1", "--out", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr[-2000:]
    k = json.loads(out.read_text())["kernels"][0]
    assert [m["jobs"] for m in k["modes"].values()] == [1, 2]
    assert k["modes"]["one"]["evals"] == k["modes"]["jobs"]["evals"] == 3
    assert k["summary"]["wall_s_ratio"] > 0 and k["summary"]["same_best"] != "not measured"
    assert "one/jobs wall" in r.stdout


def test_gpu_timings_lock_the_machine_unless_the_process_was_given_its_own_gpus():
    from polytune.measure.cuda import gpu_lock_path
    from polytune.steps import default_lock_path
    assert gpu_lock_path("") == default_lock_path()
    assert gpu_lock_path("1") != gpu_lock_path("0") != default_lock_path()
    assert gpu_lock_path("0").startswith(default_lock_path()[:-len(".lock")])


def test_one_program_run_slowed_by_something_else_does_not_move_the_gain_check():
    """(A run 4x slower, as when the machine is busy for a moment: the old mean of logarithms called this
    undecided.) The Hodges-Lehmann shift and its rank interval hardly move."""
    from polytune.measure.cuda import gain_check
    rng = np.random.default_rng(2)
    seed_r, best_r = list(100 + rng.normal(0, 0.2, 9)), list(95 + rng.normal(0, 0.2, 9))
    calm = gain_check([10.0] * 9, [5.0] * 9, seed_r, best_r)
    busy = gain_check([10.0] * 9, [5.0] * 9, seed_r, best_r[:-1] + [400.0])
    assert calm["verdict"] == busy["verdict"] == "holds"
    assert busy["program_gain"] == pytest.approx(calm["program_gain"], rel=2e-3)


def test_shift_interval_is_the_hodges_lehmann_estimate_with_its_exact_rank_interval():
    from polytune.stats import shift_interval
    a, b = [float(x) for x in range(10, 19)], [float(x) for x in range(9)]
    low, est, high = shift_interval(a, b)
    diffs = sorted(x - y for x in a for y in b)
    assert est == 10.0 and (low, high) == (diffs[17], diffs[63])  # n = m = 9: U <= 17 has P 0.020 <= 0.025
    assert shift_interval([1.0, 2.0], [1.0, 2.0])[0] == -float("inf")  # too few runs for 95%


def test_the_seed_is_kept_where_the_bests_program_is_slower_over_the_whole_interval(monkeypatch):
    import polytune.targets.cuda as target_cuda
    t = _target("matmul_vanilla", ("N=16",))
    seed_m, best_m = Measurement((0,), (2.0,)), Measurement((1,), (1.0,))

    class Runner:
        def stop(self):
            pass

    for interval, kept in (((0.70, 0.90), seed_m), ((0.90, 1.10), best_m), ((1.05, 1.20), best_m)):
        gain = sum(interval) / 2
        monkeypatch.setattr(target_cuda, "program_gain", lambda *a, g=gain, i=interval: (
            {"program_gain": g, "program_gain_interval": i}, []))
        monkeypatch.setattr(CudaTarget, "mapping", lambda self, names, config: None)
        info, warnings, chosen = t.confirm_best(Runner(), seed_m, best_m, ("block_x",), {}, 3)
        assert chosen is kept, interval
        assert (info.get("kept") == "seed") == (kept is seed_m)
        assert any("kept the seed" in w for w in warnings) == (kept is seed_m)
