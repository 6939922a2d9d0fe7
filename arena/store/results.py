"""What league tables count, counted in SQL: never a game row at a time."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import closing
from typing import Any

from arena.records import Termination
from arena.store.rows import UNNAMED, CountedSummary, OpeningCounts
from arena.store.sql import Repository, counted_where, pair_sql, param_marks, scan_games


class Results(Repository):
    """The games that count in a table, as counts (``store.results``): what the ratings read."""

    def summary(self, tournament_id: int | None) -> CountedSummary:
        """What the games that count in a table are (see :func:`~arena.store.sql.counted_where`): of one
        tournament, or of all with ``tournament_id`` None."""
        where, params = counted_where(tournament_id)
        per_tournament = self.db.execute(
            f"select g.tournament_id, count(*), min(g.id) from games g where {where} group by g.tournament_id",
            params).fetchall()
        rules = {t.id: t.rules for t in self._store.tournaments.all()}
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

    def pairs(self, tournament_id: int | None) -> list[tuple[int, int, int, int, int, int, int]]:
        """Per ordered pair of bot ids: (first, second, the first player's wins, draws,
        losses, forfeit losses of the first, of the second)."""
        where, params = counted_where(tournament_id)
        rows = self.db.execute(
            # total(), not sum(): a pair that only drew sums NULL comparisons to NULL, totals them to 0.
            "select g.first_bot_id, g.second_bot_id, total(g.winner = 0), total(g.winner is null), "
            "total(g.winner = 1), total(g.winner = 1 and g.termination = ?), total(g.winner = 0 and g.termination = ?) "
            f"from {scan_games(tournament_id)} where {where} group by g.first_bot_id, g.second_bot_id order by 1, 2",
            [str(Termination.FORFEIT)] * 2 + params).fetchall()
        return [tuple(int(value) for value in row) for row in rows]  # type: ignore[misc]

    def in_order(self, tournament_id: int | None) -> Iterator[tuple[int, int, int | None]]:
        """(first bot id, second bot id, winner) of each counted game, by tournament
        name then game key: a stream, read as it is used."""
        where, params = counted_where(tournament_id)
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

    def pair_openings(self, a_ids: Sequence[int], b_ids: Sequence[int]) -> list[OpeningCounts]:
        """Bots ``a_ids`` against bots ``b_ids`` per opening, in the games that count
        in a table (see :func:`~arena.store.sql.counted_where`), the most played openings first."""
        where, params = counted_where(None)
        pair, pair_params = pair_sql(a_ids, b_ids)
        rows = self.db.execute(
            "select coalesce(g.opening, ''), "
            "total(g.a_first and g.winner = 0), total(g.a_first and g.winner is null), "
            "total(g.a_first and g.winner = 1), total(not g.a_first and g.winner = 1), "
            "total(not g.a_first and g.winner is null), total(not g.a_first and g.winner = 0) "
            f"from (select g.opening, g.winner, g.first_bot_id in ({param_marks(a_ids)}) as a_first from games g "
            f"where g.id in ({pair}) and {where}) g group by 1 order by count(*) desc, 1",
            [*a_ids, *pair_params, *params]).fetchall()
        return [OpeningCounts(opening, (int(w1), int(d1), int(l1)), (int(w2), int(d2), int(l2)))
                for opening, w1, d1, l1, w2, d2, l2 in rows]

    def forfeit_reasons(self, tournament_id: int | None) -> list[tuple[int, str, int]]:
        """(the losing bot's id, the reason, how many) of every forfeit in the games
        that count in a table: of one tournament, or of all."""
        where, params = counted_where(tournament_id)
        rows = self.db.execute(
            "select case when g.winner = 1 then g.first_bot_id else g.second_bot_id end, coalesce(g.reason, ''), "
            f"count(*) from {scan_games(tournament_id)} where g.termination = ? and {where} "
            "group by 1, 2 order by 1, 3 desc",
            [str(Termination.FORFEIT), *params]).fetchall()
        return [(int(bot_id), reason, int(count)) for bot_id, reason, count in rows]
