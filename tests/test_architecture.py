"""The folder layout is the architecture: every import inside ``arena`` runs down
the layers (see docs/architecture.md), and the framework never imports a plug-in."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ARENA = Path(__file__).resolve().parents[1] / "arena"

# What each room may import, besides itself. Imports made inside functions count
# too: a lazy import that runs back up is still an arrow back up.
BASE = {"errors", "text"}
ALLOWED: dict[str, set[str]] = {
    # the contract every room shares
    "errors": set(),
    "text": set(),
    "engine": BASE,
    "records": BASE | {"engine", "render"},
    # games and matches drawn as HTML for a notebook (the records' replays load it when asked)
    "render": BASE | {"engine"},
    "bot": BASE | {"engine", "records"},
    "formats": BASE | {"engine", "records"},
    # playing: the protocol a bot is spoken to in, containment, finding bots, one game
    "protocol": BASE | {"engine", "records", "bot"},
    "sandbox": BASE | {"engine", "records", "bot", "protocol"},
    "players": BASE | {"engine", "records", "bot", "protocol", "sandbox"},
    "referee": BASE | {"engine", "records", "bot", "protocol", "players"},
    # reading results: never the sandbox, never a bot
    "store": BASE | {"engine", "records", "render"},
    "ratings": BASE | {"engine", "records", "store"},
    # how a bot gets in: the only room above the sandbox that starts bots outside a game
    "entry": BASE | {"engine", "records", "bot", "protocol", "sandbox", "players", "referee", "store"},
    "tournament": BASE | {"engine", "records", "bot", "sandbox", "players", "referee", "store", "ratings", "entry",
                          "render"},
    "league": BASE | {"engine", "records", "players", "store", "ratings", "entry", "tournament"},
    # people: the terminal, the site, the command
    "terminal": BASE | {"formats", "engine", "records", "bot", "protocol", "players", "referee", "store", "ratings",
                        "tournament"},
    "web": BASE | {"formats", "engine", "records", "players", "store", "ratings", "entry", "league"},
    "cli": BASE | {"formats", "engine", "records", "bot", "sandbox", "players", "referee", "store", "ratings",
                   "entry", "tournament", "league", "terminal", "web"},
    # compatibility modules: old import paths that only re-export
    "game": {"engine"},
    "testing": {"entry"},
    "__main__": {"cli", "protocol"},
    # the public API: names loaded on first use, calls that import what they run
    "__init__": BASE | {"api", "bot", "engine", "records"},
    "api": BASE | {"engine", "records", "store", "ratings", "tournament"},
}


# Launchers run with ``python -m``: nothing imports them, so they may reach up.
# ``python -m arena.engine BOT`` runs a bot as a program of the protocol.
LAUNCHERS = {"arena.engine.__main__": "__main__"}


def room_of(module: str) -> str:
    """``arena.store.games`` -> ``store``; ``arena.bot`` -> ``bot``."""
    if module in LAUNCHERS:
        return LAUNCHERS[module]
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(ARENA.rglob("*.py")):
        parts = path.relative_to(ARENA.parent).with_suffix("").parts
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        found.append((".".join(parts), path))
    return found


def imports_of(module: str, path: Path) -> list[tuple[int, str]]:
    """Every module named by an import statement in ``path``, with its line."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            if base in ("arena", "bots"):  # from arena import landlock: the module is arena.landlock
                names += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
            else:
                names.append((node.lineno, base))
    return names


@pytest.mark.parametrize(("module", "path"), modules(), ids=[m for m, _ in modules()])
def test_imports_run_down_the_layers(module, path):
    room = room_of(module)
    assert room in ALLOWED, f"{module}: room {room!r} is not in the layer table of this test and docs/architecture.md"
    wrong = []
    for line, name in imports_of(module, path):
        if name == "bots" or name.startswith("bots."):
            wrong.append(f"line {line}: imports the built-in bots ({name}); reach them as plug-ins")
        if not name.startswith("arena.") or name.count(".") < 1:
            continue
        target = room_of(name)
        if target != room and target not in ALLOWED[room] and target in ALLOWED:
            wrong.append(f"line {line}: {room} imports {name} ({target})")
    assert not wrong, f"{module} imports against the layers:\n" + "\n".join(wrong)


def test_every_room_is_a_folder_or_a_module_of_arena():
    present = {room_of(module) for module, _ in modules()}
    assert present <= set(ALLOWED), sorted(present - set(ALLOWED))


# Every public name of arena.game before the engine moved into arena/engine/.
OLD_GAME_NAMES = {
    "MIN_SIZE", "MAX_SIZE", "SCORINGS", "PLAYER_MARKS", "RulesError", "IllegalMoveError", "NotationError",
    "Rules", "line_plan", "count_lines", "has_line", "Board", "column_label", "format_move", "move_names",
    "format_moves", "parse_move", "parse_moves", "render",
}


def test_bot_code_importing_the_old_engine_path_still_loads():
    import arena.engine.game as engine
    import arena.game as old

    for name in OLD_GAME_NAMES:
        assert getattr(old, name) is getattr(engine, name), name


# Reading results (the site, the tables, the statistics) never loads the sandbox:
# a web server or a notebook that shows standings starts no bot and needs none of it.
READERS = ["arena.web.app", "arena.ratings.standings", "arena.ratings.crosstable", "arena.ratings.selection",
           "arena.ratings.sprt", "arena.ratings.analysis", "arena.ratings.results_file", "arena.store",
           "arena.league.policy", "arena.entry.checks", "arena.entry.submissions"]


@pytest.mark.parametrize("module", READERS)
def test_reading_results_loads_no_sandbox_module(module):
    import subprocess
    import sys

    probe = f"import sys, {module}; print(' '.join(m for m in sys.modules if m.startswith('arena.sandbox')))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                            cwd=ARENA.parent).stdout.split()
    assert loaded == [], f"import {module} loads {loaded}"


def test_rooms_below_entry_never_import_the_sandbox():
    for room in ("store", "ratings", "formats", "engine", "records", "bot", "errors", "text", "protocol"):
        assert "sandbox" not in ALLOWED[room], room


def type_only_lines(path: Path) -> set[int]:
    """The lines of imports under ``if TYPE_CHECKING:``: read by the type checker only."""
    lines = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            lines |= {inner.lineno for inner in ast.walk(node) if isinstance(inner, ast.Import | ast.ImportFrom)}
    return lines


def import_graph() -> dict[str, set[str]]:
    """Module -> the arena modules it imports when it runs (at the top or inside a
    function; an import the type checker alone reads is no arrow at run time)."""
    found = dict(modules())
    graph: dict[str, set[str]] = {}
    for module, path in found.items():
        targets = set()
        type_only = type_only_lines(path)
        for line, name in imports_of(module, path):
            if line in type_only:
                continue
            while name and name not in found:  # a name imported from a module: the module
                name = name.rpartition(".")[0]
            if name and name != module and name != "arena":
                targets.add(name)
        graph[module] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_import_graph_has_no_circle():
    assert circles(import_graph()) == []


def test_a_circle_is_found():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# The database is one room: no other module writes SQL or reaches into a store's
# connection. What it needs from the database is a method of a repository there
# (``store.games``, ``store.accounts``, ...), or ``store.transaction()``.
SQL_LIBRARIES = {"sqlite3", "sqlite_utils"}
CONNECTION_CALLS = {"execute", "executemany", "executescript", "atomic", "query", "table", "conn"}


def test_no_sql_outside_the_store():
    wrong = []
    for module, path in modules():
        if room_of(module) == "store":
            continue
        for line, name in imports_of(module, path):
            if name.split(".")[0] in SQL_LIBRARIES:
                wrong.append(f"{module} line {line}: imports {name}")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr in CONNECTION_CALLS
                    and isinstance(node.value, ast.Attribute) and node.value.attr == "db"):
                wrong.append(f"{module} line {node.lineno}: uses a store's connection (.db.{node.attr})")
    assert not wrong, "SQL outside arena/store:\n" + "\n".join(wrong)
