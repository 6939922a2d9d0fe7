"""The arena changes no database it does not own, and reading never writes.

Every command that takes --db, pointed at another program's SQLite file, a file
with a clashing ``games`` table, a text file or an empty file: a reading command
leaves each byte as it was (and leaves no -wal/-shm files beside it); a writing
command refuses every file that is not an arena database (or empty) in one line
with exit code 2, before anything is written. And every command finds the database
a tournament file names (``--config FILE``; its ``db`` is relative to the file).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

import click.testing
import pytest
from click.testing import CliRunner

from arena.cli.main import main
from arena.store import Store, StoreError
from arena.store.migrations import MIGRATION_NAMES, migrations
from tests.test_errors import ARGUMENTS, arguments

READING = [("bots",), ("games",), ("show",), ("replay",), ("export",), ("standings",), ("crosstable",), ("colours",),
           ("tournaments",), ("users", "list"), ("league", "list"), ("league", "standings"),
           ("league", "settings"), ("backup",)]  # backup writes its copy elsewhere, never the database
WRITING = [("submit",), ("analyse",), ("import",), ("tournament", "run"), ("match",), ("play",),
           # the site stores accounts and uploads, and upgrades an older database once at start
           ("serve",), ("users", "add"), ("users", "disable"), ("users", "enable"), ("users", "token"),
           ("users", "password"), ("users", "unlock"), ("users", "delete"), ("league", "create"),
           ("league", "add-member"),
           ("league", "run")]


def test_the_cases_cover_every_command_with_db() -> None:
    assert set(READING) | set(WRITING) == set(ARGUMENTS)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def foreign(path: Path) -> None:
    """Another program's database: a customers table."""
    conn = sqlite3.connect(path)
    conn.execute("create table customers (id integer primary key, name text)")
    conn.execute("insert into customers (name) values ('Ada'), ('Grace')")
    conn.commit()
    conn.close()


def foreign_wal(path: Path) -> None:
    """Another program's database in WAL mode (a reader can leave -wal/-shm files)."""
    conn = sqlite3.connect(path)
    conn.execute("pragma journal_mode=wal")
    conn.execute("create table customers (id integer primary key, name text)")
    conn.commit()
    conn.close()


def clashing(path: Path) -> None:
    """A database with a table of the arena's name: ``games``."""
    conn = sqlite3.connect(path)
    conn.execute("create table games (id integer primary key, title text)")
    conn.execute("insert into games (title) values ('Go')")
    conn.commit()
    conn.close()


def text(path: Path) -> None:
    path.write_text("my notes, not a database\n" * 50)


def empty(path: Path) -> None:
    path.write_bytes(b"")


NOT_ARENA: dict[str, Callable[[Path], None]] = {
    "foreign": foreign, "foreign-wal": foreign_wal, "clashing-games": clashing, "text": text,
}


def run(args: list[str], input: str | None = None) -> click.testing.Result:
    return CliRunner().invoke(main, args, catch_exceptions=False, input=input)


def assert_one_line_error(result: click.testing.Result, fragment: str) -> None:
    assert "Traceback" not in result.output
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert fragment in lines[0], lines[0]


def beside(path: Path) -> set[str]:
    """Files SQLite may leave beside a database."""
    return {p.name for p in path.parent.iterdir() if p.name.startswith(path.name + "-")}


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB", raising=False)


@pytest.mark.parametrize("kind", sorted(NOT_ARENA))
@pytest.mark.parametrize("command", sorted(ARGUMENTS), ids=" ".join)
def test_a_file_that_is_no_arena_database_is_refused_and_left_byte_identical(
    command: tuple[str, ...], kind: str, tmp_path: Path
) -> None:
    path = tmp_path / "theirs.db"
    NOT_ARENA[kind](path)
    before = sha256(path)
    result = run([*arguments(command, tmp_path), "--db", str(path)])
    assert_one_line_error(result, "is not an arena database")
    assert sha256(path) == before
    assert beside(path) == set()


@pytest.mark.parametrize("command", sorted(ARGUMENTS), ids=" ".join)
def test_a_folder_given_as_the_database_is_one_line_saying_so_and_left_as_it_was(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    result = run([*arguments(command, tmp_path), "--db", str(folder)])
    assert_one_line_error(result, f"{str(folder)!r} is a folder, not a database file")
    assert str(folder / "arena.db") in result.output  # what to pass instead
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_the_refusal_names_the_file_its_tables_and_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "shop.db"
    foreign(path)
    result = run(["standings", "--db", str(path)])
    assert_one_line_error(result, "shop.db")
    assert "customers" in result.output and "pass --db" in result.output


@pytest.mark.parametrize("command", READING, ids=" ".join)
def test_reading_commands_leave_an_empty_file_as_it_is(command: tuple[str, ...], tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    empty(path)
    result = run([*arguments(command, tmp_path), "--db", str(path)])
    assert "Traceback" not in result.output
    assert result.exit_code in (0, 2), result.output  # "no games stored yet" is a one-line error
    assert path.read_bytes() == b""
    assert beside(path) == set()


def test_a_writing_command_makes_an_empty_file_an_arena_database(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    empty(path)
    result = run([*arguments(("import",), tmp_path), "--db", str(path)])
    assert result.exit_code == 0, result.output
    with Store(path, read_only=True) as store:
        assert len(store.games.all()) == 1


@pytest.fixture
def arena_db(tmp_path: Path) -> Path:
    """An arena database (WAL mode, as the arena writes it) holding one game, id 1."""
    path = tmp_path / "arena.db"
    result = run([*arguments(("import",), tmp_path), "--db", str(path)])
    assert result.exit_code == 0, result.output
    return path


@pytest.mark.parametrize("command", READING, ids=" ".join)
def test_reading_commands_never_write_an_arena_database(
    command: tuple[str, ...], arena_db: Path, tmp_path: Path
) -> None:
    before = sha256(arena_db)
    extra = ["--delay", "0"] if command == ("replay",) else []
    result = run([*arguments(command, tmp_path), *extra, "--db", str(arena_db)])
    assert "Traceback" not in result.output
    assert result.exit_code in (0, 2), result.output  # standings of casual games only may say so
    assert sha256(arena_db) == before
    assert beside(arena_db) == set()


def older(path: Path, stop_before: str) -> None:
    """An arena database from before the migration ``stop_before``."""
    from sqlite_utils import Database

    db = Database(path)
    migrations.apply(db, stop_before=stop_before)
    db.close()


@pytest.mark.parametrize("stop_before", ["0002_submissions", "0004_submission_class", "0005_league",
                                         "0006_tournament_seed_secret"])
def test_reading_an_older_schema_reads_it_without_migrating_the_file(tmp_path: Path, stop_before: str) -> None:
    path = tmp_path / "old.db"
    older(path, stop_before)
    before = sha256(path)
    for command in (["bots"], ["games"], ["standings"], ["show", "1"]):
        result = run([*command, "--db", str(path)])
        assert "Traceback" not in result.output and result.exit_code in (0, 2), result.output
    assert sha256(path) == before
    # The next writing command brings it up to date.
    result = run([*arguments(("import",), tmp_path), "--db", str(path)])
    assert result.exit_code == 0, result.output
    applied = [m.name for m in migrations.applied(Store(path).db)]
    assert applied[-1] == MIGRATION_NAMES[-1]


def test_a_read_only_store_refuses_to_create_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        Store(tmp_path / "missing.db", read_only=True)
    assert not (tmp_path / "missing.db").exists()


@pytest.mark.parametrize("kind", sorted(NOT_ARENA))
@pytest.mark.parametrize("read_only", [True, False])
def test_the_store_refuses_a_foreign_file_before_writing(tmp_path: Path, kind: str, read_only: bool) -> None:
    path = tmp_path / "theirs.db"
    NOT_ARENA[kind](path)
    before = sha256(path)
    with pytest.raises(StoreError, match="not an arena database"):
        Store(path, read_only=read_only)
    assert sha256(path) == before
    assert beside(path) == set()


def test_an_arena_database_with_tables_of_its_own_beside_is_still_an_arena_database(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute("create table notes (text)")
    conn.commit()
    conn.close()
    with Store(path, read_only=True) as store:
        assert store.games.all() == []


# --- item 12: `arena bots` and a bad database ------------------------------------------


def newer(path: Path) -> None:
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute("insert into _sqlite_migrations (migration_set, name, applied_at) "
                 "values ('arena', '9999_from_the_future', '2099-01-01')")
    conn.commit()
    conn.close()


BAD: dict[str, tuple[Callable[[Path], None], str]] = {
    "text": (text, "is not an arena database"),
    "newer-schema": (newer, "newer version"),
    "clashing-games": (clashing, "is not an arena database"),
    "foreign": (foreign, "is not an arena database"),
}


@pytest.mark.parametrize("how", ["--db", "./arena.db", "ARENA_DB"])
@pytest.mark.parametrize("kind", sorted(BAD))
def test_bots_with_a_bad_database_is_one_line_and_exit_2(
    kind: str, how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make, fragment = BAD[kind]
    path = tmp_path / ("arena.db" if how == "./arena.db" else "other.db")
    make(path)
    before = sha256(path)
    if how == "ARENA_DB":
        monkeypatch.setenv("ARENA_DB", str(path))
    result = run(["bots", "--db", str(path)] if how == "--db" else ["bots"])
    assert_one_line_error(result, fragment)
    assert sha256(path) == before


def test_the_docs_list_every_table(tmp_path: Path) -> None:
    docs = (Path(__file__).resolve().parent.parent / "docs" / "tournaments.md").read_text()
    section = docs[docs.index("## The database"):]
    section = section[:section.index("\n## ", 1)]
    with Store(tmp_path / "arena.db") as store:
        tables = set(store.db.table_names())
    listed = {line.split("`")[1] for line in section.splitlines() if line.startswith("| `")}
    assert listed == tables


# --- item 14: the database a tournament file names, for every command ------------------


CUP = 'name = "cup"\nbots = ["random", "greedy"]\ngames = 2\nworkers = 1\ndb = "league.db"\n'


@pytest.fixture
def cup(tmp_path: Path) -> Path:
    """A tournament file in a subfolder whose db is relative to it, run from tmp_path."""
    path = tmp_path / "sub" / "cup.toml"
    path.parent.mkdir()
    path.write_text(CUP)
    result = run(["tournament", "run", "sub/cup.toml"])
    assert result.exit_code == 0, result.output
    return path


def test_a_db_in_a_tournament_file_is_relative_to_the_file(cup: Path, tmp_path: Path) -> None:
    assert (tmp_path / "sub" / "league.db").is_file()
    assert not (tmp_path / "league.db").exists()


@pytest.mark.parametrize("command", [["standings"], ["crosstable"], ["colours"], ["games"], ["show", "1"],
                                     ["export", "1"], ["replay", "1", "--delay", "0"], ["bots"]],
                         ids=lambda c: c[0])
def test_reading_commands_find_the_database_of_a_tournament_file(
    command: list[str], cup: Path, tmp_path: Path
) -> None:
    result = run([*command, "--config", "sub/cup.toml"])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "arena.db").exists()
    if command[0] in ("standings", "games"):
        assert "greedy" in result.output


def test_the_same_from_another_folder(cup: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(cup.parent)
    result = run(["games", "--json", "--config", "cup.toml"])
    assert result.exit_code == 0, result.output
    assert "cup" in result.output


def test_db_beats_config_and_config_beats_arena_db(
    cup: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_DB", str(tmp_path / "env.db"))
    assert run(["games", "--config", "sub/cup.toml"]).exit_code == 0
    assert_one_line_error(run(["games", "--config", "sub/cup.toml", "--db", "elsewhere.db"]), "elsewhere.db")
    assert_one_line_error(run(["games"]), "env.db")


def test_a_tournament_file_without_db_means_arena_db_or_arena_db_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "plain.toml").write_text(CUP.replace('db = "league.db"\n', ""))
    assert run(["tournament", "run", "plain.toml"]).exit_code == 0
    assert (tmp_path / "arena.db").is_file()
    assert "cup" in run(["games", "--config", "plain.toml"]).output


@pytest.mark.parametrize("text, fragment", [
    (None, "does not exist"),
    ("db = [", "missing.toml"),
    ("db = 3\n", "db must be str"),
    ("dbb = 'x'\n", "unknown key 'dbb'"),
])
def test_a_bad_config_file_is_one_line_and_exit_2(tmp_path: Path, text: str | None, fragment: str) -> None:
    if text is not None:
        (tmp_path / "missing.toml").write_text(text)
    assert_one_line_error(run(["standings", "--config", "missing.toml"]), fragment)
    assert not (tmp_path / "arena.db").exists()


def test_reading_a_database_with_a_left_over_wal_file_changes_not_the_database(
    arena_db: Path, tmp_path: Path
) -> None:
    # A second game stays in the -wal file while another connection is open; copying
    # both files is what a writer killed at that moment leaves behind.
    holder = sqlite3.connect(arena_db)
    holder.execute("select count(*) from games").fetchall()  # holds the WAL open
    second = tmp_path / "second.txt"
    second.write_text("4 4 5\n")  # another game: the same one again would be refused as stored already
    result = run(["import", str(second), "--db", str(arena_db)])
    assert result.exit_code == 0, result.output
    crashed = tmp_path / "crashed.db"
    crashed.write_bytes(arena_db.read_bytes())
    Path(str(crashed) + "-wal").write_bytes(Path(str(arena_db) + "-wal").read_bytes())
    holder.close()
    before = sha256(crashed)
    result = run(["games", "--json", "--db", str(crashed)])
    assert result.exit_code == 0, result.output
    assert result.output.count('"id"') == 2  # the game in the -wal file is read too
    assert sha256(crashed) == before


REFUSED_BEFORE_STORING = {
    "league create, no such file": ["league", "create", "class", "config/league.toml"],
    "tournament run, one bot": ["tournament", "run", "--bots", "random", "--games", "2", "--workers", "1"],
    "tournament run, unknown bot": ["tournament", "run", "--bots", "random,nosuchbot", "--workers", "1"],
    "users add, bad name": ["users", "add", "Bad Name"],
    "submit, no such file": ["submit", "nothere.py"],
}


@pytest.mark.parametrize("args", REFUSED_BEFORE_STORING.values(), ids=REFUSED_BEFORE_STORING.keys())
def test_a_command_that_refuses_leaves_no_database_it_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_DB", raising=False)
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2, refused.output
    assert refused.output.startswith("Error: ") and len(refused.output.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_command_that_refuses_keeps_a_database_it_did_not_make(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Store(tmp_path / "arena.db").close()  # empty, but the person's
    before = sha256(tmp_path / "arena.db")
    refused = CliRunner().invoke(main, ["league", "create", "class", "config/league.toml", "--db", "arena.db"])
    assert refused.exit_code == 2, refused.output
    assert sha256(tmp_path / "arena.db") == before
