"""Games played by people in the terminal, or imported, stored like tournament games.

They belong to a "casual" tournament per set of rules (``casual 7x6c4``), so they
show in ``arena games`` and can be replayed and analysed. A saved game that is
not finished is stored with termination "unfinished" and counts in no table; nor
does an imported game with a player its file does not name (``unnamed``). A game
is imported once: the same rules, moves and players stored already are refused.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from arena.engine.game import Board, Rules
from arena.errors import ArenaError
from arena.formats.game_files import ImportedGame, rules_prefix
from arena.records import RESULTS, BotCode, GameRecord, GameSpec, MoveRecord, Outcome, Termination
from arena.store import UNNAMED, BotIdentity, Store
from arena.text import clip

HUMAN = "human"


class DuplicateGameError(ArenaError):
    """An imported game that is stored already: same rules, same moves, same players."""


def import_into(store: Store, game: ImportedGame) -> int:
    """Store an imported game as a casual game; return its id.

    A player the file does not name (a bare move line names neither) is stored as
    ``unnamed``, no league entrant: such games count in no table. The same game
    (rules, moves and players) stored already, imported or played, is refused
    with DuplicateGameError and nothing is stored.
    """
    board = game.board()
    players = game.players or (None, None)
    named = (players[0] or UNNAMED, players[1] or UNNAMED)
    # A player the file does not name may be anyone: a move line exported from a
    # stored game is that game again, whoever played it.
    stored = store.games.find(game.rules, game.moves_string, players[0], players[1])
    if stored is not None:
        raise DuplicateGameError(
            f"this game ({named[0]} vs {named[1]}, {rules_prefix(game.rules)} {clip(game.moves_string, 24)}) "
            f"is already stored as game {stored} in {store.path}: nothing imported; see it with 'arena show {stored}'"
        )
    outcome = None  # the board tells how the game ended, unless a player lost it by forfeit
    result = game.result
    if game.termination == Termination.FORFEIT and result is not None and result != RESULTS[None]:
        outcome = Outcome.of_result(result, Termination.FORFEIT, game.reason)
    plies = list(zip(game.move_ms or [], game.move_info or []))
    return save_game(store, game.rules, named, board, plies, outcome=outcome)


def save_game(
    store: Store,
    rules: Rules,
    players: tuple[str, str],
    board: Board,
    plies: Sequence[tuple[float | None, dict[str, Any] | None]],
    replace: int | None = None,
    outcome: Outcome | None = None,
    submitted: dict[str, BotCode] | None = None,
) -> int:
    """Store ``board``'s game (``plies`` gives each move's ms and info); return its id.

    ``replace`` is the id of an earlier save of the same game, removed in the same
    transaction. ``outcome`` overrides what the board says, for imported games
    that ended by forfeit. ``submitted``: the code of a submitted bot among the
    players, by name (its version and code hash go into the bots table).
    """
    name = f"casual {rules_prefix(rules)}"
    identity = {"format": "casual", "rules": rules.as_dict()}
    tournament_id = store.tournaments.start(name, "casual", identity, identity, 0)
    bot_ids = {p: store.bots.id_of(player_identity(p, submitted)) for p in players}
    key = f"c{int(time.time() * 1000):013d}"
    # Each casual game is a pairing of its own, named by its key.
    spec = GameSpec(key=key, rules=rules, first=players[0], second=players[1], pairing=key)
    moves = [MoveRecord(ply, move, *(plies[ply] if ply < len(plies) else (None, None)))
             for ply, move in enumerate(board.history)]
    record = GameRecord(spec, outcome or _outcome_of(board), moves, 0.0, time.time())
    game_id = store.games.record_one(tournament_id, record, bot_ids, replace=replace)
    store.tournaments.set_status(tournament_id, "finished")
    return game_id


def _outcome_of(board: Board) -> Outcome:
    if not board.is_over():
        return Outcome(None, Termination.UNFINISHED)
    return Outcome(board.winner, Termination.WIN if board.winner is not None else Termination.DRAW)


def player_identity(player: str, submitted: dict[str, BotCode] | None = None) -> BotIdentity:
    """How a player of a stored game is recorded: a bot here (``submitted``: the code
    of submitted bots among them), a person, or a name from a file."""
    if player == HUMAN:
        return BotIdentity(spec=HUMAN, name=HUMAN, options={}, source="a person at the terminal")
    if player == UNNAMED:
        return BotIdentity(spec=UNNAMED, name=UNNAMED, options={}, source="a player the imported file does not name")
    from arena.tournament.runner import bot_identity

    try:
        return bot_identity(player, submitted)
    except ValueError:  # an imported game's player that is not a bot here
        return BotIdentity(spec=player, name=player, options={}, source="imported")
