"""Tournaments: the rows their games are stored under, and who runs one now."""

from __future__ import annotations

import fcntl
import json
import os
import struct
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import fields, replace
from typing import Any

from arena.records import TimeControl
from arena.store.rows import BotIdentity, StoredTournament, StoreError
from arena.store.sql import Repository, insert_row, now

#: The columns of a tournament's row that may be shown: all but its seed secret, which
#: only :meth:`Tournaments.seed_secret` reads, so that no view can print it by accident.
_SHOWN = ", ".join(field.name for field in fields(StoredTournament))
#: struct flock of Linux's 64-bit ABIs: type, whence, start, length, pid.
_FLOCK = struct.Struct("hh4xqqi4x")
#: The tournaments this process holds now, as (database file, name): F_GETLK reports
#: only other processes' locks, so a process asks itself about its own.
_HELD_HERE: set[tuple[str, str]] = set()


def _file_key(path: str) -> str:
    return os.path.realpath(path)


class Tournaments(Repository):
    """The tournaments table (``store.tournaments``): a league is stored as one too."""

    def get(self, name: str) -> StoredTournament | None:
        """The tournament of that name, or None."""
        rows = list(self.db.table("tournaments").rows_where("name = ?", [name], select=_SHOWN))
        return self._as_stored(rows[0]) if rows else None

    def all(self) -> list[StoredTournament]:
        """Every tournament, oldest first."""
        return [self._as_stored(row) for row in self.db.table("tournaments").rows_where(order_by="id",
                                                                                          select=_SHOWN)]

    def _as_stored(self, row: dict[str, Any]) -> StoredTournament:
        """A row as shown: "running" only while a process holds it (see :meth:`running`);
        one whose runner was killed outright (kill -9, a lost machine) never said it
        stopped, and is shown as what it is, interrupted."""
        tournament = StoredTournament(**row)
        if tournament.status == "running" and not self._held(tournament.name):
            return replace(tournament, status="interrupted")
        return tournament

    def _held(self, name: str) -> bool:
        """Whether a process holds tournament ``name`` now. Asked of the kernel
        (F_GETLK), which takes no lock: a run starting meanwhile is never refused
        because someone looked. Where it cannot tell, True (the stored word stands)."""
        if self.path == ":memory:" or (_file_key(self.path), name) in _HELD_HERE:
            return True
        try:
            fd = os.open(self.path + ".lock", os.O_RDONLY)  # read-only: looking creates nothing
        except FileNotFoundError:
            return False  # every run makes it: none ever ran here, or it was removed
        except OSError:
            return True
        try:
            probe = _FLOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, zlib.crc32(name.encode()), 1, 0)
            return bool(_FLOCK.unpack(fcntl.fcntl(fd, fcntl.F_GETLK, probe))[0] != fcntl.F_UNLCK)
        except OSError:
            return True
        finally:
            os.close(fd)

    def time_control(self, name: str) -> TimeControl | None:
        """The time control tournament ``name`` was played with; None where it had
        none, where there is no such tournament, or where its row (written by hand)
        holds something else."""
        tournament = self.get(name)
        try:
            settings = json.loads(tournament.config) if tournament else None
            value = settings.get("time_control") if isinstance(settings, dict) else None
            if not isinstance(value, dict) or value.get("move_seconds") is None:
                return None
            return TimeControl(float(value["move_seconds"]), float(value.get("bank_seconds") or 0.0))
        except (ValueError, TypeError):
            return None

    def seed_secret(self, tournament_id: int) -> bytes | None:
        """The secret a tournament's private seeds are keyed by; None for a public seed.
        For the runners only: nothing that shows a tournament reads it."""
        row = self.db.execute("select seed_secret from tournaments where id = ?", [tournament_id]).fetchone()
        return bytes(row[0]) if row and row[0] is not None else None

    def set_seed_secret(self, tournament_id: int, secret: bytes) -> None:
        """Give a tournament without one its secret (a league created before private seeds)."""
        with self.db.atomic():  # kept only if none was there: two runs racing keep the first
            self.db.execute("update tournaments set seed_secret = ? where id = ? and seed_secret is null",
                            [secret, tournament_id])

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
            try:  # the byte _held asks about
                fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, byte)
            except OSError:
                raise StoreError(
                    f"tournament {name!r} in {self.path} is being run by another process: "
                    "wait for it to finish (or stop it), then run the same command to resume"
                ) from None
            held = (_file_key(self.path), name)
            _HELD_HERE.add(held)
            try:
                yield
            finally:
                _HELD_HERE.discard(held)
                fcntl.lockf(lock, fcntl.LOCK_UN, 1, byte)

    def start(
        self,
        name: str,
        fmt: str,
        identity: dict[str, Any],
        config: dict[str, Any],
        seed: int,
        bots: Iterable[BotIdentity] = (),
        seed_secret: bytes | None = None,
    ) -> int:
        """Create the tournament, or return the id of the stored one if it is the same.

        A stored tournament of that name with other settings is refused: resuming
        it would mix games of two different tournaments under one name. So is one
        whose stored games were played by other code under a spec in ``bots`` (a
        bot file edited, a plug-in's distribution upgraded); nothing is changed then.
        ``seed_secret`` is stored with a new tournament only: a resumed one keeps its
        own (read it with :meth:`seed_secret`), so its games keep their seeds.
        """
        identity_text = json.dumps(identity, sort_keys=True)
        existing = self.get(name)
        if existing is not None:
            if existing.identity != identity_text:
                old = json.loads(existing.identity)
                if bool(old.get("private_seeds")) != bool(identity.get("private_seeds")):
                    raise StoreError(_private_seeds_clash(name, self.path, bool(old.get("private_seeds"))))
                raise StoreError(
                    f"tournament {name!r} in {self.path} was run with other settings "
                    f"({_first_difference(old, identity)}); "
                    "pick another --name or repeat the original settings to resume it"
                )
            self._check_same_code(existing, bots)
            self.db.table("tournaments").update(existing.id, {"status": "running", "finished_at": None})
            return existing.id
        row = {
            "name": name, "format": fmt, "config": json.dumps(config, sort_keys=True),
            "identity": identity_text, "rules": json.dumps(identity["rules"]), "seed": seed,
            "status": "running", "created_at": now(), "finished_at": None, "seed_secret": seed_secret,
        }
        return insert_row(self.db.table("tournaments"), row)

    def same_settings(self, identity: dict[str, Any]) -> list[StoredTournament]:
        """The stored tournaments whose identity (settings) is ``identity``, oldest first."""
        identity_text = json.dumps(identity, sort_keys=True)
        return [t for t in self.all()[::-1] if t.identity == identity_text]

    def played_by_other_code(self, tournament: StoredTournament, bots: Iterable[BotIdentity]) -> list[str]:
        """The specs among ``bots`` whose games in ``tournament`` were played by other
        code (see :meth:`_check_same_code`), in the order of ``bots``."""
        return [bot.spec for bot, _, _ in self._other_code(tournament, bots)]

    def _other_code(
        self, tournament: StoredTournament, bots: Iterable[BotIdentity]
    ) -> Iterator[tuple[BotIdentity, str, str]]:
        """(bot, stored source, stored hash) for each bot whose stored games in
        ``tournament`` were played by other code: a file bot with another hash, a
        plug-in from another distribution version (its code may differ, and no hash
        says otherwise)."""
        rows = self.db.execute(
            "select distinct b.spec, b.source, b.content_hash from bots b join games g "
            "on b.id = g.first_bot_id or b.id = g.second_bot_id where g.tournament_id = ?",
            [tournament.id],
        ).fetchall()
        stored: dict[str, list[tuple[str, str]]] = {}
        for spec, source, digest in rows:
            stored.setdefault(spec, []).append((source, digest))
        for bot in bots:
            for source, digest in stored.get(bot.spec, []):
                if digest != bot.content_hash or (not digest and source != bot.source):
                    yield bot, source, digest
                    break

    def _check_same_code(self, tournament: StoredTournament, bots: Iterable[BotIdentity]) -> None:
        """Refuse to resume ``tournament`` when a bot's stored games were played by
        other code (:meth:`_other_code`)."""
        where = f"tournament {tournament.name!r} in {self.path}"
        for bot, source, digest in self._other_code(tournament, bots):
            if digest != bot.content_hash:
                raise StoreError(
                    f"{where} was played with other code for bot {bot.spec!r} "
                    f"(sha256 {digest[:12] or 'none'}, now {bot.content_hash[:12] or 'none'}): "
                    "restore the file to resume it, or run under another --name"
                )
            raise StoreError(
                f"{where} was played with bot {bot.spec!r} from {source}, now from "
                f"{bot.source}: reinstall {source} to resume it, or run under another --name"
            )

    def set_status(self, tournament_id: int, status: str) -> None:
        """Mark a tournament "running", "interrupted" or "finished" (the time it finished, only then)."""
        finished = now() if status == "finished" else None
        self.db.table("tournaments").update(tournament_id, {"status": status, "finished_at": finished})

    def _unknown(self, name: str) -> str:
        names = [t.name for t in self.all()]
        known = ", ".join(names) if names else "none yet"
        return f"no tournament named {name!r} in {self.path}; tournaments: {known}"

    def check(self, name: str) -> StoredTournament:
        """The tournament of that name; StoreError naming the known ones if there is none."""
        row = self.get(name)
        if row is None:
            raise StoreError(self._unknown(name))
        return row


def _private_seeds_clash(name: str, path: str, was_private: bool) -> str:
    """Why a tournament cannot be resumed with its seeds made public or private: its
    stored games were played with the other kind, and the rest must be played alike."""
    if was_private:
        return (f"tournament {name!r} in {path} was started with private seeds: resume it with "
                "--private-seeds (private_seeds = true), or pick another --name")
    return (f"tournament {name!r} in {path} was started with a public seed: resume it without "
            "--private-seeds (private_seeds = true), or pick another --name for a private-seed tournament")


def _first_difference(old: dict[str, Any], new: dict[str, Any]) -> str:
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            return f"{key} was {old.get(key)!r}, now {new.get(key)!r}"
    return "same settings"
