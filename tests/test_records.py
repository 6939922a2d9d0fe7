"""The shared records: what they import."""

from __future__ import annotations

import json
import subprocess
import sys

LEAGUE_MODULES = (
    "arena.league.store", "arena.league.ratings", "arena.league.standings",
    "arena.league.crosstable", "arena.league.sprt",
)


def modules_loaded_by(*modules: str) -> set[str]:
    """The modules a fresh interpreter has loaded after importing ``modules``."""
    code = (
        "import json, sys\n"
        + "".join(f"import {module}\n" for module in modules)
        + "print(json.dumps(sorted(sys.modules)))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(run.stdout))


def test_league_modules_load_no_sandbox_plugins_referee_or_bots():
    loaded = modules_loaded_by(*LEAGUE_MODULES)
    assert set(LEAGUE_MODULES) <= loaded  # the check below means something
    forbidden = ("arena.sandbox", "arena.plugins", "arena.referee", "bots")
    unwanted = sorted(m for m in loaded if any(m == f or m.startswith(f + ".") for f in forbidden))
    assert unwanted == []


def test_records_import_nothing_of_the_arena_but_the_game():
    loaded = modules_loaded_by("arena.records")
    arena = sorted(m for m in loaded if m == "arena" or m.startswith("arena."))
    assert arena == ["arena", "arena.engine", "arena.engine.game", "arena.records"]

