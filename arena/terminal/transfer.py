"""Many games between the store and files: stored games as the files' games, and
a file's games stored into one tournament, each once.

A file's games are imported into one tournament of format ``imported`` (its name is
the importer's choice; one set of rules each). Every game gets a stable key: the key
it had when the file names the same tournament (a tournament exported and imported
back under its own name keeps its keys), else that key (if any) followed by ``~`` and
a hash of where it came from and what it is (its tournament and key, rules, moves,
players, result and date). A game whose
key the tournament holds already is not stored again, so importing a file twice
stores its games once. The import is one transaction: a bad game anywhere stores
nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from arena.engine.game import Board, Rules, format_moves, move_names
from arena.formats.game_files import GameFileError, ImportedGame, game_document, json_line
from arena.formats.stored_games import file_game
from arena.records import RESULTS, UNFINISHED_RESULT, Termination, TimeControl
from arena.store import UNNAMED, Store, StoredGame, StoredMove, rules_of
from arena.store.rows import FinishedGame
from arena.terminal.casual import player_identity
from arena.text import clip, json_text

#: The format of a tournament that holds imported games.
IMPORTED = "imported"
_BATCH = 500


# --- out --------------------------------------------------------------------------


def stored_games(store: Store, tournament: str | None = None, bot: str | None = None,
                 game_id: int | None = None) -> Iterator[ImportedGame]:
    """The stored games chosen (one by id, or those of a tournament and/or a bot, or
    all), oldest first, each with everything a file holds."""
    clocks: dict[str, TimeControl | None] = {}
    if game_id is not None:
        pairs: Iterable[tuple[StoredGame, list[StoredMove]]] = [(store.games.get(game_id),
                                                                  store.games.moves(game_id))]
    else:
        pairs = store.games.stream(tournament=tournament, bot=bot)
    for game, moves in pairs:
        if game.tournament not in clocks:
            clocks[game.tournament] = store.tournaments.time_control(game.tournament)
        yield file_game(game, moves, clocks[game.tournament])


# --- in ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportReport:
    imported: int
    already: int  # stored already (or twice in the file): not stored again


def import_games(store: Store, games: Iterable[tuple[int, int, ImportedGame]], tournament: str) -> ImportReport:
    """Store every game (numbered, with its line, as :func:`~arena.formats.many_games.read_games`
    gives them) in ``tournament``, all or none; GameFileError naming the first game
    that cannot be stored."""
    imported = already = 0
    with store.transaction():
        target: _Target | None = None
        batch: list[tuple[int, int, ImportedGame]] = []
        for numbered in games:
            if target is None:
                target = _Target.open(store, tournament, numbered[2])
            batch.append(numbered)
            if len(batch) >= _BATCH:
                stored, skipped = target.add(batch)
                imported, already, batch = imported + stored, already + skipped, []
        if target is not None and batch:
            stored, skipped = target.add(batch)
            imported, already = imported + stored, already + skipped
        if target is not None:
            store.tournaments.set_status(target.tournament_id, "finished")
    return ImportReport(imported, already)


class _Target:
    """The tournament games are imported into, and the bots stored for its players."""

    def __init__(self, store: Store, name: str, tournament_id: int, rules: Rules) -> None:
        self.store, self.name, self.tournament_id, self.rules = store, name, tournament_id, rules
        self.bot_ids: dict[str, int] = {}

    @classmethod
    def open(cls, store: Store, name: str, first: ImportedGame) -> _Target:
        existing = store.tournaments.get(name)
        if existing is not None and existing.format != IMPORTED:
            raise GameFileError(
                f"tournament {name!r} in {store.path} was played here, not imported: "
                "import into another --tournament")
        rules = rules_of(existing) if existing is not None else first.rules
        identity = {"format": IMPORTED, "rules": rules.as_dict()}
        time_control = first.time_control
        config = {**identity, "time_control": None if time_control is None else {
            "move_seconds": time_control.move_seconds, "bank_seconds": time_control.bank_seconds}}
        return cls(store, name, store.tournaments.start(name, IMPORTED, identity, config, 0), rules)

    def add(self, batch: list[tuple[int, int, ImportedGame]]) -> tuple[int, int]:
        """Store the games of the batch not stored yet: (how many stored, how many were there)."""
        keyed: dict[str, tuple[int, int, ImportedGame]] = {}
        for count, line, game in batch:
            if game.rules != self.rules:
                raise GameFileError(
                    f"game {count} (line {line}) is {game.rules.describe()}, but tournament {self.name!r} "
                    f"holds {self.rules.describe()} games: import it into another --tournament")
            keyed.setdefault(self._key(game), (count, line, game))
        stored = self.store.games.same_keys(self.tournament_id, list(keyed))
        for key, (first, second, moves) in stored.items():
            count, line, game = keyed.pop(key)
            if (first, second, moves) != (*_named(game), game.moves_string):
                raise GameFileError(
                    f"game {count} (line {line}): tournament {self.name!r} holds another game under its key "
                    f"{clip(key)!r}: import it into another --tournament")
        rows = [self._row(key, game) for key, (_, _, game) in keyed.items()]
        for row in rows:
            for spec in (row.first, row.second):
                if spec not in self.bot_ids:
                    self.bot_ids[spec] = self.store.bots.id_of(player_identity(spec))
        self.store.games.record_finished(self.tournament_id, rows, self.bot_ids)
        return len(rows), len(batch) - len(rows)

    def _key(self, game: ImportedGame) -> str:
        if game.key and game.tournament == self.name:
            return game.key  # this tournament's own game, exported and imported back
        identity = [game.tournament, game.key, game.rules.code, game.moves_string, *_named(game), game.result,
                    str(game.termination or ""), game.date]
        digest = hashlib.sha256(json.dumps(identity).encode("utf-8", "surrogatepass")).hexdigest()[:16]
        # The source's key first: the tables that take games in key order (the
        # incremental Elo) take them in the source's order.
        return f"{game.key[:100]}~{digest}" if game.key else f"~{digest}"

    @staticmethod
    def _row(key: str, game: ImportedGame) -> FinishedGame:
        rules = game.rules
        board = Board.from_moves(game.moves, rules)
        result, winner, termination = _outcome(game, board)
        names = move_names(rules)
        info = [None if i is None else json_text(i) for i in game.move_info]
        first, second = _named(game)
        return FinishedGame(
            key, key, first, second, format_moves(game.moves[:game.opening_plies], rules), game.opening_plies,
            result, winner, termination, game.reason, len(game.moves), game.moves_string, game.duration or 0.0,
            game.seed or 0, game.date or _now(),
            tuple(range(len(game.moves))), tuple(names[m] for m in game.moves), tuple(game.move_ms),
            tuple(info) if any(i is not None for i in info) else None,
        )


def _named(game: ImportedGame) -> tuple[str, str]:
    first, second = game.players or (None, None)
    return first or UNNAMED, second or UNNAMED


def _outcome(game: ImportedGame, board: Board) -> tuple[str, int | None, str]:
    """(result, winner, termination) as stored: what the file says where the board
    cannot tell (a forfeit), else what the board says."""
    if board.is_over():
        winner = board.winner
        return RESULTS[winner], winner, str(Termination.WIN if winner is not None else Termination.DRAW)
    if game.result is None:
        return UNFINISHED_RESULT, None, str(Termination.UNFINISHED)
    # A result before the board decided: a player lost (or both were scored a draw) by forfeit.
    winner = {v: k for k, v in RESULTS.items()}[game.result]
    return game.result, winner, str(game.termination or Termination.FORFEIT)


def _now() -> str:
    return dt.datetime.fromtimestamp(time.time(), dt.UTC).isoformat(timespec="milliseconds")


def document_line(game: ImportedGame) -> str:
    """The game as one line of JSON Lines."""
    return json_line(game_document(game))

