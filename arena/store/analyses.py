"""Game analyses: what a solver proved of each position of a stored game."""

from __future__ import annotations

from arena.store.sql import Repository, now


class Analyses(Repository):
    """The analyses table (``store.analyses``): position values per game and ply."""

    def values(self, game_id: int) -> dict[int, tuple[int | None, float]]:
        """ply -> (value for the side to move or None if unproven, budget tried)."""
        rows = self.db.table("analyses").rows_where("game_id = ?", [game_id])
        return {r["ply"]: (r["value"], r["budget"]) for r in rows}

    def save(self, game_id: int, values: dict[int, int | None], budget: float) -> None:
        rows = [
            {"game_id": game_id, "ply": ply, "value": value, "budget": budget, "analysed_at": now()}
            for ply, value in values.items()
        ]
        with self.db.atomic():
            self.db.table("analyses").upsert_all(rows, pk=("game_id", "ply"))
