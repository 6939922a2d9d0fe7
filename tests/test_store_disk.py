"""A database whose disk is full, or that sits on read-only media: every command says
so in one line that names the file and what to do, with exit code 2, and nothing
stored is lost. Reading commands read a database on read-only media.

The full disk is a real one where this machine lets the tests mount a small tmpfs
(as root), and always an injected one: a file that may not grow (SQLite's
``max_page_count``), which fails exactly as a full disk does (SQLITE_FULL)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli.main import main
from arena.store import Store, StoreFull
from arena.store import database as database_module

REPO = Path(__file__).resolve().parent.parent
LEAGUE_FILE = """bots = ["random", "greedy"]
games = {games}
seed = 3
name = "cup"
db = "arena.db"
"""


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(REPO)})


def stored_keys(db: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [key for (key,) in conn.execute("select key from games")]
    finally:
        conn.close()


def mounted(folder: Path, *options: str) -> bool:
    """Mount a tmpfs at ``folder`` (root only; False where this machine does not allow it)."""
    folder.mkdir(exist_ok=True)
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs", str(folder)],
                              capture_output=True, timeout=60)
    except OSError:
        return False
    return done.returncode == 0


def remount(folder: Path, *options: str) -> None:
    subprocess.run(["mount", "-o", ",".join(("remount", *options)), str(folder)], check=True, timeout=60)


def unmount(folder: Path) -> None:
    subprocess.run(["umount", "-l", str(folder)], capture_output=True, timeout=60)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 1 MB disk (a tmpfs), or a skip where mounting is not allowed (CI, not root)."""
    folder = tmp_path / "disk"
    if os.geteuid() != 0 or not mounted(folder, "size=1m"):
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield folder
    finally:
        unmount(folder)


def fill(path: Path) -> None:
    """Write to ``path`` until its disk is full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


def test_a_full_disk_stops_every_command_in_one_line_and_the_run_resumes(small_disk: Path) -> None:
    (small_disk / "cup.toml").write_text(LEAGUE_FILE.format(games=4000))
    run = arena("tournament", "run", "cup.toml", "--workers", "1", cwd=small_disk)
    assert run.returncode == 2, run.stderr
    line = one_line(run.stderr)
    assert line.startswith("Stopped: the disk holding 'arena.db' is full (database or disk is full): "
                           "free space on it, then run the same command again"), line
    kept = stored_keys(small_disk / "arena.db")
    assert f"({len(kept)} of 4000 games stored in arena.db)" in line and kept
    # Room again, and the file checkpointed (as after a clean stop); then full to the last
    # byte: SQLite cannot even make its -shm file ("disk I/O error").
    remount(small_disk, "size=8m")
    checkpoint = sqlite3.connect(small_disk / "arena.db")
    assert checkpoint.execute("select count(*) from games").fetchone()[0] == len(kept)
    checkpoint.close()  # the last connection: its -wal goes into the file, and goes
    assert not (small_disk / "arena.db-wal").exists()
    fill(small_disk / "filler")
    for command in (("standings",), ("games",), ("tournaments",), ("tournament", "run", "cup.toml")):
        said = arena(*command, *(("--db", "arena.db") if command[0] != "tournament" else ()), cwd=small_disk)
        assert said.returncode == 2, (command, said.stderr)
        assert one_line(said.stderr).startswith("Error: the disk holding 'arena.db' is full ("), (command, said.stderr)
    (small_disk / "filler").unlink()
    again = arena("tournament", "run", "cup.toml", "--workers", "1", cwd=small_disk)
    assert again.returncode == 0, again.stderr
    keys = stored_keys(small_disk / "arena.db")
    assert len(keys) == len(set(keys)) == 4000 and set(kept) <= set(keys)


def test_a_database_that_cannot_grow_stops_the_run_in_one_line_with_exit_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Injected: the coordinator's connection may not grow the file (SQLITE_FULL, as a full disk)."""
    (tmp_path / "cup.toml").write_text(LEAGUE_FILE.format(games=200))
    monkeypatch.chdir(tmp_path)
    Store(tmp_path / "arena.db").close()
    real = database_module._ArenaDatabase.__init__

    def cannot_grow(self: database_module._ArenaDatabase, conn: sqlite3.Connection, path: str) -> None:
        real(self, conn, path)
        pages = conn.execute("pragma page_count").fetchone()[0]
        conn.execute(f"pragma max_page_count = {pages + 2}")

    monkeypatch.setattr(database_module._ArenaDatabase, "__init__", cannot_grow)
    full = CliRunner().invoke(main, ["tournament", "run", "cup.toml", "--workers", "1"])
    assert full.exit_code == 2, full.output
    assert "the disk holding 'arena.db' is full (database or disk is full): free space on it" in full.output
    assert "Traceback" not in full.output
    kept = stored_keys(tmp_path / "arena.db")
    monkeypatch.setattr(database_module._ArenaDatabase, "__init__", real)
    again = CliRunner().invoke(main, ["tournament", "run", "cup.toml", "--workers", "1"])
    assert again.exit_code == 0, again.output
    keys = stored_keys(tmp_path / "arena.db")
    assert len(keys) == len(set(keys)) == 200 and set(kept) <= set(keys)


def test_a_full_disk_outside_the_games_is_one_line_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that is no game (an account, here) on a file that cannot grow: one line, exit 2."""
    db = tmp_path / "arena.db"
    Store(db).close()
    real = database_module._ArenaDatabase.__init__

    def cannot_grow(self: database_module._ArenaDatabase, conn: sqlite3.Connection, path: str) -> None:
        real(self, conn, path)
        conn.execute(f"pragma max_page_count = {conn.execute('pragma page_count').fetchone()[0]}")

    monkeypatch.setattr(database_module._ArenaDatabase, "__init__", cannot_grow)
    # Fill what room the file has, with rows smaller than any a command writes.
    with Store(db) as store, pytest.raises(StoreFull):
        while True:
            store.accounts.audit("", "")
    added = CliRunner().invoke(main, ["users", "add", "alice", "--db", str(db)])
    assert added.exit_code == 2, added.output
    assert one_line(added.output).startswith(f"Error: the disk holding {str(db)!r} is full"), added.output


READS = [["standings"], ["games"], ["show", "1"], ["export", "1"], ["bots"], ["crosstable"], ["colours"],
         ["tournaments"]]


@pytest.fixture
def read_only_copy(tmp_path: Path) -> Iterator[Path]:
    """A valid arena database in WAL mode (closed: no -wal, no -shm) in a folder nobody
    may write: read-only media where this machine lets the tests mount one (root, where
    permissions do not stop writing), else a folder and file without write permission."""
    folder = tmp_path / "media"
    root = os.geteuid() == 0
    if root and not mounted(folder, "size=8m"):
        pytest.skip("root, and cannot mount a tmpfs to make read-only media")
    try:
        yield _made_read_only(folder, root)
    finally:
        if root:
            unmount(folder)
        else:
            folder.chmod(0o755)


def _made_read_only(folder: Path, root: bool) -> Path:
    folder.mkdir(exist_ok=True)
    db = folder / "arena.db"
    made = CliRunner().invoke(main, ["tournament", "run", "--bots", "random,greedy", "--games", "4", "--workers", "1",
                                     "--name", "cup", "--db", str(db)])
    assert made.exit_code == 0, made.output
    check = sqlite3.connect(db)
    assert check.execute("pragma journal_mode").fetchone()[0] == "wal"
    check.close()  # the last connection: the -wal and -shm files go
    (folder / "arena.db.lock").unlink()  # as a copy of the database alone would be
    assert sorted(p.name for p in folder.iterdir()) == ["arena.db"]
    if root:
        remount(folder, "ro")
    else:
        db.chmod(0o444)
        folder.chmod(0o555)
    return db


@pytest.mark.parametrize("command", READS, ids=lambda c: c[0])
def test_reading_commands_read_a_database_on_read_only_media(read_only_copy: Path, command: list[str]) -> None:
    before = read_only_copy.read_bytes()
    read = CliRunner().invoke(main, [*command, "--db", str(read_only_copy)])
    assert read.exit_code == 0, read.output
    assert "greedy" in read.output or command[0] in ("show", "export", "tournaments"), read.output
    assert read_only_copy.read_bytes() == before
    assert sorted(p.name for p in read_only_copy.parent.iterdir()) == ["arena.db"]


def test_a_reading_store_opens_a_database_on_read_only_media(read_only_copy: Path) -> None:
    with Store(read_only_copy, read_only=True) as store:
        assert store.games.count() == 4 and store.tournaments.check("cup").status == "finished"


WRITES = [["tournament", "run", "--bots", "random,greedy", "--games", "6", "--workers", "1", "--name", "cup"],
          ["users", "add", "ann"], ["league", "create", "class"], ["import", "-"], ["analyse", "1"]]


@pytest.mark.parametrize("command", WRITES, ids=lambda c: "-".join(c[:2]))
def test_writing_commands_say_the_database_is_read_only(read_only_copy: Path, command: list[str]) -> None:
    before = read_only_copy.read_bytes()
    wrote = CliRunner().invoke(main, [*command, "--db", str(read_only_copy)], input="4 4 4 4\n")
    assert wrote.exit_code == 2, wrote.output
    line = one_line(wrote.output)
    assert line.startswith(f"Error: database {str(read_only_copy)!r} is read-only ("), line
    assert "writable copy" in line
    assert read_only_copy.read_bytes() == before
