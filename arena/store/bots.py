"""Bots as stored: one row per spec and the code that played under it."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable

from arena.store.rows import UNNAMED, BotIdentity, StoredBot, StoreError
from arena.store.sql import Repository, insert_row, param_marks

# What a glob pattern reads as more than itself: a text holding one names no submitted bot.
_GLOB_SPECIALS = frozenset("*?[]")


class Bots(Repository):
    """The bots table (``store.bots``)."""

    def id_of(self, bot: BotIdentity) -> int:
        """The id of this exact bot (spec and code), adding it if new."""
        key = [bot.spec, bot.source, bot.content_hash]
        rows = list(self.db.table("bots").rows_where("spec = ? and source = ? and content_hash = ?", key))
        if rows:
            return int(rows[0]["id"])
        row = {
            "spec": bot.spec, "name": bot.name, "options": json.dumps(bot.options, sort_keys=True),
            "source": bot.source, "content_hash": bot.content_hash,
        }
        return insert_row(self.db.table("bots"), row)

    def ids_matching(self, bot: str) -> list[int]:
        """The ids of every bot stored under this spec or name; StoreError if none.

        A submitted bot's name (``mybot``) matches every version of it (``mybot@v1``,
        ``mybot@v2:depth=3``...), as the name of an installed bot matches all its specs.
        """
        versions = f"{bot}@v[0-9]*" if not _GLOB_SPECIALS.intersection(bot) else ""
        rows = self.db.execute("select id from bots where spec = ? or name = ? or name glob ? order by id",
                               [bot, bot, versions]).fetchall()
        if not rows:
            known = self.specs()
            close = difflib.get_close_matches(bot, known, n=3, cutoff=0.6)
            guess = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
            shown = ", ".join(known[:10]) + (", ..." if len(known) > 10 else "") if known else "none yet"
            raise StoreError(f"no bot {bot!r} in {self.path}{guess}; bots: {shown}")
        return [bot_id for (bot_id,) in rows]

    def specs(self) -> list[str]:
        """Every stored bot's spec and name (a name stands for all its specs), sorted."""
        rows = self.db.execute("select spec, name from bots where spec != ?", [UNNAMED]).fetchall()
        submitted = {name.rpartition("@v")[0] for _, name in rows if "@v" in name}  # each version's bare name
        return sorted({text for row in rows for text in row} | submitted)

    def stored(self, bot_ids: Iterable[int] | None = None) -> list[StoredBot]:
        """The bots table's rows (of these ids), by id."""
        if bot_ids is None:
            rows = self.db.execute("select * from bots order by id").fetchall()
        else:
            ids = list(bot_ids)
            rows = self.db.execute(f"select * from bots where id in ({param_marks(ids)}) order by id", ids).fetchall()
        return [StoredBot(*row) for row in rows]
