"""What the repositories share: their base (the store they read and write through)
and the SQL pieces several of them use."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence, Sized
from typing import TYPE_CHECKING, Any

from sqlite_utils import Database
from sqlite_utils.db import Table

from arena.records import Termination
from arena.store.rows import UNNAMED

if TYPE_CHECKING:
    from arena.store.database import Store


class Repository:
    """The rows of one subject, read and written through a :class:`Store`'s connection."""

    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def db(self) -> Database:
        return self._store.db

    @property
    def path(self) -> str:
        return self._store.path


def scan_games(tournament_id: int | None) -> str:
    """How to read the games of a count: a whole league in the table's own order (twice
    as fast on a million games as visiting rows at random through a bot index);
    one tournament through its index."""
    return "games g not indexed" if tournament_id is None else "games g"


# A pair's games, through the two bot indexes: in each colour, the ids in one bot's
# first-player entries that are also in the other's second-player entries. Both scans
# read only the indexes (20 ms for a pair of 50 bots with a million games), half the
# time it takes to read each of one bot's games from the table to look for the other.
PAIR_IDS = (
    "select id from (select id from games where first_bot_id in ({a}) intersect "
    "select id from games where second_bot_id in ({b})) union "
    "select id from (select id from games where first_bot_id in ({b}) intersect "
    "select id from games where second_bot_id in ({a}))"
)


def param_marks(values: Sized) -> str:
    """One bound parameter per value: ``?, ?, ?``."""
    return ", ".join("?" * len(values))


def pair_sql(a_ids: Sequence[int], b_ids: Sequence[int]) -> tuple[str, list[int]]:
    """The ids of the games between bots ``a_ids`` and bots ``b_ids``: SQL and its parameters."""
    sql = PAIR_IDS.format(a=param_marks(a_ids), b=param_marks(b_ids))
    return sql, [*a_ids, *b_ids, *b_ids, *a_ids]


def counted_where(tournament_id: int | None) -> tuple[str, list[Any]]:
    """The games that count in a league table: finished, with both players named
    (see :data:`UNNAMED`); of one tournament, or of all."""
    where = ("g.termination != ? and g.first_bot_id not in (select id from bots where spec = ?) "
             "and g.second_bot_id not in (select id from bots where spec = ?)")
    params: list[Any] = [str(Termination.UNFINISHED), UNNAMED, UNNAMED]
    if tournament_id is not None:
        where += " and g.tournament_id = ?"
        params.append(tournament_id)
    return where, params


def counted_pairs(tournament_id: int | None) -> tuple[str, list[Any]]:
    """The pair counts (table ``pair_counts``, alias ``p``) of the games :func:`counted_where`
    selects: pairs with finished games, both players named; of one tournament, or of all."""
    where = ("p.wins + p.draws + p.losses > 0 and p.first_bot_id not in (select id from bots where spec = ?) "
             "and p.second_bot_id not in (select id from bots where spec = ?)")
    params: list[Any] = [UNNAMED, UNNAMED]
    if tournament_id is not None:
        where += " and p.tournament_id = ?"
        params.append(tournament_id)
    return where, params


GAME_SELECT = """
select g.id, t.name as tournament, g.key, b1.spec as first, b2.spec as second,
  g.result, g.winner, g.termination, g.reason, g.plies, g.opening, g.opening_plies,
  g.moves, g.duration, g.seed, g.finished_at, t.rules,
  b1.content_hash as first_hash, b2.content_hash as second_hash
from games g
join tournaments t on t.id = g.tournament_id
join bots b1 on b1.id = g.first_bot_id
join bots b2 on b2.id = g.second_bot_id
"""


def insert_row(table: Table, row: dict[str, Any]) -> int:
    """Insert ``row`` into ``table``; the id it got."""
    rowid = table.insert(row).last_rowid
    if rowid is None:  # SQLite gives every inserted row an id: only a broken driver gets here
        raise RuntimeError(f"no id for the row inserted into {table.name}")
    return rowid


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
