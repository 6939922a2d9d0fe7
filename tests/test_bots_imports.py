"""The built-in bots import one another one way only: no module of ``bots/`` imports,
even inside a function or for type checking, a module that imports it back. Shared
helpers and constants live in lower modules (``bots/bitboard.py``,
``bots/search_shared.py``, ``bots/lines.py``) that import no bot."""

from __future__ import annotations

import ast
from pathlib import Path

BOTS = Path(__file__).resolve().parents[1] / "bots"


def bot_modules() -> dict[str, Path]:
    return {f"bots.{path.stem}": path for path in sorted(BOTS.glob("*.py")) if path.stem != "__init__"}


def imported_bots(path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``path`` names in any import statement, wherever it stands."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # a relative import inside the bots package
                base = f"bots.{base}" if base else "bots"
            names.add(base)
            names |= {f"{base}.{alias.name}" for alias in node.names}  # from bots import solver_fast
    return names & known


def import_graph() -> dict[str, set[str]]:
    modules = bot_modules()
    return {name: imported_bots(path, set(modules)) - {name} for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as the modules along it (the first again at the end), or None."""
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        if module in path:
            return [*path[path.index(module):], module]
        if module in done:
            return None
        path.append(module)
        for target in sorted(graph[module]):
            cycle = visit(target)
            if cycle:
                return cycle
        path.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        cycle = visit(module)
        if cycle:
            return cycle
    return None


def test_the_bots_import_one_another_without_a_cycle():
    graph = import_graph()
    assert {"bots.solver", "bots.solver_fast", "bots.mcts", "bots.mcts_fast"} <= set(graph)  # the walk finds them
    assert "bots.solver_fast" in graph["bots.solver"] and "bots.mcts_fast" in graph["bots.mcts"]  # lazy ones too
    cycle = find_cycle(graph)
    assert cycle is None, "the bots import one another in a circle: " + " -> ".join(cycle or [])


def test_the_shared_modules_import_no_bot():
    graph = import_graph()
    for shared in ("bots.bitboard", "bots.search_shared", "bots.lines"):
        assert graph[shared] == set(), f"{shared} imports {sorted(graph[shared])}"


def test_the_cycle_finder_finds_one_through_a_lazy_import(tmp_path):
    (tmp_path / "a.py").write_text("from bots.b import X\n")
    (tmp_path / "b.py").write_text("def f():\n    from bots import c\n")
    (tmp_path / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import bots.a\n")
    known = {"bots.a", "bots.b", "bots.c"}
    graph = {f"bots.{name}": imported_bots(tmp_path / f"{name}.py", known) for name in "abc"}
    assert graph == {"bots.a": {"bots.b"}, "bots.b": {"bots.c"}, "bots.c": {"bots.a"}}
    assert find_cycle(graph) == ["bots.a", "bots.b", "bots.c", "bots.a"]
    assert find_cycle({"bots.a": {"bots.b"}, "bots.b": set()}) is None
