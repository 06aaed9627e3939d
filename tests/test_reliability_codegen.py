"""Issue 33's reproduction 4: isl's AST builder printed a tile wavefront over a strided domain (`i -= 3` from
a parameter, a guard `i % 2 == 0`, the subscript `(j - 1) / 2`) as loops that ran 111 of its 126 instances,
wrong at 2 and 4 threads and under OMP_THREAD_LIMIT=1 (where omp_get_max_threads() still said 2 and the
wavefront version ran). The schedule was legal; the printed code was not. Every AST is now read back and
checked before it is printed (poly/astcheck.py), and the version for one thread is picked where parallel loops
would really run on one thread.

Checked under every option set of tests/test_reliability_options.py (``ONE_EACH`` here, ``MATRIX`` in the
slow suite), each at 1, 2 and 4 threads and under OMP_THREAD_LIMIT=1, with the parallel code forced on
(conftest: POLYTUNE_PARALLEL_WORK=0).
"""
from __future__ import annotations

from pathlib import Path

import islpy as isl
import pytest
from conftest import compile_run
from test_random_nests import run_main
from test_reliability_options import CHOICES, EACH, FAST, MATRIX, _name

from polytune.emit.c import MORE_THAN_ONE_THREAD, build_ast, thread_versions
from polytune.pipeline import analyze
from polytune.poly.astcheck import CodegenMismatch, check_ast
from polytune.poly.scop import Scop

DATA = Path(__file__).parent / "data" / "issue33"
REPRO = DATA / "repro4_guard_floor_div_tiles.c"
RUNS = [(1, {}), (2, {}), (4, {}), (2, {"OMP_THREAD_LIMIT": "1"})]


def check_runs(tmp_path: Path, src: Path, options: list[str], args: tuple[str, ...] = ()) -> str:
    """*src* optimized under *options*: its output at each of RUNS is the original's. The optimized text."""
    out = tmp_path / "opt.c"
    rc, err = run_main(["optimize", str(src), "-o", str(out), *options])
    assert rc == 0, err
    ref = compile_run(str(src), str(tmp_path / "ref"), [], openmp=False, args=args)
    for threads, env in RUNS:
        got = compile_run(str(out), str(tmp_path / "opt"), [], openmp=True, threads=threads, env=env, args=args)
        assert got == ref, f"{_name(options)} at {threads} thread(s) {env}"
    return out.read_text()


def test_repro_4_gives_the_original_results_with_tiles_2_3_5_7(tmp_path):
    text = check_runs(tmp_path, REPRO, ["--tile-sizes", "2,3,5,7"])
    assert "isl's generated code loses instances" not in text


# the default suite: the default options, odd tile sizes and the last schedule choice (each ~20 s on the dev
# box); the rest of ONE_EACH under -m slow, on CI's slow line
REPRO_EACH = [pytest.param(p.values[0], id=p.id, marks=() if p.values[0] in ([], FAST[3], CHOICES[-1])
                           else pytest.mark.slow) for p in EACH]


@pytest.mark.parametrize("options", REPRO_EACH)
def test_repro_4_gives_the_original_results_under_each_option(tmp_path, options):
    check_runs(tmp_path, REPRO, options)


@pytest.mark.slow
@pytest.mark.parametrize("options", MATRIX, ids=_name)
def test_repro_4_gives_the_original_results_under_the_option_matrix(tmp_path, options):
    check_runs(tmp_path, REPRO, options)


@pytest.mark.slow  # (43 s on the dev box; on CI's slow line)
def test_repro_4_with_other_runtime_parameters(tmp_path):
    for args in (("5", "17"), ("12", "19"), ("0", "11")):
        check_runs(tmp_path, REPRO, ["--tile-sizes", "2,3,5,7"], args)


def test_the_wavefront_ast_of_repro_4_is_found_to_lose_instances_and_its_note_says_so(tmp_path):
    a = analyze(str(REPRO)).scops[0].cpu
    wave = a.tiled((2, 3, 5, 7))
    assert any(b.wavefront for b in wave.bands)
    with pytest.raises(CodegenMismatch, match="loses instances of S1"):
        check_ast(build_ast(a.scop, wave, "c"), a.scop, a.deps.all, True, "c")
    check_ast(build_ast(a.scop, a.tiled((2, 3, 5, 7), wavefront=False), "c"), a.scop, a.deps.all, True, "c")
    out = tmp_path / "o.c"
    rc, err = run_main(["optimize", str(REPRO), "-o", str(out), "--tile-sizes", "2,3,5,7"])
    assert rc == 0 and "printed wrong code for the tiled schedule" in err and "loses instances" in err


# Programs whose regions print several versions: a tile wavefront beside its version for one thread (repro 4
# with small tiles, a Gauss-Seidel sweep), and a parallel loop beside its serial copy for runs under the work
# threshold (rows of 16). Each program: options, run arguments (small and large runtime sizes), and a text
# each version prints.
VERSIONED = {
    "repro4": (REPRO, ["--tile-sizes", "2,3,5,7"], [(), ("5", "17"), ("12", "19")]),
    "seidel": (DATA / "seidel_runtime_sizes.c", ["--tile-sizes", "8,8,8"], [(), ("3", "1"), ("21", "3")]),
    "rows": (DATA / "rows_runtime_sizes.c", [], [(), ("2",), ("200",)]),
}


@pytest.mark.parametrize("work", ["0", pytest.param("64", marks=pytest.mark.slow),
                                  pytest.param("1000000000", marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", sorted(VERSIONED))
def test_every_printed_version_of_a_region_gives_the_original_results(tmp_path, monkeypatch, name, work):
    """Each version runs somewhere: the wavefront at 2 and 4 threads, the one-thread version at 1 thread,
    under OMP_THREAD_LIMIT=1 and without OpenMP, the parallel loop and its serial copy on either side of the
    work threshold (POLYTUNE_PARALLEL_WORK at 0, 64 and 10^9, small and large runtime sizes)."""
    src, options, runs = VERSIONED[name]
    monkeypatch.setenv("POLYTUNE_PARALLEL_WORK", work)
    out = tmp_path / "opt.c"
    rc, err = run_main(["optimize", str(src), "-o", str(out), *options])
    assert rc == 0, err
    text = out.read_text()
    if name == "seidel":
        assert f"if ({MORE_THAN_ONE_THREAD})" in text
    if name == "rows" and work == "64":
        assert "if (n >= 4) {" in text
    for args in runs:
        ref = compile_run(str(src), str(tmp_path / "ref"), [], openmp=False, args=args)
        for threads, env in RUNS:
            got = compile_run(str(out), str(tmp_path / "opt"), [], True, threads, env=env, args=args)
            assert got == ref, f"{name} {args} at {threads} thread(s) {env}"
        assert compile_run(str(out), str(tmp_path / "plain"), [], False, args=args) == ref


def _toy_scop(domain: str, schedule: str) -> tuple[Scop, isl.Schedule]:
    dom = isl.Set(domain)
    st = type("St", (), {"name": "S", "domain": dom})()
    scop = type("Toy", (), {"domain": isl.UnionSet(dom), "context": isl.Set("{ : }"), "statements": (st,),
                            "file": "toy.c", "begin_line": 1})()
    return scop, isl.Schedule.from_domain(isl.UnionSet(dom)).insert_partial_schedule(
        isl.MultiUnionPwAff(schedule))


def test_isls_smallest_known_lossy_ast_is_caught_and_a_plain_one_passes():
    """isl prints 6 of the 9 points of this schedule (the third member is taken for one value per tile)."""
    from polytune.poly.islutil import CTX
    scop, sched = _toy_scop("{ S[i, j] : i mod 3 = 0 and 0 <= i <= 6 and 0 <= j <= 2 }",
                            "[{ S[i, j] -> [floor(i/2)] }, { S[i, j] -> [floor((i + 2j)/3)] }, "
                            "{ S[i, j] -> [i + 2j] }]")
    build = isl.AstBuild.from_context(isl.Set("{ : }", context=CTX))
    with pytest.raises(CodegenMismatch, match="loses instances"):
        check_ast(build.node_from_schedule(sched), scop, None)
    scop, sched = _toy_scop("{ S[i, j] : 0 <= i <= 6 and 0 <= j <= 2 }",
                            "[{ S[i, j] -> [floor(i/2)] }, { S[i, j] -> [i + 2j] }]")
    check_ast(build.node_from_schedule(sched), scop, None)


def test_a_dependence_run_backwards_is_caught():
    from polytune.poly.islutil import CTX
    scop, sched = _toy_scop("{ S[i, j] : 0 <= i <= 6 and 0 <= j <= 2 }", "[{ S[i, j] -> [-i] }, { S[i, j] -> [j] }]")
    build = isl.AstBuild.from_context(isl.Set("{ : }", context=CTX))
    ast = build.node_from_schedule(sched)
    check_ast(ast, scop, isl.UnionMap("{ S[i, j] -> S[i, j + 1] }"))
    with pytest.raises(CodegenMismatch, match="sink before its source"):
        check_ast(ast, scop, isl.UnionMap("{ S[i, j] -> S[i + 1, j] }"))


def test_an_instance_run_twice_or_outside_the_domain_is_caught():
    from polytune.poly.islutil import CTX
    build = isl.AstBuild.from_context(isl.Set("{ : }", context=CTX))
    scop, _sched = _toy_scop("{ S[i] : 0 <= i <= 4 }", "[{ S[i] -> [i] }]")
    twice = build.node_from_schedule_map(isl.UnionMap("{ S[i] -> [k, i] : 0 <= k <= 1 and 0 <= i <= 4 }"))
    with pytest.raises(CodegenMismatch, match="runs some instance of S twice"):
        check_ast(twice, scop, None)
    wider = build.node_from_schedule_map(isl.UnionMap("{ S[i] -> [i] : 0 <= i <= 5 }"))
    with pytest.raises(CodegenMismatch, match="instances of S outside its domain"):
        check_ast(wider, scop, None)
    check_ast(build.node_from_schedule_map(isl.UnionMap("{ S[i] -> [4 - i] : 0 <= i <= 4 }")), scop,
              isl.UnionMap("{ S[i] -> S[i - 1] }"))


def test_a_loop_marked_parallel_that_carries_a_dependence_is_caught_and_one_that_does_not_passes():
    from polytune.poly.islutil import CTX
    from polytune.poly.marks import ParallelMark, mark_id
    scop, sched = _toy_scop("{ S[i, j] : 0 <= i <= 6 and 0 <= j <= 2 }", "[{ S[i, j] -> [i] }, { S[i, j] -> [j] }]")
    build = isl.AstBuild.from_context(isl.Set("{ : }", context=CTX))
    down_i = isl.UnionMap("{ S[i, j] -> S[i + 1, j] }")

    def marked(mark: ParallelMark) -> isl.AstNode:
        return build.node_from_schedule(sched.get_root().child(0).insert_mark(mark_id(mark)).get_schedule())
    with pytest.raises(CodegenMismatch, match="printed as parallel carries a dependence"):
        check_ast(marked(ParallelMark(0)), scop, down_i)
    check_ast(marked(ParallelMark(1)), scop, down_i)  # the j loop: no dependence across its iterations
    check_ast(marked(ParallelMark(0)), scop, down_i, parallel=False)  # (not printed as parallel)
    check_ast(marked(ParallelMark(0, private=("s",))), scop, down_i)  # (the schedule's test covers these)


def test_the_thread_test_of_the_two_versions_asks_whether_a_parallel_loop_gets_threads():
    text = thread_versions("{ par(); }\n", "{ ser(); }\n", 1)
    assert f"if ({MORE_THAN_ONE_THREAD})" in text and "omp_get_thread_limit() > 1" in MORE_THAN_ONE_THREAD
