"""How a game's exact value is written: the score convention solvers share.

Scores follow Pascal Pons' convention, for the side to move: positive wins, 0
draws, negative loses, and the size tells how soon the game ends. A player who
wins with its ``n``-th stone scores ``(cells + 1) // 2 + 1 - n``, so on 7x6 a
win scores 22 minus the winner's stone count, and the latest possible win
scores 1. These are facts about the game, not about any one solver: the
analysis of stored games and the ``arena solve`` command read scores with them.
"""

from __future__ import annotations

from arena.engine.game import Rules


def score_of_win(rules: Rules, ply: int) -> int:
    """Score of the player who wins by playing the stone of ply ``ply`` (0-based:
    ``ply`` stones were on the board before it). That is its stone number
    ``ply // 2 + 1``, so the score is ``(cells + 1) // 2 - ply // 2``: 21 - ply // 2
    on 7x6, and never below 1."""
    return (rules.cells + 1) // 2 - ply // 2


def stones_of_score(rules: Rules, score: int) -> int | None:
    """How many stones the winner will have played when the game ends (None: draw)."""
    if score == 0:
        return None
    return (rules.cells + 1) // 2 + 1 - abs(score)
