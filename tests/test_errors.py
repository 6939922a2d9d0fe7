"""The error boundary: a user's mistake is one line and exit code 2, a bug is not.

Every library error that reports a mistake in what a person gave the arena
subclasses :class:`arena.errors.ArenaError`; the ``arena`` command turns exactly
those into ``Error: ...`` with exit code 2, for every command, and lets anything
else (a bug) show its traceback.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import click
import pytest
from click.testing import CliRunner

import arena
import bots
from arena.cli.main import main
from arena.errors import ArenaError
from arena.store import Store, StoreError
from arena.store.games import Games
from arena.store.submissions import Submissions

# Exception classes that do not report a user's mistake, and why.
NOT_USER_MISTAKES = {
    "arena.cli.main.ArenaUsageError": "the click form the boundary turns an ArenaError into",
    "arena.sandbox.spawner.SpawnerError": "the sandbox itself broke: an environment fault, not an input",
    "arena.sandbox.spawner.NoSpare": "the spawner could not fork: an environment fault, not an input",
    "arena.bot.BotFailure": "a bot misbehaved in a game: a forfeit, not an input mistake",
    "arena.protocol.descriptors.BotTimeout": "a bot ran out of time: a forfeit, not an input mistake",
    "arena.protocol.server.BotLoadFailed": "a bot's code failed to load: its first answer says why",
    "arena.protocol.handshake.BotOptionValueError": "raised as a program starts: checks make it one line",
    "arena.tournament.execution.WorkerLost": "a worker process died",
    "arena.tournament.cluster.ClusterLost": "the cluster's scheduler went away: the run stops, a league reconnects",
    "arena.sandbox.namespaces.NamespaceError": "the kernel refused a namespace: the spawner reports it, never raised",
    "arena.sandbox.proxy.SandboxUnavailable": "the machine cannot isolate bots: checks turn it into one line",
    "bots.search_shared.SearchAborted": "the solver's internal time-out signal",
    "arena.errors.ArenaFault": "the arena failed during a game: the game is void, not anyone's mistake",
    "arena.tournament.faults.ArenaFailing": "void games in a row: the run stops with the fault in one line",
}


def all_modules() -> Iterator[ModuleType]:
    """Every module of the arena and of the built-in bots."""
    for package in (arena, bots):
        yield package
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
            if info.name.endswith("__main__"):
                continue  # running it would start the command
            yield importlib.import_module(info.name)


def exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined (not just imported) in those modules, by full name."""
    found: dict[str, type[BaseException]] = {}
    for module in all_modules():
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module.__name__:
                found[f"{module.__name__}.{name}"] = obj
    return found


def test_every_library_error_subclasses_arena_error() -> None:
    classes = exception_classes()
    assert "arena.engine.game.RulesError" in classes  # the walk does reach the modules
    public = {name: cls for name, cls in classes.items() if not name.rsplit(".", 1)[1].startswith("_")}
    wrong = sorted(
        name for name, cls in public.items()
        if name not in NOT_USER_MISTAKES and not issubclass(cls, ArenaError)
    )
    assert not wrong, f"error classes that do not subclass ArenaError: {wrong}"
    # A ValueError anywhere (private ones included) reports a bad value: an ArenaError too.
    bare = sorted(
        name for name, cls in classes.items() if issubclass(cls, ValueError) and not issubclass(cls, ArenaError)
    )
    assert not bare, f"ValueError subclasses outside ArenaError: {bare}"
    assert set(NOT_USER_MISTAKES) <= set(classes), "an allowed exception class no longer exists"


def test_arena_error_is_a_value_error_for_old_callers() -> None:
    assert issubclass(ArenaError, ValueError)


# --- every command that takes --db -----------------------------------------------------


def commands_with_db(group: click.Group, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """The path of every command that has a --db option, subgroups included."""
    ctx = click.Context(group)
    found: set[tuple[str, ...]] = set()
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            found |= commands_with_db(command, (*prefix, name))
        elif any(param.name == "db" for param in command.params):
            found.add((*prefix, name))
    return found


# For each command with --db, arguments that make it open the database first
# ("BOT" and "GAME" stand for files the test writes).
ARGUMENTS: dict[tuple[str, ...], list[str]] = {
    ("bots",): [],
    ("submit",): ["BOT"],
    ("games",): [],
    ("show",): ["1"],
    ("analyse",): ["1"],
    ("replay",): ["1"],
    ("export",): ["1"],
    ("import",): ["GAME"],
    ("standings",): [],
    ("crosstable",): [],
    ("colours",): [],
    ("tournaments",): [],
    ("tournament", "run"): ["--bots", "random,greedy", "--games", "2", "--workers", "1", "--name", "t"],
    ("match",): ["random", "greedy", "-n", "2"],
    ("play",): ["greedy"],  # checks its database before the first move: a mistake asks for no move
    ("serve",): ["--port", "0"],
    ("users", "add"): ["ann"],
    ("users", "list"): [],
    ("users", "disable"): ["ann"],
    ("users", "enable"): ["ann"],
    ("users", "token"): ["ann"],
    ("users", "password"): ["ann"],
    ("users", "unlock"): ["ann"],
    ("users", "delete"): ["ann", "--yes"],
    ("league", "create"): ["cup"],
    ("league", "list"): [],
    ("league", "add-member"): ["cup", "ann"],
    ("league", "settings"): ["cup"],
    ("league", "run"): ["cup", "--until-complete"],
    ("league", "standings"): ["cup"],
    ("backup",): ["backup.db"],
}


def arguments(command: tuple[str, ...], tmp_path: Path) -> list[str]:
    """The command line of ``command`` with its files written in ``tmp_path``."""
    bot = tmp_path / "my_bot.py"
    bot.write_text("from arena.bot import Bot\n\nclass MyBot(Bot):\n    def choose_move(self, board):\n"
                   "        return board.legal_moves()[0]\n")
    game = tmp_path / "game.txt"
    game.write_text("4 4 4\n")
    files = {"BOT": str(bot), "GAME": str(game)}
    return [*command, *(files.get(arg, arg) for arg in ARGUMENTS[command])]


def test_the_db_cases_cover_every_command_with_db() -> None:
    assert set(ARGUMENTS) == commands_with_db(main)


def run(args: list[str]) -> click.testing.Result:
    return CliRunner().invoke(main, args, catch_exceptions=False)


def assert_user_error(result: click.testing.Result, fragment: str) -> None:
    assert "Traceback" not in result.output
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert fragment in lines[0], lines[0]


@pytest.mark.parametrize("command", sorted(ARGUMENTS), ids=" ".join)
def test_a_file_that_is_no_database_is_one_line_and_exit_2(
    command: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB", raising=False)
    not_a_db = tmp_path / "notes.txt"
    not_a_db.write_text("these are not the games you are looking for\n" * 100)
    result = run([*arguments(command, tmp_path), "--db", str(not_a_db)])
    assert_user_error(result, "is not an arena database")


@pytest.mark.parametrize("command", sorted(set(ARGUMENTS) - {("bots",)}), ids=" ".join)
def test_a_database_in_a_missing_folder_is_one_line_and_exit_2(
    command: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB", raising=False)
    missing = tmp_path / "no such folder" / "arena.db"
    result = run([*arguments(command, tmp_path), "--db", str(missing)])
    assert_user_error(result, "no such folder")
    assert not missing.parent.exists()


def test_bots_without_a_database_lists_the_plugins(tmp_path: Path) -> None:
    # No database yet is the normal start (the default arena.db): not a mistake here.
    result = run(["bots", "--db", str(tmp_path / "no such folder" / "arena.db")])
    assert result.exit_code == 0, result.output
    assert "minimax" in result.output


@pytest.mark.parametrize("database", ["text", "foreign", "missing folder"])
def test_play_checks_its_database_before_the_first_move(tmp_path: Path, database: str) -> None:
    path = tmp_path / "no such folder" / "arena.db" if database == "missing folder" else tmp_path / "x.db"
    if database == "text":
        path.write_text("not a database\n" * 100)
    elif database == "foreign":
        with sqlite3.connect(path) as conn:
            conn.execute("create table customers (name)")
        conn.close()
    result = CliRunner().invoke(main, ["play", "greedy", "--db", str(path)], input="4\ns\nq\n",
                                catch_exceptions=False)
    assert_user_error(result, str(path.name if database != "missing folder" else "no such folder"))
    assert "to move" not in result.output  # not one move was asked for


@pytest.mark.parametrize("hint_bot, fragment", [
    ("nosuch", "unknown bot 'nosuch'"),
    ("minimax:depth=x", "depth"),
    ("missing_bot.py", "missing_bot.py"),
])
def test_play_checks_its_hint_bot_before_the_first_move(tmp_path: Path, hint_bot: str, fragment: str) -> None:
    result = CliRunner().invoke(main, ["play", "--hint-bot", hint_bot, "--db", str(tmp_path / "arena.db")],
                                input="h\n4\nq\n", catch_exceptions=False)
    assert_user_error(result, "--hint-bot")
    assert fragment in result.output
    assert "to move" not in result.output
    assert not (tmp_path / "arena.db").exists()


def test_play_with_a_good_hint_bot_and_a_new_database_starts(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    result = CliRunner().invoke(main, ["play", "--hint-bot", "greedy", "--db", str(db)], input="h\n4\ns\nq\n",
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "hint: " in result.output and "saved as game 1" in result.output
    assert db.exists()


# --- a bug is not a user's mistake -------------------------------------------------------


@pytest.fixture
def empty_db(tmp_path: Path) -> str:
    path = str(tmp_path / "arena.db")
    with Store(path):
        pass
    return path


@pytest.mark.parametrize("command, repository", [(["games"], Games), (["bots"], Submissions)], ids=["games", "bots"])
def test_a_plain_value_error_in_a_command_is_a_bug_not_exit_2(
    command: list[str], repository: type, empty_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("a programming error")

    monkeypatch.setattr(repository, "all", broken)
    with pytest.raises(ValueError, match="a programming error"):
        run([*command, "--db", empty_db])
    result = CliRunner().invoke(main, [*command, "--db", empty_db])
    assert result.exit_code == 1
    assert type(result.exception) is ValueError


@pytest.mark.parametrize("command, repository", [(["games"], Games), (["bots"], Submissions)], ids=["games", "bots"])
def test_an_arena_error_in_any_command_is_one_line_and_exit_2(
    command: list[str], repository: type, empty_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same place as the bug above, but a user's mistake: the boundary needs no decorator.
    def refused(*args: object, **kwargs: object) -> None:
        raise StoreError("no such thing in the database: list them with 'arena games'")

    monkeypatch.setattr(repository, "all", refused)
    assert_user_error(run([*command, "--db", empty_db]), "no such thing")


# --- stores are closed -------------------------------------------------------------------


def test_a_store_closes_at_the_end_of_a_with_block(tmp_path: Path) -> None:
    with Store(tmp_path / "arena.db") as store:
        store.tournaments.all()
    with pytest.raises(Exception, match="closed"):
        store.tournaments.all()


@pytest.mark.parametrize("args", [["games"], ["show", "1"], ["bots"]], ids=" ".join)
def test_commands_close_the_store_they_open(
    args: list[str], empty_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[str] = []
    original = Store.close

    def close(self: Store) -> None:
        closed.append(self.path)
        original(self)

    monkeypatch.setattr(Store, "close", close)
    run([*args, "--db", empty_db])  # `show 1` fails (no game 1): the store is closed all the same
    assert closed == [empty_db]


def test_importing_a_file_that_is_not_text_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # A UnicodeDecodeError is a ValueError but no ArenaError: the command names the mistake itself.
    binary = tmp_path / "game.bin"
    binary.write_bytes(b"\xff\xfe\x00\x81 not text")
    result = run(["import", str(binary), "--db", str(tmp_path / "arena.db")])
    assert_user_error(result, "is not a text file")
