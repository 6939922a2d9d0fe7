"""Void games in a row: when the arena, not a game, is failing.

A game the arena fails during is void and played again (see
:class:`arena.errors.ArenaFault`); a run of them means the machine is broken, and
whoever plays the games (a tournament, a league, a match) stops, naming the fault.
Kept light: ``arena match`` uses it without the store or the executors.
"""

from __future__ import annotations

from typing import Protocol

from arena.records import Termination

#: Void games in a row after which a run stops: the arena is failing, not a game.
VOID_IN_A_ROW = 3


class ArenaFailing(Exception):
    """Games keep failing for a reason of the arena's own: stop, charging no bot."""


class _Finished(Protocol):
    @property
    def termination(self) -> str: ...

    @property
    def reason(self) -> str | None: ...


#: Read once: an enum's member is a lookup through its class, and every game is counted.
_VOID = Termination.VOID


class Faults:
    """Counts void games in a row, and remembers the last reason."""

    def __init__(self) -> None:
        self.in_a_row = 0
        self.last = ""

    def count(self, game: _Finished) -> None:
        """One more finished game (a record, or its rows): void, or a run broken.
        :class:`ArenaFailing` once :data:`VOID_IN_A_ROW` are void in a row."""
        if game.termination == _VOID:
            self.in_a_row += 1
            self.last = game.reason or ""
        else:
            self.in_a_row = 0

    @property
    def too_many(self) -> bool:
        return self.in_a_row >= VOID_IN_A_ROW

    def describe(self) -> str:
        return (f"{self.last or 'the arena failed'} ({self.in_a_row} void games in a row; no bot was charged); "
                "see 'arena doctor', then run the same command again to play them")
