"""benchmarks/roofline.py: the table names the kernels OpenBLAS runs, so that a fallback library is not read as the
ceiling."""
from __future__ import annotations

import json
import os
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import roofline  # noqa: E402

RECORD = os.path.join(ROOT, "benchmarks", "results", "devboxC_2026-12-07n_roofline_1t.json")


def test_the_table_names_the_cores_kernels_where_the_run_recorded_them_and_reads_older_records_without():
    rec = json.load(open(RECORD))
    assert "OpenBLAS's kernels" not in roofline.table(rec)
    rec["ceilings"]["openblas_core"] = "Prescott"
    assert "OpenBLAS's kernels: Prescott (the core it detected)." in roofline.table(rec).splitlines()[0]


def test_the_library_names_the_kernels_it_loaded():
    pytest.importorskip("scipy")
    name = roofline.sh([sys.executable, "-c", roofline.LIBRARY_CODE], timeout=120).strip()
    assert name and name != "unknown" and " " not in name, name  # (PyPI's scipy bundles OpenBLAS)


def test_the_librarys_first_call_is_timed_in_a_fresh_process_and_gets_its_own_column():
    pytest.importorskip("scipy")
    sizes = {"NI": 40, "NJ": 30, "NK": 20}
    code = roofline.BLAS_MAIN.format(code=roofline.BLAS_CODE["gemm"])
    first = roofline.sh([sys.executable, "-c", code, json.dumps(dict(sizes, FIRST=True))], timeout=120).split()
    warm = roofline.sh([sys.executable, "-c", code, json.dumps(dict(sizes, FIRST=False))], timeout=120).split()
    assert len(first) == len(warm) == 1 and float(first[0]) > 0 and float(warm[0]) > 0
    rec = json.load(open(RECORD))
    assert "first call" not in roofline.table(rec)
    kernel = next(iter(rec["kernels"].values()))
    times = kernel["times"]["1"]
    times["openblas-first"] = [2 * x for x in times["openblas"]]
    rows = [line for line in roofline.table(rec).splitlines() if line.startswith("|")]
    header, row = rows[0].split(" | "), rows[2].split(" | ")
    assert len(header) == len(row) and "polytune / OpenBLAS's first call" in header
    own = int(row[header.index("polytune / OpenBLAS")].rstrip("%"))
    first_call = int(row[header.index("polytune / OpenBLAS's first call")].rstrip("%"))
    assert abs(first_call - 2 * own) <= 1  # (the library's first call twice as long: twice the share)
