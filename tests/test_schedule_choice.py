"""Schedule alternatives (poly/choice.py) and the cost model that ranks them (poly/cost.py): every
alternative gives the original program's results, bit for bit; the model prefers unit-stride innermost
loops and fewer parallel-region starts, and keeps Pluto's schedule on ties."""
from __future__ import annotations

import os

import pytest
from conftest import ROOT, compile_run

from polytune.errors import UsageError
from polytune.pipeline import OptimizeOptions, analyze, generate
from polytune.poly.choice import ScheduleChoice, alternatives, coordinates, parse_choice

CORPUS = os.path.join(ROOT, "tests", "data", "polybench")
FLAGS = ["-ffp-contract=off"]
ALTERNATIVES = {
    "outer": ScheduleChoice(scheduler="outer"),
    "original": ScheduleChoice(scheduler="original"),
    "fusion-max": ScheduleChoice(fusion="max"),
    "fusion-none": ScheduleChoice(fusion="none"),
    "dynamic": ScheduleChoice(omp_schedule="dynamic", unroll=2),
    "no-array-copies": ScheduleChoice(privatize_arrays=False, unroll=0),
    "vector-order": ScheduleChoice(point_order="vector"),
}
FAST = ("doitgen", "gramschmidt", "syrk", "atax", "trmm")


def test_the_default_choice_is_first_and_the_seed():
    alts = alternatives()
    assert alts[0] == ScheduleChoice()
    assert len(alts) == len(set(alts))
    assert set(coordinates()) == {"scheduler", "fusion", "omp_schedule", "privatize_arrays", "point_order", "unroll",
                                  "tiling"}


def test_choice_round_trips_through_its_record():
    c = ScheduleChoice(scheduler="outer", fusion="none", omp_schedule="dynamic", privatize_arrays=False,
                       point_order="vector", unroll=2)
    assert ScheduleChoice.from_record(c.to_record()) == c
    assert parse_choice("scheduler=outer,fusion=none,omp_schedule=dynamic,privatize_arrays=0,"
                        "point_order=vector,unroll=2") == c


@pytest.mark.parametrize("field,value", [("scheduler", "ppcg"), ("fusion", "some"), ("omp_schedule", "guided")])
def test_unknown_choice_is_a_usage_error(field, value):
    with pytest.raises(UsageError, match=f"unknown {field}"):
        ScheduleChoice(**{field: value})


@pytest.mark.parametrize("text", ["fusion", "colour=red", "unroll=x"])
def test_bad_choice_text_is_a_usage_error(text):
    with pytest.raises(UsageError):
        parse_choice(text)


def test_optimize_takes_a_choice_on_the_command_line(tmp_path):
    from polytune.cli import main
    out = tmp_path / "syrk.c"
    assert main(["optimize", os.path.join(CORPUS, "syrk.c"), "--choice", "point_order=vector,unroll=0",
                 "-o", str(out)]) == 0
    assert main(["optimize", os.path.join(CORPUS, "syrk.c"), "--choice", "fusion=some", "-o", str(out)]) == 2


def _check(name: str, choice: ScheduleChoice, tmp_path) -> None:
    src = os.path.join(CORPUS, name + ".c")
    expected = compile_run(src, str(tmp_path / "ref"), FLAGS, True)
    out = tmp_path / f"{name}.opt.c"
    out.write_text(generate(analyze(src), OptimizeOptions(choice=choice)).text)
    for threads in (2, 3):
        assert compile_run(str(out), str(tmp_path / "opt"), FLAGS, True, threads=threads) == expected, (name, choice)


@pytest.mark.parametrize("name", FAST)
@pytest.mark.parametrize("alt", sorted(ALTERNATIVES))
def test_alternative_gives_the_original_results(name, alt, tmp_path):
    _check(name, ALTERNATIVES[alt], tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(f[:-2] for f in os.listdir(CORPUS) if f.endswith(".c") and f[:-2] not in FAST))
@pytest.mark.parametrize("alt", sorted(ALTERNATIVES))
def test_alternative_gives_the_original_results_on_the_whole_corpus(name, alt, tmp_path):
    _check(name, ALTERNATIVES[alt], tmp_path)


def _model(name: str) -> str:
    a = analyze(os.path.join(CORPUS, name + ".c")).scops[0]
    return a.model_scheduler[0][0]


def test_model_prefers_unit_stride_inner_loops_gramschmidt():
    """Pluto's schedule keeps gramschmidt's i loops innermost (A[i][j] walked down a column); the outer
    schedule runs j innermost."""
    assert _model("gramschmidt") == "outer"


def test_model_prefers_fewer_parallel_regions_atax():
    """atax under Pluto's schedule is a tile wavefront (a parallel region per wavefront); the outer schedule
    has two parallel loops at the top."""
    assert _model("atax") == "outer"


@pytest.mark.parametrize("name", ["2mm", "3mm", "syr2k"])
def test_model_keeps_pluto_on_ties(name):
    assert _model(name) == "pluto"


@pytest.mark.parametrize("name", ["syrk", "syr2k"])
def test_model_moves_a_reduction_out_of_the_innermost_loop(name):
    """syrk's point loops under the stride rule run k innermost (a floating-point reduction into C[i][j],
    left scalar); the vector rule runs j innermost."""
    a = analyze(os.path.join(CORPUS, name + ".c")).scops[0]
    assert a.model_scheduler[0][1] == "vector"
