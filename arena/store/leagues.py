"""Leagues, their members and their entrants, and how an entrant did."""

from __future__ import annotations

import json
from typing import Any

from arena.records import Termination
from arena.store.rows import EntrantGame, EntrantRecord, Entry, League, StoreError
from arena.store.sql import Repository, insert_row, now


class Leagues(Repository):
    """The leagues, league_members and entries tables (``store.leagues``)."""

    def create(self, name: str, config: dict[str, Any], tournament_id: int, public_code: bool,
               closed: bool) -> League:
        if self.get(name) is not None:
            raise StoreError(f"there is already a league named {name!r} in {self.path}")
        insert_row(self.db.table("leagues"), {
            "name": name, "config": json.dumps(config, sort_keys=True), "tournament_id": tournament_id,
            "public_code": int(public_code), "closed": int(closed), "created_at": now()})
        return self.get(name)  # type: ignore[return-value]  # just stored

    def get(self, name: str) -> League | None:
        rows = list(self.db.table("leagues").rows_where("name = ?", [name]))
        return League.of(rows[0]) if rows else None

    def all(self) -> list[League]:
        return [League.of(row) for row in self.db.table("leagues").rows_where(order_by="id")]

    def check(self, name: str) -> League:
        found = self.get(name)
        if found is None:
            known = ", ".join(repr(league.name) for league in self.all()) or "none yet"
            raise StoreError(f"no league named {name!r} in {self.path}; leagues: {known}")
        return found

    def update_settings(self, league_id: int, config: dict[str, Any], public_code: bool, closed: bool) -> None:
        """Store a league's changed settings (its whole configuration, and the two kept as columns)."""
        self.db.table("leagues").update(league_id, {"config": json.dumps(config, sort_keys=True),
                                                    "public_code": int(public_code), "closed": int(closed)})

    def members(self, league_id: int) -> list[int]:
        """The ids of the accounts that may submit to a closed league."""
        return [user_id for (user_id,) in self.db.execute(
            "select user_id from league_members where league_id = ? order by user_id", [league_id])]

    def add_member(self, league_id: int, user_id: int) -> None:
        self.db.table("league_members").upsert({"league_id": league_id, "user_id": user_id},
                                               pk=("league_id", "user_id"))

    def is_member(self, league_id: int, user_id: int) -> bool:
        return bool(self.db.execute("select 1 from league_members where league_id = ? and user_id = ?",
                                    [league_id, user_id]).fetchone())

    def add_entry(self, league_id: int, spec: str, status: str, submission_id: int | None = None,
                  user_id: int | None = None, checks: str = "") -> Entry:
        entry_id = insert_row(self.db.table("entries"), {
            "league_id": league_id, "spec": spec, "submission_id": submission_id, "user_id": user_id,
            "status": status, "checks": checks, "joined_at": now()})
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

    def entries_with_code(self, league_id: int, content_hash: str, class_name: str | None) -> list[Entry]:
        """The league's entrants (of any status) whose submitted code is this text and class."""
        rows = self.db.query(
            "select e.* from entries e join submissions s on s.id = e.submission_id where e.league_id = ? "
            "and s.content_hash = ? and s.class_name is ? order by e.id", [league_id, content_hash, class_name])
        return [Entry.of(row) for row in rows]

    def retire_entry(self, entry_id: int) -> None:
        self.db.table("entries").update(entry_id, {"status": "retired", "retired_at": now()})

    def set_entry_status(self, entry_id: int, status: str) -> None:
        """A tested version let in ("active") or kept out ("rejected", dated as a retirement)."""
        self.db.table("entries").update(entry_id, {"status": status,
                                                   "retired_at": None if status == "active" else now()})

    def by_id(self, league_id: int) -> League | None:
        rows = list(self.db.table("leagues").rows_where("id = ?", [league_id]))
        return League.of(rows[0]) if rows else None

    def of_submission(self, submission_id: int) -> list[League]:
        """The leagues a submitted version was entered in (whose settings say who may read its code)."""
        rows = self.db.query("select * from leagues where id in (select league_id from entries where "
                             "submission_id = ?) order by id", [submission_id])
        return [League.of(row) for row in rows]

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
