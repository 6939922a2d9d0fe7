"""The framework reaches the built-in bots only as plug-ins: the solver through
the entry-point group ``arena.solvers``, the bots' folders (for the sandbox)
through ``arena.bots``; no module of the arena imports the ``bots`` package."""

from __future__ import annotations

import ast
import json
import sys
from importlib import metadata
from pathlib import Path

import pytest

from arena.engine import solvers
from arena.engine.game import Board, Rules
from arena.ratings import analysis

ARENA = Path(__file__).resolve().parent.parent / "arena"


def test_no_module_of_the_arena_imports_the_built_in_bots():
    offenders = []
    for path in sorted(ARENA.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            if any(name == "bots" or name.startswith("bots.") for name in names):
                offenders.append(f"{path.relative_to(ARENA.parent)}:{node.lineno}")
    assert offenders == []


def test_the_built_in_solver_is_found_through_its_entry_point():
    found = {ep.name: ep.value for ep in metadata.entry_points(group=solvers.ENTRY_POINT_GROUP)}
    assert found.get("perfect") == "bots.solver:Solver"
    rules = Rules(5, 4, 4)
    solver = solvers.find_solver(rules)
    board = Board.from_moves("33", rules)
    assert solver.solve(board) is not None
    assert set(solver.solve_moves(board)) == set(board.legal_moves())


class _Stub:
    """A solver plug-in that knows one thing: every position is a draw."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules

    def solve(self, board, deadline=None, nodes=None):
        return 0

    def solve_moves(self, board, deadline=None, nodes=None):
        return dict.fromkeys(board.legal_moves(), 0)


def _installed(monkeypatch, *entries: metadata.EntryPoint) -> None:
    real = metadata.entry_points

    def entry_points(**kwargs):
        if kwargs.get("group") == solvers.ENTRY_POINT_GROUP:
            return list(entries)
        return real(**kwargs)

    monkeypatch.setattr(metadata, "entry_points", entry_points)


def test_analysis_and_solve_use_whatever_solver_is_installed(monkeypatch, cli):
    _installed(monkeypatch, metadata.EntryPoint("stub", f"{__name__}:_Stub", solvers.ENTRY_POINT_GROUP))
    values = analysis.position_values(Rules(), [3, 3], 1.0, analysis.solver_solve(Rules()))
    assert values == {0: 0, 1: 0, 2: 0}
    result = cli("solve", "44", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"score": 0, "moves": {str(c): 0 for c in range(1, 8)}}


def test_with_no_solver_installed_the_commands_say_so_in_one_line(monkeypatch, cli):
    _installed(monkeypatch)
    with pytest.raises(solvers.SolverMissing, match="no solver is installed"):
        solvers.find_solver(Rules())
    result = cli("solve", "44")
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and "no solver is installed" in result.output


def test_a_solver_that_fails_to_load_is_reported_in_one_line(monkeypatch, cli):
    _installed(monkeypatch, metadata.EntryPoint("broken", "no_such_solver_module:Solver", solvers.ENTRY_POINT_GROUP))
    result = cli("solve", "44")
    assert result.exit_code == 2
    assert "the solver 'broken'" in result.output and "ModuleNotFoundError" in result.output


class _Picky(_Stub):
    """A third-party solver that serves only 7x6 and says so with a plain ValueError."""

    def __init__(self, rules: Rules) -> None:
        if (rules.width, rules.height) != (7, 6):
            raise ValueError("only 7x6 boards")
        super().__init__(rules)


def test_a_solver_that_refuses_the_rules_is_reported_in_one_line(monkeypatch, cli):
    _installed(monkeypatch, metadata.EntryPoint("picky", f"{__name__}:_Picky", solvers.ENTRY_POINT_GROUP))
    result = cli("solve", "33", "--width", "5", "--height", "4")
    assert result.exit_code == 2, result.output
    assert result.output.strip().count("\n") == 0 and "only 7x6 boards" in result.output


def test_bot_processes_may_read_the_folders_of_installed_plug_ins_found_without_importing(monkeypatch, tmp_path):
    from arena.sandbox import process_control

    (tmp_path / "faraway_bots").mkdir()
    (tmp_path / "faraway_bots" / "__init__.py").write_text("raise RuntimeError('imported')\n")
    (tmp_path / "lone_bot.py").write_text("raise RuntimeError('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    real = metadata.entry_points
    extra = [metadata.EntryPoint("far", "faraway_bots.deep:FarBot", "arena.bots"),
             metadata.EntryPoint("lone", "lone_bot:LoneBot", "arena.bots")]
    monkeypatch.setattr(metadata, "entry_points",
                        lambda **kw: list(real(**kw)) + extra if kw.get("group") == "arena.bots" else real(**kw))
    plugins = process_control.plugin_paths()
    assert str(tmp_path / "faraway_bots") in plugins and str(tmp_path / "lone_bot.py") in plugins
    assert str(Path(__file__).resolve().parent.parent / "bots") in plugins  # the built-in ones, by entry point
    assert "faraway_bots" not in sys.modules and "lone_bot" not in sys.modules
    readable = process_control.readable_paths(plugins)
    assert set(plugins) <= set(readable)
    assert str(Path(__file__).resolve().parent.parent / "bots") not in process_control.readable_paths(())
