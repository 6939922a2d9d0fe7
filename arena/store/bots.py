"""Bots as stored: one row per spec and the code that played under it."""

from __future__ import annotations

import json
from collections.abc import Iterable

from arena.store.rows import UNNAMED, BotIdentity, StoredBot, StoreError
from arena.store.sql import Repository, insert_row, param_marks


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
        """The ids of every bot stored under this spec or name; StoreError if none."""
        rows = self.db.execute("select id from bots where spec = ? or name = ? order by id", [bot, bot]).fetchall()
        if not rows:
            known = self.specs()
            shown = ", ".join(known[:10]) + (", ..." if len(known) > 10 else "") if known else "none yet"
            raise StoreError(f"no bot {bot!r} in {self.path}; bots: {shown}")
        return [bot_id for (bot_id,) in rows]

    def specs(self) -> list[str]:
        """Every stored bot's spec and name (a name stands for all its specs), sorted."""
        rows = self.db.execute("select spec, name from bots where spec != ?", [UNNAMED]).fetchall()
        return sorted({text for row in rows for text in row})

    def stored(self, bot_ids: Iterable[int] | None = None) -> list[StoredBot]:
        """The bots table's rows (of these ids), by id."""
        if bot_ids is None:
            rows = self.db.execute("select * from bots order by id").fetchall()
        else:
            ids = list(bot_ids)
            rows = self.db.execute(f"select * from bots where id in ({param_marks(ids)}) order by id", ids).fetchall()
        return [StoredBot(*row) for row in rows]
