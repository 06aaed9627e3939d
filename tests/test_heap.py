"""Large scratch memory on 2 MiB pages (emit/heap.py): an expanded scalar's array (symm's temp2) and a
contraction's snapshot of its result rows (an operand reading a column the product writes earlier) from
HUGE_BYTES up are allocated 2 MiB-aligned and
advised for huge pages on Linux, and the program prints the original's results whichever path it takes."""
from __future__ import annotations

import os

import pytest
from conftest import ROOT, compile_run

from polytune.cli import main
from polytune.emit import heap

POLYBENCH = os.path.join(ROOT, "tests", "data", "polybench")
FLAGS = ["-ffp-contract=off", "-DM=37", "-DN=45"]


def _optimize(tmp_path, name: str) -> str:
    out = tmp_path / f"{name}.opt.c"
    assert main(["optimize", os.path.join(POLYBENCH, f"{name}.c"), "-o", str(out), "-q"]) == 0
    return str(out)


@pytest.mark.parametrize("src, sizes, scratch", [
    (os.path.join(POLYBENCH, "symm.c"), [], "temp2_x0"),
    # (trmm's rows below are packed from B itself since 2026-12-07: a product that keeps its snapshot; its
    # sizes are compile-time constants)
    (os.path.join(ROOT, "tests", "data", "left_column.c"), FLAGS[1:], "c_S"),
], ids=["symm", "snapshot"])
def test_scratch_from_the_threshold_up_is_on_huge_pages_and_prints_the_originals_results(
        tmp_path, monkeypatch, src, sizes, scratch):
    monkeypatch.setenv("POLYTUNE_PACK_WORK", "0")  # the packed code (and the snapshot) at these sizes
    monkeypatch.setattr(heap, "HUGE_BYTES", 1)  # every block takes the huge-page path
    out = str(tmp_path / "opt.c")
    assert main(["optimize", src, *sizes, "-o", out, "-q"]) == 0
    text = open(out).read()
    assert f"{scratch}_p = aligned_alloc((2UL << 20), {scratch}_bytes)" in text
    assert f"madvise({scratch}_p, {scratch}_bytes, 14)" in text
    expected = compile_run(src, str(tmp_path / "orig"), FLAGS, True)
    for n in (1, 2, 3):
        assert compile_run(out, str(tmp_path / f"opt{n}"), FLAGS, True, threads=n) == expected, n


def test_a_block_under_the_threshold_is_mallocs(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYTUNE_PACK_WORK", "0")
    out = _optimize(tmp_path, "symm")
    assert f"if (temp2_x0_bytes >= {heap.HUGE_BYTES}UL)" in open(out).read()
    expected = compile_run(os.path.join(POLYBENCH, "symm.c"), str(tmp_path / "orig"), FLAGS, True)
    assert compile_run(out, str(tmp_path / "opt"), FLAGS, True) == expected
