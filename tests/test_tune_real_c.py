"""`polytune tune` on C as people write it (issue 34): regions found without pragmas, their rewrites' parameters,
scalars declared inside a region, arrays of row pointers and float data. Each stopped tune before it timed
anything: the reference build lost a found region's first and last lines, read parameters (`pt_n_m`) only the
optimized code defines, dumped a scalar out of scope and a pointer as a double, and the result check took a float
sum's last-bit drift under another loop shape for a wrong answer."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from conftest import ROOT, compile_run

from polytune.cli import main
from polytune.measure.build import Build
from polytune.measure.c import FLOAT_RTOL, BuildConfig, CRunner, compare_dumps, instrument, original_regions
from polytune.pipeline import analyze

REALC = os.path.join(ROOT, "benchmarks", "realc")


def test_tunes_reference_of_a_found_region_is_its_whole_loop_nest():
    """A region found without pragmas starts and ends with code lines (no `#pragma scop` to skip): tune's
    reference build of benchmarks/realc/nw.c had lost the row loop's `for` line and did not compile."""
    program = analyze(str(Path(ROOT) / "benchmarks" / "realc" / "nw.c"))
    first = original_regions(program)[0]
    assert first.startswith("#line 21\n") and "for (int i = 1; i < max_rows; i++) {" in first
    assert first.count("{") == first.count("}")


def test_tune_runs_on_a_file_without_pragmas(tmp_path, capsys):
    src = tmp_path / "flat.c"
    src.write_text("#include <stdio.h>\n#include <stdlib.h>\n"
                   "void scale(int n, int m, double *a, const double *b)\n{\n"
                   "    for (int i = 0; i < n; i++)\n        for (int j = 0; j < m; j++)\n"
                   "            a[i * m + j] = 2.0 * b[i * m + j] + a[i * m + j];\n}\n"
                   "int main(void)\n{\n    int n = 300, m = 200;\n"
                   "    double *a = calloc(n * m, sizeof *a), *b = malloc(n * m * sizeof *b);\n"
                   "    for (int k = 0; k < n * m; k++) b[k] = k % 7;\n    scale(n, m, a, b);\n"
                   "    double s = 0;\n    for (int k = 0; k < n * m; k++) s += a[k] * (k % 3);\n"
                   "    printf(\"%.17g\\n\", s);\n    return 0;\n}\n")
    out = tmp_path / "flat.tuned.c"
    assert main(["tune", str(src), "-o", str(out), "--runs", "1", "--threads", "1", "--max-evals", "2",
                 "--no-cache", "--confirm-runs", "0"]) == 0
    assert "#pragma omp parallel for" in out.read_text()
    want = compile_run(str(src), str(tmp_path / "ref"), [], openmp=False)
    assert compile_run(str(out), str(tmp_path / "opt"), [], True, 2) == want


def test_the_reference_dumps_no_scalar_declared_inside_the_region():
    program = analyze(os.path.join(REALC, "box_blur.c"))
    text = instrument(program, original_regions(program))
    assert "(sum)" not in text.split("polytune_dump_file)", 1)[1].split("/* end hot */")[0]


def test_a_pointer_element_is_skipped_by_the_reference_dump_and_the_program_builds(tmp_path):
    """backprop's main sets rows of pointers, `conn[k] = store + k * (n2 + 1)`: an address, not a result."""
    program = analyze(os.path.join(REALC, "backprop.c"))
    assert "default: polytune_skip)(conn[" in instrument(program, original_regions(program))
    runner = CRunner(program, BuildConfig(cflags=("-O1",), runs=1, program=Build(args=("13", "7", "3"))))
    try:
        assert runner.reference().ok
    finally:
        runner.close()


def test_float_elements_may_drift_by_the_float_tolerance_doubles_and_integers_may_not():
    ref = np.array([np.float32(0.20066413283348083), 1.0 / 3.0, 7.0])
    assert float(np.float32(ref[0])) == ref[0]
    drifted = ref.copy()
    drifted[0] = float(np.float32(0.20066410303115845))  # 1.5e-7 apart: a float sum under another FMA shape
    assert compare_dumps(ref, drifted, 1e-9) == "" and 1.5e-7 < FLOAT_RTOL
    assert compare_dumps(ref, drifted, 1e-9, floats=False)  # (then the printed numbers get FLOAT_RTOL too)
    double = ref.copy()
    double[1] *= 1 + 1.5e-7
    assert "1 of 3 values differ" in compare_dumps(ref, double, 1e-9)
    integer = ref.copy()
    integer[2] = 7.0000001
    assert "1 of 3 values differ" in compare_dumps(ref, integer, 1e-9)
