"""A copy of the arena's database taken while it is in use: SQLite's online backup,
checked before it is kept."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from arena.store.database import Store, open_reading
from arena.store.migrations import MIGRATION_NAMES
from arena.store.rows import StoreError

#: What a backup counts, table by table, to say what it holds.
_COUNTED = {"tournaments": "tournaments", "games": "games", "bots": "bots", "users": "accounts",
            "submissions": "submissions"}


@dataclass(frozen=True)
class Backup:
    """A checked copy: where it is, its size in bytes, and its rows per subject."""

    path: str
    size: int
    counts: dict[str, int]


def backup(source: str | Path, target: str | Path, force: bool = False) -> Backup:
    """Copy the database at ``source`` to the file ``target``, as it was at one moment,
    while tournaments and leagues go on writing it (SQLite's online backup reads one
    snapshot, in one read transaction, which writers in WAL mode do not wait for).

    The copy is written beside ``target`` under another name, checked (SQLite's
    integrity check, the arena's schema, every row readable) and only then renamed to
    ``target``: a failed backup leaves no file that looks like one. An existing
    ``target`` is refused unless ``force``.
    """
    source, target = str(source), str(target)
    if os.path.lexists(target) and not force:
        raise StoreError(f"{target!r} exists already: pick another file name, or pass --force to replace it")
    if Path(target).resolve() == Path(source).resolve():
        raise StoreError(f"cannot back up {source!r} onto itself: pick another file name")
    folder = Path(target).resolve().parent
    if not folder.is_dir():
        raise StoreError(f"cannot write backup {target!r}: folder {str(folder)!r} does not exist")
    partial = str(folder / f".{Path(target).name}.partial")
    with Store(source, read_only=True):  # refuses another program's file, or a newer arena's
        pass
    try:
        with closing(open_reading(source)) as conn, closing(sqlite3.connect(partial)) as copy:
            conn.backup(copy)  # all pages in one step: one snapshot, never restarted by a writer
            copy.execute("pragma journal_mode=delete")  # one self-contained file
        counts = _check(partial, source)
        os.replace(partial, target)
    except sqlite3.Error as exc:
        raise StoreError(f"could not back up {source!r} to {target!r} ({exc}): nothing was written") from None
    except OSError as exc:
        raise StoreError(f"could not write backup {target!r}: {exc.strerror or exc}") from None
    finally:
        if os.path.lexists(partial):
            os.remove(partial)
    return Backup(target, os.path.getsize(target), counts)


def _check(path: str, source: str) -> dict[str, int]:
    with closing(sqlite3.connect(path)) as conn:
        verdict = conn.execute("pragma integrity_check").fetchall()
        if verdict != [("ok",)]:
            raise StoreError(f"the backup of {source!r} failed its integrity check ({verdict[0][0]}): "
                             "nothing was written; check the disk holding the database")
    with Store(path, read_only=True) as store:
        applied = [name for (name,) in store.db.execute("select name from _sqlite_migrations")]
        if not set(applied) <= set(MIGRATION_NAMES):
            raise StoreError(f"the backup of {source!r} holds no arena schema this arena knows: nothing was written")
        return {label: store.db.execute(f"select count(*) from {table}").fetchone()[0]
                for table, label in _COUNTED.items()}
