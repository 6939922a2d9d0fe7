"""Where bot code written for earlier versions finds the board and the rules.

The engine lives in :mod:`arena.engine.game`; this name is kept so that bots
importing ``arena.game`` keep loading.
"""

from arena.engine.game import Board, IllegalMoveError, NotationError, Rules, RulesError

__all__ = ["Board", "IllegalMoveError", "NotationError", "Rules", "RulesError"]
