"""What polytune leaves on disk: outputs with the mode an ordinary write gives (the umask, or the mode of the file
replaced), nothing at all for a scop that uses an undeclared name, and after Ctrl-C during a tune or a bench the
report of what was measured, with one line on the terminal and no worker's traceback."""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest
from conftest import KERNELS, ROOT

from polytune.cli import main
from polytune.pipeline import write_atomically
from polytune.study import bench

GEMM = os.path.join(KERNELS, "gemm.c")


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask():
    """Set the process's umask for one test (restored after it)."""
    saved = os.umask(0o022)
    os.umask(saved)
    yield lambda mask: os.umask(mask)
    os.umask(saved)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_output_gets_the_mode_the_umask_gives(tmp_path, umask, mask, mode):
    umask(mask)
    out, report = tmp_path / "g.opt.c", tmp_path / "r.json"
    assert main(["optimize", GEMM, "-DN=40", "-o", str(out), "--report", str(report), "-q"]) == 0
    assert _mode(out) == mode and _mode(report) == mode


def test_force_keeps_the_mode_of_the_input_it_overwrites(tmp_path, umask):
    umask(0o077)
    src = tmp_path / "gemm.c"
    src.write_text(open(GEMM).read())
    src.chmod(0o644)
    assert main(["optimize", str(src), "-DN=40", "-o", str(src), "--force", "-q"]) == 0
    assert _mode(src) == 0o644 and "#pragma omp" in src.read_text()


def test_a_replaced_output_keeps_its_mode(tmp_path, umask):
    umask(0o022)
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    out.chmod(0o640)
    write_atomically(str(out), "new\n")
    assert out.read_text() == "new\n" and _mode(out) == 0o640
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".polytune-")]  # no temporary file left


UNDECLARED = """double A[100];
void f(int n) {
#pragma scop
  for (int i = 0; i < n; i++)
    A[i] = A[i] * scale;
#pragma endscop
}
"""


def test_an_undeclared_name_in_the_scop_is_one_line_and_no_output(tmp_path, capsys):
    src, out = tmp_path / "u.c", tmp_path / "u.opt.c"
    src.write_text(UNDECLARED)
    assert main(["optimize", str(src), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"{src}:5: 'scale' is not declared (the scop uses it, and nothing before declares it)\n"
    assert not out.exists()


def test_names_declared_before_the_region_or_in_it_pass(tmp_path):
    src = tmp_path / "d.c"
    src.write_text("""#include <math.h>
double A[100], shift;
void f(int n, double scale) {
#pragma scop
  for (int i = 0; i < n; i++) {
    double t = sqrt(A[i]) * scale;
    A[i] = t + shift;
  }
#pragma endscop
}
""")
    assert main(["optimize", str(src), "-o", str(tmp_path / "d.opt.c"), "-q"]) == 0


def test_ctrl_c_during_a_tune_with_workers_is_one_line_and_writes_the_report(tmp_path):
    """SIGINT to the whole process group, as a terminal sends it: the workers get it too."""
    report = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "polytune", "tune", GEMM, "-DN=96", "--jobs", "2", "--runs", "2", "--threads", "1",
           "--no-cache", "--max-evals", "60", "--report", str(report)]
    env = dict(os.environ, PYTHONPATH=ROOT)
    # (SIGINT's default action in the child: a suite started in the background by a non-interactive shell runs
    # with SIGINT ignored, which every child inherits, and Python then installs no handler: the tune ran on)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True, cwd=tmp_path,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = []
    deadline = time.monotonic() + 240
    try:
        for line in proc.stderr:
            lines.append(line)
            if line.startswith("[  2]") or time.monotonic() > deadline:
                break
        assert any(ln.startswith("[  2]") for ln in lines), "".join(lines)
        os.killpg(proc.pid, signal.SIGINT)
        out, rest = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    err = "".join(lines) + rest
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    last = rest.strip().splitlines()[-1]
    assert last.startswith("polytune: interrupted after ") and last.endswith(f"their report -> {report}"), rest
    data = json.loads(report.read_text())
    assert data["stop_reason"] == "interrupted" and data["evals"] >= 2 and len(data["evaluations"]) == data["evals"]


TIMED = """#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <time.h>
double A[24][24], C[24][24];
int main(void) {
  struct timespec t0, t1;
  for (int i = 0; i < 24; i++) for (int j = 0; j < 24; j++) A[i][j] = (i * j % 7) / 7.0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
#pragma scop
  for (int i = 0; i < 24; i++)
    for (int j = 0; j < 24; j++)
      C[i][j] = A[j][i] + 2.0;
#pragma endscop
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("time: %.9f\\nchecksum: %.6f\\n", (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec), C[3][5]);
  return 0;
}
"""


def test_ctrl_c_during_a_bench_prints_and_writes_the_kernels_done_and_one_line(tmp_path, capsys, monkeypatch):
    """The second kernel is interrupted: the first one's tables and report stay, and one line says so."""
    first, second = tmp_path / "first.c", tmp_path / "second.c"
    first.write_text(TIMED)
    second.write_text(TIMED)
    real = bench.bench_kernel

    def interrupted_at_the_second(spec, *a, **k):
        if spec.path.endswith("second.c"):
            raise KeyboardInterrupt
        return real(spec, *a, **k)
    monkeypatch.setattr(bench, "bench_kernel", interrupted_at_the_second)
    report = tmp_path / "rep"
    rc = main(["bench", str(first), str(second), "--runs", "1", "--threads", "1", "--max-evals", "1",
               "--compilers", "gcc", "--report", str(report), "-q"])
    cap = capsys.readouterr()
    assert rc == 130
    assert cap.err == f"polytune: interrupted after 1 of 2 kernels; their results -> {report}\n"
    assert "first" in cap.out and "second" not in cap.out and "geometric mean" in cap.out
    data = json.loads((report / "results.json").read_text())
    assert [k["name"] for k in data["kernels"]] == ["first"]


def test_ctrl_c_before_a_bench_finished_a_kernel_writes_nothing(tmp_path, capsys, monkeypatch):
    src = tmp_path / "first.c"
    src.write_text(TIMED)

    def interrupted(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(bench, "bench_kernel", interrupted)
    report = tmp_path / "rep"
    assert main(["bench", str(src), "--runs", "1", "--threads", "1", "--compilers", "gcc", "--report", str(report),
                 "-q"]) == 130
    assert capsys.readouterr().err == "polytune: interrupted after 0 of 1 kernel; no results to write\n"
    assert not report.exists()
