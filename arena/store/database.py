"""The arena's database file: SQLite through sqlite-utils, schema by named migrations.

One writer (the tournament coordinator) writes each finished game together with
all of its moves in one transaction, so a game is either wholly stored or absent.
Any SQLite tool can read the file; the tables are described in the README.

:class:`Store` opens, checks and migrates the file; what is in it is read and
written through its repositories, one per subject: ``store.games``,
``store.tournaments``, ``store.bots``, ``store.submissions``, ``store.analyses``,
``store.accounts``, ``store.leagues``, ``store.gates`` and ``store.results``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from arena.store.accounts import Accounts
from arena.store.analyses import Analyses
from arena.store.bots import Bots
from arena.store.games import Games
from arena.store.gates import Gates
from arena.store.leagues import Leagues
from arena.store.migrations import MIGRATION_NAMES, current_names, migrations, rename_former
from arena.store.results import Results
from arena.store.rows import StoreBusy, StoreError, StoreFull, StoreReadOnly, StoreWriteFailed
from arena.store.submissions import Submissions
from arena.store.tournaments import Tournaments

#: Seconds a connection waits for another's write lock before its write is refused
#: (:class:`StoreBusy`). Writers hold it for one short transaction each (a game with
#: its moves, an upload, a sign-in's bookkeeping), so they queue instead of failing.
BUSY_TIMEOUT = 20.0
#: Free space below which a failed write is taken for a full disk (SQLite says "disk
#: I/O error" when it cannot grow its -shm file, "database or disk is full" otherwise).
NEARLY_FULL = 256 * 1024
_READ_ONLY_FILE_SYSTEM = "it is on a read-only file system"


class _ArenaDatabase(Database):
    """sqlite-utils' Database whose write transactions take the write lock first
    (BEGIN IMMEDIATE), and whose failed statements say what went wrong in the
    store's words: busy, a full disk, a read-only file (:func:`write_problem`).

    A deferred transaction that reads and then writes cannot wait for the lock: when
    another connection committed since its read, SQLite refuses it at once ("database
    is locked") whatever the busy timeout. One that takes the lock first waits for it.
    """

    def __init__(self, conn: sqlite3.Connection, path: str) -> None:
        super().__init__(conn)
        self.path = path

    def execute(self, sql: str, parameters: Sequence[Any] | dict[str, Any] | None = None) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except sqlite3.OperationalError as exc:
            problem = write_problem(exc, self.path)
            if problem is None:
                raise
            raise problem from None

    @contextmanager
    def atomic(self) -> Iterator[_ArenaDatabase]:
        conn = self.conn
        if conn.in_transaction:  # a savepoint of the transaction around it
            with super().atomic():
                yield self
            return
        self.execute("begin immediate")
        try:
            yield self
        except sqlite3.OperationalError as exc:  # a statement run on the connection itself
            if conn.in_transaction:
                conn.rollback()
            raise (write_problem(exc, self.path) or StoreWriteFailed(
                f"database {self.path!r} could not be written ({exc}): nothing of this change was stored; "
                "fix the file or its disk, then run the same command again")) from None
        except BaseException:
            if conn.in_transaction:
                conn.rollback()
            raise
        try:
            self.execute("commit")
        finally:
            if conn.in_transaction:  # the commit failed: nothing of it stays
                conn.rollback()


def write_problem(exc: sqlite3.Error, path: str) -> StoreWriteFailed | None:
    """What a failed statement on the database at ``path`` means, in one line that
    says what to do; None for an error that is not about the file or its disk."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return StoreBusy(f"database {path!r} is busy: another process held its write lock for over "
                         f"{BUSY_TIMEOUT:g} s ({exc}); nothing of this change was stored: try again in a moment")
    if code == sqlite3.SQLITE_FULL or (code == sqlite3.SQLITE_IOERR and _disk_full(path)):
        return StoreFull(f"the disk holding {path!r} is full ({exc}): free space on it, then run the same "
                         "command again (a tournament or league resumes where it stopped); nothing stored is lost")
    if code == sqlite3.SQLITE_READONLY or (code == sqlite3.SQLITE_CANTOPEN and _read_only(path)):
        return StoreReadOnly(_read_only_message(path, _read_only(path) or str(exc)))
    if code == sqlite3.SQLITE_IOERR:
        return StoreWriteFailed(f"database {path!r} could not be read or written ({exc}): check the disk "
                                "holding it, then run the same command again")
    return None


def _disk_full(path: str) -> bool:
    try:
        found = os.statvfs(Path(path).resolve().parent)
    except OSError:
        return False
    return found.f_bavail * found.f_frsize < NEARLY_FULL


def _read_only(path: str) -> str | None:
    """Why the database at ``path`` (or a new one there) cannot be written, or None.
    SQLite writes beside the file too (its -wal and -shm), so the folder counts."""
    if path == ":memory:":
        return None
    file = Path(path)
    folder = file.resolve().parent
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return _READ_ONLY_FILE_SYSTEM
    except OSError:
        return None
    if file.exists() and not os.access(file, os.W_OK):
        return "this user may not write the file"
    if folder.is_dir() and not os.access(folder, os.W_OK):
        return f"this user may not write its folder {str(folder)!r}, where SQLite keeps its -wal and -shm files"
    return None


def _read_only_message(path: str, why: str) -> str:
    return (f"database {path!r} is read-only ({why}): this command stores what it does there; "
            "run it on a writable copy (copy the file to a writable folder and pass --db the copy)")


class Store:
    """The arena's database file.

    ``create``: a missing file becomes a new database (writing commands that start
    one); otherwise it must exist. ``read_only``: nothing is ever written to the
    file (reading commands): it is opened read-only and never migrated. Either
    way, a file that already holds something other than an arena database (another
    program's tables, or no SQLite at all) is refused before anything touches it,
    and so is one written by a newer arena.

    What the file holds is read and written through one repository per subject
    (``store.games.get(game_id)``, ``store.leagues.entries(league_id)``, ...); a
    block of them that must be all or nothing runs in :meth:`transaction`.
    """

    db: Database

    def __init__(self, path: str | Path, create: bool = True, read_only: bool = False) -> None:
        self.path = str(path)
        self.read_only = read_only
        self.games = Games(self)
        self.tournaments = Tournaments(self)
        self.bots = Bots(self)
        self.submissions = Submissions(self)
        self.analyses = Analyses(self)
        self.accounts = Accounts(self)
        self.leagues = Leagues(self)
        self.gates = Gates(self)
        self.results = Results(self)
        memory = self.path == ":memory:"
        exists = memory or Path(self.path).is_file()
        if not memory:
            _refuse_folder(self.path)
        if not exists and (read_only or not create):
            raise StoreError(f"database {self.path!r} does not exist: run a tournament first or pass --db")
        if not exists:
            _check_folder(self.path)
        if not read_only and (why := _read_only(self.path)):
            raise StoreReadOnly(_read_only_message(self.path, why))
        try:
            if read_only and not memory:
                self.db = _open_for_reading(self.path)
                self.db.execute("PRAGMA foreign_keys=ON")
                return
            if exists and not memory:
                with closing(_reading_connection(self.path)) as conn:
                    _arena_schema(conn, self.path)  # refuses a foreign file before anything is written
            self.db = _ArenaDatabase(sqlite3.connect(self.path, timeout=BUSY_TIMEOUT), self.path)
            self.db.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            _migrate(self.db, self.path)
        except sqlite3.DatabaseError as exc:
            problem = write_problem(exc, self.path)
            if problem is not None:
                raise problem from None
            raise StoreError(
                f"{self.path!r} is not an arena database ({exc}): pass --db an arena database or a new file"
            ) from None
        except OSError as exc:  # a file this user may not read, say
            raise StoreError(f"cannot open database {self.path!r}: {exc.strerror or exc}") from None

    def close(self) -> None:
        self.db.close()

    def holds_nothing(self) -> bool:
        """Whether no table holds a row (the schema's own bookkeeping aside): a
        database just made, that a command refusing may take away again. Asked
        through a connection of its own: the store may be closed already."""
        if self.path == ":memory:":
            return False
        with closing(_connect(self.path)) as conn:
            tables = [name for (name,) in conn.execute(
                "select name from sqlite_master where type = 'table' and name not like 'sqlite^_%' escape '^' "
                "and name != '_sqlite_migrations'")]
            return not any(conn.execute(f'select 1 from "{name}" limit 1').fetchone() for name in tables)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the database however the block ends (``with Store(path) as store:``)."""
        self.close()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read inside sees the database as the first one found it (one read
        transaction): a table counted in several queries while a league or tournament
        writes counts the same games in each, never a bot the others have not seen."""
        conn = self.db.conn
        if conn.in_transaction:
            yield
            return
        conn.execute("begin")
        try:
            yield
        finally:
            conn.execute("commit")

    def version(self) -> tuple[Any, ...]:
        """A value that changes whenever a table could: a game stored or removed, a
        tournament started or its status changed. Cheap on a million games: it counts
        none but the casual ones (a count of them all takes 50 ms). A stored game
        raises the last id; a game leaves only when a casual game is saved again
        (:meth:`Games.delete`), which changes the casual games' count or, where the new
        save took the removed game's id (it was the last), that last row itself."""
        last = self.db.execute(
            "select id, tournament_id, first_bot_id, second_bot_id, winner, termination, plies, moves, finished_at "
            "from games order by id desc limit 1").fetchone()
        casual = self.db.execute(
            "select count(*) from games where tournament_id in (select id from tournaments where format = 'casual')"
        ).fetchone()
        tournaments = self.db.execute("select count(*), group_concat(id || status) from tournaments").fetchone()
        # A league's field: an entrant joining or retiring changes its standings' rows.
        entries = self.db.execute("select count(*), group_concat(id || status) from entries").fetchone()
        return (*(last or ()), *casual, *tournaments, *entries)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Everything inside is stored together or, on any error, not at all. It takes
        the write lock first (BEGIN IMMEDIATE), waiting up to :data:`BUSY_TIMEOUT` for
        another writer, so what it reads stays true until it commits; inside a
        transaction already, a savepoint of it. A write that fails raises
        :class:`StoreWriteFailed` (:class:`StoreBusy`, :class:`StoreFull`, ...)."""
        with self.db.atomic():
            yield

    writing = transaction  # the name the tournament runner knows it by


def _open_for_reading(path: str) -> Database:
    """The file, read-only; an older schema (or an empty file) is read through a
    migrated copy in memory, so a reading command needs no writing command first."""
    conn = _reading_connection(path)
    try:
        applied = _arena_schema(conn, path)
        if set(applied) == set(MIGRATION_NAMES):
            return _ArenaDatabase(conn, path)
        copy = sqlite3.connect(":memory:", check_same_thread=False)
        conn.backup(copy)
    except BaseException:
        conn.close()
        raise
    conn.close()
    db = Database(copy)
    rename_former(db)
    migrations.apply(db)
    return db


def _arena_schema(conn: sqlite3.Connection, path: str) -> list[str]:
    """The arena migrations the file has applied ([] for an empty database).

    Raises StoreError for another program's database (tables, but no arena
    schema) and for a schema from a newer arena. Reads only.
    """
    tables = sorted(
        name for (name,) in conn.execute(
            "select name from sqlite_master where type in ('table', 'view') "
            "and name not like 'sqlite^_%' escape '^'"  # SQLite's own tables do not count
        )
    )
    applied: list[str] = []
    if "_sqlite_migrations" in tables:
        applied = current_names([name for (name,) in conn.execute(
            "select name from _sqlite_migrations where migration_set = ? order by rowid", [migrations.name]
        )])
    if not applied and set(tables) - {"_sqlite_migrations"}:
        shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
        raise StoreError(
            f"{path!r} is not an arena database: it holds other tables ({shown}) and the arena "
            "changes no other program's file; pass --db an arena database or a new file"
        )
    newer = [name for name in applied if name not in MIGRATION_NAMES]
    if newer:
        raise StoreError(
            f"database {path!r} was written by a newer version of the arena "
            f"(schema {newer[-1]}); upgrade connectk-arena to read it"
        )
    return applied


def _migrate(db: Database, path: str) -> None:
    newer = [name for name in current_names([m.name for m in migrations.applied(db)]) if name not in MIGRATION_NAMES]
    if newer:  # checked again: the file may have changed since it was looked at
        raise StoreError(
            f"database {path!r} was written by a newer version of the arena "
            f"(schema {newer[-1]}); upgrade connectk-arena to read it"
        )
    rename_former(db)
    migrations.apply(db)


def check_database(path: str | Path) -> None:
    """Raise :class:`StoreError` unless a writing ``Store(path)`` could store games there:
    a new file in a folder that exists, an empty file, or an arena database this
    version can use. Changes nothing: a command checks before asking a person for
    anything it would then fail to store."""
    path = str(path)
    if path == ":memory:":
        return
    _refuse_folder(path)
    if Path(path).is_file():
        Store(path, read_only=True).close()
    else:
        _check_folder(path)
    why = _read_only(path)
    if why:
        raise StoreReadOnly(_read_only_message(path, why))


def _refuse_folder(path: str) -> None:
    if Path(path).is_dir():
        raise StoreError(f"--db {path!r} is a folder, not a database file: pass --db "
                         f"{str(Path(path) / 'arena.db')!r} (a new or an existing database file)")


def _check_folder(path: str) -> None:
    folder = Path(path).parent
    if not folder.is_dir():
        raise StoreError(f"cannot create database {path!r}: folder {str(folder)!r} does not exist")


def open_reading(path: str) -> sqlite3.Connection:
    """A connection to the database at ``path`` that cannot write to it (see
    :func:`_reading_connection`): for a backup to read from."""
    return _reading_connection(path)


def _reading_connection(path: str) -> sqlite3.Connection:
    """A connection to the file at ``path`` that cannot write to it.

    Opened normally with ``query_only`` where nothing waits beside the file: a
    database in WAL mode gets its -wal and -shm files, which SQLite removes when
    it closes, as always. Where a -wal file exists (a writer at work, or one that
    died) or a rollback journal, ``mode=ro`` reads it and leaves the database file
    as it is.

    Which one is decided from the files beside it, never by opening the database
    file itself: closing any descriptor of a file drops every POSIX lock this
    process holds on it, those of its open SQLite connections too, and a writer in
    another process that then finds no lock takes itself for the last connection
    and removes the -wal and -shm files under them (a long-running reader, the
    site, then fails with "disk I/O error").

    Usable from any thread (one at a time): the site opens a request's store in one
    of its worker threads and may read it in another.
    """
    if _read_only(path):
        return _read_only_media(path)
    if not (Path(path + "-wal").exists() or Path(path + "-journal").exists()):
        conn = _connect(path)
        conn.execute("PRAGMA query_only=ON")
        return conn
    return _connect(Path(path).resolve().as_uri() + "?mode=ro")


def _read_only_media(path: str) -> sqlite3.Connection:
    """A connection to a database where this process can write nothing: read-only
    media, a folder this user may not write.

    ``mode=ro`` first: it reads a -wal beside the file, and works wherever SQLite can
    open or make the -shm file. A database in WAL mode with no -shm beside it, which
    cannot be made, is opened ``immutable=1``: SQLite then takes no locks and reads
    neither -wal nor -shm, trusting that nobody changes the file while it is open.
    That is safe only when nobody writes. On read-only media nobody can; in a folder
    only other users may write, no -shm means no process has the database open now,
    and a reading command takes a moment, but a writer that started meanwhile would
    go unseen (its changes read half done): copy such a database where you may write
    to read it while it changes. Never with a -wal file beside it: immutable would
    skip the transactions committed there."""
    conn = _connect(Path(path).resolve().as_uri() + "?mode=ro")
    try:
        conn.execute("select count(*) from sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError as exc:
        conn.close()
        if (exc.sqlite_errorcode & 0xFF) != sqlite3.SQLITE_CANTOPEN:
            raise
    wal = Path(path + "-wal")
    if wal.exists() and wal.stat().st_size:
        raise StoreError(f"cannot read database {path!r}: {_read_only(path)}, and its -wal file needs a -shm "
                         "file SQLite cannot make there; copy the database with its -wal file to a writable "
                         "folder and pass --db the copy")
    return _connect(Path(path).resolve().as_uri() + "?mode=ro&immutable=1")


def _connect(target: str) -> sqlite3.Connection:
    """A connection usable from any thread (one at a time), that waits for a writer."""
    conn = sqlite3.connect(target, uri=target.startswith("file:"), check_same_thread=False, timeout=BUSY_TIMEOUT)
    conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
    return conn
