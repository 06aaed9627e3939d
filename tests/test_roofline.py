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
