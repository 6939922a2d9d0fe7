"""The games of Kaggle's ConnectX, as the arena's rules and boards: which rules it can
play, its configuration for a game, and the grid of ``observation.board``.

Shared by the ConnectX adapter (what an agent is shown: arena.protocol.connectx) and
Kaggle's episode files (what each step of a replay shows: arena.formats), which must
agree cell for cell."""

from __future__ import annotations

from typing import Any

from arena.engine.game import Board, Rules

# Kaggle's own values where a game sets no clock (kaggle-environments' connectx.json).
KAGGLE_ACT_TIMEOUT = 2
KAGGLE_OVERAGE = 60
KAGGLE_RUN_TIMEOUT = 1200
KAGGLE_EPISODE_STEPS = 1000


def unsupported(rules: Rules) -> str | None:
    """Why Kaggle's ConnectX cannot play a game of ``rules``; None when it can."""
    if not rules.moves_are_columns:
        return "Kaggle's ConnectX has no games without gravity (its moves are columns)"
    if not rules.first_line_wins:
        return "Kaggle's ConnectX has no count scoring (the first line wins)"
    return None


def kaggle_grid(board: Board) -> list[int]:
    """Kaggle's ``observation.board`` of ``board``: the cells row by row from the top, 0
    empty, 1 the first player's stone, 2 the second's."""
    rules = board.rules
    flat = []
    for row in reversed(range(rules.height)):  # Kaggle's row 0 is the top
        for column in range(rules.width):
            owner = board.cell(column, row)
            flat.append(0 if owner is None else owner + 1)
    return flat


def kaggle_configuration(rules: Rules, move_seconds: float | None, bank_seconds: float) -> dict[str, Any]:
    """Kaggle's configuration for a game of ``rules``: with the arena's clock where the
    game has one (``actTimeout`` its seconds a move, ``agentTimeout`` its bank,
    ``runTimeout`` the longest the game can last on both clocks), else Kaggle's own
    values. ``episodeSteps`` is never what ends a game: at least one more than the
    board has cells."""
    cells = rules.width * rules.height
    if move_seconds is not None:
        act, bank = move_seconds, bank_seconds
        run = cells * act + 2 * bank
    else:
        act, bank, run = KAGGLE_ACT_TIMEOUT, KAGGLE_OVERAGE, KAGGLE_RUN_TIMEOUT
    return {"columns": rules.width, "rows": rules.height, "inarow": rules.connect, "actTimeout": act,
            "timeout": act, "agentTimeout": bank, "runTimeout": run,
            "episodeSteps": max(KAGGLE_EPISODE_STEPS, cells + 1)}
