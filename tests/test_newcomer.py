"""A newcomer's first hour: a light default install, the README's first commands, tile sizes named by their
loops, what `pruned` means, and a warning when timings are too noisy to trust."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import KERNELS, ROOT

from polytune.cli import main
from polytune.errors import UsageError
from polytune.measure.measurement import Measurement
from polytune.tune import describe, noise_warning

README = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
GEMM = os.path.join(KERNELS, "gemm.c")
SMALL = ["-DN=40", "--cflags=-O1", "--runs", "2", "--threads", "1", "--no-cache", "--max-evals", "2"]
# run polytune with the optional packages made unimportable, as after a plain `pip install -e .` (a finder
# that refuses them: a None in sys.modules would be seen by libraries that look there, e.g. scipy for torch)
WITHOUT_EXTRAS = """
import importlib.abc, sys
EXTRAS = ('torch', 'triton', 'matplotlib', 'pytest', 'hypothesis')
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in EXTRAS:
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
sys.meta_path.insert(0, Refuse())
from polytune.cli import main
from polytune.errors import UsageError
sys.exit(main(sys.argv[1:]))
"""


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _names(reqs) -> set[str]:
    return {re.split(r"[<>=\[ ;]", r, maxsplit=1)[0].lower() for r in reqs}


def test_default_install_is_the_cpu_path_and_extras_add_the_rest():
    p = _pyproject()
    assert _names(p["dependencies"]) == {"islpy", "pycparser", "numpy", "scipy"}
    extras = {k: _names(v) for k, v in p["optional-dependencies"].items()}
    assert {"torch", "triton"} <= extras["gpu"] and "matplotlib" in extras["plots"]
    # the tests need everything: the Triton interpreter's tests, the figures, the test tools
    assert {"pytest", "hypothesis", "torch", "triton", "matplotlib"} <= extras["dev"]


def _first_block() -> list[str]:
    block = re.search(r"```bash\n(.*?)```", README, re.S).group(1)
    return [ln.split("  #")[0].strip() for ln in block.strip().splitlines()]


def test_readme_first_command_installs_only_the_default_and_shows_the_speedup():
    first, bench, tests = _first_block()
    assert first.startswith("pip install -e . && polytune optimize benchmarks/pluto/gemm.c")
    assert bench.startswith("polytune bench benchmarks/pluto/gemm.c")
    assert tests == "pip install -e '.[dev]' && pytest"
    # its output is shown right below, with the speedup over gcc -O3
    after = README[README.index(bench):][:3000]
    assert "Speedup over gcc -O3" in after


def test_ci_runs_the_readmes_install_and_test_commands():
    ci = open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8").read()
    install, test = _first_block()[2].split(" && ")
    assert re.search(r"pip install( -q)? -e '\.\[dev\]'", ci) and install == "pip install -e '.[dev]'"
    assert re.search(r"^python3 -m pytest( -q)?$", ci, re.M) and test == "pytest"


def test_cpu_path_runs_without_the_extras(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    run = [sys.executable, "-c", WITHOUT_EXTRAS]
    out = tmp_path / "g.c"
    proc = subprocess.run([*run, "optimize", GEMM, "-DN=40", "-o", str(out)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([*run, "tune", GEMM, *SMALL], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    for extra, cmd in (("'.[gpu]'", ["tune", GEMM, "-DN=40", "--target", "triton", "--no-cache"]),
                       ("'.[plots]'", ["tune", GEMM, *SMALL, "--plot", str(tmp_path / "p.png")])):
        proc = subprocess.run([*run, *cmd], capture_output=True, text=True, env=env)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert f"pip install -e {extra}" in proc.stderr


def test_progress_lines_and_report_name_each_tile_size_by_its_loop(tmp_path, capsys):
    report = tmp_path / "r.json"
    assert main(["tune", GEMM, *SMALL, "--report", str(report)]) == 0
    captured = capsys.readouterr()
    lines = [ln for ln in captured.err.splitlines() if ln.startswith("[  ")]
    # gemm: the product is packed as a contraction (its block coordinates follow); the band of `C *= beta`
    # is (i, j): no constant member is tiled or tuned (poly/contraction.py)
    assert lines and lines[0].split()[3:5] == ["i=32", "j=32"], lines
    assert "seed i=32 j=32 blocked=on" in captured.out
    assert [p.get("loop", p["name"]) for p in json.loads(report.read_text())["space"]][:3] == ["i", "j", "blocked"]
    # the legend above them says what pruned means, in one line
    assert any(ln.strip().startswith("pruned: its first run was over 2x slower") for ln in captured.err.splitlines())


def test_skewed_and_repeated_loops_get_distinct_names(tmp_path, capsys):
    report = tmp_path / "r.json"
    assert main(["tune", os.path.join(KERNELS, "jacobi-2d.c"), "-DN=20", "-DTSTEPS=3", *SMALL[1:], "--max-evals",
                 "1", "--report", str(report)]) == 0
    # jacobi-2d's band has diamond tiles (concurrent start): its time member mirrored, 2t - i
    assert [p["loop"] for p in json.loads(report.read_text())["space"]] == ["2t+i", "2t-i", "2t+j"]


def test_domain_takes_the_loop_names_the_progress_lines_show():
    from polytune.measure.c import BuildConfig
    from polytune.pipeline import analyze
    from polytune.tune import TuneOptions, make_target
    target = make_target(analyze(GEMM, defines=("N=40",)), TuneOptions(), BuildConfig())
    i, j = target.parameters()[:2]
    space = target.space(("i=8:64:pow2", f"{j.name}=16,32"))
    assert space.params[0].values == (8, 16, 32, 64) and space.params[1].values == (16, 32)
    with pytest.raises(UsageError) as refused:
        target.space(("q=8:64",))
    assert str(refused.value) == f"--domain names unknown parameter(s) q (parameters: i ({i.name}), j ({j.name}))"


def test_describe_names_values_or_falls_back_to_the_tuple():
    assert describe((32, 64, 16), ("i", "j", "k")) == "i=32 j=64 k=16"
    assert describe((32, 64), None) == "(32, 64)"


def _original(*times: float) -> Measurement:
    return Measurement((), times)


def test_noisy_runs_of_the_original_give_one_warning_line():
    w = noise_warning(_original(0.10, 0.16, 0.11), load=0.1, cores=8)
    assert w and "\n" not in w and "spread 55% of their median" in w and "--runs" in w


def test_a_loaded_machine_gives_the_warning():
    w = noise_warning(_original(0.10, 0.10, 0.10), load=12.5, cores=2)
    assert w and "load average 12.5 on 2 cores" in w


def test_quiet_measurements_give_no_warning():
    assert noise_warning(_original(0.100, 0.104, 0.098), load=0.5, cores=8) is None
    assert noise_warning(_original(0.100), load=None, cores=8) is None
