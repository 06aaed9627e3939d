"""BENCHMARKS.md is a reader's page: short, every table and figure with the command that made it and its date, and
every link and image it shows present in the repository (the run logs behind it are in docs/benchmarks-history/)."""
from __future__ import annotations

import os
import re

from conftest import ROOT

PAGE = os.path.join(ROOT, "BENCHMARKS.md")
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
COMMAND = re.compile(r"`(?:python3? |benchmarks/|polytune |\./)[^`]*`")


def _text() -> str:
    with open(PAGE, encoding="utf-8") as f:
        return f.read()


def _sections(text: str) -> list[tuple[str, str]]:
    parts = re.split(r"^## ", text, flags=re.M)
    return [(p.splitlines()[0], p) for p in parts[1:]]


def test_the_page_is_under_300_lines():
    assert len(_text().splitlines()) < 300


def test_every_link_and_image_is_in_the_repository():
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", _text()):
        if not re.match(r"\w+://", target):
            assert os.path.exists(os.path.join(ROOT, target)), target


def test_every_table_and_figure_has_a_command_and_a_date_in_its_section():
    """A figure's section names the command that made it and the date, or each row of its table does."""
    for title, body in _sections(_text()):
        if title in ("How we measure", "Machines"):
            continue
        tables = re.findall(r"(?:^\|.*\n)+", body, flags=re.M)
        figures = re.findall(r"^!\[", body, flags=re.M)
        if not tables and not figures:
            continue
        prose = re.sub(r"(?:^\|.*\n)+", "", body, flags=re.M)
        for table in tables:
            rows = table.splitlines()[2:]
            for what, pattern in (("a date", DATE), ("a command", COMMAND)):
                assert pattern.search(prose) or all(pattern.search(r) or "the same" in r for r in rows), \
                    f"{title}: a table without {what}"


def test_the_history_is_linked_from_the_page():
    text = _text()
    for name in sorted(os.listdir(os.path.join(ROOT, "docs", "benchmarks-history"))):
        assert f"docs/benchmarks-history/{name}" in text, name
