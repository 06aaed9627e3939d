"""PolyBench's layout out of the box: kernels/NAME/NAME.c built with utilities/polybench.c (a second C
translation unit without extern "C"), tuned, benched, and emitted for CUDA, in -DPOLYBENCH_TIME and
-DPOLYBENCH_DUMP_ARRAYS builds. tests/data/pblayout holds polytune's own stand-in of the utilities; the
real distribution is used where POLYBENCH_DIR names a copy of it."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
from conftest import EMU_CXXFLAGS, ROOT

from polytune.cli import main

PB = os.path.join(ROOT, "tests", "data", "pblayout")
UTIL = os.path.join(PB, "utilities")
KERNELS = ("mxv2", "smooth2d", "trimul")
MODES = {"time": ["-DPOLYBENCH_TIME"], "dump": ["-DPOLYBENCH_DUMP_ARRAYS"]}
FAST = ["--cflags=-O1", "--runs", "1", "--threads", "1", "--no-cache", "--max-evals", "2"]
NVCC = shutil.which("nvcc")
EMU = os.path.join(ROOT, "tests", "data", "cuda_emu.h")


def kernel(name: str, root: str = PB) -> str:
    return os.path.join(root, "kernels", name, name + ".c")


# Each kernel is tuned once and each mode at least once by default; the other three pairs run under -m slow (CI's
# slow line). test_pblayout_kernels_benched tunes all three kernels in a build with both modes defined.
TUNED_FAST = {("mxv2", "time"), ("smooth2d", "dump"), ("trimul", "time")}


@pytest.mark.parametrize("name,mode", [(n, m) if (n, m) in TUNED_FAST else pytest.param(n, m, marks=pytest.mark.slow)
                                       for n in KERNELS for m in sorted(MODES)])
def test_pblayout_kernel_tuned(name, mode, tmp_path, capsys):
    report = tmp_path / "r.json"
    rc = main(["tune", kernel(name), os.path.join(UTIL, "polybench.c"), "-I", UTIL, "-DMINI_DATASET", *MODES[mode],
               *FAST, "--report", str(report)])
    assert rc == 0, capsys.readouterr().err
    r = json.loads(report.read_text())
    assert r["best"]["error"] is None and r["best"]["times"]
    assert all(e["error"] in (None, "pruned") for e in r["evaluations"]), r["evaluations"]
    assert all("loop" in p for p in r["space"] if "categories" not in p)  # every tile size named by its loop


@pytest.mark.slow  # (13 s: tunes all three kernels; each is tuned on its own by default above)
def test_pblayout_kernels_benched(tmp_path, capsys):
    rc = main(["bench", *(kernel(n) for n in KERNELS), "--with", os.path.join(UTIL, "polybench.c"), "-I", UTIL,
               "-D", "MINI_DATASET", "-D", "POLYBENCH_TIME", "-D", "POLYBENCH_DUMP_ARRAYS", "--compilers", "gcc",
               "--runs", "2", "--max-evals", "1", "--threads", "1", "--report", str(tmp_path / "b")])
    assert rc == 0, capsys.readouterr().err
    res = json.loads((tmp_path / "b" / "results.json").read_text())
    assert [k["name"] for k in res["kernels"]] == list(KERNELS)
    for k in res["kernels"]:
        for label in ("gcc", "seed"):
            v = k["variants"][label]
            assert v["error"] is None and len(v["times"]) == 2, (k["name"], label, v)
        # no checksum line: the arrays PolyBench dumps on stderr are compared with gcc -O3's
        assert k["variants"]["seed"]["checksum_ok"] is True, k["variants"]["seed"]


def _cuda(name: str, tmp_path, defines: list[str]) -> str:
    out = tmp_path / f"{name}.cu"
    assert main(["optimize", kernel(name), "-I", UTIL, "-DMINI_DATASET", *defines, "--target", "cuda",
                 "-o", str(out)]) == 0
    return str(out)


def _c_object(tmp_path, defines: list[str], root: str = PB) -> str:
    """utilities/polybench.c compiled as C, by gcc: its functions have C linkage."""
    util = os.path.join(root, "utilities")
    obj = str(tmp_path / f"polybench{len(defines)}.o")
    subprocess.run(["gcc", "-O1", "-c", f"-I{util}", "-DMINI_DATASET", *defines, os.path.join(util, "polybench.c"),
                    "-o", obj], check=True)
    return obj


def test_cuda_output_includes_the_programs_headers_with_c_linkage(tmp_path):
    text = open(_cuda("mxv2", tmp_path, [])).read()
    for header in ("<polybench.h>", '"mxv2.h"'):
        assert re.search(r'extern "C" \{[^\n]*\n#include ' + re.escape(header) + r"\n\}", text), header
    assert re.search(r"^#include <stdio.h>$", text, re.M)  # system headers stay as they are


# One kernel's nvcc build by default (the C-linkage includes are one mechanism, and the emulated test below
# links every kernel's CUDA output with polybench.c compiled as C); the other builds run under -m slow.
@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
@pytest.mark.parametrize("name,mode", [(n, m) if (n, m) == ("mxv2", "dump") else
                                       pytest.param(n, m, marks=pytest.mark.slow)
                                       for n in KERNELS for m in ("dump", "time")])
def test_pblayout_cuda_compiles_and_links_with_nvcc(name, mode, tmp_path):
    cu = _cuda(name, tmp_path, MODES[mode])
    proc = subprocess.run([NVCC, "-arch=sm_90", "-O1", "-Xcompiler", "-w", f"-I{UTIL}",
                           f"-I{os.path.dirname(kernel(name))}", "-DMINI_DATASET",
                           *MODES[mode], cu, _c_object(tmp_path, MODES[mode]), "-o", str(tmp_path / name), "-lm"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_pblayout_cuda_tuning_build_compiles_and_links_with_nvcc():
    from polytune.measure.build import Build
    from polytune.measure.cuda import CudaBuildConfig, CudaRunner
    from polytune.pipeline import analyze
    defines = ("MINI_DATASET", "POLYBENCH_DUMP_ARRAYS")
    program = analyze(kernel("trimul"), (UTIL,), defines)
    build = CudaBuildConfig(cflags=("-O1", "-arch=sm_90"), includes=(UTIL,), defines=defines,
                            program=Build(sources=(os.path.join(UTIL, "polybench.c"),)))
    runner = CudaRunner(program, build)
    try:
        runner.compile()
        assert runner.compile_error == "" and runner.exe, runner.compile_error
    finally:
        runner.close()


@pytest.mark.parametrize("name", KERNELS)
def test_pblayout_cuda_emulated_on_cpu_prints_the_originals_dump(name, tmp_path):
    """The CUDA output run on the CPU (tests/data/cuda_emu.h), linked with polybench.c compiled as C: the
    extern "C" includes make the names match, and the arrays dumped on stderr are the original's."""
    from test_cuda import emulate
    dump = MODES["dump"]
    obj = _c_object(tmp_path, dump)
    ref_exe = str(tmp_path / "ref")
    subprocess.run(["gcc", "-O1", f"-I{UTIL}", "-DMINI_DATASET", *dump, kernel(name), obj, "-o", ref_exe, "-lm"],
                   check=True)
    ref = subprocess.run([ref_exe], capture_output=True, text=True, check=True).stderr
    emu = tmp_path / "emu.cpp"
    emu.write_text(emulate(open(_cuda(name, tmp_path, dump)).read()))
    exe = str(tmp_path / "emu")
    proc = subprocess.run(["g++", *EMU_CXXFLAGS, "-x", "c++", str(emu), "-x", "none", obj, f"-I{UTIL}",
                           f"-iquote{os.path.dirname(kernel(name))}", "-DMINI_DATASET", *dump, "-o", exe, "-lm"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = subprocess.run([exe], capture_output=True, text=True, check=True, timeout=120).stderr
    assert "begin dump" in ref and got == ref


# ---- the real PolyBench/C 4.2.1 ------------------------------------------------------------------------
POLYBENCH_DIR = os.environ.get("POLYBENCH_DIR")
REAL = {"lu": "linear-algebra/solvers/lu", "gemm": "linear-algebra/blas/gemm", "jacobi-2d": "stencils/jacobi-2d"}


@pytest.mark.skipif(not POLYBENCH_DIR, reason="POLYBENCH_DIR does not name a copy of PolyBench/C 4.2.1")
@pytest.mark.parametrize("name", sorted(REAL))
def test_real_polybench_tuned_and_emitted_for_cuda(name, tmp_path, capsys):
    d = os.path.join(POLYBENCH_DIR, REAL[name])
    util = os.path.join(POLYBENCH_DIR, "utilities")
    src = os.path.join(d, name + ".c")
    flags = ["-I", util, "-I", d, "-DMINI_DATASET", "-DPOLYBENCH_DUMP_ARRAYS"]
    report = tmp_path / "r.json"
    rc = main(["tune", src, os.path.join(util, "polybench.c"), *flags, *FAST, "--report", str(report)])
    assert rc == 0, capsys.readouterr().err
    assert json.loads(report.read_text())["best"]["error"] is None
    cu = tmp_path / f"{name}.cu"
    assert main(["optimize", src, *flags, "--target", "cuda", "-o", str(cu)]) == 0
    if NVCC is not None:
        obj = _c_object(tmp_path, ["-DPOLYBENCH_DUMP_ARRAYS"], POLYBENCH_DIR)
        proc = subprocess.run([NVCC, "-arch=sm_90", "-O1", "-Xcompiler", "-w", *flags, str(cu), obj,
                               "-o", str(tmp_path / name), "-lm"], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
