"""A league heals itself: what fails around its games (a worker, the arena, the disk,
the cluster) is said in one line, waited out, and the league plays on, with every
game stored once and the same games an undisturbed run stores.

The failures are real where they can be made so in a test (a worker process killed
with SIGKILL) and injected where they cannot (a disk that refuses one write, the
arena failing game after game); the waits are recorded, never slept.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli.main import main
from arena.league import scheduler
from arena.league.scheduler import Healing, create_league, run_league
from arena.records import GameRecord, GameSpec, Outcome, Termination
from arena.store import Store, StoreFull
from arena.store.games import Games
from arena.tournament.execution import WorkerLost
from arena.tournament.executors import ProcessExecutor, SerialExecutor
from tests.test_open_league import _games

#: Deterministic bots, 3 pairings x 4 games: the same games however they are played.
LEAGUE = 'bots = ["greedy", "blocker", "neighbour"]\ngames = 4\nseed = 11\n'
GAMES = 12


@pytest.fixture
def leagues(tmp_path: Path) -> tuple[Path, Path]:
    """One league (with its seed secret) in two files: one played undisturbed, the
    other the test disturbs; their games must come out the same."""
    file = tmp_path / "league.toml"
    file.write_text(LEAGUE)
    calm, disturbed = tmp_path / "calm.db", tmp_path / "disturbed.db"
    with Store(calm) as store:
        create_league(store, "l", str(file))
    shutil.copy(calm, disturbed)
    with Store(calm) as store:
        assert run_league(store, store.leagues.check("l"), workers=1, until_complete=True).played == GAMES
    return calm, disturbed


class Log:
    """The league's report lines and the waits it asked for."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.waits: list[float] = []

    def healing(self) -> Healing:
        return Healing(self.lines.append, "l", sleep=self.waits.append)

    def events(self) -> list[str]:
        return [line for line in self.lines if "playing again" in line]


def _run(path: Path, log: Log, **options: Any) -> scheduler.LeagueOutcome:
    with Store(path) as store:
        return run_league(store, store.leagues.check("l"), until_complete=True, report=log.lines.append,
                          heal=log.healing(), **options)


class FirstChunkOnly:
    """A worker's games: those of the first chunk it is given; at the next one it
    stops, as if in a long game, until it is killed."""

    def __init__(self, play: Any) -> None:
        self.play = play

    def __call__(self, chunk: Any) -> Any:
        global _PLAYED_A_CHUNK
        if _PLAYED_A_CHUNK:  # read in the worker process: each worker has its own
            time.sleep(600)
        _PLAYED_A_CHUNK = True
        return self.play(chunk)


_PLAYED_A_CHUNK = False


def test_a_worker_killed_mid_game_is_replaced_and_the_league_plays_on(leagues, monkeypatch):
    calm, disturbed = leagues
    made: list[ProcessExecutor] = []

    class KilledOnce(ProcessExecutor):
        """The first workers: one of them is killed (SIGKILL) with games in its pipe,
        in the middle of its second chunk (it plays no further, however fast its
        games: a worker given several chunks at once might otherwise play them all
        before the first of its games is read)."""

        def map_unordered(self, fn, chunks):  # type: ignore[no-untyped-def]
            for records in super().map_unordered(FirstChunkOnly(fn), chunks):
                yield records
                if len(made) == 1 and records:
                    os.kill(self.worker_pids()[0], signal.SIGKILL)

    def make(workers: int, games: Any, cluster: Any, needs: Any, notify: Any) -> ProcessExecutor:
        made.append(KilledOnce(1) if not made else ProcessExecutor(1))
        return made[-1]

    monkeypatch.setattr(scheduler, "make_executor", make)
    log = Log()
    outcome = _run(disturbed, log)
    assert not outcome.interrupted and outcome.healed == 1 and len(made) == 2
    assert len(log.events()) == 1 and "workers lost" in log.events()[0]
    assert log.waits == [scheduler.HEAL_DELAYS[0]]
    assert _games(disturbed) == _games(calm)


def test_without_healing_a_lost_worker_stops_the_league_in_one_line(leagues, monkeypatch):
    _, disturbed = leagues

    class Lost(SerialExecutor):
        def map_unordered(self, fn, chunks):  # type: ignore[no-untyped-def]
            raise WorkerLost("the games x were in play on a worker that died")
            yield

    monkeypatch.setattr(scheduler, "make_executor", lambda *args: Lost())
    with Store(disturbed) as store:
        outcome = run_league(store, store.leagues.check("l"), until_complete=True)
    assert outcome.interrupted and outcome.problem and "worker that died" in outcome.problem
    assert outcome.exit_code == 1 and outcome.healed == 0


def test_games_that_cannot_be_stored_are_kept_and_stored_once_the_disk_takes_them(leagues, monkeypatch):
    calm, disturbed = leagues
    monkeypatch.setattr(scheduler, "make_executor", lambda *args: SerialExecutor())
    real = Games.record_finished
    refusals = iter([True, True])  # the disk refuses two writes in a row, then takes them

    def full_disk(self: Games, *args: Any, **kwargs: Any) -> int:
        if next(refusals, False):
            raise StoreFull(f"the disk holding {self._store.path!r} is full (database or disk is full): free space "
                            "on it, then run the same command again")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Games, "record_finished", full_disk)
    log = Log()
    outcome = _run(disturbed, log)
    assert not outcome.interrupted and outcome.healed == 2 and outcome.played == GAMES
    assert all("could not be stored" in line and "disk is full" in line for line in log.events())
    assert not [line for line in log.events() if "run the same command" in line]  # it goes on by itself
    assert log.waits == list(scheduler.HEAL_DELAYS[:2])  # the second failure in a row waits longer
    assert _games(disturbed) == _games(calm)


def _void(spec: GameSpec) -> GameRecord:
    return GameRecord(spec=spec, outcome=Outcome(None, Termination.VOID, "the arena failed: injected"),
                      moves=[], duration=0.0, finished_at=time.time())


def test_an_arena_failing_game_after_game_gets_new_workers_and_no_bot_is_charged(leagues, monkeypatch):
    calm, disturbed = leagues
    made: list[SerialExecutor] = []
    real = scheduler.play_games

    def broken_first_workers(specs: list[GameSpec]) -> Any:
        if len(made) == 1:  # the first workers' sandbox is broken: every game void
            return [_void(spec) for spec in specs]
        return real(specs)

    def make(*args: Any) -> SerialExecutor:
        made.append(SerialExecutor())
        return made[-1]

    monkeypatch.setattr(scheduler, "make_executor", make)
    monkeypatch.setattr(scheduler, "play_games", broken_first_workers)
    log = Log()
    outcome = _run(disturbed, log)
    assert not outcome.interrupted and outcome.healed == 1 and len(made) == 2
    assert "the arena is failing" in log.events()[0]
    assert _games(disturbed) == _games(calm)  # every void game played again; none a forfeit
    with Store(disturbed) as store:
        assert store.games.void_count() >= 3


def test_a_failure_after_games_were_stored_waits_the_shortest_time_again(monkeypatch):
    log = Log()
    healing = log.healing()
    for _ in range(len(scheduler.HEAL_DELAYS) + 2):
        healing.recover("x")
    assert log.waits == [*scheduler.HEAL_DELAYS, scheduler.HEAL_DELAYS[-1], scheduler.HEAL_DELAYS[-1]]
    healing.going()
    healing.recover("x")
    assert log.waits[-1] == scheduler.HEAL_DELAYS[0]


def test_arena_league_run_heals_by_default_and_logs_each_event_with_its_time(leagues, monkeypatch):
    calm, disturbed = leagues
    made: list[SerialExecutor] = []

    class LostOnce(SerialExecutor):
        def map_unordered(self, fn, chunks):  # type: ignore[no-untyped-def]
            if len(made) == 1:
                raise WorkerLost("a worker died (injected)")
            yield from super().map_unordered(fn, chunks)

    def make(*args: Any) -> SerialExecutor:
        made.append(LostOnce())
        return made[-1]

    monkeypatch.setattr(scheduler, "make_executor", make)
    monkeypatch.setattr(scheduler, "HEAL_DELAYS", (0.0,))
    result = CliRunner().invoke(main, ["league", "run", "l", "--until-complete", "--db", str(disturbed)])
    assert result.exit_code == 0, result.output
    event = next(line for line in result.output.splitlines() if "playing again" in line)
    assert time.strptime(event[:19], "%Y-%m-%d %H:%M:%S") and "a worker died (injected)" in event
    assert _games(disturbed) == _games(calm)

    made.clear()
    stopped = CliRunner().invoke(main, ["league", "run", "l", "--until-complete", "--stop-on-failure",
                                        "--db", str(disturbed)])
    assert stopped.exit_code == 0  # nothing left to play: nothing failed


def test_a_cluster_that_cannot_play_at_the_start_is_one_line_not_healed(leagues, tmp_path):
    """Healing is for what fails once the league plays: a cluster named wrongly at the
    start is the caller's mistake, said in one line with exit code 2."""
    _, disturbed = leagues
    result = CliRunner().invoke(main, ["league", "run", "l", "--scheduler-file", str(tmp_path / "nope.json"),
                                       "--db", str(disturbed)])
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert result.output.startswith("Error: cannot read the Dask scheduler file")
    assert "run the same" not in result.output
