from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The tests' sizes are small: without this, the branch to a serial copy (poly/parallel.py: PARALLEL_WORK)
# would run their parallel loops serially, and the parallel code would go untested. Subprocesses inherit it.
os.environ.setdefault("POLYTUNE_PARALLEL_WORK", "0")
os.environ.setdefault("POLYTUNE_PACK_WORK", "0")  # small products still run the packed code (emit/blis.py)
# and so are their contractions: packed blocks even where the three matrices fit in L1 (poly/contraction.py)
os.environ.setdefault("POLYTUNE_BLOCK_MIN_BYTES", "0")
KERNELS = os.path.join(ROOT, "benchmarks", "pluto")
# How the CPU emulation of generated CUDA (tests/data/cuda_emu.h) is compiled. -fno-ivopts: gcc 12.2's
# induction-variable optimization miscompiles some kernels' loops on the host at -O1
# (tests/data/gcc12_ivopts_wrong_code.c, from random program 82153; again random program 1845's kernels,
# whose emulation printed wrong values at -O1 and the right ones at -O0 or with -fno-ivopts).
EMU_CXXFLAGS = ("-O1", "-fno-ivopts", "-w")  # (tests/data/fake_nvcc.py compiles with the same)
# Small sizes: every kernel runs in milliseconds; not powers of two on purpose.
SMALL = ["-DN=13", "-DTSTEPS=3", "-DNC=3", "-DD=7"]


def compile_run(src: str, exe: str, flags: list[str], openmp: bool, threads: int = 2,
                env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> str:
    """*src* built with gcc -O2 into *exe* and run on *threads* OpenMP threads (more variables: *env*; its
    arguments: *args*): its output. A build of the same file, flags and inputs earlier in this process is
    reused (copied to *exe*) instead of compiled again."""
    cmd = ["gcc", "-O2", *(["-fopenmp"] if openmp else []), *flags, src, "-o", exe, "-lm"]
    key = _build_key(src, cmd[:-3])
    if key in _BUILT:
        shutil.copy2(_BUILT[key], exe)
    else:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        _BUILT[key] = os.path.join(_built_dir(), f"{len(_BUILT)}.exe")
        shutil.copy2(exe, _BUILT[key])
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), **(env or {}))
    return subprocess.run([exe, *args], check=True, capture_output=True, text=True, env=env, timeout=60).stdout


def representatives(params, keep, ids=None) -> list:
    """A parametrized sweep for the default suite (docs/DESIGN.md, "Tests: what the default suite is for"): the
    parameters named in *keep* stay in it, every other one is marked slow (CI's slow line runs them).
    *params*: pytest.param objects, tuples (the values of several argnames) or single values; a parameter is
    named by its own id, else ids[k] where *ids* is given, else str() of its (first) value; the ids pytest
    gives are unchanged. A name in *keep* that names no parameter is an error."""
    out, seen = [], set()
    for k, p in enumerate(params):
        if isinstance(p, type(pytest.param(0))):
            values, marks, pid = p.values, tuple(p.marks), p.id
        else:
            values, marks, pid = (p if isinstance(p, tuple) else (p,)), (), None
        pid = pid if pid is not None else ids[k] if ids is not None else None
        name = pid if pid is not None else str(values[0])
        seen.add(name)
        out.append(pytest.param(*values, marks=marks if name in keep else (*marks, pytest.mark.slow), id=pid))
    assert set(keep) <= seen, f"representatives that name no parameter: {sorted(set(keep) - seen)}"
    return out


_BUILT: dict[tuple, str] = {}  # build key -> a private copy of the executable


def _built_dir() -> str:
    if not hasattr(_built_dir, "path"):
        _built_dir.path = tempfile.mkdtemp(prefix="polytune-test-builds-")
        atexit.register(shutil.rmtree, _built_dir.path, True)
    return _built_dir.path


_SOURCE_SUFFIXES = (".h", ".hh", ".hpp", ".inc", ".def", ".c", ".cc", ".cpp", ".cu")


def _build_key(src: str, cmd: list[str]) -> tuple:
    """What a build's result depends on: the command, the source's path and bytes, and the name and bytes of
    every source or header file in the directories its includes can come from (its own and each -I;
    executables written there do not count)."""
    src = os.path.abspath(src)
    dirs = [os.path.dirname(src)]
    for k, f in enumerate(cmd):
        if f == "-I" and k + 1 < len(cmd):
            dirs.append(os.path.abspath(cmd[k + 1]))
        elif f.startswith("-I") and len(f) > 2:
            dirs.append(os.path.abspath(f[2:]))
    listing = []
    for d in dirs:
        with os.scandir(d) as entries:
            listing.append(sorted((e.name, _digest(e.path)) for e in entries
                                  if e.name.endswith(_SOURCE_SUFFIXES) and e.is_file()))
    return (tuple(cmd), src, _digest(src), repr(listing))


def _digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# The matrix product the tuner's tests tune (tests/test_tune*.py): N is 24 unless -DN gives another size (a
# tune's --confirm-define), and main prints one element of C.
MATMUL_TUNE = """#include <stdio.h>
#ifndef N
#define N 24
#endif
double A[N][N], B[N][N], C[N][N];
int main(void) {
  int i, j, k;
  for (i = 0; i < N; i++) for (j = 0; j < N; j++) { A[i][j] = (i * j % 7) / 7.0; B[i][j] = (i + j) % 5; C[i][j] = 0; }
#pragma scop
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      for (k = 0; k < N; k++)
        C[i][j] += A[i][k] * B[k][j];
#pragma endscop
  printf("%f\\n", C[3][4]);
  return 0;
}
"""


def write_matmul(directory, timed: bool = False) -> str:
    """MATMUL_TUNE written to DIRECTORY/mm.c: its path. TIMED: the program also prints a 'time: SECONDS' line
    (the region's wall time), the line `bench` reads."""
    path = os.path.join(str(directory), "mm.c")
    text = MATMUL_TUNE
    if timed:
        text = ("#define _POSIX_C_SOURCE 199309L\n#include <time.h>\n" + text
                .replace("#pragma scop",
                         "struct timespec t0, t1;\n  clock_gettime(CLOCK_MONOTONIC, &t0);\n#pragma scop")
                .replace("#pragma endscop", "#pragma endscop\n  clock_gettime(CLOCK_MONOTONIC, &t1);")
                .replace('printf("%f\\n", C[3][4]);',
                         'printf("time: %.9f\\n%f\\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec), '
                         'C[3][4]);'))
    with open(path, "w") as f:
        f.write(text)
    return path


def synthetic_times(monkeypatch) -> None:
    """Keep the real build, run and verification of every candidate; replace its times by a surface of the
    tile sizes whose minimum is at (8, 16, 4) (optimize's default, no configuration: cost 0). A replay: the
    same times whatever ran when."""
    import dataclasses

    from polytune.measure import c as measure
    real = measure._verify_and_time

    def replay(ref, config, exe, ct, bound, cwd):
        m = real(ref, config, exe, ct, None, cwd)
        if not m.ok:
            return m
        cost = sum(abs(v.bit_length() - w.bit_length()) for v, w in zip(config, (8, 16, 4)))
        return dataclasses.replace(m, times=(1e-3 * (1 + cost),) * ref.build.runs)

    monkeypatch.setattr(measure, "_verify_and_time", replay)


def run_source(source: str, directory, name: str, openmp: bool = True) -> str:
    """The output of C *source*, written to DIRECTORY/NAME.c and built by compile_run (gcc -O2)."""
    src = os.path.join(str(directory), f"{name}.c")
    with open(src, "w") as f:
        f.write(source)
    return compile_run(src, os.path.join(str(directory), name), [], openmp)


def checksum_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("checksum"))


def checksums_before_and_after(source: str, directory, args: list[str]) -> tuple[str, str]:
    """The checksum lines of C *source* as it is (no OpenMP) and of `polytune optimize ARGS`'s output
    (with OpenMP), both written to and built in *directory*."""
    from polytune.cli import main
    src, out = os.path.join(str(directory), "src.c"), os.path.join(str(directory), "src.opt.c")
    with open(src, "w") as f:
        f.write(source)
    assert main(["optimize", src, "-o", out, *args]) == 0
    want = compile_run(src, os.path.join(str(directory), "ref"), [], openmp=False)
    got = compile_run(out, os.path.join(str(directory), "opt"), [], openmp=True)
    return checksum_line(want), checksum_line(got)


def emu_header() -> str:
    """tests/data/cuda_emu.h, copied for this process with a precompiled header beside it, built with the
    options the tests build the emulated programs with (EMU_CXXFLAGS): a build that includes it first does not
    parse the C++ library headers again. g++ reads the header itself wherever the options differ."""
    if not hasattr(emu_header, "path"):
        d = tempfile.mkdtemp(prefix="polytune-test-emu-")
        atexit.register(shutil.rmtree, d, True)
        path = os.path.join(d, "cuda_emu.h")
        shutil.copyfile(os.path.join(ROOT, "tests", "data", "cuda_emu.h"), path)
        if shutil.which("g++") is not None:
            subprocess.run(["g++", *EMU_CXXFLAGS, "-x", "c++-header", path, "-o", path + ".gch"], capture_output=True)
        emu_header.path = path
        os.environ["POLYTUNE_TEST_EMU_HEADER"] = path  # what tests/data/fake_nvcc.py includes, where set
    return emu_header.path


@pytest.fixture(autouse=True, scope="session")
def _need_gcc():
    if shutil.which("gcc") is None:
        pytest.skip("gcc is required")


class TritonHarness:
    """The Triton target's runner driven as the tuner drives it: each configuration's variant from the
    target, a configuration that runs the same code as one measured before answered by Memo (same_as)."""

    def __init__(self, program, build, runs: int = 5):
        import dataclasses

        from polytune.measure import Memo
        from polytune.pipeline import OptimizeOptions
        from polytune.targets.triton import TritonTarget
        self.target = TritonTarget(program, OptimizeOptions(target="triton"), dataclasses.replace(build, runs=runs))
        self.runner = self.target.runner()
        self.memo = Memo(self.runner)

    def __getattr__(self, name):  # the runner's state (mods, text, resources, ...)
        if name in ("runner", "target", "memo"):
            raise AttributeError(name)
        return getattr(self.runner, name)

    def measure_reference(self):
        return self.runner.reference()

    def measure(self, config, names):
        return self.memo.measure(self.target.variant(tuple(names), tuple(config)))

    def close(self) -> None:
        self.runner.close()


@pytest.fixture
def tiled_as_any_band(monkeypatch):
    """For the tests of the tuner's mechanics on a space of tile sizes (their pytestmark): the small matmul's
    band is tiled, not packed as a contraction (its block coordinates: tests/test_contraction.py), as
    optimize does where its matrices fit in half of L1 (this file sets 0 for the other tests, so that their
    small products are packed)."""
    import multiprocessing.forkserver as forkserver
    monkeypatch.setenv("POLYTUNE_BLOCK_MIN_BYTES", str(1 << 40))
    # the pools' workers fork from a server started with the environment of its time: restart it, so that
    # they see this one, and again afterwards
    forkserver._forkserver._stop()
    yield
    monkeypatch.undo()
    forkserver._forkserver._stop()


# The default suite's cut (docs/DESIGN.md, "Tests: what the default suite is for"): test functions of an area's
# end-to-end checks whose parameters past the representatives kept here are marked slow at collection (an empty
# set: the whole test is slow). Keys are test functions' node ids; kept ids are fnmatch patterns of a parameter's
# id. Each kept case is the cheapest of its kind in the durations of 2026-12-05 (main 83b1ec6); every cut one runs
# on CI's slow lines (tests/suite_layout.py checks it). A key or pattern that names nothing collected is an error.
CUT: dict[str, set[str]] = {
    # C: one unseen kernel per pattern (wavefront, contraction at an odd size, a batch of small products)
    "tests/test_unseen.py::test_an_unseen_kernel_prints_the_originals_checksum":
        {"lcs-16,8,16,8", "gemm_odd-32", "batched_small_gemm-32"},
    # every alternative schedule on one kernel (syrk: a triangular update)
    "tests/test_schedule_choice.py::test_alternative_gives_the_original_results": {"*-syrk"},
    "tests/test_polybench.py::test_polybench_optimized_output_is_identical":
        {"doitgen-default", "jacobi-1d-default", "syrk-default", "trisolv-default"},
    "tests/test_pipeline.py::test_kernel_outer_schedule": {"mvt", "matmul", "fdtd-2d", "seidel-2d"},
    "tests/test_bad_input.py::test_valid_input_same_output":
        {"*-default", "triangular-small-tiles", "names-small-tiles", "div_bounds-small-tiles",
         "continue_guard-small-tiles", "indented_pragmas-small-tiles"},
    "tests/test_bad_input.py::test_outside_of_regions_preserved":  # all but math_sqrt, scalar_temp, nonmain_func
        {"c99_for", "continue_guard", "decreasing", "div_bounds", "floordiv", "formfeed", "if_else", "indented_pragmas",
         "macro_clash", "macros", "names", "not_equal_cond", "stride2", "struct_member_read_once", "triangular",
         "two_regions", "typedef_cast"},
    "tests/test_bad_input.py::test_outside_preserved_odd_text": {"crlf", "no-final-newline", "tabs"},
    "tests/test_rewrite_sources.py::test_a_rewritten_nest_gives_the_original_results":
        {"product-pragma", "product-found", "openmp-found"},
    "tests/test_one_thread.py::test_a_wavefront_region_has_a_version_for_one_thread_with_the_same_results": {"lcs"},
    "tests/test_fp_contract.py::test_results_are_bit_identical_without_fp_contraction": {"--no-parallel"},
    "tests/test_int_types.py::test_iterators_compute_in_their_declared_types": {"*---tile-sizes 2,7,3,5"},
    "tests/test_int_types.py::test_issue_33_integer_programs_print_what_the_original_prints": {"*-default"},
    "tests/test_reliability_options.py::test_zero_trip_scalar_keeps_its_value_under_more_options":
        {"*---tile-sizes 2,7,3,5"},
    "tests/test_crlf.py::test_crlf_input_gives_crlf_output_under_each_option": {"default", "--tile-sizes 2,7,3,5"},
    "tests/test_parallel_work.py::test_branch_keeps_the_original_results": {"16384-jacobi-1d-None", "40-doitgen-None"},
    "tests/test_chains_jam.py::test_jammed_rows_print_what_the_original_prints": {"37-4", "1-2"},
    "tests/test_jam_order.py::test_the_jammed_order_prints_what_the_original_prints": {"sizes3"},
    "tests/test_contraction.py::test_random_contraction_prints_what_the_original_prints": {"1", "4", "9"},
    "tests/test_fission.py::test_the_split_band_prints_what_the_original_prints": {"33-2"},
    "tests/test_expand.py::test_polybench_scalars_are_expanded_or_private_and_the_output_is_identical": set(),
    "tests/test_expand.py::test_ludcmp_w_has_four_webs_and_only_the_lu_nest_is_expanded": set(),
    "tests/test_newcomer.py::test_skewed_and_repeated_loops_get_distinct_names": set(),
    "tests/test_newcomer.py::test_cpu_path_runs_without_the_extras": set(),
    "tests/test_isl_lock.py::test_two_threads_generate_what_one_after_the_other_does": set(),
    "tests/test_readme_samples.py::test_the_readme_samples_are_current": set(),
    # issue 33's reproduction 4: the default suite runs it under the default options and odd tiles
    "tests/test_reliability_codegen.py::test_the_wavefront_ast_of_repro_4_is_found_to_lose_instances_and_its_note_says_so":
        set(),
    "tests/test_reliability_codegen.py::test_repro_4_gives_the_original_results_with_tiles_2_3_5_7": set(),
    "tests/test_reliability_codegen.py::test_repro_4_gives_the_original_results_under_each_option":
        {"default", "--tile-sizes*"},
    "tests/test_reliability_codegen.py::test_every_printed_version_of_a_region_gives_the_original_results":
        {"seidel-0", "rows-0"},
    # the generators: a few seeds each (their long runs: CI's slow lines and by hand)
    "tests/test_random_programs.py::test_random_program_same_output": {"1", "2", "8"},
    "tests/test_random_programs.py::test_random_integer_program_same_output": {"0", "2"},
    "tests/test_random_programs.py::test_random_programs_that_found_a_bug": {"83098"},
    "tests/test_random_programs.py::test_random_integer_programs_that_found_a_bug": set(),
    "tests/test_random_guarded.py::test_guarded_program_same_output": set(),  # (its bug's seed 11 stays)
    "tests/test_random_flat.py::test_flattened_random_program_same_output": {"2", "1"},
    # CUDA: one emulation per mapping, one nvcc build per kind
    "tests/test_cuda.py::test_cuda_output_emulated_on_cpu_matches": {"None-[!sm]*", "None-softmax", "None-maxpool"},
    "tests/test_cuda.py::test_nvcc_compiles_generated_cuda": {"reduction_vanilla"},
    "tests/test_cuda_mappings.py::test_the_fused_schedule_runs_the_three_flux_statements_in_one_kernel": set(),
    "tests/test_cuda_mappings.py::test_mvt_fused_reads_its_matrix_by_rows_and_by_columns_in_one_kernel": {"mapping0"},
    "tests/test_cuda_mappings.py::test_row_reductions_shared_by_a_warp": {"block2-*"},
    "tests/test_cuda_mappings.py::test_triangular_domain_with_shared_tiles_and_registers": {"mapping2"},
    "tests/test_cuda_mappings.py::test_pluto_kernels_with_every_array_staged": {"mvt", "matmul"},
    "tests/test_cuda_mappings.py::test_matmul_mapping_with_partial_tiles": {"mapping2", "mapping3"},
    "tests/test_cuda_mappings.py::test_nvcc_compiles_tiled_tuning_builds": set(),  # (test_cuda's nvcc build stays)
    "tests/test_cuda_mappings.py::test_full_tiles_run_unchecked_and_partial_tiles_keep_their_checks": {"mapping3-10"},
    "tests/test_cuda_mappings.py::test_a_threads_points_in_runs_of_adjacent_columns_compute_the_same_product":
        {"mapping0-32"},
    "tests/test_cuda_mappings.py::test_a_tile_printed_in_several_copies_stores_only_what_each_copy_holds":
        {"mapping0"},
    "tests/test_gpu_benchmarks.py::test_gpu_benchmark_optimized_matches":
        {"reduction_vanilla", "matmul_vanilla", "stencil2d_interchange"},
    "tests/test_generated_regressions.py::test_generated_program_cuda_output_emulated_matches": {"10286"},
    "tests/test_conditionals.py::test_triton_prints_conditional_subscripts": {"bits_1d"},
    "tests/test_conditionals.py::test_cuda_prints_conditional_subscripts": {"bits_1d"},
    "tests/test_pblayout.py::test_pblayout_kernel_tuned": set(),
    # Triton under the interpreter: one kernel per kind
    "tests/test_triton.py::test_triton_matches_the_original": {"matmul_vanilla", "reduction_vanilla",
                                                               "stencil2d_vanilla"},
    "tests/test_triton.py::test_whole_tiles_load_their_dot_blocks_without_masks": set(),
    "tests/test_triton.py::test_a_compile_workers_module_directory_is_removed_when_the_worker_ends": {"forkserver"},
    "tests/test_triton.py::test_tune_triton_jobs_2_measures_algorithm_9_1s_candidates_on_the_workers": set(),
    # tuning: one tune per way of measuring (serial, local pool, replayed), per target
    "tests/test_tune_jobs.py::test_tune_measures_its_incumbent_again_before_stopping_with_and_without_the_pool":
        set(),
    "tests/test_tune_jobs.py::test_a_script_that_tunes_unguarded_gets_one_line_saying_why_instead_of_a_hang": set(),
    "tests/test_tune.py::test_cli_tune_outer_schedule": set(),
    "tests/test_tune.py::test_cli_tune_auto_schedule": set(),
    "tests/test_tune.py::test_cli_tune_unroll_jam": set(),
    "tests/test_tune.py::test_the_report_records_the_margin_of_the_move_test_the_search_ran": {"hill*"},
    "tests/test_cuda_tune.py::test_cuda_candidates_compile_on_workers_and_take_the_path_of_one_worker": set(),
    "tests/test_cuda_tune.py::test_gpu_workers_benchmark_runs_both_modes_on_the_emulator": set(),
    "tests/test_cuda_tune.py::test_fused_mappings_are_built_and_measured_on_their_own": set(),
    "tests/test_cuda_tune.py::test_tune_cli_writes_the_best_mapping_and_its_report": set(),
    "tests/test_cuda_tune.py::test_every_dimension_of_the_space_changes_the_emitted_code": {"reduction_vanilla*"},
    "tests/test_cuda_tune.py::test_seed_emits_exactly_the_default_mapping": {"[!s]*", "stencil2d*"},
    "tests/test_tune_schedule_space.py::test_every_coordinate_value_gives_a_verified_variant": set(),
    "tests/test_tune_schedule_space.py::test_the_default_start_is_the_program_optimize_emits": {"atax"},
    "tests/test_tune_schedule_space.py::test_a_compile_worker_builds_the_program_the_driver_would": set(),
    "tests/test_cli_conventions.py::test_quiet_tune_prints_warnings_and_the_summary_but_no_progress_nor_its_legend":
        set(),
    "tests/test_bench.py::test_bench_tunes_its_kernels_at_once_then_times_each_in_its_session": set(),
}


# Tests over 2.5 s in the durations of 2026-12-05 (main 83b1ec6, `pytest --durations=0` on the loaded dev box:
# about 1.3 s idle; the figure after each) that are no area's representative: slow (CI's slow lines run them).
SLOW_CASES: set[str] = {
    "tests/test_bad_input.py::test_valid_input_same_output[scalar_temp-default]",  # 6.3
    "tests/test_bad_input.py::test_valid_input_same_output[nonmain_func-default]",  # 3.7
    "tests/test_ast_quota.py::test_without_separation_drops_every_separate_option_and_keeps_the_schedule",  # 3.1
    "tests/test_bench.py::test_bench_end_to_end_with_a_missing_compiler",  # 7.0
    "tests/test_bench.py::test_bench_with_clang_and_polly",  # 6.8
    "tests/test_bench.py::test_every_research_question_has_a_section",  # 5.8
    "tests/test_bench.py::test_reproduce_regenerates_the_document",  # 5.7
    "tests/test_bench.py::test_tune_plot",  # 5.0
    "tests/test_bench_timer.py::test_bench_that_timed_no_variant_exits_nonzero_with_one_line_saying_why",  # 2.5
    "tests/test_bench_timer.py::test_tune_that_timed_no_variant_exits_nonzero_with_one_line_saying_why",  # 4.9
    "tests/test_benchmark_scripts.py::"
    "test_run_cpu_times_another_checkouts_output_beside_this_trees_and_compares_checksums",
    "tests/test_benchmark_scripts.py::test_run_cpu_times_plutos_output_where_the_directory_has_it",  # 6.7
    "tests/test_benchmark_scripts.py::"
    "test_the_modes_different_bests_are_built_and_timed_side_by_side_against_the_fastest",
    "tests/test_bounded_time.py::test_each_quota_has_a_correct_fallback_and_a_note[memory-based]",  # 5.8
    "tests/test_cli_conventions.py::test_extra_tile_sizes_are_warned_about",  # 7.9
    "tests/test_cli_conventions.py::test_python_dash_m_polytune_cli_runs_the_command",  # 3.5
    "tests/test_cli_conventions.py::test_quiet_leaves_out_notes_and_verbose_is_accepted_everywhere",  # 3.1
    "tests/test_conditionals.py::test_periodic_stencil_optimized_is_identical[periodic_3d-default]",  # 6.1
    "tests/test_conditionals.py::test_periodic_subscript_is_one_piecewise_access",  # 3.8
    "tests/test_contraction.py::test_blocks_parse_and_off_leaves_the_band_to_the_tiler",  # 2.5
    "tests/test_contraction.py::test_fma_contraction_keeps_the_original_results[batched_small_gemm]",  # 2.9
    "tests/test_corpus_unsigned.py::test_unsigned_program_computes_what_the_original_does[options0]",  # 3.6
    "tests/test_corpus_unsigned.py::test_unsigned_program_computes_what_the_original_does[options1]",  # 3.5
    "tests/test_corpus_unsigned.py::test_unsigned_program_computes_what_the_original_does[options2]",  # 3.5
    "tests/test_cuda_mappings.py::test_a_full_tile_is_checked_where_isl_left_part_of_its_condition_to_the_point_loop",
    "tests/test_cuda_mappings.py::test_default_leaves_flat_a_reduction_whose_result_cannot_live_in_registers[None]",
    "tests/test_cuda_mappings.py::test_default_leaves_flat_a_reduction_whose_result_cannot_live_in_registers[mapping1]",
    "tests/test_cuda_mappings.py::test_shared_tiles_over_the_limit_are_rejected_before_running",  # 3.0
    "tests/test_cuda_mappings.py::test_the_default_mapping_on_a_users_block_fits_the_device",  # 5.7
    "tests/test_cuda_mappings.py::test_the_emulation_is_built_without_the_host_compilers_wrong_induction_variables",
    "tests/test_cuda_tune.py::test_a_cuda_timing_runs_its_kernels_only_while_no_other_tune_on_the_machine_times",  # 2.8
    "tests/test_cuda_tune.py::test_a_kernel_gain_the_program_does_not_show_is_reported",  # 3.8
    "tests/test_cuda_tune.py::test_tune_on_the_emulator_searches_mappings_and_rechecks_the_gain_in_the_program",  # 13.4
    "tests/test_cuda_tune.py::test_tuned_flat_mapping_reads_its_block_from_the_shared_build",  # 2.9
    "tests/test_delinearize.py::test_flat_array_read_by_a_condition_of_two_statements",  # 2.6
    "tests/test_detect.py::test_a_file_without_pragmas_has_its_loop_nests_found_and_optimized",  # 3.1
    "tests/test_detect.py::test_auto_also_finds_the_nests_outside_the_pragma_regions",  # 3.2
    "tests/test_detect.py::test_each_nest_not_taken_is_a_missed_remark_with_its_reason_at_its_line",  # 2.7
    "tests/test_detect.py::test_found_regions_give_the_original_results_under_other_options[--no-parallel]",  # 3.0
    "tests/test_detect.py::test_found_regions_give_the_original_results_under_other_options[--no-tile]",  # 2.6
    "tests/test_detect.py::test_found_regions_give_the_original_results_under_other_options[--schedule outer]",  # 3.1
    "tests/test_detect.py::test_found_regions_give_the_original_results_under_other_options[default]",  # 3.0
    "tests/test_detect.py::test_the_inner_loops_of_a_refused_nest_are_remarked_once_for_the_same_reason",  # 3.1
    "tests/test_expand.py::test_parametric_size_is_expanded_when_an_array_has_an_element_per_index",  # 5.3
    "tests/test_expand.py::test_size_limit_falls_back_to_no_expansion",  # 2.7
    "tests/test_files.py::test_ctrl_c_during_a_bench_prints_and_writes_the_kernels_done_and_one_line",  # 7.3
    "tests/test_fission.py::test_no_split_without_unroll_and_jam",  # 5.9
    "tests/test_fission.py::test_sums_and_updates_in_one_band_become_one_band_each_and_the_sums_are_jammed",  # 5.4
    "tests/test_generated_regressions.py::test_lastprivate_scalar_written_under_a_guard_keeps_the_last_writers_value",
    "tests/test_gpu_random_nests.py::test_regression_triton[conditional-lower-bound]",  # 5.2
    "tests/test_gpu_random_nests.py::test_regression_triton[dropped-host-loop]",  # 5.0
    "tests/test_index_width.py::test_a_kernel_prints_the_original_values_at_small_and_at_64_bit_offsets[0-tiled]",
    "tests/test_index_width.py::"
    "test_a_kernel_prints_the_original_values_at_small_and_at_64_bit_offsets[3000000000L-tiled]",
    "tests/test_index_width.py::test_the_32_bit_instance_would_be_wrong_where_the_launch_check_refuses_it[tiled]",
    "tests/test_isl_lock.py::test_the_context_options_are_set_only_under_the_isl_lock",  # 4.6
    "tests/test_mark_depths.py::"
    "test_every_mark_names_the_depth_of_the_band_below_it_bands_under_tiled_ones_included[maxpool]",
    "tests/test_multifile.py::test_other_sources_are_compiled_once_per_search",  # 4.7
    "tests/test_multifile.py::test_sources_after_options_are_sources_too",  # 5.2
    "tests/test_newcomer.py::test_progress_lines_and_report_name_each_tile_size_by_its_loop",  # 5.4
    "tests/test_one_thread.py::test_no_parallel_code_has_the_one_thread_versions_diamond_tiles_and_no_pragma",  # 4.5
    "tests/test_one_tile_parallel.py::test_a_batch_tile_loop_gets_the_output_tile_loop_as_its_alternative",  # 3.4
    "tests/test_one_tile_parallel.py::test_the_one_tile_copy_and_the_parallel_copy_give_the_original_results",  # 5.1
    "tests/test_parallel_work.py::test_a_transpose_is_tiled_where_every_order_walks_some_array_down_its_columns",  # 3.0
    "tests/test_parallel_work.py::test_branch_keeps_the_original_results[16384-jacobi-1d-choice1]",  # 3.2
    "tests/test_parallel_work.py::test_branch_keeps_the_original_results[40-jacobi-1d-choice1]",  # 3.1
    "tests/test_pblayout.py::test_pblayout_cuda_compiles_and_links_with_nvcc[mxv2-dump]",  # 7.2
    "tests/test_pblayout.py::test_pblayout_cuda_emulated_on_cpu_prints_the_originals_dump[mxv2]",  # 4.5
    "tests/test_pblayout.py::test_pblayout_cuda_emulated_on_cpu_prints_the_originals_dump[smooth2d]",  # 2.9
    "tests/test_pblayout.py::test_pblayout_cuda_emulated_on_cpu_prints_the_originals_dump[trimul]",  # 3.5
    "tests/test_pblayout.py::test_pblayout_cuda_tuning_build_compiles_and_links_with_nvcc",  # 5.6
    "tests/test_pipeline.py::test_kernel_all_tilings[jacobi-2d]",  # 65.9
    "tests/test_pipeline.py::test_kernel_all_tilings[lu]",  # 21.9
    "tests/test_pipeline.py::test_outer_schedule_keeps_the_time_loop_outside",  # 4.8
    "tests/test_pipeline.py::test_outside_text_is_preserved",  # 4.7
    "tests/test_pipeline.py::test_report_and_structure",  # 6.8
    "tests/test_pipeline.py::test_untiled_kernels",  # 7.0
    "tests/test_poly.py::test_ivdep_on_innermost_loops_whose_dependences_run_forward",  # 5.8
    "tests/test_poly.py::test_short_point_loops_go_inside_the_strided_one",  # 5.9
    "tests/test_pure_calls.py::test_pure_calls_optimized_compute_what_the_original_does[default]",  # 3.0
    "tests/test_pure_calls.py::test_pure_calls_optimized_compute_what_the_original_does[no_tile]",  # 2.7
    "tests/test_pure_calls.py::test_pure_calls_optimized_compute_what_the_original_does[odd_tiles]",  # 2.7
    "tests/test_random_flat.py::test_flattened_program_is_versioned_on_its_row_length",  # 2.5
    "tests/test_random_nests.py::test_regression[isl-dataflow-quota]",  # 5.4
    "tests/test_random_programs.py::test_random_program_whose_fused_cuda_tile_stored_registers_it_never_set",  # 5.4
    "tests/test_random_programs.py::test_random_program_whose_triton_index_lost_the_parentheses_of_a_remainder",  # 3.5
    "tests/test_random_programs.py::test_triton_runs_an_unmapped_statement_of_a_mapped_kernel_once",  # 5.5
    "tests/test_reuse_rule.py::test_a_min_plus_product_is_tiled_where_a_whole_operand_is_reused_across_its_rows",  # 2.6
    "tests/test_reuse_rule.py::test_a_reuse_within_one_row_leaves_the_band_untiled_and_its_scalars_private",  # 7.3
    "tests/test_reuse_rule.py::test_a_separable_filter_runs_its_row_pass_untiled_and_keeps_no_scratch_image",  # 5.2
    "tests/test_reuse_rule.py::test_a_streaming_map_carries_no_reuse_and_stays_untiled",  # 2.6
    "tests/test_rewrite_sources.py::test_a_nest_that_skips_its_diagonal_is_found_and_parallel[1]",  # 2.5
    "tests/test_rewrite_sources.py::test_a_nest_that_skips_its_diagonal_is_found_and_parallel[2]",  # 2.7
    "tests/test_schedule_choice.py::test_model_prefers_unit_stride_inner_loops_gramschmidt",  # 4.4
    "tests/test_search_batch.py::test_any_surface_any_budget_any_worker_count_gives_the_serial_result",  # 3.5
    "tests/test_search_batch.py::"
    "test_best_fit_measures_the_next_neighbourhood_on_idle_workers_and_counts_only_what_it_uses",
    "tests/test_search_welch.py::test_welch_p_less_matches_scipy_on_random_samples",  # 4.9
    "tests/test_sink.py::test_the_sunk_column_loop_prints_what_the_original_prints[33-65-3]",  # 2.6
    "tests/test_sink.py::test_the_sunk_column_loop_prints_what_the_original_prints[70-45-6]",  # 2.5
    "tests/test_time_limit.py::test_the_region_past_its_deadline_keeps_its_code_and_the_others_are_optimized",  # 5.5
    "tests/test_time_limit.py::test_time_limit_0_optimizes_in_this_process_as_before",  # 2.6
    "tests/test_time_limit.py::test_tune_and_bench_leave_out_a_region_whose_analysis_does_not_end",  # 3.0
    "tests/test_triton.py::test_chained_assignments",  # 5.8
    "tests/test_triton.py::test_hand_unrolled_bodies_are_rerolled_only_when_equivalent[k + 1-True]",  # 2.6
    "tests/test_triton.py::test_hand_unrolled_bodies_are_rerolled_only_when_equivalent[k + 2-False]",  # 2.6
    "tests/test_triton.py::test_libdevice_functions",  # 3.0
    "tests/test_triton.py::test_parameters_of_the_other_schedule_are_not_measured_twice",  # 6.1
    "tests/test_triton.py::test_softmax_fused_schedule_is_a_tuning_choice",  # 2.6
    "tests/test_triton.py::test_statements_that_read_the_same_neighbours_are_one_kernel_in_the_fused_schedule",  # 4.2
    "tests/test_tune.py::test_editing_the_kernel_invalidates_the_cache",  # 4.9
    "tests/test_tune.py::test_faults_are_recorded_and_search_finishes",  # 4.3
    "tests/test_tune.py::test_killed_tune_resumes_from_cache",  # 7.2
    "tests/test_tune_confirm.py::test_a_pooled_tile_only_tune_builds_optimize_s_default_beside_the_search",  # 5.7
    "tests/test_tune_confirm.py::test_a_second_source_is_compiled_once_per_tune[2]",  # 3.8
    "tests/test_tune_confirm.py::test_the_re_run_after_a_pooled_schedule_space_search_compiles_nothing",  # 6.9
    "tests/test_tune_confirm.py::test_the_re_run_at_the_user_s_size_compiles_every_program_on_the_pool",  # 7.0
    "tests/test_tune_confirm.py::test_the_re_run_runs_the_search_s_executables_and_compiles_only_optimize_s_default",
    "tests/test_tune_jobs.py::test_the_original_is_measured_while_no_other_tune_on_the_machine_times",  # 2.6
    "tests/test_tune_jobs.py::test_the_runs_that_confirm_the_best_take_the_machine_lock_one_run_at_a_time",  # 3.7
    "tests/test_tune_jobs.py::test_tune_with_jobs_writes_the_cache_and_a_repeat_replays_it",  # 7.2
    "tests/test_tune_jobs.py::test_with_the_local_pool_the_original_is_timed_on_the_cores_the_candidates_are",  # 7.0
    "tests/test_tune_schedule_space.py::"
    "test_a_tuned_gain_that_does_not_hold_in_the_program_falls_back_to_the_fastest_of_seed_and_default",
    "tests/test_tune_schedule_space.py::test_a_tuned_gain_that_holds_in_the_program_keeps_the_best",  # 6.0
    "tests/test_tune_schedule_space.py::test_mixed_search_moves_tiles_first_and_never_ends_slower_than_its_seed",  # 3.8
    "tests/test_tune_schedule_space.py::test_schedule_space_starts_from_the_tile_only_seed",  # 6.5
    "tests/test_tune_schedule_space.py::test_tile_only_tuning_says_when_optimize_s_default_is_faster",  # 6.3
    "tests/test_tune_schedule_space.py::test_tune_over_the_schedule_space_end_to_end",  # 25.2
    "tests/test_workers.py::test_a_search_whose_compile_worker_is_killed_ends_where_one_worker_does",  # 3.9
    "tests/test_workers.py::test_compiles_keep_off_the_cores_a_timing_takes",  # 3.3
    "tests/test_workers.py::test_killed_compile_worker_costs_a_retry_and_loses_nothing",  # 3.7
    "tests/test_workers.py::test_local_pool_compiles_in_parallel_and_times_one_at_a_time[True]",  # 3.3
    "tests/test_workers.py::test_timings_overlap_compiles_unless_the_pool_is_quiet",  # 3.6
    "tests/test_workers.py::test_worker_lost_after_max_attempts",  # 3.6
    # 2026-12-07 (`pytest --durations=60` of 8088900 on idle dev box C: the suite had grown to 7:13), each
    # file keeping its other tests as the area's representatives
    "tests/test_tile_sizes.py::test_a_stencils_diamond_tiles_are_long_along_the_innermost_loop_unless_sizes_are_given",
    "tests/test_tilestore.py::test_a_parallel_loop_inside_the_tile_loops_shares_the_buffer",  # 11.5
    "tests/test_tilestore.py::test_the_region_s_buffers_together_stay_under_the_stack_limit",  # 11.5
    "tests/test_tilestore.py::test_per_tile_storage_prints_what_the_original_prints[jam8]",  # 7.0
    "tests/test_tilestore.py::test_per_tile_storage_prints_what_the_original_prints[odd]",  # 5.5
    "tests/test_tilestore.py::test_per_tile_storage_prints_what_the_original_prints[thin]",  # 4.5
    "tests/test_window_loops.py::test_both_copies_of_the_channel_loop_give_the_original_results[1]",  # 11.0
    "tests/test_window_loops.py::test_both_copies_of_the_channel_loop_give_the_original_results[8]",  # 8.5
    "tests/test_window_loops.py::test_a_loop_over_few_channels_hands_its_threads_to_the_passes_inside",  # 9.4
    "tests/test_window_loops.py::test_the_channel_loop_builds_without_openmp",  # 8.8
    "tests/test_one_tile_parallel.py::test_a_later_tile_loop_parallel_with_the_scalar_private_is_the_alternative",
    "tests/test_tune_jobs.py::test_jobs_2_takes_the_path_of_jobs_1_on_replayed_times",  # 9.7
    "tests/test_live_ranges.py::test_statements_of_two_live_ranges_are_printed_in_the_order_the_check_saw",  # 6.1
    "tests/test_tune_real_c.py::test_the_reference_dumps_no_scalar_declared_inside_the_region",  # 6.2
    "tests/test_original_schedule.py::"
    "test_the_model_keeps_isls_schedule_where_the_written_loops_are_no_better[ludcmp]",  # 5.5
    "tests/test_peeled_private.py::"
    "test_a_scalar_assigned_by_a_chain_of_branches_keeps_its_value_in_every_cell[small-tiles]",  # 5.2
    "tests/test_expand_arrays.py::test_a_random_scratch_row_product_prints_what_the_original_prints[1]",  # 4.2
    "tests/test_expand_arrays.py::test_a_random_scratch_row_product_prints_what_the_original_prints[2]",  # 3.4
    "tests/test_dead_scalars.py::test_a_peeled_first_instance_gives_the_parallel_loop_its_scalar_as_firstprivate",
    "tests/test_collapse.py::test_tile_loops_of_one_tile_each_run_with_the_tile_loop_inside_them",  # 5.3
    "tests/test_random_siblings.py::test_the_sibling_generator_makes_programs_whose_loops_are_distributed",  # 5.7
    "tests/test_benchmark_scripts.py::test_every_benchmark_script_prints_its_help[launch_overhead.py]",  # 3.7
    "tests/test_benchmark_scripts.py::test_every_benchmark_script_prints_its_help[triton_ceiling.py]",  # 3.4
    "tests/test_wavefront_tiles.py::test_tune_runs_optimizes_own_output_beside_and_says_where_it_is_faster",  # 3.7
    # (a second pass, `--durations=80` of 2110a38: 5:08)
    "tests/test_window_loops.py::test_both_copies_of_the_channel_loop_give_the_original_results[3]",  # 8.6
    "tests/test_multifile.py::test_cuda_output_links_with_the_c_source_and_library",  # 3.1
    "tests/test_original_schedule.py::"
    "test_the_model_keeps_isls_schedule_where_the_written_loops_are_no_better[adi]",  # 3.0
    "tests/test_wavefront_tiles.py::test_the_wide_tiles_give_the_originals_table_on_one_to_three_threads[args1]",
    "tests/test_wavefront_tiles.py::test_the_wide_tiles_give_the_originals_table_on_one_to_three_threads[args2]",
    "tests/test_live_ranges.py::test_the_reordered_code_prints_what_the_original_prints[local]",  # 3.5
    # 2026-12-07 (the default suite at 5:28 on dev box C; `--durations=0`, idle): areas that keep another test
    "tests/test_window_loops.py::test_alternatives_are_dropped_from_a_schedule_and_none_is_told_where_there_are_none",
    "tests/test_window_loops.py::test_a_contractions_k_is_no_window_its_scalar_is_still_expanded",  # 3.3
    "tests/test_window_loops.py::test_hotspots_corner_keeps_its_rows_parallel_without_the_alternative",  # 2.9
    # (6.8 s; test_tune_jobs' Ctrl-C in the search stays)
    "tests/test_files.py::test_ctrl_c_during_a_tune_with_workers_is_one_line_and_writes_the_report",
    "tests/test_realc_corpus.py::test_optimize_keeps_a_nests_results_or_refuses_cleanly[batchnorm-as_written]",
    "tests/test_tilestore.py::test_the_buffer_is_a_private_array_of_the_tile_indexed_from_the_tile_loops",  # 5.0
    "tests/test_tilestore.py::test_the_tile_of_a_buffer_follows_the_tile_sizes",  # 3.0
    "tests/test_tilestore.py::test_an_accumulator_expanded_for_tiling_is_stored_per_tile",  # 2.7
    "tests/test_distribute.py::test_a_statement_of_fewer_loops_fused_into_the_loop_is_no_loop_of_its_own",  # 3.5
    "tests/test_realc_corpus.py::test_optimize_keeps_a_nests_results_or_refuses_cleanly[nbody-as_written]",  # 3.3
    "tests/test_realc_corpus.py::test_optimize_keeps_a_nests_results_or_refuses_cleanly[backprop-as_written]",  # 2.9
    "tests/test_realc_corpus.py::test_optimize_keeps_a_nests_results_or_refuses_cleanly[gemm_tn-as_written]",  # 2.6
    "tests/test_random_clamps.py::test_clamped_program_same_output[2]",  # 4.3 (test_split's clamps stay)
    "tests/test_reliability_codegen.py::test_repro_4_gives_the_original_results_under_each_option"
    "[--tile-sizes 2,7,3,5]",  # 2.6
    "tests/test_heap.py::test_scratch_from_the_threshold_up_is_on_huge_pages_and_prints_the_originals_results[symm]",
    "tests/test_reliability_options.py::test_zero_trip_scalar_keeps_its_value_on_the_emulated_cuda_target[inner_edge]",
}


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(config, items):
    import fnmatch
    seen: dict[str, set[str]] = {}
    for item in items:
        key = item.nodeid.split("[", 1)[0]
        if key not in CUT:
            continue
        pid = item.callspec.id if hasattr(item, "callspec") else ""
        keep = {p for p in CUT[key] if fnmatch.fnmatchcase(pid, p)}
        seen.setdefault(key, set()).update(keep)
        if not keep:
            item.add_marker(pytest.mark.slow)
    for item in items:
        if item.nodeid in SLOW_CASES:
            item.add_marker(pytest.mark.slow)
    # on a collection of every test file (the whole suite, before -m and -k deselect), a stale key or pattern
    files = {item.nodeid.split("::", 1)[0] for item in items}
    if files >= {f"tests/{f}" for f in os.listdir(os.path.join(ROOT, "tests")) if f.startswith("test_")
                 and f.endswith(".py")}:
        stale = [f"{k} {sorted(p - seen.get(k, set()))}" for k, p in CUT.items() if seen.get(k) != p and
                 (p or k not in {i.nodeid.split("[", 1)[0] for i in items})]
        stale += sorted(SLOW_CASES - {i.nodeid for i in items})
        if stale:
            raise pytest.UsageError(f"conftest.CUT names no collected test or parameter: {stale}")
