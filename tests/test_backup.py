"""`arena backup`: a checked copy of the database taken while a tournament writes it,
which opens, and from which the tournament resumes once restored (stop the writer,
copy the backup over the database, remove its -wal and -shm files, start again)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli.main import main
from arena.store import Store, StoreError
from arena.store.backup import backup

REPO = Path(__file__).resolve().parent.parent
RUN = ["tournament", "run", "--bots", "random,greedy", "--games", "4000", "--workers", "1", "--name", "cup",
       "--seed", "5"]


def arena(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "arena", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)})


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def games_stored(db: Path) -> int:
    try:
        return int(rows(db, "select count(*) from games")[0][0])
    except sqlite3.Error:
        return 0  # not made yet


def test_a_backup_taken_while_a_tournament_writes_is_whole_and_the_tournament_resumes_from_it(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    writer = arena(*RUN, "--db", str(db), cwd=tmp_path)
    try:
        deadline = time.monotonic() + 300
        while games_stored(db) < 40 and writer.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        copy = backup(db, tmp_path / "backup.db")
        said = CliRunner().invoke(main, ["backup", str(tmp_path / "second.db"), "--db", str(db)])
        still_writing = writer.poll() is None
    finally:
        writer.send_signal(signal.SIGINT)  # the league stops (or has finished)
        writer.communicate(timeout=300)
    assert still_writing, "the tournament finished before the backup: make it longer"
    assert said.exit_code == 0, said.output
    assert said.output.startswith(f"backed up {db} to {tmp_path / 'second.db'}: ")
    assert "1 tournament, " in said.output and "(integrity checked)" in said.output
    saved = tmp_path / "backup.db"
    kept = {key for (key,) in rows(saved, "select key from games")}
    assert copy.counts["games"] == len(kept) >= 40 and copy.size == saved.stat().st_size
    assert rows(saved, "pragma integrity_check") == [("ok",)]
    # Every game whole: as many moves as plies, none from a game not stored.
    assert rows(saved, "select count(*) from games g where g.plies != "
                       "(select count(*) from moves m where m.game_id = g.id)") == [(0,)]
    assert rows(saved, "select count(*) from moves where game_id not in (select id from games)") == [(0,)]
    with Store(saved, read_only=True) as store:
        assert store.tournaments.check("cup").status in ("running", "interrupted")
    # Restore: the writer is stopped; the backup goes over the database, without the old -wal and -shm.
    for end in ("-wal", "-shm"):
        (tmp_path / f"arena.db{end}").unlink(missing_ok=True)
    os.replace(saved, db)
    resumed = arena(*RUN, "--db", str(db), cwd=tmp_path)
    _, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    keys = [key for (key,) in rows(db, "select key from games")]
    assert len(keys) == len(set(keys)) == 4000 and kept <= set(keys)


def test_a_backup_never_replaces_a_file_unless_forced(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    Store(db).close()
    target = tmp_path / "backup.db"
    target.write_text("last week's backup")
    refused = CliRunner().invoke(main, ["backup", str(target), "--db", str(db)])
    assert refused.exit_code == 2 and "exists already" in refused.output and "--force" in refused.output
    assert target.read_text() == "last week's backup"
    forced = CliRunner().invoke(main, ["backup", str(target), "--db", str(db), "--force"])
    assert forced.exit_code == 0, forced.output
    assert "0 tournaments, 0 games" in forced.output
    with Store(target, read_only=True) as store:
        assert store.tournaments.all() == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arena.db", "backup.db"]  # no partial copy left


def test_a_backup_onto_its_own_database_or_into_no_folder_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    Store(db).close()
    with pytest.raises(StoreError, match="onto itself"):
        backup(db, db, force=True)
    with pytest.raises(StoreError, match="does not exist"):
        backup(db, tmp_path / "no" / "backup.db")
