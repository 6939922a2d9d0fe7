"""What league tables count, counted in SQL: never a game row at a time."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import closing
from typing import Any

from arena.records import Termination
from arena.store.migrations import PAIR_COUNTS_OF_GAMES
from arena.store.rows import UNNAMED, CountedSummary, OpeningCounts
from arena.store.sql import Repository, counted_pairs, counted_where, pair_sql, param_marks, scan_games


class Results(Repository):
    """The games that count in a table, as counts (``store.results``): what the ratings read."""

    def summary(self, tournament_id: int | None) -> CountedSummary:
        """What the games that count in a table are (see :func:`~arena.store.sql.counted_where`): of one
        tournament, or of all with ``tournament_id`` None. Read from the pair counts
        (migration 0011), a row per pair that met, never from the games."""
        where, params = counted_pairs(tournament_id)
        per_tournament = self.db.execute(
            "select p.tournament_id, sum(p.wins + p.draws + p.losses), min(p.first_game_id) from pair_counts p "
            f"where {where} group by p.tournament_id", params).fetchall()
        rules = {t.id: t.rules for t in self._store.tournaments.all()}
        first_met = sorted(per_tournament, key=lambda row: row[2])
        bots = self.db.execute(
            f"select id, spec, content_hash from bots where id in (select p.first_bot_id from pair_counts p "
            f"where {where} union select p.second_bot_id from pair_counts p where {where}) order by id",
            params + params).fetchall()
        return CountedSummary(
            games=sum(row[1] for row in per_tournament),
            tournament_ids=sorted(row[0] for row in per_tournament),
            rules=list(dict.fromkeys(rules[row[0]] for row in first_met)),
            bots=[(bot_id, spec, content_hash or "") for bot_id, spec, content_hash in bots],
        )

    def pairs(self, tournament_id: int | None) -> list[tuple[int, int, int, int, int, int, int]]:
        """Per ordered pair of bot ids: (first, second, the first player's wins, draws,
        losses, forfeit losses of the first, of the second), from the pair counts."""
        where, params = counted_pairs(tournament_id)
        rows = self.db.execute(
            "select p.first_bot_id, p.second_bot_id, sum(p.wins), sum(p.draws), sum(p.losses), "
            f"sum(p.first_forfeits), sum(p.second_forfeits) from pair_counts p where {where} "
            "group by p.first_bot_id, p.second_bot_id order by 1, 2", params).fetchall()
        return [tuple(int(value) for value in row) for row in rows]  # type: ignore[misc]

    def pair_counts(self, tournament_id: int | None = None) -> list[tuple[int, ...]]:
        """The pair counts table's rows as kept (every stored game's pair, unnamed players
        and pairs whose games all left included), in the order of
        :data:`~arena.store.migrations.PAIR_COUNTS_OF_GAMES`, less the pairs of no game."""
        where, params = ("where games > 0", []) if tournament_id is None else (
            "where games > 0 and tournament_id = ?", [tournament_id])
        return [tuple(row) for row in self.db.execute(
            "select tournament_id, first_bot_id, second_bot_id, games, wins, draws, losses, first_forfeits, "
            f"second_forfeits, first_game_id from pair_counts {where} order by 1, 2, 3", params).fetchall()]

    def recount(self) -> list[tuple[int, ...]]:
        """What :meth:`pair_counts` holds, counted again from every game (a test's check, seconds on a million)."""
        return [tuple(int(v) if isinstance(v, float) else v for v in row) for row in self.db.execute(
            f"select * from ({PAIR_COUNTS_OF_GAMES}) order by 1, 2, 3").fetchall()]

    def changes(self, tournament_id: int | None) -> int:
        """A number that grows whenever a game of the tournament (of any, with None) is
        stored, removed or changed: what dates a table of it."""
        where, params = ("", []) if tournament_id is None else (" where id = ?", [tournament_id])
        row = self.db.execute(f"select total(game_changes) from tournaments{where}", params).fetchone()
        return int(row[0])

    def scope(self, tournament: str | None, league: bool) -> int | None:
        """The id of the tournament a table of ``tournament`` shows (by default the latest
        that is not casual; -1 where there is none), or None for the whole league."""
        if league:
            return None
        row = self.db.execute(
            "select id from tournaments where name = ?" if tournament else
            "select id from tournaments where format != 'casual' order by id desc limit 1",
            [tournament] if tournament else []).fetchone()
        return -1 if row is None else int(row[0])

    def version(self, tournament_id: int | None) -> tuple[Any, ...]:
        """What dates a table of one tournament (of all with None): its games' changes,
        and the tournaments' and entrants' rows (a status, an entrant joining or
        retiring), a few index reads. A game of another tournament leaves it as it is."""
        tournaments = self.db.execute("select count(*), group_concat(id || status) from tournaments").fetchone()
        entries = self.db.execute("select count(*), group_concat(id || status) from entries").fetchone()
        return (tournament_id, self.changes(tournament_id), *tournaments, *entries)

    def pair_record(self, a_ids: Sequence[int], b_ids: Sequence[int]) -> tuple[list[int], list[int]]:
        """Bots ``a_ids`` against bots ``b_ids`` in the games that count in a table:
        (a's wins, draws, losses moving first; the same moving second), from the pair counts."""
        where, params = counted_pairs(None)
        a, b = param_marks(a_ids), param_marks(b_ids)
        sums = "select total(p.wins), total(p.draws), total(p.losses) from pair_counts p where "
        as_first = self.db.execute(f"{sums}p.first_bot_id in ({a}) and p.second_bot_id in ({b}) and {where}",
                                   [*a_ids, *b_ids, *params]).fetchone()
        as_second = self.db.execute(f"{sums}p.first_bot_id in ({b}) and p.second_bot_id in ({a}) and {where}",
                                    [*b_ids, *a_ids, *params]).fetchone()
        return [int(count) for count in as_first], [int(count) for count in reversed(as_second)]

    def pair_changes(self, a_ids: Sequence[int], b_ids: Sequence[int]) -> int:
        """A number that grows whenever a game between bots ``a_ids`` and ``b_ids`` (either
        colour, any tournament) is stored, removed or changed: what dates a matchup page."""
        a, b = param_marks(a_ids), param_marks(b_ids)
        row = self.db.execute(
            f"select total(changes) from pair_counts where (first_bot_id in ({a}) and second_bot_id in ({b})) "
            f"or (first_bot_id in ({b}) and second_bot_id in ({a}))", [*a_ids, *b_ids, *b_ids, *a_ids]).fetchone()
        return int(row[0])

    def in_order(self, tournament_id: int | None) -> Iterator[tuple[int, int, int | None]]:
        """(first bot id, second bot id, winner) of each counted game, by tournament
        name then game key: a stream, read as it is used."""
        where, params = counted_where(tournament_id)
        cursor = self.db.conn.execute(
            "select g.first_bot_id, g.second_bot_id, g.winner from tournaments t "
            f"join games g on g.tournament_id = t.id where {where} order by t.name, g.key", params)
        with closing(cursor):
            yield from cursor

    def marks(self, tournament_id: int | None) -> tuple[int, dict[int, tuple[str, int]]]:
        """(the last game id stored, tournament id -> (its name, :meth:`changes`)) of one
        tournament or of all: where a stream of :meth:`in_order_after` stopped, to tell
        later whether only games stored after it arrived since (see :meth:`arrivals`)."""
        where, params = ("", []) if tournament_id is None else (" where id = ?", [tournament_id])
        last = self.db.execute("select coalesce(max(id), 0) from games").fetchone()[0]
        rows = self.db.execute(f"select id, name, game_changes from tournaments{where}", params).fetchall()
        return int(last), {int(tid): (name, int(changes)) for tid, name, changes in rows}

    def arrivals(self, tournament_ids: Sequence[int], after_id: int) -> dict[int, tuple[int, str | None]]:
        """Per tournament: how many of its games have an id above ``after_id`` (stored
        since a :meth:`marks`), and the first game key among those that count in a table
        (None: none does). Two index range reads per tournament."""
        where, params = counted_where(None)
        found = {}
        for tid in tournament_ids:
            stored = self.db.execute("select count(*) from games where tournament_id = ? and id > ?",
                                     [tid, after_id]).fetchone()[0]
            first = self.db.execute(f"select min(g.key) from games g where g.tournament_id = ? and g.id > ? "
                                    f"and {where}", [tid, after_id, *params]).fetchone()[0]
            found[tid] = (int(stored), first)
        return found

    def in_order_after(self, tournament_id: int | None, after: tuple[str, str] | None
                       ) -> Iterator[tuple[str, str, int, int, int | None]]:
        """(tournament name, game key, first bot id, second bot id, winner) of each counted
        game after the position ``after`` (a tournament name and a game key; None: from the
        first), in :meth:`in_order`'s order: a stream, one tournament's stretch of the
        (tournament, key) index after another."""
        where, params = counted_where(None)
        scope, scope_params = ("", []) if tournament_id is None else (" and id = ?", [tournament_id])
        start = "" if after is None else after[0]
        tournaments = self.db.execute(f"select id, name from tournaments where name >= ?{scope} order by name",
                                      [start, *scope_params]).fetchall()
        for tid, name in tournaments:
            from_key, key_params = (" and g.key > ?", [after[1]]) if after is not None and name == after[0] else (
                "", [])
            cursor = self.db.conn.execute(  # the name bound, not joined: rows as they are yielded
                "select ?, g.key, g.first_bot_id, g.second_bot_id, g.winner from games g "
                f"where g.tournament_id = ?{from_key} and {where} order by g.key", [name, tid, *key_params, *params])
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

    def by_opening(self, tournament_id: int) -> list[tuple[str, int, int, int]]:
        """(opening, the first player's wins, draws, losses) of each opening of a
        tournament's games that count in a table, the most played first."""
        where, params = counted_where(tournament_id)
        rows = self.db.execute(
            "select coalesce(g.opening, ''), total(g.winner = 0), total(g.winner is null), total(g.winner = 1) "
            f"from {scan_games(tournament_id)} where {where} group by 1 order by count(*) desc, 1", params).fetchall()
        return [(opening, int(wins), int(draws), int(losses)) for opening, wins, draws, losses in rows]

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
