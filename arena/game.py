"""Where bot code written for earlier versions finds the board, the rules and the
notation.

The engine lives in :mod:`arena.engine.game`; this name re-exports every public
name it had, so bots importing ``arena.game`` keep loading.
"""

from arena.engine.game import (
    MAX_SIZE,
    MIN_SIZE,
    PLAYER_MARKS,
    SCORINGS,
    Board,
    IllegalMoveError,
    NotationError,
    Rules,
    RulesError,
    column_label,
    count_lines,
    format_move,
    format_moves,
    has_line,
    line_plan,
    move_names,
    parse_move,
    parse_moves,
    render,
)

__all__ = [
    "MAX_SIZE",
    "MIN_SIZE",
    "PLAYER_MARKS",
    "SCORINGS",
    "Board",
    "IllegalMoveError",
    "NotationError",
    "Rules",
    "RulesError",
    "column_label",
    "count_lines",
    "format_move",
    "format_moves",
    "has_line",
    "line_plan",
    "move_names",
    "parse_move",
    "parse_moves",
    "render",
]
