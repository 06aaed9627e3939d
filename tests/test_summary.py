"""tune's summary never misleads: the seed, the adopted best and the fastest measured, with the test that decided
between them in words; times and ratios with three significant figures; warnings where the best is slower than
the original or the seed, and on a loaded machine, with the advice that fits."""
from __future__ import annotations

from types import SimpleNamespace

from polytune.measure.measurement import ErrorKind, Measurement
from polytune.search import SearchSpace
from polytune.search.compare import Verdict, judge
from polytune.search.evaluator import EvalRecord
from polytune.tune import (
    TuneReport,
    fastest_measured,
    loaded,
    noise_warning,
    summary,
    untimed_reason,
    wait_passively_when_loaded,
)
from polytune.units import fmt_ratio, fmt_time

SPACE = SearchSpace.from_domains({"T0": [16, 32, 64], "T1": [16, 32, 64]})
LOOPS = ("i", "j")


def m(config, *times, error=None):
    return Measurement(tuple(config), tuple(times), error)


def report(original, seed, best, evaluations, threads=2, warnings=(), **kw) -> SimpleNamespace:
    recs = tuple(EvalRecord(k + 1, e.config, e, "hill", 0, float(k)) for k, e in enumerate(evaluations))
    r = TuneReport(file="k.c", machine="m", target="c", compiler="gcc", threads=threads, strategy="hill", fit="best",
                   degree=1, shortest_hop=False, alpha=0.05, space=SPACE, original=original, seed=seed, best=best,
                   evaluations=recs, trajectory=(), stop_reason="converged", evals=len(recs), search_time=1.0,
                   loops=LOOPS, warnings=tuple(warnings), **kw)
    return SimpleNamespace(report=r)


# ---- numbers ------------------------------------------------------------------------------------------------
def test_times_have_three_significant_figures_in_the_unit_that_fits():
    assert [fmt_time(t) for t in (7.19042, 0.6, 0.0000612, 0.0009996, 2.5e-9, 0, None)] == \
        ["7.19 s", "600 ms", "61.2 us", "1.00 ms", "2.50 ns", "0 s", "-"]


def test_a_small_ratio_is_never_rounded_to_zero():
    assert [fmt_ratio(r) for r in (1, 3.456, 190.4, 0.00526, 9.996)] == ["1.00x", "3.46x", "190x", "0.00526x", "10.0x"]


# ---- the test in words --------------------------------------------------------------------------------------
def test_the_improvement_test_says_why_in_words():
    best = m((32, 32), 0.60, 0.62, 0.61)
    noisy = m((32, 64), 0.50, 0.70, 0.58)
    j = judge(noisy, best, 0.05, 0.0)
    assert j.verdict is Verdict.INSIGNIFICANT
    assert j.said("the best").startswith("not significantly faster than the best (Welch p=")
    assert "needs < 0.05; 3 and 3 runs)" in j.said("the best")
    clear = judge(m((32, 64), 0.30, 0.31, 0.30), best, 0.05, 0.0)
    assert clear.verdict is Verdict.BETTER and clear.said("the seed").startswith("significantly faster than the seed")
    once = judge(m((32, 64), 0.5), best, 0.05, 0.0)
    assert once.said("the best") == "faster than the best (medians compared: 1 and 3 runs are too few for a " \
                                    "significance test)"


# ---- the summary --------------------------------------------------------------------------------------------
def test_the_fastest_measured_that_was_not_adopted_is_named_with_the_reason():
    seed = m((32, 32), 0.60, 0.62, 0.61)
    fastest = m((32, 64), 0.50, 0.70, 0.58)
    text = summary(report(m((), 1.2, 1.2, 1.3), seed, seed, [seed, fastest]))
    lines = text.splitlines()
    assert "best = the seed i=32 j=32: 610 ms (median of 3 runs); no configuration was adopted over it" in lines
    (line,) = [ln for ln in lines if ln.startswith("fastest measured")]
    assert line.startswith("fastest measured i=32 j=64: 580 ms (median of 3 runs), not adopted: not significantly "
                           "faster than the best (Welch p=")
    assert "speedup over seed" not in text and "speedup over original: 1.97x" in lines


def test_a_seed_measured_again_is_one_configuration_not_a_slowdown_over_itself():
    first = m((32, 32), 0.60, 0.60, 0.61)
    both = m((32, 32), 0.60, 0.60, 0.61, 0.78, 0.79, 0.80)
    text = summary(report(m((), 1.0, 1.0, 1.0), first, both, [first, m((16, 32), 0.9, 0.9, 0.9), both]))
    assert ("best = the seed i=32 j=32: 695 ms (median of 6 runs) (measured again before the search stopped; its "
            "first 3: 600 ms); no configuration was adopted over it") in text
    assert "0.77x" not in text and "speedup over seed" not in text


def test_an_adopted_best_names_the_test_that_adopted_it():
    seed, best = m((32, 32), 0.60, 0.61, 0.62), m((16, 32), 0.30, 0.31, 0.30)
    text = summary(report(m((), 1.0, 1.0, 1.0), seed, best, [seed, best]))
    assert "seed i=32 j=32: 610 ms (median of 3 runs)" in text
    assert "best i=16 j=32: 300 ms (median of 3 runs), adopted: significantly faster than the seed (Welch p=" in text
    assert "speedup over seed: 2.03x" in text and "fastest measured" not in text


def test_a_best_slower_than_the_original_is_warned_about_with_the_advice_that_fits():
    seed = m((32, 32), 0.012, 0.012, 0.013)
    short = summary(report(m((), 0.00006, 0.00006, 0.00006), seed, seed, [seed]))
    assert short.splitlines()[-1] == (
        "polytune: warning: the best variant is 200x slower than the original program (12.0 ms against 60.0 us): "
        "the region runs for 60.0 us: starting threads costs more than they save at this size; tune with "
        "--threads 1 or --no-parallel, or at the size the program runs (-D)")
    busy = "polytune: warning: timings are noisy (load average 7.3 on 2 cores): ..."
    text = summary(report(m((), 0.006, 0.006, 0.006), seed, seed, [seed], warnings=(busy,)))
    assert text.splitlines()[-1].endswith("(12.0 ms against 6.00 ms): the machine is loaded: tune with --threads 1, "
                                          "or on a quiet machine")
    one = summary(report(m((), 0.006, 0.006, 0.006), seed, seed, [seed], threads=1, warnings=(busy,)))
    assert one.splitlines()[-1].endswith("the machine is loaded: tune on a quiet machine")


def test_a_slowdown_the_report_already_holds_is_said_once():
    """(tune's report holds the warning, for a reader of its file; the summary printed it a second time, and an
    older line beside it in other words: two warnings for one slowdown)"""
    from polytune.tune import slower_warnings
    seed = m((32, 32), 0.012, 0.012, 0.013)
    bare = report(m((), 0.006, 0.006, 0.006), seed, seed, [seed]).report
    held = report(m((), 0.006, 0.006, 0.006), seed, seed, [seed], warnings=tuple(slower_warnings(bare)))
    lines = summary(held).splitlines()
    assert len([ln for ln in lines if "slower than the original" in ln]) == 1


def test_a_best_slower_than_the_seed_is_warned_about():
    seed, best = m((32, 32), 0.50, 0.90, 0.51), m((16, 32), 0.52, 0.53, 0.52)
    text = summary(report(m((), 1.0, 1.0, 1.0), seed, best, [seed, best]))
    assert "polytune: warning: the adopted best is slower than the seed in the search's measurements" in text


def test_no_variant_timed_is_one_line_with_what_became_of_them():
    fails = [m((32, 32), error=ErrorKind.WRONG_ANSWER), m((16, 32), error=ErrorKind.WRONG_ANSWER),
             m((64, 32), error=ErrorKind.COMPILE)]
    line = untimed_reason(report(m((), 1.0), None, None, fails).report)
    assert line == "no variant was timed (3 evaluations: 2 wrong_answer, 1 compile)"
    assert fastest_measured(report(m((), 1.0), None, None, fails).report) is None


# ---- a loaded machine ---------------------------------------------------------------------------------------
def test_a_machine_is_loaded_when_the_cores_the_run_needs_are_busy():
    assert loaded(1.0, 2, 2) and not loaded(0.5, 2, 2)  # one busy process beside a run on both cores
    assert not loaded(1.5, 2, 1) and loaded(2.0, 2, 1)
    assert not loaded(0.4, 16, None) and loaded(1.2, 16, None)


def test_the_noise_warning_gives_the_advice_that_fits():
    w = noise_warning(m((), 0.1, 0.1, 0.1), load=3.0, cores=2, threads=2)
    assert w.endswith("tune with --threads 1, or on a quiet machine")
    w = noise_warning(m((), 0.1, 0.16, 0.1), load=0.0, cores=2, threads=2)
    assert w.endswith("use --runs 5 or more")


def test_passive_waiting_only_on_a_loaded_machine_and_never_over_the_users_choice():
    env: dict = {}
    note = wait_passively_when_loaded(2, load=3.0, cores=2, environ=env)
    assert env == {"OMP_WAIT_POLICY": "passive"} and "OMP_WAIT_POLICY=passive" in note
    env = {}
    assert wait_passively_when_loaded(2, load=0.2, cores=2, environ=env) is None and env == {}
    assert wait_passively_when_loaded(1, load=9.0, cores=2, environ=env) is None and env == {}  # no team to wait for
    env = {"GOMP_SPINCOUNT": "1000"}
    assert wait_passively_when_loaded(2, load=9.0, cores=2, environ=env) is None
    assert env == {"GOMP_SPINCOUNT": "1000"}


def test_bench_warns_where_polytunes_programs_are_slower_than_gccs_or_the_seed():
    from polytune.study import bench

    def v(median):
        return {"median": median}
    out = bench.slower_warnings({"gcc": v(0.00005), "seed": v(0.0095), "hill": v(0.0091)}, 2, [0.1, 0.1, 0.1])
    assert out[0] == ("warning: seed (tile 32) is 190x slower than gcc -O3's program (9.50 ms against 50.0 us): the "
                      "region runs for 50.0 us: starting threads costs more than they save at this size; use "
                      "--threads 1, or a larger problem size (-D)")
    assert len(out) == 2
    out = bench.slower_warnings({"gcc": v(1.0), "seed": v(0.5), "hill": v(0.6)}, 2, [0.1, 0.1, 0.1])
    assert out == ["warning: hill is slower than the seed in the session (600 ms against 500 ms): its search's "
                   "gain did not hold"]


def test_a_search_best_that_the_re_run_did_not_keep_is_said_so():
    seed, found = m((32, 32), 0.0236, 0.0236, 0.0240), m((64, 32), 0.0160, 0.0164, 0.0165)
    pg = {"median_ms": {"best": 28.5, "seed": 27.3}, "kept": "seed", "runs": 5, "max_runs": 5}
    text = summary(report(m((), 0.0013, 0.0013, 0.0013), seed, seed, [seed, found], search_best=found,
                          program_gain=pg))
    lines = text.splitlines()
    assert lines[1] == "seed i=32 j=32: 23.6 ms (median of 3 runs)"
    assert lines[2].startswith("search's best i=64 j=32: 16.4 ms (median of 3 runs), adopted: significantly faster "
                               "than the seed (Welch p=")
    assert lines[3] == ("best = the seed i=32 j=32: kept, the search's best was slower when the programs were run "
                        "again (5 interleaved runs each: best 28.5 ms, seed 27.3 ms)")
    assert "fastest measured" not in text and "no configuration was adopted" not in text
