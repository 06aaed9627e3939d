"""Differential tests on PolyBench/C 4.2.1 kernels that polytune was not developed on.

Every ``tests/data/polybench/*.c`` is one PolyBench kernel with its original loop nests (triangular
bounds, scalars carried across iterations, sqrt/exp/pow, data-dependent ``?:``, loops counting down),
small default sizes, and a ``main`` that prints, for each array the kernel writes, its sum and a hash of
its bytes: any last-bit change shows. ``polytune optimize`` with the default options and with
``--tile-sizes 4,8,5`` must give a program whose output is identical to the original's, both compiled
with ``-ffp-contract=off`` (README: the transformations keep every element's sequence of operations).

A kernel polytune currently gets wrong goes into ``XFAIL`` with its symptom (a strict xfail, so the fix
flips it).
"""
from __future__ import annotations

import os

import pytest
from conftest import ROOT, compile_run

from polytune.cli import main

CORPUS = os.path.join(ROOT, "tests", "data", "polybench")
NAMES = sorted(f[:-2] for f in os.listdir(CORPUS) if f.endswith(".c"))
OPTIONS = {"default": [], "tiles-4-8-5": ["--tile-sizes", "4,8,5"]}
FLAGS = ["-ffp-contract=off"]
# (name, option key) -> symptom, for kernels polytune currently miscompiles or rejects.
XFAIL: dict[tuple[str, str], str] = {}
# Odd tile sizes run under -m slow (CI's slow line), and so do the default options of the kernels another test
# of the default suite optimizes with them and compares the same way: symm in test_expand.py.
DEFAULT_ELSEWHERE = {"symm"}
# The three kernels whose analysis and builds take several times the others' (deriche, ludcmp, adi: 5-14 s each)
# run under -m slow too (the default suite's time budget).
DEFAULT_SLOW = {"deriche", "ludcmp", "adi"}


def _cases():
    for name in NAMES:
        for key in OPTIONS:
            marks = [pytest.mark.xfail(strict=True, reason=XFAIL[name, key])] if (name, key) in XFAIL else []
            if key != "default" or name in DEFAULT_ELSEWHERE | DEFAULT_SLOW:  # the default suite's time budget
                marks.append(pytest.mark.slow)
            yield pytest.param(name, key, marks=marks, id=f"{name}-{key}")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    d = tmp_path_factory.mktemp("polybench_ref")
    cache: dict[str, str] = {}

    def get(name: str) -> str:
        if name not in cache:
            cache[name] = compile_run(os.path.join(CORPUS, name + ".c"), str(d / name), FLAGS, True)
        return cache[name]

    return get


def test_corpus_is_complete():
    assert len(NAMES) >= 21, NAMES


@pytest.mark.parametrize("name,key", list(_cases()))
def test_polybench_optimized_output_is_identical(name, key, reference, tmp_path):
    expected = reference(name)
    assert expected.count("hash") >= 1
    out = tmp_path / f"{name}.opt.c"
    assert main(["optimize", os.path.join(CORPUS, name + ".c"), *OPTIONS[key], "-o", str(out)]) == 0
    got = compile_run(str(out), str(tmp_path / name), FLAGS, True)
    assert got == expected, f"{name} {OPTIONS[key]}:\n--- original\n{expected}--- optimized\n{got}"
