"""arena match stores its games as a tournament of format "match": the tables and
game lists show it, the same command resumes it (playing only the games missing),
Ctrl-C keeps what finished, several workers play the same games as one, and a
sequential test still stops it early."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import arena.tournament.runner
from arena.records import GameSpec
from arena.store import Store
from tests.conftest import TEST_BOTS

SLEEPY = str(TEST_BOTS / "sleepy.py")
REFEREE_GAME = arena.tournament.runner.referee_game


def _games(db: Path, name: str | None = None) -> dict[str, tuple]:
    """key -> (first, second, result, termination, moves) of the (only) match stored in ``db``."""
    with Store(str(db)) as store:
        (match,) = [t for t in store.tournaments.all() if name in (None, t.name)]
        assert match.format == "match"
        return {g.key: (g.first, g.second, g.result, g.termination, g.moves)
                for g in store.games.all(tournament=match.name)}


def test_a_match_is_stored_and_shown_by_standings_games_and_show(cli, tmp_path: Path) -> None:
    data = json.loads(cli("match", "random", "greedy", "-n", "6", "--seed", "3", "--json").stdout)
    name = data["match"]
    assert name.startswith("match-random-greedy-") and data["db"] == "arena.db"
    assert len(_games(tmp_path / "arena.db")) == 6
    standings = cli("standings")  # no --tournament: the latest, the match, said first
    assert standings.exit_code == 0, standings.output
    assert standings.output.splitlines()[0].startswith(f"Match {name!r} (finished): 6 games")
    greedy = next(line.split() for line in standings.output.splitlines() if " greedy " in f" {line} ")
    assert greedy[2:6] == ["6", str(data["results"]["greedy"]["wins"]), str(data["results"]["greedy"]["draws"]),
                           str(data["results"]["greedy"]["losses"])]
    listed = cli("games", "--tournament", name)
    assert listed.exit_code == 0 and listed.output.count("match-0000") == 6, listed.output
    shown = cli("show", "1")
    assert shown.exit_code == 0 and f"({name} match-000000)" in shown.output, shown.output


def test_the_table_says_where_the_match_is_stored(cli) -> None:
    out = cli("match", "random", "greedy", "-n", "2").stdout.splitlines()
    assert out[0] == "2 games, 7x6 connect 4, seed 0"  # the first line as before
    assert out[-1].startswith("Games stored in arena.db as match 'match-random-greedy-")
    again = cli("match", "random", "greedy", "-n", "2").stdout.splitlines()
    assert again[-1].endswith(", 2 of them before this run.") and again[:-1] == out[:-1]


def _counting(monkeypatch: pytest.MonkeyPatch, stop_after: int | None = None) -> list[str]:
    """The keys of the games played from now on (in this process); with ``stop_after``,
    Ctrl-C comes as the game after that many starts."""
    played: list[str] = []

    def play(spec: GameSpec, **options):  # type: ignore[no-untyped-def]
        if stop_after is not None and len(played) == stop_after:
            raise KeyboardInterrupt
        played.append(spec.key)
        return REFEREE_GAME(spec, **options)

    monkeypatch.setattr(arena.tournament.runner, "referee_game", play)
    return played


def test_the_same_command_resumes_and_plays_only_the_missing_games(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ("match", "random", "neighbour", "-n", "8", "--seed", "4")
    whole = cli(*args, "--db", "whole.db")
    assert whole.exit_code == 0, whole.output
    _counting(monkeypatch, stop_after=3)
    stopped = cli(*args)
    assert stopped.exit_code == 130
    assert stopped.output.splitlines() == [
        "Interrupted: 3 of 8 games stored in arena.db; run the same command again to resume."]
    played = _counting(monkeypatch)
    resumed = cli(*args)
    assert resumed.exit_code == 0, resumed.output
    assert played == [f"match-{n:06d}" for n in range(3, 8)]  # the missing games only
    assert "3 of them before this run" in resumed.output
    assert _games(tmp_path / "arena.db") == _games(tmp_path / "whole.db")
    assert resumed.output.splitlines()[:-1] == whole.output.splitlines()[:-1]
    again = cli(*args)
    assert again.exit_code == 0 and played == [f"match-{n:06d}" for n in range(3, 8)]  # nothing more


def test_other_settings_are_another_match_and_a_named_one_refuses_them(cli, tmp_path: Path) -> None:
    assert cli("match", "random", "greedy", "-n", "2").exit_code == 0
    assert cli("match", "random", "greedy", "-n", "2", "--seed", "1").exit_code == 0
    with Store(str(tmp_path / "arena.db")) as store:
        assert len({t.name for t in store.tournaments.all()}) == 2
    assert cli("match", "random", "greedy", "-n", "2", "--name", "duel").exit_code == 0
    refused = cli("match", "random", "greedy", "-n", "4", "--name", "duel")
    assert refused.exit_code == 2, refused.output
    assert refused.output.splitlines() == [
        "Error: tournament 'duel' in arena.db was run with other settings (games was 2, now 4); "
        "pick another --name or repeat the original settings to resume it"]
    sprt = cli("match", "random", "greedy", "-n", "2", "--name", "duel", "--sprt", "elo0=0,elo1=20")
    assert sprt.exit_code == 2 and "sprt was None" in sprt.output, sprt.output


@pytest.mark.parametrize("args, fragment", [
    (["nobody", "greedy"], "unknown bot 'nobody'"),
    (["random", "greedy", "--bank-seconds", "1"], "needs --move-seconds"),
    (["random", "greedy", "--workers", "2", "--cluster", "tcp://nowhere:8786"], "--workers 2"),
    (["random", "greedy", "--cluster", "local:0"], "local:0"),
    (["random", "greedy", "--sprt", "elo0=5,elo1=0"], "elo0 < elo1"),
])
def test_a_refused_match_is_one_line_and_makes_no_database(cli, tmp_path: Path, args: list[str],
                                                           fragment: str) -> None:
    result = cli("match", *args)
    assert result.exit_code == 2, result.output
    assert len(result.output.splitlines()) == 1 and fragment in result.output, result.output
    assert not list(tmp_path.glob("arena.db*"))


def test_two_workers_play_the_same_games_as_one(cli, tmp_path: Path) -> None:
    args = ("match", "random", "neighbour", "-n", "10", "--seed", "7", "--json")
    one = cli(*args, "--workers", "1", "--db", "one.db")
    two = cli(*args, "--workers", "2", "--db", "two.db")
    assert one.exit_code == two.exit_code == 0, (one.output, two.output)
    assert _games(tmp_path / "one.db") == _games(tmp_path / "two.db")
    assert json.loads(one.stdout)["results"] == json.loads(two.stdout)["results"]


def test_a_match_plays_itself_stored_as_two_instances(cli, tmp_path: Path) -> None:
    data = json.loads(cli("match", "random", "random", "-n", "4", "--json").stdout)
    assert set(data["results"]) == {"random", "random#2"} and data["games"] == 4
    assert {game[:2] for game in _games(tmp_path / "arena.db").values()} == {("random", "random")}


def test_the_tables_of_a_match_of_a_bot_against_itself_are_empty_as_its_standings(cli) -> None:
    assert cli("match", "random", "random", "-n", "4").exit_code == 0
    for table in ("standings", "crosstable", "colours"):
        shown = cli(table, "--format", "json")
        assert shown.exit_code == 0, (table, shown.output)
        data = json.loads(shown.stdout)
        assert data.get("standings", data.get("crosstable", data.get("colours"))) in ([], {}), (table, data)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_the_sprt_stops_early_with_several_workers_and_a_decided_match_resumes_to_nothing(
    cli, tmp_path: Path, workers: str
) -> None:
    args = ("match", "greedy", "random", "--sprt", "elo0=0,elo1=20", "--workers", workers, "--json")
    data = json.loads(cli(*args).stdout)
    assert data["sprt"]["decision"] == "H1"
    assert 10 < data["games"] < 1000  # of the 100000 it may play
    # Checked after each batch: one pair of games per worker.
    assert data["games"] % (2 * int(workers)) == 0
    assert len(_games(tmp_path / "arena.db")) == data["games"]
    with Store(str(tmp_path / "arena.db")) as store:
        (match,) = store.tournaments.all()
        assert match.status == "finished"
    again = json.loads(cli(*args).stdout)
    assert again == data  # the stored games decide again: none is played
    assert len(_games(tmp_path / "arena.db")) == data["games"]


def test_one_worker_stops_where_the_unstored_sequential_test_does(cli) -> None:
    from arena.ratings.sprt import Sprt
    from arena.tournament.match import SPRT_MAX_GAMES, match_specs, play_sprt

    here, decision = play_sprt(match_specs("greedy", "random", SPRT_MAX_GAMES), ("greedy", "random"), Sprt(0, 20))
    data = json.loads(cli("match", "greedy", "random", "--sprt", "elo0=0,elo1=20", "--json").stdout)
    assert (data["games"], data["sprt"]["decision"]) == (len(here.records), decision)


def _arena(*args: str, cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    env.pop("ARENA_DB", None)
    return subprocess.Popen([sys.executable, "-m", "arena", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def _stored(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return int(conn.execute("select count(*) from games").fetchone()[0])
    except sqlite3.OperationalError:
        return 0  # not made yet


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigint_keeps_the_finished_games_and_says_how_to_resume(tmp_path: Path, workers: str) -> None:
    args = ("match", f"{SLEEPY}", "greedy", "-n", "40", "--workers", workers)
    run = _arena(*args, cwd=tmp_path)
    deadline = time.monotonic() + 120
    while _stored(tmp_path / "arena.db") < 3 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(run.pid, signal.SIGINT)  # as a terminal does: the whole process group
    _out, err = run.communicate(timeout=60)
    assert run.returncode == 130, err.decode()
    stored = _stored(tmp_path / "arena.db")
    assert 3 <= stored < 40
    assert err.decode().strip().splitlines()[-1] == (
        f"Interrupted: {stored} of 40 games stored in arena.db; run the same command again to resume.")
    with sqlite3.connect(tmp_path / "arena.db") as conn:
        assert conn.execute("select status from tournaments").fetchone()[0] == "interrupted"
