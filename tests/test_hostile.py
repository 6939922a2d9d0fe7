"""Hostile bots in a real tournament: each loses its own games by the right forfeit
(or plays harmlessly), the tournament completes, and the database is intact."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from arena.sandbox import landlock
from arena.store import Store
from arena.tournament.config import load_config
from arena.tournament.entrants import resolve_bots
from arena.tournament.executors import ProcessExecutor
from arena.tournament.runner import run_tournament
from tests.conftest import TEST_BOTS, processes_named

HOSTILE = TEST_BOTS / "hostile.py"
FORFEITS = {
    "Raises": 'crashed: RuntimeError: "hostile raise" (hostile.py line 16, in choose_move)',
    "ReturnsNone": "not a move: None (NoneType)",
    "ReturnsString": "not a move: '4' (str)",
    "ReturnsFloat": "not a move: 2.5 (float)",
    "IllegalColumn": "illegal move: 99 is out of range 0..6",
    "FullColumn": "illegal move: 1, column is full",
    "SleepsForever": "time: no answer within",
    "BusyLoops": "time: no answer within",
    "AllocatesWithoutBound": "memory: over the 64 MB limit",
    "ExitsAbruptly": "exited with code 3",
    "PrintsTooMuch": "output: printed more than the 64 KB allowed",
}
HARMLESS = ["ForksChildren", "ClosesStdio", "MutatesBoard", "OpensDatabase", "FillsItsFolder", "RemembersGames",
            "ClaimsRootPowers", "PeeksAtItsParent"]
if landlock.abi_version() >= 6:  # elsewhere a bot of the arena's own user can signal its worker
    HARMLESS.append("KillsItsParent")


@pytest.fixture(scope="module")
def tournament(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    db = str(folder / "arena.db")
    challengers = [f"{HOSTILE}:{name}" for name in [*FORFEITS, *HARMLESS]]
    challengers[challengers.index(f"{HOSTILE}:OpensDatabase")] = f"{HOSTILE}:OpensDatabase:path={db}"
    for name in ("PeeksAtItsParent", "KillsItsParent"):  # at this process: the workers' parent
        if f"{HOSTILE}:{name}" in challengers:
            challengers[challengers.index(f"{HOSTILE}:{name}")] = f"{HOSTILE}:{name}:target={os.getpid()}"
    challengers.append(str(TEST_BOTS / "missing_import.py"))
    # Every game starts with column 1 full, so FullColumn's answer is illegal at once.
    (folder / "openings.txt").write_text("111111\n")
    overrides = {
        "openings.file": str(folder / "openings.txt"),
        "name": "hostile", "format": "gauntlet", "challengers": challengers, "bots": ["random"],
        "games": 2, "seed": 5, "db": db, "time.move_seconds": 1.0,
        "limits.memory_mb": 64, "limits.output_kb": 64,
    }
    # The missing import is refused before any game is played: test that, then drop it.
    with pytest.raises(ValueError, match="failed to import: ModuleNotFoundError"):
        resolve_bots(load_config(None, overrides), None)
    overrides["challengers"] = challengers[:-1]
    config = load_config(None, overrides)
    store = Store(db)
    pool = ProcessExecutor(2)
    try:
        outcome = run_tournament(config, store, pool)
    finally:
        pool.close()
    return outcome, store, db


def games_of(store, name):
    return [g for g in store.games.all(tournament="hostile") if f":{name}" in g.first + g.second]


def infos_of(store, name):
    """What a bot reported with its moves, over both its games (which must exist)."""
    games = games_of(store, name)
    assert len(games) == 2
    infos = [json.loads(m.info) for game in games for m in store.games.moves(game.id) if m.info]
    assert infos, f"{name} reported nothing"
    return infos


def test_the_tournament_completes(tournament):
    outcome, store, _ = tournament
    assert not outcome.interrupted
    assert outcome.played == outcome.scheduled == 2 * (len(FORFEITS) + len(HARMLESS))
    assert store.tournaments.get("hostile").status == "finished"


@pytest.mark.parametrize("name", list(FORFEITS))
def test_each_hostile_bot_loses_by_the_right_forfeit(tournament, name):
    _, store, _ = tournament
    games = games_of(store, name)
    assert len(games) == 2
    for game in games:
        hostile_first = f":{name}" in game.first
        assert game.termination == "forfeit"
        assert game.winner == (1 if hostile_first else 0)  # random gets the win
        assert game.reason.startswith(FORFEITS[name]), game.reason


@pytest.mark.parametrize("name", HARMLESS)
def test_harmless_tricks_do_not_forfeit(tournament, name):
    _, store, _ = tournament
    for game in games_of(store, name):
        assert game.termination in ("win", "draw"), game.reason


LANDLOCK = landlock.abi_version()


@pytest.mark.skipif(LANDLOCK < 1, reason="no Landlock on this kernel: bots run as the arena's user")
def test_the_database_cannot_be_touched_by_a_bot(tournament):
    _, store, db = tournament
    assert Path(db).exists()
    for info in infos_of(store, "OpensDatabase"):
        assert info["write"] != "done" and info["delete"] != "done"
        assert info["read"] != "done"  # Landlock: the database is not even readable
    total = store.db.execute("select count(*) from moves").fetchone()[0]
    assert total == sum(g.plies for g in store.games.all(tournament="hostile"))


@pytest.mark.skipif(LANDLOCK < 1, reason="no Landlock on this kernel: bots run as the arena's user")
def test_a_bot_cannot_create_files(tournament):
    for info in infos_of(tournament[1], "FillsItsFolder"):
        assert info["file"] == info["folder"] == "PermissionError"
        assert info["tmp"] in ("PermissionError", "FileNotFoundError")  # where /tmp is not even there


def test_a_bot_has_no_capabilities_even_as_root(tournament):
    for info in infos_of(tournament[1], "ClaimsRootPowers"):
        assert info == {"CapEff": 0, "CapPrm": 0, "nice": "PermissionError"}


def test_memory_limit_comes_on_top_of_what_a_bot_process_starts_with(tournament):
    for info in infos_of(tournament[1], "PeeksAtItsParent"):
        assert info["size"] + 48 * 2**20 < info["limit"] <= info["size"] + 64 * 2**20


@pytest.mark.skipif(LANDLOCK < 1, reason="no Landlock on this kernel: bots run as the arena's user")
def test_a_bot_reads_its_own_proc_entry_but_not_its_parents(tournament):
    assert all(info["parent"] == "PermissionError" for info in infos_of(tournament[1], "PeeksAtItsParent"))


def test_every_game_gets_a_fresh_process_and_folder(tournament):
    for info in infos_of(tournament[1], "RemembersGames"):
        assert info == {"games_seen": 1, "leftovers": [], "earlier": []}


@pytest.mark.skipif(LANDLOCK < 6, reason="signal scoping needs Landlock ABI 6")
def test_a_bot_cannot_kill_its_referee(tournament):
    # Outside its PID namespace the number names nothing it can reach; Landlock refuses it too.
    outcomes = {info["kill"] for info in infos_of(tournament[1], "KillsItsParent")}
    assert outcomes <= {"PermissionError", "ProcessLookupError"}, outcomes


def test_children_of_bots_do_not_outlive_the_game(tournament):
    _, store, _ = tournament
    tags = []
    for game in games_of(store, "ForksChildren"):
        for move in store.games.moves(game.id):
            if move.info:
                tags.append(json.loads(move.info)["children"])
    assert len(tags) >= 2
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(processes_named(tag) for tag in tags):
        time.sleep(0.05)
    assert not [tag for tag in tags if processes_named(tag)], "a bot's child outlived its game"
