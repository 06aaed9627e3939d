"""The real-C corpus (benchmarks/realc/, issue 34): loop nests written the way open-source projects write them, with
no `#pragma scop`. `polytune optimize` on each file as written, and on a copy with `#pragma scop` / `#pragma endscop`
in place of its `/* hot */` and `/* end hot */` comment lines, either keeps the program's behaviour or refuses
cleanly.

- Behaviour: the original and polytune's output are built with gcc -O3 -ffp-contract=off -fopenmp (no contraction
  into fused multiply-adds, so the comparison is exact, bit for bit) and run with the file's small sizes (its
  `small-args:` line) on 1 and 2 threads; the `checksum:` and `hash:` lines (hash: FNV-1a of the bytes of every
  output array) must equal the original's. An output identical to its input is not built (nothing changed).
- Clean refusal: exit code 2, one line `FILE:LINE: what` on stderr, no output file. Success: exit code 0, every
  stderr line located (`FILE:LINE: ...`) or polytune's summary line.

How many nests polytune optimizes is a benchmark figure (benchmarks/realc_sweep.py), not asserted here; only a
nest listed in tests/data/realc_optimized.json must stay optimized (add the nests your change makes optimized).
"Optimized" means: the report (`--report`) has a scop whose `lines` overlap the hot nest's marker lines and
that was not kept as written (its `kept` entry: the time limit ran out).
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import re
import subprocess

import pytest
from conftest import representatives

from polytune.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REALC = os.path.join(ROOT, "benchmarks", "realc")
OPTIMIZED_LIST = os.path.join(ROOT, "tests", "data", "realc_optimized.json")
NESTS = sorted(f[:-2] for f in os.listdir(REALC) if f.endswith(".c"))
MODES = ("as_written", "with_pragmas")
HOT_BEGIN, HOT_END = "/* hot */", "/* end hot */"
CFLAGS = ("-O3", "-ffp-contract=off", "-fopenmp")
LOCATED = re.compile(r"^\S+:\d+: ")
SUMMARY = re.compile(r"^polytune: \d+ scop regions? optimized")
OPTION_WARNING = re.compile(r"polytune: warning: --tile-sizes gives \d+ sizes but ")
RESULT_LINES = ("checksum:", "hash:")
SCOP_PRAGMA = re.compile(r"^\s*#\s*pragma\s+(end)?scop\b", re.M)
# The default suite's nests (docs/DESIGN.md, "Tests: what the default suite is for"): one per blocker kind of
# benchmarks/realc/README.md, the cheapest of its kind, as written; with the pragmas, the control nest and a flat
# one. Every other nest and mode is slow (CI's slow line).
REPRESENTATIVES = {
    "frame_filter": "control", "batchnorm": "flat =b, idx, elem, libm", "gemm_tn": "flat +a",
    "im2col": "flat na, call, idx", "rgb_to_gray": "ptr, prod", "leaky_bias": "struct, prod, idx, dd",
    "nbody": "cont, struct, libm", "backprop": "omp, ptr, call",
}
DEFAULT_CASES = {f"{n}-as_written" for n in REPRESENTATIVES} | {"frame_filter-with_pragmas", "gemm_tn-with_pragmas"}


@dataclasses.dataclass(frozen=True)
class Nest:
    name: str
    path: str
    text: str
    small_args: tuple[str, ...]
    hot: tuple[int, int]  # the lines of the two markers, 1-based


def load_nest(name: str) -> Nest:
    path = os.path.join(REALC, name + ".c")
    with open(path) as f:
        text = f.read()
    lines = text.splitlines()
    begins = [k + 1 for k, line in enumerate(lines) if line.strip() == HOT_BEGIN]
    ends = [k + 1 for k, line in enumerate(lines) if line.strip() == HOT_END]
    assert len(begins) == 1 and len(ends) == 1 and begins[0] < ends[0], f"{name}: one {HOT_BEGIN} ... {HOT_END} pair"
    m = re.search(r"small-args:([^*\n]*)", text)
    assert m, f"{name}: no small-args: line"
    return Nest(name, path, text, tuple(m.group(1).split()), (begins[0], ends[0]))


def with_pragmas(text: str) -> str:
    """*text* with its hot markers replaced by the scop pragmas, line for line (the line numbers stay)."""
    out = []
    for line in text.splitlines(keepends=True):
        if line.strip() == HOT_BEGIN:
            line = "#pragma scop\n"
        elif line.strip() == HOT_END:
            line = "#pragma endscop\n"
        out.append(line)
    return "".join(out)


@dataclasses.dataclass(frozen=True)
class Outcome:
    """One `polytune optimize` of one nest in one mode."""

    rc: int
    stderr: str
    source: str  # the path optimized
    source_text: str
    output: str  # the output path (it may not exist)
    report: dict | None

    @property
    def output_text(self) -> str | None:
        if not os.path.exists(self.output):
            return None
        with open(self.output) as f:
            return f.read()


_OUTCOMES: dict[tuple[str, str, tuple[str, ...]], Outcome] = {}


def optimize(nest: Nest, mode: str, workdir: str, options: tuple[str, ...] = ()) -> Outcome:
    """polytune optimize of *nest* in *mode*, run once per nest, mode and options in this process."""
    key = (nest.name, mode, options)
    if key in _OUTCOMES:
        return _OUTCOMES[key]
    d = os.path.join(workdir, f"{nest.name}-{mode}-{len(_OUTCOMES)}")
    os.makedirs(d)
    if mode == "as_written":
        src, text = nest.path, nest.text
    else:
        src, text = os.path.join(d, nest.name + ".c"), with_pragmas(nest.text)
        with open(src, "w") as f:
            f.write(text)
    out, rep = os.path.join(d, nest.name + ".opt.c"), os.path.join(d, "report.json")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = main(["optimize", src, "-o", out, "--report", rep, *options])
    report = None
    if rc == 0 and os.path.exists(rep):
        with open(rep) as f:
            report = json.load(f)
    _OUTCOMES[key] = o = Outcome(rc, err.getvalue(), src, text, out, report)
    return o


def optimizes_hot_nest(o: Outcome, nest: Nest) -> bool:
    """The report has a scop that overlaps the hot nest's lines, not one kept as written (`kept`: the time
    limit ran out in its analysis)."""
    lo, hi = nest.hot
    return o.rc == 0 and o.report is not None and any(
        s["lines"][0] <= hi and s["lines"][1] >= lo and not s.get("kept") for s in o.report.get("scops", ()))


def assert_clean(o: Outcome) -> None:
    lines = o.stderr.splitlines()
    assert o.rc in (0, 2), f"exit code {o.rc}:\n{o.stderr}"
    assert "Traceback" not in o.stderr and "internal error" not in o.stderr, o.stderr
    if o.rc == 2:
        assert len(lines) == 1 and LOCATED.match(lines[0]), f"a refusal is one line FILE:LINE: what:\n{o.stderr}"
        assert not os.path.exists(o.output), "an output file after a refusal"
    else:
        assert os.path.exists(o.output), "exit code 0 and no output"
        # (and the warning that an option's values went unused: about the command line, not a line of the file)
        odd = [line for line in lines if not (LOCATED.match(line) or SUMMARY.match(line) or OPTION_WARNING.match(line))]
        assert not odd, f"stderr lines neither located nor the summary: {odd}"


_BUILT: dict[str, str] = {}


def build(src_text: str, workdir: str) -> str:
    """The executable of C *src_text* (gcc CFLAGS), built once per text in this process."""
    key = hashlib.sha256(src_text.encode()).hexdigest()[:16]
    if key not in _BUILT:
        src, exe = os.path.join(workdir, f"b{key}.c"), os.path.join(workdir, f"b{key}")
        with open(src, "w") as f:
            f.write(src_text)
        r = subprocess.run(["gcc", *CFLAGS, src, "-o", exe, "-lm"], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"gcc failed:\n{r.stderr[-3000:]}"
        _BUILT[key] = exe
    return _BUILT[key]


def results(exe: str, args: tuple[str, ...], threads: int) -> list[str]:
    r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
    assert r.returncode == 0, f"{exe} exited with {r.returncode}:\n{r.stderr[-2000:]}"
    got = [line for line in r.stdout.splitlines() if line.startswith(RESULT_LINES)]
    assert len(got) == len(RESULT_LINES), r.stdout
    return got


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("realc"))


def check_behaviour(nest: Nest, o: Outcome, workdir: str) -> None:
    assert_clean(o)
    text = o.output_text
    if o.rc != 0 or text == o.source_text:
        return
    want = results(build(nest.text, workdir), nest.small_args, 1)
    exe = build(text, workdir)
    for threads in (1, 2):
        assert results(exe, nest.small_args, threads) == want, f"{nest.name}: different results on {threads} thread(s)"


def test_the_corpus_has_28_nests_written_without_scop_pragmas():
    assert len(NESTS) >= 28
    with open(os.path.join(REALC, "README.md")) as f:
        readme = f.read()
    for name in NESTS:
        nest = load_nest(name)
        assert not SCOP_PRAGMA.search(nest.text), f"{name} has a scop pragma"
        assert all(f'printf("{w}' in nest.text for w in ("time:", *RESULT_LINES)), name
        assert f"`{name}.c`" in readme, f"{name}.c is not in benchmarks/realc/README.md"
        copy = with_pragmas(nest.text).splitlines()
        assert len(copy) == len(nest.text.splitlines())
        assert [k + 1 for k, (a, b) in enumerate(zip(copy, nest.text.splitlines())) if a != b] == list(nest.hot)


@pytest.mark.parametrize("name,mode", representatives([(n, m) for n in NESTS for m in MODES], DEFAULT_CASES,
                                                     ids=[f"{n}-{m}" for n in NESTS for m in MODES]))
def test_optimize_keeps_a_nests_results_or_refuses_cleanly(name, mode, workdir, request):
    nest = load_nest(name)
    o = optimize(nest, mode, workdir)
    # recorded for reports (pytest --junitxml=R -o junit_family=xunit1 writes it as a property)
    request.node.user_properties.append(("optimized", optimizes_hot_nest(o, nest)))
    check_behaviour(nest, o, workdir)


def _optimized_list() -> dict[str, list[str]]:
    with open(OPTIMIZED_LIST) as f:
        return json.load(f)


def test_the_list_of_optimized_nests_names_corpus_nests():
    listed = _optimized_list()
    assert set(MODES) <= set(listed)
    for mode in MODES:
        assert set(listed[mode]) <= set(NESTS), f"{mode}: not in the corpus: {set(listed[mode]) - set(NESTS)}"


@pytest.mark.parametrize("nests", representatives(["representatives", "all"], {"representatives"}))
@pytest.mark.parametrize("mode", MODES)
def test_a_nest_optimized_before_stays_optimized(mode, nests, workdir):
    """A listed nest is optimized; where the time limit ran out in its analysis (a loaded machine: the scop is
    `kept`), it is optimized without the limit. The default suite checks the representatives' nests."""
    lost = []
    for name in _optimized_list()[mode]:
        if nests == "representatives" and f"{name}-{mode}" not in DEFAULT_CASES:
            continue
        nest = load_nest(name)
        o = optimize(nest, mode, workdir)
        if not optimizes_hot_nest(o, nest) and _kept(o, nest):
            o = optimize(nest, mode, workdir, ("--time-limit", "0"))
        if not optimizes_hot_nest(o, nest):
            lost.append(name)
    assert not lost, f"{mode}: no longer optimized: {lost}"


def _kept(o: Outcome, nest: Nest) -> bool:
    """Whether a scop over the hot nest was kept as written because the time limit ran out."""
    lo, hi = nest.hot
    return o.report is not None and any(s["lines"][0] <= hi and s["lines"][1] >= lo and s.get("kept") == "time limit"
                                        for s in o.report.get("scops", ()))


@pytest.mark.slow
@pytest.mark.parametrize("options", [("--tile-sizes", ",".join(["4", "5", "3"] * 6)), ("--schedule", "outer"),
                                     ("--schedule", "pluto"), ("--no-parallel",)], ids=["tiles453", "outer",
                                                                                        "pluto", "no-parallel"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", NESTS)
def test_optimize_keeps_a_nests_results_with_other_schedules_and_small_tiles(name, mode, options, workdir):
    nest = load_nest(name)
    check_behaviour(nest, optimize(nest, mode, workdir, options), workdir)


def _sweep():
    import importlib.util
    import sys
    spec = importlib.util.spec_from_file_location("realc_sweep", os.path.join(ROOT, "benchmarks", "realc_sweep.py"))
    module = sys.modules["realc_sweep"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sweep_reads_pollys_scops_and_the_reasons_inside_the_hot_nest_from_its_remarks():
    sweep = _sweep()
    nest = sweep.Nest("k", "/x/k.c", "", (10, 20), 11)
    stderr = "\n".join([
        "/x/k.c:11:5: remark: SCoP begins here. [-Rpass-analysis=polly-scops]",
        "/x/k.c:9:6: remark: Signed-unsigned restriction:\t[p_0] -> {  : p_0 < 0 } [-Rpass-analysis=polly-scops]",
        "/x/k.c:19:3: remark: SCoP ends here. [-Rpass-analysis=polly-scops]",
        "/x/k.c:11:5: remark: SCoP begins here. [-Rpass-analysis=polly-scops]",
        "/x/k.c:19:3: remark: SCoP ends here. [-Rpass-analysis=polly-scops]",
        "/x/k.c:12:5: remark: The following errors keep this region from being a Scop. [-Rpass-missed=polly-detect]",
        "/x/k.c:14:9: remark: This function call cannot be handled. Try to inline it. [-Rpass-missed=polly-detect]",
        "/x/k.c:40:9: remark: Failed to derive an affine function from the loop bounds. [-Rpass-missed=polly-detect]",
        "/x/k.c:15:1: remark: Invalid Scop candidate ends here. [-Rpass-missed=polly-detect]",
        "/x/k.c:30:5: remark: The following errors keep this region from being a Scop. [-Rpass-missed=polly-detect]",
        "/x/k.c:31:9: remark: No profitable polyhedral optimization found [-Rpass-missed=polly-detect]",
        "/x/k.c:32:1: remark: Invalid Scop candidate ends here. [-Rpass-missed=polly-detect]",
    ])
    scops, reasons = sweep.polly_remarks(stderr, nest)
    assert scops == [[11, 19]]
    assert reasons == ["14: This function call cannot be handled. Try to inline it."]


def test_the_sweep_finds_the_lines_of_pollys_generated_and_outlined_parallel_code():
    sweep = _sweep()
    ll = "\n".join([
        "define void @f(ptr %a) !dbg !5 {",
        "entry:",
        "  %x = load double, ptr %a, align 8, !dbg !10",
        "polly.stmt.for.body:",
        "  store double 1.0, ptr %a, align 8, !dbg !11",
        "}",
        "define internal void @f_polly_subfn(ptr %a) {",
        "polly.par.loadIVBounds:",
        "  store double 2.0, ptr %a, align 8, !dbg !12",
        "}",
        "!10 = !DILocation(line: 7, column: 3, scope: !5)",
        "!11 = !DILocation(line: 8, column: 5, scope: !5)",
        "!12 = !DILocation(line: 9, column: 5, scope: !5)",
    ])
    generated, parallel = sweep.polly_generated_lines(ll)
    assert generated == {8, 9} and parallel == {9}


def test_the_sweep_names_the_nests_timed_while_the_load_was_above_the_cores():
    sweep = _sweep()
    entries = [{"nest": "a", "load": {"1": 0.9, "2": 3.4}}, {"nest": "b", "load": {"1": 1.2, "2": 1.9}},
               {"nest": "c"}]
    assert sweep.busy_nests(entries, 2) == ["a (2 threads, load 3.4)"]
    assert sweep.busy_nests(entries, 1) == ["a (2 threads, load 3.4)", "b (1 threads, load 1.2)",
                                            "b (2 threads, load 1.9)"]
