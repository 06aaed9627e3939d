"""The shape of the package: no import cycle inside polytune/, and a tuner that knows no target by name."""
from __future__ import annotations

import ast
import os

from conftest import ROOT

PACKAGE = os.path.join(ROOT, "polytune")


def _modules() -> dict[str, str]:
    """Every module of polytune/ by dotted name -> its file."""
    out = {}
    for dirpath, _, files in os.walk(PACKAGE):
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(dirpath, f), ROOT)[:-3].replace(os.sep, ".")
                out[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = os.path.join(dirpath, f)
    return out


def import_graph() -> dict[str, set[str]]:
    """module -> the polytune modules it imports, at any depth of its code (function-level imports too)."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        package = mod if path.endswith("__init__.py") else mod.rpartition(".")[0]
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                # `from pkg import mod` imports the module pkg.mod where there is one, else a name of pkg
                names = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in modules else stem for a in node.names]
            for name in names:
                while name and name not in modules:  # `import polytune.x.y` of a name: its module
                    name = name.rpartition(".")[0]
                if name and name != mod:
                    graph[mod].add(name)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (a list of modules, first = last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_find_cycle_sees_a_cycle_through_a_function_level_import():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_import_graph_includes_function_level_and_relative_imports():
    graph = import_graph()
    assert "polytune.pipeline" in graph["polytune.tune"]
    assert "polytune.emit.c" in graph["polytune.pipeline"]  # imported inside generate_regions
    assert "polytune.study.report" in graph["polytune.study.bench"]  # imported inside write_outputs


def test_no_import_cycle_inside_polytune():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_tuner_names_no_target():
    with open(os.path.join(PACKAGE, "tune.py"), encoding="utf-8") as f:
        text = f.read().lower()
    assert "triton" not in text and "cuda" not in text


def test_every_cli_target_has_a_target_class_and_an_emitter():
    from polytune.pipeline import EMITTERS
    from polytune.targets import TARGET_NAMES, get_target
    assert set(TARGET_NAMES) == set(EMITTERS)
    for name in TARGET_NAMES:
        assert get_target(name).name == name
