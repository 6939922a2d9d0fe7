"""The spawner: bot processes are forked ahead of need from a small process that
never runs bot code; it survives being killed, sweeps orphans on its own, and
cleans up after spawners that were killed outright."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from arena.engine.game import Rules
from arena.records import GameSpec
from arena.referee.referee import play_game
from arena.sandbox import spawner
from arena.sandbox.spawner_process import BASE_PREFIX, LOCK_NAME, _root
from tests.conftest import TEST_BOTS, process_alive, processes_named

HOSTILE = TEST_BOTS / "hostile.py"


def sandboxed_game(first: str = "random", second: str = "random", seed: int = 1):
    spec = GameSpec(key=str(seed), rules=Rules(), first=first, second=second, pairing=str(seed), seed=seed,
                    isolate=True)
    return play_game(spec)


def test_each_bot_process_is_the_first_of_its_own_pid_namespace(write_bot):
    path = write_bot("parent", """
        import os
        from arena.bot import Bot, Choice

        class Parent(Bot):
            def choose_move(self, board):
                return Choice(board.legal_moves()[0], {"pid": os.getpid(), "parent": os.getppid()})
    """)
    record = sandboxed_game(path)
    seen = {(move.info["pid"], move.info["parent"]) for move in record.moves if move.info}
    # Process 1 of its namespace; its parent (the spawner) lies outside it, so it reads as 0.
    assert seen == {(1, 0)}


def test_a_killed_spawner_is_replaced_and_the_next_game_plays_normally():
    assert sandboxed_game(seed=2).termination in ("win", "draw")
    old = spawner.PROCESS_SPAWNER.get().pid
    os.kill(old, signal.SIGKILL)
    _wait_until(lambda: not process_alive(old))
    record = sandboxed_game(seed=3)
    assert record.termination in ("win", "draw"), record.reason
    assert spawner.PROCESS_SPAWNER.get().pid != old


def test_children_that_escape_their_group_die_even_if_no_game_follows():
    record = sandboxed_game(f"{HOSTILE}:ForksChildren", seed=4)
    tags = [move.info["children"] for move in record.moves if move.info]
    assert tags
    _wait_until(lambda: not any(processes_named(tag) for tag in tags), seconds=3)
    assert not [tag for tag in tags if processes_named(tag)]


def test_folders_of_spawners_that_were_killed_are_removed_by_the_next(tmp_path):
    import fcntl

    stale = Path(_root(), f"{BASE_PREFIX}{os.getpid()}-feedfacecafe")  # a live pid: pids do not tell
    (stale / "bot-1").mkdir(parents=True)
    (stale / "bot-1" / "output.txt").write_text("left behind")
    (stale / LOCK_NAME).write_text("")  # its spawner's lock, released when it died
    alive = Path(_root(), f"{BASE_PREFIX}{2**30}-0123456789ab")  # no such pid here, but its lock is held
    alive.mkdir()
    held = os.open(alive / LOCK_NAME, os.O_RDWR | os.O_CREAT)
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        spawner.PROCESS_SPAWNER.replace()
        assert sandboxed_game(seed=5).termination in ("win", "draw")
        assert not stale.exists()
        assert alive.exists()  # another arena's spawner, in a PID namespace of its own
    finally:
        os.close(held)
        (alive / LOCK_NAME).unlink()
        alive.rmdir()


def _wait_until(condition, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not condition():
        time.sleep(0.01)


def test_bot_folders_go_to_memory_where_there_is_some_else_to_the_temporary_folder(monkeypatch, tmp_path):
    import arena.sandbox.spawner_process as spawner_process

    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK):
        assert spawner_process._root() == "/dev/shm"
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    real_isdir = os.path.isdir
    monkeypatch.setattr(spawner_process.os.path, "isdir", lambda p: p != "/dev/shm" and real_isdir(p))
    assert spawner_process._root() == str(tmp_path)


def test_a_game_whose_bot_process_cannot_be_started_is_void_not_a_forfeit(monkeypatch):
    """The arena's own failure (here its spawner, out of processes, even after a new
    one was started) is charged to no bot: the game is void, with the reason."""
    def broken(self, installed, seconds):
        raise spawner.SpawnerError("no processes left")

    monkeypatch.setattr(spawner.Spawner, "take", broken)
    record = sandboxed_game(seed=7)
    assert record.termination == "void" and record.winner is None
    assert record.reason.startswith("the arena failed: sandbox: could not start a bot process")
    assert "no processes left" in record.reason


REPORTER = """
import os
from arena.bot import Bot, Choice

class Reporter(Bot):
    def choose_move(self, board):
        outcomes = {"secret": os.environ.get("SECRET_TOKEN_FOR_TEST", "absent")}
        try:
            with open("/etc/shadow") as shadow:
                shadow.read(1)
            outcomes["shadow"] = "done"
        except Exception as exc:
            outcomes["shadow"] = type(exc).__name__
        return Choice(board.legal_moves()[0], outcomes)
"""


def test_the_spawner_ignores_the_current_folder_and_the_callers_secrets(monkeypatch, tmp_path, write_bot):
    (tmp_path / "json.py").write_text(f"open({str(tmp_path / 'imported')!r}, 'w').close()\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SECRET_TOKEN_FOR_TEST", "hunter2")
    spawner.PROCESS_SPAWNER.replace()  # started from here, with this environment
    record = sandboxed_game(write_bot("reporter", REPORTER), seed=8)
    assert record.termination in ("win", "draw"), record.reason
    assert not (tmp_path / "imported").exists(), "a module from the current folder ran in the spawner"
    infos = [move.info for move in record.moves if move.info]
    assert infos and all(info["secret"] == "absent" for info in infos)
    assert all(info["shadow"] in ("PermissionError", "FileNotFoundError") for info in infos)


# --- who owns the spawner -------------------------------------------------------------


def test_importing_the_sandbox_starts_nothing_and_registers_no_fork_hook():
    import subprocess
    import sys

    probe = (
        "import os\n"
        "hooks = []\n"
        "real = os.register_at_fork\n"
        "os.register_at_fork = lambda **kw: (hooks.append(kw), real(**kw))\n"
        "import arena.sandbox.spawner, arena.sandbox.proxy, arena.players.plugins\n"
        "ours = [h for kw in hooks for h in kw.values() if h.__module__.startswith('arena')]\n"
        "assert arena.sandbox.spawner.PROCESS_SPAWNER._spawner is None\n"
        "print(len(ours))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "0"


def rules_bot_code():
    from arena.records import BotCode

    return BotCode("random", entry_point="bots.random_bot:RandomBot")


def test_a_sandboxed_bot_takes_its_processes_from_the_spawner_it_is_given():
    from arena.sandbox.proxy import SandboxedBot

    own = spawner.ProcessSpawner()
    try:
        bot = SandboxedBot(rules_bot_code(), {}, spawners=own)
        bot.new_game(Rules(), 0, 1)
        assert bot._pid is not None
        parent = int(Path(f"/proc/{bot._pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        bot.close()
        assert parent == own.get().pid != spawner.PROCESS_SPAWNER.get().pid
    finally:
        own.close()


def test_a_closed_spawner_exits_and_the_next_use_starts_another():
    own = spawner.ProcessSpawner()
    first = own.get().pid
    own.close()
    _wait_until(lambda: not process_alive(first))
    assert not process_alive(first)
    second = own.get().pid
    own.close()
    assert second != first


def test_a_forked_child_forgets_its_parents_spawner():
    own = spawner.ProcessSpawner()
    try:
        parents = own.get()
        child = os.fork()
        if child == 0:  # the child: it must hold no spawner, and start its own
            forgot = own._spawner is None
            mine = own.get()
            ok = forgot and mine is not parents and mine.pid != parents.pid and mine.running()
            own.close()
            os._exit(0 if ok else 1)
        _, status = os.waitpid(child, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        assert own.get() is parents and parents.running()
    finally:
        own.close()


def test_the_cli_lets_its_spawner_go_when_the_command_is_done(cli, write_bot):
    path = write_bot("first", """
        from arena.bot import Bot

        class First(Bot):
            def choose_move(self, board):
                return board.legal_moves()[0]
    """)
    result = cli("match", path, "random", "-n", "1")
    assert result.exit_code == 0, result.output
    assert spawner.PROCESS_SPAWNER._spawner is None


def test_the_spawner_loads_nothing_a_bot_process_does_not_need():
    # Every module the spawner loads is copied, page by page, into every bot process.
    import subprocess
    import sys
    from pathlib import Path

    root = Path(spawner.__file__).resolve().parents[2]
    probe = "import sys, arena.sandbox.spawner_process; print(' '.join(sorted(sys.modules)))"
    loaded = set(subprocess.run(
        [sys.executable, "-S", "-P", "-c", probe], capture_output=True, text=True, check=True,
        env={"PYTHONPATH": str(root)},
    ).stdout.split())
    assert "arena.sandbox.bot_process" in loaded  # the probe did load the spawner's modules
    heavy = {"hashlib", "_hashlib", "sqlite3", "sqlite_utils", "numpy", "numba", "click", "importlib.metadata",
             "multiprocess", "arena.players", "arena.referee", "arena.league", "arena.store", "arena.ratings",
             "arena.entry", "bots"}
    assert loaded & heavy == set()
