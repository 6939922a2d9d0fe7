"""What the tables of a Swiss, a knockout's bracket and a level match's verdict read
of a stored game: a :class:`arena.store.StoredGame` has it, and so may a test's own
game, without a store."""

from __future__ import annotations

from typing import Protocol


class PlayedGame(Protocol):
    """A stored game, as far as the formats' tables read it."""

    @property
    def key(self) -> str: ...
    @property
    def first(self) -> str: ...
    @property
    def second(self) -> str: ...
    @property
    def winner(self) -> int | None: ...
    @property
    def moves(self) -> str | None: ...
    @property
    def opening_plies(self) -> int | None: ...
