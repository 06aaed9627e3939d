"""benchmarks/cuda_mappings.py --ppcg: PPCG's output built as benchmarks/ppcg/run.py builds it, timed in the same
rounds, and tuned's speedup over it. Without a GPU: the commands, the parsing and the tables."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POLYBENCH = os.environ.get("POLYBENCH", "/work/polybench")
PPCG_TARBALL = os.environ.get("PPCG_CUDA_TARBALL", os.path.join(ROOT, ".carry", "ppcg", "ppcg_cuda.tar.xz"))


def needs_polybench_and_ppcg(test):
    """Skipped without PolyBench/C 4.2.1 ($POLYBENCH) and prepare.sh's tarball of PPCG's output."""
    test = pytest.mark.skipif(not os.path.isfile(os.path.join(POLYBENCH, "utilities", "polybench.c")),
                              reason=f"PolyBench/C 4.2.1 not found at {POLYBENCH} (set POLYBENCH)")(test)
    return pytest.mark.skipif(not os.path.isfile(PPCG_TARBALL), reason=f"no PPCG output at {PPCG_TARBALL}")(test)


def _load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def cm():
    return _load("cuda_mappings", "benchmarks/cuda_mappings.py")


# PPCG's host code as it prints it (gemm, cut down): one launch block, the events go around it.
HOST = """#include "gemm_kernel.hu"
static void kernel_gemm(int ni, double C[1000][1100])
{
  {
    cudaCheckReturn(cudaMalloc((void **) &dev_C, (1000) * (1100) * sizeof(double)));
    {
      dim3 k0_dimBlock(16, 32);
      dim3 k0_dimGrid(35, 32);
      kernel0 <<<k0_dimGrid, k0_dimBlock>>> (dev_C);
      cudaCheckKernel();
    }

    cudaCheckReturn(cudaFree(dev_C));
  }
}
"""


def _gen(tmp_path, datasets=("LARGE", "MINI")):
    gen = tmp_path / "gen"
    for ds in datasets:
        d = gen / ds / "gemm"
        d.mkdir(parents=True)
        for f in ("gemm_host.cu", "gemm_kernel.cu", "gemm_kernel.hu"):
            (d / f).write_text(HOST if f == "gemm_host.cu" else "")
    (gen / "manifest.json").write_text(json.dumps({"ppcg_version": "ppcg-0.09", "ppcg_args": "--target=cuda",
                                                   "datasets": list(datasets),
                                                   "kernels": {"gemm": "linear-algebra/blas/gemm"}}))
    return gen


def test_ppcg_row_is_run_py_events_build_with_the_rows_defines_and_ptxas_figures(cm, tmp_path):
    pk = cm.ppcg_run.Kernel("gemm", "linear-algebra/blas/gemm", str(_gen(tmp_path)), "/pb", "LARGE")
    builds = cm.ppcg_run.timed_builds(pk, "sm_90", ["LARGE_DATASET", "POLYBENCH_TIME", "POLYBENCH_DUMP_ARRAYS"],
                                      str(tmp_path), ["-Xptxas", "-v"])
    assert [b[0] for b in builds] == list(cm.ppcg_run.VARIANTS)
    label, exe, cmd = builds[2]
    assert label == cm.ppcg_run.EVENTS == "ppcg, eager context, events"
    joined = " ".join(cmd)
    for part in ("-include " + cm.ppcg_run.EAGER_CONTEXT, "-include " + cm.ppcg_run.KERNEL_EVENTS, "-Xptxas -v",
                 "-DPOLYBENCH_DUMP_ARRAYS", "-DLARGE_DATASET", str(tmp_path / "gemm_host_events.cu"),
                 "/pb/utilities/polybench.c", f"-o {exe}"):
        assert part in joined
    events = (tmp_path / "gemm_host_events.cu").read_text()
    assert events.index("ppcg_bench_start();") < events.index("dim3 k0_dimBlock")
    assert events.index("cudaCheckKernel();") < events.index("ppcg_bench_stop();") < events.index("cudaFree")
    checks = cm.ppcg_run.check_builds(pk.at("MINI"), "sm_90", str(tmp_path))
    assert [c[0] for c in checks] == ["check MINI", "original MINI"]
    assert checks[1][1] == checks[0][1] + "_cpu" and "-DMINI_DATASET" in checks[0][2]
    assert pk.at("MINI").host.endswith(os.path.join("MINI", "gemm", "gemm_host.cu"))


def test_ppcg_output_may_be_its_tarball(cm, tmp_path):
    gen = _gen(tmp_path)
    tarball = tmp_path / "ppcg_cuda.tar.xz"
    with tarfile.open(tarball, "w:xz") as tar:
        tar.add(gen, arcname=".")
    assert cm.ppcg_run.gen_folder(str(gen), str(tmp_path / "w")) == str(gen)
    out = cm.ppcg_run.gen_folder(str(tarball), str(tmp_path / "w"))
    assert os.path.isfile(os.path.join(out, "LARGE", "gemm", "gemm_host.cu"))


def test_run_once_reads_ppcg_kernel_ms_and_polybench_time(cm, tmp_path):
    exe = tmp_path / "p"
    exe.write_text("#!/bin/sh\necho 0.006196\necho 'ppcg-kernel-ms: 0.905500' >&2\n")
    exe.chmod(0o755)
    r = cm.run_once(str(exe), keep_output=False)
    assert r["kernel_ms"] == 0.9055 and r["program_s"] == 0.006196 and r["region_ms"] is None


def _result(cm):
    def row(variant, kms, ps):
        return {"variant": variant, "kernel_ms_median": kms, "region_ms_median": None, "program_s_median": ps,
                "verified": "ok"}
    return {"kernels": [
        {"kernel": "gemm", "rows": [row(cm.DEFAULT, 0.8, 0.007), row(cm.TUNED, 0.5, 0.006),
                                    {**row(cm.PPCG, 1.0, 0.006), "mini_check": "ok"}]},
        {"kernel": "atax", "rows": [row(cm.DEFAULT, 0.25, 0.005), row(cm.PPCG, 1.0, 0.006)]},  # no tuned row
        {"kernel": "reduction_vanilla", "rows": [row(cm.DEFAULT, 1.0, 0.04), row(cm.TUNED, 0.3, 0.04)]},
    ]}


def test_speedup_over_ppcg_is_ppcg_ms_over_tuned_ms_or_the_defaults_with_a_geometric_mean(cm):
    v = cm.vs_ppcg(_result(cm))
    assert list(v["kernels"]) == ["gemm", "atax"]
    assert v["kernels"]["gemm"]["polytune"] == cm.TUNED and v["kernels"]["atax"]["polytune"] == cm.DEFAULT
    assert v["kernels"]["gemm"]["kernel_ms_speedup"] == pytest.approx(2.0)
    assert v["kernels"]["atax"]["kernel_ms_speedup"] == pytest.approx(4.0)
    assert v["kernel_ms_geomean"] == pytest.approx(8 ** 0.5) and v["kernel_ms_geomean_of"] == 2
    assert v["program_s_geomean"] == pytest.approx((1.0 * 1.2) ** 0.5)


def test_table_has_the_ppcg_section_only_with_ppcg_rows(cm):
    result = _result(cm)
    assert "vs PPCG" not in cm.table(result)
    result["vs_ppcg"] = cm.vs_ppcg(result)
    text = cm.table(result)
    assert "| gemm | ppcg (default options) | 1.0000 |  | 0.80x |" in text
    assert "| ok, MINI ok |" in text
    assert "| gemm | tuned | 0.5000 | 1.0000 | 2.00x | 0.0060 | 0.0060 | 1.00x |" in text
    assert "| geometric mean (2 kernels) | | | | 2.83x | | | 1.10x |" in text


@pytest.mark.gpu
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@needs_polybench_and_ppcg
def test_compile_only_builds_ppcg_beside_polytunes_variants(tmp_path):
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "cuda_mappings.py"), "--out", str(out),
                           "--compile-only", "--no-tune", "--kernels", "gemm,atax", "--polybench", POLYBENCH,
                           "--ppcg", PPCG_TARBALL, "--jobs", "2"],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT), timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    result = json.loads(out.read_text())
    assert result["ppcg"]["ppcg_version"]
    for k in result["kernels"]:
        rows = {r["variant"]: r for r in k["rows"]}
        assert list(rows)[-1] == "ppcg (default options)"
        assert "error" not in rows["ppcg (default options)"] and rows["ppcg (default options)"]["registers"] > 0


# An nvcc for PPCG's build on the emulator (tests/data/fake_nvcc.py, which takes one CUDA source): the
# force-included headers, PPCG's host file and its kernel file become one source, "cuda.h" and
# "cuda_runtime.h" empty (the emulation header stands first), PPCG's `k <<<g, b>>> (args)` loses its spaces,
# and polybench.c is compiled as C++ as nvcc -x cu does.
PPCG_NVCC = r'''
import os, re, subprocess, sys, tempfile
args, stubs = sys.argv[1:], tempfile.mkdtemp()
for h in ("cuda.h", "cuda_runtime.h"):
    open(os.path.join(stubs, h), "w").close()
cus = [a for a in args if a.endswith(".cu") and not a.startswith("-")]
if "-include" in args:
    forced = [args[i + 1] for i, a in enumerate(args) if a == "-include"]
    text = "".join(open(p).read() + "\n" for p in [*forced, *cus])
    text = re.sub(r"\s*<<<(.*?)>>>\s*\(", r"<<<\1>>>(", text)
    merged = os.path.join(stubs, "merged.cu")
    open(merged, "w").write(text)
    drop = {i for i, a in enumerate(args) if a == "-include"}
    drop |= {i + 1 for i in drop} | {i for i, a in enumerate(args) if a in cus}
    args = [merged, "-I", stubs, *(a for i, a in enumerate(args) if i not in drop)]
    i = args.index("-x")  # '-x cu polybench.c': as C++ (fake_nvcc drops -x), a copy named .cpp
    cpp = os.path.join(stubs, os.path.basename(args[i + 2]) + ".cpp")
    open(cpp, "w").write(open(args[i + 2]).read())
    args[i:i + 3] = [cpp]
sys.exit(subprocess.call([sys.executable, FAKE, *args]))
'''


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@needs_polybench_and_ppcg
def test_ppcg_row_is_timed_and_verified_in_the_rounds_on_the_emulator(tmp_path):
    """gemm at MINI with PPCG's row, everything built for the emulation header: PPCG's row verified against
    the CPU dump in the first round, its ppcg-kernel-ms and PolyBench time in every round, the speedup table."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "nvcc.py").write_text(f"FAKE = {os.path.join(ROOT, 'tests', 'data', 'fake_nvcc.py')!r}\n" + PPCG_NVCC)
    (bin_ / "nvcc").write_text(f"#!/bin/sh\nexec {sys.executable} {bin_ / 'nvcc.py'} \"$@\"\n")
    (bin_ / "nvcc").chmod(0o755)
    out = tmp_path / "r.json"
    env = dict(os.environ, PYTHONPATH=ROOT, PATH=f"{bin_}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "cuda_mappings.py"), "--out", str(out),
                           "--no-tune", "--kernels", "gemm", "--dataset", "MINI", "--polybench", POLYBENCH,
                           "--ppcg", PPCG_TARBALL, "--rounds", "2", "--jobs", "2"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    result = json.loads(out.read_text())
    rows = {r["variant"]: r for r in result["kernels"][0]["rows"]}
    ppcg = rows["ppcg (default options)"]
    assert ppcg["verified"] == "ok" and len(ppcg["kernel_ms"]) == len(ppcg["program_s"]) == 2, ppcg
    assert ppcg["kernel_ms_median"] >= 0 and ppcg["program_s_median"] > 0 and ppcg["registers"] == 32
    assert result["vs_ppcg"]["kernels"]["gemm"]["polytune"] == "default"
    assert result["vs_ppcg"]["kernel_ms_geomean_of"] == (1 if ppcg["kernel_ms_median"] else 0)
    assert "| geometric mean (" in proc.stdout
