"""Removing an account's data: the rows that name it or hold its code, rewritten in place.

The games stay (the other players' results are theirs), under new names; the code,
the descriptions and what the bots wrote (their infos, reasons and logs) are emptied. Used through
:func:`arena.league.removal.remove_user`, which decides the new names.
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

from arena.store.sql import Repository, param_marks

#: The settings key counted up at each removal: a view cached before it is out of date
#: (the names it shows changed, though no game or entrant did).
REMOVALS_KEY = "accounts removed"
#: What a removed account's password hash is: no password verifies against it.
REMOVED_HASH = "!removed"
#: What a removed bot's losing games say in place of the reason it gave.
REMOVED_REASON = "(the reason was removed with its author's account)"


class Removals(Repository):
    """Rewrites over the users, submissions, bots, entries, games, moves, void_games,
    tournaments, league_members, audit and settings tables (``Removals(store)``)."""

    def count(self) -> str | None:
        """How many accounts were removed (None: none yet), to date views by."""
        row = self.db.execute("select value from settings where key = ?", [REMOVALS_KEY]).fetchone()
        return None if row is None else str(row[0])

    def name_taken(self, name: str) -> bool:
        """Whether ``name`` is an account's or a bot's (a submission's, a stored spec's) name already."""
        return bool(self.db.execute(
            "select 1 from users where name = ? union all select 1 from submissions where name = ? "
            "union all select 1 from bots where spec = ? or spec like ? escape '\\' or name = ? limit 1",
            [name, name, name, _like_prefix(name + "@v"), name]).fetchone())

    def remove_account(self, user_id: int, new_user_name: str, old_user_name: str, bots: dict[str, str]) -> None:
        """Rename account ``user_id`` to ``new_user_name``, make it unusable, and rename
        each of its bot names (``bots``: old name to new name) wherever they are stored,
        emptying the code and what the bots wrote. Inside the caller's transaction."""
        db = self.db
        db.execute("update users set name = ?, password_hash = ?, token_hash = ?, disabled = 1, admin = 0 "
                   "where id = ?", [new_user_name, REMOVED_HASH, "removed " + secrets.token_hex(16), user_id])
        db.execute("delete from league_members where user_id = ?", [user_id])
        # Where it signed in from and its wrong passwords: nothing of the person is kept.
        db.execute("delete from known_addresses where user_id = ?", [user_id])
        db.execute("delete from sign_in_failures where name = ?", [old_user_name])
        db.execute("update audit set subject = ? where subject = ?", [new_user_name, old_user_name])
        if bots:
            self._rename_bots(bots)
        db.execute("insert into settings (key, value) values (?, '1') on conflict(key) do update "
                   "set value = cast(value as integer) + 1", [REMOVALS_KEY])

    def _rename_bots(self, bots: dict[str, str]) -> None:
        db = self.db
        rename = _renamer(bots)
        for old, new in bots.items():
            # A program's built files and build log are its code too: they go with it.
            db.execute("update submissions set name = ?, source = '', content_hash = '', file = '', about = null, "
                       "class_name = null, program_files = null, build_log = null where name = ?", [new, old])
        bot_ids = []
        for bot_id, spec, name, source in db.execute("select id, spec, name, source from bots").fetchall():
            if rename(spec) != spec:
                bot_ids.append(bot_id)
                db.execute("update bots set spec = ?, name = ?, source = ?, content_hash = '' where id = ?",
                           [rename(spec), rename(name), rename(source), bot_id])
        for entry_id, spec in db.execute("select id, spec from entries").fetchall():
            if rename(spec) != spec:
                db.execute("update entries set spec = ?, checks = '' where id = ?", [rename(spec), entry_id])
        if bot_ids:
            self._rename_games(bot_ids, rename)
        for row_id, config, identity in db.execute("select id, config, identity from tournaments").fetchall():
            new_config, new_identity = _renamed_json(config, rename), _renamed_json(identity, rename)
            if (new_config, new_identity) != (config, identity):
                db.execute("update tournaments set config = ?, identity = ? where id = ?",
                           [new_config, new_identity, row_id])
        for row_id, subject, detail in db.execute("select id, subject, detail from audit").fetchall():
            if (rename(subject), rename(detail or "")) != (subject, detail or ""):
                db.execute("update audit set subject = ?, detail = ? where id = ?",
                           [rename(subject), rename(detail or ""), row_id])

    def _rename_games(self, bot_ids: list[int], rename: Any) -> None:
        db = self.db
        marks = param_marks(bot_ids)
        for table in ("games", "void_games"):
            pairing = ", pairing" if table == "games" else ", null"
            rows = db.execute(f"select id, key{pairing} from {table} where first_bot_id in ({marks}) "
                              f"or second_bot_id in ({marks})", [*bot_ids, *bot_ids]).fetchall()
            for game_id, key, pair in rows:
                if table == "games":
                    db.execute("update games set key = ?, pairing = ? where id = ?",
                               [rename(key), rename(pair) if pair else pair, game_id])
                else:
                    db.execute("update void_games set key = ? where id = ?", [rename(key), game_id])
        # What the removed bots wrote: each move's info (the first player moves at even
        # plies), and the reason of each game they lost by their own doing.
        db.execute(f"update moves set info = null where info is not null and game_id in (select id from games "
                   f"where first_bot_id in ({marks})) and ply % 2 = 0", bot_ids)
        db.execute(f"update moves set info = null where info is not null and game_id in (select id from games "
                   f"where second_bot_id in ({marks})) and ply % 2 = 1", bot_ids)
        db.execute(f"update games set reason = ? where reason is not null and ((winner = 1 and first_bot_id in "
                   f"({marks})) or (winner = 0 and second_bot_id in ({marks})))", [REMOVED_REASON, *bot_ids, *bot_ids])
        db.execute(f"delete from bot_logs where (side = 0 and game_id in (select id from games where first_bot_id in "
                   f"({marks}))) or (side = 1 and game_id in (select id from games where second_bot_id in ({marks})))",
                   [*bot_ids, *bot_ids])


def _like_prefix(text: str) -> str:
    return re.sub(r"([\\%_])", r"\\\1", text) + "%"


def _renamer(bots: dict[str, str]) -> Any:
    """A function that renames each old bot name where it stands as a name of its own
    (``lefty``, ``lefty@v2``, ``lefty@v2:depth=3``, in a key ``lefty@v1~bob@v1-o0000-a``),
    never inside another name (``xlefty``)."""
    pattern = re.compile(r"(?<![A-Za-z0-9_-])(" + "|".join(re.escape(old) for old in sorted(bots, key=len,
                                                                                                reverse=True))
                         + r")(?=@v\d|$|[^A-Za-z0-9_@-])")

    def rename(text: str | None) -> str:
        return pattern.sub(lambda match: bots[match.group(1)], text or "")

    return rename


def _renamed_json(text: str | None, rename: Any) -> str | None:
    """A stored JSON text with each string that is a renamed bot's spec or name renamed."""
    if not text:
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return rename(item)
        if isinstance(item, list):
            return [walk(part) for part in item]
        if isinstance(item, dict):
            return {key: walk(part) for key, part in item.items()}
        return item

    renamed = walk(value)
    return text if renamed == value else json.dumps(renamed, sort_keys=True)
