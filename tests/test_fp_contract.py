"""README's promise on floating-point results (issue 33): the C output computes bit-identical results when gcc
does not contract multiply-adds (`-ffp-contract=off`, or an ISO C mode such as `-std=c11`), under every option
set (the default suite: FAST; -m slow: ONE_EACH and MATRIX), at 1, 2 and 4 threads, even with
`-march=native`; conv2d is the kernel whose last bits differed under
GNU C's default `-ffp-contract=fast` (at N=64, under every option set but the default, on an FMA machine)."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from conftest import KERNELS, compile_run
from test_int_types import _name
from test_random_nests import run_main
from test_reliability_options import FAST, MATRIX, ONE_EACH

SIZES = ["-DN=64", "-DNC=8"]
NO_CONTRACTION = [["-O3", "-march=native", "-ffp-contract=off"], ["-O3", "-march=native", "-std=c11"]]


def _checksum(output: str) -> str:
    return re.search(r"checksum: (\S+)", output).group(1)


def check(tmp_path: Path, options: list[str], monkeypatch) -> None:
    monkeypatch.setenv("POLYTUNE_PARALLEL_WORK", "0")
    text = Path(os.path.join(KERNELS, "conv2d.c")).read_text().replace("checksum: %.10e", "checksum: %a")
    src, out = tmp_path / "conv2d.c", tmp_path / "conv2d.opt.c"
    src.write_text(text)
    rc, err = run_main(["optimize", str(src), "-o", str(out), *SIZES, *options])
    assert rc == 0, err
    for flags in NO_CONTRACTION:
        ref = _checksum(compile_run(str(src), str(tmp_path / "ref"), [*flags, *SIZES], openmp=True, threads=1))
        for threads in (1, 2, 4):
            got = compile_run(str(out), str(tmp_path / "opt"), [*flags, *SIZES], openmp=True, threads=threads)
            assert _checksum(got) == ref, f"{' '.join(flags)}, {_name(options)}, {threads} thread(s)"


@pytest.mark.parametrize("options", FAST, ids=_name)
def test_results_are_bit_identical_without_fp_contraction(tmp_path, monkeypatch, options):
    check(tmp_path, options, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("options", ONE_EACH + MATRIX, ids=_name)
def test_results_are_bit_identical_without_fp_contraction_under_the_option_matrix(tmp_path, monkeypatch, options):
    check(tmp_path, options, monkeypatch)
