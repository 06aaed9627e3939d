"""What `bench` and `tune` take for a program's time: only a timer they understand, never a printed result; a
program without one is refused before any tuning, and a run that timed no variant does not exit 0."""
from __future__ import annotations

import pytest

from polytune.cli import main
from polytune.study import bench

CHECKSUM_ONLY = """#include <stdio.h>
#define N 16
double A[N][N];
int main(void) {
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = i * 1000.0 + j * 7.0;
#pragma endscop
  double s = 0;
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) s += A[i][j] * A[i][j];
  printf("%.3f\\n", s);
  return 0;
}
"""

# prints its time on its first run only (a marker file in the directory it runs in): the check before tuning
# passes, and then no variant of the session prints one
TIMED_ONCE = """#include <stdio.h>
#include <unistd.h>
#define N 16
double A[N][N];
int main(void) {
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = i + 2.0 * j;
#pragma endscop
  if (access("timed-once", F_OK) != 0) {
    FILE *f = fopen("timed-once", "w");
    fclose(f);
    printf("time: 0.001\\n");
  }
  printf("checksum: %.6f\\n", A[3][5]);
  return 0;
}
"""

# its region reads a value that differs in every process: no variant can agree with the original's results
UNVERIFIABLE = """#include <stdio.h>
#include <unistd.h>
#define N 16
double A[N][N];
int main(void) {
  double s = getpid() % 1000 + 1;
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = s * i + j;
#pragma endscop
  printf("%f\\n", A[3][2]);
  return 0;
}
"""


def test_a_time_line_is_read():
    m = bench.find_time("checksum: 1.5\ntime: 0.250000\n")
    assert not isinstance(m, str) and float(m.group(1)) == 0.25


def test_a_checksum_printed_with_three_decimals_is_no_time():
    why = bench.find_time("9357120.000\n")
    assert isinstance(why, str) and "printed no time" in why and "'9357120.000'" in why and "time: SECONDS" in why
    assert isinstance(bench.find_time("9357120.000\n", polybench=True), str)  # not PolyBench's %0.6f either


def test_polybench_timer_line_counts_only_when_the_program_is_built_with_it():
    assert isinstance(bench.find_time("0.012345\n"), str)
    m = bench.find_time("0.012345\n", polybench=True)
    assert not isinstance(m, str) and float(m.group(1)) == 0.012345
    assert bench.polybench_timer(["MINI_DATASET", "POLYBENCH_TIME"]) and bench.polybench_timer(["POLYBENCH_TIME=1"])
    assert not bench.polybench_timer(["POLYBENCH_TIMER", "POLYBENCH_GFLOPS"])


def test_two_time_lines_are_refused_not_guessed_between():
    why = bench.find_time("time: 0.1\ntime: 0.2\n")
    assert isinstance(why, str) and "2 'time:' lines" in why


def test_bench_refuses_a_program_without_a_timer_before_any_tuning(tmp_path, capsys):
    src = tmp_path / "checksum.c"
    src.write_text(CHECKSUM_ONLY)
    rc = main(["bench", str(src), "--runs", "1", "--threads", "1", "--max-evals", "2", "--compilers", "gcc"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith(f"{src}: bench cannot time this program"), err
    assert "printed no time (it printed '" in err and "tuning" not in err


def test_bench_that_timed_no_variant_exits_nonzero_with_one_line_saying_why(tmp_path, capsys, monkeypatch):
    src = tmp_path / "once.c"
    src.write_text(TIMED_ONCE)
    monkeypatch.chdir(tmp_path)  # where the programs run (bench runs them in the current directory)
    rc = main(["bench", str(src), "--runs", "1", "--threads", "1", "--max-evals", "1", "--compilers", "gcc"])
    err = capsys.readouterr().err
    assert rc == 1
    (line,) = [ln for ln in err.splitlines() if ln.startswith("polytune: error:")]
    assert line.startswith("polytune: error: once: no variant was timed (gcc -O3: run: printed no time"), line


def test_untimed_kernels_name_each_kernel_without_a_timed_variant():
    def v(median, error=None):
        return {"median": median, "error": error}
    results = {"kernels": [
        {"name": "a", "variants": {"gcc": v(1.0), "seed": v(0.5)}},
        {"name": "b", "variants": {"gcc": v(None, "run: exit status 3"), "seed": v(None, "run: exit status 3")}},
        {"name": "c", "variants": {"gcc": v(1.0), "seed": v(None, "compile: x"), "hill": v(None, "compile: x")}},
        {"name": "d", "variants": {"gcc": v(1.0)}},  # polytune cannot optimize it: the baselines alone
    ]}
    assert bench.untimed_kernels(results) == [
        "b: no variant was timed (gcc -O3: run: exit status 3)",
        "c: none of polytune's variants was timed (seed (tile 32): compile: x)"]


def test_tune_that_timed_no_variant_exits_nonzero_with_one_line_saying_why(tmp_path, capsys):
    src = tmp_path / "pid.c"
    src.write_text(UNVERIFIABLE)
    rc = main(["tune", str(src), "--runs", "1", "--threads", "1", "--max-evals", "2", "--no-cache"])
    err = capsys.readouterr().err
    assert rc == 1
    (line,) = [ln for ln in err.splitlines() if ln.startswith("polytune: error:")]
    assert "no variant was timed" in line and "wrong_answer" in line, line


@pytest.mark.parametrize("stdout", ["time: nan\n", "time: -1\n"])
def test_a_time_that_is_no_duration_is_refused(stdout):
    assert isinstance(bench.find_time(stdout), str)
