"""The default suite's layout (docs/DESIGN.md, "Tests: what the default suite is for"): how a sweep keeps its
representatives, and how tests/suite_layout.py reads CI's slow lines (CI runs that check itself: it collects
every slow test, about a minute)."""
from __future__ import annotations

import os
import re

import pytest
import suite_layout
from conftest import ROOT, representatives
from suite_layout import CI_RUN, MANUAL, Invocation, invocations, manual, names


def _marks(p) -> list[str]:
    return [m.name for m in p.marks]


def test_a_sweep_keeps_the_named_parameters_and_marks_the_rest_slow():
    xfail = pytest.mark.xfail(reason="known")
    ps = representatives(["a", "b", pytest.param("c", marks=xfail, id="cc"), ("d", 1)], keep={"a", "cc"})
    assert [p.values for p in ps] == [("a",), ("b",), ("c",), ("d", 1)]
    assert [p.id for p in ps] == [None, None, "cc", None]  # pytest's own ids stay
    assert [_marks(p) for p in ps] == [[], ["slow"], ["xfail"], ["slow"]]


def test_a_sweep_names_its_parameters_by_the_ids_given():
    ps = representatives([1, 2, 3], keep={"two"}, ids=["one", "two", "three"])
    assert [(p.id, _marks(p)) for p in ps] == [("one", ["slow"]), ("two", []), ("three", ["slow"])]


def test_a_representative_that_names_no_parameter_is_an_error():
    with pytest.raises(AssertionError, match="'e'"):
        representatives(["a", "b"], keep={"a", "e"})


def test_the_pytest_lines_of_a_script_are_read_with_their_environment_and_arguments():
    text = """#!/bin/sh
# python3 -m pytest -m slow tests/test_commented.py
python3 -m pytest -q
X=1 Y=two python3 -m pytest -q -n 0 -m slow tests/a.py \\
    tests/b.py::test_c
python3 -m pytest -q -n 2 -m 'not slow and not gpu' tests/d.py -k 'e or f'  # the default marks
"""
    got = invocations(text)
    assert got == [Invocation((), ("-q",)),
                   Invocation((("X", "1"), ("Y", "two")), ("-q", "-n", "0", "-m", "slow", "tests/a.py",
                                                          "tests/b.py::test_c")),
                   Invocation((), ("-q", "-n", "2", "-m", "not slow and not gpu", "tests/d.py", "-k", "e or f"))]
    assert [i.runs_slow for i in got] == [False, True, False]


def test_a_manual_key_names_one_test_or_all_parameters_of_one():
    assert names("tests/t.py::test_a[*]", "tests/t.py::test_a[3]")
    assert not names("tests/t.py::test_a[*]", "tests/t.py::test_ab[3]")
    assert names("tests/t.py::test_a", "tests/t.py::test_a")
    assert not names("tests/t.py::test_a", "tests/t.py::test_a[1]")


def test_every_manual_key_names_a_test_function_of_its_file_and_gives_a_reason():
    for key, why in MANUAL.items():
        path, _, test = key.partition("::")
        with open(os.path.join(ROOT, path)) as f:
            assert re.search(rf"^def {re.escape(test.removesuffix('[*]'))}\(", f.read(), re.M), key
        assert len(why) > 20, key
    assert manual("tests/test_random_programs.py::test_random_program_same_output_slow[1999]")


def test_ci_runs_the_layout_check_and_every_file_its_slow_lines_name_exists():
    with open(CI_RUN) as f:
        text = f.read()
    assert re.search(r"^python3 tests/suite_layout\.py$", text, re.M)
    slow = [i for i in invocations(text) if i.runs_slow]
    assert slow
    for i in slow:
        for a in i.args:
            if a.startswith("tests/"):
                assert os.path.exists(os.path.join(ROOT, a.partition("::")[0])), a
    assert suite_layout.ROOT == ROOT
