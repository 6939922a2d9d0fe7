"""Tournaments on a Dask cluster: the same games as here, faults survived, workers
checked before they play, bounded work in flight, one line for what goes wrong.

Clusters here are local (worker processes on this machine, on 127.0.0.1): a
``LocalCluster``, or a scheduler and ``dask worker`` processes started as the
README says, where a worker must differ from this process (another folder, other
plug-ins, no sandbox)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.players.plugins import INSTALLED_BOTS
from arena.records import GameSpec
from arena.store import Store
from arena.tournament import cluster
from arena.tournament.cluster import (
    ClusterError,
    ClusterExecutor,
    WorkerNeeds,
    arena_version,
    check_worker,
    examine_worker,
    worker_needs,
)
from arena.tournament.config import ConfigError, load_config
from arena.tournament.executors import SerialExecutor
from arena.tournament.runner import play_games, run_tournament
from arena.tournament.schedule import schedule
from tests.test_runner import SLEEPY, _stored, snapshot

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent  # the arena under test, on every worker's path
FIELD = ["minimax:depth=2", "greedy", "random", f"{SLEEPY}:stream=1"]


def config(db: str, **overrides):
    values = {"name": "t", "bots": FIELD, "games": 4, "seed": 5, "db": db, **overrides}
    return load_config(None, values)


def serial_snapshot(tmp_path: Path, **overrides) -> dict[str, tuple]:
    """The games a run on this machine stores for the same configuration."""
    db = str(tmp_path / "here.db")
    run_tournament(config(db, **overrides), Store(db), SerialExecutor())
    return snapshot(db)


# --- the same games ------------------------------------------------------------------------------


def test_a_local_cluster_stores_the_same_games_as_a_run_here(tmp_path):
    db = str(tmp_path / "cluster.db")
    notes: list[str] = []
    outcome = run_tournament(config(db, cluster="local:2"), Store(db), notify=notes.append)
    assert (outcome.played, outcome.interrupted, notes) == (24, False, [])
    assert snapshot(db) == serial_snapshot(tmp_path)
    assert Store(db).tournaments.get("t").status == "finished"


def test_killed_workers_have_their_games_played_again_elsewhere_and_their_replacements_get_work(tmp_path):
    db = str(tmp_path / "killed.db")
    bots = [f"{SLEEPY}:stream=1", f"{SLEEPY}:stream=2", "greedy"]
    executor = ClusterExecutor("local:2", worker_needs(bots))
    first = executor.client.run(os.getpid)  # worker -> its process
    one, other = sorted(first)
    killed: list[str] = []
    started = time.monotonic()

    def kill(done: int, total: int, seconds: float) -> None:
        assert time.monotonic() - started < 60, "games lost with their worker were never played again"
        if done and not killed:  # the first games are stored: the worker is in the middle of others
            os.kill(first[one], signal.SIGKILL)  # its games go to the other worker (the scheduler moves them)
            killed.append(one)
        elif len(killed) == 1 and executor.admitted - set(first):
            # Its replacement passed its check: every game in flight was given to the
            # other worker alone, which dies now; they must go to the replacement.
            os.kill(first[other], signal.SIGKILL)
            killed.append(other)

    try:
        outcome = run_tournament(config(db, bots=bots, games=16), Store(db), executor, progress=kill)
    finally:
        executor.close()
    assert killed == [one, other] and not outcome.interrupted and outcome.played == 48
    assert snapshot(db) == serial_snapshot(tmp_path, bots=bots, games=16)  # none lost, none twice, the same
    assert set(executor.played) - set(first), f"no replacement got games: {executor.played}"


# --- workers that cannot play ----------------------------------------------------------------------


PLUGIN = '''
from arena.bot import Bot


class Edge(Bot):
    """Plays the leftmost free column: a plug-in of its own distribution."""

    def choose_move(self, board):
        return min(board.legal_moves())
'''


def _plugin(folder: Path, version: str) -> Path:
    """A folder holding an installed distribution, edge-bots VERSION, with the bot `edge`."""
    folder.mkdir()
    (folder / "edge_bots.py").write_text(PLUGIN)
    info = folder / f"edge_bots-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: edge-bots\nVersion: {version}\n")
    (info / "entry_points.txt").write_text("[arena.bots]\nedge = edge_bots:Edge\n")
    return folder


def _scheduler(tmp_path: Path, port: int = 0, options: tuple[str, ...] = ()) -> tuple[subprocess.Popen, str]:
    """``dask scheduler`` on 127.0.0.1, as the README starts one; its address."""
    file = tmp_path / "scheduler.json"
    file.unlink(missing_ok=True)
    process = subprocess.Popen([BIN / "dask", "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                "--no-dashboard", "--scheduler-file", file, *options],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            return process, json.loads(file.read_text())["address"]
        except (OSError, ValueError, KeyError):
            time.sleep(0.1)
    process.kill()
    raise AssertionError("the scheduler did not start")


def _worker(address: str, name: str, cwd: Path, pythonpath: Path | None = None, wrap: tuple[str, ...] = (),
            threads: int = 1, options: tuple[str, ...] = (), env: dict[str, str] | None = None) -> subprocess.Popen:
    """``dask worker ADDRESS`` in ``cwd`` with the plug-ins of ``pythonpath``, started by ``wrap``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*([str(pythonpath)] if pythonpath else []), str(ROOT)]),
           **(env or {})}
    command = [*wrap, str(BIN / "dask"), "worker", address, "--name", name, "--nthreads", str(threads), "--no-nanny",
               "--host", "127.0.0.1", "--no-dashboard", *options]
    return subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# Runs what follows in a user namespace that may make no PID or network namespace:
# a machine whose sandbox cannot isolate bots (as in tests/test_containment.py).
WITHOUT_NAMESPACES = ("unshare", "--user", "--map-root-user", "sh", "-c",
                      "echo 0 > /proc/sys/user/max_pid_namespaces && echo 0 > /proc/sys/user/max_net_namespaces"
                      ' && exec "$@"', "sh")


def test_workers_without_the_plugins_or_the_sandbox_are_named_and_get_no_games(tmp_path, monkeypatch):
    if subprocess.run(["unshare", "--user", "--map-root-user", "true"], capture_output=True).returncode:
        pytest.skip("this kernel allows no user namespace to stand in for a machine without PID namespaces")
    here, old = _plugin(tmp_path / "v1", "1.0"), _plugin(tmp_path / "v2", "2.0")
    monkeypatch.syspath_prepend(str(here))
    INSTALLED_BOTS.refresh()
    elsewhere = tmp_path / "elsewhere"  # the good worker's folder: the bot file is not there
    elsewhere.mkdir()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sleepy.py").write_text(SLEEPY.read_text())
    bots = ["edge", "sleepy.py", "greedy"]  # a plug-in, an untrusted bot file (by a relative path), a built-in
    scheduler, address = _scheduler(tmp_path)
    workers = [_worker(address, "good", elsewhere, here, threads=2), _worker(address, "bare", elsewhere),
               _worker(address, "old-and-open", elsewhere, old, WITHOUT_NAMESPACES)]
    try:
        from distributed import Client

        with Client(address, timeout=30) as client:
            client.wait_for_workers(3, timeout=60)
            named = {info["name"]: worker for worker, info in client.scheduler_info()["workers"].items()}
        notes: list[str] = []
        executor = ClusterExecutor(address, worker_needs(bots), notes.append)
        try:
            db = str(tmp_path / "checked.db")
            outcome = run_tournament(config(db, bots=bots, games=2), Store(db), executor)
        finally:
            executor.close()
    finally:
        for process in (*workers, scheduler):
            process.kill()
            process.wait()
    assert not outcome.interrupted and outcome.played == 6
    assert set(executor.played) == {named["good"]}
    assert len(notes) == 4 and all("\n" not in line for line in notes), notes
    assert notes[-1] == f"playing on the Dask cluster at {address}: 1 worker checked, 2 refused"
    good, bare, opened = (next(line for line in notes if named[name] in line) for name in ("good", "bare",
                                                                                          "old-and-open"))
    assert good == (f"worker {named['good']} (good) has 2 threads, and a game holds the interpreter: its games "
                    "share one core (start workers with --nworkers 2 --nthreads 1)")
    assert bare == (f"worker {named['bare']} (bare) gets no games: bot 'edge' is not installed there "
                    "(install edge-bots 1.0)")
    assert opened.startswith(f"worker {named['old-and-open']} (old-and-open) gets no games: ")
    assert "bot 'edge' is edge-bots 2.0 there, the tournament's is edge-bots 1.0" in opened
    assert "it cannot isolate untrusted bots" in opened and "PID" in opened
    assert snapshot(db) == serial_snapshot(tmp_path, bots=bots, games=2)  # the file bot played there as here


def test_a_worker_is_checked_for_the_arena_version_the_plugins_and_the_sandbox(monkeypatch):
    here = worker_needs(["minimax:depth=2", "greedy"])
    assert here == WorkerNeeds(arena_version(), (("greedy", f"connectk-arena {arena_version()}"),
                                                 ("minimax", f"connectk-arena {arena_version()}")), sandbox=False,
                               warm_up=("minimax:depth=2", "greedy"))
    assert check_worker(here) == []
    assert worker_needs([f"{SLEEPY}:stream=1", "greedy"]).sandbox  # a bot file: untrusted
    assert worker_needs(["mybot@v1", "greedy"], submitted=[("mybot@v1", None)]).sandbox  # type: ignore[list-item]
    assert worker_needs(["greedy", "random"], isolate=True).sandbox
    other = WorkerNeeds("0.0.1", (("greedy", "connectk-arena 0.0.1"), ("deep-blue", "ibm 1997")))
    assert check_worker(other) == [
        f"it has connectk-arena {arena_version()}, the tournament 0.0.1 (install that version)",
        f"bot 'greedy' is connectk-arena {arena_version()} there, the tournament's is connectk-arena 0.0.1",
        "bot 'deep-blue' is not installed there (install ibm 1997)",
    ]
    monkeypatch.setenv("ARENA_WEAK_SANDBOX", "0")
    monkeypatch.setattr("arena.sandbox.doctor.containment", lambda: ([], ["no PID namespace (EPERM)"]))
    problems = check_worker(WorkerNeeds(arena_version(), sandbox=True))
    assert problems == ["it cannot isolate untrusted bots: no PID namespace (EPERM) (see 'arena doctor' there; "
                        "a worker started with ARENA_WEAK_SANDBOX=1 runs them with weaker containment)"]
    monkeypatch.setenv("ARENA_WEAK_SANDBOX", "1")  # its owner accepted weaker containment, this side did not
    assert check_worker(WorkerNeeds(arena_version(), sandbox=True)) == [
        "it runs untrusted bots with weaker containment (no PID namespace (EPERM); it was started with "
        "ARENA_WEAK_SANDBOX=1): accept that here with 'arena --weak-sandbox ...', or give it a sandbox that "
        "isolates them (see 'arena doctor' there)"]
    accepted = examine_worker(WorkerNeeds(arena_version(), sandbox=True, weak_sandbox=True))
    assert accepted.problems == () and accepted.notes == (
        "plays untrusted bots with weaker containment (no PID namespace (EPERM)), as it and this side accept "
        "(ARENA_WEAK_SANDBOX=1 there, --weak-sandbox here)",)
    assert worker_needs([f"{SLEEPY}:stream=1"]).weak_sandbox  # this side says --weak-sandbox (so does the variable)
    monkeypatch.setenv("ARENA_WEAK_SANDBOX", "0")
    assert not worker_needs([f"{SLEEPY}:stream=1"]).weak_sandbox


# --- bounded work in flight -------------------------------------------------------------------------


def test_work_in_flight_is_bounded_however_long_the_tournament():
    game = schedule(config(":memory:", bots=["random:stream=1", "random:stream=2"], games=2))[0]
    taken = itertools.count()

    def endless() -> Iterator[list[GameSpec]]:
        while True:  # a tournament without end
            if next(taken) > 10_000:
                raise AssertionError("the executor reads games ahead without bound")
            yield [game] * 64

    executor = ClusterExecutor("local:1", worker_needs(["random"]))
    returned = 0
    started = time.monotonic()
    try:
        for records in executor.map_unordered(play_games, endless()):
            returned += len(records)
            if time.monotonic() - started > 3:
                break
    finally:
        executor.close(cancel=True)
    read = 64 * next(taken)
    bound = cluster.TASKS_PER_WORKER * 1 * cluster.MAX_TASK_GAMES + 64  # tasks in flight, and one chunk read
    assert returned > 100 and read - returned <= bound, (read, returned)


# --- the command: its setting, one line for what goes wrong, Ctrl-C, resume ------------------------


def test_the_cluster_comes_from_the_flag_the_file_or_arena_cluster_and_bad_ones_are_refused(tmp_path, monkeypatch):
    monkeypatch.delenv("ARENA_CLUSTER", raising=False)
    file = tmp_path / "t.toml"
    file.write_text('bots = ["random", "greedy"]\ncluster = "tcp://10.1.2.3:8786"\n')
    assert load_config(str(file)).cluster == "tcp://10.1.2.3:8786"
    assert load_config(str(file), {"cluster": "local:3"}).cluster == "local:3"
    assert load_config(None, {"bots": ["random", "greedy"]}).cluster is None
    monkeypatch.setenv("ARENA_CLUSTER", "scheduler.lan:8786")
    assert load_config(None, {"bots": ["random", "greedy"]}).cluster == "scheduler.lan:8786"
    assert load_config(str(file)).cluster == "tcp://10.1.2.3:8786"  # the file's own says more
    for good in ("local:1", "localhost:8786", "tls://[::1]:8786", "10.0.0.5"):
        assert load_config(None, {"bots": ["random", "greedy"], "cluster": good}).cluster == good
    for bad, says in (("local:0", "needs at least one worker process, got 'local:0'"),
                      ("local", "cluster must be local:N"), ("local:two", "cluster must be local:N"),
                      ("tcp://a b:1", "got 'tcp://a b:1'"), ("http://x:8786", "got 'http://x:8786'")):
        with pytest.raises(ConfigError, match=says):
            load_config(None, {"bots": ["random", "greedy"], "cluster": bad})


def test_no_scheduler_at_the_address_is_one_line_and_the_tournament_is_not_finished(cli, tmp_path, monkeypatch):
    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 1.0)
    result = cli("tournament", "run", "--bots", "random,greedy", "--games", "2", "--cluster", "tcp://127.0.0.1:9",
                 "--name", "nowhere")
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert "no Dask scheduler answers at tcp://127.0.0.1:9" in result.output and "dask scheduler" in result.output
    with sqlite3.connect(tmp_path / "arena.db") as db:
        assert db.execute("select status from tournaments where name = 'nowhere'").fetchone() == ("interrupted",)
    bad = cli("tournament", "run", "--bots", "random,greedy", "--cluster", "local:0")
    assert bad.exit_code == 2 and bad.output.count("\n") == 1 and "local:0" in bad.output, bad.output


def _arena(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """The arena command in its own session (Ctrl-C goes to its process group), without
    the ARENA_* settings of whoever runs the tests, with those of ``env``."""
    environment = {k: v for k, v in os.environ.items() if k not in ("ARENA_DB", "ARENA_CLUSTER")}
    environment.update(PYTHONPATH=str(Path(__file__).parent.parent), **(env or {}))
    return subprocess.Popen([sys.executable, "-m", "arena", *args], cwd=cwd, env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def test_a_cluster_without_a_worker_that_can_play_is_one_line_before_any_game(tmp_path, monkeypatch):
    from distributed import Client, LocalCluster

    monkeypatch.setattr(cluster, "WORKER_WAIT_SECONDS", 1.0)
    with LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address=None) as empty:
        with pytest.raises(ClusterError) as raised:
            ClusterExecutor(empty.scheduler_address, worker_needs(["greedy"]))
        assert str(raised.value) == (
            f"the cluster at {empty.scheduler_address} has no worker after 1 s: start some with 'dask worker "
            f"{empty.scheduler_address} --nworkers N --nthreads 1' (see docs/cluster.md)")
        empty.scale(1)
        # A worker takes a while to start on a busy machine: have it up before the check.
        with Client(empty.scheduler_address) as client:
            client.wait_for_workers(1, timeout=120)
        notes: list[str] = []
        refused = r"worker tcp://127\.0\.0\.1:\d+( \(\S+\))? gets no games: it has connectk-arena"
        with pytest.raises(ClusterError, match=r"no worker of the cluster at .* can play these games: " + refused):
            ClusterExecutor(empty.scheduler_address, WorkerNeeds("0.0.1"), notes.append)
        assert len(notes) == 1 and "the tournament 0.0.1 (install that version)" in notes[0]


SLOW = ["--bots", f"{SLEEPY}:stream=1,{SLEEPY}:stream=2,greedy", "--games", "12", "--seed", "11", "--name", "slow"]


def _run_until_some_are_stored(db: Path, *args: str, cwd: Path, env: dict[str, str] | None = None
                               ) -> subprocess.Popen:
    run = _arena("tournament", "run", *SLOW, "--db", db.name, *args, cwd=cwd, env=env)
    deadline = time.monotonic() + 120
    while _stored(db) < 2 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return run


def test_ctrl_c_keeps_the_finished_games_in_one_line_and_the_same_command_resumes(tmp_path):
    db = tmp_path / "stopped.db"
    run = _run_until_some_are_stored(db, "--cluster", "local:2", cwd=tmp_path)
    os.killpg(run.pid, signal.SIGINT)  # as a terminal does: the whole process group, local workers too
    _out, err = run.communicate(timeout=60)
    assert run.returncode == 130, err.decode()
    stored = _stored(db)
    assert err.decode().splitlines() == [
        f"Interrupted: {stored} of 36 games stored in stopped.db; run the same command again to resume."]
    assert 2 <= stored < 36
    again = _arena("tournament", "run", *SLOW, "--db", db.name, "--cluster", "local:2", cwd=tmp_path)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err.decode()
    assert f"{stored} were already stored" in out.decode()
    whole = tmp_path / "whole.db"
    assert _arena("tournament", "run", *SLOW, "--db", whole.name, cwd=tmp_path).wait(timeout=300) == 0
    assert snapshot(str(db), "slow") == snapshot(str(whole), "slow")


def test_the_scheduler_going_away_is_one_line_and_running_again_resumes(tmp_path):
    scheduler, address = _scheduler(tmp_path)
    worker = _worker(address, "w", tmp_path)
    db = tmp_path / "orphaned.db"
    try:
        run = _run_until_some_are_stored(db, "--cluster", address, cwd=tmp_path)
        scheduler.kill()
        _out, err = run.communicate(timeout=60)
    finally:
        for process in (worker, scheduler):
            process.kill()
            process.wait()
    stored = _stored(db)
    assert run.returncode == 1, err.decode()
    assert err.decode().splitlines() == [
        f"playing on the Dask cluster at {address}: 1 worker checked",
        f"Stopped: lost the connection to the cluster's scheduler at {address}: {stored} of 36 games stored in "
        "orphaned.db; run the same command again to resume."]
    assert 2 <= stored < 36
    with sqlite3.connect(db) as conn:
        assert conn.execute("select status from tournaments").fetchone() == ("interrupted",)
    # Again, on another cluster: the one of ARENA_CLUSTER, where the flag says nothing.
    again = _arena("tournament", "run", *SLOW, "--db", db.name, cwd=tmp_path, env={"ARENA_CLUSTER": "local:2"})
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err.decode()
    assert f"{stored} were already stored" in out.decode() and _stored(db) == 36


# --- which cluster: DASK_SCHEDULER_ADDRESS, scheduler files, --local ------------------------------------


def test_dask_scheduler_address_is_the_last_place_a_cluster_is_looked_for_and_none_plays_here(tmp_path, monkeypatch):
    monkeypatch.delenv("ARENA_CLUSTER", raising=False)
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://dask.lan:8786")
    field = {"bots": ["random", "greedy"]}
    assert load_config(None, field).cluster == "tcp://dask.lan:8786"
    monkeypatch.setenv("ARENA_CLUSTER", "tcp://arena.lan:8786")
    assert load_config(None, field).cluster == "tcp://arena.lan:8786"
    file = tmp_path / "t.toml"
    file.write_text('bots = ["random", "greedy"]\ncluster = "tcp://file.lan:8786"\n')
    assert load_config(str(file)).cluster == "tcp://file.lan:8786"
    for setting in (load_config(str(file), {"cluster": "none"}), load_config(None, {**field, "cluster": "none"})):
        assert setting.cluster is None  # --local, --cluster none: here, whatever is configured
    file.write_text('bots = ["random", "greedy"]\ncluster = "none"\n')
    assert load_config(str(file)).cluster is None
    monkeypatch.delenv("ARENA_CLUSTER")
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "http://nope")
    with pytest.raises(ConfigError, match="got 'http://nope'"):
        load_config(None, field)


def test_the_cluster_flags_one_at_a_time_and_never_with_workers(cli, tmp_path, monkeypatch):
    from arena.cli.cluster import chosen_cluster

    assert chosen_cluster(None, None, True, None) == "none"
    assert chosen_cluster(None, "s.json", False, None) == f"scheduler-file:{tmp_path / 's.json'}"
    assert chosen_cluster("tcp://a:1", None, False, 0) == "tcp://a:1"
    assert chosen_cluster("none", None, False, 4) == "none"  # --workers 4 here
    for args, says in (
        (("--cluster", "local:2", "--workers", "3"),
         "--workers 3 sets the worker processes of this machine, and --cluster plays on a Dask cluster"),
        (("--scheduler-file", "s.json", "--workers", "3"), "and --scheduler-file plays on a Dask cluster"),
        (("--cluster", "tcp://a:1", "--local"), "--cluster and --local each say where the games are played"),
    ):
        for command in (("tournament", "run", "--bots", "random,greedy"), ("league", "run", "nowhere")):
            result = cli(*command, *args)
            assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
            assert says in result.output, result.output


def test_workers_with_a_cluster_named_by_the_environment_is_refused_unless_local(cli, monkeypatch):
    for variable in ("ARENA_CLUSTER", "DASK_SCHEDULER_ADDRESS"):
        with monkeypatch.context() as env:
            env.setenv(variable, "tcp://127.0.0.1:9")
            for command in (("tournament", "run", "--bots", "random,greedy"), ("league", "run", "nowhere")):
                result = cli(*command, "--workers", "1")
                assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
                assert f"{variable} names a Dask cluster (tcp://127.0.0.1:9): add --local" in result.output


def test_local_plays_here_whatever_cluster_is_configured(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_CLUSTER", "tcp://127.0.0.1:9")  # no scheduler: the run would fail there
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://127.0.0.1:9")
    (tmp_path / "t.toml").write_text('bots = ["random", "greedy"]\ngames = 2\ncluster = "tcp://127.0.0.1:9"\n')
    for name, flag in (("a", ("--local",)), ("b", ("--cluster", "none"))):
        result = cli("tournament", "run", "t.toml", "--workers", "1", "--name", name, *flag)
        assert result.exit_code == 0 and "2 games played" in result.output, result.output


def test_a_scheduler_file_names_the_cluster_and_the_line_says_which_cluster_plays(tmp_path, monkeypatch):
    scheduler, address = _scheduler(tmp_path)
    worker = _worker(address, "w", tmp_path)
    try:
        notes: list[str] = []
        monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", f"scheduler-file:{tmp_path / 'scheduler.json'}")
        monkeypatch.delenv("ARENA_CLUSTER", raising=False)
        chosen = load_config(None, {"bots": ["random", "greedy"]}).cluster
        assert chosen == f"scheduler-file:{tmp_path / 'scheduler.json'}"
        executor = ClusterExecutor(chosen, worker_needs(["random"]), notes.append)
        executor.close()
        assert executor.address == address
        assert notes == [f"playing on the Dask cluster at {address} (from DASK_SCHEDULER_ADDRESS): 1 worker checked"]
    finally:
        for process in (worker, scheduler):
            process.kill()
            process.wait()
    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 0.5)
    with pytest.raises(ClusterError, match=r"cannot read the Dask scheduler file .*missing.json: it does not exist"):
        ClusterExecutor(f"scheduler-file:{tmp_path / 'missing.json'}", worker_needs(["random"]))


def test_the_dashboard_link_is_given_only_where_the_scheduler_can_serve_it():
    class Client:
        dashboard_link = "http://10.0.0.1:8787/status"

        def __init__(self, bokeh: bool) -> None:
            self.bokeh = bokeh

        def scheduler_info(self) -> dict:
            return {"services": {"dashboard": 8787}}  # distributed lists it with or without bokeh

        def run_on_scheduler(self, fn, name):
            assert name == "bokeh"
            return object() if self.bokeh else None

    executor = ClusterExecutor.__new__(ClusterExecutor)
    executor.cluster = executor.address = "tcp://10.0.0.1:8786"
    executor._local, executor._good, executor.refused = None, {"w"}, {}
    executor._client = Client(bokeh=True)
    assert executor._describe() == ("playing on the Dask cluster at tcp://10.0.0.1:8786: 1 worker checked; "
                                    "dashboard http://10.0.0.1:8787/status")
    executor._client = Client(bokeh=False)
    assert executor._describe() == "playing on the Dask cluster at tcp://10.0.0.1:8786: 1 worker checked"


# --- workers without the arena, refused at once, checked again ------------------------------------------------


HIDE_ARENA = '''
import os, sys


class HideArena:
    """The arena is not importable while the file HIDE_ARENA names exists."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("arena", "bots") and os.path.exists(os.environ["HIDE_ARENA"]):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None


sys.meta_path.insert(0, HideArena())
'''


def test_a_worker_without_the_arena_is_named_at_once_stays_up_and_plays_once_it_has_it(tmp_path, monkeypatch):
    monkeypatch.setattr(cluster, "WORKER_WAIT_SECONDS", 3600.0)  # a refusal must not wait for this
    monkeypatch.setattr(cluster, "RECHECK_SECONDS", 0.5)
    hider = tmp_path / "hider"
    hider.mkdir()
    (hider / "sitecustomize.py").write_text(HIDE_ARENA)
    flag = tmp_path / "hidden"
    flag.touch()
    scheduler, address = _scheduler(tmp_path)
    bare = _worker(address, "bare", tmp_path, hider, env={"HIDE_ARENA": str(flag)})
    try:
        from distributed import Client

        with Client(address, timeout=30) as client:
            client.wait_for_workers(1, timeout=120)
            (worker,) = client.scheduler_info()["workers"]
            with pytest.raises(ClusterError) as refused:
                ClusterExecutor(address, worker_needs(["greedy"]))
            assert str(refused.value) == (
                f"no worker of the cluster at {address} can play these games: worker {worker} (bare) has no arena "
                f"installed: {cluster._install_arena(arena_version())} there")
            assert list(client.scheduler_info()["workers"]) == [worker]  # not shut down by a task it cannot read
            good = _worker(address, "good", tmp_path)
            try:
                client.wait_for_workers(2, timeout=120)
                notes: list[str] = []
                executor = ClusterExecutor(address, worker_needs(["greedy"]), notes.append)
                try:
                    assert executor.admitted == set(client.scheduler_info()["workers"]) - {worker}
                    assert notes[0].startswith(f"worker {worker} (bare) has no arena installed")
                    flag.unlink()  # its owner installs the arena: checked again, it joins
                    deadline = time.monotonic() + 120
                    while executor.workers < 2 and time.monotonic() < deadline:
                        time.sleep(0.1)
                    assert worker in executor.admitted
                    assert notes[-1] == f"worker {worker} (bare) passes its check now and gets games"
                finally:
                    executor.close()
            finally:
                good.kill()
                good.wait()
    finally:
        for process in (bare, scheduler):
            process.kill()
            process.wait()


# --- TLS ------------------------------------------------------------------------------------------------------


def test_a_tls_cluster_without_dask_tls_settings_is_one_line(cli, monkeypatch):
    import dask

    with dask.config.set({"distributed.comm.tls.ca-file": None, "distributed.comm.tls.client.cert": None}):
        with pytest.raises(ClusterError) as raised:
            ClusterExecutor("tls://127.0.0.1:9", worker_needs(["greedy"]))
        assert str(raised.value).startswith("the cluster at tls://127.0.0.1:9 speaks TLS, and Dask has no TLS "
                                            "settings here: set DASK_DISTRIBUTED__COMM__TLS__CA_FILE")
        result = cli("tournament", "run", "--bots", "random,greedy", "--cluster", "tls://127.0.0.1:9")
    assert result.exit_code == 2 and result.output.count("\n") == 1 and "docs/cluster.md" in result.output


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (openssl), or skip."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                           "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
                          capture_output=True)
    if made.returncode:
        pytest.skip(f"openssl cannot make a certificate here: {made.stderr.decode()[:200]}")
    return cert, key


def test_a_tls_cluster_plays_with_dasks_own_tls_settings(tmp_path, monkeypatch):
    import dask

    if not shutil.which("openssl"):
        pytest.skip("no openssl to make a certificate")
    cert, key = _certificate(tmp_path)
    tls = ("--tls-ca-file", str(cert), "--tls-cert", str(cert), "--tls-key", str(key))
    scheduler, address = _scheduler(tmp_path, options=("--protocol", "tls", *tls))
    worker = _worker(address, "w", tmp_path, options=tls)
    try:
        assert address.startswith("tls://")
        settings = {"distributed.comm.tls.ca-file": str(cert), "distributed.comm.tls.client.cert": str(cert),
                    "distributed.comm.tls.client.key": str(key)}
        with dask.config.set(settings):
            db = str(tmp_path / "tls.db")
            outcome = run_tournament(config(db, bots=["random", "greedy"], games=2, cluster=address), Store(db))
    finally:
        for process in (worker, scheduler):
            process.kill()
            process.wait()
    assert outcome.played == 2 and not outcome.interrupted


# --- the scheduler lost, and back ---------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_lost_scheduler_is_cluster_lost_closing_is_quick_and_a_new_executor_plays_on_its_successor(tmp_path):
    from arena.tournament.execution import WorkerLost
    from arena.tournament.executors import make_executor

    port = _free_port()
    scheduler, address = _scheduler(tmp_path, port)
    worker = _worker(address, "w", tmp_path)
    games = schedule(config(":memory:", bots=["random:stream=1", "random:stream=2"], games=2))
    try:
        executor = make_executor(0, None, address, worker_needs(["random"]))
        assert sum(len(r) for r in executor.map_unordered(play_games, [games[:1]])) == 1
        scheduler.kill()  # the league waits for entrants meanwhile
        scheduler.wait()
        with pytest.raises(cluster.ClusterLost) as lost:
            for _ in executor.map_unordered(play_games, [games[1:]]):
                pass
        assert isinstance(lost.value, WorkerLost) and "\n" not in str(lost.value)
        assert str(lost.value).startswith(f"lost the connection to the cluster's scheduler at {address}")
        executor.close(cancel=True)  # quiet, and bounded by CLOSE_SECONDS
        scheduler, _ = _scheduler(tmp_path, port)  # restarted on the same port, with a worker (Dask's workers
        worker.kill()  # leave with their scheduler; 'dask worker' under a supervisor, or a nanny, starts them again)
        worker.wait()
        worker = _worker(address, "w2", tmp_path)
        again = make_executor(0, None, address, worker_needs(["random"]))
        try:
            assert sum(len(r) for r in again.map_unordered(play_games, [games[1:]])) == 1
        finally:
            again.close()
    finally:
        for process in (worker, scheduler):
            process.kill()
            process.wait()


# --- a league's rounds grow with the workers ------------------------------------------------------------


def test_a_leagues_rounds_grow_with_the_workers_that_join(tmp_path):
    from arena.league.scheduler import ROUND_GAMES_PER_WORKER, create_league, run_league

    class Growing(SerialExecutor):
        """A cluster that gains a worker after each round."""

        def __init__(self) -> None:
            self.workers_now, self.rounds = 1, []

        @property
        def workers(self) -> int:
            return self.workers_now

        def map_unordered(self, fn, chunks):
            chunks = list(chunks)
            self.rounds.append(sum(len(chunk) for chunk in chunks))
            self.workers_now += 1
            return super().map_unordered(fn, chunks)

    file = tmp_path / "league.toml"
    file.write_text('bots = ["random:stream=1", "random:stream=2", "random:stream=3", "greedy"]\ngames = 6\n')
    with Store(tmp_path / "l.db") as store:
        create_league(store, "l", str(file))
        executor = Growing()
        outcome = run_league(store, store.leagues.check("l"), executor=executor, until_complete=True)
    assert outcome.played == 36
    assert executor.rounds[:2] == [ROUND_GAMES_PER_WORKER, 2 * ROUND_GAMES_PER_WORKER]


def test_records_lost_with_their_worker_after_the_task_finished_are_played_again_not_awaited_forever(monkeypatch):
    """A task finished, then every worker it was given to died before its records were
    fetched: Dask would compute it again only there, so waiting for its result would
    hang the run. Its games are given out again instead."""
    import arena.tournament.cluster as cluster_module
    from arena.tournament.cluster import _Task

    monkeypatch.setattr(cluster_module, "RESULT_WAIT_SECONDS", 0.01)

    class LostAfterFinishing:
        status = "finished"

        def result(self, timeout=None):
            assert timeout is not None, "awaited without a limit"
            self.status = "lost"  # the worker died meanwhile
            raise TimeoutError

        def cancel(self):
            self.cancelled = True

    executor = object.__new__(ClusterExecutor)
    future = LostAfterFinishing()
    specs = schedule(config(":memory:", bots=["random", "greedy"], games=2))
    executor._tasks = {future: _Task(specs, frozenset({"tcp://gone:1"}), 0)}
    given: list[tuple[list, int]] = []
    executor._give_out = lambda specs, losses=0: given.append((specs, losses))
    assert executor._task_done(future) == []
    assert given == [(specs, 1)] and future.cancelled and not executor._tasks
