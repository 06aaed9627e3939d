"""Programs of several translation units, libraries and arguments, tuned and benched as a compiler driver
builds them: `polytune tune prog.c fill.c -I lib -L DIR -lchk -- 60`."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from conftest import ROOT

from polytune.cli import main
from polytune.measure import build as build_mod
from polytune.measure.build import Build, compile_objects
from polytune.measure.c import ReferenceOutput

DATA = os.path.join(ROOT, "tests", "data", "multifile")
PROG, FILL, LIB = (os.path.join(DATA, p) for p in ("prog.c", "fill.c", "lib"))
# -O1 keeps the builds quick; without -march=native gcc contracts no multiply-adds, so the variants' C is
# bit for bit the original's and the printed hash of it agrees
FAST = ["--cflags=-O1", "--runs", "1", "--threads", "1", "--no-cache", "--max-evals", "2"]


@pytest.fixture(scope="module")
def libdir(tmp_path_factory) -> str:
    """libchk.a built from lib/chk.c, as the program's README says."""
    d = tmp_path_factory.mktemp("lib")
    subprocess.run(["gcc", "-O1", "-c", os.path.join(LIB, "chk.c"), f"-I{LIB}", "-o", str(d / "chk.o")], check=True)
    subprocess.run(["ar", "rcs", str(d / "libchk.a"), str(d / "chk.o")], check=True)
    return str(d)


def _one_line_error(capsys, rc: int) -> str:
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_two_file_program_with_library_and_argument_tuned_end_to_end(libdir, tmp_path, capsys):
    report, out = tmp_path / "r.json", tmp_path / "best.c"
    rc = main(["tune", PROG, FILL, "-I", LIB, "-L", libdir, "-lchk", *FAST, "--report", str(report),
               "-o", str(out), "--", "60"])
    assert rc == 0, capsys.readouterr().err
    r = json.loads(report.read_text())
    assert r["best"]["error"] is None and r["best"]["times"]
    assert all(e["error"] in (None, "pruned") for e in r["evaluations"]), r["evaluations"]
    # the best program builds and runs as the original does, and prints the same checksum
    exes = []
    for src in (PROG, str(out)):
        exe = str(tmp_path / f"exe{len(exes)}")
        subprocess.run(["gcc", "-O1", "-fopenmp", f"-iquote{DATA}", f"-I{LIB}", src, FILL, f"-L{libdir}", "-lchk",
                        "-o", exe, "-lm"], check=True)
        exes.append(subprocess.run([exe, "60"], capture_output=True, text=True, check=True).stdout)
    assert exes[0] == exes[1] and exes[0].startswith("checksum: ")


def test_sources_after_options_are_sources_too(libdir, tmp_path, capsys):
    rc = main(["tune", PROG, "-I", LIB, FILL, "-L", libdir, "-lchk", *FAST, "--max-evals", "1", "--", "40"])
    assert rc == 0, capsys.readouterr().err


def test_other_sources_are_compiled_once_per_search(libdir, monkeypatch, capsys):
    calls = []
    real = build_mod.subprocess.run

    def counting(argv, *a, **kw):
        calls.append(argv)
        return real(argv, *a, **kw)

    monkeypatch.setattr(build_mod.subprocess, "run", counting)
    # --jobs 1: the variants are linked in this process, where the calls are counted
    rc = main(["tune", PROG, FILL, "-I", LIB, "-L", libdir, "-lchk", *FAST, "--max-evals", "3", "--jobs", "1",
               "--", "40"])
    assert rc == 0, capsys.readouterr().err
    compiles = [c for c in calls if isinstance(c, list) and "-c" in c and FILL in c]
    linked = [c for c in calls if isinstance(c, list) and "-o" in c and c[-1] == "-lm"]
    assert len(compiles) == 1 and len(linked) >= 3, (compiles, linked)  # the original and 2+ variants


def test_object_cache_keys_on_content_and_flags(tmp_path):
    src = tmp_path / "f.c"
    src.write_text("int f(void) { return 1; }\n")
    b = Build(sources=(str(src),))
    first = compile_objects(b, ["gcc", "-O1"], str(tmp_path / "o"))
    assert compile_objects(b, ["gcc", "-O1"], str(tmp_path / "o")) == first
    assert compile_objects(b, ["gcc", "-O2"], str(tmp_path / "o")) != first
    src.write_text("int f(void) { return 2; }\n")
    assert compile_objects(b, ["gcc", "-O1"], str(tmp_path / "o")) != first


def test_the_argument_reaches_the_original(capsys, libdir):
    # without its size argument the program prints its usage and exits 2: the original failed
    err = _one_line_error(capsys, main(["tune", PROG, FILL, "-I", LIB, "-L", libdir, "-lchk", *FAST]))
    assert err.startswith(f"{PROG}: the original program failed: exit status 2") and "usage" in err


def test_missing_source_is_one_line(capsys, libdir):
    err = _one_line_error(capsys, main(["tune", PROG, "nofile.c", "-I", LIB, "-lchk", *FAST, "--", "40"]))
    assert err == "nofile.c: no such file"


def test_missing_library_is_one_line_with_the_linkers_message(capsys):
    err = _one_line_error(capsys, main(["tune", PROG, FILL, "-I", LIB, "-lnope", *FAST, "--", "40"]))
    assert "cannot find -lnope" in err and err.startswith(f"{PROG}: the original program does not build")


def test_missing_function_is_one_line_with_the_linkers_message(capsys, libdir):
    err = _one_line_error(capsys, main(["tune", PROG, "-I", LIB, "-L", libdir, "-lchk", *FAST, "--", "40"]))
    assert "undefined reference to `fill'" in err


def test_broken_other_source_names_its_line(capsys, tmp_path, libdir):
    bad = tmp_path / "fill.c"
    bad.write_text("void fill(double *a, int n, int stride, int seed) { return 1 }\n")
    err = _one_line_error(capsys, main(["tune", PROG, str(bad), "-I", LIB, "-L", libdir, "-lchk", *FAST,
                                        "--", "40"]))
    assert err.startswith(f"{bad}: does not compile with gcc: ") and "error" in err


def test_program_arguments_are_for_tune_and_bench_only(capsys):
    err = _one_line_error(capsys, main(["optimize", PROG, "--", "40"]))
    assert err == "polytune: error: program arguments (after --) apply to tune and bench, not optimize"


def test_bench_links_other_sources_and_passes_arguments(libdir, tmp_path, capsys):
    """bench builds and runs the original with the other source, the library and the argument before any tuning
    (to see that it prints a time): prog prints its checksum and no time, so it is refused, saying what it
    printed (without fill.c, -lchk or the argument it would not build or would exit 2)."""
    rc = main(["bench", PROG, "--with", FILL, "-I", LIB, "-L", libdir, "-l", "chk", "--compilers", "gcc",
               "--runs", "1", "--max-evals", "1", "--threads", "1", "--report", str(tmp_path / "b"), "--", "60"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1, err
    assert err.startswith(f"{PROG}: bench cannot time this program: its original (gcc -O3) printed no time (it "
                          "printed 'checksum: ")
    assert not (tmp_path / "b").exists()


# ---- what a variant prints -------------------------------------------------------------------------------
def test_output_lines_that_vary_between_runs_of_the_original_are_not_compared():
    ref = ReferenceOutput.of(("0.001234\n", "begin dump: A\n0.50 0.25\n"), ("0.001301\n", "begin dump: A\n0.50 0.25\n"))
    assert ref.compare(("0.009999\n", "begin dump: A\n0.50 0.25\n"), 1e-9) == ""


def test_a_different_dump_on_stderr_is_a_wrong_answer():
    ref = ReferenceOutput.of(("", "begin dump: A\n0.50 0.25\n"), ("", "begin dump: A\n0.50 0.25\n"))
    assert "stderr line 2 differs" in ref.compare(("", "begin dump: A\n0.50 0.28\n"), 1e-9)
    assert "printed 1 lines on stderr" in ref.compare(("", "begin dump: A\n"), 1e-9)


def test_printed_numbers_may_differ_in_the_last_digit_only():
    ref = ReferenceOutput.of(("x 0.125 7\n", ""), None)
    assert ref.compare(("x 0.126 7\n", ""), 1e-9) == ""  # a value within tolerance that rounds the other way
    assert ref.compare(("x 0.128 7\n", ""), 1e-9) != ""
    assert ref.compare(("x 0.125 8\n", ""), 1e-9) != ""  # integers are exact
    assert ReferenceOutput.of(("1.5e-03\n", ""), None).compare(("1.6e-03\n", ""), 1e-9) == ""
    assert ReferenceOutput.of(("1.5e-03\n", ""), None).compare(("1.7e-03\n", ""), 1e-9) != ""


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_cuda_output_links_with_the_c_source_and_library(libdir, tmp_path):
    cu = tmp_path / "prog.cu"
    assert main(["optimize", PROG, "-I", LIB, "--target", "cuda", "-o", str(cu)]) == 0
    obj = str(tmp_path / "fill.o")
    subprocess.run(["gcc", "-O1", "-c", FILL, "-o", obj], check=True)
    proc = subprocess.run(["nvcc", "-arch=sm_90", "-O1", "-Xcompiler", "-w", f"-I{DATA}", f"-I{LIB}", str(cu), obj,
                           f"-L{libdir}", "-lchk", "-o", str(tmp_path / "prog"), "-lm"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
