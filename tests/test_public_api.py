"""``import arena``: the supported names, loaded on first use, and the old import paths."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import arena

ROOT = Path(__file__).resolve().parents[1]


def test_every_public_name_is_reachable_and_is_the_defining_modules_own():
    import importlib

    assert sorted(arena.__all__) == sorted(arena._HOMES)
    for name in arena.__all__:
        assert getattr(arena, name) is getattr(importlib.import_module(arena._HOMES[name]), name), name


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        arena.Nope  # noqa: B018


def test_importing_arena_loads_none_of_its_modules():
    # The spawner imports the package before every bot it forks: it must stay empty.
    probe = "import sys, arena; print(' '.join(m for m in sys.modules if m.startswith('arena.')))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                            cwd=ROOT).stdout.split()
    assert loaded == []


def test_a_match_and_standings_through_the_public_api(tmp_path):
    result = arena.play_match("greedy", "random", games=4, seed=3)
    assert result.as_json()["games"] == 4
    outcome = arena.run_tournament(bots=["greedy", "random"], games=2, workers=1, name="api", db=tmp_path / "a.db")
    assert outcome.played == 2
    with arena.open_store(tmp_path / "a.db", read_only=True) as store:
        rows = arena.standings(store, "api")
    assert sorted(row.bot for row in rows) == ["greedy", "random"] and sum(row.games for row in rows) == 4


def test_bot_code_importing_the_old_checks_path_still_loads():
    import arena.entry.checks as checks
    import arena.testing as old

    for name in ("Check", "CheckReport", "check_code"):
        assert getattr(old, name) is getattr(checks, name)


def test_the_docs_example_of_the_python_api_runs(tmp_path, monkeypatch, capsys):
    import re

    page = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    block = re.search(r"## From Python.*?```python\n(.*?)```", page, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(block.replace("config/quick.toml", str(ROOT / "config" / "quick.toml")), {})
    printed = capsys.readouterr().out.splitlines()
    assert "'games': 10" in printed[0] and len(printed) == 6 and printed[1].startswith("1 ")
