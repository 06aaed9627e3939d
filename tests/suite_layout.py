"""Nothing leaves the default suite unrun: every test marked slow is collected by one of CI's slow lines
(.ci/run), or MANUAL names it with the reason it is run by hand.

`python3 tests/suite_layout.py` (CI runs it before the tests) collects `-m slow` over tests/ and each slow
invocation of .ci/run with its environment and arguments (`pytest --collect-only`), and prints the slow tests no
line collects and no MANUAL pattern names, and the MANUAL patterns that name no slow test; exit code 1 if there
is one. tests/test_suite_layout.py tests the reading of .ci/run and runs the check on CI's slow line.
"""
from __future__ import annotations

import dataclasses
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CI_RUN = os.path.join(ROOT, ".ci", "run")

# Slow tests run by hand, not by CI: why each is left out of CI's 90 minutes. A key is a node id, or a test
# function's id followed by `[*]`: all of its parameters.
MANUAL: dict[str, str] = {
    # the generators' long runs (CI runs the first programs of each: POLYTUNE_PROGRAMS=40 and the like)
    "tests/test_random_programs.py::test_random_program_same_output_slow[*]":
        "random programs past CI's POLYTUNE_PROGRAMS=40: the 2,000-program run by hand (README's slow paragraph)",
    "tests/test_random_programs.py::test_random_integer_program_same_output_slow[*]":
        "integer programs past CI's POLYTUNE_INT_PROGRAMS=40: the 400-program run by hand",
    "tests/test_random_siblings.py::test_sibling_program_same_output_slow[*]":
        "sibling programs past CI's POLYTUNE_SIBLING_PROGRAMS=12: the 300-program run by hand",
    "tests/test_random_siblings.py::test_conditioned_program_same_output_slow[*]":
        "conditioned programs past CI's POLYTUNE_CONDITIONED_PROGRAMS=3: the 60-program run by hand",
    "tests/test_random_siblings.py::test_local_scalar_program_same_output_slow[*]":
        "local-scalar programs past CI's POLYTUNE_LOCAL_SCALAR_PROGRAMS=6: the 100-program run by hand",
    "tests/test_random_clamps.py::test_clamped_program_same_output_slow[*]":
        "clamped programs past CI's POLYTUNE_CLAMPED_PROGRAMS=6: the 100-program run by hand",
    "tests/test_random_guarded.py::test_guarded_program_same_output_slow[*]":
        "guarded programs past CI's POLYTUNE_GUARDED=6",
    "tests/test_random_flat.py::test_flattened_random_program_same_output_slow[*]":
        "300 flattened random programs: the generator's long run, by hand",
    "tests/test_contraction.py::test_random_contraction_prints_what_the_original_prints_slow[*]":
        "176 more random contractions (seeds 24-199): the generator's long run, by hand",
    "tests/test_random_nests.py::test_random_nest_same_output_slow":
        "300 hypothesis examples (POLYTUNE_SLOW_EXAMPLES); CI runs the default suite's random nests 8 times over",
    "tests/test_reliability_tiles.py::test_odd_tile_sizes_never_fail_on_strided_triangular_nests[*]":
        "POLYTUNE_NESTS generated nests under odd tile sizes: a generator run, by hand",
    "tests/test_time_limit.py::test_random_large_and_straight_line_regions_end_within_the_limit[*]":
        "not on a CI line when this check came (2026-12-05): by hand, `pytest -m slow FILE`",
    "tests/test_time_limit.py::test_issue_33_eight_statement_region_ends_within_the_default_limit_with_a_note":
        "not on a CI line when this check came (2026-12-05): by hand, `pytest -m slow FILE`",
    "tests/test_time_limit.py::test_a_region_of_10000_statements_in_one_loop_ends_within_the_default_limit_with_a_note":
        "not on a CI line when this check came (2026-12-05): by hand, `pytest -m slow FILE`",
    "tests/test_random_nests.py::test_regression_dependences_finish":
        "not on a CI line when this check came (2026-12-05): by hand, `pytest -m slow FILE`",
    # the option matrices: every product of issue 14's option sets (the default suite and CI run ONE_EACH's)
    "tests/test_reliability_codegen.py::test_repro_4_gives_the_original_results_under_the_option_matrix[*]":
        "repro 4 under the option matrix: hours on 2 cores",
    "tests/test_int_types.py::test_integer_programs_under_the_option_matrix[*]":
        "1,404 integer programs x option sets: hours on 2 cores",
    "tests/test_fp_contract.py::test_results_are_bit_identical_without_fp_contraction_under_the_option_matrix[*]":
        "the option matrix, by hand",
    "tests/test_rewrite_aliases.py::test_issue_33_repro_3_under_the_option_matrix[*]":
        "the option matrix, by hand",
    "tests/test_crlf.py::test_crlf_input_gives_crlf_output_under_the_option_matrix[*]":
        "the option matrix, by hand",
    "tests/test_rewrite_aliases.py::test_issue_33_repro_3_under_each_option[*]":
        "ONE_EACH's other option sets (the default suite runs FAST's), by hand with the option matrix",
    "tests/test_corpus_scope.py::"
    "test_data_dependent_condition_is_a_may_write_and_the_program_prints_what_the_original_prints[*]":
        "ONE_EACH's other option sets (the default suite runs FAST's), by hand with the option matrix",
    # whole-corpus sweeps
    "tests/test_realc_corpus.py::test_optimize_keeps_a_nests_results_with_other_schedules_and_small_tiles[*]":
        "every real-C nest under 4 more schedules: 288 optimizes, by hand before changes to polytune/poly",
    "tests/test_schedule_choice.py::test_alternative_gives_the_original_results_on_the_whole_corpus[*]":
        "every alternative schedule on every corpus kernel, by hand before changes to the schedule choice",
    # GPU benchmark scripts' CPU runs
    "tests/test_triton_contraction.py::test_the_contraction_benchmark_runs_tiny_sizes_under_the_interpreter":
        "not on a CI line when this check came (2026-12-05): by hand, `pytest -m slow FILE`",
    "tests/test_gpu_targets_script.py::test_quick_run_on_the_cpu_writes_every_part":
        "not on a CI line when this check came (2026-12-05): by hand, `pytest -m slow FILE`",
    "tests/test_bench_cuda_mappings_ppcg.py::test_ppcg_row_is_timed_and_verified_in_the_rounds_on_the_emulator":
        "not on a CI line when this check came (2026-12-05): by hand, `pytest -m slow FILE`",
}


@dataclasses.dataclass(frozen=True)
class Invocation:
    """One `python3 -m pytest` line of .ci/run: its environment assignments and its arguments."""

    env: tuple[tuple[str, str], ...]
    args: tuple[str, ...]

    @property
    def marks(self) -> str:
        for k, a in enumerate(self.args):
            if a == "-m" and k + 1 < len(self.args):
                return self.args[k + 1]
        return ""

    @property
    def runs_slow(self) -> bool:
        """Whether its -m expression selects slow tests (`slow`, not `not slow`)."""
        return bool(re.search(r"(?<!not )\bslow\b", self.marks))


def invocations(text: str) -> list[Invocation]:
    """The pytest invocations of the shell script *text* (lines joined at a trailing backslash)."""
    out = []
    for line in text.replace("\\\n", " ").splitlines():
        if line.lstrip().startswith("#"):
            continue
        words = shlex.split(line, comments=True)
        for k in range(len(words) - 2):
            if words[k].startswith("python") and words[k + 1:k + 3] == ["-m", "pytest"]:
                env = tuple(tuple(w.split("=", 1)) for w in words[:k] if re.match(r"^[A-Z_][A-Z0-9_]*=", w))
                out.append(Invocation(env, tuple(words[k + 3:])))
                break
    return out


def _without_run_options(args: tuple[str, ...]) -> list[str]:
    """*args* without -q and -n N (collection runs in one process)."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "-n":
            skip = True
        elif a != "-q" and not re.match(r"^-n\d+$", a):
            out.append(a)
    return out


def collect(args: list[str], env: dict[str, str] | None = None) -> set[str]:
    """The node ids `pytest --collect-only` gives for *args*, in ROOT, with *env* over this environment."""
    cmd = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-n", "0", *args]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    if r.returncode not in (0, 5):  # 5: nothing collected
        raise RuntimeError(f"{shlex.join(cmd)}: exit code {r.returncode}\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return {line.strip() for line in r.stdout.splitlines() if "::" in line and not line.startswith(" ")}


def names(key: str, nodeid: str) -> bool:
    """Whether the MANUAL *key* names *nodeid*."""
    return nodeid.startswith(key[:-2]) if key.endswith("[*]") else nodeid == key


def manual(nodeid: str) -> str | None:
    """The MANUAL key that names *nodeid*, if one does."""
    return next((k for k in MANUAL if names(k, nodeid)), None)


def check() -> tuple[list[str], list[str]]:
    """(slow tests that no CI line collects and MANUAL does not name, MANUAL patterns that name no slow test
    left out of CI)."""
    with open(CI_RUN) as f:
        lines = [i for i in invocations(f.read()) if i.runs_slow]
    slow = collect(["-m", "slow", "tests"])
    covered: set[str] = set()
    for i in lines:
        covered |= collect(_without_run_options(i.args), dict(i.env))
    left = sorted(slow - covered)
    used = {manual(n) for n in left}
    return [n for n in left if manual(n) is None], [p for p in MANUAL if p not in used]


def main() -> int:
    missing, stale = check()
    for n in missing:
        print(f"{n}: marked slow, and no slow line of .ci/run collects it (add it to one, or to MANUAL with a reason)")
    for p in stale:
        print(f"MANUAL {p}: names no slow test that CI leaves out")
    return 1 if missing or stale else 0


if __name__ == "__main__":
    sys.exit(main())
