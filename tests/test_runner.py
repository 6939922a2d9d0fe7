"""Tournaments end to end: every game and move stored, parallel = serial, resume."""

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

from arena.engine.game import Board, parse_moves
from arena.store import Store, StoreError, rules_of
from arena.tournament.config import ConfigError, load_config
from arena.tournament.executors import ProcessExecutor, SerialExecutor
from arena.tournament.runner import run_tournament
from arena.tournament.schedule import schedule
from tests.conftest import TEST_BOTS
from tests.interruptions import OneByOne, stopper

FIELD = ["random", "neighbour", "greedy", "minimax:depth=2"]


def config(db: str, **overrides):
    values = {"name": "t", "bots": FIELD, "games": 4, "seed": 3, "db": db, **overrides}
    return load_config(None, values)


def snapshot(db: str, name: str = "t") -> dict[str, tuple]:
    """key -> (first, second, result, termination, reason, moves), plus every move row."""
    store = Store(db)
    games = {
        g.key: (g.first, g.second, g.result, g.termination, g.reason, g.moves)
        for g in store.games.all(tournament=name)
    }
    store.close()
    return games


def test_every_game_and_every_move_is_stored(db_path):
    cfg = config(db_path)
    store = Store(db_path)
    outcome = run_tournament(cfg, store, SerialExecutor())
    assert (outcome.scheduled, outcome.played, outcome.interrupted) == (24, 24, False)
    games = store.games.all(tournament="t")
    assert sorted(g.key for g in games) == sorted(s.key for s in schedule(cfg))
    for game in games:
        rules = rules_of(game)
        moves = store.games.moves(game.id)
        assert [m.ply for m in moves] == list(range(game.plies))
        assert "".join(m.move for m in moves) == game.moves
        assert game.moves.startswith(game.opening)
        board = Board.from_moves(parse_moves(game.moves, rules), rules)
        assert board.is_over()
        assert game.winner == board.winner
    assert store.tournaments.get("t").status == "finished"
    depth_info = store.db.execute(
        "select count(*) from moves where info like '%\"depth\": 2%'"
    ).fetchone()[0]
    assert depth_info > 0  # minimax's own info is logged


def test_the_stored_settings_keep_the_key_source_for_the_definitions_origin(tmp_path):
    definition = tmp_path / "small.toml"
    definition.write_text(f'bots = ["random", "greedy"]\ngames = 1\ndb = "{tmp_path / "arena.db"}"\n')
    cfg = load_config(str(definition))
    store = Store(cfg.db)
    run_tournament(cfg, store, SerialExecutor())
    stored = json.loads(store.tournaments.check("small").config)
    assert stored["source"] == cfg.origin == str(definition)


def test_parallel_workers_store_the_same_games_as_a_serial_run(tmp_path):
    serial, parallel = str(tmp_path / "s.db"), str(tmp_path / "p.db")
    run_tournament(config(serial), Store(serial), SerialExecutor())
    pool = ProcessExecutor(2)
    try:
        run_tournament(config(parallel), Store(parallel), pool)
    finally:
        pool.close()
    assert snapshot(serial) == snapshot(parallel)


def test_an_interrupted_run_resumes_to_the_uninterrupted_result(tmp_path):
    whole, broken = str(tmp_path / "whole.db"), str(tmp_path / "broken.db")
    run_tournament(config(whole), Store(whole), SerialExecutor())

    store = Store(broken)
    first = run_tournament(config(broken, games=4), store, OneByOne(), progress=stopper(2))
    assert first.interrupted and first.played == 2
    assert store.tournaments.get("t").status == "interrupted"
    second = run_tournament(config(broken), store, SerialExecutor())
    assert (second.already_stored, second.played) == (2, 22)
    assert snapshot(whole) == snapshot(broken)
    third = run_tournament(config(broken), store, SerialExecutor())
    assert (third.already_stored, third.played) == (24, 0)


def test_the_same_name_with_other_settings_is_refused(db_path):
    store = Store(db_path)
    run_tournament(config(db_path), store, SerialExecutor())
    with pytest.raises(StoreError, match=r"tournament 't' .* other settings \(seed was 3, now 4\)"):
        run_tournament(config(db_path, seed=4), store, SerialExecutor())
    assert len(store.games.all(tournament="t")) == 24  # nothing lost


def test_run_tournament_resolves_a_loaded_config_before_storing_anything(db_path):
    store = Store(db_path)
    with pytest.raises(ConfigError, match="bots: unknown bot 'deep-blue'"):
        run_tournament(config(db_path, bots=["random", "deep-blue"]), store, SerialExecutor())
    assert store.tournaments.all() == []
    store.submissions.submit("first", "from arena.bot import Bot\nclass First(Bot):\n"
                 "    def choose_move(self, board):\n        return board.legal_moves()[0]\n", "bot", "first.py")
    outcome = run_tournament(config(db_path, bots=["random", "first"], games=2), store, SerialExecutor())
    assert outcome.played == 2
    assert {g.first for g in store.games.all(tournament="t")} == {"random", "first@v1"}


def test_a_misbehaving_bot_loses_its_games_and_the_tournament_goes_on(db_path):
    bad = f"{TEST_BOTS / 'hostile.py'}:Raises"
    store = Store(db_path)
    run_tournament(config(db_path, bots=["random", "greedy", bad], games=2), store, SerialExecutor())
    games = store.games.all(tournament="t")
    assert len(games) == 6
    for game in games:
        if bad in (game.first, game.second):
            assert game.termination == "forfeit"
            assert game.reason == 'crashed: RuntimeError: "hostile raise" (hostile.py line 16, in choose_move)'
            assert (game.first == bad) == (game.winner == 1)
        else:
            assert game.termination in ("win", "draw")


# --- kill -9 ------------------------------------------------------------------------

SLEEPY = TEST_BOTS / "sleepy.py"
SLOW_CONFIG = f"""
name = "killed"
bots = ["{SLEEPY}:stream=1", "{SLEEPY}:stream=2", "greedy", "minimax:depth=3"]
games = 6
seed = 11
workers = 2
"""


def _arena(*args: str, cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)}
    env.pop("ARENA_DB", None)
    return subprocess.Popen(
        [sys.executable, "-m", "arena", *args], cwd=cwd, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )


def _group_gone(group: int, wait: float = 10.0) -> bool:
    """No live process is left in the process group (zombies are dead: an init that
    does not reap orphans promptly may keep them listed)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if not _live_members(group):
            return True
        time.sleep(0.05)
    os.killpg(group, signal.SIGKILL)  # leave no strays behind, then fail
    return False


def _live_members(group: int) -> list[int]:
    live = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, pgid = fields[0], int(fields[2])
        if pgid == group and state != "Z":
            live.append(int(entry.name))
    return live


def _stored(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute("select count(*) from games").fetchone()[0]
    except sqlite3.OperationalError:
        return 0  # schema not created yet


@pytest.mark.parametrize("kill_after", [0, 1, 12])
def test_kill_9_of_the_coordinator_loses_nothing_and_repeats_nothing(tmp_path, kill_after):
    (tmp_path / "t.toml").write_text(SLOW_CONFIG)
    reference = _arena("tournament", "run", "t.toml", "--db", "whole.db", cwd=tmp_path)
    assert reference.wait(timeout=300) == 0, reference.stderr.read().decode()

    db = tmp_path / "killed.db"
    victim = _arena("tournament", "run", "t.toml", "--db", "killed.db", cwd=tmp_path)
    deadline = time.monotonic() + 120
    while _stored(db) < kill_after and victim.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(victim.pid, signal.SIGKILL)  # the coordinator only: workers must die with it
    victim.wait(timeout=30)
    assert _stored(db) < 36, "the run finished before it could be killed"
    assert _group_gone(victim.pid), "worker processes outlived the killed coordinator"
    again = _arena("tournament", "run", "t.toml", "--db", "killed.db", cwd=tmp_path)
    _out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err.decode()
    assert snapshot(str(tmp_path / "whole.db"), "killed") == snapshot(str(db), "killed")
    assert len(snapshot(str(db), "killed")) == 36
    with sqlite3.connect(db) as conn:
        orphans = conn.execute("select count(*) from moves where game_id not in (select id from games)")
        assert orphans.fetchone()[0] == 0


def test_ctrl_c_stops_cleanly_and_the_run_resumes(tmp_path):
    (tmp_path / "t.toml").write_text(SLOW_CONFIG)
    db = tmp_path / "stopped.db"
    run = _arena("tournament", "run", "t.toml", "--db", "stopped.db", cwd=tmp_path)
    deadline = time.monotonic() + 120
    while _stored(db) < 3 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(run.pid, signal.SIGINT)  # as a terminal does: the whole process group
    out, err = run.communicate(timeout=60)
    assert run.returncode == 130
    assert "Interrupted:" in err.decode() and "run the same command again to resume" in err.decode()
    assert "Traceback" not in err.decode()
    stored = _stored(db)
    assert 3 <= stored < 36
    with sqlite3.connect(db) as conn:
        assert conn.execute("select status from tournaments").fetchone()[0] == "interrupted"
    again = _arena("tournament", "run", "t.toml", "--db", "stopped.db", cwd=tmp_path)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err.decode()
    assert f"{stored} were already stored" in out.decode()
    assert _stored(db) == 36


def test_a_worker_killed_from_outside_stops_the_run_instead_of_hanging(tmp_path):
    db = str(tmp_path / "lost.db")
    sleepy = [f"{SLEEPY}:stream=1", f"{SLEEPY}:stream=2", "greedy"]
    store = Store(db)
    pool = ProcessExecutor(2)
    victims = sorted(pool.worker_pids())[:1]

    def kill_a_worker(done, total, seconds):
        if done and victims:  # once, when the first games are back (two may come back together)
            os.kill(victims.pop(), signal.SIGKILL)

    try:
        outcome = run_tournament(config(db, bots=sleepy, games=6), store, pool, progress=kill_a_worker)
    finally:
        pool.close(cancel=True)
    assert outcome.interrupted and "worker process died" in outcome.problem
    assert store.tournaments.get("t").status == "interrupted"
    again = run_tournament(config(db, bots=sleepy, games=6), store, SerialExecutor())
    assert again.already_stored + again.played == 18 and not again.interrupted


def test_a_tournament_already_running_elsewhere_is_refused_and_nothing_stored(tmp_path):
    db = str(tmp_path / "busy.db")
    config = load_config(None, {"name": "busy", "bots": ["random", "greedy"], "games": 2, "db": db, "workers": 1})
    ready = tmp_path / "holding"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time, pathlib\n"
        "from arena.store import Store\n"
        f"store = Store({db!r})\n"
        "with store.tournaments.running('busy'):\n"
        f"    pathlib.Path({str(ready)!r}).touch()\n"
        "    time.sleep(60)\n"
    )])
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        store = Store(db)
        with pytest.raises(StoreError, match="'busy' .* is being run by another process"):
            run_tournament(config, store)
        assert store.db["tournaments"].count_where("name = ?", ["busy"]) == 0  # not even started
        other = load_config(None, {"name": "other", "bots": ["random", "greedy"], "games": 2, "db": db, "workers": 1})
        assert run_tournament(other, store, SerialExecutor()).played == 2  # other tournaments are free
    finally:
        holder.kill()
        holder.wait()
    assert run_tournament(config, Store(db), SerialExecutor()).played == 2  # free once it is gone


_BOT_FILE = (
    "from arena.bot import Bot\n"
    "class Mine(Bot):\n"
    "    def choose_move(self, board):\n"
    "        return board.legal_moves()[{index}]\n"
)


def test_resuming_after_a_bot_file_changed_is_refused_naming_the_bot_and_both_hashes(tmp_path):
    from click.testing import CliRunner

    from arena.cli.main import main
    from arena.text import content_hash

    bot = tmp_path / "mine.py"
    bot.write_text(_BOT_FILE.format(index=0))
    db = str(tmp_path / "arena.db")
    old = content_hash(bot.read_text())

    store = Store(db)
    cfg = config(db, bots=[str(bot), "random"], games=4)
    first = run_tournament(cfg, store, OneByOne(), progress=stopper(1))
    assert first.interrupted and first.played == 1
    store.close()
    bot.write_text(_BOT_FILE.format(index=-1))  # other code, same file
    new = content_hash(bot.read_text())
    before = Path(db).read_bytes()
    result = CliRunner().invoke(main, [
        "tournament", "run", "--bots", f"{bot},random", "--games", "4", "--seed", "3",
        "--name", "t", "--db", db, "--workers", "1",
    ])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output
    assert f"other code for bot {str(bot)!r}" in lines[0]
    assert f"sha256 {old[:12]}, now {new[:12]}" in lines[0]
    assert "restore the file" in lines[0] and "another --name" in lines[0]
    assert Path(db).read_bytes() == before  # nothing stored changed
    bot.write_text(_BOT_FILE.format(index=0))  # restored: the run resumes
    again = run_tournament(config(db, bots=[str(bot), "random"], games=4), Store(db), SerialExecutor())
    assert (again.already_stored, again.played) == (1, 3)


def test_resuming_after_a_plugins_distribution_version_changed_is_refused(db_path):
    from arena.engine.game import Rules
    from arena.records import GameSpec
    from arena.referee.referee import play_game
    from arena.store import BotIdentity

    def bots(version):
        return [BotIdentity("greedy", "greedy", {}, f"connectk-arena {version}"),
                BotIdentity("random", "random", {}, "connectk-arena 1.0")]

    store = Store(db_path)
    identity = {"rules": {}, "seed": 1}
    tid = store.tournaments.start("t", "round-robin", identity, {}, 1, bots("1.0"))
    ids = {b.spec: store.bots.id_of(b) for b in bots("1.0")}
    spec = GameSpec(key="g1", pairing="greedy-random", first="greedy", second="random", rules=Rules(), seed=1)
    store.games.record(tid, [play_game(spec)], ids)
    store.tournaments.set_status(tid, "interrupted")
    with pytest.raises(StoreError, match=r"bot 'greedy' from connectk-arena 1.0, now from connectk-arena 2.0: "
                                         r"reinstall connectk-arena 1.0 to resume it, or run under another --name"):
        store.tournaments.start("t", "round-robin", identity, {}, 1, bots("2.0"))
    assert store.tournaments.get("t").status == "interrupted"  # nothing changed
    assert store.tournaments.start("t", "round-robin", identity, {}, 1, bots("1.0")) == tid


SLEEPY_PAIR = f"""
name = "sleepy"
bots = ["{SLEEPY}:stream=1", "{SLEEPY}:stream=2"]
games = 64
seed = 5
workers = 1
"""  # one worker, chunks of 8 games (64 // (1 * 8))


def _whole_games(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        for game_id, plies in conn.execute("select id, plies from games"):
            moves = conn.execute("select count(*) from moves where game_id = ?", [game_id]).fetchone()[0]
            assert moves == plies


def test_ctrl_c_keeps_every_finished_game_not_only_whole_chunks(tmp_path):
    (tmp_path / "t.toml").write_text(SLEEPY_PAIR)
    db = tmp_path / "arena.db"
    run = _arena("tournament", "run", "t.toml", cwd=tmp_path)
    deadline = time.monotonic() + 120
    while _stored(db) < 1 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    os.killpg(run.pid, signal.SIGINT)
    _out, err = run.communicate(timeout=60)
    assert run.returncode == 130, err.decode()
    stored = _stored(db)
    # Each game is stored as it finishes: the first one is not held back until its
    # chunk of 8 is done (a game takes at least 7 moves of 10 ms).
    assert 1 <= stored < 8
    assert err.decode().strip().splitlines() == [
        f"Interrupted: {stored} of 64 games stored in arena.db; run the same command again to resume."
    ]
    _whole_games(db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("select status from tournaments").fetchone()[0] == "interrupted"


@pytest.mark.parametrize(("sig", "code", "why"), [
    (signal.SIGTERM, 143, "Interrupted (SIGTERM)"),
    (signal.SIGHUP, 129, "Interrupted (hang-up)"),
])
def test_sigterm_and_a_hang_up_end_like_ctrl_c(tmp_path, sig, code, why):
    (tmp_path / "t.toml").write_text(SLEEPY_PAIR)
    db = tmp_path / "arena.db"
    run = _arena("tournament", "run", "t.toml", cwd=tmp_path)
    deadline = time.monotonic() + 120
    while _stored(db) < 2 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    if sig == signal.SIGHUP:
        os.killpg(run.pid, sig)  # a closed terminal hangs up its whole process group
    else:
        os.kill(run.pid, sig)  # `kill PID`: the coordinator only
    _out, err = run.communicate(timeout=60)
    assert run.returncode == code, err.decode()
    stored = _stored(db)
    assert 2 <= stored < 64
    assert err.decode().strip().splitlines() == [
        f"{why}: {stored} of 64 games stored in arena.db; run the same command again to resume."
    ]
    _whole_games(db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("select status from tournaments").fetchone()[0] == "interrupted"
    assert _group_gone(run.pid), "worker processes outlived the stopped coordinator"


def _slow_then_done(specs):
    """A chunk's games, the first after a pause (top-level: workers unpickle it)."""
    time.sleep(2.0)
    yield from ([f"record of {spec}" for spec in specs])


def test_the_process_executor_yields_each_game_as_it_finishes_and_a_heartbeat_meanwhile():
    pool = ProcessExecutor(1)
    try:
        batches = list(pool.map_unordered(_slow_then_done, [["a", "b"], ["c"]]))
    finally:
        pool.close()
    assert batches[0] == []  # nothing finished yet: a heartbeat (the caller updates progress)
    assert [r for batch in batches for r in batch] == ["record of a", "record of b", "record of c"]


def test_progress_is_reported_per_game_not_per_chunk(tmp_path):
    db = str(tmp_path / "p.db")
    done_values = []
    pool = ProcessExecutor(1)
    try:
        cfg = config(db, bots=[f"{SLEEPY}:stream=1", f"{SLEEPY}:stream=2"], games=16)  # chunks of 2
        outcome = run_tournament(cfg, Store(db), pool,
                                 progress=lambda done, total, seconds: done_values.append(done))
    finally:
        pool.close()
    assert outcome.played == 16
    assert 1 in done_values  # the first game shows before its chunk is done


def test_the_default_tournament_scaled_down_gives_the_same_games_twice(tmp_path):
    """config/default.toml's budgeted bots (playouts, nodes; no seconds) make the same
    games for the same seed, whatever the load: two runs, two workers each. From
    6-ply openings: after the default's 2 plies the solver's opening book holds or
    its budget solves every position it meets, and here the budget must decide
    some moves (the fallback plays them)."""
    import tomllib

    default = tomllib.loads((Path(__file__).parent.parent / "config" / "default.toml").read_text())
    assert not [bot for bot in default["bots"] if "seconds" in bot]  # nothing stops on the clock
    budgeted = [bot for bot in default["bots"] if bot.split(":")[0] in ("mcts", "solver")]
    assert budgeted == ["mcts:playouts=500", "solver:nodes=60000"]
    bots = [*budgeted, "minimax", "greedy"]
    runs = []
    for run in ("one", "two"):
        db = str(tmp_path / f"{run}.db")
        pool = ProcessExecutor(2)
        try:
            outcome = run_tournament(config(db, bots=bots, games=2, seed=1, openings={"plies": 6}), Store(db),
                                     pool)
        finally:
            pool.close()
        assert outcome.played == 12 and not outcome.interrupted
        runs.append(snapshot(db))
    assert runs[0] == runs[1]
    with sqlite3.connect(tmp_path / "one.db") as conn:
        infos = [json.loads(info) for (info,) in conn.execute("select info from moves where info is not null")]
    assert any("not solved in 60000 nodes" in str(info.get("fallback", "")) for info in infos)
