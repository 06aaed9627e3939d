"""The README's sample outputs are what the tool prints now (benchmarks/readme_samples.py): the command lines,
and the shape of every line (numbers, units and padding aside; lines that only some timings print have a
form of their own)."""
from __future__ import annotations

import importlib.util
import os
import sys

from conftest import ROOT

spec = importlib.util.spec_from_file_location("readme_samples", os.path.join(ROOT, "benchmarks", "readme_samples.py"))
samples = sys.modules["readme_samples"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(samples)


def test_shapes_leave_out_numbers_units_and_padding():
    assert samples.shape("gemm     7.19 s          2.08 ms") == samples.shape("gemm 12.0 us 3 s")
    assert samples.shape("best i=32 j=64 k=32: 1.37 s") != samples.shape("best (32, 64, 32) 1.373 s")


def test_a_line_in_an_old_format_is_stale_and_a_line_of_another_timing_is_not():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    block = samples.blocks(text)["tune-jacobi"]
    fresh = {s.name: samples.blocks(text)[s.name] for s in samples.SAMPLES}  # the README against itself
    assert samples.problems(text, fresh) == []
    stale = text.replace(block, block + "gemm: hill: best (32, 64, 32) 1.373 s, 6 evaluations, 129.9 s, max_evals\n")
    assert [p for p in samples.problems(stale, fresh) if "best (32, 64, 32)" in p]
    other = text.replace(block, block + "fastest measured i=16 j=32: 4.61 ms (median of 3 runs), not adopted: not "
                         "significantly faster than the best (Welch p=0.31, needs < 0.05; 3 and 3 runs)\n")
    assert samples.problems(other, fresh) == []


def test_the_readme_samples_are_current():
    """A fresh, smaller run of each sample's command prints lines of the README's shapes."""
    assert samples.check() == []
