"""The sequential tests a league's gate runs on new versions (``store.gates``)."""

from __future__ import annotations

from arena.store.rows import GateTest
from arena.store.sql import Repository, insert_row, now


class Gates(Repository):
    """The gate_tests table: one row per version a league's gate tested."""

    def start(self, entry_id: int, league_id: int, previous_entry_id: int, tournament_id: int, sprt: str,
              max_pairs: int) -> GateTest:
        insert_row(self.db.table("gate_tests"), {
            "entry_id": entry_id, "league_id": league_id, "previous_entry_id": previous_entry_id,
            "tournament_id": tournament_id, "sprt": sprt, "max_pairs": max_pairs, "status": "running",
            "started_at": now()})
        return self.get(entry_id)  # type: ignore[return-value]  # just stored

    def get(self, entry_id: int) -> GateTest | None:
        rows = list(self.db.table("gate_tests").rows_where("entry_id = ?", [entry_id]))
        return GateTest.of(rows[0]) if rows else None

    def of_league(self, league_id: int, status: str | None = None) -> list[GateTest]:
        """A league's tests, oldest first (of one status)."""
        where, params = "league_id = ?", [league_id]
        if status is not None:
            where += " and status = ?"
            params.append(status)  # type: ignore[arg-type]
        return [GateTest.of(row) for row in self.db.table("gate_tests").rows_where(where, params,
                                                                                    order_by="entry_id")]

    def decide(self, entry_id: int, status: str, reason: str) -> None:
        self.db.table("gate_tests").update(entry_id, {"status": status, "reason": reason, "decided_at": now()})

    def results(self, tournament_id: int) -> list[tuple[str, str, int | None]]:
        """Each stored game of a test: its key, who moved first, and the winner (0 first,
        1 second, None a draw)."""
        return [(key, first, winner) for key, first, winner in self.db.execute(
            "select g.key, b.spec, g.winner from games g join bots b on b.id = g.first_bot_id "
            "where g.tournament_id = ? order by g.id", [tournament_id])]

    def of_version(self, spec: str) -> list[tuple[str, GateTest]]:
        """The tests a submitted version (``guard@v2``) was put to, with their leagues' names."""
        rows = self.db.query(
            "select g.*, l.name as league_name from gate_tests g join entries e on e.id = g.entry_id "
            "join leagues l on l.id = g.league_id where e.spec = ? order by g.entry_id", [spec])
        return [(row.pop("league_name"), GateTest.of(row)) for row in rows]
