"""Stored games and their moves: written in batches of whole games, read back whole or a page at a time."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, islice
from typing import Any

from arena.engine.game import Rules
from arena.records import GameRecord, Termination
from arena.store.rows import (
    FinishedGame,
    StoredGame,
    StoredLog,
    StoredMove,
    StoreError,
    VoidGame,
    stored_log,
    stored_time,
)
from arena.store.sql import GAME_SELECT, Repository, pair_sql, param_marks

#: The most bot ids whose games a page merges in id order: two parts each, and SQLite
#: takes at most 500 parts in one compound select.
_MERGED_BOTS = 200

_INSERT_GAME = """
insert into games (id, tournament_id, key, pairing, first_bot_id, second_bot_id, opening,
  opening_plies, result, winner, termination, reason, plies, moves, duration, seed, finished_at)
values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
_INSERT_MOVE = "insert into moves (game_id, ply, move, ms, info) values (?, ?, ?, ?, ?)"
_MOVE_COLUMNS = 5
_MOVES_PER_INSERT = 50
_INSERT_LOG = "insert into bot_logs (game_id, side, text, plies, cut, crash, traceback) values (?, ?, ?, ?, ?, ?, ?)"
_INSERT_MOVES = _INSERT_MOVE.replace("values ", "values " + "(?, ?, ?, ?, ?), " * (_MOVES_PER_INSERT - 1))


class Games(Repository):
    """The games and moves tables (``store.games``)."""

    def keys(self, tournament_id: int) -> set[str]:
        rows = self.db.execute("select key from games where tournament_id = ?", [tournament_id])
        return {key for (key,) in rows.fetchall()}

    def latest_players(self, tournament_id: int, count: int) -> list[tuple[str, str]]:
        """(first, second) bot spec of the last ``count`` games stored in a tournament, in
        the order they were stored: what a learning league's floor counts."""
        rows = self.db.execute(
            "select b1.spec, b2.spec from (select id, first_bot_id, second_bot_id from games "
            "where tournament_id = ? order by id desc limit ?) g join bots b1 on b1.id = g.first_bot_id "
            "join bots b2 on b2.id = g.second_bot_id order by g.id", [tournament_id, count]).fetchall()
        return [(first, second) for first, second in rows]

    def record(
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

        Every text is made storable first (:meth:`FinishedGame.storable`): a game
        with a lone surrogate in its reason or info is stored with it escaped, and
        never fails the batch, which would lose the games stored with it.
        """
        if not games:
            return 0
        games = [game.storable() for game in games]
        conn = self.db.conn
        with self._store.writing():
            (last,) = conn.execute("select coalesce(max(id), 0) from games").fetchone()
            conn.executemany(_INSERT_GAME, [game.game_row(game_id, tournament_id, bot_ids)
                                            for game_id, game in enumerate(games, last + 1)])
            # The moves go in _MOVES_PER_INSERT rows per statement (a third of the
            # time of one row per statement), the few left over one by one. The
            # values stream through zip, grouped in C, never held all at once.
            rows = chain.from_iterable(game.move_rows(game_id) for game_id, game in enumerate(games, last + 1))
            values = chain.from_iterable(rows)
            whole = sum(len(game.move_plies) for game in games) // _MOVES_PER_INSERT
            conn.executemany(_INSERT_MOVES, islice(zip(*[values] * (_MOVE_COLUMNS * _MOVES_PER_INSERT)), whole))
            conn.executemany(_INSERT_MOVE, zip(*[values] * _MOVE_COLUMNS))
            # What the bots wrote: nothing, for nearly every game.
            logs = [(game_id, *row) for game_id, game in enumerate(games, last + 1) for row in game.logs or ()]
            if logs:
                conn.executemany(_INSERT_LOG, logs)
        return len(games)

    def record_void(self, tournament_id: int, games: Sequence[FinishedGame], bot_ids: dict[str, int]) -> int:
        """Keep games the arena failed during (see :data:`~arena.records.Termination.VOID`)
        apart, with why: they count in no table and their keys stay free to play again."""
        if not games:
            return 0
        with self._store.writing():
            self.db.conn.executemany(
                "insert into void_games (tournament_id, key, first_bot_id, second_bot_id, reason, plies, moves, "
                "finished_at) values (?, ?, ?, ?, ?, ?, ?, ?)",
                [(tournament_id, game.key, bot_ids[game.first], bot_ids[game.second], game.reason or "",
                  game.plies, game.moves, game.finished_at) for game in games])
        return len(games)

    def voided(self, tournament_id: int | None = None, limit: int = 50) -> list[VoidGame]:
        """The latest void games (of one tournament, or of all), newest first."""
        if not self._has_void_games():
            return []
        where, params = ("where v.tournament_id = ?", [tournament_id]) if tournament_id is not None else ("", [])
        rows = self.db.execute(
            "select v.id, t.name, v.key, b1.spec, b2.spec, v.reason, v.plies, v.moves, v.finished_at "
            "from void_games v join tournaments t on t.id = v.tournament_id join bots b1 on b1.id = v.first_bot_id "
            f"join bots b2 on b2.id = v.second_bot_id {where} order by v.id desc limit ?", [*params, limit])
        return [VoidGame(*row) for row in rows.fetchall()]

    def void_count(self, tournament_id: int | None = None) -> int:
        if not self._has_void_games():
            return 0
        where, params = ("where tournament_id = ?", [tournament_id]) if tournament_id is not None else ("", [])
        return int(self.db.execute(f"select count(*) from void_games {where}", params).fetchone()[0])

    def _has_void_games(self) -> bool:
        """False in a file of an older schema opened read-only (never migrated)."""
        return bool(self.db.execute("select 1 from sqlite_master where name = 'void_games'").fetchone())

    def record_one(
        self, tournament_id: int, record: GameRecord, bot_ids: dict[str, int], replace: int | None = None
    ) -> int:
        """Store one game with its moves and return its id.

        ``replace`` is the id of an earlier save of the same game (a casual game
        saved again), removed in the same transaction: the game is never stored
        twice, nor lost in between.
        """
        with self._store.writing():
            if replace is not None:
                self.delete(replace)
            self.record_finished(tournament_id, [FinishedGame.of(record)], bot_ids)
            (game_id,) = self.db.conn.execute("select max(id) from games").fetchone()
            return int(game_id)

    def find(self, rules: Rules, moves: str, first: str | None, second: str | None) -> int | None:
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

    def delete(self, game_id: int) -> None:
        """Remove a game with its moves and analysis (a casual game saved again)."""
        with self.db.atomic():
            for table in ("moves", "analyses", "bot_logs"):
                self.db.execute(f"delete from {table} where game_id = ?", [game_id])
            self.db.execute("delete from games where id = ?", [game_id])

    def logs(self, game_id: int) -> list[StoredLog]:
        """What the bots of a game wrote: a row per side that wrote something (none
        in a file of an older schema opened read-only)."""
        if not self.db.execute("select 1 from sqlite_master where name = 'bot_logs'").fetchone():
            return []
        rows = self.db.execute("select game_id, side, text, plies, cut, crash, traceback from bot_logs "
                               "where game_id = ? order by side", [game_id]).fetchall()
        return [stored_log(row) for row in rows]

    def delete_logs_before(self, tournament_id: int, finished_before: float) -> int:
        """Delete what the bots wrote in a tournament's (a league's) games that finished
        before ``finished_before`` (seconds since the epoch); how many logs went. The
        logs are read, not the games: only games with a log are looked at."""
        with self._store.writing():
            cursor = self.db.conn.execute(
                "delete from bot_logs where game_id in (select l.game_id from bot_logs l join games g "
                "on g.id = l.game_id where g.tournament_id = ? and g.finished_at < ?)",
                [tournament_id, stored_time(finished_before)])
        return int(cursor.rowcount)

    def get(self, game_id: int) -> StoredGame:
        """The game with that id; StoreError if there is none."""
        rows = list(self.db.query(GAME_SELECT + " where g.id = ?", [game_id]))
        if not rows:
            raise StoreError(f"no game with id {game_id} in {self.path}; list them with 'arena games'",
                             site=f"no game with id {game_id}: the games page lists them")
        return StoredGame(**rows[0])

    def moves(self, game_id: int) -> list[StoredMove]:
        """A game's moves in order (none for an unknown id)."""
        rows = self.db.table("moves").rows_where("game_id = ?", [game_id], order_by="ply")
        return [StoredMove(**row) for row in rows]

    def all(
        self, tournament: str | None = None, bot: str | None = None, limit: int | None = None
    ) -> list[StoredGame]:
        """Stored games, oldest first, optionally of one tournament or one bot; with
        ``limit``, only the latest that many.

        ``bot`` is a spec (``minimax:depth=4``, ``guard@v2``) or a bot's name
        (``minimax``, ``guard``), which matches all its specs and versions.
        """
        where, params = self._filter(tournament, bot)
        sql = GAME_SELECT + where + " order by g.id"
        if limit is not None:
            sql = f"select * from ({GAME_SELECT + where} order by g.id desc limit {int(limit)}) order by id"
        return [StoredGame(**row) for row in self.db.query(sql, params)]

    def stream(
        self, tournament: str | None = None, bot: str | None = None, chunk: int = 500
    ) -> Iterator[tuple[StoredGame, list[StoredMove]]]:
        """Every game :meth:`all` would give, oldest first, each with its moves, read
        ``chunk`` games at a time: a million games are never in memory at once.

        Each chunk starts after the last id read, walking the table in id order (the
        unary ``+`` keeps SQLite off the indexes that are not), so the whole read costs
        one pass over the games however many chunks it takes."""
        where: list[str] = ["g.id > ?"]
        params: list[Any] = []
        if tournament is not None:
            where.append("+g.tournament_id = ?")
            params.append(self._store.tournaments.check(tournament).id)
        if bot is not None:
            marks = param_marks(bot_ids := self._store.bots.ids_matching(bot))
            where.append(f"(+g.first_bot_id in ({marks}) or +g.second_bot_id in ({marks}))")
            params += [*bot_ids, *bot_ids]
        sql = f"{GAME_SELECT} where {' and '.join(where)} order by g.id limit ?"
        last = 0
        while True:
            games = [StoredGame(**row) for row in self.db.query(sql, [last, *params, chunk])]
            if not games:
                return
            moves: dict[int, list[StoredMove]] = {game.id: [] for game in games}
            rows = self.db.execute(
                f"select game_id, ply, move, ms, info from moves where game_id in ({param_marks(list(moves))}) "
                "order by game_id, ply", list(moves))
            for row in rows:
                moves[row[0]].append(StoredMove(*row))
            for game in games:
                yield game, moves[game.id]
            last = games[-1].id

    def same_keys(self, tournament_id: int, keys: Sequence[str]) -> dict[str, tuple[str, str, str | None]]:
        """Of these game keys, those the tournament holds, each with its players'
        specs and its move string (to tell the same game from another under its key)."""
        rows = self.db.execute(
            "select g.key, b1.spec, b2.spec, g.moves from games g join bots b1 on b1.id = g.first_bot_id "
            f"join bots b2 on b2.id = g.second_bot_id where g.tournament_id = ? and g.key in ({param_marks(keys)})",
            [tournament_id, *keys]).fetchall()
        return {key: (first, second, moves) for key, first, second, moves in rows}

    # --- pages of games: the site's games list --------------------------------------
    #
    # A page is read newest first through an index already in id order, so it costs
    # the rows it skips and shows, never a sort of every match: with a bot, the two
    # bot indexes (each ordered by id within a bot) merged; otherwise the table itself
    # from its newest row. The other filters are checked on the rows read. The worst
    # page (a filter that matches nothing) reads the table once: about 0.1 s on a
    # million games, where the first pages of any filter take a few milliseconds.

    def page(
        self, tournament: str | None = None, bot: str | None = None, result: str | None = None,
        termination: str | None = None, offset: int = 0, limit: int = 50,
    ) -> list[StoredGame]:
        """The games that match every filter given, newest first: ``limit`` of them
        after the first ``offset``. ``bot`` is a spec or a name (all its specs), as
        in :meth:`all`; an unknown tournament or bot is a StoreError."""
        where: list[str] = []
        params: list[Any] = []
        if tournament is not None:
            # The unary + keeps SQLite off the (tournament, key) index, which is not in
            # id order: a page of a million-game tournament would sort all of it.
            where.append("+g.tournament_id = ?")
            params.append(self._store.tournaments.check(tournament).id)
        if result is not None:
            where.append("g.result = ?")
            params.append(result)
        if termination is not None:
            where.append("g.termination = ?")
            params.append(termination)
        if bot is None:
            ids = "select g.id from games g" + (" where " + " and ".join(where) if where else "")
            ids_params = params
        elif len(bot_ids := self._store.bots.ids_matching(bot)) <= _MERGED_BOTS:
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
        sql = f"{GAME_SELECT} where g.id in ({ids} order by 1 desc limit ? offset ?) order by g.id desc"
        return [StoredGame(**row) for row in self.db.query(sql, [*ids_params, limit, offset])]

    def count(self, tournament: str | None = None, bot: str | None = None, finished_only: bool = False) -> int:
        """How many games :meth:`all` would give without a limit (only finished ones, if asked)."""
        where, params = self._filter(tournament, bot)
        if finished_only:
            where += (" and " if where else " where ") + "g.termination != ?"
            params.append(str(Termination.UNFINISHED))
        sql = f"select count(*) from ({GAME_SELECT + where})"
        return int(self.db.execute(sql, params).fetchone()[0])

    def _filter(self, tournament: str | None, bot: str | None) -> tuple[str, list[Any]]:
        where: list[str] = []
        params: list[Any] = []
        if tournament is not None:
            self._store.tournaments.check(tournament)
            where.append("t.name = ?")
            params.append(tournament)
        if bot is not None:
            bot_ids = self._store.bots.ids_matching(bot)
            marks = param_marks(bot_ids)
            where.append(f"(g.first_bot_id in ({marks}) or g.second_bot_id in ({marks}))")
            params += [*bot_ids, *bot_ids]
        return (" where " + " and ".join(where) if where else ""), params

    def tournament_count(self, tournament_id: int) -> int:
        """How many games a tournament (or league) has stored: a count of its index, no join."""
        return int(self.db.execute("select count(*) from games where tournament_id = ?",
                                   [tournament_id]).fetchone()[0])

    def latest_finished_at(self, tournament_id: int) -> str | None:
        """When a tournament's (a league's) latest stored game finished; None before its first."""
        row = self.db.execute("select finished_at from games where tournament_id = ? order by id desc limit 1",
                              [tournament_id]).fetchone()
        return None if row is None else row[0]

    def tournament_counts(self) -> dict[int, int]:
        """Tournament id -> how many games it stores (finished or not), each counted on
        the tournament's own stretch of the (tournament, key) index."""
        rows = self.db.execute(
            "select t.id, (select count(*) from games g where g.tournament_id = t.id) from tournaments t").fetchall()
        return dict(rows)

    def latest_of(self, bot_ids: Sequence[int], limit: int) -> list[StoredGame]:
        """The last ``limit`` games stored with any of ``bot_ids`` on either side, newest
        first: each side's index read backwards from its newest game, merged."""
        marks = param_marks(bot_ids)
        return self._games_in(
            f"select * from (select id from games where first_bot_id in ({marks}) order by id desc limit ?) "
            f"union select * from (select id from games where second_bot_id in ({marks}) order by id desc limit ?) "
            "order by id desc limit ?", [*bot_ids, limit, *bot_ids, limit, limit])

    def pair_ids(self, a_ids: Sequence[int], b_ids: Sequence[int]) -> list[int]:
        """The ids of every game stored between bots ``a_ids`` and bots ``b_ids``, in
        either colour, newest first (a pair's games to page through)."""
        sql, params = pair_sql(a_ids, b_ids)
        rows = self.db.execute(sql + " order by id desc", params).fetchall()
        return [game_id for (game_id,) in rows]

    def by_id(self, game_ids: Sequence[int]) -> list[StoredGame]:
        """The games with these ids (a page of them), in the order given; ids not stored are left out."""
        found = {game.id: game for game in self._games_in(param_marks(game_ids), list(game_ids))}
        return [found[game_id] for game_id in game_ids if game_id in found]

    def _games_in(self, ids_sql: str, params: list[Any]) -> list[StoredGame]:
        """The games whose ids ``ids_sql`` selects, newest first."""
        rows = self.db.query(GAME_SELECT + f" where g.id in ({ids_sql}) order by g.id desc", params)
        return [StoredGame(**row) for row in rows]
