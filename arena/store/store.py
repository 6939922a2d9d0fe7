"""The league database: SQLite through sqlite-utils, schema by named migrations.

One writer (the tournament coordinator) writes each finished game together with
all of its moves in one transaction, so a game is either wholly stored or absent.
Any SQLite tool can read the file; the tables are described in the README.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import sqlite3
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain, islice, repeat
from pathlib import Path
from typing import Any, NamedTuple

from sqlite_utils import Database
from sqlite_utils.db import Table
from sqlite_utils.migrations import Migrations

from arena.engine.game import Rules, format_moves, move_names
from arena.errors import ArenaError
from arena.records import GameRecord, Termination
from arena.text import content_hash, json_text

migrations = Migrations("arena")
_MIGRATION_NAMES: list[str] = []  # ours, in order: sqlite-utils keeps its own list private


def _migration(name: str) -> Callable[[Callable[[Database], None]], Callable[[Database], None]]:
    """Register a schema step with sqlite-utils, and its name in our own list."""
    _MIGRATION_NAMES.append(name)
    return migrations(name=name)


#: The spec stored for a player an imported game's file does not name. Such a
#: player is no league entrant: its games count in no table (see league/selection.py).
UNNAMED = "unnamed"


class StoreError(ArenaError):
    """A database the arena cannot use, or a lookup that finds nothing."""


@_migration("0001_initial")
def _initial(db: Database) -> None:
    db.table("tournaments").create(
        {
            "id": int, "name": str, "format": str, "config": str, "identity": str,
            "rules": str, "seed": int, "status": str, "created_at": str, "finished_at": str,
        },
        pk="id",
        not_null={"name", "status", "created_at"},
    )
    db.table("tournaments").create_index(["name"], unique=True)
    db.table("bots").create(
        {"id": int, "spec": str, "name": str, "options": str, "source": str, "content_hash": str},
        pk="id",
        not_null={"spec", "name", "source", "content_hash"},
    )
    db.table("bots").create_index(["spec", "source", "content_hash"], unique=True)
    db.table("games").create(
        {
            "id": int, "tournament_id": int, "key": str, "pairing": str,
            "first_bot_id": int, "second_bot_id": int, "opening": str, "opening_plies": int,
            "result": str, "winner": int, "termination": str, "reason": str,
            "plies": int, "moves": str, "duration": float, "seed": int, "finished_at": str,
        },
        pk="id",
        foreign_keys=[
            ("tournament_id", "tournaments", "id"),
            ("first_bot_id", "bots", "id"),
            ("second_bot_id", "bots", "id"),
        ],
        not_null={"tournament_id", "key", "first_bot_id", "second_bot_id", "result", "termination"},
    )
    db.table("games").create_index(["tournament_id", "key"], unique=True)
    db.table("games").create_index(["first_bot_id"])
    db.table("games").create_index(["second_bot_id"])
    # WITHOUT ROWID: the (game, ply) key is the table's own order, one B-tree
    # instead of a table and an index; the table that grows fastest by far.
    db.execute(
        """create table moves (
            game_id integer not null references games(id),
            ply integer not null,
            move text not null,
            ms float,
            info text,
            primary key (game_id, ply)
        ) without rowid"""
    )


@_migration("0002_submissions")
def _submissions(db: Database) -> None:
    db.table("submissions").create(
        {
            "id": int, "name": str, "version": int, "kind": str, "source": str,
            "content_hash": str, "file": str, "submitted_at": str,
        },
        pk="id",
        not_null={"name", "version", "kind", "source", "content_hash", "submitted_at"},
    )
    db.table("submissions").create_index(["name", "version"], unique=True)


@_migration("0003_analyses")
def _analyses(db: Database) -> None:
    db.table("analyses").create(
        {"game_id": int, "ply": int, "value": int, "budget": float, "analysed_at": str},
        pk=("game_id", "ply"),
        foreign_keys=[("game_id", "games", "id")],
        not_null={"budget", "analysed_at"},
    )


@_migration("0004_submission_class")
def _submission_class(db: Database) -> None:
    db.table("submissions").add_column("class_name", str)  # which Bot subclass, for files with several


@_migration("0005_league")
def _league(db: Database) -> None:
    db.table("users").create(
        {"id": int, "name": str, "password_hash": str, "token_hash": str, "admin": int, "disabled": int,
         "created_at": str},
        pk="id", not_null={"name", "password_hash", "admin", "disabled", "created_at"}, defaults={"admin": 0,
                                                                                                  "disabled": 0},
    )
    db.table("users").create_index(["name"], unique=True)
    db.table("users").create_index(["token_hash"])
    db.table("leagues").create(
        {"id": int, "name": str, "config": str, "tournament_id": int, "public_code": int, "closed": int,
         "created_at": str},
        pk="id", not_null={"name", "config", "tournament_id", "public_code", "closed", "created_at"},
        foreign_keys=[("tournament_id", "tournaments", "id")],
    )
    db.table("leagues").create_index(["name"], unique=True)
    db.table("league_members").create(
        {"league_id": int, "user_id": int}, pk=("league_id", "user_id"),
        foreign_keys=[("league_id", "leagues", "id"), ("user_id", "users", "id")],
    )
    # An entrant of a league: an installed bot (spec) or a submitted version. status:
    # "active" plays, "retired" no longer plays (its games stay), "failed" never passed the checks.
    db.table("entries").create(
        {"id": int, "league_id": int, "spec": str, "submission_id": int, "user_id": int, "status": str,
         "checks": str, "joined_at": str, "retired_at": str},
        pk="id", not_null={"league_id", "spec", "status", "joined_at"},
        foreign_keys=[("league_id", "leagues", "id"), ("submission_id", "submissions", "id"),
                      ("user_id", "users", "id")],
    )
    db.table("entries").create_index(["league_id", "status"])
    db.table("submissions").add_column("user_id", int)
    db.table("submissions").add_column("about", str)  # the author's own description
    db.table("audit").create(
        {"id": int, "at": str, "user_id": int, "action": str, "subject": str, "detail": str},
        pk="id", not_null={"at", "action", "subject"},
    )
    db.table("settings").create({"key": str, "value": str}, pk="key")


@dataclass(frozen=True)
class Submission:
    """A submitted bot: one version of its code, kept in the database."""

    name: str
    version: int
    kind: str  # "bot" (a Bot subclass) or "connectx" (an agent function)
    source: str
    content_hash: str
    file: str
    submitted_at: str
    class_name: str | None = None  # the Bot subclass it plays, in a file that has several
    id: int | None = None
    user_id: int | None = None  # the account that submitted it (None: from the organiser's terminal)
    about: str | None = None  # what its author says it is

    @property
    def spec(self) -> str:
        return f"{self.name}@v{self.version}"

    @property
    def description(self) -> str:
        """The first docstring line of the class it plays (or of its ConnectX agent),
        read from the stored source without running it; "" when there is none."""
        return code_description(self.source, self.kind, self.class_name)


@dataclass(frozen=True)
class StoredTournament:
    """A row of the tournaments table."""

    id: int
    name: str
    format: str
    config: str  # JSON: the definition as given
    identity: str  # JSON: what makes a resumed run the same tournament
    rules: str  # JSON: Rules.as_dict(); see rules_of
    seed: int
    status: str  # "running", "interrupted" or "finished"
    created_at: str
    finished_at: str | None


@dataclass(frozen=True)
class StoredGame:
    """A stored game, with its tournament's name and rules and its bots' specs."""

    id: int
    tournament: str
    key: str
    first: str  # bot spec of the first player (X)
    second: str
    result: str  # "1-0", "0-1" or "1/2-1/2"
    winner: int | None  # 0 (first), 1 (second) or None (a draw, or unfinished)
    termination: str
    reason: str | None
    plies: int | None
    opening: str | None  # move string of the opening
    opening_plies: int | None
    moves: str | None  # move string of the whole game, opening included
    duration: float | None
    seed: int | None
    finished_at: str | None
    rules: str  # JSON: Rules.as_dict(); see rules_of
    first_hash: str = ""  # hash of the first player's code ("" where it is not known: people, imports)
    second_hash: str = ""

    @property
    def finished(self) -> bool:
        """False for a casual game saved before its end, which counts in no table."""
        return self.termination != Termination.UNFINISHED

    @property
    def has_unnamed_player(self) -> bool:
        """An imported game whose file did not name a player: it counts in no table."""
        return UNNAMED in (self.first, self.second)


@dataclass(frozen=True)
class StoredMove:
    """One move of a stored game."""

    game_id: int
    ply: int  # 0 is the first move, openings included
    move: str  # in the game's notation (a column, or a cell where moves name cells)
    ms: float | None  # thinking time; None for opening moves and people
    info: str | None  # JSON: what the bot said about the move


@dataclass(frozen=True)
class BotIdentity:
    """How a bot is recorded: its spec and where its code came from."""

    spec: str
    name: str
    options: dict[str, str]
    source: str
    content_hash: str = ""


class Store:
    """The arena's database file.

    ``create``: a missing file becomes a new database (writing commands that start
    one); otherwise it must exist. ``read_only``: nothing is ever written to the
    file (reading commands): it is opened read-only and never migrated. Either
    way, a file that already holds something other than an arena database (another
    program's tables, or no SQLite at all) is refused before anything touches it,
    and so is one written by a newer arena.
    """

    def __init__(self, path: str | Path, create: bool = True, read_only: bool = False) -> None:
        self.path = str(path)
        self.read_only = read_only
        memory = self.path == ":memory:"
        exists = memory or Path(self.path).is_file()
        if not exists and (read_only or not create):
            raise StoreError(f"database {self.path!r} does not exist: run a tournament first or pass --db")
        if not exists:
            _check_folder(self.path)
        try:
            if read_only and not memory:
                self.db = self._open_for_reading()
                self.db.execute("PRAGMA foreign_keys=ON")
                return
            if exists and not memory:
                with closing(_reading_connection(self.path)) as conn:
                    self._arena_schema(conn)  # refuses a foreign file before anything is written
            self.db = Database(self.path)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.path!r} is not an arena database ({exc}): pass --db an arena database or a new file"
            ) from None
        except OSError as exc:  # a file this user may not read, say
            raise StoreError(f"cannot open database {self.path!r}: {exc.strerror or exc}") from None

    def _open_for_reading(self) -> Database:
        """The file, read-only; an older schema (or an empty file) is read through a
        migrated copy in memory, so a reading command needs no writing command first."""
        conn = _reading_connection(self.path)
        try:
            applied = self._arena_schema(conn)
            if set(applied) == set(_MIGRATION_NAMES):
                return Database(conn)
            copy = sqlite3.connect(":memory:", check_same_thread=False)
            conn.backup(copy)
        except BaseException:
            conn.close()
            raise
        conn.close()
        db = Database(copy)
        migrations.apply(db)
        return db

    def _arena_schema(self, conn: sqlite3.Connection) -> list[str]:
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
            applied = [name for (name,) in conn.execute(
                "select name from _sqlite_migrations where migration_set = ? order by rowid", [migrations.name]
            )]
        if not applied and set(tables) - {"_sqlite_migrations"}:
            shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
            raise StoreError(
                f"{self.path!r} is not an arena database: it holds other tables ({shown}) and the arena "
                "changes no other program's file; pass --db an arena database or a new file"
            )
        newer = [name for name in applied if name not in _MIGRATION_NAMES]
        if newer:
            raise StoreError(
                f"database {self.path!r} was written by a newer version of the arena "
                f"(schema {newer[-1]}); upgrade connectk-arena to read it"
            )
        return applied

    def _migrate(self) -> None:
        newer = [m.name for m in migrations.applied(self.db) if m.name not in _MIGRATION_NAMES]
        if newer:  # checked again: the file may have changed since it was looked at
            raise StoreError(
                f"database {self.path!r} was written by a newer version of the arena "
                f"(schema {newer[-1]}); upgrade connectk-arena to read it"
            )
        migrations.apply(self.db)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the database however the block ends (``with Store(path) as store:``)."""
        self.close()

    # --- tournaments ---------------------------------------------------------------

    def tournament(self, name: str) -> StoredTournament | None:
        """The tournament of that name, or None."""
        rows = list(self.db.table("tournaments").rows_where("name = ?", [name]))
        return StoredTournament(**rows[0]) if rows else None

    def tournaments(self) -> list[StoredTournament]:
        """Every tournament, oldest first."""
        return [StoredTournament(**row) for row in self.db.table("tournaments").rows_where(order_by="id")]

    @contextmanager
    def running(self, name: str) -> Iterator[None]:
        """Hold tournament ``name`` while this process runs it: another process that
        tries to run it at the same time is refused, instead of storing games twice.
        The hold is a lock on one byte of ``<db>.lock``, which ends with the process."""
        if self.path == ":memory:":
            yield
            return
        byte = zlib.crc32(name.encode())
        with open(self.path + ".lock", "a+b") as lock:
            try:
                fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, byte)
            except OSError:
                raise StoreError(
                    f"tournament {name!r} in {self.path} is being run by another process: "
                    "wait for it to finish (or stop it), then run the same command to resume"
                ) from None
            try:
                yield
            finally:
                fcntl.lockf(lock, fcntl.LOCK_UN, 1, byte)

    def start_tournament(
        self,
        name: str,
        fmt: str,
        identity: dict[str, Any],
        config: dict[str, Any],
        seed: int,
        bots: Iterable[BotIdentity] = (),
    ) -> int:
        """Create the tournament, or return the id of the stored one if it is the same.

        A stored tournament of that name with other settings is refused: resuming
        it would mix games of two different tournaments under one name. So is one
        whose stored games were played by other code under a spec in ``bots`` (a
        bot file edited, a plug-in's distribution upgraded); nothing is changed then.
        """
        identity_text = json.dumps(identity, sort_keys=True)
        existing = self.tournament(name)
        if existing is not None:
            if existing.identity != identity_text:
                raise StoreError(
                    f"tournament {name!r} in {self.path} was run with other settings "
                    f"({_first_difference(json.loads(existing.identity), identity)}); "
                    "pick another --name or repeat the original settings to resume it"
                )
            self._check_same_code(existing, bots)
            self.db.table("tournaments").update(existing.id, {"status": "running", "finished_at": None})
            return existing.id
        row = {
            "name": name, "format": fmt, "config": json.dumps(config, sort_keys=True),
            "identity": identity_text, "rules": json.dumps(identity["rules"]), "seed": seed,
            "status": "running", "created_at": _now(), "finished_at": None,
        }
        return _insert(self.db.table("tournaments"), row)

    def _check_same_code(self, tournament: StoredTournament, bots: Iterable[BotIdentity]) -> None:
        """Refuse to resume ``tournament`` when a bot's stored games were played by
        other code: a file bot with another hash, a plug-in from another
        distribution version (its code may differ, and no hash says otherwise)."""
        rows = self.db.execute(
            "select distinct b.spec, b.source, b.content_hash from bots b join games g "
            "on b.id = g.first_bot_id or b.id = g.second_bot_id where g.tournament_id = ?",
            [tournament.id],
        ).fetchall()
        stored: dict[str, list[tuple[str, str]]] = {}
        for spec, source, digest in rows:
            stored.setdefault(spec, []).append((source, digest))
        where = f"tournament {tournament.name!r} in {self.path}"
        for bot in bots:
            for source, digest in stored.get(bot.spec, []):
                if digest != bot.content_hash:
                    raise StoreError(
                        f"{where} was played with other code for bot {bot.spec!r} "
                        f"(sha256 {digest[:12] or 'none'}, now {bot.content_hash[:12] or 'none'}): "
                        "restore the file to resume it, or run under another --name"
                    )
                if not digest and source != bot.source:
                    raise StoreError(
                        f"{where} was played with bot {bot.spec!r} from {source}, now from "
                        f"{bot.source}: reinstall {source} to resume it, or run under another --name"
                    )

    def finish_tournament(self, tournament_id: int, status: str) -> None:
        finished = _now() if status == "finished" else None
        self.db.table("tournaments").update(tournament_id, {"status": status, "finished_at": finished})

    # --- bots ------------------------------------------------------------------------

    def bot_id(self, bot: BotIdentity) -> int:
        """The id of this exact bot (spec and code), adding it if new."""
        key = [bot.spec, bot.source, bot.content_hash]
        rows = list(self.db.table("bots").rows_where("spec = ? and source = ? and content_hash = ?", key))
        if rows:
            return int(rows[0]["id"])
        row = {
            "spec": bot.spec, "name": bot.name, "options": json.dumps(bot.options, sort_keys=True),
            "source": bot.source, "content_hash": bot.content_hash,
        }
        return _insert(self.db.table("bots"), row)

    # --- submissions --------------------------------------------------------------------

    def submit(
        self, name: str, source: str, kind: str, file: str, class_name: str | None = None,
        user_id: int | None = None, about: str | None = None,
    ) -> tuple[Submission, bool]:
        """Store a version of ``name``; identical code (and class) returns the existing version.

        Returns the submission and whether it is new.
        """
        digest = content_hash(source)
        for existing in self.submissions(name):
            if existing.content_hash == digest and existing.class_name == class_name:
                return existing, False
        with self.db.atomic():
            latest = self.db.execute(
                "select coalesce(max(version), 0) from submissions where name = ?", [name]
            ).fetchone()[0]
            row = {
                "name": name, "version": latest + 1, "kind": kind, "source": source,
                "content_hash": digest, "file": file, "submitted_at": _now(), "class_name": class_name,
                "user_id": user_id, "about": about,
            }
            self.db.table("submissions").insert(row)
        return self.submission(name, row["version"]), True  # type: ignore[return-value]  # just stored

    def submissions(self, name: str | None = None) -> list[Submission]:
        """Every stored version (of one name), oldest first."""
        where, params = ("name = ?", [name]) if name is not None else (None, [])
        rows = self.db.table("submissions").rows_where(where, params, order_by="name, version")
        return [_submission(r) for r in rows]

    def submission_by_id(self, submission_id: int) -> Submission | None:
        rows = list(self.db.table("submissions").rows_where("id = ?", [submission_id]))
        return _submission(rows[0]) if rows else None

    def submission(self, name: str, version: int | None = None) -> Submission | None:
        """One version of a submitted bot (the latest if ``version`` is None)."""
        versions = self.submissions(name)
        if version is None:
            return versions[-1] if versions else None
        return next((v for v in versions if v.version == version), None)

    # --- accounts, leagues and their entrants ---------------------------------------------

    def add_user(self, name: str, password_hash: str, token_hash: str, admin: bool = False) -> User:
        """A new account; StoreError if the name is taken."""
        if self.user(name) is not None:
            raise StoreError(f"there is already a user named {name!r} in {self.path}")
        _insert(self.db.table("users"), {"name": name, "password_hash": password_hash, "token_hash": token_hash,
                                         "admin": int(admin), "disabled": 0, "created_at": _now()})
        return self.user(name)  # type: ignore[return-value]  # just stored

    def user(self, name: str) -> User | None:
        rows = list(self.db.table("users").rows_where("name = ?", [name]))
        return User.of(rows[0]) if rows else None

    def user_by_id(self, user_id: int) -> User | None:
        rows = list(self.db.table("users").rows_where("id = ?", [user_id]))
        return User.of(rows[0]) if rows else None

    def user_by_token(self, token_hash: str) -> User | None:
        rows = list(self.db.table("users").rows_where("token_hash = ?", [token_hash]))
        return User.of(rows[0]) if rows else None

    def users(self) -> list[User]:
        return [User.of(row) for row in self.db.table("users").rows_where(order_by="name")]

    def update_user(self, user_id: int, **changes: Any) -> None:
        """Set columns of an account (password_hash, token_hash, disabled, admin)."""
        allowed = {"password_hash", "token_hash", "disabled", "admin"}
        if not set(changes) <= allowed:
            raise ValueError(f"not a user column: {sorted(set(changes) - allowed)}")
        self.db.table("users").update(user_id, changes)

    def audit(self, action: str, subject: str, user_id: int | None = None, detail: str = "") -> None:
        """Record who did what (submissions, retirements, admin actions)."""
        self.db.table("audit").insert({"at": _now(), "user_id": user_id, "action": action, "subject": subject,
                                       "detail": detail})

    def audit_log(self) -> list[dict[str, Any]]:
        return list(self.db.query(
            "select a.at, u.name as user, a.action, a.subject, a.detail from audit a "
            "left join users u on u.id = a.user_id order by a.id"))

    def create_league(self, name: str, config: dict[str, Any], tournament_id: int, public_code: bool,
                      closed: bool) -> League:
        if self.league(name) is not None:
            raise StoreError(f"there is already a league named {name!r} in {self.path}")
        _insert(self.db.table("leagues"), {
            "name": name, "config": json.dumps(config, sort_keys=True), "tournament_id": tournament_id,
            "public_code": int(public_code), "closed": int(closed), "created_at": _now()})
        return self.league(name)  # type: ignore[return-value]  # just stored

    def league(self, name: str) -> League | None:
        rows = list(self.db.table("leagues").rows_where("name = ?", [name]))
        return League.of(rows[0]) if rows else None

    def leagues(self) -> list[League]:
        return [League.of(row) for row in self.db.table("leagues").rows_where(order_by="id")]

    def check_league(self, name: str) -> League:
        found = self.league(name)
        if found is None:
            known = ", ".join(repr(league.name) for league in self.leagues()) or "none yet"
            raise StoreError(f"no league named {name!r} in {self.path}; leagues: {known}")
        return found

    def add_member(self, league_id: int, user_id: int) -> None:
        self.db.table("league_members").upsert({"league_id": league_id, "user_id": user_id},
                                               pk=("league_id", "user_id"))

    def is_member(self, league_id: int, user_id: int) -> bool:
        return bool(self.db.execute("select 1 from league_members where league_id = ? and user_id = ?",
                                    [league_id, user_id]).fetchone())

    def add_entry(self, league_id: int, spec: str, status: str, submission_id: int | None = None,
                  user_id: int | None = None, checks: str = "") -> Entry:
        entry_id = _insert(self.db.table("entries"), {
            "league_id": league_id, "spec": spec, "submission_id": submission_id, "user_id": user_id,
            "status": status, "checks": checks, "joined_at": _now()})
        return self.entry(entry_id)  # type: ignore[return-value]  # just stored

    def entry(self, entry_id: int) -> Entry | None:
        rows = list(self.db.table("entries").rows_where("id = ?", [entry_id]))
        return Entry.of(rows[0]) if rows else None

    def entries(self, league_id: int, status: str | None = None, user_id: int | None = None) -> list[Entry]:
        """A league's entrants, in the order they joined (of one status, one author)."""
        where, params = ["league_id = ?"], [league_id]
        if status is not None:
            where.append("status = ?")
            params.append(status)  # type: ignore[arg-type]
        if user_id is not None:
            where.append("user_id = ?")
            params.append(user_id)
        rows = self.db.table("entries").rows_where(" and ".join(where), params, order_by="id")
        return [Entry.of(row) for row in rows]

    def retire_entry(self, entry_id: int) -> None:
        self.db.table("entries").update(entry_id, {"status": "retired", "retired_at": _now()})

    def setting(self, key: str, make: Callable[[], str]) -> str:
        """A value the site keeps (its session key): made once, then the same."""
        row = self.db.execute("select value from settings where key = ?", [key]).fetchone()
        if row is not None:
            return str(row[0])
        value = make()
        self.db.execute("insert or ignore into settings (key, value) values (?, ?)", [key, value])
        self.db.conn.commit()
        return str(self.db.execute("select value from settings where key = ?", [key]).fetchone()[0])

    def end_session(self, session: str, until: str) -> None:
        """Remember that site session ``session`` (a digest of its token) was signed out:
        its cookie, copied before, is refused until ``until`` (when it expires anyway).
        Those past their time are forgotten."""
        self.db.execute("delete from settings where key like 'ended session %' and value < ?", [_now()])
        self.db.execute("insert or replace into settings (key, value) values (?, ?)",
                        [f"ended session {session}", until])
        self.db.conn.commit()

    def session_ended(self, session: str) -> bool:
        return self.stored_setting(f"ended session {session}") is not None

    # --- what the open league's pages read ---------------------------------------------

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

    def stored_setting(self, key: str) -> str | None:
        """A value the site keeps, if it was made (read-only: see :meth:`setting`)."""
        row = self.db.execute("select value from settings where key = ?", [key]).fetchone()
        return None if row is None else str(row[0])

    def league_by_id(self, league_id: int) -> League | None:
        rows = list(self.db.table("leagues").rows_where("id = ?", [league_id]))
        return League.of(rows[0]) if rows else None

    def submission_leagues(self, submission_id: int) -> list[League]:
        """The leagues a submitted version was entered in (whose settings say who may read its code)."""
        rows = self.db.query("select * from leagues where id in (select league_id from entries where "
                             "submission_id = ?) order by id", [submission_id])
        return [League.of(row) for row in rows]

    def tournament_game_count(self, tournament_id: int) -> int:
        """How many games a tournament (or league) has stored: a count of its index, no join."""
        return int(self.db.execute("select count(*) from games where tournament_id = ?",
                                   [tournament_id]).fetchone()[0])

    def entrant_record(self, tournament_id: int, spec: str, recent: int = 10) -> EntrantRecord:
        """How the bot stored as ``spec`` did in one tournament (a league's): its results,
        the games it forfeited by reason, and its ``recent`` latest games.

        Read through the games' bot indexes (a bot's games, not the tournament's)."""
        ids = [bot_id for (bot_id,) in self.db.execute("select id from bots where spec = ?", [spec])]
        if not ids:
            return EntrantRecord(spec)
        marks = ", ".join("?" * len(ids))
        # Each game once, from the entrant's side (0 moved first); a bot never plays itself in a league.
        sides = (f"select 0 as side, winner, termination, reason from games where first_bot_id in ({marks}) "
                 "and tournament_id = ? union all select 1, winner, termination, reason from games "
                 f"where second_bot_id in ({marks}) and tournament_id = ?")
        params = [*ids, tournament_id, *ids, tournament_id]
        # One pass: games by outcome for the entrant, and the reasons of those it forfeited.
        counts = {"won": 0, "drew": 0, "lost": 0}
        forfeits: dict[str, int] = {}
        for outcome, reason, count in self.db.execute(
                "select case when winner is null then 'drew' when winner = side then 'won' else 'lost' end, "
                "case when winner = 1 - side and termination = ? then coalesce(reason, '') end, count(*) "
                f"from ({sides}) group by 1, 2", [str(Termination.FORFEIT), *params]):
            counts[outcome] += count
            if reason is not None:
                forfeits[reason] = count
        latest = self.db.execute(
            "select g.id, b1.spec, b2.spec, g.result, g.winner, g.termination, g.reason, g.finished_at, "
            f"g.first_bot_id in ({marks}) from games g join bots b1 on b1.id = g.first_bot_id "
            "join bots b2 on b2.id = g.second_bot_id where g.id in ("
            f"select id from (select id from games where first_bot_id in ({marks}) and tournament_id = ? "
            f"order by id desc limit ?) union all select id from (select id from games where second_bot_id in "
            f"({marks}) and tournament_id = ? order by id desc limit ?)) order by g.id desc limit ?",
            [*ids, *ids, tournament_id, recent, *ids, tournament_id, recent, recent]).fetchall()
        return EntrantRecord(
            spec, sum(counts.values()), counts["won"], counts["drew"], counts["lost"],
            sorted(forfeits.items(), key=lambda item: (-item[1], item[0])),
            [EntrantGame(game_id, second if first_side else first, bool(first_side), result, winner, termination,
                         reason, finished_at)
             for game_id, first, second, result, winner, termination, reason, finished_at, first_side in latest])

    # --- analyses -----------------------------------------------------------------------

    def position_values(self, game_id: int) -> dict[int, tuple[int | None, float]]:
        """ply -> (value for the side to move or None if unproven, budget tried)."""
        rows = self.db.table("analyses").rows_where("game_id = ?", [game_id])
        return {r["ply"]: (r["value"], r["budget"]) for r in rows}

    def save_position_values(self, game_id: int, values: dict[int, int | None], budget: float) -> None:
        rows = [
            {"game_id": game_id, "ply": ply, "value": value, "budget": budget, "analysed_at": _now()}
            for ply, value in values.items()
        ]
        with self.db.atomic():
            self.db.table("analyses").upsert_all(rows, pk=("game_id", "ply"))

    # --- games ----------------------------------------------------------------------

    def stored_keys(self, tournament_id: int) -> set[str]:
        rows = self.db.execute("select key from games where tournament_id = ?", [tournament_id])
        return {key for (key,) in rows.fetchall()}

    def record_games(
        self, tournament_id: int, records: Iterable[GameRecord], bot_ids: dict[str, int]
    ) -> int:
        """Store finished games, each with all its moves, in one transaction."""
        return self.record_finished(tournament_id, [FinishedGame.of(record) for record in records], bot_ids)

    def record_finished(
        self, tournament_id: int, games: Sequence[FinishedGame], bot_ids: dict[str, int]
    ) -> int:
        """Store games already turned into rows (where they were played), each with
        all its moves, in one transaction: all of them or, on any error, none.

        The whole batch is two prepared statements run over many rows: the games
        get the ids SQLite would give them one by one (after the largest there is),
        taken under the write lock, so their moves go in with a single call too.
        """
        if not games:
            return 0
        conn = self.db.conn
        with self._writing():
            (last,) = conn.execute("select coalesce(max(id), 0) from games").fetchone()
            game_rows = [
                (game_id, tournament_id, game.key, game.pairing, bot_ids[game.first], bot_ids[game.second],
                 *tuple.__getitem__(game, _GAME_COLUMNS))
                for game_id, game in enumerate(games, last + 1)
            ]
            conn.executemany(_INSERT_GAME, game_rows)
            # The moves go in _MOVES_PER_INSERT rows per statement (a third of the
            # time of one row per statement), the few left over one by one. The
            # values stream through zip, grouped in C, never held all at once.
            rows = chain.from_iterable(game.move_rows(game_id) for game_id, game in enumerate(games, last + 1))
            values = chain.from_iterable(rows)
            whole = sum(len(game.move_plies) for game in games) // _MOVES_PER_INSERT
            conn.executemany(_INSERT_MOVES, islice(zip(*[values] * (_MOVE_COLUMNS * _MOVES_PER_INSERT)), whole))
            conn.executemany(_INSERT_MOVE, zip(*[values] * _MOVE_COLUMNS))
        return len(games)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A write transaction that holds the write lock from its first statement
        (BEGIN IMMEDIATE), so what it reads stays true until it commits; inside a
        transaction already, a savepoint of it."""
        conn = self.db.conn
        if conn.in_transaction:
            with self.db.atomic():
                yield
            return
        conn.execute("begin immediate")
        try:
            yield
        except BaseException:
            conn.rollback()
            raise
        conn.execute("commit")

    def record_game(
        self, tournament_id: int, record: GameRecord, bot_ids: dict[str, int], replace: int | None = None
    ) -> int:
        """Store one game with its moves and return its id.

        ``replace`` is the id of an earlier save of the same game (a casual game
        saved again), removed in the same transaction: the game is never stored
        twice, nor lost in between.
        """
        with self._writing():
            if replace is not None:
                self.delete_game(replace)
            self.record_finished(tournament_id, [FinishedGame.of(record)], bot_ids)
            (game_id,) = self.db.conn.execute("select max(id) from games").fetchone()
            return int(game_id)

    def find_game(self, rules: Rules, moves: str, first: str | None, second: str | None) -> int | None:
        """The id of the first stored game with these rules, this move string
        (openings included) and these players (bot specs; None matches any player),
        or None: the same game."""
        rows = self.db.execute(
            "select g.id, t.rules from games g join tournaments t on t.id = g.tournament_id "
            "join bots b1 on b1.id = g.first_bot_id join bots b2 on b2.id = g.second_bot_id "
            "where g.moves = ? and (? is null or b1.spec = ?) and (? is null or b2.spec = ?) order by g.id",
            [moves, first, first, second, second],
        ).fetchall()
        return next((game_id for game_id, stored in rows if Rules(**json.loads(stored)) == rules), None)

    def move_count(self, timed_only: bool = False) -> int:
        """How many moves are stored (only those with a time, if ``timed_only``)."""
        where = " where ms is not null" if timed_only else ""
        return int(self.db.execute("select count(*) from moves" + where).fetchone()[0])

    def delete_game(self, game_id: int) -> None:
        """Remove a game with its moves and analysis (a casual game saved again)."""
        with self.db.atomic():
            for table in ("moves", "analyses"):
                self.db.execute(f"delete from {table} where game_id = ?", [game_id])
            self.db.execute("delete from games where id = ?", [game_id])

    def game(self, game_id: int) -> StoredGame:
        """The game with that id; StoreError if there is none."""
        rows = list(self.db.query(_GAME_SELECT + " where g.id = ?", [game_id]))
        if not rows:
            raise StoreError(f"no game with id {game_id} in {self.path}; list them with 'arena games'")
        return StoredGame(**rows[0])

    def moves(self, game_id: int) -> list[StoredMove]:
        """A game's moves in order (none for an unknown id)."""
        rows = self.db.table("moves").rows_where("game_id = ?", [game_id], order_by="ply")
        return [StoredMove(**row) for row in rows]

    def games(
        self, tournament: str | None = None, bot: str | None = None, limit: int | None = None
    ) -> list[StoredGame]:
        """Stored games, oldest first, optionally of one tournament or one bot; with
        ``limit``, only the latest that many.

        ``bot`` is a spec (``minimax:depth=4``, ``guard@v2``) or a bot's name
        (``minimax``, ``guard``), which matches all its specs and versions.
        """
        where, params = self._game_filter(tournament, bot)
        sql = _GAME_SELECT + where + " order by g.id"
        if limit is not None:
            sql = f"select * from ({_GAME_SELECT + where} order by g.id desc limit {int(limit)}) order by id"
        return [StoredGame(**row) for row in self.db.query(sql, params)]

    # --- pages of games: the site's games list --------------------------------------
    #
    # A page is read newest first through an index already in id order, so it costs
    # the rows it skips and shows, never a sort of every match: with a bot, the two
    # bot indexes (each ordered by id within a bot) merged; otherwise the table itself
    # from its newest row. The other filters are checked on the rows read. The worst
    # page (a filter that matches nothing) reads the table once: about 0.1 s on a
    # million games, where the first pages of any filter take a few milliseconds.

    def page_of_games(
        self, tournament: str | None = None, bot: str | None = None, result: str | None = None,
        termination: str | None = None, offset: int = 0, limit: int = 50,
    ) -> list[StoredGame]:
        """The games that match every filter given, newest first: ``limit`` of them
        after the first ``offset``. ``bot`` is a spec or a name (all its specs), as
        in :meth:`games`; an unknown tournament or bot is a StoreError."""
        where: list[str] = []
        params: list[Any] = []
        if tournament is not None:
            # The unary + keeps SQLite off the (tournament, key) index, which is not in
            # id order: a page of a million-game tournament would sort all of it.
            where.append("+g.tournament_id = ?")
            params.append(self.check_tournament(tournament).id)
        if result is not None:
            where.append("g.result = ?")
            params.append(result)
        if termination is not None:
            where.append("g.termination = ?")
            params.append(termination)
        if bot is None:
            ids = "select g.id from games g" + (" where " + " and ".join(where) if where else "")
            ids_params = params
        elif len(bot_ids := self._bot_ids(bot)) <= _MERGED_BOTS:
            # UNION, not UNION ALL: a game between two specs of one name is in both indexes.
            parts = []
            ids_params = []
            for bot_id in bot_ids:
                for column in ("first_bot_id", "second_bot_id"):
                    parts.append(f"select g.id from games g where g.{column} = ?"
                                 + "".join(" and " + condition for condition in where))
                    ids_params += [bot_id, *params]
            ids = " union ".join(parts)
        else:  # a name with more specs than a compound select may have parts: its games sorted
            marks = ", ".join("?" * len(bot_ids))
            ids = " and ".join([f"select g.id from games g where (g.first_bot_id in ({marks}) "
                                f"or g.second_bot_id in ({marks}))", *where])
            ids_params = [*bot_ids, *bot_ids, *params]
        # The order and limit belong to the compound select itself: SQLite merges
        # its parts in order then, where a select around it would sort them all.
        sql = f"{_GAME_SELECT} where g.id in ({ids} order by 1 desc limit ? offset ?) order by g.id desc"
        return [StoredGame(**row) for row in self.db.query(sql, [*ids_params, limit, offset])]

    def _bot_ids(self, bot: str) -> list[int]:
        """The ids of every bot stored under this spec or name; StoreError if none."""
        rows = self.db.execute("select id from bots where spec = ? or name = ? order by id", [bot, bot]).fetchall()
        if not rows:
            known = self.bot_specs()
            shown = ", ".join(known[:10]) + (", ..." if len(known) > 10 else "") if known else "none yet"
            raise StoreError(f"no bot {bot!r} in {self.path}; bots: {shown}")
        return [bot_id for (bot_id,) in rows]

    def bot_specs(self) -> list[str]:
        """Every stored bot's spec and name (a name stands for all its specs), sorted."""
        rows = self.db.execute("select spec, name from bots where spec != ?", [UNNAMED]).fetchall()
        return sorted({text for row in rows for text in row})

    def game_count(self, tournament: str | None = None, bot: str | None = None, finished_only: bool = False) -> int:
        """How many games ``games`` would give without a limit (only finished ones, if asked)."""
        where, params = self._game_filter(tournament, bot)
        if finished_only:
            where += (" and " if where else " where ") + "g.termination != ?"
            params.append(str(Termination.UNFINISHED))
        sql = f"select count(*) from ({_GAME_SELECT + where})"
        return int(self.db.execute(sql, params).fetchone()[0])

    def _game_filter(self, tournament: str | None, bot: str | None) -> tuple[str, list[Any]]:
        where: list[str] = []
        params: list[Any] = []
        if tournament is not None:
            if self.tournament(tournament) is None:
                raise StoreError(self._unknown_tournament(tournament))
            where.append("t.name = ?")
            params.append(tournament)
        if bot is not None:
            rows = list(self.db.table("bots").rows_where(order_by="spec"))
            if not any(bot in (row["spec"], row["name"]) for row in rows):
                known = ", ".join(dict.fromkeys(row["spec"] for row in rows)) or "none yet"
                raise StoreError(f"no bot {bot!r} in {self.path}; bots: {known}")
            where.append("(b1.spec = ? or b1.name = ? or b2.spec = ? or b2.name = ?)")
            params += [bot] * 4
        return (" where " + " and ".join(where) if where else ""), params

    # --- what league tables count: in SQL, never a game row at a time -------------

    def version(self) -> tuple[Any, ...]:
        """A value that changes whenever a table could: a game stored or removed, a
        tournament started or its status changed. Cheap on a million games: it counts
        none but the casual ones (a count of them all takes 50 ms). A stored game
        raises the last id; a game leaves only when a casual game is saved again
        (:meth:`delete_game`), which changes the casual games' count or, where the new
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

    def counted_summary(self, tournament_id: int | None) -> CountedSummary:
        """What the games that count in a table are (see :data:`_COUNTED`): of one
        tournament, or of all with ``tournament_id`` None."""
        where, params = _counted(tournament_id)
        per_tournament = self.db.execute(
            f"select g.tournament_id, count(*), min(g.id) from games g where {where} group by g.tournament_id",
            params).fetchall()
        rules = {t.id: t.rules for t in self.tournaments()}
        first_met = sorted(per_tournament, key=lambda row: row[2])
        bots = self.db.execute(
            f"select id, spec, content_hash from bots where id in (select g.first_bot_id from games g where {where} "
            f"union select g.second_bot_id from games g where {where}) order by id", params + params).fetchall()
        return CountedSummary(
            games=sum(row[1] for row in per_tournament),
            tournament_ids=sorted(row[0] for row in per_tournament),
            rules=list(dict.fromkeys(rules[row[0]] for row in first_met)),
            bots=[(bot_id, spec, content_hash or "") for bot_id, spec, content_hash in bots],
        )

    def counted_pairs(self, tournament_id: int | None) -> list[tuple[int, int, int, int, int, int, int]]:
        """Per ordered pair of bot ids: (first, second, the first player's wins, draws,
        losses, forfeit losses of the first, of the second)."""
        where, params = _counted(tournament_id)
        rows = self.db.execute(
            # total(), not sum(): a pair that only drew sums NULL comparisons to NULL, totals them to 0.
            "select g.first_bot_id, g.second_bot_id, total(g.winner = 0), total(g.winner is null), "
            "total(g.winner = 1), total(g.winner = 1 and g.termination = ?), total(g.winner = 0 and g.termination = ?) "
            f"from {_scan(tournament_id)} where {where} group by g.first_bot_id, g.second_bot_id order by 1, 2",
            [str(Termination.FORFEIT)] * 2 + params).fetchall()
        return [tuple(int(value) for value in row) for row in rows]  # type: ignore[misc]

    def counted_in_order(self, tournament_id: int | None) -> Iterator[tuple[int, int, int | None]]:
        """(first bot id, second bot id, winner) of each counted game, by tournament
        name then game key: a stream, read as it is used."""
        where, params = _counted(tournament_id)
        cursor = self.db.conn.execute(
            "select g.first_bot_id, g.second_bot_id, g.winner from tournaments t "
            f"join games g on g.tournament_id = t.id where {where} order by t.name, g.key", params)
        with closing(cursor):
            yield from cursor

    def unnamed_count(self, tournament_id: int | None) -> int:
        """Finished games with a player an imported file did not name: they count in no table."""
        where = "g.termination != ? and (b1.spec = ? or b2.spec = ?)"
        params: list[Any] = [str(Termination.UNFINISHED), UNNAMED, UNNAMED]
        if tournament_id is not None:
            where += " and g.tournament_id = ?"
            params.append(tournament_id)
        return int(self.db.execute(
            "select count(*) from games g join bots b1 on b1.id = g.first_bot_id "
            f"join bots b2 on b2.id = g.second_bot_id where {where}", params).fetchone()[0])

    # --- a bot's games and a pair's: through the bot indexes, a page at a time -----

    def stored_bots(self, bot_ids: Iterable[int] | None = None) -> list[StoredBot]:
        """The bots table's rows (of these ids), by id."""
        if bot_ids is None:
            rows = self.db.execute("select * from bots order by id").fetchall()
        else:
            ids = list(bot_ids)
            rows = self.db.execute(f"select * from bots where id in ({_marks(ids)}) order by id", ids).fetchall()
        return [StoredBot(*row) for row in rows]

    def tournament_game_counts(self) -> dict[int, int]:
        """Tournament id -> how many games it stores (finished or not), each counted on
        the tournament's own stretch of the (tournament, key) index."""
        rows = self.db.execute(
            "select t.id, (select count(*) from games g where g.tournament_id = t.id) from tournaments t").fetchall()
        return dict(rows)

    def latest_games_of(self, bot_ids: Sequence[int], limit: int) -> list[StoredGame]:
        """The last ``limit`` games stored with any of ``bot_ids`` on either side, newest
        first: each side's index read backwards from its newest game, merged."""
        marks = _marks(bot_ids)
        return self._games_in(
            f"select * from (select id from games where first_bot_id in ({marks}) order by id desc limit ?) "
            f"union select * from (select id from games where second_bot_id in ({marks}) order by id desc limit ?) "
            "order by id desc limit ?", [*bot_ids, limit, *bot_ids, limit, limit])

    def pair_game_ids(self, a_ids: Sequence[int], b_ids: Sequence[int]) -> list[int]:
        """The ids of every game stored between bots ``a_ids`` and bots ``b_ids``, in
        either colour, newest first (a pair's games to page through)."""
        sql, params = _pair_sql(a_ids, b_ids)
        rows = self.db.execute(sql + " order by id desc", params).fetchall()
        return [game_id for (game_id,) in rows]

    def games_by_id(self, game_ids: Sequence[int]) -> list[StoredGame]:
        """The games with these ids (a page of them), in the order given; ids not stored are left out."""
        found = {game.id: game for game in self._games_in(_marks(game_ids), list(game_ids))}
        return [found[game_id] for game_id in game_ids if game_id in found]

    def pair_openings(self, a_ids: Sequence[int], b_ids: Sequence[int]) -> list[OpeningCounts]:
        """Bots ``a_ids`` against bots ``b_ids`` per opening, in the games that count
        in a table (see :func:`_counted`), the most played openings first."""
        where, params = _counted(None)
        pair, pair_params = _pair_sql(a_ids, b_ids)
        rows = self.db.execute(
            "select coalesce(g.opening, ''), "
            "total(g.a_first and g.winner = 0), total(g.a_first and g.winner is null), "
            "total(g.a_first and g.winner = 1), total(not g.a_first and g.winner = 1), "
            "total(not g.a_first and g.winner is null), total(not g.a_first and g.winner = 0) "
            f"from (select g.opening, g.winner, g.first_bot_id in ({_marks(a_ids)}) as a_first from games g "
            f"where g.id in ({pair}) and {where}) g group by 1 order by count(*) desc, 1",
            [*a_ids, *pair_params, *params]).fetchall()
        return [OpeningCounts(opening, (int(w1), int(d1), int(l1)), (int(w2), int(d2), int(l2)))
                for opening, w1, d1, l1, w2, d2, l2 in rows]

    def forfeit_reasons(self, tournament_id: int | None) -> list[tuple[int, str, int]]:
        """(the losing bot's id, the reason, how many) of every forfeit in the games
        that count in a table: of one tournament, or of all."""
        where, params = _counted(tournament_id)
        rows = self.db.execute(
            "select case when g.winner = 1 then g.first_bot_id else g.second_bot_id end, coalesce(g.reason, ''), "
            f"count(*) from {_scan(tournament_id)} where g.termination = ? and {where} "
            "group by 1, 2 order by 1, 3 desc",
            [str(Termination.FORFEIT), *params]).fetchall()
        return [(int(bot_id), reason, int(count)) for bot_id, reason, count in rows]

    def _games_in(self, ids_sql: str, params: list[Any]) -> list[StoredGame]:
        """The games whose ids ``ids_sql`` selects, newest first."""
        rows = self.db.query(_GAME_SELECT + f" where g.id in ({ids_sql}) order by g.id desc", params)
        return [StoredGame(**row) for row in rows]

    def _unknown_tournament(self, name: str) -> str:
        names = [t.name for t in self.tournaments()]
        known = ", ".join(names) if names else "none yet"
        return f"no tournament named {name!r} in {self.path}; tournaments: {known}"

    def check_tournament(self, name: str) -> StoredTournament:
        """The tournament of that name; StoreError naming the known ones if there is none."""
        row = self.tournament(name)
        if row is None:
            raise StoreError(self._unknown_tournament(name))
        return row


#: The most bot ids whose games a page merges in id order: two parts each, and SQLite
#: takes at most 500 parts in one compound select.
_MERGED_BOTS = 200


def _scan(tournament_id: int | None) -> str:
    """How to read the games of a count: a whole league in the table's own order (twice
    as fast on a million games as visiting rows at random through a bot index);
    one tournament through its index."""
    return "games g not indexed" if tournament_id is None else "games g"


@dataclass(frozen=True)
class User:
    """An account of the open league. The password and the API token are kept only as hashes."""

    id: int
    name: str
    password_hash: str
    token_hash: str
    admin: bool
    disabled: bool
    created_at: str

    @classmethod
    def of(cls, row: dict[str, Any]) -> User:
        return cls(row["id"], row["name"], row["password_hash"], row["token_hash"] or "", bool(row["admin"]),
                   bool(row["disabled"]), row["created_at"])


@dataclass(frozen=True)
class League:
    """A long-lived competition: its settings (a tournament file's keys), and the
    tournament row its games are stored under, so every table works for it."""

    id: int
    name: str
    config: dict[str, Any]
    tournament_id: int
    public_code: bool  # everyone may read every entrant's code (after a class competition, say)
    closed: bool  # only its members may submit
    created_at: str

    @classmethod
    def of(cls, row: dict[str, Any]) -> League:
        return cls(row["id"], row["name"], json.loads(row["config"]), row["tournament_id"], bool(row["public_code"]),
                   bool(row["closed"]), row["created_at"])


@dataclass(frozen=True)
class Entry:
    """A bot in a league: an installed bot's spec, or one submitted version (``name@vN``)."""

    id: int
    league_id: int
    spec: str
    submission_id: int | None
    user_id: int | None
    status: str  # "active", "retired" or "failed"
    checks: str  # the submission checks' report, as text
    joined_at: str
    retired_at: str | None

    @classmethod
    def of(cls, row: dict[str, Any]) -> Entry:
        return cls(row["id"], row["league_id"], row["spec"], row["submission_id"], row["user_id"], row["status"],
                   row["checks"] or "", row["joined_at"], row["retired_at"])


@dataclass(frozen=True)
class EntrantGame:
    """One game of an entrant, from its side."""

    id: int
    opponent: str  # the other bot's spec
    moved_first: bool
    result: str  # "1-0", "0-1" or "1/2-1/2", first player first
    winner: int | None  # 0 (first), 1 (second) or None
    termination: str
    reason: str | None
    finished_at: str | None

    @property
    def outcome(self) -> str:
        """"won", "drew" or "lost", for the entrant."""
        if self.winner is None:
            return "drew"
        return "won" if (self.winner == 0) == self.moved_first else "lost"


@dataclass(frozen=True)
class EntrantRecord:
    """How one bot did in one tournament or league (see :meth:`Store.entrant_record`)."""

    spec: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    forfeits: list[tuple[str, int]] = field(default_factory=list)  # (reason, games lost so), most first
    recent: list[EntrantGame] = field(default_factory=list)  # newest first

    @property
    def forfeited(self) -> int:
        return sum(count for _, count in self.forfeits)


def _submission(row: dict[str, Any]) -> Submission:
    return Submission(**{k: row[k] for k in Submission.__dataclass_fields__})


@dataclass(frozen=True)
class CountedSummary:
    """The games that count in a table, described (see :meth:`Store.counted_summary`)."""

    games: int
    tournament_ids: list[int]  # those the games come from, oldest first
    rules: list[str]  # JSON of each distinct rules, in the order their first game was stored
    bots: list[tuple[int, str, str]]  # (id, spec, content hash) of each bot that played one


@dataclass(frozen=True)
class StoredBot:
    """A row of the bots table: one spec as played by one code."""

    id: int
    spec: str
    name: str  # the bot's name in the spec (a plug-in's, a submission's with its version, a file's stem)
    options: str  # JSON: the options the spec gave
    source: str  # where the code came from: a distribution and version, a file, "submitted NAME@vN", ...
    content_hash: str  # sha256 of the code ("" for a plug-in: its distribution version says which code)


@dataclass(frozen=True)
class OpeningCounts:
    """One opening of a pair's games: the first bot's wins, draws and losses when it
    moved first and when it moved second."""

    opening: str  # its moves ("" for games played from the empty board)
    first: tuple[int, int, int]
    second: tuple[int, int, int]


# A pair's games, through the two bot indexes: in each colour, the ids in one bot's
# first-player entries that are also in the other's second-player entries. Both scans
# read only the indexes (20 ms for a pair of 50 bots with a million games), half the
# time it takes to read each of one bot's games from the table to look for the other.
_PAIR_IDS = (
    "select id from (select id from games where first_bot_id in ({a}) intersect "
    "select id from games where second_bot_id in ({b})) union "
    "select id from (select id from games where first_bot_id in ({b}) intersect "
    "select id from games where second_bot_id in ({a}))"
)


def _marks(values: Sized) -> str:
    """One bound parameter per value: ``?, ?, ?``."""
    return ", ".join("?" * len(values))


def _pair_sql(a_ids: Sequence[int], b_ids: Sequence[int]) -> tuple[str, list[int]]:
    """The ids of the games between bots ``a_ids`` and bots ``b_ids``: SQL and its parameters."""
    sql = _PAIR_IDS.format(a=_marks(a_ids), b=_marks(b_ids))
    return sql, [*a_ids, *b_ids, *b_ids, *a_ids]


def _counted(tournament_id: int | None) -> tuple[str, list[Any]]:
    """The games that count in a league table: finished, with both players named
    (see :data:`UNNAMED`); of one tournament, or of all."""
    where = ("g.termination != ? and g.first_bot_id not in (select id from bots where spec = ?) "
             "and g.second_bot_id not in (select id from bots where spec = ?)")
    params: list[Any] = [str(Termination.UNFINISHED), UNNAMED, UNNAMED]
    if tournament_id is not None:
        where += " and g.tournament_id = ?"
        params.append(tournament_id)
    return where, params


_INSERT_GAME = """
insert into games (id, tournament_id, key, pairing, first_bot_id, second_bot_id, opening,
  opening_plies, result, winner, termination, reason, plies, moves, duration, seed, finished_at)
values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
_INSERT_MOVE = "insert into moves (game_id, ply, move, ms, info) values (?, ?, ?, ?, ?)"
_MOVE_COLUMNS = 5
_MOVES_PER_INSERT = 50
_INSERT_MOVES = _INSERT_MOVE.replace("values ", "values " + "(?, ?, ?, ?, ?), " * (_MOVES_PER_INSERT - 1))
_GAME_SELECT = """
select g.id, t.name as tournament, g.key, b1.spec as first, b2.spec as second,
  g.result, g.winner, g.termination, g.reason, g.plies, g.opening, g.opening_plies,
  g.moves, g.duration, g.seed, g.finished_at, t.rules,
  b1.content_hash as first_hash, b2.content_hash as second_hash
from games g
join tournaments t on t.id = g.tournament_id
join bots b1 on b1.id = g.first_bot_id
join bots b2 on b2.id = g.second_bot_id
"""


class FinishedGame(NamedTuple):
    """A finished game as the store writes it: its games row but for the ids the
    database gives (its own, the tournament's, the bots': by spec here), and its
    move rows but for the game's id. Made where the game was played, so that the
    one writer only inserts; it crosses processes as plain values."""

    key: str
    pairing: str
    first: str  # bot specs
    second: str
    opening: str  # in the notation, as are the moves
    opening_plies: int
    result: str
    winner: int | None
    termination: str
    reason: str | None
    plies: int
    moves: str
    duration: float
    seed: int
    finished_at: str
    # The move rows, column by column (the ply, the move in the notation, the
    # milliseconds the bot took, its info as JSON; no info column when no move has
    # any): the writer zips them into rows in C, and they pickle small.
    move_plies: tuple[int, ...]
    move_names: tuple[str, ...]
    move_ms: tuple[float | None, ...]
    move_info: tuple[str | None, ...] | None

    @classmethod
    def of(cls, record: GameRecord) -> FinishedGame:
        spec, outcome = record.spec, record.outcome
        names, joiner = _notation(spec.rules)
        plies, moves, ms, infos = zip(*record.moves) if record.moves else ((), (), (), ())
        played = tuple([names[move] for move in moves])
        info_texts = None
        if infos.count(None) != len(infos):
            # strict JSON: a NaN a bot reported is null
            info_texts = tuple([None if info is None else json_text(info) for info in infos])
        return cls(
            spec.key, spec.pairing, spec.first, spec.second,
            joiner.join([names[move] for move in spec.opening]), len(spec.opening),
            outcome.result, outcome.winner, str(outcome.termination), outcome.reason, len(played),
            joiner.join(played), round(record.duration, 6), spec.seed, _timestamp(record.finished_at),
            plies, played, ms, info_texts,
        )

    def move_rows(self, game_id: int) -> Iterator[tuple[int, int, str, float | None, str | None]]:
        """The rows of the moves table, once the game has its id."""
        infos = self.move_info if self.move_info is not None else repeat(None)
        return zip(repeat(game_id), self.move_plies, self.move_names, self.move_ms, infos)


#: The fields of a FinishedGame that go into its games row as they are.
_GAME_COLUMNS = slice(FinishedGame._fields.index("opening"), FinishedGame._fields.index("move_plies"))


@lru_cache(maxsize=64)
def _notation(rules: Rules) -> tuple[tuple[str, ...], str]:
    """The name of each move, and what goes between them in a move string (as
    :func:`~arena.engine.game.format_moves` writes them), made once per rules."""
    names = move_names(rules)
    two = format_moves((0, 0), rules)  # the notation's own choice, read back: "11" or "1,1"
    return names, two[len(names[0]):len(two) - len(names[0])]


def _insert(table: Table, row: dict[str, Any]) -> int:
    """Insert ``row`` into ``table``; the id it got."""
    rowid = table.insert(row).last_rowid
    if rowid is None:  # SQLite gives every inserted row an id: only a broken driver gets here
        raise RuntimeError(f"no id for the row inserted into {table.name}")
    return rowid


def code_description(source: str, kind: str, class_name: str | None = None) -> str:
    """The first docstring line of a bot file's Bot subclass (``class_name``, or its
    only one) or, for a ``connectx`` file, of ``agent`` (else its last function), as
    the sandbox would pick them (an agent without a docstring: the file's); found by
    parsing, never by running the code."""
    import ast  # only listing submitted bots needs it

    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # the parser's word for nested too deep
        return ""
    body = module.body
    node: ast.AST | None = None
    if kind == "connectx":
        functions = [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        named = [f for f in functions if f.name == "agent"]
        node = (named or functions)[-1] if functions else None
    else:
        bots: dict[str, ast.ClassDef] = {}
        for cls in (n for n in body if isinstance(n, ast.ClassDef)):  # in file order: subclasses of bots too
            bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
                     for b in cls.bases}
            if "Bot" in bases or bases & set(bots):
                bots[cls.name] = cls
        node = bots.get(class_name) if class_name else (next(iter(bots.values())) if len(bots) == 1 else None)
    if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
        return ""
    doc = (ast.get_docstring(node) or (ast.get_docstring(module) if kind == "connectx" else "") or "").strip()
    return doc.splitlines()[0].strip() if doc else ""


def rules_of(row: StoredGame | StoredTournament) -> Rules:
    """The Rules stored with a game or tournament."""
    return Rules(**json.loads(row.rules))


def _first_difference(old: dict[str, Any], new: dict[str, Any]) -> str:
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            return f"{key} was {old.get(key)!r}, now {new.get(key)!r}"
    return "same settings"


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _timestamp(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat(timespec="milliseconds")


def check_database(path: str | Path) -> None:
    """Raise :class:`StoreError` unless a writing ``Store(path)`` could store games there:
    a new file in a folder that exists, an empty file, or an arena database this
    version can use. Changes nothing: a command checks before asking a person for
    anything it would then fail to store."""
    path = str(path)
    if path == ":memory:":
        return
    if Path(path).is_file():
        Store(path, read_only=True).close()
    else:
        _check_folder(path)


def _check_folder(path: str) -> None:
    folder = Path(path).parent
    if not folder.is_dir():
        raise StoreError(f"cannot create database {path!r}: folder {str(folder)!r} does not exist")


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
    if not (Path(path + "-wal").exists() or Path(path + "-journal").exists()):
        conn = sqlite3.connect(path, check_same_thread=False)
        conn.execute("PRAGMA query_only=ON")
        return conn
    return sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True, check_same_thread=False)
