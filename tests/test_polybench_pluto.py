"""benchmarks/polybench/run.py's Pluto column: the `pluto` phase (polycc on every kernel, --pet only where clan
fails), `build --pluto` (the variant pluto, checked against the original's dump) and `table` (measured Pluto beside
issue 17's quoted figures). A fake polycc and a fake PolyBench tree stand in for the real ones; the one test that
needs Pluto's polycc skips when it is absent."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import time

import pytest

BENCHMARKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
POLYCC = os.environ.get("POLYCC") or shutil.which("polycc") or "/work/tools/pluto/install/bin/polycc"


@pytest.fixture(scope="module")
def run():
    spec = importlib.util.spec_from_file_location("polybench_run_pluto", os.path.join(BENCHMARKS, "polybench",
                                                                                      "run.py"))
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# A PolyBench-shaped suite of one kernel (not PolyBench's code): the harness header and source, and a kernel whose
# size comes from a dataset macro, timed with POLYBENCH_TIME and dumped with POLYBENCH_DUMP_ARRAYS.
HARNESS_H = """#ifndef POLYBENCH_H
#define POLYBENCH_H
#include <stdio.h>
void polybench_timer_start(void);
void polybench_timer_print(void);
#endif
"""
HARNESS_C = """#include <stdio.h>
void polybench_timer_start(void) {}
void polybench_timer_print(void) { printf("0.001000\\n"); }
"""
KERNEL_H = """#if defined(MINI_DATASET)
#define N 12
#elif defined(SMALL_DATASET)
#define N 20
#else
#define N 40
#endif
#define _PB_N N
"""
KERNEL_C = """#include <stdio.h>
#include "polybench.h"
#include "prefix.h"

static double A[N][N], B[N][N];

static void kernel_prefix(int n) {
  int i, j;
#pragma scop
  for (i = 1; i < _PB_N; i++)
    for (j = 1; j < _PB_N; j++)
      A[i][j] = A[i - 1][j] + A[i][j - 1] * 0.5 + B[i][j];
#pragma endscop
}

int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      A[i][j] = (i * j % 7) / 7.0;
      B[i][j] = (i + j % 5) / 5.0;
    }
  polybench_timer_start();
  kernel_prefix(N);
#ifdef POLYBENCH_TIME
  polybench_timer_print();
#endif
#ifdef POLYBENCH_DUMP_ARRAYS
  fprintf(stderr, "==BEGIN DUMP_ARRAYS==\\n");
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      fprintf(stderr, "%0.2lf ", A[i][j]);
  fprintf(stderr, "\\n==END   DUMP_ARRAYS==\\n");
#endif
  return 0;
}
"""


def fake_polybench(root) -> str:
    (root / "utilities").mkdir(parents=True)
    (root / "utilities" / "polybench.h").write_text(HARNESS_H)
    (root / "utilities" / "polybench.c").write_text(HARNESS_C)
    (root / "linear-algebra" / "prefix").mkdir(parents=True)
    (root / "linear-algebra" / "prefix" / "prefix.h").write_text(KERNEL_H)
    (root / "linear-algebra" / "prefix" / "prefix.c").write_text(KERNEL_C)
    (root / "stencils" / "other").mkdir(parents=True)
    (root / "stencils" / "other" / "other.c").write_text(KERNEL_C.replace("prefix.h", "../../linear-algebra/prefix/"
                                                                                   "prefix.h"))
    return str(root)


def fake_polycc(path, clan_fails: set[str], pet_fails: set[str]) -> str:
    """A polycc that copies its input without its SCoP pragmas to -o, failing for the named kernels: with clan (no
    --pet) for *clan_fails*, with --pet for *pet_fails*; it records its working directory beside -o."""
    path.write_text(f"""#!/bin/sh
src=$1; shift; pet=0; out=
while [ $# -gt 0 ]; do
  case $1 in --pet) pet=1;; -o) out=$2; shift;; esac; shift
done
k=$(basename $src .c)
if [ $pet = 0 ]; then for f in {' '.join(clan_fails) or 'none'}; do
  [ $k = $f ] && echo "[Clan] Error: syntax error at line 3" && exit 1; done; fi
if [ $pet = 1 ]; then for f in {' '.join(pet_fails) or 'none'}; do
  [ $k = $f ] && echo "pet: unsupported construct" && exit 1; done; fi
grep -v '#pragma.*scop' $src > $out
echo "cwd=$(pwd)" > $out.how
""")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_pluto_phase_uses_clan_and_falls_back_to_pet_per_dataset_only_where_clan_fails(run, tmp_path):
    pb = fake_polybench(tmp_path / "pb")
    polycc = fake_polycc(tmp_path / "polycc", clan_fails={"other"}, pet_fails=set())
    out = tmp_path / "src"
    assert run.main(["pluto", "--polybench", pb, "--out", str(out), "--polycc", polycc]) == 0
    rec = json.loads((out / "pluto.json").read_text())
    assert rec["flags"] == ["--tile", "--parallel"]
    prefix, other = rec["kernels"]["prefix"], rec["kernels"]["other"]
    assert (prefix["status"], prefix["frontend"], prefix["flags"]) == ("ok", "clan", ["--tile", "--parallel"])
    assert (other["status"], other["frontend"], other["flags"]) == ("ok", "pet", ["--tile", "--parallel", "--pet"])
    assert "syntax error" in other["clan_error"]
    assert sorted(other["sources"]) == ["LARGE", "MINI", "SMALL"]
    assert run.pluto_source(str(out), "prefix", "LARGE") == str(out / "prefix" / "prefix.c")
    assert run.pluto_source(str(out), "other", "MINI") == str(out / "other" / "other.MINI.c")
    assert (out / "other" / "other.MINI.c").read_text().startswith("#ifndef MINI_DATASET\n#define MINI_DATASET\n")
    # each run in its own scratch directory: polycc's .srcfilename and CLooG files stay out of the tree
    assert "cwd=" + str(out) not in (out / "prefix" / "prefix.c.how").read_text()


def test_pluto_phase_on_some_kernels_keeps_the_other_records(run, tmp_path):
    pb = fake_polybench(tmp_path / "pb")
    polycc = fake_polycc(tmp_path / "polycc", clan_fails=set(), pet_fails=set())
    out = tmp_path / "src"
    assert run.main(["pluto", "--polybench", pb, "--out", str(out), "--polycc", polycc]) == 0
    polycc = fake_polycc(tmp_path / "polycc", clan_fails={"other"}, pet_fails={"other"})
    assert run.main(["pluto", "--polybench", pb, "--out", str(out), "--polycc", polycc, "--kernels", "other"]) == 0
    kernels = json.loads((out / "pluto.json").read_text())["kernels"]
    assert (kernels["prefix"]["status"], kernels["other"]["status"]) == ("ok", "polycc failed")


def test_pluto_phase_records_why_polycc_failed(run, tmp_path):
    pb = fake_polybench(tmp_path / "pb")
    polycc = fake_polycc(tmp_path / "polycc", clan_fails={"other"}, pet_fails={"other"})
    out = tmp_path / "src"
    assert run.main(["pluto", "--polybench", pb, "--out", str(out), "--polycc", polycc, "--kernels", "other"]) == 0
    other = json.loads((out / "pluto.json").read_text())["kernels"]["other"]
    assert other["status"] == "polycc failed"
    assert "syntax error" in other["error"] and "unsupported construct" in other["error"]


def test_pluto_phase_without_polycc_says_so(run, tmp_path, capsys):
    pb = fake_polybench(tmp_path / "pb")
    assert run.main(["pluto", "--polybench", pb, "--out", str(tmp_path / "o"),
                     "--polycc", str(tmp_path / "none")]) == 2
    assert "polycc not found" in capsys.readouterr().err


def test_output_without_a_transformed_scop_is_a_failure(run, tmp_path):
    src = tmp_path / "k.c"
    src.write_text(KERNEL_C)
    polycc = tmp_path / "polycc"
    polycc.write_text("#!/bin/sh\ncp $1 $5\n")  # polycc k.c --tile --parallel -o OUT: the input, untouched
    polycc.chmod(0o755)
    err = run.polycc_once(str(polycc), str(src), str(tmp_path / "o.c"), ["--tile", "--parallel"], dict(os.environ),
                          60)
    assert err == "no transformed SCoP in the output"


@pytest.mark.slow
def test_build_adds_the_pluto_variant_and_checks_its_dump(run, tmp_path):
    """A right Pluto source is `identical`, a wrong one DIFFERENT (build exits 1), a failed one an error."""
    pb = fake_polybench(tmp_path / "pb")
    polycc = fake_polycc(tmp_path / "polycc", clan_fails={"other"}, pet_fails={"other"})
    tree = tmp_path / "src"
    assert run.main(["pluto", "--polybench", pb, "--out", str(tree), "--polycc", polycc]) == 0
    out = tmp_path / "build"
    common = ["build", "--polybench", pb, "--out", str(out), "--pluto", str(tree), "--no-clang", "--no-polly",
              "--dataset", "SMALL", "--check-march", "x86-64", "--march", "x86-64", "--jobs", "1"]
    assert run.main(common) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["variants"] == ["gcc", "polytune", "pluto"]
    assert manifest["pluto"]["flags"] == "--tile --parallel"
    by = {r["kernel"]: r for r in manifest["kernels"]}
    assert "pluto" in by["prefix"]["binaries"]
    assert by["prefix"]["check"]["pluto"] == "identical"
    assert by["prefix"]["pluto"]["frontend"] == "clan"
    assert "pluto" not in by["other"]["binaries"]
    assert by["other"]["errors"]["pluto"].startswith("polycc failed")
    wrong = (tree / "prefix" / "prefix.c").read_text().replace("* 0.5", "* 0.25")
    (tree / "prefix" / "prefix.c").write_text(wrong)
    assert run.main(common + ["--kernels", "prefix"]) == 1
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kernels"][0]["check"]["pluto"] == "DIFFERENT"


def test_build_with_no_polytune_builds_the_original_and_pluto_only(run, tmp_path):
    pb = fake_polybench(tmp_path / "pb")
    polycc = fake_polycc(tmp_path / "polycc", clan_fails=set(), pet_fails=set())
    tree = tmp_path / "src"
    assert run.main(["pluto", "--polybench", pb, "--out", str(tree), "--polycc", polycc, "--kernels", "prefix"]) == 0
    out = tmp_path / "build"
    assert run.main(["build", "--polybench", pb, "--out", str(out), "--pluto", str(tree), "--no-clang", "--no-polly",
                     "--no-polytune", "--kernels", "prefix", "--march", "x86-64", "--check-march", "x86-64"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["variants"] == ["gcc", "pluto"] and manifest["polytune_variants"] == {}
    assert sorted(manifest["kernels"][0]["binaries"]) == ["gcc", "pluto"]
    assert manifest["kernels"][0]["check"] == {"pluto": "identical"}


def test_a_command_past_its_timeout_is_killed_with_its_children(run, tmp_path):
    pidfile = tmp_path / "pid"
    rc, log = run.sh(["sh", "-c", f"sleep 60 & echo $! > {pidfile}; wait"], timeout=1)
    assert rc == 124 and "timed out" in log
    child = int(pidfile.read_text())
    time.sleep(0.2)
    try:
        state = open(f"/proc/{child}/stat").read().split(")")[-1].split()[0]
    except FileNotFoundError:
        state = "gone"
    assert state in ("gone", "Z", "X")


def test_build_at_a_dataset_the_pet_output_lacks_says_so(run, tmp_path):
    pb = fake_polybench(tmp_path / "pb")
    polycc = fake_polycc(tmp_path / "polycc", clan_fails={"other"}, pet_fails=set())
    tree = tmp_path / "src"
    assert run.main(["pluto", "--polybench", pb, "--out", str(tree), "--polycc", polycc, "--kernels", "other",
                     "--datasets", "MINI"]) == 0
    out = tmp_path / "build"
    assert run.main(["build", "--polybench", pb, "--out", str(out), "--pluto", str(tree), "--no-clang", "--no-polly",
                     "--no-polytune", "--kernels", "other", "--dataset", "SMALL", "--march", "x86-64",
                     "--check-march", "x86-64"]) == 0
    rec = json.loads((out / "manifest.json").read_text())["kernels"][0]
    assert rec["errors"]["pluto"] == "no Pluto source at SMALL (run.py pluto --datasets)"
    assert rec["check"]["pluto"] == "identical"  # the check dataset, MINI, has its output


def test_pluto_is_no_name_for_a_polytune_variant(run):
    with pytest.raises(SystemExit):
        run.parse_variants(["pluto=--schedule pluto"])


def _table(run, res: dict, tmp_path, capsys) -> str:
    """What `run.py table` prints for the results *res*."""
    path = tmp_path / "results.json"
    path.write_text(json.dumps(res))
    assert run.main(["table", str(path)]) == 0
    return capsys.readouterr().out


def test_table_gives_measured_pluto_beside_the_quoted_figures(run, tmp_path, capsys):
    res = {"dataset": "LARGE", "march": "x86-64-v4", "cpus": "0,1", "threads": 2, "rounds": 3, "cpu": "cpu",
           "started": "now", "variants": ["gcc", "polytune", "pluto", "polly"], "polytune_variants": {"polytune": ""},
           "pluto": {"flags": "--tile --parallel"},
           "kernels": {"atax": {"median": {"gcc": 1.0, "polytune": 0.5, "pluto": 0.25, "polly": 0.5},
                                "errors": {}, "check": {"polytune": "identical", "pluto": "identical"}},
                       "gemm": {"median": {"gcc": 1.0, "polytune": 0.25, "polly": 0.5},
                                "errors": {"pluto": "polycc failed: rc 1"}, "check": {"polytune": "identical"}},
                       "syrk": {"median": {"gcc": 2.0, "polytune": 1.0, "pluto": 0.5, "polly": 1.0},
                                "errors": {}, "check": {"polytune": "identical", "pluto": "DIFFERENT"}}}}
    text = _table(run, res, tmp_path, capsys)
    assert "| kernel | gcc (s) | polytune | pluto | polly | Pluto (issue 17, quoted) |" in text
    assert "| atax | 1.0000 | 2.00 | 4.00 | 2.00 | 2.20 |" in text
    assert "| gemm | 1.0000 | 4.00 | err | 2.00 | 0.68 |" in text
    assert "| syrk | 2.0000 | 2.00 | 4.00 (wrong) | 2.00 | 2.27 |" in text
    assert "- polytune: more than 5% behind Pluto (measured) on 2 of 2: atax 0.50x, syrk 0.50x." in text
    assert "- polytune: more than 5% behind Pluto's issue-17 figure on 2 of 3" in text
    assert "pluto: Pluto's `polycc --tile --parallel` output built with gcc -O3 -fopenmp, measured" in text


def test_table_without_pluto_keeps_the_quoted_column_only(run, tmp_path, capsys):
    res = {"dataset": "LARGE", "march": "x86-64-v4", "cpus": "0,1", "threads": 2, "rounds": 1, "cpu": "cpu",
           "started": "now", "variants": ["gcc", "polytune"], "polytune_variants": {"polytune": ""},
           "kernels": {"atax": {"median": {"gcc": 1.0, "polytune": 0.5}, "errors": {}, "check": {}}}}
    text = _table(run, res, tmp_path, capsys)
    assert "| kernel | gcc (s) | polytune | Pluto (issue 17, quoted) |" in text
    assert "Pluto (measured)" not in text and "measured in this run" not in text


@pytest.mark.skipif(not os.access(POLYCC, os.X_OK), reason="Pluto's polycc is not installed (POLYCC, PATH)")
def test_real_polycc_output_computes_what_the_original_does(run, tmp_path):
    pb = fake_polybench(tmp_path / "pb")
    out = tmp_path / "src"
    assert run.main(["pluto", "--polybench", pb, "--out", str(out), "--polycc", POLYCC, "--kernels", "prefix"]) == 0
    rec = json.loads((out / "pluto.json").read_text())["kernels"]["prefix"]
    assert (rec["status"], rec["frontend"]) == ("ok", "clan")
    dumps = []
    for name, src in (("orig", os.path.join(pb, "linear-algebra", "prefix", "prefix.c")),
                      ("pluto", run.pluto_source(str(out), "prefix", "SMALL"))):
        exe = str(tmp_path / name)
        subprocess.run(["gcc", "-O2", "-fopenmp", "-ffp-contract=off", "-I", os.path.join(pb, "utilities"), "-I",
                        os.path.join(pb, "linear-algebra", "prefix"), os.path.join(pb, "utilities", "polybench.c"),
                        src, "-DSMALL_DATASET", "-DPOLYBENCH_DUMP_ARRAYS", "-o", exe, "-lm"], check=True)
        dumps.append(subprocess.run([exe], capture_output=True, text=True, check=True).stderr)
    assert "#pragma omp parallel for" in open(run.pluto_source(str(out), "prefix", "SMALL")).read()
    assert dumps[0] == dumps[1]


def test_build_says_in_one_line_where_no_polybench_or_no_pluto_record_is(run, tmp_path, capsys):
    assert run.main(["build", "--polybench", str(tmp_path / "none"), "--out", str(tmp_path / "o"), "--no-clang"]) == 2
    assert capsys.readouterr().err.strip().endswith("no PolyBench kernels there (a PolyBench/C 4.2.1 tree: "
                                                   "utilities/, linear-algebra/, ...)")
    pb = fake_polybench(tmp_path / "pb")
    with pytest.raises(SystemExit, match="no pluto.json there"):
        run.main(["build", "--polybench", pb, "--out", str(tmp_path / "o"), "--pluto", str(tmp_path), "--no-clang"])
    assert not (tmp_path / "o").exists()
