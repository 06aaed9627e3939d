"""The shape of the package: no import cycle inside polytune/, between modules or between packages; no import
from a lower layer to a higher one (LAYERS, as docs/DESIGN.md draws it); a tuner that knows no target by name."""
from __future__ import annotations

import ast
import os

from conftest import ROOT

PACKAGE = os.path.join(ROOT, "polytune")

# The layers of polytune/, lowest first (docs/DESIGN.md, "Layers", says the same): each entry is a top-level
# module or subpackage ("" is the package's own __init__, the public API). A unit imports only from its own
# layer or those below, and no two units import each other, directly or around a longer loop.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "units", "timelimit", "machine", "functions", "purity", "version", "stats", "steps"),
    ("frontend",),
    ("poly", "rewrite"),
    ("detect", "emit", "linkage"),
    ("pipeline", "outpath"),
    ("workers",),
    ("measure",),
    ("search",),
    ("targets",),
    ("tune",),
    ("study",),
    ("cli", "__main__", ""),
)


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


def unit(module: str) -> str:
    """The top-level module or subpackage of polytune/ that *module* belongs to ("" for polytune itself)."""
    return module.split(".")[1] if module.count(".") else ""


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """unit -> the other units its modules import (``import_graph`` seen from the top-level packages)."""
    out: dict[str, set[str]] = {unit(m): set() for m in graph}
    for m, imported in graph.items():
        out[unit(m)] |= {unit(n) for n in imported} - {unit(m)}
    return out


def upward_imports(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """Every import from a module of a lower layer to one of a higher layer, as 'a -> b'."""
    level = {u: i for i, layer in enumerate(layers) for u in layer}
    return sorted(f"{m} -> {n}" for m, imported in graph.items() for n in imported
                  if level[unit(n)] > level[unit(m)])


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


def test_no_import_cycle_between_the_packages_of_polytune():
    cycle = find_cycle(package_graph(import_graph()))
    assert cycle is None, "package-level import cycle: " + " -> ".join(cycle)


def test_every_module_of_polytune_is_in_a_layer():
    placed = {u for layer in LAYERS for u in layer}
    assert {unit(m) for m in import_graph()} <= placed, "add the new module or package to LAYERS (and DESIGN.md)"
    assert len(placed) == sum(len(layer) for layer in LAYERS), "a unit in two layers"


def test_no_import_from_a_lower_layer_to_a_higher_one():
    assert upward_imports(import_graph()) == []


def test_the_layer_checks_see_a_package_cycle_and_an_upward_import():
    graph = {"polytune.measure.pooled": {"polytune.search.pool"}, "polytune.search.pool": {"polytune.measure.x"},
             "polytune.measure.x": set()}
    assert find_cycle(package_graph(graph)) == ["measure", "search", "measure"]
    assert upward_imports(graph) == ["polytune.measure.pooled -> polytune.search.pool"]
    assert upward_imports({"polytune.search.pool": {"polytune.measure.x"}, "polytune.measure.x": set()}) == []


def test_design_md_draws_the_layers_of_the_test():
    with open(os.path.join(ROOT, "docs", "DESIGN.md"), encoding="utf-8") as f:
        text = f.read()
    drawn = text.split("<!-- layers -->")[1]
    for i, layer in enumerate(LAYERS):
        names = ", ".join(f"`{u}`" if u else "`polytune` (`__init__`)" for u in layer)
        assert f"{i + 1}. {names}\n" in drawn, f"DESIGN.md's layer {i + 1} is not {names}"


def test_the_tuner_names_no_target():
    with open(os.path.join(PACKAGE, "tune.py"), encoding="utf-8") as f:
        text = f.read().lower()
    assert "triton" not in text and "cuda" not in text


def test_no_function_of_the_tuner_is_over_60_lines():
    """tune() is a session in stages (prepare, open measurement, search, confirm, report): none of its functions
    grows past 60 lines."""
    with open(os.path.join(PACKAGE, "tune.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    long = [f"{n.name}: {n.end_lineno - n.lineno + 1} lines" for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > 60]
    assert long == []


def test_the_measurement_path_finds_no_method_by_name():
    """The tuner, the measurer and its slots, and the search call what the Runner, Builder, Timer, WorkerPool and
    Pool protocols declare: no getattr or hasattr on runners, targets, pools or their results."""
    search = sorted(os.path.relpath(os.path.join(d, f), PACKAGE)
                    for d, _, files in os.walk(os.path.join(PACKAGE, "search")) for f in files if f.endswith(".py"))
    assert "search/strategies/hill_climbing.py" in search
    for name in ("tune.py", "measure/measurer.py", "measure/pooled.py", *search):
        with open(os.path.join(PACKAGE, name), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        calls = [n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
        assert "getattr" not in calls and "hasattr" not in calls, name


MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "deque", "Counter", "count"}
MUTATORS = {"append", "appendleft", "extend", "add", "update", "pop", "popitem", "popleft", "clear",
            "setdefault", "remove", "discard", "insert"}


def module_state(source: str) -> list[str]:
    """The module-level mutable state of a module's *source*: each ``global`` statement (a function rebinding a
    module's name), and each module-level name bound to a dict, list or set (a display, a comprehension or
    a constructor such as ``dict()``, ``deque()``, ``itertools.count()``) that a function changes (an item
    stored or deleted, an augmented assignment, a mutating method, ``next``)."""
    tree = ast.parse(source)
    found = [f"line {n.lineno}: global {', '.join(n.names)}" for n in ast.walk(tree) if isinstance(n, ast.Global)]
    containers: dict[str, int] = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, ast.AnnAssign) and node.value is not None else []
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        call = value.func if isinstance(value, ast.Call) else None
        called = call.id if isinstance(call, ast.Name) else call.attr if isinstance(call, ast.Attribute) else ""
        if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)) \
                or called in MUTABLE_CALLS:
            containers.update({t.id: node.lineno for t in targets if isinstance(t, ast.Name)})
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for fn in functions:
        for n in ast.walk(fn):
            name = None
            if isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.ctx, (ast.Store, ast.Del)):
                name = n.value.id if isinstance(n.value, ast.Name) else None
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                name = n.target.id
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in MUTATORS:
                name = n.func.value.id if isinstance(n.func.value, ast.Name) else None
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "next" and n.args:
                name = n.args[0].id if isinstance(n.args[0], ast.Name) else None
            if name in containers:
                found.append(f"line {containers[name]}: {name}, changed in {fn.name}")
    return sorted(set(found))


def test_module_state_sees_a_cache_a_counter_and_a_global():
    source = ("import itertools\nTABLE = {'a': 1}\n_CACHE: dict = {}\n_IDS = itertools.count()\n_DIR = None\n"
              "def f(k):\n    _CACHE[k] = TABLE[k]\n    return next(_IDS)\n"
              "def g():\n    global _DIR\n    _DIR = 'x'\n")
    assert module_state(source) == ["line 10: global _DIR", "line 3: _CACHE, changed in f",
                                    "line 4: _IDS, changed in f"]


def test_no_module_level_mutable_state_in_measure_or_workers():
    """What a process keeps between the steps it runs is its ``WorkerState`` (``polytune.steps``), handed to the
    steps; pools keep theirs in their instances. No module of ``measure/`` or ``workers/`` holds a cache, a
    counter or a server in a module-level name."""
    found = {}
    for package in ("measure", "workers"):
        for f in sorted(os.listdir(os.path.join(PACKAGE, package))):
            if f.endswith(".py"):
                with open(os.path.join(PACKAGE, package, f), encoding="utf-8") as src:
                    state = module_state(src.read())
                if state:
                    found[f"{package}/{f}"] = state
    assert found == {}


def test_each_strategy_in_the_registry_lives_in_a_module_of_its_own_with_its_options():
    """Adding a strategy is one module of ``search/strategies/`` (its function, its own options, its ``STRATEGY``)
    and one line of the registry."""
    import sys

    from polytune.search.strategies import STRATEGIES
    modules = [strategy.run.__module__ for strategy in STRATEGIES.values()]
    assert len(set(modules)) == len(modules), "two strategies in one module"
    for name, strategy in STRATEGIES.items():
        module = strategy.run.__module__
        assert module.rpartition(".")[0] == "polytune.search.strategies", name
        assert strategy.options.__module__ == module, f"{name}'s options live elsewhere"
        assert sys.modules[module].STRATEGY is strategy, f"{name}: the registry names another than {module}.STRATEGY"


def test_every_cli_target_has_a_target_class_and_an_emitter():
    from polytune.pipeline import EMITTERS
    from polytune.targets import TARGET_NAMES, get_target
    assert set(TARGET_NAMES) == set(EMITTERS)
    for name in TARGET_NAMES:
        assert get_target(name).name == name
