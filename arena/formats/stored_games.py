"""A stored game as the game files hold it: what ``arena export`` writes and the
site offers to download, from the store's rows (read through the few fields used,
so that this room needs no store)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Protocol

from arena.engine.game import Rules, move_names
from arena.formats.game_files import ImportedGame
from arena.records import Termination, TimeControl

#: What a file names as where its games were played (PGN's Site): this program.
SITE = "connectk-arena"


class StoredGameRow(Protocol):
    """The fields of a stored game (:class:`arena.store.StoredGame`) a file holds."""

    @property
    def id(self) -> int: ...
    @property
    def tournament(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def first(self) -> str: ...
    @property
    def second(self) -> str: ...
    @property
    def result(self) -> str: ...
    @property
    def termination(self) -> str: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def opening_plies(self) -> int | None: ...
    @property
    def duration(self) -> float | None: ...
    @property
    def seed(self) -> int | None: ...
    @property
    def finished_at(self) -> str | None: ...
    @property
    def rules(self) -> str: ...


class StoredMoveRow(Protocol):
    """The fields of a stored move (:class:`arena.store.StoredMove`) a file holds."""

    @property
    def move(self) -> str: ...
    @property
    def ms(self) -> float | None: ...
    @property
    def info(self) -> str | None: ...


def file_game(game: StoredGameRow, moves: Sequence[StoredMoveRow], time_control: TimeControl | None) -> ImportedGame:
    """The stored game ``game``, whose moves are ``moves``, as a file's game."""
    rules = Rules(**json.loads(game.rules))
    index = {name: move for move, name in enumerate(move_names(rules))}
    finished = game.termination != Termination.UNFINISHED  # an unfinished game has no result yet
    return ImportedGame(
        rules=rules,
        moves=[index[m.move] for m in moves],
        players=(game.first, game.second),
        result=game.result if finished else None,
        termination=Termination(game.termination) if finished else None,
        reason=game.reason,
        move_info=[json.loads(m.info) if m.info else None for m in moves],
        move_ms=[m.ms for m in moves],
        tournament=game.tournament,
        key=game.key,
        game_id=game.id,
        site=SITE,
        date=game.finished_at,
        opening_plies=game.opening_plies or 0,
        time_control=time_control,
        duration=game.duration,
        seed=game.seed,
    )
