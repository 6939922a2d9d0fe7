"""A submitted bot cannot stop a tournament that names it by failing its start-up check.

The attack (tests/bots/text_attacks.py ``DeepAtStartup``) passes ``arena submit``,
then answers the start-up check a tournament gives each untrusted bot with arrays
nested 40 deep. A submitted bot that fails there forfeits each of its games with
why, and the tournament plays every other game; a bot file that fails it still
stops the run before any game, with one line and exit code 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from arena.store import Store
from tests.conftest import TEST_BOTS

ATTACK = f"{TEST_BOTS / 'text_attacks.py'}:DeepAtStartup"
ROOT = Path(__file__).resolve().parent.parent
WHY = "protocol: answer nested more than 32 deep"


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("ARENA_DB", None)
    return subprocess.run([sys.executable, "-m", "arena", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_a_submitted_bot_that_fails_its_start_up_check_forfeits_and_the_tournament_plays_on(tmp_path):
    """The bot passes its submission checks; in a tournament its start-up check
    fails. The terminal says so once; each of its games is a forfeit that stores
    why; every other game is played; the tournament finishes, and resumes."""
    db = str(tmp_path / "league.db")
    submitted = arena("submit", ATTACK, "--name", "deep", "--db", db, cwd=tmp_path)
    assert submitted.returncode == 0 and "Submitted deep@v1" in submitted.stdout, submitted.stdout + submitted.stderr
    command = ("tournament", "run", "--bots", "deep,random,greedy", "--games", "2", "--name", "cup",
               "--workers", "2", "--db", db)
    run = arena(*command, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    said = [line for line in run.stderr.splitlines() if "start-up check" in line]
    assert said == [f"Bot 'deep@v1' failed its start-up check and forfeits its games: \"{WHY}\""]
    assert "6 games played" in run.stdout
    with Store(db, read_only=True) as store:
        games = store.games.all(tournament="cup")
        assert store.tournaments.get("cup").status == "finished"
    assert len(games) == 6
    deep = [game for game in games if "deep@v1" in (game.first, game.second)]
    assert len(deep) == 4
    for game in deep:
        assert game.termination == "forfeit" and game.winner == (1 if game.first == "deep@v1" else 0)
        assert game.reason == f"failed its start-up check: {WHY}"
        assert game.plies == game.opening_plies  # never started: not a move of its own
    others = [game for game in games if game not in deep]
    assert len(others) == 2 and all(game.termination in ("win", "draw") for game in others)
    again = arena(*command, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "0 games played" in again.stdout and "6 were already stored" in again.stdout


def test_a_bot_file_that_fails_its_start_up_check_still_stops_the_run_with_one_line(tmp_path):
    """A bot file is the organiser's own: failing its start-up check stops the run
    before any game, with exit code 2 and one line that says why (no traceback)."""
    db = tmp_path / "arena.db"
    run = arena("tournament", "run", "--bots", f"{ATTACK},random", "--games", "2", "--name", "cup",
                "--workers", "1", "--db", str(db), cwd=tmp_path)
    assert run.returncode == 2
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and WHY in lines[0] and "DeepAtStartup" in lines[0], run.stderr
    assert not db.exists() or Store(db, read_only=True).games.count() == 0
